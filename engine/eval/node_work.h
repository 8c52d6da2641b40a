// The evaluator's working figures per tree node (internal to engine/eval): what every
// node has (leaf range, tiles, time, buffers, starts), what only a leaf has (mapping,
// traffic, sends, compute-in-memory weights) and what only an S or T cut has (pipeline
// slot, allocation utilisation); and the walk that places a node's leaf invocations.
#pragma once

#include "eval/transfers.h"
#include "mapping/mapper.h"
#include "tree/ratree.h"
#include "util/units.h"

#include <algorithm>
#include <vector>

namespace tilescope {

// Stages the generator cuts a leaf's weight LOADs into (stageCount, transfers.h; docs/isa.md
// "Stage granularity"): a weight-heavy compute streams by output channel in as many slices,
// so a leaf can start on its first weight slice. kMaxStages for a leaf without resident
// weights.
inline double weightStagesOf(const LeafTraffic& t) {
    return t.weightStages > 0 ? double(t.weightStages) : double(kMaxStages);
}
// ... and the SENDs that bring its inputs over the NoC, by the largest of them: its exchange
// follows its producers by one of their stages.
inline double sendStagesOf(const LeafTraffic& t) {
    return double(t.sendStages);
}

// Figures of a leaf only.
struct LeafWork {
    const LeafMapping* mapping = nullptr;
    // `mapping` is the alternative partition the leaf names (RANode::partition), not the
    // mapper's own choice nor a streaming chain's or stage's mapping.
    bool named = false;
    const LeafTraffic* traffic = nullptr; // per segment invocation (transfers.h)
    Cycles latency = 0;                   // the DRAM latency its time includes
    // Fed from ahead: what its exchange adds to the first sub-batch, which has no sample
    // before it to receive behind (pacedFill()).
    Cycles aheadWait = 0;
    bool dramOrdered = false; // under an S cut: dramOrderedPipeline() waits for its weights
    int dramCut = -1;         // ... and the node id of the outermost such S cut
    // Bytes its busiest tile's STORE/SEND engine moves per segment invocation (its stores
    // and its sends to every consumer over the NoC, x Mesh::routeSlowness).
    Bytes sentOut = 0;
    // Of a T cut under an S cut: its NoC consumers outside that T cut, and the most any one
    // of them adds to sentOut at the links' pace (leafTraffic()).
    int sentAhead = 0;
    Bytes sentAheadPaced = 0;
    // A stage of an S cut: its consumers, and what those consumers' busiest tiles take in
    // from this leaf's other tiles beyond its own busiest tile's sends, summed over them
    // (leafTraffic()).
    int stageConsumers = 0;
    Bytes sentShared = 0;
    Bytes runDram = 0, runNocIn = 0, runNocOut = 0, runNocInside = 0; // whole run (detail)
    Bytes runArray = 0;     // whole run (detail): buffer <-> array bytes
    Bytes blockingDram = 0; // whole run: the DRAM bytes its blocking adds (costSegment())
    // Compute-in-memory (cimWeights): weights kept programmed over the segment invocation;
    // programmings per segment invocation (optimised and default order); the write cycles
    // the mapping's time holds but a kept invocation does not spend.
    bool cimPinned = false;
    double cimPrograms = 0, cimProgramsDefault = 0;
    Cycles writeSaved = 0;
};

// Figures of an S or T cut only (a leaf's stay zero: a segment that is a leaf has no
// pipeline).
struct CutWork {
    int maxStage = 0;  // S cut: s, the highest child stage
    double util = 1.0; // S cut: the tile allocation's utilisation (allocateTileGroups())
    Cycles slot = 0;   // S cut: the pipeline slot, max(slowest child, shared DRAM); T cut: a
                       // pass over its children after the first (cutDelay())
    Cycles piped = 0;  // S cut: slot x (sub-batches - 1) + the paced fill
    // S cut that is a segment: its time with its weights all loaded before it starts (the
    // DRAM-ordered pipeline serving only its activations; 0 elsewhere; costSegment()).
    Cycles preloaded = 0;
};

struct NodeWork {
    int lo = 0, hi = 0; // leaf positions covered
    int stage = 0;      // stage within a parent S cut
    double npt = 0;
    int tileBegin = 0, tileCount = 0;
    Cycles compute = 0; // one invocation, compute only (docs/cost-model.md §5)
    Cycles time = 0;    // one invocation, with each leaf's own activation DRAM bound
    // Time but for the DRAM reads, which the LOAD engines start ahead (leaves; T cuts: all
    // passes; S cuts: their time).
    Cycles rest = 0;
    Cycles stageOffset = 0; // S-cut child: start of its stage's first sub-batch in the cut
    Cycles passOffset = 0;  // T-cut child: its start in the cut's first pass (overlapPass())
    Bytes dram = 0;         // activation DRAM bytes of one invocation (weights excluded)
    Bytes wgt = 0, act = 0; // per-tile buffer use
    Bytes kept = 0;         // the part of act that is keptOut (leafBuffers(); 0 for a leaf)
    // Start of the first and of the last invocation, from its segment's start.
    Cycles firstStart = 0, lastStart = 0;
    int segment = -1;            // index of the segment this node lies in
    PicoJoules energy = 0;       // whole-run energy attributed to this node
    PicoJoules inTileEnergy = 0; // of it, the in-tile storage levels' (Hardware::levels)
    LeafWork leaf;               // a leaf's own figures
    CutWork cut;                 // an S or T cut's own figures
};

// A T cut's first pass over its children: the sum of their times (cutDelay(); each later
// pass lasts its slot).
inline Cycles firstPass(const std::vector<NodeWork>& work, const RANode& nd) {
    Cycles round = 0;
    for (int c : nd.children)
        round += work[size_t(c)].time;
    return round;
}

// An S-cut child's time per sub-batch once the pipeline runs: a T cut's later passes
// (docs/cost-model.md §5, "T-cut passes"); an S cut's slot a sub-batch of its own, as its
// stages take the next sub-batch while the later ones work ("Pipelines in a pipeline"); a
// leaf its time.
inline Cycles pipelinePeriod(const std::vector<NodeWork>& work, const RATree& tree, int c) {
    const RANode& cn = tree.node(c);
    return cn.type == NodeType::Leaf ? work[size_t(c)].time
                                     : work[size_t(c)].cut.slot * cn.subBatch;
}

// Every leaf invocation below node `id` as the S-T graph places them, from t0 (`sample`
// the index of its first sample, `scale` its stretch): f(leaf, start, end, first sample)
// for each. Returns the node's end. A T cut with one pass has its children at their
// offsets in it (overlapPass()), with several its later passes drawn in proportion
// (cutDelay()); an S cut its children at their stage offsets, one slot per sub-batch.
template <class F>
Cycles placeInvocations(const RATree& tree, const std::vector<NodeWork>& work, bool programClock,
                        int id, Cycles t0, int sample, double scale, F& f) {
    const RANode& nd = tree.node(id);
    const NodeWork& nw = work[size_t(id)];
    if (nd.type == NodeType::Leaf) {
        f(id, t0, t0 + nw.time * scale, sample);
        return t0 + nw.time * scale;
    }
    const int cb = nd.batch / nd.subBatch;
    if (nd.type == NodeType::T && nd.subBatch == 1) {
        // The pass placed its children on the program's clock (overlapPass()): a child
        // starts where the leaves before it free their tiles, so an S child held up by the
        // DRAM's order is drawn unstretched here, or it would overlap the next child.
        for (int c : nd.children)
            placeInvocations(tree, work, true, c, t0 + work[size_t(c)].passOffset * scale, sample,
                             scale, f);
        return t0 + nw.time * scale;
    }
    if (nd.type == NodeType::T) {
        Cycles t = t0;
        const Cycles round = firstPass(work, nd);
        const double later = round > 0 ? scale * nw.cut.slot / round : scale;
        for (int j = 0; j < nd.subBatch; ++j)
            for (int c : nd.children)
                t = placeInvocations(tree, work, programClock, c, t, sample + j * cb,
                                     j == 0 ? scale : later, f);
        return t;
    }
    // An S cut held up by the DRAM's order (dramOrderedPipeline()) is drawn stretched to its
    // time, except on the program's clock.
    const double inner = nw.cut.piped > 0 && !programClock ? scale * nw.time / nw.cut.piped : scale;
    const Cycles slot = nw.cut.slot * inner;
    for (int c : nd.children) {
        // A T child runs each sub-batch in its later passes' time (cutDelay()): drawn so, its
        // sub-batches one slot apart do not overlap on its tiles (the program's clock keeps
        // each pass whole).
        const NodeWork& cw = work[size_t(c)];
        const double drawn = cw.time > 0 && !programClock && tree.node(c).type == NodeType::T
                                 ? std::min(1.0, pipelinePeriod(work, tree, c) / cw.time)
                                 : 1.0;
        for (int j = 0; j < nd.subBatch; ++j)
            placeInvocations(tree, work, programClock, c, t0 + cw.stageOffset * inner + j * slot,
                             sample + j * cb, inner * drawn, f);
    }
    return t0 + nw.time * scale;
}

} // namespace tilescope
