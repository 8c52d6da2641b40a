// The dp-lp baseline (docs/search.md): a Tangram-style layer pipeline. The leaves of the
// layer-sequential start are split into consecutive segments by dynamic programming over
// segment boundaries; a segment of two or more layers becomes an S cut (tiles allocated
// by the evaluator's min-max rule, i.e. in proportion to work) with a sub-batch count from
// a small set, a single layer stays a leaf, and the segments run one after another under
// the root T cut.
#include "search/strategy.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <thread>

namespace tilescope {

namespace {

// Longest segment tried: O(L x kMaxSegment) segment evaluations instead of O(L^2) keeps
// the 12x12 preset within a second or two; the stages of longer pipelines get too few
// tiles each to pay on the samples.
constexpr int kMaxSegment = 24;
// Sub-batch counts tried per segment: the largest divisors of its batch (one sample per
// pipeline step, two, four ...). Fewer, larger steps rarely help a pipeline's fill.
constexpr int kSubBatchChoices = 3;
// Invalid lengths in a row that end the lengths tried from one position (validity is
// not monotone in the length: allocations round differently).
constexpr int kInvalidRun = 3;
// Linearisation rounds (each re-weighs energy and delay around the last solution).
constexpr int kRounds = 4;

// A segment's effect on the whole tree: the tree with this one S cut minus the
// layer-sequential tree. The DP adds these up, which assumes segments do not interact;
// the assembled tree is evaluated again as a whole, so the result is exact either way.
struct Option {
    int subBatch = 0;
    double dEnergy = 0, dDelay = 0;
};

struct Segmentation {
    struct Segment {
        int first = 0, count = 1, subBatch = 1;
    };
    std::vector<Segment> segments; // count >= 2 only, left to right
    bool operator==(const Segmentation& o) const {
        if (segments.size() != o.segments.size()) return false;
        for (size_t i = 0; i < segments.size(); ++i)
            if (segments[i].first != o.segments[i].first ||
                segments[i].count != o.segments[i].count ||
                segments[i].subBatch != o.segments[i].subBatch)
                return false;
        return true;
    }
};

// Right to left, so the positions of the segments still to wrap do not move.
Result<RATree> assemble(const RATree& base, const Network& net, const Segmentation& s) {
    RATree t = base;
    for (auto it = s.segments.rbegin(); it != s.segments.rend(); ++it) {
        auto w = edit::wrap(t, net, t.root, it->first, it->count, NodeType::S, it->subBatch);
        if (!w) return w;
        t = std::move(w).value();
    }
    return t;
}

// The segment table's shape: segments start and end on multiples of `grain` layers (1:
// anywhere), with the `subBatches` largest sub-batch counts of the segment's batch.
struct TablePlan {
    int grain = 1;
    int subBatches = 1;
};

// Segment evaluations a plan asks for at most (invalid lengths cut rows short).
long long tableSize(int L, int maxLen, const TablePlan& p) {
    long long n = 0;
    for (int i = 0; i < L; i += p.grain)
        for (int len = std::max(2, p.grain); len <= std::min(maxLen, L - i); len += p.grain)
            ++n;
    return n * p.subBatches;
}

// The finest plan within `evaluations`: fewer sub-batch counts first (one sample per
// pipeline step, the largest count, stays), then a coarser grid of segment bounds.
TablePlan affordablePlan(int L, int maxLen, int subBatches, double evaluations) {
    TablePlan p{1, subBatches};
    while (double(tableSize(L, maxLen, p)) > evaluations) {
        if (p.subBatches > 1)
            --p.subBatches;
        else if (p.grain < maxLen)
            ++p.grain;
        else
            break;
    }
    return p;
}

double secondsSince(Deadline::Clock::time_point t) {
    return std::chrono::duration<double>(Deadline::Clock::now() - t).count();
}

// How many segment evaluations fit before the deadline: three quarters of the time left
// (the rounds get the rest) over the cost of one segment, timed on a probe segment of
// middle length. A worker in a fresh context first pays about what the start cost
// (`coldSeconds`: its memos are empty), once, side by side with the others.
double affordableEvaluations(EvalContext& ctx, const RATree& base, int totalBatch,
                             const EvalOptions& opt, int workers, int maxLen, int subBatch,
                             double coldSeconds, const Deadline& deadline) {
    const auto t = Deadline::Clock::now();
    const int len = std::max(2, std::min(maxLen, (2 + maxLen) / 2));
    if (auto w = edit::wrap(base, ctx.network(), base.root, 0, len, NodeType::S, subBatch))
        evaluate(ctx, *w, totalBatch, opt);
    const double each = std::max(1e-6, secondsSince(t));
    double left = 0.75 * deadline.secondsLeft();
    if (workers > 1) left -= coldSeconds;
    return std::max(0.0, left) / each * workers;
}

// options[i][len]: the valid options for the segment of `len` layers from position i, on
// `workers` threads, each in its own context; `evaluationsOut` receives how many were costed.
using SegmentTable = std::vector<std::vector<std::vector<Option>>>;
SegmentTable segmentTable(EvalContext& ctx, const RATree& base, const Evaluation& baseEval,
                          int totalBatch, const EvalOptions& opt, const std::vector<int>& sbs,
                          int maxLen, int g, int workers, std::stop_token stop,
                          const Deadline& deadline, long long& evaluationsOut) {
    const Network& net = ctx.network();
    const Hardware& hw = ctx.hardware();
    const int L = int(base.node(base.root).children.size());
    SegmentTable options(size_t(L), std::vector<std::vector<Option>>(size_t(maxLen) + 1));
    std::atomic<int> nextPos{0};
    std::atomic<long long> evaluations{0};
    auto work = [&](EvalContext& local) {
        long long n = 0;
        for (int i;
             (i = g * nextPos.fetch_add(1)) < L && !stop.stop_requested() && !deadline.passed();) {
            auto& row = options[size_t(i)];
            int invalid = 0;
            for (int len = std::max(2, g);
                 len <= std::min(maxLen, L - i) && invalid < kInvalidRun && !deadline.passed();
                 len += g) {
                bool any = false;
                for (int sb : sbs) {
                    auto w = edit::wrap(base, net, base.root, i, len, NodeType::S, sb);
                    if (!w) continue;
                    ++n;
                    const Evaluation e = evaluate(local, *w, totalBatch, opt);
                    if (!e.valid) continue;
                    any = true;
                    row[size_t(len)].push_back(
                        {sb, e.energy.total() - baseEval.energy.total(), e.delay - baseEval.delay});
                }
                invalid = any ? 0 : invalid + 1;
            }
        }
        evaluations += n;
    };
    // The calling thread works in its own context, which has costed the start already; the
    // memos are exact, so which context evaluates a segment never changes its figures.
    {
        std::vector<std::jthread> pool;
        for (int w = 1; w < workers; ++w)
            pool.emplace_back([&] {
                EvalContext local(net, hw);
                work(local);
            });
        work(ctx);
    }
    evaluationsOut = evaluations.load();
    return options;
}

} // namespace

Result<RATree> dpLayerPipeline(const Network& net, const Hardware& hw, int totalBatch,
                               const EvalOptions& opt, int threads, DpLpStats* stats,
                               std::stop_token stop, Deadline deadline, EvalContext* context) {
    DpLpStats st;
    const auto t0 = Deadline::Clock::now();
    std::optional<EvalContext> own;
    EvalContext& ctx = context ? *context : own.emplace(net, hw);
    auto start = layerSequentialStart(ctx, totalBatch, opt);
    if (!start) return start;
    const RATree base = std::move(start).value();
    const Evaluation baseEval = evaluate(ctx, base, totalBatch, opt);
    const RANode& root = base.node(base.root);
    const int L = int(root.children.size());
    const int b = root.batch / root.subBatch;
    std::vector<int> sbs = divisorsOf(b);
    std::reverse(sbs.begin(), sbs.end());
    if (int(sbs.size()) > kSubBatchChoices) sbs.resize(size_t(kSubBatchChoices));
    const int maxLen = std::min({L, hw.tiles(), kMaxSegment});
    // Under a deadline with the caller's warm context, one worker: another would first pay
    // for a fresh context's memos, about what the start cost, which the deadline may not cover.
    const int workers = deadline.set() && context ? 1 : std::max(1, std::min(threads, L));
    TablePlan plan{1, int(sbs.size())};
    if (deadline.set())
        plan = affordablePlan(L, maxLen, int(sbs.size()),
                              affordableEvaluations(ctx, base, totalBatch, opt, workers, maxLen,
                                                    sbs.front(), secondsSince(t0), deadline));
    sbs.resize(size_t(plan.subBatches));
    st.grain = plan.grain;
    st.subBatches = plan.subBatches;
    long long evaluations = 0;

    const SegmentTable options = segmentTable(ctx, base, baseEval, totalBatch, opt, sbs, maxLen,
                                              plan.grain, workers, stop, deadline, evaluations);
    st.evaluations = evaluations + 1;

    // The objective E^n D^m is not a sum over segments; its logarithm's first-order change
    // n dE / E + m dD / D is. Each round minimises that sum around the previous round's
    // predicted (E, D), starting from the layer-sequential tree, and every round's tree is
    // evaluated as a whole: the best valid one by the configured objective wins.
    const double E0 = baseEval.energy.total(), D0 = baseEval.delay;
    double curE = E0, curD = D0;
    RATree best = base;
    Evaluation bestEval = baseEval;
    std::vector<Segmentation> tried;
    for (int round = 0; round < kRounds && !stop.stop_requested(); ++round) {
        if (round > 0 && deadline.passed()) break; // one round assembles the table at least
        ++st.rounds;
        const double wE = curE > 0 ? opt.objective.n / curE : 0.0;
        const double wD = curD > 0 ? opt.objective.m / curD : 0.0;
        std::vector<double> f(size_t(L) + 1, 0.0);
        std::vector<Segmentation::Segment> choice(size_t(L) + 1);
        for (int j = 1; j <= L; ++j) {
            f[size_t(j)] = f[size_t(j) - 1]; // layer j-1 stays a leaf
            choice[size_t(j)] = {j - 1, 1, 1};
            for (int len = 2; len <= std::min(j, maxLen); ++len) {
                const int i = j - len;
                for (const Option& o : options[size_t(i)][size_t(len)]) {
                    const double v = f[size_t(i)] + wE * o.dEnergy + wD * o.dDelay;
                    if (v < f[size_t(j)]) {
                        f[size_t(j)] = v;
                        choice[size_t(j)] = {i, len, o.subBatch};
                    }
                }
            }
        }
        Segmentation s;
        double predE = E0, predD = D0;
        for (int j = L; j > 0;) {
            const auto c = choice[size_t(j)];
            if (c.count >= 2) {
                s.segments.push_back(c);
                for (const Option& o : options[size_t(c.first)][size_t(c.count)])
                    if (o.subBatch == c.subBatch) {
                        predE += o.dEnergy;
                        predD += o.dDelay;
                    }
            }
            j = c.first;
        }
        std::reverse(s.segments.begin(), s.segments.end());
        if (std::find(tried.begin(), tried.end(), s) != tried.end()) break; // a fixed point
        tried.push_back(s);
        auto t = assemble(base, net, s);
        if (t) {
            Evaluation e = evaluate(ctx, *t, totalBatch, opt);
            ++st.evaluations;
            if (!e.valid) {
                // Segments that interact (a buffer shared across a boundary): keep them
                // left to right while the tree stays valid.
                Segmentation kept;
                Evaluation keptEval = baseEval;
                for (const auto& seg : s.segments) {
                    if (deadline.passed()) break; // the segments kept so far
                    Segmentation trial = kept;
                    trial.segments.push_back(seg);
                    auto tt = assemble(base, net, trial);
                    if (!tt) continue;
                    Evaluation te = evaluate(ctx, *tt, totalBatch, opt);
                    ++st.evaluations;
                    if (te.valid) {
                        kept = std::move(trial);
                        keptEval = std::move(te);
                    }
                }
                t = assemble(base, net, kept);
                e = keptEval;
            }
            if (t && e.valid && e.cost < bestEval.cost) {
                best = std::move(t).value();
                bestEval = e;
            }
        }
        curE = predE > 0 ? predE : E0;
        curD = predD > 0 ? predD : D0;
    }
    for (int c : best.node(best.root).children)
        if (best.node(c).type == NodeType::S) ++st.segments;
    if (stats) *stats = st;
    return best;
}

} // namespace tilescope
