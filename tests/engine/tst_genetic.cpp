// The genetic search (docs/search.md "Genetic search"): crossover exchanges subtrees over the
// same layers and repairs sub-batch counts; a run is reproducible whatever the thread count,
// never ends worse than its start, keeps pins and reports progress like annealing.
#include "model/model_loader.h"
#include "netbuilder.h"
#include "search/genetic.h"
#include "search/search.h"

#include <QtTest>
#include <set>

using namespace tilescope;
using namespace tilescope::test;

namespace {

#define CHECK_OK(r) QVERIFY2((r).ok(), (r).ok() ? "" : (r).error().message.c_str())

RATree parse(const std::string& text, const Network& net) {
    auto t = parseTreeText(text, net, "test");
    if (!t) qFatal("%s", t.error().message.c_str());
    return std::move(t).value();
}

const Network& resnet50() {
    static const Network net = [] {
        auto r = loadModel(std::string(TILESCOPE_SAMPLES) + "/models/resnet50.onnx");
        if (!r) qFatal("%s", r.error().message.c_str());
        return std::move(r).value();
    }();
    return net;
}

Hardware edge() {
    Hardware hw;
    if (!presetHardware("edge", hw)) qFatal("no edge preset");
    return hw;
}

SearchConfig gaConfig(std::uint64_t seed, int chains, int threads) {
    SearchConfig c;
    c.mode = SearchMode::Genetic;
    c.seed = seed;
    c.totalBatch = 8;
    c.iterations = 150;
    c.chains = chains;
    c.threads = threads;
    c.objective = {2, 1};
    return c;
}

} // namespace

class TestGenetic : public QObject {
    Q_OBJECT

  private slots:
    // a and b share the layer set {i1, i2} under different subtrees: the child is a with b's
    // subtree there, at a's batch; b's S 4/4 cannot split a's batch 2 into 4, so it takes
    // gcd(2, 4) = 2. The other common sets (single leaves, the root) are not exchanged.
    void crossoverGraftsTheSubtreeOverTheSameLayers() {
        const Network net = independent4();
        const RATree a = parse("T 4/2\n\ti0 2\n\tT 2/1\n\t\ti1 2\n\t\ti2 2\n\ti3 2\n", net);
        const RATree b = parse("T 4/1\n\ti0 4\n\tS 4/4\n\t\ti2 1\n\t\ti1 1\n\ti3 4\n", net);
        Rng rng(3);
        auto c = crossover(a, b, net, rng);
        QVERIFY(c.has_value());
        QCOMPARE(treeToText(*c, net),
                 std::string("T 4/2\n\ti0 2\n\tS 2/2\n\t\ti2 1\n\t\ti1 1\n\ti3 2\n"));
        QVERIFY(!validateStructure(*c, net, 4));
        // Nothing to exchange: the same subtree on both sides, or no common layer set.
        QVERIFY(!crossover(a, a, net, rng).has_value());
        const RATree flat = parse("T 4/1\n\ti0 4\n\ti1 4\n\ti2 4\n\ti3 4\n", net);
        QVERIFY(!crossover(flat, b, net, rng).has_value());
        // A pinned subtree of a stays as it is.
        const RATree pinned = *edit::setPinned(a, a.node(a.root).children[1], true);
        QVERIFY(!crossover(pinned, b, net, rng).has_value());
    }

    // The population fills up to kSize with new trees, then only a better child replaces
    // the worst member; a tree already in it is refused.
    void populationKeepsTheBest() {
        const Network net = independent4();
        const RATree start = RATree::layerSequential(net, 4);
        Evaluation e;
        e.cost = 100;
        GeneticPopulation pop(net, start, e);
        QVERIFY(!pop.offer(start, e));
        const auto deps = net.transitiveDeps();
        const OperatorContext ops{net, deps, {}};
        Rng rng(5);
        std::set<std::string> members{treeToText(start, net)};
        double cost = 99;
        while (pop.size() < GeneticPopulation::kSize) {
            auto c = pop.breed(ops, rng);
            QVERIFY(c.has_value());
            QVERIFY(!validateStructure(*c, net, 4));
            Evaluation ce;
            ce.cost = cost;
            const bool isNew = members.insert(treeToText(*c, net)).second;
            QCOMPARE(pop.offer(*c, ce), isNew);
            if (isNew) cost -= 1;
        }
        // Full: worse than the worst (100) is refused, better joins.
        RATree other = *edit::wrap(start, net, start.root, 0, 4, NodeType::S, 4);
        Evaluation worse, better;
        worse.cost = 200;
        better.cost = 1;
        QVERIFY(!pop.offer(other, worse));
        QVERIFY(pop.offer(other, better));
        QCOMPARE(pop.size(), GeneticPopulation::kSize);
    }

    // Same seed, same result with one or two threads; the best is never worse than the
    // start; every chain ran its iterations and some children joined.
    void runIsReproducibleAndNeverWorse() {
        const Network& net = resnet50();
        const Hardware hw = edge();
        auto one = runSearch(net, hw, gaConfig(4, 2, 1));
        auto two = runSearch(net, hw, gaConfig(4, 2, 2));
        CHECK_OK(one);
        CHECK_OK(two);
        QCOMPARE(one->bestTree, two->bestTree);
        QCOMPARE(one->best.cost, two->best.cost);
        QCOMPARE(one->config.mode, SearchMode::Genetic);
        QVERIFY(one->best.valid);
        QVERIFY(one->best.cost <= one->initialEval.cost);
        QCOMPARE(one->iterationsRun, 300LL);
        for (const ChainResult& c : one->chains) {
            QCOMPARE(c.role, std::string("ga"));
            QVERIFY(c.accepted > 0);
        }
    }

    // Progress as annealing's (the live plot): chain figures, the phase "genetic", the
    // temperature 0, one final callback.
    void progressLikeAnnealing() {
        const Network& net = resnet50();
        SearchConfig c = gaConfig(2, 1, 1);
        c.progressInterval = 0;
        int chainCalls = 0, finals = 0;
        std::string phase;
        auto r = runSearch(net, edge(), c, [&](const Progress& p) {
            if (p.final) ++finals;
            if (p.iteration > 0 && !p.final) {
                ++chainCalls;
                phase = p.phase;
                QCOMPARE(p.temperature, 0.0);
                QVERIFY(p.currentCost > 0 && p.bestCost > 0);
            }
        });
        CHECK_OK(r);
        QCOMPARE(finals, 1);
        QVERIFY(chainCalls > 100);
        QCOMPARE(phase, std::string("genetic"));
    }

    // Pins hold: the pinned leaf stays under the root with its layer and batch.
    void pinsHold() {
        const Network& net = resnet50();
        SearchConfig c = gaConfig(3, 1, 1);
        c.pinned = {"/3"};
        auto r = runSearch(net, edge(), c);
        CHECK_OK(r);
        const RATree& start = r->initialTree;
        const int was = start.nodeAtPath("/3");
        int pinned = -1;
        for (int id = 0; id < r->bestTree.size(); ++id)
            if (r->bestTree.node(id).pinned) pinned = id;
        QVERIFY(pinned >= 0);
        QCOMPARE(r->bestTree.node(pinned).parent, r->bestTree.root);
        QCOMPARE(subtreeToText(r->bestTree, net, pinned), subtreeToText(start, net, was));
        QVERIFY(r->best.cost <= r->initialEval.cost);
    }

    void modeParses() {
        SearchMode m = SearchMode::Set;
        QVERIFY(parseSearchMode("ga", m));
        QCOMPARE(m, SearchMode::Genetic);
        QCOMPARE(std::string(toString(SearchMode::Genetic)), std::string("ga"));
        // compare's full-space row runs the genetic search when it is the chosen mode.
        SearchConfig base;
        base.mode = SearchMode::Genetic;
        QCOMPARE(compareConfig(base, SearchMode::Set, {}).mode, SearchMode::Genetic);
        QCOMPARE(compareConfig(base, SearchMode::LS, {}).mode, SearchMode::LS);
    }
};

QTEST_APPLESS_MAIN(TestGenetic)
#include "tst_genetic.moc"
