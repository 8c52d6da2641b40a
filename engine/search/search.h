// The schedule search (docs/search.md): one SearchConfig in, one SearchResult out, with a
// progress callback and a stop token as the only hooks. Strategies (annealing over the
// full space, the LS / LP restricted spaces, random search) sit behind strategy.h; the
// DP-segmented layer pipeline (dp-lp) is a deterministic construction, not a chain.
#pragma once

#include "eval/evaluator.h"
#include "hw/hardware.h"
#include "model/network.h"
#include "search/partition_choice.h"
#include "tree/ratree.h"
#include "tree/repetition.h"
#include "util/result.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace tilescope {

// set = the unrestricted RA-tree space (SET); ls / lp = a root T cut over layers and T / S
// cuts of layers only (two levels deep, docs/search.md "Modes and starting trees");
// random = random walk over the same operators, keeping the best valid tree;
// dp-lp = consecutive layers split into S-cut pipeline segments by dynamic programming;
// chiplet = the chiplet pipeline-parallel baseline (search/chiplet.h);
// ga = a genetic search over the full space with the same operators (search/genetic.h).
enum class SearchMode { Set, LS, LP, Random, DpLp, Chiplet, Genetic };
const char* toString(SearchMode m); // "set", "ls", "lp", "random", "dp-lp", "chiplet", "ga"
bool parseSearchMode(const std::string& s, SearchMode& out);

// How the chiplet baseline's region split costs a region (docs/search.md, "The chiplet baseline",
// "Cost").
enum class ChipletCost {
    // The method's: a chiplet is N NPUs (tiles) of w x w arrays, w = sqrt(MACs per tile);
    // a pipeline group's chiplets are shared among its operators by work, each operator's
    // work divided over its NPUs; C spreads the data over the links of a chiplet boundary.
    Method,
    // Each node on one chiplet taken as a single array (w = sqrt(MACs per chiplet)), C over
    // one link: splits pay more often, so the plans have more regions.
    WholeChiplet,
};

// Which layers the chiplet baseline's graph reduction merges into chains.
enum class ChipletChains {
    // The method's: runs of layers each with in-degree = out-degree = 1 (producer and
    // consumer layers).
    InOutOne,
    // Also a chain's head with several inputs and its tail with several consumers (a layer
    // joins the chain of its one producer when it is that producer's only consumer): fewer,
    // longer chains, whose layers then share a segment and pass their tensors on chip.
    SingleLink,
};
const char* toString(ChipletCost c);   // "method", "whole-chiplet"
const char* toString(ChipletChains c); // "in-out-1", "single-link"
bool parseChipletCost(const std::string& s, ChipletCost& out);
bool parseChipletChains(const std::string& s, ChipletChains& out);

// The chiplet baseline's variants (docs/search.md, "The chiplet baseline"): the method's by
// default.
struct ChipletOptions {
    ChipletCost cost = ChipletCost::Method;
    ChipletChains chains = ChipletChains::InOutOne;
};

struct SearchConfig {
    std::uint64_t seed = 1; // chain i uses seed + i
    double beta = 100;      // N = beta x L iterations per chain
    double t0 = 0.07;       // T0 of the temperature schedule
    double alpha = 8;       // alpha of the temperature schedule
    Objective objective;    // cost = E^n x D^m
    SearchMode mode = SearchMode::Set;
    int chains = 1;     // K independent chains
    int threads = 1;    // T worker threads (capped at K); never changes the result
    int totalBatch = 1; // B_tot
    double minUtilisation = 0.75;
    // DRAM layouts where the template has a run model (docs/cost-model.md §4b).
    LayoutChoice layouts;
    ChipletOptions chiplet; // mode chiplet (and compare's chiplet row)
    // Node paths ("/0/2") in the initial tree to pin before the run starts, in addition
    // to nodes already pinned in initialTree.
    std::vector<std::string> pinned;
    // Start here instead of the mode's default start (continue a run, GUI edits).
    std::optional<RATree> initialTree;
    // 0: N = beta x L. Otherwise the exact iteration count per chain (tests, benchmarks).
    long long iterations = 0;
    // > 0: a wall-clock budget in seconds for the whole run instead of beta / iterations.
    // The temperature follows the elapsed fraction of each chain's share of it, so the
    // result depends on machine speed; SearchResult::iterations says what was run.
    double seconds = 0;
    // Set mode (the "does not lose" portfolio, docs/search.md): the share of the budget
    // spent on two warm-up chains confined to the LS and LP spaces first; 0 (the default:
    // the ablation found that splitting the schedule costs more than it brings) skips them.
    double warmupShare = 0;
    // Set mode: chains also start from the baselines' trees (layer-sequential, greedy
    // pipeline, dp-lp, the warm-up bests or seedTrees), best first, beside chain 0 from
    // the mode's start; off = every chain starts from the mode's start (plain annealing).
    bool portfolio = true;
    // Set mode: more starting trees for the portfolio (compare passes its LS, LP and
    // dp-lp bests); with any, the baselines are not rebuilt and no warm-up runs. Ignored
    // when the start has pinned nodes.
    struct Seed {
        std::string name;
        RATree tree;
        // The tree's evaluation at this config's batch and options, when the caller has it
        // (compare: each baseline's best): the portfolio takes it instead of costing the
        // tree again before the chains start.
        std::optional<Evaluation> eval;
    };
    std::vector<Seed> seedTrees;
    // Minimum seconds between progress callbacks (the final one is always delivered).
    double progressInterval = 0.1;
    // Repeated blocks (docs/search.md, "Repeated blocks"): where the network's layers hold
    // copies of one block (findRepetition), every tree keeps them tied: the search changes
    // the first block and the layers around the blocks, and the copies follow it. The
    // iteration budget counts those layers only.
    bool repeatBlocks = false;
    // The chains also move leaves among their alternative partitions (operator 7,
    // Mapper::alternatives; docs/search.md "Alternative partitions"): the search then picks
    // each leaf's partition by the whole tree's cost. Off: every leaf keeps the one it has.
    bool partitions = false;
    // The result's leaves each run the alternative partition the whole tree costs least
    // with (choosePartitions, docs/search.md "Partition choice"), tried leaf by leaf on the
    // best tree at the end; under a time budget the last 2-10% of it is kept for this.
    // Off: every leaf runs the mapper's choice, or what the tree names.
    bool choosePartitions = true;
};

// One snapshot for a progress display. iteration / total count over all chains (a bar);
// the chain fields describe the chain that sent it (a live plot follows chain 0).
struct Progress {
    long long iteration = 0, total = 0;
    int chain = 0;
    long long chainIteration = 0, chainTotal = 0;
    double temperature = 0;
    double currentCost = 0; // the chain's current tree
    PicoJoules energy = 0;  // of the chain's current tree
    Cycles delay = 0;
    double bestCost = 0; // best over all chains so far
    PicoJoules bestEnergy = 0;
    Cycles bestDelay = 0;
    // The tree behind bestCost (annealing only; null before the first valid tree). The same
    // pointer until the best improves, so a viewer can tell a new best by comparing them.
    std::shared_ptr<const RATree> bestTree;
    double acceptanceRate = 0; // accepted / valid candidates over the chain's last window
    double elapsedSeconds = 0;
    // Share of the budget used, in [0, 1]: elapsed / seconds for a time budget, else
    // iteration / total. Under a time budget `total` is an estimate (done / fraction).
    double fraction = 0;
    double secondsLeft = -1; // time budget: seconds until the deadline; -1 otherwise
    bool final = false;      // the last callback of the run
    // What the run is doing (docs/search.md "Budgets"): "start tree", "baselines: lp",
    // "baselines: dp-lp", "baselines: chiplet", "warm-up", "annealing" ("genetic" for the
    // genetic search's chains); "done" in the final
    // callback. A callback when a phase begins carries no chain figures (iteration 0).
    std::string phase;
};
using ProgressCallback = std::function<void(const Progress&)>;

struct ChainResult {
    int chain = 0;
    std::uint64_t seed = 0;
    // What the chain was for: "set" / "ls" / "lp" / "random" for a chain of that space,
    // "warmup-ls" / "warmup-lp" for the Set portfolio's warm-up chains.
    std::string role;
    std::string start; // which tree it started from ("start", "ls", "dp-lp", ...)
    RATree best;
    Evaluation bestEval;
    long long iterations = 0; // candidates proposed (a stopped chain may fall short)
    long long proposals = 0;  // operator applications that produced a candidate
    long long valid = 0;      // candidates the evaluator accepted as valid
    long long accepted = 0;   // candidates the chain moved to
    long long improvements = 0;
    double cpuSeconds = 0; // CPU time of the chain's thread (per-core rates under load)
    EvalStats eval;
    // Time budget only: the best tree with detail, costed in the chain's own context, whose
    // memos cover it (SearchResult::bestDetail is the best chain's).
    std::optional<Evaluation> bestDetail;
};

struct SearchStats {
    long long evaluations = 0;
    double evaluationsPerSecond = 0;
    // iterations / CPU seconds spent in the chains: the per-core rate, unaffected by
    // other processes competing for the cores (wall-clock rates are in evaluationsPerSecond).
    double iterationsPerSecondPerCore = 0;
    double mapperHitRate = 0; // intra-layer mapping memo hits / calls
    double routeHitRate = 0;  // leaf traffic memo hits / calls (engine/eval/transfers.h)
    // The leaf periods costed anew (memo misses), and per such period its NoC pieces and
    // their route links (EvalStats::pieces, pieceLinks): what a new leaf costs on a large mesh.
    long long periodsCosted = 0;
    double piecesPerNewPeriod = 0, pieceLinksPerNewPeriod = 0;
    double validRate = 0;  // valid candidates / proposals
    double acceptRate = 0; // accepted / valid candidates
};

struct SearchResult {
    SearchConfig config; // as run (initialTree holds the actual start, pins applied)
    std::uint64_t seed = 0;
    // Per chain (N): as configured for an iteration budget; for a time budget, the
    // iterations run over all chains divided by the chain count, so `--iterations` with
    // this value replays a run of the same length (not bit for bit: docs/search.md).
    long long iterations = 0;
    long long iterationsRun = 0; // over all chains, warm-up chains included
    double elapsedSeconds = 0;
    bool stopped = false; // the stop token fired before the end
    RATree initialTree;
    Evaluation initialEval;
    RATree bestTree; // best over chains, ties to the lowest chain index
    Evaluation best;
    int bestChain = 0;               // index into chains
    std::vector<ChainResult> chains; // the Set portfolio's warm-up chains come last
    SearchStats stats;
    BlockRepetition repetition; // the tied blocks (SearchConfig::repeatBlocks), else none
    // Time budget only: the best tree evaluated with detail (EvalOptions::detail, no S-T
    // rectangles) in a context the run has warmed, so a front end that reports segments
    // does not pay a fresh context's first evaluation (on a large mesh a good part of the
    // budget). Empty under an iteration budget: evaluate the best tree with detail.
    std::optional<Evaluation> bestDetail;
    // The partition choice on the best tree (SearchConfig::choosePartitions): what it tried
    // and what it changed; costBefore is the best tree's cost before it.
    std::optional<PartitionChoiceStats> partitionChoice;
};

// Runs the configured strategy. Errors: no valid starting tree, a pin path that names no
// node, an initial tree that is invalid or outside the mode's space. The callback may run
// on worker threads, one call at a time; it must not block for long.
Result<SearchResult> runSearch(const Network& net, const Hardware& hw, const SearchConfig& config,
                               const ProgressCallback& progress = {}, std::stop_token stop = {});

// The objective a platform's schedules were evaluated with in the method's evaluation
// (docs/search.md): edge and testchip E^2 x D, cloud E x D^2, any other template EDP.
// The CLI and the GUI take their default objective from here.
Objective defaultObjective(const Hardware& hw);

// The default budget of anneal, compare and the GUI's Start: seconds per annealing mode.
double defaultSearchSeconds();
// The default chain count of the CLI and the GUI: the two cores of a small machine. Not
// the core count, so that an iteration-budgeted result is the same on every machine.
int defaultSearchChains();

// Iterations per chain of an iteration budget: iterations if set, else round(beta x L),
// at least 1. Errors: a non-finite beta or more than maxIterationsPerChain().
Result<long long> iterationBudget(const SearchConfig& config, size_t layers);
long long maxIterationsPerChain();
double maxSearchSeconds(); // a week: longer budgets are typos

// Energy x delay of an evaluation: compare reports it beside the run's objective so
// ratios stay comparable across objectives.
double edpOf(const Evaluation& e);

// compare (CLI and GUI): the modes in the order they run, and the config of each. The
// baselines run with the base config; SA (Set) gets their best trees as seedTrees and no
// warm-up (the baselines already ran), so it never ends worse than any of them.
std::vector<SearchMode> compareModes(); // LS, LP, DP-LP, Set
SearchConfig compareConfig(const SearchConfig& base, SearchMode mode,
                           const std::vector<const SearchResult*>& earlier);

// What a search costs its trees with: its objective, utilisation floor and DRAM layouts
// (the result's detail and other evaluation settings left at their defaults).
EvalOptions evalOptionsOf(const SearchConfig& config);

// The start of every chain for a mode without an initial tree (see docs/search.md):
// the layer-sequential root T cut with the batch halved via the root's sub-batch count
// until valid; for LP, consecutive layers grouped greedily into S-cut segments.
Result<RATree> defaultInitialTree(const Network& net, const Hardware& hw, SearchMode mode,
                                  int totalBatch, const Objective& objective,
                                  double minUtilisation = 0.75);

} // namespace tilescope
