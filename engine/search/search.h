// The schedule search of SPEC §4: one SearchConfig in, one SearchResult out, with a
// progress callback and a stop token as the only hooks. Strategies (annealing over the
// full space, the LS / LP restricted spaces, random search) sit behind strategy.h.
#pragma once

#include "eval/evaluator.h"
#include "hw/hardware.h"
#include "model/network.h"
#include "tree/ratree.h"
#include "util/result.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace tilescope {

// set = the unrestricted RA-tree space (SET); ls / lp = depth-one cuts must be T / S;
// random = random walk over the same operators, keeping the best valid tree.
enum class SearchMode { Set, LS, LP, Random };
const char* toString(SearchMode m);                   // "set", "ls", "lp", "random"
bool parseSearchMode(const std::string& s, SearchMode& out);

struct SearchConfig {
    std::uint64_t seed = 1;   // chain i uses seed + i
    double beta = 100;        // N = beta x L iterations per chain
    double t0 = 0.07;         // T0 of the temperature schedule
    double alpha = 8;         // alpha of the temperature schedule
    Objective objective;      // cost = E^n x D^m
    SearchMode mode = SearchMode::Set;
    int chains = 1;           // K independent chains
    int threads = 1;          // T worker threads (capped at K); never changes the result
    int totalBatch = 1;       // B_tot
    double minUtilisation = 0.75;
    // Node paths ("/0/2") in the initial tree to pin before the run starts, in addition
    // to nodes already pinned in initialTree.
    std::vector<std::string> pinned;
    // Start here instead of the mode's default start (continue a run, GUI edits).
    std::optional<RATree> initialTree;
    // 0: N = beta x L. Otherwise the exact iteration count per chain (tests, benchmarks).
    long long iterations = 0;
    // Minimum seconds between progress callbacks (the final one is always delivered).
    double progressInterval = 0.1;
};

// One snapshot for a progress display. iteration / total count over all chains (a bar);
// the chain fields describe the chain that sent it (a live plot follows chain 0).
struct Progress {
    long long iteration = 0, total = 0;
    int chain = 0;
    long long chainIteration = 0, chainTotal = 0;
    double temperature = 0;
    double currentCost = 0;    // the chain's current tree
    PicoJoules energy = 0;     // of the chain's current tree
    Cycles delay = 0;
    double bestCost = 0;       // best over all chains so far
    PicoJoules bestEnergy = 0;
    Cycles bestDelay = 0;
    double acceptanceRate = 0; // accepted / valid candidates over the chain's last window
    double elapsedSeconds = 0;
    bool final = false;        // the last callback of the run
};
using ProgressCallback = std::function<void(const Progress&)>;

struct ChainResult {
    int chain = 0;
    std::uint64_t seed = 0;
    RATree best;
    Evaluation bestEval;
    long long iterations = 0;  // candidates proposed (a stopped chain may fall short)
    long long proposals = 0;   // operator applications that produced a candidate
    long long valid = 0;       // candidates the evaluator accepted as valid
    long long accepted = 0;    // candidates the chain moved to
    long long improvements = 0;
    double cpuSeconds = 0;     // CPU time of the chain's thread (per-core rates under load)
    EvalStats eval;
};

struct SearchStats {
    long long evaluations = 0;
    double evaluationsPerSecond = 0;
    // iterations / CPU seconds spent in the chains: the per-core rate, unaffected by
    // other processes competing for the cores (wall-clock rates are in evaluationsPerSecond).
    double iterationsPerSecondPerCore = 0;
    double mapperHitRate = 0;              // intra-layer mapping memo hits / calls
    double routeHitRate = 0;               // NoC route memo hits / calls
    double validRate = 0;                  // valid candidates / proposals
    double acceptRate = 0;                 // accepted / valid candidates
};

struct SearchResult {
    SearchConfig config;       // as run (initialTree holds the actual start, pins applied)
    std::uint64_t seed = 0;
    long long iterations = 0;  // per chain (N)
    double elapsedSeconds = 0;
    bool stopped = false;      // the stop token fired before the end
    RATree initialTree;
    Evaluation initialEval;
    RATree bestTree;           // best over chains, ties to the lowest chain index
    Evaluation best;
    int bestChain = 0;
    std::vector<ChainResult> chains;
    SearchStats stats;
};

// Runs the configured strategy. Errors: no valid starting tree, a pin path that names no
// node, an initial tree that is invalid or outside the mode's space. The callback may run
// on worker threads, one call at a time; it must not block for long.
Result<SearchResult> runSearch(const Network& net, const Hardware& hw, const SearchConfig& config,
                               const ProgressCallback& progress = {},
                               std::stop_token stop = {});

// The start of every chain for a mode without an initial tree (see docs/search.md):
// the layer-sequential root T cut with the batch halved via the root's sub-batch count
// until valid; for LP, consecutive layers grouped greedily into S-cut segments.
Result<RATree> defaultInitialTree(const Network& net, const Hardware& hw, SearchMode mode,
                                  int totalBatch, const Objective& objective,
                                  double minUtilisation = 0.75);

} // namespace tilescope
