// The strategy interface behind runSearch: what the chain loop asks of annealing, the
// LS / LP restricted-space baselines and random search. The loop itself (annealer.cpp)
// is shared, so every strategy gets the same operators, pins, budget and statistics.
#pragma once

#include "eval/evaluator.h"
#include "search/operators.h"
#include "search/search.h"

#include <memory>
#include <stop_token>

namespace tilescope {

class Strategy {
  public:
    virtual ~Strategy() = default;
    virtual SearchMode mode() const = 0;
    // The space the chain stays in; candidates outside it are rejected before evaluation.
    virtual SpaceRule space() const = 0;
    // Whether the chain moves from a tree of cost `current` to a valid candidate.
    virtual bool accept(double current, double candidate, double temperature, Rng& rng) const = 0;
    // Annealing continues from its best tree for the last 10% of the run (docs/method.md §4).
    virtual bool returnsToBest() const = 0;
    // The start of every chain when the config gives none; valid and inside space().
    virtual Result<RATree> initialTree(EvalContext& ctx, int totalBatch,
                                       const EvalOptions& opt) const = 0;
};

std::unique_ptr<Strategy> makeStrategy(SearchMode mode);

// Root T cut over every layer in topological order; the root's sub-batch count steps
// through the divisors of B (halving the batch per invocation for powers of two) until
// the evaluator accepts the tree.
Result<RATree> layerSequentialStart(EvalContext& ctx, int totalBatch, const EvalOptions& opt);
// The layer-pipeline start: from the layer-sequential start, consecutive depth-one
// leaves are grouped greedily into S-cut segments (sub-batch count = the segment's batch,
// one sample per pipeline step); each segment takes the length with the lowest cost among
// the valid ones tried, stopping at the first invalid length.
Result<RATree> layerPipelineStart(EvalContext& ctx, int totalBatch, const EvalOptions& opt);

// The dp-lp baseline (docs/search.md): the layer-sequential start's leaves split into
// consecutive S-cut segments by dynamic programming over segment boundaries, each with
// a sub-batch count from a small set, under the objective linearised around the current
// solution. Deterministic; segment evaluations are spread over `threads` contexts, which
// never changes the result. `evaluations` receives how many trees were evaluated.
struct DpLpStats {
    long long evaluations = 0;
    int segments = 0; // depth-one S cuts in the result
    int rounds = 0;   // linearisation rounds run
};
Result<RATree> dpLayerPipeline(const Network& net, const Hardware& hw, int totalBatch,
                               const EvalOptions& opt, int threads = 1, DpLpStats* stats = nullptr,
                               std::stop_token stop = {});

} // namespace tilescope
