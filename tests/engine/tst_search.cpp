// Search (docs/method.md §4): the annealing math against hand values, the six operators over long
// random walks on the ResNet-50 and transformer samples, reproducibility across thread
// counts, LS/LP restrictions, pins, the stop token and continuing from a given tree.
#include "eval/evaluator.h"
#include "model/model_loader.h"
#include "netbuilder.h"
#include "search/chiplet.h"
#include "search/operators.h"
#include "search/schedule.h"
#include "search/search.h"
#include "search/strategy.h"

#include <QtTest>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <set>

using namespace tilescope;

namespace {

#define CHECK_OK(r) QVERIFY2((r).ok(), (r).ok() ? "" : (r).error().message.c_str())

const std::string kSamples = TILESCOPE_SAMPLES;

// Loaded once per process: each test may use them, none changes them.
const Network& sample(const std::string& name) {
    static std::map<std::string, std::unique_ptr<Network>> cache;
    auto& slot = cache[name];
    if (!slot) {
        auto r = loadModel(kSamples + "/models/" + name + ".onnx");
        if (!r) qFatal("cannot load sample %s: %s", name.c_str(), r.error().message.c_str());
        slot = std::make_unique<Network>(std::move(r).value());
    }
    return *slot;
}

// A search of `iterations` per chain at `batch`, from `seed`; the rest at the defaults.
SearchConfig runConfig(std::uint64_t seed, int batch, long long iterations) {
    SearchConfig c;
    c.seed = seed;
    c.totalBatch = batch;
    c.iterations = iterations;
    return c;
}

// The Set portfolio's two chains under E^2 D (edge's objective) at batch 8.
SearchConfig portfolioConfig(std::uint64_t seed, long long iterations, int threads) {
    SearchConfig c = runConfig(seed, 8, iterations);
    c.chains = 2;
    c.threads = threads;
    c.objective = {2, 1};
    return c;
}

Hardware waferPreset() {
    Hardware hw;
    presetHardware("wafer", hw);
    return hw;
}

// How long one evaluation of the layer-sequential tree takes in a fresh context, in ms (at
// least 1): the unit time-budget tests scale their budgets and bounds by.
qint64 freshEvaluationMs(const Network& net, const Hardware& hw, const EvalOptions& opt) {
    QElapsedTimer once;
    once.start();
    evaluate(net, hw, RATree::layerSequential(net, 8), 8, opt);
    return std::max<qint64>(1, once.elapsed());
}

Hardware edge() {
    Hardware hw;
    if (!presetHardware("edge", hw)) qFatal("no edge preset");
    return hw;
}

// Texts of every pinned subtree, in tree order: the search must leave them alone.
std::vector<std::string> pinnedSubtrees(const RATree& t, const Network& net) {
    std::vector<std::string> out;
    for (int id = 0; id < t.size(); ++id)
        if (t.node(id).pinned) out.push_back(subtreeToText(t, net, id));
    std::sort(out.begin(), out.end());
    return out;
}

// A starting point with some structure and two pins: a pinned S cut over root children
// [2, 5) (one sample per pipeline step) and a pinned depth-one leaf further right.
RATree pinnedStart(const Network& net, RATree t) {
    const RANode& root = t.node(t.root);
    auto w = edit::wrap(t, net, t.root, 2, 3, NodeType::S, root.batch / root.subBatch);
    if (!w) qFatal("wrap: %s", w.error().message.c_str());
    t = *w;
    const int cut = t.node(t.root).children[2];
    t = *edit::setPinned(t, cut, true);
    const int leaf = t.node(t.root).children[6];
    t = *edit::setPinned(t, leaf, true);
    return t;
}

std::vector<int> subBatches(const RATree& t) {
    std::vector<int> v;
    for (const auto& n : t.nodes)
        v.push_back(n.subBatch);
    return v;
}

} // namespace

class TestSearch : public QObject {
    Q_OBJECT

  private slots:
    // ----------------------------------------------------------------------------------
    // The annealing math.

    void temperature_data() {
        QTest::addColumn<double>("t0");
        QTest::addColumn<double>("alpha");
        QTest::addColumn<double>("n");
        QTest::addColumn<double>("total");
        QTest::addColumn<double>("expected");
        // T_n = T0 (1 - x) / (1 + alpha x), worked by hand.
        QTest::newRow("start") << 0.07 << 8.0 << 0.0 << 1000.0 << 0.07;
        QTest::newRow("quarter") << 0.07 << 8.0 << 250.0 << 1000.0 << 0.07 * 0.75 / 3.0; // 0.0175
        QTest::newRow("half") << 0.07 << 8.0 << 500.0 << 1000.0 << 0.007;                // 0.035/5
        QTest::newRow("90%") << 0.07 << 8.0 << 900.0 << 1000.0 << 0.07 * 0.1 / 8.2;
        QTest::newRow("end") << 0.07 << 8.0 << 1000.0 << 1000.0 << 0.0;
        QTest::newRow("linear when alpha=0") << 0.1 << 0.0 << 30.0 << 100.0 << 0.07;
        QTest::newRow("reference 0.1 schedule at x=0.5") << 0.1 << 8.0 << 1.0 << 2.0 << 0.01;
        QTest::newRow("empty run") << 0.07 << 8.0 << 0.0 << 0.0 << 0.0;
    }
    void temperature() {
        QFETCH(double, t0);
        QFETCH(double, alpha);
        QFETCH(double, n);
        QFETCH(double, total);
        QFETCH(double, expected);
        QVERIFY(std::abs(sa::temperature(t0, alpha, n, total) - expected) < 1e-12);
    }

    void temperatureFallsMonotonically() {
        double prev = 1e9;
        for (int n = 0; n <= 1000; ++n) {
            const double t = sa::temperature(0.07, 8, n, 1000);
            QVERIFY(t < prev || (t == 0 && prev == 0));
            prev = t;
        }
    }

    void acceptance_data() {
        QTest::addColumn<double>("current");
        QTest::addColumn<double>("candidate");
        QTest::addColumn<double>("temp");
        QTest::addColumn<double>("expected");
        // P = exp(-((c' - c) / c) / T) for c' > c, else 1; worked by hand.
        QTest::newRow("better") << 100.0 << 90.0 << 0.07 << 1.0;
        QTest::newRow("equal") << 100.0 << 100.0 << 0.07 << 1.0;
        QTest::newRow("7% worse at T=0.07") << 100.0 << 107.0 << 0.07 << std::exp(-1.0);
        QTest::newRow("1% worse at T=0.01") << 1e15 << 1.01e15 << 0.01 << std::exp(-1.0);
        QTest::newRow("10% worse at T=0.05") << 2e15 << 2.2e15 << 0.05 << std::exp(-2.0);
        QTest::newRow("doubling at T=0.07") << 1.0 << 2.0 << 0.07 << std::exp(-1.0 / 0.07);
        QTest::newRow("worse at T=0") << 100.0 << 101.0 << 0.0 << 0.0;
        QTest::newRow("better at T=0") << 100.0 << 99.0 << 0.0 << 1.0;
    }
    void acceptance() {
        QFETCH(double, current);
        QFETCH(double, candidate);
        QFETCH(double, temp);
        QFETCH(double, expected);
        QVERIFY(std::abs(sa::acceptanceProbability(current, candidate, temp) - expected) < 1e-12);
    }

    void metropolisDraw() {
        // P = e^-1 = 0.3679 for a 7% worse candidate at T = 0.07.
        QVERIFY(sa::metropolisAccept(100, 107, 0.07, 0.36));
        QVERIFY(!sa::metropolisAccept(100, 107, 0.07, 0.37));
        QVERIFY(sa::metropolisAccept(100, 99, 0.0, 0.999));
    }

    void divisors() {
        QCOMPARE(divisorsOf(12), (std::vector<int>{1, 2, 3, 4, 6, 12}));
        QCOMPARE(divisorsOf(16), (std::vector<int>{1, 2, 4, 8, 16}));
        QCOMPARE(divisorsOf(1), (std::vector<int>{1}));
        QCOMPARE(divisorsOf(49), (std::vector<int>{1, 7, 49}));
    }

    void rngHelpersAreUniformAndSeeded() {
        Rng a(42), b(42);
        std::vector<int> hist(6);
        for (int i = 0; i < 60000; ++i) {
            const int x = randBelow(a, 6);
            QCOMPARE(x, randBelow(b, 6));
            QVERIFY(x >= 0 && x < 6);
            ++hist[size_t(x)];
        }
        for (int h : hist)
            QVERIFY(h > 9400 && h < 10600); // 10000 +- ~6 sigma
        for (int i = 0; i < 1000; ++i) {
            const double u = randUnit(a);
            QVERIFY(u >= 0 && u < 1);
        }
    }

    // ----------------------------------------------------------------------------------
    // Operators: 10,000-step random walks keep trees valid and pins untouched.

    void operatorWalk_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("op");
        for (const char* m : {"resnet50", "transformer"})
            for (int op = 0; op < kOperatorCount; ++op)
                QTest::newRow(qPrintable(QString("%1 %2").arg(m, toString(Operator(op)))))
                    << QString(m) << op;
    }
    void operatorWalk() {
        QFETCH(QString, model);
        QFETCH(int, op);
        const Network& net = sample(model.toStdString());
        const auto deps = net.transitiveDeps();
        const OperatorContext ctx{net, deps, {}};
        const int batch = 8;
        RATree t = pinnedStart(net, RATree::layerSequential(net, batch));
        const auto pins = pinnedSubtrees(t, net);
        QCOMPARE(int(pins.size()), 2);
        Rng rng(1234 + std::uint64_t(op));
        const Operator tested = Operator(op);
        int applied = 0;
        for (int step = 0; step < 10000; ++step) {
            // Half the steps use the operator under test, half a random one, so the walk
            // keeps producing the structure every operator needs (cuts to dissolve, ...).
            const bool mine = randBelow(rng, 2) == 0;
            const Operator o = mine ? tested : Operator(randBelow(rng, kOperatorCount));
            auto r = applyOperator(t, o, ctx, rng);
            if (!r) continue;
            const RATree& n = *r;
            if (auto e = validateStructure(n, net, batch))
                QFAIL(qPrintable(QString("step %1 (%2): %3")
                                     .arg(step)
                                     .arg(toString(o))
                                     .arg(e->message.c_str())));
            if (pinnedSubtrees(n, net) != pins)
                QFAIL(qPrintable(
                    QString("step %1 (%2) changed a pinned subtree").arg(step).arg(toString(o))));
            if (o == tested) {
                ++applied;
                switch (o) {
                case Operator::SwapLeaves:
                    QVERIFY(test::adjacentTransposition(t.leavesInOrder(), n.leavesInOrder()));
                    QCOMPARE(n.size(), t.size());
                    break;
                case Operator::MoveLeaf:
                    QVERIFY(n.size() <= t.size()); // a cut left with one child dissolves
                    break;
                case Operator::Group:
                    QCOMPARE(n.size(), t.size() + 1);
                    QCOMPARE(n.leavesInOrder(), t.leavesInOrder());
                    break;
                case Operator::Dissolve:
                    QCOMPARE(n.size(), t.size() - 1);
                    QCOMPARE(n.leavesInOrder(), t.leavesInOrder());
                    break;
                case Operator::IncreaseSubBatch:
                case Operator::DecreaseSubBatch: {
                    QCOMPARE(n.size(), t.size());
                    const auto a = subBatches(t), b = subBatches(n);
                    int changed = 0;
                    for (size_t i = 0; i < a.size(); ++i)
                        if (a[i] != b[i]) {
                            ++changed;
                            QVERIFY(o == Operator::IncreaseSubBatch ? b[i] > a[i] : b[i] < a[i]);
                            QCOMPARE(n.node(int(i)).batch % b[i], 0);
                        }
                    QCOMPARE(changed, 1);
                    break;
                }
                }
            }
            t = std::move(r).value();
        }
        // About 5,000 steps tried the operator; a fair share must have applied (move and
        // dissolve need cuts near the leaf, which the other operators keep creating).
        QVERIFY2(applied > 250, qPrintable(QString("only %1 applications").arg(applied)));
    }

    void restrictedWalksStayInTheirSpace_data() {
        QTest::addColumn<int>("mode");
        QTest::addColumn<int>("type");
        QTest::newRow("LS: T cuts over layers") << int(SearchMode::LS) << int(NodeType::T);
        QTest::newRow("LP: S cuts over layers") << int(SearchMode::LP) << int(NodeType::S);
    }
    // The walk in each baseline's space (the rule its strategy gives, docs/search.md
    // "Modes and starting trees") builds depth-one cuts of its type over layers only.
    void restrictedWalksStayInTheirSpace() {
        QFETCH(int, mode);
        QFETCH(int, type);
        const Network& net = sample("resnet50");
        const auto deps = net.transitiveDeps();
        const SpaceRule rule = makeStrategy(SearchMode(mode))->space();
        const OperatorContext ctx{net, deps, rule};
        RATree t = RATree::layerSequential(net, 8);
        Rng rng(7);
        int depthOneCuts = 0, refused = 0;
        for (int step = 0; step < 5000; ++step) {
            auto c = proposeCandidate(t, ctx, rng);
            if (!c) continue;
            t = std::move(*c);
            for (int id : t.node(t.root).children)
                if (t.node(id).isCut()) {
                    QCOMPARE(int(t.node(id).type), type);
                    ++depthOneCuts;
                    for (int g : t.node(id).children)
                        QVERIFY2(!t.node(g).isCut(), t.pathOf(g).c_str());
                }
            // A cut of the space's type wrapped around a depth-one cut's first two
            // layers goes one level too deep: the rule refuses it, naming the node.
            for (int id : t.node(t.root).children)
                if (t.node(id).isCut() && t.node(id).children.size() >= 3) {
                    auto deeper = edit::wrap(t, net, id, 0, 2, NodeType(type), 1);
                    if (!deeper) continue;
                    auto why = rule.check(*deeper);
                    QVERIFY(why.has_value());
                    // The new cut lies at depth 2, which the space allows; its layers at 3.
                    QVERIFY2(why->message.find("is at depth 3") != std::string::npos,
                             why->message.c_str());
                    ++refused;
                    break;
                }
        }
        QVERIFY(depthOneCuts > 0); // the walk did build depth-one cuts
        QVERIFY(refused > 0);      // and the depth rule was put to the test
    }

    // ----------------------------------------------------------------------------------
    // The search.

    void initialTreeIsLayerSequential() {
        const Network& net = sample("resnet50");
        const Hardware hw = edge();
        auto t = defaultInitialTree(net, hw, SearchMode::Set, 8, Objective{});
        CHECK_OK(t);
        QCOMPARE(t->node(t->root).type, NodeType::T);
        QCOMPARE(int(t->node(t->root).children.size()), int(net.layers.size()));
        std::vector<int> order(net.layers.size());
        for (size_t i = 0; i < order.size(); ++i)
            order[i] = int(i);
        QCOMPARE(t->leavesInOrder(), order);
        EvalOptions opt;
        QVERIFY(evaluate(net, hw, *t, 8, opt).valid);
        // Halving: the root's sub-batch count is the first divisor whose slices fit unblocked
        // (the ones before are valid only with blocked leaves).
        const int sb = t->node(t->root).subBatch;
        QCOMPARE(evaluate(net, hw, *t, 8, opt).blockedLeaves, 0);
        for (int d : divisorsOf(8)) {
            if (d == sb) break;
            RATree smaller = *t;
            smaller.node(smaller.root).subBatch = d;
            smaller.propagateBatches();
            const Evaluation e = evaluate(net, hw, smaller, 8, opt);
            QVERIFY(!e.valid || e.blockedLeaves > 0);
        }
    }

    void initialTreeHalvesBatchUntilValid() {
        // A 2x2 test chip with a 64 KiB buffer cannot hold ResNet-50's layers at batch 16:
        // the start must raise the root's sub-batch count (or fail with a reason).
        const Network& net = sample("resnet50");
        Hardware hw = edge();
        hw.bufferBytes = 64 * 1024;
        EvalOptions opt;
        RATree full = RATree::layerSequential(net, 16);
        QVERIFY(!evaluate(net, hw, full, 16, opt).valid);
        auto t = defaultInitialTree(net, hw, SearchMode::Set, 16, Objective{});
        if (t) {
            QVERIFY(t->node(t->root).subBatch > 1);
            QVERIFY(evaluate(net, hw, *t, 16, opt).valid);
        } else {
            QVERIFY(t.error().message.find("layer-sequential") != std::string::npos);
        }
    }

    void lpStartIsAPipeline() {
        const Network& net = sample("resnet50");
        auto t = defaultInitialTree(net, edge(), SearchMode::LP, 8, Objective{});
        CHECK_OK(t);
        int sCuts = 0;
        for (int id : t->node(t->root).children) {
            if (t->node(id).isCut()) QCOMPARE(t->node(id).type, NodeType::S);
            sCuts += t->node(id).isCut();
        }
        QVERIFY(sCuts > 0);
        QVERIFY(!validateStructure(*t, net, 8));
    }

    void reproducibleAcrossThreadCounts() {
        const Network& net = sample("resnet50");
        const Hardware hw = edge();
        SearchConfig c = runConfig(2024, 8, 400);
        c.chains = 2;
        c.threads = 1;
        auto one = runSearch(net, hw, c);
        CHECK_OK(one);
        c.threads = 2;
        auto two = runSearch(net, hw, c);
        CHECK_OK(two);
        QVERIFY(one->bestTree == two->bestTree);
        QCOMPARE(one->best.cost, two->best.cost);
        QCOMPARE(one->bestChain, two->bestChain);
        for (int k = 0; k < 2; ++k) {
            QVERIFY(one->chains[size_t(k)].best == two->chains[size_t(k)].best);
            QCOMPARE(one->chains[size_t(k)].accepted, two->chains[size_t(k)].accepted);
            QCOMPARE(one->chains[size_t(k)].seed, c.seed + std::uint64_t(k));
        }
        // The chains are independent: different seeds walk different paths.
        QVERIFY(one->chains[0].accepted != one->chains[1].accepted ||
                !(one->chains[0].best == one->chains[1].best));
        // A different seed is a different run.
        c.seed = 2025;
        auto other = runSearch(net, hw, c);
        CHECK_OK(other);
        QVERIFY(other->chains[0].accepted != one->chains[0].accepted ||
                !(other->chains[0].best == one->chains[0].best));
    }

    void annealingBeatsTheStart_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<double>("n");
        QTest::addColumn<double>("m");
        QTest::newRow("resnet50 EDP") << "resnet50" << 1.0 << 1.0;
        QTest::newRow("resnet50 E^2 D") << "resnet50" << 2.0 << 1.0;
        QTest::newRow("transformer E D^2") << "transformer" << 1.0 << 2.0;
    }
    void annealingBeatsTheStart() {
        QFETCH(QString, model);
        QFETCH(double, n);
        QFETCH(double, m);
        const Network& net = sample(model.toStdString());
        const Hardware hw = edge();
        SearchConfig c;
        c.seed = 5;
        c.totalBatch = 8;
        c.objective = {n, m};
        c.beta = 6;
        auto r = runSearch(net, hw, c);
        CHECK_OK(r);
        QCOMPARE(r->iterations, std::llround(6.0 * double(net.layers.size())));
        EvalOptions opt;
        opt.objective = c.objective;
        const Evaluation start = evaluate(
            net, hw, *defaultInitialTree(net, hw, SearchMode::Set, 8, c.objective), 8, opt);
        QCOMPARE(r->initialEval.cost, start.cost);
        QVERIFY(r->best.valid);
        QVERIFY(r->best.cost <= start.cost);
        // Re-costed from scratch (a fresh memo), the best tree has the reported cost.
        const Evaluation again = evaluate(net, hw, r->bestTree, 8, opt);
        QVERIFY(again.valid);
        QVERIFY(std::abs(again.cost - r->best.cost) <= 1e-9 * r->best.cost);
        QCOMPARE(again.cost, objectiveCost(again.energy.total(), again.delay, c.objective));
        QVERIFY(r->stats.evaluations > 0);
        QVERIFY(r->stats.mapperHitRate > 0 && r->stats.mapperHitRate <= 1);
    }

    void restrictedModesHoldOnTheResult_data() { restrictedWalksStayInTheirSpace_data(); }
    void restrictedModesHoldOnTheResult() {
        QFETCH(int, mode);
        QFETCH(int, type);
        const Network& net = sample("resnet50");
        SearchConfig c = runConfig(1, 8, 600);
        c.mode = SearchMode(mode);
        auto r = runSearch(net, edge(), c);
        CHECK_OK(r);
        QVERIFY(r->best.valid);
        QVERIFY(r->best.cost <= r->initialEval.cost);
        for (const RATree* t : {&r->bestTree, &r->initialTree})
            for (int id : t->node(t->root).children)
                if (t->node(id).isCut()) QCOMPARE(int(t->node(id).type), type);
    }

    void randomSearchKeepsTheBest() {
        const Network& net = sample("resnet50");
        SearchConfig c = runConfig(1, 8, 300);
        c.mode = SearchMode::Random;
        auto r = runSearch(net, edge(), c);
        CHECK_OK(r);
        const auto& ch = r->chains[0];
        QCOMPARE(ch.accepted, ch.valid); // every valid candidate is taken
        QVERIFY(r->best.cost <= r->initialEval.cost);
    }

    void pinsSurviveARun() {
        const Network& net = sample("resnet50");
        SearchConfig c = runConfig(1, 8, 500);
        auto base = defaultInitialTree(net, edge(), SearchMode::Set, 8, c.objective);
        CHECK_OK(base);
        c.initialTree = pinnedStart(net, *base);
        c.pinned = {"/10"}; // one more, given by path
        auto r = runSearch(net, edge(), c);
        CHECK_OK(r);
        QCOMPARE(int(pinnedSubtrees(r->initialTree, net).size()), 3);
        QCOMPARE(pinnedSubtrees(r->bestTree, net), pinnedSubtrees(r->initialTree, net));
        for (const auto& ch : r->chains)
            QCOMPARE(pinnedSubtrees(ch.best, net), pinnedSubtrees(r->initialTree, net));

        c.pinned = {"/999"};
        auto bad = runSearch(net, edge(), c);
        QVERIFY(!bad);
        QVERIFY(bad.error().message.find("/999") != std::string::npos);
    }

    void continuesFromAGivenTree() {
        const Network& net = sample("resnet50");
        SearchConfig c = runConfig(1, 8, 300);
        auto first = runSearch(net, edge(), c);
        CHECK_OK(first);
        c.initialTree = first->bestTree;
        c.seed = 99;
        auto second = runSearch(net, edge(), c);
        CHECK_OK(second);
        QVERIFY(second->initialTree == first->bestTree);
        QCOMPARE(second->initialEval.cost, first->best.cost);
        QVERIFY(second->best.cost <= first->best.cost);

        // A tree outside the mode's space is refused with the reason.
        c.mode = SearchMode::LS;
        RATree s = RATree::layerSequential(net, 8);
        s = *edit::wrap(s, net, s.root, 0, 2, NodeType::S, 1);
        c.initialTree = s;
        auto refused = runSearch(net, edge(), c);
        QVERIFY(!refused);
        QVERIFY(refused.error().message.find("/0") != std::string::npos);
    }

    void progressAndStop() {
        const Network& net = sample("resnet50");
        SearchConfig c = runConfig(1, 8, 100000); // far more than the test lets run
        c.chains = 2;
        c.threads = 2;
        c.progressInterval = 0.02;
        std::stop_source stop;
        std::atomic<int> calls{0}, finals{0};
        std::atomic<bool> sane{true};
        auto r = runSearch(
            net, edge(), c,
            [&](const Progress& p) {
                if (p.final) ++finals;
                if (p.iteration == 0 && !p.final) return; // a phase begins: no figures yet
                if (p.iteration > p.total || p.bestCost <= 0 || p.temperature < 0 ||
                    p.temperature > c.t0 || p.acceptanceRate < 0 || p.acceptanceRate > 1)
                    sane = false;
                if (++calls == 5) stop.request_stop();
            },
            stop.get_token());
        CHECK_OK(r);
        QVERIFY(r->stopped);
        QCOMPARE(finals.load(), 1);
        QVERIFY(calls >= 5);
        QVERIFY(sane.load());
        for (const auto& ch : r->chains)
            QVERIFY(ch.iterations < c.iterations);
        QVERIFY(r->best.valid);
    }

    void badConfigIsAnError() {
        const Network& net = sample("resnet50");
        SearchConfig c;
        c.chains = 0;
        QVERIFY(!runSearch(net, edge(), c));
        c.chains = 1;
        c.totalBatch = 0;
        QVERIFY(!runSearch(net, edge(), c));
        c.totalBatch = 8;
        c.beta = 1e30; // beta x L far beyond the per-chain cap: not one iteration
        auto r = runSearch(net, edge(), c);
        QVERIFY(!r);
        QVERIFY(r.error().message.find("beta") != std::string::npos);
        c.beta = 1;
        c.seconds = -1;
        QVERIFY(!runSearch(net, edge(), c));
        c.seconds = maxSearchSeconds() * 2;
        QVERIFY(!runSearch(net, edge(), c));
    }

    void iterationBudgetRounds() {
        SearchConfig c;
        c.beta = 2.5;
        QCOMPARE(*iterationBudget(c, 72), 180LL);
        c.beta = 0.001; // rounds to 0: still one iteration
        QCOMPARE(*iterationBudget(c, 72), 1LL);
        c.iterations = 17; // exact count wins over beta
        QCOMPARE(*iterationBudget(c, 72), 17LL);
        c.iterations = maxIterationsPerChain() + 1;
        QVERIFY(!iterationBudget(c, 72));
    }

    // ----------------------------------------------------------------------------------
    // Defaults shared by the CLI and the GUI.

    // The objective as "n,m" (E^n D^m), per preset.
    void defaultObjectiveFollowsThePlatform_data() {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QString>("objective");
        QTest::newRow("edge: E^2 D") << "edge"
                                     << "2,1";
        QTest::newRow("testchip: like edge") << "testchip"
                                             << "2,1";
        QTest::newRow("cloud: E D^2") << "cloud"
                                      << "1,2";
    }
    void defaultObjectiveFollowsThePlatform() {
        QFETCH(QString, preset);
        QFETCH(QString, objective);
        Hardware hw;
        QVERIFY(presetHardware(preset.toStdString(), hw));
        const Objective o = defaultObjective(hw);
        QCOMPARE(QString("%1,%2").arg(o.n).arg(o.m), objective);
        // A template of one's own is ranked by EDP.
        Hardware custom = defaultHardware(6, 6, "lab");
        QCOMPARE(defaultObjective(custom).n, 1.0);
        QCOMPARE(defaultObjective(custom).m, 1.0);
    }

    // ----------------------------------------------------------------------------------
    // dp-lp, the DP-segmented layer pipeline.

    void dpLpIsADeterministicPipeline() {
        const Network& net = sample("resnet50");
        const Hardware hw = edge();
        EvalOptions opt;
        opt.objective = {2, 1};
        DpLpStats st1, st2;
        auto one = dpLayerPipeline(net, hw, 8, opt, 1, &st1);
        CHECK_OK(one);
        auto two = dpLayerPipeline(net, hw, 8, opt, 2, &st2); // threads never change it
        CHECK_OK(two);
        QVERIFY(*one == *two);
        QCOMPARE(st1.evaluations, st2.evaluations);
        QVERIFY(st1.segments > 0); // pipelining pays somewhere on ResNet-50 at batch 8
        QCOMPARE(SpaceRule{NodeType::S}.check(*one), std::nullopt);
        // Segments are consecutive layers in network order, as the layer-sequential tree.
        QCOMPARE(one->leavesInOrder(), RATree::layerSequential(net, 8).leavesInOrder());
        for (int c : one->node(one->root).children)
            if (one->node(c).isCut())
                for (int g : one->node(c).children)
                    QVERIFY(!one->node(g).isCut());
        // The DP's candidates include the layer-sequential tree and every round is
        // evaluated whole, so it is never worse than that start.
        EvalContext ctx(net, hw);
        const Evaluation e = evaluate(ctx, *one, 8, opt);
        QVERIFY(e.valid);
        auto ls = layerSequentialStart(ctx, 8, opt);
        CHECK_OK(ls);
        QVERIFY(e.cost <= evaluate(ctx, *ls, 8, opt).cost);
        // Bounded work: O(L x max segment x sub-batch choices) segment evaluations.
        QVERIFY(st1.evaluations <= 72LL * 24 * 3 + 100);
    }

    void dpLpModeReportsItsTree() {
        const Network& net = sample("transformer");
        SearchConfig c;
        c.mode = SearchMode::DpLp;
        c.totalBatch = 8;
        c.choosePartitions = false; // the construction's tree as built
        auto r = runSearch(net, edge(), c);
        CHECK_OK(r);
        QCOMPARE(r->chains.size(), size_t(1));
        QCOMPARE(r->iterationsRun, 0LL);
        QVERIFY(r->best.valid);
        QVERIFY(r->best.cost <= r->initialEval.cost);
        auto direct = defaultInitialTree(net, edge(), SearchMode::DpLp, 8, Objective{});
        CHECK_OK(direct);
        QVERIFY(*direct == r->bestTree);
        SearchConfig given = c;
        given.initialTree = r->bestTree; // it builds its own tree
        QVERIFY(!runSearch(net, edge(), given));
        SearchMode m;
        QVERIFY(parseSearchMode("dp-lp", m));
        QCOMPARE(m, SearchMode::DpLp);
        // With the partition choice (the default) the same tree, its leaves' partitions
        // chosen: no dearer than as built.
        c.choosePartitions = true;
        auto chosen = runSearch(net, edge(), c);
        CHECK_OK(chosen);
        QVERIFY(chosen->partitionChoice && chosen->partitionChoice->complete);
        QCOMPARE(chosen->partitionChoice->costBefore, r->best.cost);
        QVERIFY(chosen->best.cost <= r->best.cost);
        RATree plain = chosen->bestTree;
        for (RANode& n : plain.nodes)
            n.partition = {};
        QVERIFY(plain == r->bestTree);
    }

    // ----------------------------------------------------------------------------------
    // The Set portfolio: never worse than the baselines at the same total budget.

    void setNeverLosesToItsSeeds() {
        const Network& net = sample("googlenet");
        const Hardware hw = edge();
        const SearchConfig base = portfolioConfig(5, 300, 2);
        std::vector<SearchResult> done;
        for (SearchMode m : compareModes()) {
            std::vector<const SearchResult*> earlier;
            for (const auto& r : done)
                earlier.push_back(&r);
            const SearchConfig c = compareConfig(base, m, earlier);
            if (m == SearchMode::Set) {
                QCOMPARE(c.seedTrees.size(), done.size());
                QCOMPARE(c.warmupShare, 0.0); // the baselines already ran
                // Each seed carries its run's evaluation, the one costing it afresh gives,
                // and the run is the same as one that costs the seeds itself.
                EvalContext ctx(net, hw);
                const EvalOptions opt = evalOptionsOf(c);
                SearchConfig costsThem = c;
                for (size_t i = 0; i < c.seedTrees.size(); ++i) {
                    QVERIFY(c.seedTrees[i].eval.has_value());
                    const Evaluation e = evaluate(ctx, c.seedTrees[i].tree, c.totalBatch, opt);
                    QVERIFY(e.valid);
                    QVERIFY(c.seedTrees[i].eval->cost == e.cost);
                    QVERIFY(c.seedTrees[i].eval->delay == e.delay);
                    QVERIFY(c.seedTrees[i].eval->energy.total() == e.energy.total());
                    costsThem.seedTrees[i].eval.reset();
                }
                auto a = runSearch(net, hw, costsThem);
                CHECK_OK(a);
                auto b = runSearch(net, hw, c);
                CHECK_OK(b);
                QVERIFY(a->best.cost == b->best.cost);
                QVERIFY(a->bestTree == b->bestTree);
                QCOMPARE(a->chains.size(), b->chains.size());
                for (size_t i = 0; i < a->chains.size(); ++i)
                    QCOMPARE(a->chains[i].start, b->chains[i].start);
            } else {
                QVERIFY(c.seedTrees.empty());
            }
            auto r = runSearch(net, hw, c);
            CHECK_OK(r);
            done.push_back(*r);
        }
        QCOMPARE(done.size(), size_t(5)); // ls, lp, dp-lp, chiplet, set
        const double sa = done.back().best.cost;
        for (size_t i = 0; i + 1 < done.size(); ++i)
            QVERIFY(sa <= done[i].best.cost);
        // Chain 0 anneals from the plain start; chain 1 holds the best seed, so it alone is
        // never worse than the baselines.
        QCOMPARE(done.back().chains[0].start, std::string("start"));
        for (size_t i = 0; i + 1 < done.size(); ++i)
            QVERIFY(done.back().chains[1].bestEval.cost <= done[i].best.cost);
        QCOMPARE(done.back().iterationsRun, base.iterations * base.chains);
    }

    // A context keeps the busiest-link sums of segments and S-cut slots running: where a sum
    // differs from the last of its kind in a few leaves, those are taken out and the new
    // ones put in. Along a walk from the chiplet baseline's tree (a root S cut over every
    // leaf, a sub-batch scale of a power of two) each tree costs what it costs in a fresh
    // context, bit for bit.
    void runningLinkSumsMatchFreshContexts() {
        const Network& net = sample("googlenet");
        Hardware hw;
        QVERIFY(presetHardware("chiplet", hw));
        const auto deps = net.transitiveDeps();
        const OperatorContext ops{net, deps, SpaceRule{}};
        const EvalOptions opt;
        EvalContext warm(net, hw);
        auto start = chipletBaseline(net, hw, 8, opt);
        CHECK_OK(start);
        RATree t = *start;
        Rng rng(11);
        int compared = 0;
        for (int step = 0; step < 160; ++step) {
            auto c = proposeCandidate(t, ops, rng);
            if (!c) continue;
            const Evaluation a = evaluate(warm, *c, 8, opt);
            EvalContext fresh(net, hw);
            const Evaluation b = evaluate(fresh, *c, 8, opt);
            QCOMPARE(a.valid, b.valid);
            if (!a.valid) continue;
            QVERIFY(a.cost == b.cost);
            QVERIFY(a.delay == b.delay);
            QVERIFY(a.energy.total() == b.energy.total());
            ++compared;
            t = std::move(*c);
        }
        QVERIFY(compared > 60);
    }

    // The partition choice on a run's result costs the best chain's tree in that chain's
    // context (whose memos hold its trees), on two threads when the run has two; a fresh
    // context on one thread, and two fresh ones on two, give the same choice and figures,
    // whichever chain wins and however many chains share the workers.
    void partitionChoiceInAnyContext() {
        const Network& net = sample("googlenet");
        const Hardware hw = edge();
        for (int chains : {1, 3, 5}) {
            SearchConfig c = runConfig(3, 8, 120);
            c.chains = chains;
            c.threads = 2;
            auto r = runSearch(net, hw, c);
            CHECK_OK(r);
            QVERIFY(r->partitionChoice.has_value());
            RATree tree = r->chains[size_t(r->bestChain)].best;
            Evaluation eval = r->chains[size_t(r->bestChain)].bestEval;
            EvalContext fresh(net, hw);
            const EvalOptions opt = evalOptionsOf(c);
            const BlockRepetition none;
            const PartitionChoiceInputs pin{net, c.totalBatch, opt, none};
            const PartitionChoiceStats st = choosePartitions(tree, eval, fresh, pin);
            QVERIFY(tree == r->bestTree);
            QVERIFY(eval.cost == r->best.cost);
            QCOMPARE(st.changed, r->partitionChoice->changed);
            QCOMPARE(st.evaluations, r->partitionChoice->evaluations);
            QVERIFY(st.changed > 0); // the choice moved leaves: a real check
            RATree both = r->chains[size_t(r->bestChain)].best;
            Evaluation bothEval = r->chains[size_t(r->bestChain)].bestEval;
            EvalContext first(net, hw), second(net, hw);
            PartitionChoiceInputs pin2{net, c.totalBatch, opt, none};
            pin2.helper = &second;
            const PartitionChoiceStats st2 = choosePartitions(both, bothEval, first, pin2);
            QVERIFY(both == r->bestTree);
            QVERIFY(bothEval.cost == r->best.cost);
            QCOMPARE(st2.changed, st.changed);
            QCOMPARE(st2.evaluations, st.evaluations);
        }
    }

    void standaloneSetWarmsUpWithinItsBudget() {
        const Network& net = sample("resnet50");
        const Hardware hw = edge();
        SearchConfig c = portfolioConfig(3, 400, 1);
        // By default no warm-up: chain 0 from the start, chain 1 from the best baseline tree.
        auto plainStart = runSearch(net, hw, c);
        CHECK_OK(plainStart);
        QCOMPARE(plainStart->chains.size(), size_t(2));
        QCOMPARE(plainStart->chains[0].start, std::string("start"));
        QVERIFY(plainStart->chains[1].start != "start"); // dp-lp beats the start under E^2 D here
        c.warmupShare = 0.25;
        auto one = runSearch(net, hw, c);
        CHECK_OK(one);
        // Two warm-up chains (LS and LP spaces) after the two main chains; the total is
        // the same chains x iterations an LS or LP run gets.
        QCOMPARE(one->chains.size(), size_t(4));
        QCOMPARE(one->chains[2].role, std::string("warmup-ls"));
        QCOMPARE(one->chains[3].role, std::string("warmup-lp"));
        QCOMPARE(one->iterationsRun, c.iterations * c.chains);
        QCOMPARE(SpaceRule{NodeType::T}.check(one->chains[2].best), std::nullopt);
        QCOMPARE(SpaceRule{NodeType::S}.check(one->chains[3].best), std::nullopt);
        // Never worse than the baselines' trees it was handed.
        EvalContext ctx(net, hw);
        EvalOptions opt;
        opt.objective = c.objective;
        for (auto t : {layerSequentialStart(ctx, 8, opt), layerPipelineStart(ctx, 8, opt),
                       dpLayerPipeline(net, hw, 8, opt)}) {
            CHECK_OK(t);
            QVERIFY(one->best.cost <= evaluate(ctx, *t, 8, opt).cost);
        }
        for (const auto& ch : one->chains)
            QVERIFY(one->best.cost <= ch.bestEval.cost);
        // Phases end before the next begins: two threads give the same result.
        c.threads = 2;
        auto two = runSearch(net, hw, c);
        CHECK_OK(two);
        QVERIFY(one->bestTree == two->bestTree);
        for (size_t k = 0; k < one->chains.size(); ++k)
            QCOMPARE(one->chains[k].accepted, two->chains[k].accepted);
        // Without the portfolio every chain starts from the mode's start.
        c.portfolio = false;
        auto plain = runSearch(net, hw, c);
        CHECK_OK(plain);
        QCOMPARE(plain->chains.size(), size_t(2));
        for (const auto& ch : plain->chains)
            QCOMPARE(ch.start, std::string("start"));
    }

    void timeBudgetRecordsWhatRan() {
        const Network& net = sample("transformer");
        SearchConfig c;
        c.totalBatch = 8;
        c.seconds = 0.6;
        c.chains = 2;
        c.threads = 2;
        c.progressInterval = 0.02;
        std::vector<Progress> seen;
        std::mutex mu;
        auto r = runSearch(net, edge(), c, [&](const Progress& p) {
            std::lock_guard lock(mu);
            seen.push_back(p);
        });
        CHECK_OK(r);
        QVERIFY(r->iterationsRun > 0);
        QCOMPARE(r->iterations, std::max(1LL, r->iterationsRun / c.chains)); // replayable length
        long long sum = 0;
        for (const auto& ch : r->chains)
            sum += ch.iterations;
        QCOMPARE(sum, r->iterationsRun);
        QVERIFY(!seen.empty());
        QVERIFY(seen.back().final);
        QCOMPARE(seen.back().fraction, 1.0);
        QCOMPARE(seen.back().secondsLeft, 0.0);
        for (size_t i = 0; i + 1 < seen.size(); ++i) {
            QVERIFY(seen[i].fraction >= 0 && seen[i].fraction <= 1);
            QVERIFY(seen[i].secondsLeft >= 0 && seen[i].secondsLeft <= c.seconds);
            QVERIFY(seen[i].iteration <= seen[i].total);
        }
        // An iteration budget reports -1: there is no deadline.
        SearchConfig it = c;
        it.seconds = 0;
        it.iterations = 50;
        Progress last;
        auto r2 = runSearch(net, edge(), it, [&](const Progress& p) { last = p; });
        CHECK_OK(r2);
        QCOMPARE(last.secondsLeft, -1.0);
        QCOMPARE(r2->iterations, 50LL);
    }

    // A time budget holds on a wafer-scale mesh, where a fresh evaluation of ResNet-50 takes
    // a good part of a second and the full baselines take minutes: the start trees and the
    // portfolio's baselines get their shares and annealing the rest. The budget and the
    // bound are set from one fresh evaluation timed here, so they scale with the build
    // (sanitizers run it several times slower) and the machine's load: the run may end one
    // or two evaluations past its deadline, but a run that ignores the budget (the full
    // baselines: thousands of evaluations) cannot pass.
    void timeBudgetHoldsOnAWaferMesh() {
        const Network& net = sample("resnet50");
        const Hardware wafer = waferPreset();
        EvalOptions opt;
        opt.objective = defaultObjective(wafer);
        const double evalSeconds = double(freshEvaluationMs(net, wafer, opt)) / 1000;
        SearchConfig c;
        c.totalBatch = 8;
        c.objective = opt.objective;
        c.seconds = std::max(2.0, 5 * evalSeconds);
        const double bound = 1.5 * c.seconds + 2 * evalSeconds;
        c.chains = 2;
        c.threads = 2;
        std::vector<std::string> phases;
        std::mutex mu;
        QElapsedTimer wall;
        wall.start();
        auto r = runSearch(net, wafer, c, [&](const Progress& p) {
            std::lock_guard lock(mu);
            if (phases.empty() || phases.back() != p.phase) phases.push_back(p.phase);
        });
        const double seconds = double(wall.elapsed()) / 1000;
        CHECK_OK(r);
        QVERIFY2(seconds < bound, qPrintable(QString("%1 s for a %2 s budget (one evaluation %3 s)")
                                                 .arg(seconds)
                                                 .arg(c.seconds)
                                                 .arg(evalSeconds)));
        QVERIFY(r->elapsedSeconds < bound);
        long long annealed = 0;
        for (const ChainResult& ch : r->chains)
            annealed += ch.iterations;
        QVERIFY(annealed > 0);
        QVERIFY(r->best.valid && r->best.cost <= r->initialEval.cost);
        QVERIFY(r->bestDetail && r->bestDetail->cost == r->best.cost);
        // The phases in order: the start, then (if their shares were not spent) the
        // baselines, annealing, the partition choice in the budget's last tenth, and the
        // final callback.
        QVERIFY(phases.size() >= 4);
        QCOMPARE(phases.front(), std::string("start tree"));
        QCOMPARE(phases[phases.size() - 3], std::string("annealing"));
        QCOMPARE(phases[phases.size() - 2], std::string("partitions"));
        QCOMPARE(phases.back(), std::string("done"));
    }

    // Every phase is reported as it begins, under an iteration budget as under a time one.
    void progressNamesThePhases() {
        const Network& net = sample("resnet50");
        SearchConfig c = runConfig(1, 8, 30);
        std::vector<std::string> phases;
        std::mutex mu;
        auto r = runSearch(net, edge(), c, [&](const Progress& p) {
            std::lock_guard lock(mu);
            if (phases.empty() || phases.back() != p.phase) phases.push_back(p.phase);
        });
        CHECK_OK(r);
        const std::vector<std::string> want = {"start tree", "baselines: lp", "baselines: dp-lp",
                                               "annealing",  "partitions",    "done"};
        QCOMPARE(phases, want);
        c.mode = SearchMode::DpLp;
        phases.clear();
        auto dp = runSearch(net, edge(), c, [&](const Progress& p) { phases.push_back(p.phase); });
        CHECK_OK(dp);
        QCOMPARE(phases, (std::vector<std::string>{"baselines: dp-lp", "partitions", "done"}));
    }

    // dp-lp under a deadline: the segment table is thinned to what the time affords, and
    // the tree is still a valid pipeline, costed in about the time given.
    void dpLpDegradesUnderADeadline() {
        const Network& net = sample("resnet50");
        const Hardware wafer = waferPreset();
        EvalOptions opt;
        opt.objective = defaultObjective(wafer);
        // The deadline and the bound scale with one fresh evaluation (sanitizer builds, a
        // loaded machine); the full table on this mesh is thousands of evaluations.
        const qint64 evalMs = freshEvaluationMs(net, wafer, opt);
        const qint64 givenMs = std::max<qint64>(500, 2 * evalMs);
        Deadline d;
        d.at = Deadline::Clock::now() + std::chrono::milliseconds(givenMs);
        QElapsedTimer wall;
        wall.start();
        DpLpStats st;
        auto t = dpLayerPipeline(net, wafer, 8, opt, 2, &st, {}, d);
        CHECK_OK(t);
        QVERIFY2(wall.elapsed() < 2 * givenMs + 4 * evalMs,
                 qPrintable(QString("%1 ms for %2 ms given (one evaluation %3 ms)")
                                .arg(wall.elapsed())
                                .arg(givenMs)
                                .arg(evalMs)));
        QVERIFY(st.grain > 1 || st.subBatches < 3);
        QVERIFY(evaluate(net, wafer, *t, 8, opt).valid);
        // Without a deadline the table is the full one.
        DpLpStats full;
        auto whole = dpLayerPipeline(net, edge(), 8, opt, 2, &full);
        CHECK_OK(whole);
        QCOMPARE(full.grain, 1);
        QCOMPARE(full.subBatches, 3);
    }
};

QTEST_APPLESS_MAIN(TestSearch)
#include "tst_search.moc"
