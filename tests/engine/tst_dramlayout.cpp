// DRAM layouts and runs (docs/cost-model.md §4b): the runs of a box in each layout worked by
// hand, the planner against brute force, a run model in the evaluator, the program's
// descriptors and their replay, and the template keys.
#include "codegen/codegen.h"
#include "eval/dram_layout.h"
#include "eval/evaluator.h"
#include "eval/layout_plan.h"
#include "netbuilder.h"
#include "replaycheck.h"
#include "samples.h"
#include "search/search.h"

#include <QtTest>
#include <random>

using namespace tilescope;
using namespace tilescope::test;

namespace {

// edge with 64-byte bursts and 20 cycles per run.
Hardware edgeWithRuns() {
    Hardware hw = preset("edge");
    hw.dramBurstBytes = 64;
    hw.dramRunOverheadCycles = 20;
    return hw;
}

// A random planner problem: `groups` segments of the DRAM's total and four sides.
LayoutProblem randomProblem(std::mt19937& rng, int tensors, int groups, bool sides) {
    std::uniform_real_distribution<double> bytes(0, 1000);
    LayoutProblem p;
    p.entriesPerGroup = sides ? 5 : 1;
    p.rate.assign(size_t(p.entriesPerGroup), 1.0 / 8);
    p.rate[0] = 1.0 / 16;
    p.base.assign(size_t(groups * p.entriesPerGroup), 0.0);
    for (double& b : p.base)
        b = bytes(rng) * 4;
    for (int t = 0; t < tensors; ++t) {
        LayoutProblem::Tensor ts;
        ts.options.assign(kLayouts.begin(), kLayouts.end());
        for (size_t o = 0; o < ts.options.size(); ++o) {
            std::vector<std::pair<int, double>> adds;
            for (int g = 0; g < groups; ++g)
                if (rng() % 2)
                    for (int e = 0; e < p.entriesPerGroup; ++e)
                        adds.push_back({g * p.entriesPerGroup + e, bytes(rng)});
            ts.adds.push_back(adds);
        }
        p.tensors.push_back(ts);
    }
    return p;
}

} // namespace

class TestDramLayout : public QObject {
    Q_OBJECT
  private slots:
    // A 3x3 window of 16 channels out of a 16 x 56 x 56 map, 8-bit, 64-byte bursts.
    void windowRunsByHand() {
        const std::array<int, 4> shape{1, 16, 56, 56}, lo{0, 0, 10, 20}, hi{1, 16, 13, 23};
        // NCHW: a run per (channel, row) of 3 bytes, each a whole burst.
        DramRuns r = dramRuns(DramLayout::Nchw, shape, lo, hi, 8, 16, 64);
        QCOMPARE(r.runs, std::uint64_t(48));
        QCOMPARE(r.runBytes, std::uint64_t(3));
        QCOMPARE(r.burstBytes, std::uint64_t(48 * 64));
        QCOMPARE(r.base, std::uint64_t(10 * 56 + 20));
        // NHWC: a run per row of 3 pixels x 16 channels.
        r = dramRuns(DramLayout::Nhwc, shape, lo, hi, 8, 16, 64);
        QCOMPARE(r.runs, std::uint64_t(3));
        QCOMPARE(r.runBytes, std::uint64_t(48));
        QCOMPARE(r.burstBytes, std::uint64_t(3 * 64));
        QCOMPARE(r.base, std::uint64_t((10 * 56 + 20) * 16));
        // CHWN with one sample: like NCHW.
        r = dramRuns(DramLayout::Chwn, shape, lo, hi, 8, 16, 64);
        QCOMPARE(r.runs, std::uint64_t(48));
        // NCHWc with c = 16: one block, so like NHWC.
        r = dramRuns(DramLayout::Nchwc, shape, lo, hi, 8, 16, 64);
        QCOMPARE(r.runs, std::uint64_t(3));
        QCOMPARE(r.runBytes, std::uint64_t(48));
        // NCHWc with c = 8 and channels [4, 20) of 24: a partial first block (9 runs of 4),
        // one whole block (3 runs of 24), a partial last block (9 runs of 4).
        r = dramRuns(DramLayout::Nchwc, {1, 24, 56, 56}, {0, 4, 10, 20}, {1, 20, 13, 23}, 8, 8, 64);
        QCOMPARE(r.runs, std::uint64_t(21));
        QCOMPARE(r.burstBytes, std::uint64_t(21 * 64));
        // A whole map is one run in every layout.
        for (DramLayout l : kLayouts)
            QCOMPARE(dramRuns(l, shape, {0, 0, 0, 0}, shape, 8, 16, 64).runs, std::uint64_t(1));
        // What a run costs beyond its bytes: padding, and 20 cycles of a port's 8 B/cycle
        // (edge: 16 B/cycle over two sides).
        const DramRunModel m = dramRunModel(edgeWithRuns());
        r = dramRuns(DramLayout::Nchw, shape, lo, hi, 8, 16, 64);
        QCOMPARE(runOverheadBytes(m, r, 144), double(48 * 64 - 144 + 48 * 20 * 8));
    }

    void layoutNames() {
        for (DramLayout l : kLayouts)
            QCOMPARE(*layoutFromName(layoutName(l)), l);
        QVERIFY(!layoutFromName("nwhc"));
        QVERIFY(layoutChoiceFromName("auto")->planned);
        QCOMPARE(layoutChoiceFromName("chwn")->fixed, DramLayout::Chwn);
        QVERIFY(!layoutChoiceFromName("rows"));
    }

    // The backtracking finds what trying every plan finds: 8 tensors x 4 layouts.
    void plannerEqualsBruteForce() {
        std::mt19937 rng(7);
        int beyondFirst = 0; // rounds whose best plan is not each tensor's own cheapest
        for (int round = 0; round < 30; ++round) {
            const LayoutProblem p = randomProblem(rng, 8, 3, round % 3 != 0);
            const LayoutPlan fast = planLayouts(p);
            const LayoutPlan all = planLayoutsBruteForce(p);
            QCOMPARE(all.nodes, 65536LL);
            QVERIFY(fast.exhaustive);
            QVERIFY2(
                std::abs(fast.cycles - all.cycles) <= 1e-9 * all.cycles,
                qPrintable(
                    QString("round %1: %2 vs %3").arg(round).arg(fast.cycles).arg(all.cycles)));
            QCOMPARE(planCycles(p, fast.option), fast.cycles);
            if (planLayouts(p, 1).cycles > all.cycles * (1 + 1e-9)) ++beyondFirst;
        }
        QVERIFY(beyondFirst > 0);
    }

    // On a network whose every feature map goes through DRAM (layer by layer) and a template
    // whose DRAM sides have controllers of their own (so the layouts interact), the plan is
    // the best of every combination of pinned layouts.
    void plannedNetworkEqualsBruteForce() {
        Network n;
        n.layers.push_back(conv("c1", 8, 16, 20, 3, -1));
        n.layers.push_back(conv("c2", 16, 16, 20, 3, 0));
        n.layers.push_back(conv("c3", 16, 24, 20, 1, 1));
        n.layers.push_back(add("a", 16, 20, 0, 1));
        n.layers.push_back(conv("c4", 24, 8, 20, 3, 2));
        n = finish(n);
        Hardware hw = edgeWithRuns();
        hw.dramPortBytesPerCycle = 6;
        hw.dramSides = {MeshSide::West, MeshSide::East, MeshSide::North};
        auto tree = defaultInitialTree(n, hw, SearchMode::LS, 2, {1, 1});
        QVERIFY(bool(tree));
        EvalOptions opt;
        opt.objective = {1, 1};
        const Evaluation planned = evaluate(n, hw, *tree, 2, opt);
        QVERIFY(planned.valid && planned.layouts.active);
        std::vector<std::string> tensors{"x"};
        for (const Layer& l : n.layers)
            tensors.push_back(l.name);
        QVERIFY(tensors.size() <= 8);
        double best = std::numeric_limits<double>::infinity();
        std::vector<int> combo(tensors.size(), 0);
        for (bool more = true; more;) {
            opt.layouts = LayoutChoice{};
            for (size_t t = 0; t < tensors.size(); ++t)
                opt.layouts.pins[tensors[t]] = kLayouts[size_t(combo[t])];
            const Evaluation e = evaluate(n, hw, *tree, 2, opt);
            QVERIFY(e.valid);
            best = std::min(best, e.layouts.planCycles);
            more = false;
            for (size_t t = 0; t < combo.size() && !more; ++t) {
                more = ++combo[t] < kLayoutCount;
                if (!more) combo[t] = 0;
            }
        }
        QVERIFY2(std::abs(planned.layouts.planCycles - best) <= 1e-9 * best,
                 qPrintable(QString("%1 vs %2").arg(planned.layouts.planCycles).arg(best)));
        QVERIFY(planned.layouts.planExhaustive);
    }

    // With a run model every DRAM tensor gets a layout; the plan is no slower on the DRAM
    // than any single layout, the bytes are those without runs, and the time grows.
    void plannedBeatsEveryFixedLayout() {
        const Network& net = sample("resnet50");
        const Hardware plain = preset("edge"), runs = edgeWithRuns();
        auto tree = defaultInitialTree(net, plain, SearchMode::LS, 1, {2, 1});
        QVERIFY(bool(tree));
        EvalOptions opt;
        opt.objective = {2, 1};
        opt.detail = true;
        const Evaluation a = evaluate(net, plain, *tree, 1, opt);
        const Evaluation b = evaluate(net, runs, *tree, 1, opt);
        QVERIFY(a.valid && b.valid);
        QVERIFY(!a.layouts.active);
        QVERIFY(b.layouts.active);
        QCOMPARE(b.dramBytes, a.dramBytes);
        QCOMPARE(b.energy.dram, a.energy.dram);
        QVERIFY(b.delay > a.delay);
        for (double fixed : b.layouts.fixedCycles)
            QVERIFY(b.layouts.planCycles <= fixed * (1 + 1e-12));
        // NCHW reads a conv's windows in short runs: the plan is far ahead of it.
        QVERIFY(b.layouts.fixedCycles[size_t(DramLayout::Nchw)] > 2 * b.layouts.planCycles);
        // One layout for all: every DRAM tensor in it.
        opt.layouts = *layoutChoiceFromName("nhwc");
        const Evaluation c = evaluate(net, runs, *tree, 1, opt);
        for (int l : c.layouts.output)
            QVERIFY(l == -1 || l == int(DramLayout::Nhwc));
        QVERIFY(c.delay >= b.delay * (1 - 1e-9) || c.layouts.planCycles >= b.layouts.planCycles);
        // A pin holds whatever the plan would choose.
        opt.layouts = LayoutChoice{};
        opt.layouts.pins[net.layers[0].name] = DramLayout::Chwn;
        const Evaluation d = evaluate(net, runs, *tree, 1, opt);
        QCOMPARE(d.layouts.output[0], int(DramLayout::Chwn));
    }

    // The program's LOAD/STORE descriptors carry the runs the evaluator charged; the replay
    // holds the DRAM for them, moves the schedule's bytes and agrees with the estimate.
    void programCarriesTheRuns() {
        const Network& net = sample("resnet50");
        const Hardware hw = edgeWithRuns();
        auto tree = defaultInitialTree(net, hw, SearchMode::LS, 2, {2, 1});
        QVERIFY(bool(tree));
        EvalContext ctx(net, hw);
        EvalOptions opt;
        opt.objective = {2, 1};
        auto r = generateProgram(ctx, *tree, 2, opt);
        QVERIFY2(bool(r), r ? "" : r.error().message.c_str());
        SimResult sim;
        replayChecked(*r, hw, sim);
        if (QTest::currentTestFailed()) return;
        double runs = 0;
        for (const auto& t : r->program.tiles)
            for (const auto& i : t.instructions) {
                const bool dram = i.op == Op::Store || (i.op == Op::Load && i.src == kDram);
                QCOMPARE(i.layout >= 0, dram);
                runs += double(i.runs);
            }
        double estimated = 0;
        for (double x : r->layout.evaluation.layouts.runs)
            estimated += x;
        QCOMPARE(runs, estimated);
        const double ratio = sim.delay / r->layout.evaluation.delay;
        QVERIFY2(ratio > 0.85 && ratio < 1.15, qPrintable(QString::number(ratio)));
        // program.bin keeps the descriptors (version 3) and reads them back.
        const std::string bin = encodeProgram(r->program);
        QCOMPARE(int(std::uint8_t(bin[8])), 3);
        auto back = decodeProgram(bin, "program.bin");
        QVERIFY(bool(back));
        QCOMPARE(back->tiles.size(), r->program.tiles.size());
        for (size_t t = 0; t < back->tiles.size(); ++t)
            for (size_t k = 0; k < back->tiles[t].instructions.size(); ++k) {
                const Instruction &x = back->tiles[t].instructions[k],
                                  &y = r->program.tiles[t].instructions[k];
                QCOMPARE(x.layout, y.layout);
                QCOMPARE(x.base, y.base);
                QCOMPARE(x.runs, y.runs);
                QCOMPARE(x.runBytes, y.runBytes);
                QCOMPARE(x.burstBytes, y.burstBytes);
                QVERIFY(x == y);
            }
    }

    // Without a run model the program is written as before (version 2, no descriptors).
    void noRunModelNoDescriptors() {
        const Network& net = sample("resnet50");
        const Hardware hw = preset("edge");
        auto tree = defaultInitialTree(net, hw, SearchMode::LS, 1, {2, 1});
        QVERIFY(bool(tree));
        EvalContext ctx(net, hw);
        auto r = generateProgram(ctx, *tree, 1, {});
        QVERIFY(bool(r));
        for (const auto& t : r->program.tiles)
            for (const auto& i : t.instructions)
                QCOMPARE(i.layout, -1);
        QCOMPARE(int(std::uint8_t(encodeProgram(r->program)[8])), 2);
    }

    void templateKeys() {
        const std::string base = R"({"mesh": {"x": 2, "y": 2}, "dram": {%1}})";
        auto parse = [&](const char* dram) {
            return parseHardware(QString::fromStdString(base).arg(dram).toStdString(), "t.json");
        };
        auto ok = parse(R"("burst_bytes": 32, "run_overhead_cycles": 12.5, "channel_block": 8)");
        QVERIFY(bool(ok));
        QCOMPARE(ok->dramBurstBytes, 32);
        QCOMPARE(ok->dramRunOverheadCycles, 12.5);
        QCOMPARE(ok->dramChannelBlock, 8);
        // Written back and read again.
        auto again = parseHardware(hardwareToJson(*ok).dump(), "again.json");
        QVERIFY(bool(again));
        QCOMPARE(again->dramBurstBytes, 32);
        for (const char* bad :
             {R"("burst_bytes": 0)", R"("run_overhead_cycles": -1)", R"("channel_block": 2.5)"}) {
            auto e = parse(bad);
            QVERIFY(!e);
            QVERIFY2(e.error().message.find("t.json") != std::string::npos &&
                         e.error().message.find("dram.") != std::string::npos,
                     e.error().message.c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestDramLayout)
#include "tst_dramlayout.moc"
