// How loaded each link and tile of the mesh was over an evaluated schedule, for the NoC
// heatmap and reports: the bytes the evaluation put on a link over what the link could
// carry while the schedule ran (Mesh::linkCapacity x delay), and the share of the delay
// each tile computes.
#pragma once

#include "eval/evaluation.h"
#include "hw/mesh.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace tilescope {

// linkBytes[link] / (mesh.linkCapacity(link) x delay), in [0, 1] for a schedule whose
// traffic fits its delay; 0 for a link the evaluation has no bytes for, a zero delay or a
// zero capacity.
double linkUtilisation(const Evaluation& e, const Mesh& mesh, int link);
// Every link of the evaluation, indexed like Evaluation::linkBytes.
std::vector<double> linkUtilisation(const Evaluation& e, const Hardware& hw);

// Per tile (tile id, `tiles` of them): the fraction of the delay it computes, summed over
// the evaluation's busy intervals, counting only the intervals of leaves for which
// counted(leaf node) holds when `counted` is given (the heatmap's "selection only"); and
// the leaf node with the most busy time on it (every interval, -1 for an idle tile).
struct TileLoad {
    std::vector<double> busy;
    std::vector<int> dominantLeaf;
};
template <class Counted> TileLoad tileLoad(const Evaluation& e, int tiles, Counted counted);
TileLoad tileLoad(const Evaluation& e, int tiles);

template <class Counted> TileLoad tileLoad(const Evaluation& e, int tiles, Counted counted) {
    TileLoad r;
    r.busy.assign(size_t(std::max(0, tiles)), 0.0);
    r.dominantLeaf.assign(r.busy.size(), -1);
    std::vector<std::vector<std::pair<int, double>>> perLeaf(r.busy.size());
    const int positions = int(e.tileOrder.size());
    for (const BusyInterval& iv : e.intervals) {
        const bool count = counted(iv.node);
        const double d = iv.end - iv.start;
        for (int p = std::max(0, iv.tileBegin); p < iv.tileBegin + iv.tileCount && p < positions;
             ++p) {
            const int t = e.tileOrder[size_t(p)];
            if (t < 0 || t >= tiles) continue;
            if (count) r.busy[size_t(t)] += d;
            auto& leafTimes = perLeaf[size_t(t)];
            auto it = std::find_if(leafTimes.begin(), leafTimes.end(),
                                   [&](auto& x) { return x.first == iv.node; });
            if (it == leafTimes.end())
                leafTimes.emplace_back(iv.node, d);
            else
                it->second += d;
        }
    }
    for (size_t t = 0; t < r.busy.size(); ++t) {
        r.busy[t] = e.delay > 0 ? r.busy[t] / e.delay : 0;
        const auto& leafTimes = perLeaf[t];
        auto it = std::max_element(leafTimes.begin(), leafTimes.end(),
                                   [](auto& a, auto& b) { return a.second < b.second; });
        if (it != leafTimes.end()) r.dominantLeaf[t] = it->first;
    }
    return r;
}

} // namespace tilescope
