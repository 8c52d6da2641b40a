// evaluate(): analyse() then cost the segments, and the detail figures (per node, S-T
// intervals, per-link bytes); analyseSchedule(), the same decisions for the instruction
// generator.
#include "eval/evaluator.h"

#include "eval/coster.h"
#include "eval/schedule_layout.h"
#include "mapping/cim.h"
#include "util/units.h"

#include <cmath>
#include <limits>

namespace tilescope {

const char* toString(Bound b) {
    switch (b) {
    case Bound::Compute:
        return "compute";
    case Bound::Dram:
        return "DRAM";
    case Bound::Noc:
        return "NoC";
    }
    return "?";
}

double objectiveCost(PicoJoules energy, Cycles delay, const Objective& o) {
    return std::pow(energy, o.n) * std::pow(delay, o.m);
}

// A blocked leaf's figures: its blocks and why (docs/cost-model.md §2b).
void Coster::blockingFigures(const RANode& nd, const NodeWork& nw, NodeFigures& figures) {
    const LeafMapping& m = *nw.leaf.mapping;
    const LeafMapping whole = ctx.mapper.unblocked(nd.layer, nw.tileCount, nd.batch);
    figures.blocks = m.blocks();
    figures.blocking = m.blockLabel();
    figures.runBlockingDramBytes = nw.leaf.blockingDram;
    figures.blockingReason =
        "its slice needs " +
        formatBytes(whole.ifmapPerTile + whole.operandBPerTile + whole.weightPerTile +
                    whole.ofmapPerTile) +
        " per tile (input " + formatBytes(whole.ifmapPerTile + whole.operandBPerTile) +
        ", weights " + formatBytes(whole.weightPerTile) + ", output " +
        formatBytes(whole.ofmapPerTile) + ") of a " + formatBytes(hw.bufferBytes) +
        " buffer: " + figures.blocking + " per tile, two resident at a time, " +
        (m.streamsWeights() ? "each with its own channels' weights, " : "") +
        (m.reduces() ? "the output kept as partial sums until the last, " : "");
    // Through DRAM, or streamed block by block within a chain (docs/cost-model.md §2b).
    for (char d : inputViaDram[size_t(nd.layer)])
        figures.streamedIn |= d == 0;
    // Between the stages of an S cut, over the NoC from the other stage's tiles.
    const char across = streamAcross[size_t(nd.layer)];
    figures.blockingReason += !figures.streamedIn ? "inputs read from DRAM"
                              : across == 1
                                  ? "its input streamed over the NoC from the S-cut stage before"
                                  : "its input streamed on chip from the leaf before";
    figures.blockingReason += writesDram[size_t(nd.layer)] ? ", output stored to DRAM"
                              : across == 2
                                  ? ", output streamed over the NoC to the S-cut stage after"
                                  : ", output streamed on chip to the leaf after";
}

// ---- Detail: per-node figures, S-T intervals, per-link bytes.
void Coster::nodeFigures() {
    ev.tileOrder = mesh.snakeOrder();
    ev.linkBytes = std::move(totalLinks);
    ev.tileDramBytes = std::move(tileDram);
    ev.nodes.resize(size_t(nodeCount));
    for (auto it = pre.rbegin(); it != pre.rend(); ++it) {
        const int id = *it;
        const RANode& nd = tree.node(id);
        NodeWork& nw = work[size_t(id)];
        if (nd.isCut()) {
            nw.energy = 0;
            nw.inTileEnergy = 0;
            for (int c : nd.children) {
                nw.energy += work[size_t(c)].energy;
                nw.inTileEnergy += work[size_t(c)].inTileEnergy;
            }
        }
        NodeFigures& figures = ev.nodes[size_t(id)];
        figures.npt = nw.npt;
        figures.tileBegin = nw.tileBegin;
        figures.tileCount = nw.tileCount;
        figures.stage = nw.stage;
        figures.time = nw.time;
        figures.energy = nw.energy;
        figures.inTileEnergy = nw.inTileEnergy;
        figures.bufferPerTile = nw.wgt + nw.act;
        figures.utilisation =
            nd.type == NodeType::Leaf ? nw.leaf.mapping->peUtilisation : nw.cut.util;
        if (nw.leaf.mapping) {
            const LeafMapping& mapping = *nw.leaf.mapping;
            figures.runDramBytes = nw.leaf.runDram;
            figures.runNocInBytes = nw.leaf.runNocIn;
            figures.runNocOutBytes = nw.leaf.runNocOut;
            figures.runNocInsideBytes = nw.leaf.runNocInside;
            figures.runArrayBytes = nw.leaf.runArray;
            figures.inputViaDram = inputViaDram[size_t(nd.layer)];
            figures.writesDram = writesDram[size_t(nd.layer)] != 0;
            figures.partition = mapping.partitionLabel();
            figures.partitionFactors = {mapping.pk, mapping.pb, mapping.ph, mapping.pw};
            figures.namedPartition = nw.leaf.named;
            figures.mapping = mapping.tiling;
            if (mapping.blocked()) blockingFigures(nd, nw, figures);
            if (mapping.cim.used) {
                figures.weightProgrammings =
                    Count(std::llround(nw.leaf.cimPrograms * segInvocations));
                figures.weightProgrammingsDefault =
                    Count(std::llround(nw.leaf.cimProgramsDefault * segInvocations));
                figures.weightWriteEnergy = nw.leaf.cimPrograms * cimWritePj(hw) * segInvocations;
                figures.writeCycles = mapping.cim.exposedWrite - nw.leaf.writeSaved;
            }
        }
    }
    for (size_t s = 0; s < segments.size(); ++s) {
        NodeFigures& figures = ev.nodes[size_t(segments[s])];
        figures.time = seg.len[s];
        figures.bound = seg.bound[s];
        figures.dramBytes = seg.dram[s];
        figures.weightLinkCycles = seg.weightLink[s];
    }
    if (rootIsT) {
        ev.nodes[size_t(tree.root)].time = delay;
        ev.nodes[size_t(tree.root)].dramBytes = dramTotal;
    }
}

void Coster::intervals() {
    // Rectangles: walk the schedule; a segment stretched by a DRAM/NoC bound has its
    // rectangles stretched in proportion.
    auto push = [&](int id, Cycles start, Cycles end, int sample) {
        if (ev.intervals.size() >= opt.maxIntervals) {
            ev.intervalsTruncated = true;
            return;
        }
        const RANode& nd = tree.node(id);
        const NodeWork& nw = work[size_t(id)];
        BusyInterval interval;
        interval.node = id;
        interval.layer = nd.layer;
        interval.firstSample = sample;
        interval.lastSample = sample + nd.batch - 1;
        interval.start = start;
        interval.end = end;
        interval.tileBegin = nw.tileBegin;
        interval.tileCount = nw.tileCount;
        interval.energy = nw.energy * nd.batch / std::max(1, totalBatch);
        ev.intervals.push_back(interval);
    };
    for (int j = 0; j < segInvocations; ++j)
        for (size_t s = 0; s < segments.size(); ++s) {
            const size_t k = size_t(j) * segments.size() + s;
            const Cycles own = work[size_t(segments[s])].time;
            const double scale = own > 0 ? seg.len[k] / own : 1.0;
            placeInvocations(tree, work, opt.programClock, segments[s], seg.start[k], j * segBatch,
                             scale, push);
        }
}

Evaluation evaluate(EvalContext& ctx, const RATree& tree, int totalBatch, const EvalOptions& opt) {
    EvalContext::Impl& impl = ctx.impl();
    ++impl.stats.evaluations;

    Evaluation ev;
    ev.objective = opt.objective;
    // Every phase of analyse() rewrites what it reads, so the search's many evaluations
    // per second reuse one Analysis per thread (its vectors keep their capacity).
    thread_local Analysis analysis;
    if (!analyse(impl, tree, totalBatch, opt, analysis, ev)) return ev;
    ev.tileCounts.resize(size_t(tree.size()));
    for (int id = 0; id < tree.size(); ++id)
        ev.tileCounts[size_t(id)] = analysis.work[size_t(id)].tileCount;

    // ---- Traffic, energy and segment bounds, per segment invocation (docs/cost-model.md §4-§5).
    Coster coster(impl, tree, totalBatch, opt, analysis, ev);
    for (size_t s = 0; s < coster.segments.size(); ++s)
        coster.costSegment(s);
    coster.totals();
    if (!opt.detail) return ev;
    coster.nodeFigures();
    coster.segmentShares();
    coster.intervals();
    return ev;
}

Evaluation evaluate(const Network& net, const Hardware& hw, const RATree& tree, int totalBatch,
                    const EvalOptions& opt) {
    EvalContext ctx(net, hw);
    return evaluate(ctx, tree, totalBatch, opt);
}

ScheduleLayout analyseSchedule(EvalContext& ctx, const RATree& tree, int totalBatch,
                               const EvalOptions& opt) {
    ScheduleLayout out;
    EvalOptions detailOpt = opt;
    detailOpt.detail = true;
    detailOpt.maxIntervals = std::numeric_limits<size_t>::max();
    detailOpt.programClock = true;
    out.evaluation = evaluate(ctx, tree, totalBatch, detailOpt);
    out.valid = out.evaluation.valid;
    out.reason = out.evaluation.reason;
    if (!out.valid) return out;

    EvalContext::Impl& impl = ctx.impl();
    Analysis analysis;
    Evaluation scratch;
    if (!analyse(impl, tree, totalBatch, detailOpt, analysis,
                 scratch)) { // cannot differ from above
        out.valid = false;
        out.reason = scratch.reason;
        return out;
    }
    out.segments = analysis.segments;
    out.segBatch = analysis.segBatch;
    out.segInvocations = analysis.segInvocations;
    out.leafOfLayer.assign(impl.net.layers.size(), -1);
    for (int pos = 0; pos < int(analysis.posLayer.size()); ++pos) {
        const int layer = analysis.posLayer[size_t(pos)];
        const int id = analysis.leafNode[size_t(layer)];
        const NodeWork& nw = analysis.work[size_t(id)];
        LeafLayout l;
        l.node = id;
        l.layer = layer;
        l.batch = tree.node(id).batch;
        l.segment = nw.segment;
        l.stage = nw.stage;
        l.tileBegin = nw.tileBegin;
        l.tileCount = nw.tileCount;
        for (int t = 0; t < nw.tileCount; ++t)
            l.tiles.push_back(impl.mesh.tileAt(nw.tileBegin + t));
        l.mapping = *nw.leaf.mapping;
        for (char d : analysis.inputViaDram[size_t(layer)])
            l.inputViaDram.push_back(d != 0);
        l.writesDram = analysis.writesDram[size_t(layer)] != 0;
        l.streamInput = analysis.streamInput[size_t(layer)];
        l.streamAcross = analysis.streamAcross[size_t(layer)] == 1;
        l.cimPinned = nw.leaf.cimPinned;
        out.leafOfLayer[size_t(layer)] = int(out.leaves.size());
        out.leaves.push_back(std::move(l));
    }
    return out;
}

} // namespace tilescope
