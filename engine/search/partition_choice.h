// Each leaf's partition chosen by the whole tree's cost (docs/search.md, "Partition
// choice"): the search's best tree, leaf by leaf, runs every alternative partition the mapper
// lists for the tiles it has (Mapper::alternatives) and keeps the one the tree costs least
// with. The search runs it on its result; a tree's leaves then name what they run.
#pragma once

#include "eval/evaluator.h"
#include "tree/ratree.h"
#include "tree/repetition.h"

#include <chrono>
#include <functional>

namespace tilescope {

struct PartitionChoiceStats {
    long long evaluations = 0; // trees costed
    int leaves = 0;            // leaves whose alternatives were all tried
    int changed = 0;           // leaves now naming a partition other than before
    double costBefore = 0;     // the tree's cost before the choice
    bool complete = true;      // every leaf tried (false: the deadline or a stop came first)
    bool settled = false;      // a whole pass changed nothing: no one leaf's move lowers the cost
};

struct PartitionChoiceInputs {
    const Network& net;
    int totalBatch = 1;
    const EvalOptions& opt;
    // Tied blocks (SearchConfig::repeatBlocks): the copies follow the first block's leaves.
    const BlockRepetition& rep;
    std::chrono::steady_clock::time_point until = std::chrono::steady_clock::time_point::max();
    std::function<bool()> stopped; // may be empty
    // A second context to cost a leaf's alternatives in on a second thread, beside `ctx`
    // (may be null: one thread). The figures are the same in any context, so the choice is
    // the same with or without it.
    EvalContext* helper = nullptr;
};

// Leaf by leaf, the most work first (MACs x batch), three passes at most: every other
// alternative partition of the leaf is costed in the tree, the cheapest kept when it lowers
// the cost. `eval` must be the tree's valid evaluation (with its tileCounts); both are
// updated. Frozen leaves and the leaves of tied copies keep theirs. A leaf's alternatives
// differ from the tree in that leaf alone, so they are costed side by side (on in.helper's
// thread too) and the first of the cheapest kept: the tree a one-by-one walk would keep.
PartitionChoiceStats choosePartitions(RATree& tree, Evaluation& eval, EvalContext& ctx,
                                      const PartitionChoiceInputs& in);

} // namespace tilescope
