// Per-level access counts of a tile's storage (docs/cost-model.md §2c).
#include "mapping/storage_levels.h"

#include <algorithm>
#include <cmath>

namespace tilescope {

namespace {

// The first level holding `bit`, or -1.
int innermost(const std::vector<StorageLevel>& levels, unsigned bit) {
    for (size_t i = 0; i < levels.size(); ++i)
        if (levels[i].holds & bit) return int(i);
    return -1;
}

} // namespace

double inputPasses(const std::vector<StorageLevel>& levels, const TileNest& t) {
    double held = 0;
    for (const StorageLevel& l : levels)
        if (l.holds & HoldsWeight) held += l.bytes * l.instances;
    const int in = innermost(levels, HoldsInput);
    if (held <= 0 || in < 0 || t.weightBytes <= 0) return 1;
    const double fan = std::min<double>(levels[size_t(in)].fanout, std::max(1.0, t.outChannels));
    const double most = std::max(1.0, std::ceil(t.outChannels / fan));
    return std::clamp(std::ceil(t.weightBytes / held), 1.0, most);
}

LevelAccesses countLevelAccesses(const std::vector<StorageLevel>& levels, const TileNest& t) {
    LevelAccesses a;
    const double db = t.bytesPerElement;
    struct Operand {
        unsigned bit;
        double reuse;   // the loop the operand is reused over inside the level next to the MACs
        double through; // bytes written into that level from outside
    };
    const Operand ops[] = {
        {HoldsInput, t.outChannels, t.inputBytes * inputPasses(levels, t)},
        {HoldsWeight, t.positions, t.weightBytes},
        {HoldsOutput, t.reduction, t.outputBytes},
    };
    for (const Operand& op : ops) {
        bool first = true;
        for (size_t i = 0; i < levels.size() && i < size_t(kMaxStorageLevels); ++i) {
            const StorageLevel& l = levels[i];
            if (!(l.holds & op.bit)) continue;
            if (!first) { // passes on what the level before it is written with
                a.reads[i] += op.through;
                a.writes[i] += op.through;
                continue;
            }
            first = false;
            const double fed = t.macs / std::min<double>(l.fanout, std::max(1.0, op.reuse)) * db;
            if (op.bit == HoldsOutput) {
                a.writes[i] += fed;
                a.reads[i] += fed + op.through;
            } else {
                a.reads[i] += fed;
                a.writes[i] += op.through;
            }
        }
    }
    return a;
}

} // namespace tilescope
