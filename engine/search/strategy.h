// The strategy interface behind runSearch: what the chain loop asks of annealing, the
// LS / LP restricted-space baselines and random search. The loop itself (annealer.cpp)
// is shared, so every strategy gets the same operators, pins, budget and statistics.
#pragma once

#include "eval/evaluator.h"
#include "search/operators.h"
#include "search/search.h"

#include <chrono>
#include <memory>
#include <optional>
#include <stop_token>

namespace tilescope {

// When a start tree or a baseline construction must be done by, under a time budget
// (docs/search.md "Budgets"). A default Deadline is never reached: an iteration budget
// sets none, so the constructions run in full and their trees stay reproducible. One that
// has passed makes a construction stop adding candidates and return the best it has.
struct Deadline {
    using Clock = std::chrono::steady_clock;
    Clock::time_point at = Clock::time_point::max();
    bool set() const { return at != Clock::time_point::max(); }
    bool passed() const { return set() && Clock::now() >= at; }
    double secondsLeft() const {
        return set() ? std::chrono::duration<double>(at - Clock::now()).count() : 1e300;
    }
};

// A population-based strategy's state in one chain (the genetic search): where each
// iteration's candidate comes from and whether a valid one joins. The chain loop owns it.
class Population {
  public:
    virtual ~Population() = default;
    // The next candidate; nullopt when no operator applied.
    virtual std::optional<RATree> breed(const OperatorContext& ops, Rng& rng) = 0;
    // A valid candidate: true when it joins (the chain counts it as accepted).
    virtual bool offer(const RATree& tree, const Evaluation& eval) = 0;
};

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
    // The start of every chain when the config gives none; valid and inside space(). A
    // start that is a construction (LP's layer pipeline) stops refining at the deadline.
    virtual Result<RATree> initialTree(EvalContext& ctx, int totalBatch, const EvalOptions& opt,
                                       Deadline deadline) const = 0;
    // A population-based strategy's state for a chain from `start`; null (annealing, random
    // search): the chain walks one current tree and asks accept().
    virtual std::unique_ptr<Population> population(const Network& net, const RATree& start,
                                                   const Evaluation& startEval) const {
        return nullptr;
    }
};

std::unique_ptr<Strategy> makeStrategy(SearchMode mode);

// Root T cut over every layer in topological order; the root's sub-batch count steps
// through the divisors of B (halving the batch per invocation for powers of two) until
// the evaluator accepts the tree.
Result<RATree> layerSequentialStart(EvalContext& ctx, int totalBatch, const EvalOptions& opt);
// The layer-pipeline start: from the layer-sequential start, consecutive depth-one
// leaves are grouped greedily into S-cut segments (sub-batch count = the segment's batch,
// one sample per pipeline step); each segment takes the length with the lowest cost among
// the valid ones tried, stopping at the first invalid length. Past the deadline the layers
// not reached yet stay leaves.
Result<RATree> layerPipelineStart(EvalContext& ctx, int totalBatch, const EvalOptions& opt,
                                  Deadline deadline = {});

// The dp-lp baseline (docs/search.md): the layer-sequential start's leaves split into
// consecutive S-cut segments by dynamic programming over segment boundaries, each with
// a sub-batch count from a small set, under the objective linearised around the current
// solution. Deterministic; segment evaluations are spread over `threads` contexts, which
// never changes the result. `evaluations` receives how many trees were evaluated.
// With a deadline the segment table is thinned to what the time left affords (segment
// bounds on a coarser grid of layers, fewer sub-batch counts; `grain` and `subBatches`
// say which), and the table and the rounds stop at the deadline. `context`: evaluate in
// the caller's context (one that has costed the layer-sequential start already is warm),
// else in a fresh one; the memos are exact, so the tree does not depend on it.
struct DpLpStats {
    long long evaluations = 0;
    int segments = 0;   // depth-one S cuts in the result
    int rounds = 0;     // linearisation rounds run
    int grain = 1;      // segments start and end on multiples of this many layers
    int subBatches = 0; // sub-batch counts tried per segment
};
Result<RATree> dpLayerPipeline(const Network& net, const Hardware& hw, int totalBatch,
                               const EvalOptions& opt, int threads = 1, DpLpStats* stats = nullptr,
                               std::stop_token stop = {}, Deadline deadline = {},
                               EvalContext* context = nullptr);

} // namespace tilescope
