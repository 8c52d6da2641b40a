// The chain loop shared by every strategy (docs/search.md) and runSearch: K chains with
// seeds seed..seed+K-1, each with its own RNG and EvalContext, run on up to T worker
// threads. A chain's trajectory depends only on its seed, its start and its budget, and
// phases (the Set portfolio's warm-up, then the main chains) end before the next begins,
// so under an iteration budget the result does not depend on T.
#include "mapping/mapper.h"
#include "search/chiplet.h"
#include "search/schedule.h"
#include "search/strategy.h"
#include "tree/repetition.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <deque>
#include <mutex>
#include <thread>
#include <time.h>

namespace tilescope {

const char* toString(SearchMode m) {
    switch (m) {
    case SearchMode::Set:
        return "set";
    case SearchMode::LS:
        return "ls";
    case SearchMode::LP:
        return "lp";
    case SearchMode::Random:
        return "random";
    case SearchMode::DpLp:
        return "dp-lp";
    case SearchMode::Chiplet:
        return "chiplet";
    case SearchMode::Genetic:
        return "ga";
    }
    return "?";
}

bool parseSearchMode(const std::string& s, SearchMode& out) {
    for (SearchMode m : {SearchMode::Set, SearchMode::LS, SearchMode::LP, SearchMode::Random,
                         SearchMode::DpLp, SearchMode::Chiplet, SearchMode::Genetic})
        if (s == toString(m)) {
            out = m;
            return true;
        }
    return false;
}

const char* toString(ChipletCost c) {
    return c == ChipletCost::Method ? "method" : "whole-chiplet";
}

const char* toString(ChipletChains c) {
    return c == ChipletChains::InOutOne ? "in-out-1" : "single-link";
}

bool parseChipletChains(const std::string& s, ChipletChains& out) {
    for (ChipletChains c : {ChipletChains::InOutOne, ChipletChains::SingleLink})
        if (s == toString(c)) {
            out = c;
            return true;
        }
    return false;
}

bool parseChipletCost(const std::string& s, ChipletCost& out) {
    for (ChipletCost c : {ChipletCost::Method, ChipletCost::WholeChiplet})
        if (s == toString(c)) {
            out = c;
            return true;
        }
    return false;
}

Result<RATree> defaultInitialTree(const Network& net, const Hardware& hw, SearchMode mode,
                                  int totalBatch, const Objective& objective,
                                  double minUtilisation) {
    EvalContext ctx(net, hw);
    EvalOptions opt;
    opt.objective = objective;
    opt.minUtilisation = minUtilisation;
    if (mode == SearchMode::DpLp) return dpLayerPipeline(net, hw, totalBatch, opt);
    if (mode == SearchMode::Chiplet) return chipletBaseline(net, hw, totalBatch, opt);
    return makeStrategy(mode)->initialTree(ctx, totalBatch, opt, Deadline{});
}

Objective defaultObjective(const Hardware& hw) {
    // The method's evaluation ranks edge schedules by E^2 D (energy dominates on a battery)
    // and datacenter ones by E D^2 (latency dominates); the test chip follows the edge.
    if (hw.name == "edge" || hw.name == "testchip") return Objective{2, 1};
    if (hw.name == "cloud") return Objective{1, 2};
    return Objective{1, 1};
}

double defaultSearchSeconds() {
    // compare runs three annealing modes and dp-lp: about 13 s in all on two cores.
    return 4.0;
}

int defaultSearchChains() {
    return 2;
}

long long maxIterationsPerChain() {
    return 1'000'000'000'000LL;
}

double maxSearchSeconds() {
    return 7 * 24 * 3600.0;
}

Result<long long> iterationBudget(const SearchConfig& c, size_t layers) {
    if (c.iterations > 0) {
        if (c.iterations > maxIterationsPerChain())
            return Error{"iterations: more than " + std::to_string(maxIterationsPerChain()) +
                         " per chain"};
        return c.iterations;
    }
    if (!(c.beta > 0) || !std::isfinite(c.beta)) return Error{"beta must be a positive number"};
    const double n = std::round(c.beta * double(layers));
    if (!(n <= double(maxIterationsPerChain())))
        return Error{"beta x layers is more than " + std::to_string(maxIterationsPerChain()) +
                     " iterations per chain"};
    return std::max<long long>(1, (long long)n);
}

double edpOf(const Evaluation& e) {
    return objectiveCost(e.energy.total(), e.delay, Objective{1, 1});
}

std::vector<SearchMode> compareModes() {
    return {SearchMode::LS, SearchMode::LP, SearchMode::DpLp, SearchMode::Chiplet, SearchMode::Set};
}

EvalOptions evalOptionsOf(const SearchConfig& config) {
    EvalOptions opt;
    opt.objective = config.objective;
    opt.minUtilisation = config.minUtilisation;
    opt.layouts = config.layouts;
    return opt;
}

SearchConfig compareConfig(const SearchConfig& base, SearchMode mode,
                           const std::vector<const SearchResult*>& earlier) {
    SearchConfig c = base;
    // The full-space row runs the search the caller chose: annealing, or the genetic search.
    c.mode =
        mode == SearchMode::Set && base.mode == SearchMode::Genetic ? SearchMode::Genetic : mode;
    c.initialTree.reset(); // each space from its own default start
    c.pinned.clear();
    c.seedTrees.clear();
    if ((c.mode == SearchMode::Set || c.mode == SearchMode::Genetic) && c.portfolio) {
        for (const SearchResult* r : earlier)
            if (r) c.seedTrees.push_back({toString(r->config.mode), r->bestTree, r->best});
        // The baselines ran already: SA spends its whole budget in the full space.
        if (!c.seedTrees.empty()) c.warmupShare = 0;
    }
    return c;
}

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// CPU time of the calling thread (POSIX): a chain's cost independent of machine load.
double threadCpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// State shared by the chains of one run: the progress throttle and the best-so-far for
// display. Nothing here feeds back into a chain's decisions.
struct Shared {
    const ProgressCallback* callback = nullptr;
    Clock::time_point start;
    long long intervalNs = 0;
    long long total = 0;
    std::atomic<long long> done{0};
    double seconds = 0; // the run's time budget, 0 for an iteration budget
    std::string phase;  // of the chains running: "warm-up", "annealing" or "genetic"
    std::atomic<long long> nextReportNs{0};
    std::mutex mutex; // serialises callbacks and guards the display best
    double bestCost = 0;
    PicoJoules bestEnergy = 0;
    Cycles bestDelay = 0;
    std::shared_ptr<const RATree> bestTree; // copied only when a callback will show it
    bool haveBest = false;

    void offerBest(const Evaluation& e, const RATree& tree) {
        std::lock_guard lock(mutex);
        if (!haveBest || e.cost < bestCost) {
            haveBest = true;
            bestCost = e.cost;
            bestEnergy = e.energy.total();
            bestDelay = e.delay;
            if (callback && *callback) bestTree = std::make_shared<const RATree>(tree);
        }
    }
};

// Acceptance over the last kWindow valid candidates: a plot of it shows the schedule
// cooling, which an all-run average hides.
class AcceptanceWindow {
  public:
    void push(bool accepted) {
        if (m_n == kWindow)
            m_sum -= m_ring[m_i];
        else
            ++m_n;
        m_ring[m_i] = accepted;
        m_sum += accepted;
        m_i = (m_i + 1) % kWindow;
    }
    double rate() const { return m_n ? double(m_sum) / double(m_n) : 0.0; }

  private:
    static constexpr int kWindow = 200;
    bool m_ring[kWindow] = {};
    int m_i = 0, m_n = 0, m_sum = 0;
};

// One chain to run: its space and acceptance rule, its start and its budget.
struct ChainSpec {
    const Strategy* strategy = nullptr;
    std::string role, startName;
    std::uint64_t seed = 0;
    const RATree* start = nullptr;
    const Evaluation* startEval = nullptr;
    long long iterations = 0; // iteration budget; 0 under a time budget
    double seconds = 0;       // time budget of this chain, from when it starts
    // A context that has costed the start already, to evaluate in instead of a fresh one
    // (a time budget: a fresh context's first evaluations fill its memos, which on a large
    // mesh costs as much as the start did). Its earlier counts are not the chain's.
    EvalContext* context = nullptr;
    // Time budget, a fresh context: about what its first evaluation costs (filling the
    // memos; on a large mesh what costing the start took).
    double coldSeconds = 0;
    // Where to build the chain's fresh context (none: the chain's own), so that it outlives
    // the chain: the partition choice then costs the best chain's result in the context
    // whose memos hold that chain's trees.
    std::optional<EvalContext>* keep = nullptr;
};

struct RunInputs {
    const Network& net;
    const Hardware& hw;
    const SearchConfig& cfg;
    const std::vector<std::vector<bool>>& deps;
    const EvalOptions& opt;
    std::stop_token stop;
    Clock::time_point deadline; // time budget: no chain runs past it
    const BlockRepetition& rep; // tied blocks (SearchConfig::repeatBlocks), else none
};

// The candidate with its blocks tied again (tree/repetition.h); none when it cannot be
// (a move that mixed a block with what lies around it).
std::optional<RATree> retie(std::optional<RATree> t, const RunInputs& in) {
    if (!t || !in.rep.active()) return t;
    auto tied = tieBlocks(*t, in.net, in.rep);
    if (!tied) return std::nullopt;
    return std::move(tied).value();
}

// The tree's figures with detail, as SearchResult::bestDetail holds them.
Evaluation detailOf(EvalContext& ctx, const RATree& tree, int totalBatch, const EvalOptions& opt) {
    EvalOptions d = opt;
    d.detail = true;
    d.maxIntervals = 0;
    return evaluate(ctx, tree, totalBatch, d);
}

// Annealing leaves redundant levels behind (a T cut of sub-batch 1 nested in another
// costs the same as its children in place). Dissolve every cut whose removal keeps the
// tree valid, inside the space and no more costly, so the reported tree is readable.
// Deterministic: it depends only on the chain's best tree (and, under a time budget, on
// how much of it `until` leaves: the chain's deadline ends it as it ends the chain).
void simplify(RATree& best, Evaluation& bestEval, EvalContext& ctx, const RunInputs& in,
              const SpaceRule& rule, Clock::time_point until) {
    int budget = 4 * best.size(); // evaluations; each success removes a cut
    for (bool changed = true; changed && budget > 0 && Clock::now() < until;) {
        changed = false;
        // Deepest-last pre-order ids first: inner redundant levels go before outer ones.
        for (int id = best.size() - 1; id > 0 && budget > 0; --id) {
            if (!best.node(id).isCut() || best.frozen(id)) continue;
            auto dissolved = edit::dissolve(best, in.net, id);
            auto d = dissolved ? retie(std::move(dissolved).value(), in) : std::nullopt;
            if (!d || rule.check(*d)) continue;
            if (Clock::now() >= until) break;
            --budget;
            Evaluation e = evaluate(ctx, *d, in.cfg.totalBatch, in.opt);
            if (!e.valid || e.cost > bestEval.cost) continue;
            best = std::move(d).value();
            bestEval = std::move(e);
            changed = true;
            break;
        }
    }
}

// A chain's progress callback, at most every shared.intervalNs over all chains. The
// temperature is 0 for a population (no schedule to show).
void reportChainProgress(Shared& shared, int k, long long n, long long N, double temp,
                         const Evaluation& curEval, double acceptanceRate) {
    const long long now =
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - shared.start).count();
    long long next = shared.nextReportNs.load(std::memory_order_relaxed);
    if (now < next || !shared.nextReportNs.compare_exchange_strong(next, now + shared.intervalNs))
        return;
    Progress p;
    p.iteration = shared.done.load(std::memory_order_relaxed);
    p.chain = k;
    p.chainIteration = n + 1;
    p.chainTotal = N;
    p.temperature = temp;
    p.currentCost = curEval.cost;
    p.energy = curEval.energy.total();
    p.delay = curEval.delay;
    p.acceptanceRate = acceptanceRate;
    p.elapsedSeconds = double(now) * 1e-9;
    p.phase = shared.phase;
    if (shared.seconds > 0) {
        p.fraction = std::min(1.0, p.elapsedSeconds / shared.seconds);
        p.secondsLeft = std::max(0.0, shared.seconds - p.elapsedSeconds);
        p.total = p.fraction > 0
                      ? std::max(p.iteration, std::llround(double(p.iteration) / p.fraction))
                      : p.iteration;
        p.chainTotal = 0;
    } else {
        p.total = shared.total;
        p.fraction = shared.total ? double(p.iteration) / double(shared.total) : 1.0;
    }
    std::lock_guard lock(shared.mutex);
    p.bestCost = shared.bestCost;
    p.bestEnergy = shared.bestEnergy;
    p.bestDelay = shared.bestDelay;
    p.bestTree = shared.bestTree;
    (*shared.callback)(p);
}

// The tree names only the partitions its leaves run: a name left from before a move changed
// a leaf's tiles or batch (the leaf then runs the mapper's choice) is dropped, the cost the
// same. Frozen nodes keep theirs.
void dropUnusedPartitions(RATree& t, const Evaluation& e, EvalContext& ctx) {
    if (e.tileCounts.size() != size_t(t.size())) return;
    for (int id = 0; id < t.size(); ++id) {
        RANode& n = t.node(id);
        if (n.isCut() || n.partition == PartitionFactors{} || t.frozen(id)) continue;
        if (!ctx.namedAlternative(n.layer, e.tileCounts[size_t(id)], n.batch, n.partition))
            n.partition = {};
    }
}

ChainResult runChain(int k, const ChainSpec& spec, const RunInputs& in, Shared& shared) {
    ChainResult r;
    r.chain = k;
    r.seed = spec.seed;
    r.role = spec.role;
    r.start = spec.startName;
    Rng rng(r.seed);
    const double cpu0 = threadCpuSeconds();
    const auto chainStart = Clock::now();
    std::optional<EvalContext> own;
    std::optional<EvalContext>& fresh = spec.keep ? *spec.keep : own;
    EvalContext& ctx = spec.context ? *spec.context : fresh.emplace(in.net, in.hw);
    const EvalStats before = ctx.stats();
    const SpaceRule rule = spec.strategy->space();
    OperatorContext ops{in.net, in.deps, rule};

    RATree cur = *spec.start;
    Evaluation curEval = *spec.startEval;
    r.best = cur;
    r.bestEval = curEval;
    // The genetic search's members; `cur` is then the last child that joined (the plot's).
    const auto pop = spec.strategy->population(in.net, cur, curEval);
    // A walk also moves leaves among their alternative partitions (SearchConfig::partitions),
    // those of the tiles each has in the current tree.
    if (in.cfg.partitions && !pop)
        ops.partitionsOf = [&](int node, std::vector<PartitionFactors>& out) {
            if (size_t(node) >= curEval.tileCounts.size() || node >= cur.size()) return;
            const RANode& nd = cur.node(node);
            for (const LeafMapping& m :
                 ctx.alternatives(nd.layer, curEval.tileCounts[size_t(node)], nd.batch))
                out.push_back(Mapper::factorsOf(m));
        };
    AcceptanceWindow window;
    const bool timed = spec.iterations <= 0;
    const long long N = spec.iterations;
    // Every candidate comes from an edit that checked its structure (tree/tree_edit.cpp,
    // tieBlocks): the evaluator need not check it again.
    EvalOptions candidateOpt = in.opt;
    candidateOpt.structureChecked = true;
    // The chain's own deadline: its share of the budget, never past the run's.
    const auto end =
        std::min(in.deadline, chainStart + std::chrono::duration_cast<Clock::duration>(
                                               std::chrono::duration<double>(spec.seconds)));
    const double span = std::chrono::duration<double>(end - chainStart).count();
    // The last 10% continues from the best tree found (the reference schedule).
    const bool returns = spec.strategy->returnsToBest();
    bool returned = false;
    // A chain in a fresh context whose slice does not cover that context's first evaluation
    // does not start (its best is its start): the evaluation would overrun the budget.
    const bool affordable = !timed || spec.context || spec.coldSeconds < span;
    Clock::time_point last = chainStart; // time budget: when the last iteration began
    Clock::duration longest{0};          // ... and the longest one so far

    for (long long n = 0; affordable; ++n) {
        if (in.stop.stop_requested()) break;
        double x; // elapsed share of the chain's budget: the temperature follows it
        if (timed) {
            // At least one iteration: a budget already spent on the set-up (a slow or busy
            // machine) still tries one move rather than report a chain that never ran. After
            // that, no iteration starts when less than the chain's mean iteration time, or
            // half its longest, is left: on a large mesh one may take a good part of a
            // second, the run ends with its slowest chain, and the budget must hold.
            const auto now = Clock::now();
            if (n > 0) longest = std::max(longest, now - last);
            last = now;
            if (n > 0 &&
                (now >= end || (end - now) * n < (now - chainStart) || (end - now) * 2 < longest))
                break;
            x = span > 0
                    ? std::min(1.0, std::chrono::duration<double>(now - chainStart).count() / span)
                    : 1.0;
        } else {
            if (n >= N) break;
            x = double(n) / double(N);
        }
        if (returns && !returned && x >= 0.9) {
            returned = true;
            cur = r.best;
            curEval = r.bestEval;
        }
        const double temp = sa::temperature(in.cfg.t0, in.cfg.alpha, x, 1.0);
        ++r.iterations;
        shared.done.fetch_add(1, std::memory_order_relaxed);

        // A population breeds the candidate and takes it in; a walk moves from its tree.
        Operator used = Operator::SwapLeaves;
        auto cand = retie(pop ? pop->breed(ops, rng) : proposeCandidate(cur, ops, rng, &used), in);
        if (cand) {
            ++r.proposals;
            Evaluation e = evaluate(ctx, *cand, in.cfg.totalBatch, candidateOpt);
            if (e.valid) {
                ++r.valid;
                const bool improves = e.cost < r.bestEval.cost;
                // A partition move is taken only where it lowers the cost: the mapper's
                // choice is a good one, and a walk among the others at a high temperature
                // strays from it faster than the later moves find their way back.
                const bool accepted = pop ? pop->offer(*cand, e)
                                      : used == Operator::Repartition
                                          ? e.cost < curEval.cost
                                          : spec.strategy->accept(curEval.cost, e.cost, temp, rng);
                window.push(accepted);
                if (improves) {
                    ++r.improvements;
                    r.best = *cand;
                    r.bestEval = e;
                    shared.offerBest(e, r.best);
                }
                if (accepted) {
                    ++r.accepted;
                    cur = std::move(*cand);
                    curEval = std::move(e);
                }
            }
        }

        if (*shared.callback)
            reportChainProgress(shared, k, n, N, pop ? 0.0 : temp, curEval, window.rate());
    }
    // A chain that did not start leaves its start as it is (a fresh context would pay again).
    const bool finish = affordable && !in.stop.stop_requested();
    if (finish) simplify(r.best, r.bestEval, ctx, in, rule, timed ? end : Clock::time_point::max());
    if (in.cfg.partitions) dropUnusedPartitions(r.best, r.bestEval, ctx);
    r.eval = ctx.stats();
    r.eval -= before;
    if (timed && finish) r.bestDetail = detailOf(ctx, r.best, in.cfg.totalBatch, in.opt);
    r.cpuSeconds = threadCpuSeconds() - cpu0;
    return r;
}

// Runs chains [0, specs.size()) on up to `threads` workers, handed out in index order;
// each writes only its own slot, so the results do not depend on the worker count.
// Of the contexts the chains keep (ChainSpec::keep), only the best chain's so far stays
// (the lowest index among equal costs, as bestChainOf picks): a run of many chains holds
// no more contexts than it has workers, and one more.
std::vector<ChainResult> runChains(const std::vector<ChainSpec>& specs, int firstIndex, int threads,
                                   const RunInputs& in, Shared& shared) {
    std::vector<ChainResult> out(specs.size());
    std::mutex keptMutex;
    size_t kept = specs.size();
    auto settle = [&](size_t k) {
        if (!specs[k].keep) return;
        std::lock_guard lock(keptMutex);
        const double cost = out[k].bestEval.cost;
        if (kept == specs.size() || cost < out[kept].bestEval.cost ||
            (cost == out[kept].bestEval.cost && k < kept)) {
            if (kept < specs.size()) specs[kept].keep->reset();
            kept = k;
        } else {
            specs[k].keep->reset();
        }
    };
    const int workers = std::min<int>(threads, int(specs.size()));
    if (workers <= 1) {
        for (size_t k = 0; k < specs.size(); ++k) {
            out[k] = runChain(firstIndex + int(k), specs[k], in, shared);
            settle(k);
        }
        return out;
    }
    std::atomic<size_t> next{0};
    std::vector<std::jthread> pool;
    for (int w = 0; w < workers; ++w)
        pool.emplace_back([&] {
            for (size_t k; (k = next.fetch_add(1)) < specs.size();) {
                out[k] = runChain(firstIndex + int(k), specs[k], in, shared);
                settle(k);
            }
        });
    pool.clear(); // joins
    return out;
}

std::optional<std::string> checkConfig(const SearchConfig& c) {
    if (c.chains < 1) return "chains must be at least 1";
    if (c.threads < 1) return "threads must be at least 1";
    if (c.totalBatch < 1) return "batch must be at least 1";
    if (!(c.seconds >= 0) || !(c.seconds <= maxSearchSeconds()))
        return "seconds must be between 0 and " + std::to_string(long(maxSearchSeconds()));
    if (c.seconds == 0 && !(c.beta > 0) && c.iterations <= 0) return "beta must be positive";
    if (c.iterations < 0) return "iterations must not be negative";
    if (!(c.t0 >= 0) || !std::isfinite(c.t0)) return "t0 must be a non-negative number";
    if (!(c.alpha > -1) || !std::isfinite(c.alpha)) return "alpha must be greater than -1";
    if (!(c.objective.n >= 0) || !(c.objective.m >= 0))
        return "objective exponents must be non-negative";
    if (!(c.warmupShare >= 0 && c.warmupShare < 1)) return "warm-up share must be in [0, 1)";
    return std::nullopt;
}

bool hasPins(const RATree& t) {
    return std::any_of(t.nodes.begin(), t.nodes.end(), [](const RANode& n) { return n.pinned; });
}

// A tree the Set portfolio may start a chain from.
struct Candidate {
    std::string name;
    RATree tree;
    Evaluation eval;
};

Clock::duration toDuration(double seconds) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// Under a time budget, the start trees and baselines a run builds before it anneals are
// done by these shares of the budget (docs/search.md "Budgets"): the greedy layer
// pipeline by a tenth, dp-lp (and an LP run's start) by a quarter. Annealing gets the rest.
constexpr double kLayerPipelineShare = 0.10;
constexpr double kBaselinesShare = 0.25;
// The share of a time budget kept for the partition choice on the result: what costing
// every leaf's other alternatives once takes, about (kChoiceTrees trees per leaf, each
// kChoiceMargin times the mean time of kChoiceProbes neighbours of the start), within
// these bounds, spread over the choice's threads (choiceThreads).
constexpr double kChoiceShareMin = 0.02, kChoiceShareMax = 0.10;
constexpr double kChoiceTrees = 7, kChoiceMargin = 1.0;
constexpr int kChoiceProbes = 4; // neighbours of the start costed to size the share

// The partition choice costs a leaf's alternatives on two threads when the run has two
// (its second in another context), else on one.
int choiceThreads(const SearchConfig& config) {
    return config.threads > 1 ? 2 : 1;
}

// The deadline at `share` of the run's time budget; none under an iteration budget.
Deadline shareDeadline(const SearchConfig& config, Clock::time_point t0, double share) {
    Deadline d;
    if (config.seconds > 0) d.at = t0 + toDuration(share * config.seconds);
    return d;
}

// A progress callback as the run enters a phase; no chain runs then. `best` is the best
// tree costed so far, if any.
void reportPhase(const ProgressCallback& progress, const char* phase, Clock::time_point t0,
                 double seconds, const Evaluation* best = nullptr) {
    if (!progress) return;
    Progress p;
    p.phase = phase;
    p.elapsedSeconds = secondsSince(t0);
    if (seconds > 0) {
        p.fraction = std::min(1.0, p.elapsedSeconds / seconds);
        p.secondsLeft = std::max(0.0, seconds - p.elapsedSeconds);
    }
    if (best) {
        p.bestCost = best->cost;
        p.bestEnergy = best->energy.total();
        p.bestDelay = best->delay;
    }
    progress(p);
}

// The chains' deadline under a time budget: the end of the budget but the partition
// choice's share of it (SearchConfig::choosePartitions), sized by what a chain's evaluation
// takes, about: a few neighbours of the start costed in `in`'s context (whose memos they
// warm for chain 0); none under an iteration budget.
Clock::time_point chainsDeadline(const RunInputs& in, Clock::time_point t0, EvalContext& ctx,
                                 const RATree& start, const SpaceRule& rule) {
    const SearchConfig& config = in.cfg;
    double share = 0;
    if (config.choosePartitions && config.seconds > 0) {
        OperatorContext ops{in.net, in.deps, rule};
        Rng rng(config.seed);
        EvalOptions opt = in.opt;
        opt.structureChecked = true;
        const int leaves = in.rep.searchedLayers(int(in.net.layers.size()));
        auto shareOf = [&](double evalSeconds) {
            return kChoiceTrees * kChoiceMargin * leaves * evalSeconds / config.seconds;
        };
        const auto w0 = Clock::now();
        int costed = 0;
        bool atCap = false;
        for (int i = 0; i < kChoiceProbes && !atCap; ++i) {
            if (auto cand = retie(proposeCandidate(start, ops, rng), in)) {
                evaluate(ctx, *cand, config.totalBatch, opt);
                ++costed;
            }
            // The mean is at least the time so far over all the probes: once that alone
            // reaches the cap (a wafer-scale mesh), the others would not move the share.
            atCap = shareOf(secondsSince(w0) / kChoiceProbes) >= kChoiceShareMax;
        }
        const double evalSeconds = costed ? secondsSince(w0) / costed : 0.0;
        share = (atCap ? kChoiceShareMax
                       : std::clamp(shareOf(evalSeconds), kChoiceShareMin, kChoiceShareMax)) /
                choiceThreads(config);
    }
    return shareDeadline(config, t0, 1 - share).at;
}

// The partition choice on a run's result (SearchConfig::choosePartitions): the best tree's
// leaves each take the alternative partition the tree costs least with, until `until`;
// `helper` (may be null) costs alternatives beside `ctx` on a second thread.
void choosePartitionsOf(SearchResult& res, EvalContext& ctx, EvalContext* helper,
                        const Network& net, const SearchConfig& config, const EvalOptions& opt,
                        const BlockRepetition& rep, Clock::time_point until, std::stop_token stop,
                        const ProgressCallback& progress, Clock::time_point t0) {
    if (!config.choosePartitions || res.stopped || !res.best.valid) return;
    reportPhase(progress, "partitions", t0, config.seconds, &res.best);
    const PartitionChoiceInputs pin{
        net, config.totalBatch, opt, rep, until, [&stop] { return stop.stop_requested(); }, helper};
    res.partitionChoice = choosePartitions(res.bestTree, res.best, ctx, pin);
    if (res.partitionChoice->changed > 0 && res.bestDetail)
        res.bestDetail = detailOf(ctx, res.bestTree, config.totalBatch, opt);
}

// dp-lp and chiplet are constructions, not chains: one result with the layer-sequential
// tree as its start for reference.
Result<SearchResult> runConstruction(const Network& net, const Hardware& hw,
                                     const SearchConfig& config, const EvalOptions& opt,
                                     const ProgressCallback& progress, std::stop_token stop,
                                     Clock::time_point t0) {
    const bool timed = config.seconds > 0;
    const std::string name = toString(config.mode);
    if (config.initialTree) return Error{name + " builds its own tree; it takes no initial tree"};
    if (!config.pinned.empty()) return Error{name + " builds its own tree; it takes no pins"};
    DpLpStats ds;
    const double cpu0 = threadCpuSeconds();
    reportPhase(progress,
                config.mode == SearchMode::Chiplet ? "baselines: chiplet" : "baselines: dp-lp", t0,
                config.seconds);
    // Under a time budget the construction keeps a tenth of it for costing its result.
    const Deadline deadline = shareDeadline(config, t0, 0.9);
    // A time budget also shares the construction's context (its memos cover the start), as
    // a fresh one would cost the start again; an iteration budget reports the counts of a
    // fresh one.
    EvalContext ctx(net, hw);
    EvalContext* shared = timed ? &ctx : nullptr;
    auto t =
        config.mode == SearchMode::Chiplet
            ? chipletBaseline(net, hw, config.totalBatch, opt, nullptr, deadline, config.chiplet)
            : dpLayerPipeline(net, hw, config.totalBatch, opt, config.threads, &ds, stop, deadline,
                              shared);
    if (!t) return Error{"initial tree: " + t.error().message};
    const EvalStats before = ctx.stats();
    SearchResult res;
    res.config = config;
    res.seed = config.seed;
    res.stopped = stop.stop_requested();
    auto ls = layerSequentialStart(ctx, config.totalBatch, opt);
    res.initialTree = ls ? std::move(ls).value() : *t;
    res.initialEval = evaluate(ctx, res.initialTree, config.totalBatch, opt);
    res.bestTree = *t;
    res.best = evaluate(ctx, res.bestTree, config.totalBatch, opt);
    res.config.initialTree = res.initialTree;
    // The partition choice before the detail, so the detail is costed once, of the final tree.
    choosePartitionsOf(res, ctx, nullptr, net, config, opt, {},
                       timed ? t0 + toDuration(config.seconds) : Clock::time_point::max(), stop,
                       progress, t0);
    if (timed && !res.stopped) res.bestDetail = detailOf(ctx, res.bestTree, config.totalBatch, opt);
    ChainResult c;
    c.role = name;
    c.start = "ls";
    c.seed = config.seed;
    c.best = res.bestTree;
    c.bestEval = res.best;
    c.cpuSeconds = threadCpuSeconds() - cpu0;
    c.eval = ctx.stats();
    c.eval -= before;
    c.eval.evaluations = ds.evaluations + 2;
    res.chains.push_back(std::move(c));
    res.elapsedSeconds = secondsSince(t0);
    res.stats.evaluations = ds.evaluations + 2;
    res.stats.evaluationsPerSecond =
        res.elapsedSeconds > 0 ? double(res.stats.evaluations) / res.elapsedSeconds : 0;
    if (progress) {
        Progress p;
        p.currentCost = p.bestCost = res.best.cost;
        p.energy = p.bestEnergy = res.best.energy.total();
        p.delay = p.bestDelay = res.best.delay;
        p.elapsedSeconds = res.elapsedSeconds;
        p.fraction = 1;
        p.secondsLeft = timed ? 0 : -1;
        p.final = true;
        p.phase = "done";
        progress(p);
    }
    return res;
}

// The start: given (a continued run) or the strategy's own; then the pins.
Result<RATree> startTree(EvalContext& setup, const Network& net, const Strategy& strategy,
                         const SearchConfig& config, const EvalOptions& opt, Deadline deadline,
                         const BlockRepetition& rep) {
    RATree start;
    if (config.initialTree) {
        start = *config.initialTree;
        if (start.empty()) return Error{"initial tree: the tree is empty"};
        if (auto e = validateStructure(start, net, config.totalBatch))
            return Error{"initial tree: " + e->message};
    } else {
        auto s = strategy.initialTree(setup, config.totalBatch, opt, deadline);
        if (!s) return Error{"initial tree: " + s.error().message};
        start = std::move(s).value();
    }
    if (rep.active()) {
        auto tied = tieBlocks(start, net, rep);
        // The mode's own start may span blocks (a greedy pipeline): the layer-sequential
        // start, tied, instead. A given tree that cannot be tied is an error.
        if (!tied && !config.initialTree) {
            auto ls = layerSequentialStart(setup, config.totalBatch, opt);
            if (ls) tied = tieBlocks(*ls, net, rep);
        }
        if (!tied) return Error{"initial tree: repeated blocks: " + tied.error().message};
        start = std::move(tied).value();
    }
    for (const std::string& path : config.pinned) {
        const int id = start.nodeAtPath(path);
        if (id < 0) return Error{"pin: no node at path " + path + " in the initial tree"};
        auto p = edit::setPinned(start, id, true);
        if (!p) return Error{"pin " + path + ": " + p.error().message};
        start = std::move(p).value();
    }
    return start;
}

// The Set portfolio's candidate trees (a deque: chain specs point into it while more
// candidates are offered). offer() keeps a tree that is valid, inside the mode's space and
// new.
struct CandidatePool {
    const Network& net;
    const SearchConfig& config;
    const SpaceRule& rule;
    const EvalOptions& opt;
    EvalContext& setup;
    Shared& shared;
    const BlockRepetition& rep;
    std::deque<Candidate> trees;

    // known: t's evaluation at the run's batch and options, if the caller has it.
    void offer(std::string name, RATree t, const Evaluation* known = nullptr) {
        if (t.empty() || validateStructure(t, net, config.totalBatch)) return;
        if (rep.active()) {
            auto tied = tieBlocks(t, net, rep);
            if (!tied) return;
            if (!(*tied == t)) known = nullptr; // tying changed it: cost it anew
            t = std::move(tied).value();
        }
        if (rule.check(t)) return;
        for (const Candidate& c : trees)
            if (c.tree == t) return;
        Evaluation e = known ? *known : evaluate(setup, t, config.totalBatch, opt);
        if (!e.valid) return;
        shared.offerBest(e, t);
        trees.push_back({std::move(name), std::move(t), std::move(e)});
    }
};

// The portfolio's candidates besides the start: the seed trees, or the baselines' trees
// built here (docs/search.md): the layer-sequential start (the start itself unless one
// was given), the greedy layer pipeline and dp-lp, each by its share of a time budget and
// skipped when that has passed. They are built in the start's context, whose memos
// already cover the layer-sequential tree.
void offerBaselines(CandidatePool& pool, const Hardware& hw, int threads,
                    const ProgressCallback& progress, std::stop_token stop, Clock::time_point t0) {
    const SearchConfig& config = pool.config;
    if (!config.seedTrees.empty()) {
        for (const auto& s : config.seedTrees)
            pool.offer(s.name, s.tree, s.eval ? &*s.eval : nullptr);
        return;
    }
    const int B = config.totalBatch;
    const Evaluation& startEval = pool.trees.front().eval;
    if (config.initialTree) {
        auto ls = layerSequentialStart(pool.setup, B, pool.opt);
        if (ls) pool.offer("ls", std::move(ls).value());
    }
    const Deadline lpBy = shareDeadline(config, t0, kLayerPipelineShare);
    if (!lpBy.passed()) {
        reportPhase(progress, "baselines: lp", t0, config.seconds, &startEval);
        auto lp = layerPipelineStart(pool.setup, B, pool.opt, lpBy);
        if (lp) pool.offer("lp", std::move(lp).value());
    }
    const Deadline dpBy = shareDeadline(config, t0, kBaselinesShare);
    if (!dpBy.passed() && !stop.stop_requested()) {
        reportPhase(progress, "baselines: dp-lp", t0, config.seconds, &startEval);
        auto dp =
            dpLayerPipeline(pool.net, hw, B, pool.opt, threads, nullptr, stop, dpBy, &pool.setup);
        if (dp) pool.offer("dp-lp", std::move(dp).value());
    }
}

// The run's totals over its chains (warm-up chains included) into res.
void addChainStats(SearchResult& res, std::vector<ChainResult> chains, bool timed, long long N,
                   int K, double searchSeconds) {
    long long iters = 0, proposals = 0, valid = 0, accepted = 0;
    double cpu = 0;
    EvalStats es;
    for (const auto& c : chains) {
        iters += c.iterations;
        proposals += c.proposals;
        valid += c.valid;
        accepted += c.accepted;
        cpu += c.cpuSeconds;
        es += c.eval;
    }
    res.iterationsRun = iters;
    res.iterations = timed ? std::max<long long>(1, iters / K) : N;
    res.chains = std::move(chains);
    auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    res.stats.evaluations = es.evaluations;
    res.stats.evaluationsPerSecond = ratio(double(es.evaluations), searchSeconds);
    res.stats.iterationsPerSecondPerCore = ratio(double(iters), cpu);
    res.stats.mapperHitRate = ratio(double(es.mapperHits), double(es.mapperCalls));
    res.stats.routeHitRate = ratio(double(es.routeHits), double(es.routeCalls));
    res.stats.periodsCosted = es.periodsCosted;
    res.stats.piecesPerNewPeriod = ratio(double(es.pieces), double(es.periodsCosted));
    res.stats.pieceLinksPerNewPeriod = ratio(double(es.pieceLinks), double(es.periodsCosted));
    res.stats.validRate = ratio(double(valid), double(proposals));
    res.stats.acceptRate = ratio(double(accepted), double(valid));
}

// The main chains' specs. A start that is already good is not a good basin for a fresh
// schedule (docs/search.md, ablation): with two or more chains, chain 0 anneals from the
// mode's start as the plain annealer does, and chains 1.. start from the pool's trees, best
// first (cycling). With one chain it starts from the best tree. Either way some chain starts
// from the best tree, so the result is never worse than any candidate.
std::vector<ChainSpec> mainChainSpecs(const std::deque<Candidate>& pool, bool portfolio,
                                      const Strategy& strategy, const SearchConfig& config,
                                      long long iterations, double seconds) {
    const int K = config.chains;
    const bool timed = config.seconds > 0;
    std::vector<const Candidate*> order;
    for (const Candidate& c : pool)
        order.push_back(&c);
    std::stable_sort(order.begin(), order.end(), [](const Candidate* a, const Candidate* b) {
        return a->eval.cost < b->eval.cost;
    });
    auto startOf = [&](int k) -> const Candidate* {
        if (!portfolio) return &pool.front();
        if (K == 1) return order.front();
        return k == 0 ? &pool.front() : order[size_t(k - 1) % order.size()];
    };
    std::vector<ChainSpec> specs;
    for (int k = 0; k < K; ++k) {
        const Candidate* c = startOf(k);
        ChainSpec s;
        s.strategy = &strategy;
        s.role = toString(config.mode);
        s.startName = c->name;
        s.seed = config.seed + std::uint64_t(k);
        s.start = &c->tree;
        s.startEval = &c->eval;
        s.iterations = timed ? 0 : iterations;
        s.seconds = seconds;
        specs.push_back(s);
    }
    return specs;
}

// Best over chains; strict < keeps the lowest chain index on ties.
int bestChainOf(const std::vector<ChainResult>& chains) {
    int bestK = 0;
    for (int k = 1; k < int(chains.size()); ++k)
        if (chains[size_t(k)].bestEval.cost < chains[size_t(bestK)].bestEval.cost) bestK = k;
    return bestK;
}

// The run's last progress callback: the best over all chains, the budget used up.
void reportFinal(const ProgressCallback& progress, const SearchResult& res, int bestK,
                 long long iters, bool timed, Shared& shared) {
    if (!progress) return;
    Progress p;
    p.total = timed ? iters : shared.total;
    p.iteration = iters;
    p.chain = bestK;
    p.chainIteration = res.chains[size_t(bestK)].iterations;
    p.chainTotal = timed ? p.chainIteration : res.chains[size_t(bestK)].iterations;
    p.temperature = 0;
    p.currentCost = p.bestCost = res.best.cost;
    p.energy = p.bestEnergy = res.best.energy.total();
    p.delay = p.bestDelay = res.best.delay;
    p.acceptanceRate = res.stats.acceptRate;
    p.elapsedSeconds = res.elapsedSeconds;
    p.fraction = 1;
    p.secondsLeft = timed ? 0 : -1;
    p.final = true;
    p.phase = "done";
    p.bestTree = std::make_shared<const RATree>(res.bestTree);
    std::lock_guard lock(shared.mutex);
    progress(p);
}

// The Set portfolio's warm-up chains (SearchConfig::warmupShare): the best tree inside each
// restricted space (LS, LP) starts one, with its share of the budget.
std::vector<ChainSpec> warmUpSpecs(const CandidatePool& pool, const Strategy* const spaces[2],
                                   const SearchConfig& config, long long N, int W,
                                   double coldSeconds, Clock::time_point t0) {
    const int K = config.chains;
    const bool timed = config.seconds > 0;
    std::vector<ChainSpec> warmSpecs;
    const Candidate* bestIn[2] = {nullptr, nullptr};
    for (const Candidate& c : pool.trees)
        for (int s = 0; s < 2; ++s)
            if (!spaces[s]->space().check(c.tree) &&
                (!bestIn[s] || c.eval.cost < bestIn[s]->eval.cost))
                bestIn[s] = &c;
    const long long warmIters =
        std::max<long long>(1, std::llround(config.warmupShare * double(N) * K / 2));
    // Two chains: side by side on two workers, one after the other on one.
    const double warmSeconds =
        std::max(0.0, config.warmupShare * config.seconds - secondsSince(t0)) /
        (W >= 2 ? 1.0 : 2.0);
    for (int s = 0; s < 2; ++s) {
        if (!bestIn[s]) continue;
        ChainSpec w;
        w.strategy = spaces[s];
        w.role = s == 0 ? "warmup-ls" : "warmup-lp";
        w.startName = bestIn[s]->name;
        w.seed = config.seed + std::uint64_t(K) + std::uint64_t(s);
        w.start = &bestIn[s]->tree;
        w.startEval = &bestIn[s]->eval;
        w.iterations = timed ? 0 : warmIters;
        w.seconds = warmSeconds;
        w.coldSeconds = coldSeconds;
        warmSpecs.push_back(w);
    }
    return warmSpecs;
}

} // namespace

Result<SearchResult> runSearch(const Network& net, const Hardware& hw, const SearchConfig& config,
                               const ProgressCallback& progress, std::stop_token stop) {
    const auto t0 = Clock::now();
    if (auto why = checkConfig(config)) return Error{"search: " + *why};
    const bool timed = config.seconds > 0;
    long long N = 0;
    // Repeated blocks: the search changes one block, so its budget is that of the layers it
    // changes (those around the blocks and the first block's).
    const BlockRepetition rep = config.repeatBlocks ? findRepetition(net) : BlockRepetition{};
    if (!timed) {
        auto n = iterationBudget(config, size_t(rep.searchedLayers(int(net.layers.size()))));
        if (!n) return Error{"search: " + n.error().message};
        N = *n;
    }
    const EvalOptions opt = evalOptionsOf(config);

    if (config.mode == SearchMode::DpLp || config.mode == SearchMode::Chiplet)
        return runConstruction(net, hw, config, opt, progress, stop, t0);

    const auto strategy = makeStrategy(config.mode);

    EvalContext setup(net, hw);
    reportPhase(progress, "start tree", t0, config.seconds);
    auto started = startTree(setup, net, *strategy, config, opt,
                             shareDeadline(config, t0, kBaselinesShare), rep);
    if (!started) return started.error();
    const RATree start = std::move(started).value();
    const SpaceRule rule = strategy->space();
    if (auto why = rule.check(start))
        return Error{std::string("initial tree is outside the ") + toString(config.mode) +
                     " space: " + why->message};
    const Evaluation startEval = evaluate(setup, start, config.totalBatch, opt);
    if (!startEval.valid) return Error{"initial tree is invalid: " + startEval.reason};
    // What a fresh context's first evaluation costs, about (time budget: ChainSpec).
    const double coldSeconds = secondsSince(t0);

    const auto deps = net.transitiveDeps();
    const int K = config.chains;
    const int W = std::min(config.threads, std::max(K, 2));
    const Clock::time_point end = shareDeadline(config, t0, 1.0).at;
    RunInputs in{net, hw, config, deps, opt, stop, Clock::time_point::max(), rep};
    in.deadline = chainsDeadline(in, t0, setup, start, rule);

    Shared shared;
    shared.callback = &progress;
    shared.start = t0;
    shared.intervalNs = std::llround(std::max(0.0, config.progressInterval) * 1e9);
    shared.seconds = timed ? config.seconds : 0;
    shared.offerBest(startEval, start);

    // The Set portfolio (docs/search.md): the baselines' trees and short LS / LP warm-up
    // chains feed the main chains' starts, so the result is never worse than any of them.
    const bool portfolio = (config.mode == SearchMode::Set || config.mode == SearchMode::Genetic) &&
                           config.portfolio && !hasPins(start);
    CandidatePool pool{net, config, rule, opt, setup, shared, rep, {}};
    pool.trees.push_back({config.initialTree ? "given" : "start", start, startEval});
    if (portfolio) offerBaselines(pool, hw, W, progress, stop, t0);
    std::vector<ChainSpec> warmSpecs;
    std::vector<ChainResult> warm;
    const auto lsStrategy = makeStrategy(SearchMode::LS), lpStrategy = makeStrategy(SearchMode::LP);
    bool warmedUp = false;
    if (portfolio && config.seedTrees.empty() && config.warmupShare > 0 && !stop.stop_requested()) {
        const Strategy* spaces[2] = {lsStrategy.get(), lpStrategy.get()};
        warmSpecs = warmUpSpecs(pool, spaces, config, N, W, coldSeconds, t0);
        warmedUp = !warmSpecs.empty();
    }

    const long long mainIters =
        warmedUp ? std::max<long long>(1, N - std::llround(config.warmupShare * double(N))) : N;
    shared.total = mainIters * K;
    for (const ChainSpec& w : warmSpecs)
        shared.total += w.iterations;

    const auto searchStart = Clock::now();
    if (!warmSpecs.empty()) {
        shared.phase = "warm-up";
        warm = runChains(warmSpecs, K, W, in, shared);
        for (const ChainResult& c : warm)
            pool.offer(c.role, c.best);
    }

    // Main chains (mainChainSpecs says where each starts).
    const int waves = (K + W - 1) / W;
    const double mainSeconds =
        timed ? std::max(0.0, std::chrono::duration<double>(in.deadline - Clock::now()).count()) /
                    waves
              : 0;
    std::vector<ChainSpec> specs =
        mainChainSpecs(pool.trees, portfolio, *strategy, config, mainIters, mainSeconds);
    // Chain 0 continues in the context that costed the starts: its memos are warm.
    if (timed) specs.front().context = &setup;
    // The others' contexts outlive them (the best one's: runChains), for the partition
    // choice on the best chain's tree.
    std::deque<std::optional<EvalContext>> chainContexts(specs.size());
    for (size_t i = 0; i < specs.size(); ++i) {
        specs[i].coldSeconds = coldSeconds;
        if (!specs[i].context) specs[i].keep = &chainContexts[i];
    }
    shared.phase = config.mode == SearchMode::Genetic ? "genetic" : "annealing";
    std::vector<ChainResult> chains = runChains(specs, 0, std::min(config.threads, K), in, shared);
    for (ChainResult& c : warm)
        chains.push_back(std::move(c));
    const double searchSeconds = secondsSince(searchStart);

    SearchResult res;
    res.config = config;
    res.config.initialTree = start;
    res.seed = config.seed;
    res.initialTree = start;
    res.initialEval = startEval;
    res.stopped = stop.stop_requested();
    res.repetition = rep;
    const int bestK = bestChainOf(chains);
    res.bestChain = bestK;
    res.bestTree = chains[size_t(bestK)].best;
    res.best = chains[size_t(bestK)].bestEval;

    addChainStats(res, std::move(chains), timed, N, K, searchSeconds);
    res.bestDetail = res.chains[size_t(bestK)].bestDetail;
    // The choice costs the best tree's neighbours in the context of the chain that found it
    // (the same figures in any context; its memos hold that chain's trees).
    EvalContext& bestContext =
        size_t(bestK) < chainContexts.size() && chainContexts[size_t(bestK)].has_value()
            ? *chainContexts[size_t(bestK)]
            : setup;
    // Its second thread costs in the start's context, or in a fresh one where the best
    // chain's is the start's.
    std::optional<EvalContext> spare;
    EvalContext* helper = nullptr;
    if (choiceThreads(config) > 1 && config.choosePartitions && res.best.valid)
        helper = &bestContext != &setup ? &setup : &spare.emplace(net, hw);
    choosePartitionsOf(res, bestContext, helper, net, config, opt, rep, end, stop, progress, t0);
    const long long iters = res.iterationsRun;
    res.elapsedSeconds = secondsSince(t0);

    reportFinal(progress, res, bestK, iters, timed, shared);
    return res;
}

} // namespace tilescope
