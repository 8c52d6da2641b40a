// The evaluator's schedule decisions made explicit for the instruction generator: per leaf
// its tile group, intra-layer mapping, segment, pipeline stage and data-flow rule (DRAM or
// NoC) per input, plus the leaf invocations in the evaluator's S-T order.
#pragma once

#include "eval/evaluator.h"
#include "mapping/mapper.h"

#include <string>
#include <vector>

namespace tilescope {

struct LeafLayout {
    int node = -1; // leaf node id in the tree
    int layer = -1;
    int batch = 1;     // b_i: samples per invocation
    int segment = -1;  // index into ScheduleLayout::segments
    int stage = 0;     // pipeline stage within the parent S cut (0 otherwise)
    int tileBegin = 0; // tile group: snake positions [tileBegin, tileBegin + tileCount)
    int tileCount = 0;
    std::vector<int> tiles;         // the group's tile ids, in snake order
    LeafMapping mapping;            // the mapper's choice for (layer, tileCount, batch)
    std::vector<bool> inputViaDram; // per layer input: read from DRAM (else over the NoC)
    bool writesDram = false;        // output stored to DRAM (network output or a DRAM reader)
    // The input it streams block by block from the leaf before it in a T cut, or from the
    // stage before it in an S cut, or -1 (docs/cost-model.md §2b, streaming chains).
    int streamInput = -1;
    // That input comes from the stage before it in an S cut, on other tiles: its block j
    // reads the producer's blocks j - 1 to j + 1 (Analysis::streamAcross).
    bool streamAcross = false;
    // Compute-in-memory: the crossbars keep the weights over the leaf's invocations of a
    // segment invocation (written at the first), else every invocation writes them.
    bool cimPinned = false;
};

struct ScheduleLayout {
    bool valid = false;
    std::string reason;
    std::vector<LeafLayout> leaves; // left to right
    std::vector<int> leafOfLayer;   // layer -> index into leaves
    std::vector<int> segments;      // node ids of the segments (children of a root T cut)
    int segBatch = 1;               // samples per segment invocation
    int segInvocations = 1;         // root sub-batch count
    // The detail evaluation of the same tree: its intervals are the leaf invocations
    // (sample ranges and planned start/end), its delay and dram_bytes the targets.
    Evaluation evaluation;
};

// Runs the evaluator's analysis (identical code path to evaluate()) and its detail
// evaluation. opt.detail is forced on and maxIntervals raised so no invocation is lost.
ScheduleLayout analyseSchedule(EvalContext& ctx, const RATree& tree, int totalBatch,
                               const EvalOptions& opt);

} // namespace tilescope
