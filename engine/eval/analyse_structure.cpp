// The analyser's structural phases: node order, leaf ranges, pipeline stages and NPT
// bottom-up, tile groups top-down (exact min-max allocation at S cuts), segments; and
// analyse(), which runs every phase in order.
#include "eval/analyser.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <queue>
#include <string>

namespace tilescope {

// Exact min-max allocation: n_i >= 1, sum n_i = N (`tiles`), minimising max_i a_i / n_i. Starting
// from one tile each, giving the next tile to the child with the largest a_i / n_i is
// optimal (each step lowers the current maximum as far as any single tile can).
// Every child has one (a_i / n_i, i) in play and no two are equal, so the child chosen
// next is the same however the largest is found.
// The greedy takes the N - k largest of the pairs (a_i / j, i), j >= 1 (each child's fall
// with j), in order. Those above mu = sum a / (N - k) are fewer than N - k, so they are all
// taken: each child starts with as many as it has above mu (found by division, then checked
// against the quotients themselves), and the greedy hands out the rest, at most k, one at a
// time (by a scan among few children, else by a heap). On a 64x64 mesh an S cut hands out
// thousands of tiles, which one at a time would take a tenth of an evaluation.
void allocateTiles(const std::vector<double>& a, int tiles, std::vector<int>& out) {
    const int k = int(a.size());
    out.assign(size_t(k), 1);
    const int picks = tiles - k;
    if (picks <= 0) return;
    double sum = 0;
    for (double x : a)
        sum += x;
    const double mu = sum / picks;
    int left = picks;
    if (mu > 0 && std::isfinite(mu))
        for (int i = 0; i < k; ++i) {
            const double ai = a[size_t(i)];
            if (!(ai > mu)) continue;
            // The count of j >= 1 with a_i / j > mu: about a_i / mu, made exact on the
            // quotients (they fall with j).
            long long j = (long long)std::min(double(picks), ai / mu);
            while (j > 0 && !(ai / double(j) > mu))
                --j;
            while (j < picks && ai / double(j + 1) > mu)
                ++j;
            out[size_t(i)] = int(1 + j);
            left -= int(j);
        }
    if (left < 0) { // rounding in the sum (never seen): one tile at a time from the start
        out.assign(size_t(k), 1);
        left = picks;
    }
    using Item = std::pair<double, int>;
    if (k <= 16) {
        std::array<double, 16> r{};
        for (int i = 0; i < k; ++i)
            r[size_t(i)] = a[size_t(i)] / out[size_t(i)];
        for (; left > 0; --left) {
            Item best{r[0], 0};
            for (int i = 1; i < k; ++i)
                best = std::max(best, Item{r[size_t(i)], i});
            const int i = best.second;
            ++out[size_t(i)];
            r[size_t(i)] = a[size_t(i)] / out[size_t(i)];
        }
        return;
    }
    std::priority_queue<Item> heap;
    for (int i = 0; i < k; ++i)
        heap.push({a[size_t(i)] / out[size_t(i)], i});
    for (; left > 0; --left) {
        auto [r, i] = heap.top();
        heap.pop();
        ++out[size_t(i)];
        heap.push({a[size_t(i)] / out[size_t(i)], i});
    }
}

bool Analyser::invalid(int node, std::string reason) {
    ev.valid = false;
    ev.invalidNode = node;
    ev.reason = std::move(reason);
    return false;
}

void Analyser::orderNodes() {
    analysis.work.assign(static_cast<size_t>(nodeCount), NodeWork{});
    // Pre-order from the root (do not assume the arena is compacted).
    std::vector<int>& pre = analysis.pre;
    pre.clear();
    pre.reserve(size_t(nodeCount));
    {
        std::vector<int>& stack = analysis.stack;
        stack.assign(1, tree.root);
        while (!stack.empty()) {
            const int id = stack.back();
            stack.pop_back();
            pre.push_back(id);
            const auto& ch = tree.node(id).children;
            for (auto it = ch.rbegin(); it != ch.rend(); ++it)
                stack.push_back(*it);
        }
    }
    analysis.layerPos.assign(size_t(layerCount), -1);
    analysis.leafNode.assign(size_t(layerCount), -1);
    analysis.posLayer.clear();
    posLayer.reserve(size_t(layerCount));
    for (int id : pre) {
        const RANode& nd = tree.node(id);
        if (nd.type == NodeType::Leaf) {
            const int pos = int(posLayer.size());
            layerPos[size_t(nd.layer)] = pos;
            leafNode[size_t(nd.layer)] = id;
            posLayer.push_back(nd.layer);
            work[size_t(id)].lo = pos;
            work[size_t(id)].hi = pos + 1;
        }
    }
}

// ---- Bottom-up: leaf ranges, pipeline stages, NPT (docs/cost-model.md §1).
void Analyser::bottomUp() {
    for (auto it = pre.rbegin(); it != pre.rend(); ++it) {
        const int id = *it;
        const RANode& nd = tree.node(id);
        NodeWork& nw = work[size_t(id)];
        if (nd.type == NodeType::Leaf) {
            nw.npt = ctx.mapper.npt(nd.layer);
            continue;
        }
        nw.lo = work[size_t(nd.children.front())].lo;
        nw.hi = work[size_t(nd.children.back())].hi;
        double sum = 0;
        for (int c : nd.children)
            sum += work[size_t(c)].npt;
        if (nd.type == NodeType::S) {
            // Stage of a child = 1 + highest stage of the earlier siblings it reads from.
            nw.cut.maxStage = 0;
            for (size_t j = 0; j < nd.children.size(); ++j) {
                NodeWork& cw = work[size_t(nd.children[j])];
                cw.stage = 0;
                forEachSiblingInput(nd, nw.lo, cw, [&](size_t i, int, int, int) {
                    cw.stage = std::max(cw.stage, work[size_t(nd.children[i])].stage + 1);
                });
                nw.cut.maxStage = std::max(nw.cut.maxStage, cw.stage);
            }
            const double sb = nd.subBatch;
            nw.npt =
                sum * (sb + nw.cut.maxStage) / sb; // divided by the ideal utilisation sb/(sb+s)
        } else {
            nw.npt = sum;
        }
    }
}

// ---- Top-down: tile allocation (exact min-max water-filling at S cuts).
bool Analyser::allocateTileGroups() {
    work[size_t(tree.root)].tileBegin = 0;
    work[size_t(tree.root)].tileCount = mesh.tiles();
    std::vector<int>& alloc = analysis.alloc;
    std::vector<double>& npts = analysis.npts;
    for (int id : pre) {
        const RANode& nd = tree.node(id);
        const NodeWork& nw = work[size_t(id)];
        if (nd.type == NodeType::Leaf) continue;
        if (nd.type == NodeType::T) {
            for (int c : nd.children) {
                work[size_t(c)].tileBegin = nw.tileBegin;
                work[size_t(c)].tileCount = nw.tileCount;
            }
            continue;
        }
        const int k = int(nd.children.size());
        if (k > nw.tileCount)
            return invalid(id, "S cut " + tree.pathOf(id) + " has " + std::to_string(k) +
                                   " children but only " + std::to_string(nw.tileCount) + " tiles");
        npts.resize(static_cast<size_t>(k));
        for (int j = 0; j < k; ++j)
            npts[size_t(j)] = work[size_t(nd.children[size_t(j)])].npt;
        // A fixed allocation is the schedule's own (the chiplet baseline's regions on their
        // chiplets): its utilisation is reported, the threshold guards only the min-max one.
        const bool fixed = tree.fixedTiles(id, nw.tileCount, alloc);
        if (!fixed) allocateTiles(npts, nw.tileCount, alloc);
        double maxRatio = 0, sum = 0;
        for (int j = 0; j < k; ++j) {
            maxRatio = std::max(maxRatio, npts[size_t(j)] / alloc[size_t(j)]);
            sum += npts[size_t(j)];
        }
        const double util = maxRatio > 0 ? sum / (nw.tileCount * maxRatio) : 1.0;
        work[size_t(id)].cut.util = util;
        if (!fixed && util < opt.minUtilisation) {
            char buf[160];
            std::snprintf(buf, sizeof buf,
                          "S cut %s: tile allocation utilisation %.2f is below %.2f",
                          tree.pathOf(id).c_str(), util, opt.minUtilisation);
            return invalid(id, buf);
        }
        int begin = nw.tileBegin;
        for (int j = 0; j < k; ++j) {
            work[size_t(nd.children[size_t(j)])].tileBegin = begin;
            work[size_t(nd.children[size_t(j)])].tileCount = alloc[size_t(j)];
            begin += alloc[size_t(j)];
        }
    }
    return true;
}

// ---- Segments: children of a root T cut (or the root itself).
void Analyser::assignSegments() {
    const RANode& rootNode = tree.node(tree.root);
    const bool rootIsT = analysis.rootIsT = rootNode.type == NodeType::T;
    analysis.segments = rootIsT ? rootNode.children : std::vector<int>{tree.root};
    const std::vector<int>& segments = analysis.segments;
    analysis.segBatch = rootIsT ? rootNode.batch / rootNode.subBatch : rootNode.batch;
    analysis.segInvocations = rootIsT ? rootNode.subBatch : 1;
    thread_local std::vector<int> stack; // scratch: one evaluation after another
    for (size_t s = 0; s < segments.size(); ++s) {
        stack.assign(1, segments[s]);
        while (!stack.empty()) {
            const int id = stack.back();
            stack.pop_back();
            work[size_t(id)].segment = int(s);
            for (int c : tree.node(id).children)
                stack.push_back(c);
        }
    }
}

// Fills A; on an invalid tree sets ev's validity fields and returns false.
bool analyse(EvalContext::Impl& ctx, const RATree& tree, int totalBatch, const EvalOptions& opt,
             Analysis& analysis, Evaluation& ev) {
    Analyser analyser(ctx, tree, opt, analysis, ev);
    ctx.mapper.setObjective(opt.objective.n, opt.objective.m); // blocked leaves choose by it
    const bool checked = opt.structureChecked && tree.root >= 0 && tree.root < tree.size() &&
                         tree.node(tree.root).batch == totalBatch;
    if (!checked)
        if (auto err = validateStructure(tree, ctx.net, totalBatch))
            return analyser.invalid(-1, err->message);
    analyser.orderNodes();
    analyser.bottomUp();
    if (!analyser.allocateTileGroups()) return false;
    analyser.assignSegments();
    analyser.mapLeaves();
    analyser.streamChains();
    analyser.streamStages();
    // Streaming stages never turn a tree that fits into one that does not: where it
    // overflows with them, its stages go through DRAM on their own mappings, as they would
    // without (docs/cost-model.md §2b).
    if (!analyser.placeData() && !(analyser.dropStageStreams() && analyser.placeData()))
        return false;
    ctx.totalBatch = totalBatch;
    analyser.leafTraffic();
    analyser.dramLayouts();
    analyser.delays();
    analyser.firstStarts();
    return true;
}

} // namespace tilescope
