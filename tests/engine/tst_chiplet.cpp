// The chiplet pipeline-parallel baseline (docs/search.md, "The chiplet baseline"): the
// systolic cost against hand values, and on every sample the properties of the plan
// (chains of in = out = 1 layers keep the work, groups are independent, regions take the M
// chiplets, every split paid) and of the tree (valid, regions adjacent along the mesh and
// each on exactly its planned chiplets, the fixed tile counts surviving the text and JSON
// formats, annealing from it never ends worse, compare reports it and SA does not lose to
// it).
#include "clirunner.h"
#include "eval/evaluator.h"
#include "hw/mesh.h"
#include "model/model_loader.h"
#include "samples.h"
#include "search/chiplet.h"
#include "search/search.h"
#include "tree/tree_json.h"

#include <QtTest>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>

using namespace tilescope;

namespace {

const char* const kModels[] = {"resnet50", "googlenet", "inception_v3", "mobilenet_v2",
                               "transformer"};

using test::preset;
using test::sample;

} // namespace

class TestChiplet : public QObject {
    Q_OBJECT
  private slots:
    void systolicHandValues();
    void plan_data();
    void plan();
    void tree_data();
    void tree();
    void regionsOnTheirChiplets_data();
    void regionsOnTheirChiplets();
    void fixedTilesRoundTrip();
    void annealingFromItNeverEndsWorse();
    void compareReportsIt();
};

void TestChiplet::systolicHandValues() {
    // w = 16: both dimensions fit, one pass: 8 + 8 + 8 - 1.
    QCOMPARE(systolicCycles(8, 8, 8, 16), 23.0);
    // 64^3 / 16^2 + 2 (16 - 1) = 1024 + 30.
    QCOMPARE(systolicCycles(64, 64, 64, 16), 1054.0);
    // m = w, n < w: still one pass (docs/search.md: the m = w case).
    QCOMPARE(systolicCycles(16, 10, 4, 16), 29.0);
    // Only n exceeds w: tiled.
    QCOMPARE(systolicCycles(4, 10, 32, 16), 4.0 * 10 * 32 / 256 + 30);
}

void TestChiplet::plan_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("hw");
    for (const char* m : kModels)
        for (const char* hw : {"edge", "cloud", "chiplet"})
            QTest::newRow((std::string(m) + " " + hw).c_str()) << m << hw;
}

void TestChiplet::plan() {
    QFETCH(QString, model);
    QFETCH(QString, hw);
    const Network& net = sample(model.toStdString());
    const Hardware h = preset(hw.toLatin1().constData());
    const ChipletPlan p = chipletPlan(net, h, 8);

    // Reduction: every layer in exactly one chain, the work preserved, chains linked, every
    // layer of a chain of several with one producer layer and one consumer layer.
    std::vector<int> seen(net.layers.size(), 0);
    double macs = 0, netMacs = 0;
    const auto consumers = net.consumers();
    auto producers = [&](int layer) {
        std::set<int> out;
        for (const LayerInput& in : net.layers[size_t(layer)].inputs)
            if (in.producer >= 0) out.insert(in.producer);
        return out;
    };
    for (const ChipletNode& n : p.nodes) {
        macs += n.macs;
        for (size_t i = 0; i < n.layers.size(); ++i) {
            ++seen[size_t(n.layers[i])];
            if (n.layers.size() == 1) continue;
            QCOMPARE(int(producers(n.layers[i]).size()), 1);
            QCOMPARE(int(consumers[size_t(n.layers[i])].size()), 1);
            if (i > 0) QCOMPARE(*producers(n.layers[i]).begin(), n.layers[i - 1]);
        }
    }
    for (const Layer& l : net.layers)
        netMacs += l.macsPerSample() > 0 ? double(l.macsPerSample())
                                         : double(std::max<Count>(1, l.opsPerSample()));
    for (int s : seen)
        QCOMPARE(s, 1);
    QCOMPARE(macs, netMacs);
    QVERIFY(p.nodes.size() < net.layers.size()); // every sample has chains to merge
    // The wider rule (a chain's head may read several layers, its tail feed several) only
    // merges more.
    QVERIFY(reduceChains(net, ChipletChains::SingleLink).size() <= p.nodes.size());

    // Regions: consecutive node ranges covering all, chiplets summing to M.
    QCOMPARE(p.chiplets, chipletCount(h));
    int next = 0, chiplets = 0;
    std::vector<int> nodeOf(net.layers.size(), -1);
    for (int v = 0; v < int(p.nodes.size()); ++v)
        for (int l : p.nodes[size_t(v)].layers)
            nodeOf[size_t(l)] = v;
    for (const ChipletRegion& r : p.regions) {
        QCOMPARE(r.first, next);
        QVERIFY(r.last > r.first);
        QVERIFY(r.chiplets >= 1);
        next = r.last;
        chiplets += r.chiplets;
        // Groups: one depth each, no dependency between their nodes.
        for (const auto& g : r.groups) {
            std::set<int> members(g.begin(), g.end());
            for (int v : g) {
                QCOMPARE(p.nodes[size_t(v)].depth, p.nodes[size_t(g[0])].depth);
                for (int l : p.nodes[size_t(v)].layers)
                    for (const LayerInput& in : net.layers[size_t(l)].inputs)
                        if (in.producer >= 0 && nodeOf[size_t(in.producer)] != v)
                            QVERIFY2(!members.count(nodeOf[size_t(in.producer)]),
                                     "a group member reads another member of its group");
            }
        }
    }
    QCOMPARE(next, int(p.nodes.size()));
    QCOMPARE(chiplets, p.chiplets);
    QCOMPARE(int(p.splits.size()), int(p.regions.size()) - 1);
    for (const ChipletSplit& s : p.splits)
        QVERIFY2(s.t0 > s.t1 + s.t2 + s.t3, "a split that did not pay was made");
    if (p.chiplets == 1) QCOMPARE(int(p.regions.size()), 1);
}

void TestChiplet::tree_data() {
    plan_data();
}

void TestChiplet::tree() {
    QFETCH(QString, model);
    QFETCH(QString, hw);
    const Network& net = sample(model.toStdString());
    const Hardware h = preset(hw.toLatin1().constData());
    EvalOptions opt;
    opt.objective = defaultObjective(h);
    ChipletPlan p;
    auto t = chipletBaseline(net, h, 8, opt, &p);
    QVERIFY2(t.ok(), t.ok() ? "" : t.error().message.c_str());
    QVERIFY(!validateStructure(*t, net, 8));
    opt.detail = true;
    const Evaluation e = evaluate(net, h, *t, 8, opt);
    QVERIFY2(e.valid, e.reason.c_str());
    const RANode& root = t->node(t->root);
    if (p.regions.size() == 1) {
        QCOMPARE(root.type, NodeType::T);
        return;
    }
    // A root S cut over T-cut regions, placed along the snake: consecutive regions hold
    // consecutive snake ranges and share a mesh edge.
    QCOMPARE(root.type, NodeType::S);
    QCOMPARE(int(root.children.size()), int(p.regions.size()));
    const Mesh mesh(h);
    for (size_t i = 0; i < root.children.size(); ++i) {
        QCOMPARE(t->node(root.children[i]).type, NodeType::T);
        if (i == 0) continue;
        const NodeFigures& a = e.nodes[size_t(root.children[i - 1])];
        const NodeFigures& b = e.nodes[size_t(root.children[i])];
        QCOMPARE(b.tileBegin, a.tileBegin + a.tileCount);
        bool touch = false;
        for (int x = a.tileBegin; x < a.tileBegin + a.tileCount; ++x)
            for (int y = b.tileBegin; y < b.tileBegin + b.tileCount; ++y) {
                const int u = mesh.tileAt(x), v = mesh.tileAt(y);
                touch |= std::abs(mesh.tileX(u) - mesh.tileX(v)) +
                             std::abs(mesh.tileY(u) - mesh.tileY(v)) ==
                         1;
            }
        QVERIFY2(touch, "consecutive regions do not share a mesh edge");
    }
}

void TestChiplet::regionsOnTheirChiplets_data() {
    QTest::addColumn<QString>("model");
    for (const char* m : kModels)
        QTest::newRow(m) << m;
}

void TestChiplet::regionsOnTheirChiplets() {
    // The method's placement: each region on exactly the chiplets the plan gave it (no
    // region spills into a neighbouring chiplet). The evaluator's own allocation, by work,
    // is what placed them before: its tile counts are no multiples of a chiplet's.
    QFETCH(QString, model);
    const Network& net = sample(model.toStdString());
    const Hardware h = preset("chiplet");
    const Mesh mesh(h);
    QVERIFY(mesh.hasChiplets());
    const int perChiplet = mesh.chipletWidth() * mesh.chipletHeight();
    EvalOptions opt;
    opt.objective = defaultObjective(h);
    opt.detail = true;
    ChipletPlan p;
    auto t = chipletBaseline(net, h, 8, opt, &p);
    QVERIFY2(t.ok(), t.ok() ? "" : t.error().message.c_str());
    QCOMPARE(p.npus, perChiplet);
    const Evaluation e = evaluate(net, h, *t, 8, opt);
    QVERIFY2(e.valid, e.reason.c_str());
    const RANode& root = t->node(t->root);
    if (p.regions.size() == 1) QSKIP("one region: it holds the whole mesh");
    QCOMPARE(int(root.children.size()), int(p.regions.size()));
    std::set<int> taken;
    for (size_t i = 0; i < p.regions.size(); ++i) {
        const NodeFigures& f = e.nodes[size_t(root.children[i])];
        std::map<int, int> tilesIn; // chiplet -> the region's tiles on it
        for (int pos = f.tileBegin; pos < f.tileBegin + f.tileCount; ++pos)
            ++tilesIn[mesh.chipletOf(mesh.tileAt(pos))];
        QCOMPARE(int(tilesIn.size()), p.regions[i].chiplets);
        for (const auto& [chiplet, tiles] : tilesIn) {
            QCOMPARE(tiles, perChiplet); // whole chiplets only
            QVERIFY2(taken.insert(chiplet).second, "two regions share a chiplet");
        }
    }
}

void TestChiplet::fixedTilesRoundTrip() {
    // The regions' tile counts travel with the tree: text and JSON keep them, and a tree
    // read back evaluates to the same figures.
    const Network& net = sample("mobilenet_v2");
    const Hardware h = preset("chiplet");
    EvalOptions opt;
    opt.objective = defaultObjective(h);
    auto t = chipletBaseline(net, h, 8, opt);
    QVERIFY2(t.ok(), t.ok() ? "" : t.error().message.c_str());
    const std::string text = treeToText(*t, net);
    QVERIFY(text.find(" tiles=16") != std::string::npos);
    auto fromText = parseTreeText(text, net, "chiplet.tree");
    QVERIFY2(fromText.ok(), fromText.ok() ? "" : fromText.error().message.c_str());
    QVERIFY(*fromText == *t);
    auto fromJson = parseTreeJson(treeToJson(*t, net), net, "chiplet.json");
    QVERIFY2(fromJson.ok(), fromJson.ok() ? "" : fromJson.error().message.c_str());
    QVERIFY(*fromJson == *t);
    QCOMPARE(evaluate(net, h, *fromText, 8, opt).cost, evaluate(net, h, *t, 8, opt).cost);
    // Without the fixed counts the root S cut allocates by work again: another schedule.
    RATree free = *t;
    for (RANode& n : free.nodes)
        n.tiles = 0;
    QVERIFY(!(free == *t));
    QVERIFY(evaluate(net, h, free, 8, opt).cost != evaluate(net, h, *t, 8, opt).cost);
}

void TestChiplet::annealingFromItNeverEndsWorse() {
    for (const char* m : {"googlenet", "transformer"}) {
        const Network& net = sample(m);
        const Hardware h = preset("cloud");
        SearchConfig c;
        c.mode = SearchMode::Set;
        c.totalBatch = 8;
        c.objective = defaultObjective(h);
        c.iterations = 300;
        c.chains = 1;
        EvalOptions opt;
        opt.objective = c.objective;
        auto t = chipletBaseline(net, h, 8, opt);
        QVERIFY2(t.ok(), t.ok() ? "" : t.error().message.c_str());
        c.initialTree = *t;
        auto r = runSearch(net, h, c);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        QVERIFY(r->best.valid);
        QVERIFY(r->best.cost <= r->initialEval.cost);
        QCOMPARE(r->initialEval.cost, evaluate(net, h, *t, 8, opt).cost);
    }
}

void TestChiplet::compareReportsIt() {
    // The CLI contract: compare's JSON has a "chiplet" row and its ratio, and SA (seeded with
    // the baselines' trees, this one included) is never worse than it.
    QString error;
    const QJsonObject j =
        test::compareJson(QStringLiteral("googlenet"), QStringLiteral("cloud"), &error);
    QVERIFY2(!j.isEmpty(), qPrintable(error));
    QVERIFY(j.contains("chiplet"));
    const QJsonObject chiplet = j["chiplet"].toObject();
    QVERIFY(chiplet["valid"].toBool());
    QVERIFY(chiplet["tree"].toString().startsWith("S ")); // regions on the 12x12 mesh
    const double sa = j["sa"].toObject()["cost"].toDouble();
    QVERIFY(sa > 0);
    QVERIFY(sa <= chiplet["cost"].toDouble());
    QVERIFY(j["ratios"].toObject().contains("sa_over_chiplet"));
}

QTEST_GUILESS_MAIN(TestChiplet)
#include "tst_chiplet.moc"
