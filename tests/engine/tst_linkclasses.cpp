// Link classes: a mesh of chiplets whose inter-chiplet links are slower and cost
// more energy per bit than the links inside a chiplet. The evaluator on a hand-derived
// case, the evaluator and the instruction-level replay in agreement on the chiplet preset,
// and compare's SA never worse than the chiplet baseline there. The template keys and the
// Mesh's per-link figures are in tst_hardware; the heatmap's boundaries in tst_render.
#include "clirunner.h"
#include "codegen/codegen.h"
#include "eval/evaluator.h"
#include "hw/mesh.h"
#include "netbuilder.h"
#include "replaycheck.h"
#include "samples.h"
#include "search/chiplet.h"
#include "search/search.h"
#include "sim/fidelity.h"
#include "sim/simulator.h"

#include <QtTest>

using namespace tilescope;

class TestLinkClasses : public QObject {
    Q_OBJECT
  private slots:
    void handDerivedCrossing_data();
    void handDerivedCrossing();
    void singleChipUnchanged();
    void simulatorAgrees_data();
    void simulatorAgrees();
    void compareNeverLosesToChiplet();
};

// tst_evaluator's exchangeOnTheChain, with its one link between two chiplets. Two 3x3
// convs, 128 -> 128 channels, 28x28, batch 1, on a 2x1 mesh of two 1x1 chiplets, NoC links
// 1 B/cycle: S 1/1 [conv1, conv2] puts conv1 on tile 0 and conv2 on tile 1, so conv1's
// whole output, 128 x 28 x 28 = 100,352 B, crosses the inter-chiplet link (tile 0 -> 1),
// and nothing else does (each conv's DRAM traffic uses its own side's port). Each conv on
// one 1024-MAC tile: 112,896 cycles. conv2 reads conv1 in conv1's coordinates, streamed
// stage by stage (S = 8); the exchange X (bytes / the link's bandwidth) is also the paced
// time P of tile 0's one piece, and what is left of P after conv1 is
// max(P / 8, P - c_p x 7 / 8), c_p being conv1's span: its compute, or its STORE/SEND
// engine's time for that piece when longer (docs/cost-model.md §5). One chip (1 B/cycle):
// P = 100,352, c_p = 112,896, left 12,544, conv2 = 125,440 (tst_evaluator's
// exchangeOnTheChain).
//   inter 0.8 B/cycle: P = 100,352 / 0.8 = 125,440 = c_p, left P / 8 = 15,680;
//     conv2 = 112,896 + 15,680 = 128,576 (its link term, 125,440, is below);
//   inter 0.5 B/cycle: P = c_p = 200,704, left 25,088; conv2 = its link term, 200,704.
// NoC energy: the 100,352 crossing bytes at 2.0 pJ/bit instead of 0.7: + 100,352 x 8 x 1.3
// pJ over the same schedule on one chip.
void TestLinkClasses::handDerivedCrossing_data() {
    QTest::addColumn<double>("interBw");
    QTest::addColumn<double>("conv2Time");
    QTest::newRow("inter 0.8") << 0.8 << 112896.0 + 125440.0 / 8;
    QTest::newRow("inter 0.5") << 0.5 << 200704.0;
}

void TestLinkClasses::handDerivedCrossing() {
    QFETCH(double, interBw);
    QFETCH(double, conv2Time);
    const Network net = test::twoConvs();
    Hardware one = defaultHardware(2, 1, "fast-io");
    one.dramBytesPerCycle = 1e9;
    one.nocBytesPerCycle = 1;
    Hardware two = one;
    two.chiplets.x = 2;
    two.chiplets.linkBytesPerCycle = interBw;
    two.chiplets.pjPerBitHop = 2.0;
    const Mesh mesh(two);
    QVERIFY(mesh.crossesChiplet(mesh.outLink(0, East)));
    EvalOptions opt;
    opt.detail = true;
    const RATree s = test::parseTree("S 1/1\n\tconv1 1\n\tconv2 1\n", net);
    const Evaluation e1 = evaluate(net, one, s, 1, opt);
    const Evaluation e2 = evaluate(net, two, s, 1, opt);
    QVERIFY2(e1.valid, e1.reason.c_str());
    QVERIFY2(e2.valid, e2.reason.c_str());
    const int c1 = s.node(s.root).children[0], c2 = s.node(s.root).children[1];
    QCOMPARE(e2.nodes[size_t(c1)].tileCount, 1);
    QCOMPARE(e2.nodes[size_t(c2)].tileCount, 1);
    QCOMPARE(e1.nodes[size_t(c2)].time, 112896.0 + 12544.0); // one chip: tst_evaluator's
    QCOMPARE(e2.nodes[size_t(c2)].time, conv2Time);
    // The same bytes on the same links; only the crossing ones are costed differently.
    QCOMPARE(e2.dramBytes, e1.dramBytes);
    QCOMPARE(e2.nocHopBytes, e1.nocHopBytes);
    QCOMPARE(e1.interChipletHopBytes, 0.0);
    QCOMPARE(e2.interChipletHopBytes, 100352.0);
    QCOMPARE(e2.linkBytes[size_t(mesh.outLink(0, East))], 100352.0);
    QVERIFY(qFuzzyCompare(e2.energy.noc - e1.energy.noc, 100352.0 * 8 * (2.0 - 0.7)));
    QVERIFY(
        qFuzzyCompare(e2.energy.noc, (e2.nocHopBytes - 100352.0) * 8 * 0.7 + 100352.0 * 8 * 2.0));
    QCOMPARE(e2.energy.dram, e1.energy.dram);
    QCOMPARE(e2.energy.mac, e1.energy.mac);
}

// One chiplet given explicitly (1 x 1, any link figures) is the single-chip template.
void TestLinkClasses::singleChipUnchanged() {
    const Network& net = test::sample("googlenet");
    const Hardware edge = test::preset("edge");
    Hardware same = edge;
    same.chiplets.linkBytesPerCycle = 1;
    same.chiplets.pjPerBitHop = 50;
    const RATree t = RATree::layerSequential(net, 4);
    const Evaluation a = evaluate(net, edge, t, 4, {});
    const Evaluation b = evaluate(net, same, t, 4, {});
    QVERIFY(a.valid && b.valid);
    QCOMPARE(b.delay, a.delay);
    QCOMPARE(b.energy.total(), a.energy.total());
}

void TestLinkClasses::simulatorAgrees_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("tree");
    for (const char* m : {"resnet50", "googlenet", "transformer"})
        for (const char* t : {"ls8", "sa8"})
            QTest::newRow((std::string(m) + " " + t).c_str()) << m << t;
}

// The replay books each link at its own bandwidth (Mesh::linkCapacity), the evaluator
// scales its link terms by Mesh::linkSlowness: on the chiplet preset they agree within 15%,
// with the DRAM bytes exact.
void TestLinkClasses::simulatorAgrees() {
    QFETCH(QString, model);
    QFETCH(QString, tree);
    const Network& net = test::sample(model.toStdString());
    const Hardware h = test::preset("chiplet");
    EvalContext ctx(net, h);
    const int batch = 8;
    RATree t;
    if (tree == "ls8") {
        t = RATree::layerSequential(net, batch);
    } else {
        SearchConfig cfg;
        cfg.seed = 1;
        cfg.iterations = 400;
        cfg.chains = 1;
        cfg.totalBatch = batch;
        cfg.objective = defaultObjective(h);
        auto s = runSearch(net, h, cfg);
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().message.c_str());
        t = s->bestTree;
    }
    QVERIFY(evaluate(ctx, t, batch, {}).valid);
    auto r = generateProgram(ctx, t, batch, {});
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    SimResult s;
    test::replayChecked(*r, h, s);
    if (QTest::currentTestFailed()) return;
    const Evaluation& ev = r->layout.evaluation;
    QCOMPARE(s.dramBytes, ev.dramBytes);
    const ModelAgreement a = modelAgreement(s.delay, ev.delay);
    qInfo("%s: sim %.0f eval %.0f ratio %.3f, inter-chiplet hop-bytes %.0f of %.0f",
          QTest::currentDataTag(), s.delay, ev.delay, a.ratio, ev.interChipletHopBytes,
          ev.nocHopBytes);
    QVERIFY2(a.ratio >= 0.85 && a.ratio <= 1.15, qPrintable(QString::number(a.ratio)));
}

// compare on the chiplet preset: the baseline row is valid, planned on the template's four
// chiplets, and SA (seeded with its tree) is never worse.
void TestLinkClasses::compareNeverLosesToChiplet() {
    const Network& net = test::sample("googlenet");
    const Hardware h = test::preset("chiplet");
    QCOMPARE(chipletCount(h), 4);
    QCOMPARE(chipletLinkBytesPerCycle(h), 8.0);
    QCOMPARE(chipletPlan(net, h, 8).chiplets, 4);
    QString error;
    const QJsonObject j =
        test::compareJson(QStringLiteral("googlenet"), QStringLiteral("chiplet"), &error);
    QVERIFY2(!j.isEmpty(), qPrintable(error));
    const QJsonObject chiplet = j["chiplet"].toObject();
    QVERIFY(chiplet["valid"].toBool());
    const double sa = j["sa"].toObject()["cost"].toDouble();
    QVERIFY(sa > 0);
    QVERIFY(sa <= chiplet["cost"].toDouble());
}

QTEST_GUILESS_MAIN(TestLinkClasses)
#include "tst_linkclasses.moc"
