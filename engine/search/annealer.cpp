// The chain loop shared by every strategy (SPEC §4) and runSearch: K chains with seeds
// seed..seed+K-1, each with its own RNG and EvalContext, run on up to T worker threads.
// A chain's trajectory depends only on its seed, so the result does not depend on T.
#include "search/schedule.h"
#include "search/strategy.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <thread>

#include <time.h>

namespace tilescope {

const char* toString(SearchMode m) {
    switch (m) {
    case SearchMode::Set: return "set";
    case SearchMode::LS: return "ls";
    case SearchMode::LP: return "lp";
    case SearchMode::Random: return "random";
    }
    return "?";
}

bool parseSearchMode(const std::string& s, SearchMode& out) {
    for (SearchMode m : {SearchMode::Set, SearchMode::LS, SearchMode::LP, SearchMode::Random})
        if (s == toString(m)) {
            out = m;
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
    return makeStrategy(mode)->initialTree(ctx, totalBatch, opt);
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
    std::atomic<long long> nextReportNs{0};
    std::mutex mutex; // serialises callbacks and guards the display best
    double bestCost = 0;
    PicoJoules bestEnergy = 0;
    Cycles bestDelay = 0;
    bool haveBest = false;

    void offerBest(const Evaluation& e) {
        std::lock_guard lock(mutex);
        if (!haveBest || e.cost < bestCost) {
            haveBest = true;
            bestCost = e.cost;
            bestEnergy = e.energy.total();
            bestDelay = e.delay;
        }
    }
};

// Acceptance over the last kWindow valid candidates: a plot of it shows the schedule
// cooling, which an all-run average hides.
class AcceptanceWindow {
public:
    void push(bool accepted) {
        if (m_n == kWindow) m_sum -= m_ring[m_i];
        else ++m_n;
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

struct ChainInputs {
    const Network& net;
    const Hardware& hw;
    const SearchConfig& cfg;
    const Strategy& strategy;
    const OperatorContext& ops;
    const EvalOptions& opt;
    const RATree& start;
    const Evaluation& startEval;
    long long iterations;
    std::stop_token stop;
};

// Annealing leaves redundant levels behind (a T cut of sub-batch 1 nested in another
// costs the same as its children in place). Dissolve every cut whose removal keeps the
// tree valid, inside the space and no more costly, so the reported tree is readable.
// Deterministic: it depends only on the chain's best tree.
void simplify(RATree& best, Evaluation& bestEval, EvalContext& ctx, const ChainInputs& in) {
    int budget = 4 * best.size(); // evaluations; each success removes a cut
    for (bool changed = true; changed && budget > 0;) {
        changed = false;
        // Deepest-last pre-order ids first: inner redundant levels go before outer ones.
        for (int id = best.size() - 1; id > 0 && budget > 0; --id) {
            if (!best.node(id).isCut() || best.frozen(id)) continue;
            auto d = edit::dissolve(best, in.net, id);
            if (!d || in.ops.rule.check(*d)) continue;
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

ChainResult runChain(int k, const ChainInputs& in, Shared& shared) {
    ChainResult r;
    r.chain = k;
    r.seed = in.cfg.seed + std::uint64_t(k);
    Rng rng(r.seed);
    const double cpu0 = threadCpuSeconds();
    EvalContext ctx(in.net, in.hw);

    RATree cur = in.start;
    Evaluation curEval = in.startEval;
    r.best = cur;
    r.bestEval = curEval;
    AcceptanceWindow window;
    const long long N = in.iterations;
    // SPEC §4: the last 10% continues from the best tree found.
    const long long backToBest = in.strategy.returnsToBest() ? N - N / 10 : N + 1;

    for (long long n = 0; n < N; ++n) {
        if (in.stop.stop_requested()) break;
        if (n == backToBest) {
            cur = r.best;
            curEval = r.bestEval;
        }
        const double temp = sa::temperature(in.cfg.t0, in.cfg.alpha, double(n), double(N));
        ++r.iterations;
        shared.done.fetch_add(1, std::memory_order_relaxed);

        if (auto cand = proposeCandidate(cur, in.ops, rng)) {
            ++r.proposals;
            Evaluation e = evaluate(ctx, *cand, in.cfg.totalBatch, in.opt);
            if (e.valid) {
                ++r.valid;
                const bool improves = e.cost < r.bestEval.cost;
                const bool accepted = in.strategy.accept(curEval.cost, e.cost, temp, rng);
                window.push(accepted);
                if (improves) {
                    ++r.improvements;
                    r.best = *cand;
                    r.bestEval = e;
                    shared.offerBest(e);
                }
                if (accepted) {
                    ++r.accepted;
                    cur = std::move(*cand);
                    curEval = std::move(e);
                }
            }
        }

        if (*shared.callback) {
            const long long now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                      Clock::now() - shared.start).count();
            long long next = shared.nextReportNs.load(std::memory_order_relaxed);
            if (now >= next && shared.nextReportNs.compare_exchange_strong(next, now + shared.intervalNs)) {
                Progress p;
                p.total = shared.total;
                p.iteration = shared.done.load(std::memory_order_relaxed);
                p.chain = k;
                p.chainIteration = n + 1;
                p.chainTotal = N;
                p.temperature = temp;
                p.currentCost = curEval.cost;
                p.energy = curEval.energy.total();
                p.delay = curEval.delay;
                p.acceptanceRate = window.rate();
                p.elapsedSeconds = double(now) * 1e-9;
                std::lock_guard lock(shared.mutex);
                p.bestCost = shared.bestCost;
                p.bestEnergy = shared.bestEnergy;
                p.bestDelay = shared.bestDelay;
                (*shared.callback)(p);
            }
        }
    }
    if (!in.stop.stop_requested()) simplify(r.best, r.bestEval, ctx, in);
    r.eval = ctx.stats();
    r.cpuSeconds = threadCpuSeconds() - cpu0;
    return r;
}

std::optional<std::string> checkConfig(const SearchConfig& c) {
    if (c.chains < 1) return "chains must be at least 1";
    if (c.threads < 1) return "threads must be at least 1";
    if (c.totalBatch < 1) return "batch must be at least 1";
    if (!(c.beta > 0) && c.iterations <= 0) return "beta must be positive";
    if (c.iterations < 0) return "iterations must not be negative";
    if (!(c.t0 >= 0) || !std::isfinite(c.t0)) return "t0 must be a non-negative number";
    if (!(c.alpha > -1) || !std::isfinite(c.alpha)) return "alpha must be greater than -1";
    if (!(c.objective.n >= 0) || !(c.objective.m >= 0)) return "objective exponents must be non-negative";
    return std::nullopt;
}

} // namespace

Result<SearchResult> runSearch(const Network& net, const Hardware& hw, const SearchConfig& config,
                               const ProgressCallback& progress, std::stop_token stop) {
    const auto t0 = Clock::now();
    if (auto why = checkConfig(config)) return Error{"search: " + *why};
    const auto strategy = makeStrategy(config.mode);
    EvalOptions opt;
    opt.objective = config.objective;
    opt.minUtilisation = config.minUtilisation;

    // The start: given (a continued run) or the strategy's own; then the pins.
    RATree start;
    EvalContext setup(net, hw);
    if (config.initialTree) {
        start = *config.initialTree;
        if (start.empty()) return Error{"initial tree: the tree is empty"};
        if (auto e = validateStructure(start, net, config.totalBatch))
            return Error{"initial tree: " + *e};
    } else {
        auto s = strategy->initialTree(setup, config.totalBatch, opt);
        if (!s) return Error{"initial tree: " + s.error().message};
        start = std::move(s).value();
    }
    for (const std::string& path : config.pinned) {
        const int id = start.nodeAtPath(path);
        if (id < 0) return Error{"pin: no node at path " + path + " in the initial tree"};
        auto p = edit::setPinned(start, id, true);
        if (!p) return Error{"pin " + path + ": " + p.error().message};
        start = std::move(p).value();
    }
    const SpaceRule rule = strategy->space();
    if (auto why = rule.check(start))
        return Error{std::string("initial tree is outside the ") + toString(config.mode) +
                     " space: " + *why};
    const Evaluation startEval = evaluate(setup, start, config.totalBatch, opt);
    if (!startEval.valid) return Error{"initial tree is invalid: " + startEval.reason};

    const long long N = config.iterations > 0
                            ? config.iterations
                            : std::max<long long>(1, std::llround(config.beta * double(net.layers.size())));
    const auto deps = net.transitiveDeps();
    const OperatorContext ops{net, deps, rule};

    Shared shared;
    shared.callback = &progress;
    shared.start = t0;
    shared.intervalNs = std::llround(std::max(0.0, config.progressInterval) * 1e9);
    shared.total = N * config.chains;
    shared.offerBest(startEval);

    const ChainInputs in{net, hw, config, *strategy, ops, opt, start, startEval, N, stop};
    std::vector<ChainResult> chains(size_t(config.chains));
    const int workers = std::min(config.threads, config.chains);
    const auto searchStart = Clock::now();
    if (workers == 1) {
        for (int k = 0; k < config.chains; ++k) chains[size_t(k)] = runChain(k, in, shared);
    } else {
        // Chains are handed out in index order; each writes only its own slot.
        std::atomic<int> nextChain{0};
        std::vector<std::jthread> pool;
        for (int w = 0; w < workers; ++w)
            pool.emplace_back([&] {
                for (int k; (k = nextChain.fetch_add(1)) < config.chains;)
                    chains[size_t(k)] = runChain(k, in, shared);
            });
        pool.clear(); // joins
    }
    const double searchSeconds = secondsSince(searchStart);

    SearchResult res;
    res.config = config;
    res.config.initialTree = start;
    res.seed = config.seed;
    res.iterations = N;
    res.initialTree = start;
    res.initialEval = startEval;
    res.stopped = stop.stop_requested();
    // Best over chains; strict < keeps the lowest chain index on ties.
    int bestK = 0;
    for (int k = 1; k < config.chains; ++k)
        if (chains[size_t(k)].bestEval.cost < chains[size_t(bestK)].bestEval.cost) bestK = k;
    res.bestChain = bestK;
    res.bestTree = chains[size_t(bestK)].best;
    res.best = chains[size_t(bestK)].bestEval;

    long long iters = 0, proposals = 0, valid = 0, accepted = 0;
    double cpu = 0;
    EvalStats es;
    for (const auto& c : chains) {
        iters += c.iterations;
        proposals += c.proposals;
        valid += c.valid;
        accepted += c.accepted;
        cpu += c.cpuSeconds;
        es.evaluations += c.eval.evaluations;
        es.mapperCalls += c.eval.mapperCalls;
        es.mapperHits += c.eval.mapperHits;
        es.routeCalls += c.eval.routeCalls;
        es.routeHits += c.eval.routeHits;
    }
    res.chains = std::move(chains);
    auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    res.stats.evaluations = es.evaluations;
    res.stats.evaluationsPerSecond = ratio(double(es.evaluations), searchSeconds);
    res.stats.iterationsPerSecondPerCore = ratio(double(iters), cpu);
    res.stats.mapperHitRate = ratio(double(es.mapperHits), double(es.mapperCalls));
    res.stats.routeHitRate = ratio(double(es.routeHits), double(es.routeCalls));
    res.stats.validRate = ratio(double(valid), double(proposals));
    res.stats.acceptRate = ratio(double(accepted), double(valid));
    res.elapsedSeconds = secondsSince(t0);

    if (progress) {
        Progress p;
        p.total = shared.total;
        p.iteration = iters;
        p.chain = bestK;
        p.chainIteration = res.chains[size_t(bestK)].iterations;
        p.chainTotal = N;
        p.temperature = 0;
        p.currentCost = p.bestCost = res.best.cost;
        p.energy = p.bestEnergy = res.best.energy.total();
        p.delay = p.bestDelay = res.best.delay;
        p.acceptanceRate = res.stats.acceptRate;
        p.elapsedSeconds = res.elapsedSeconds;
        p.final = true;
        std::lock_guard lock(shared.mutex);
        progress(p);
    }
    return res;
}

} // namespace tilescope
