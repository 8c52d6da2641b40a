// The in-tile storage levels (engine/mapping/storage_levels.h, docs/cost-model.md §2c): one
// convolution's per-level reads and writes worked by hand for the NVDLA-style core's nest,
// the mapper recording them, and the evaluator charging them at each level's energies.
#include "eval/evaluator.h"
#include "mapping/mapper.h"
#include "mapping/storage_levels.h"
#include "netbuilder.h"

#include <QtTest>

using namespace tilescope;

namespace {

Hardware polar() {
    Hardware hw;
    presetHardware("edge", hw);
    return hw;
}

// A 3x3 convolution, 16 -> 64 channels on 8x8 (padded: the input is 8x8 too), batch 1,
// alone on one tile: every figure of the nest is the layer's.
Network oneConv() {
    Network n;
    n.name = "one_conv";
    n.layers.push_back(test::conv("conv", 16, 64, 8, 3, -1));
    return test::finish(n);
}

} // namespace

class TestStorageLevels : public QObject {
    Q_OBJECT
  private slots:
    void handWorkedConv();
    void inputsPassOncePerWeightBlock();
    void mapperRecordsTheCounts();
    void evaluatorChargesEachLevel();
    void noLevelsNoCharge();
};

// Worked by hand (docs/cost-model.md §2c, output channels outermost, weights resident):
// MACs = 64 positions x 64 K x 16 C x 9 taps = 589,824; I = 16 x 8 x 8 = 1,024 bytes,
// W = 16 x 64 x 9 = 9,216, O = 64 x 64 = 4,096.
// al1 (inputs, fanout 8): reads 589,824 / 8 = 73,728; the 9,216 weight bytes fit the
//   16 x 4 KB weight L1s at once, so the inputs pass once: writes 1,024.
// wl1 (weights, fanout 256, but only 64 positions to hold a weight for): reads
//   589,824 / 64 = 9,216 (each weight read once); writes 9,216.
// ol1 (outputs, fanout 8 of the 144 = 16 x 9 terms of each output): writes
//   589,824 / 8 = 73,728 partial sums, reads as many plus the 4,096 finished outputs.
// ol2 (outputs, after ol1): reads and writes the 4,096 outputs.
void TestStorageLevels::handWorkedConv() {
    const Hardware hw = polar();
    QCOMPARE(int(hw.levels.size()), 4);
    const TileNest nest{589824, 1024, 9216, 4096, 64, 64, 16 * 9, 1};
    QCOMPARE(inputPasses(hw.levels, nest), 1.0);
    const LevelAccesses a = countLevelAccesses(hw.levels, nest);
    QCOMPARE(a.reads[0], 73728.0);
    QCOMPARE(a.writes[0], 1024.0);
    QCOMPARE(a.reads[1], 9216.0);
    QCOMPARE(a.writes[1], 9216.0);
    QCOMPARE(a.writes[2], 73728.0);
    QCOMPARE(a.reads[2], 73728.0 + 4096.0);
    QCOMPARE(a.reads[3], 4096.0);
    QCOMPARE(a.writes[3], 4096.0);
    for (size_t i = 4; i < a.reads.size(); ++i)
        QCOMPARE(a.reads[i] + a.writes[i], 0.0);
}

// Weights beyond what the weight levels hold at once come in blocks, and the inputs stream
// past once per block: 200,000 weight bytes over 16 x 4 KB = 65,536 -> 4 passes; never
// more passes than output-channel groups of the input level's fanout (K_t = 16 -> 2).
void TestStorageLevels::inputsPassOncePerWeightBlock() {
    const Hardware hw = polar();
    TileNest nest{1e6, 1000, 200000, 500, 256, 64, 64, 1};
    QCOMPARE(inputPasses(hw.levels, nest), 4.0);
    QCOMPARE(countLevelAccesses(hw.levels, nest).writes[0], 4000.0);
    nest.outChannels = 16;
    QCOMPARE(inputPasses(hw.levels, nest), 2.0);
}

// The mapper's leaf on one tile records the same counts (its nest is the tile's).
void TestStorageLevels::mapperRecordsTheCounts() {
    const Network net = oneConv();
    const Hardware hw = polar();
    Mapper mapper(net, hw);
    const LeafMapping& m = mapper.map(0, 1, 1);
    QCOMPARE(double(m.macs), 589824.0);
    QCOMPARE(m.levelReads[0], 73728.0);
    QCOMPARE(m.levelWrites[0], 1024.0);
    QCOMPARE(m.levelReads[1], 9216.0);
    QCOMPARE(m.levelReads[2], 73728.0 + 4096.0);
    QCOMPARE(m.levelWrites[3], 4096.0);
    QCOMPARE(m.bufferWriteBytes, 4096.0);
}

// The evaluator charges every level its reads and writes at its own energies, under the
// level's key, and the total includes them.
void TestStorageLevels::evaluatorChargesEachLevel() {
    const Network net = oneConv();
    Hardware hw = polar();
    hw.meshX = hw.meshY = 1;
    const RATree tree = test::parseTree("T 1/1\n\tconv 1\n", net);
    const Evaluation e = evaluate(net, hw, tree, 1, EvalOptions{});
    QVERIFY2(e.valid, e.reason.c_str());
    const double al1 = 73728 * 0.3885 + 1024 * 0.3293;
    const double wl1 = 9216 * 0.3053 + 9216 * 0.2471;
    const double ol1 = (73728.0 + 4096) * 0.6416 + 73728 * 0.5672;
    const double ol2 = 4096 * (0.6119 + 0.7919);
    QCOMPARE(e.energy.levels[0], al1);
    QCOMPARE(e.energy.levels[1], wl1);
    QCOMPARE(e.energy.levels[2], ol1);
    QCOMPARE(e.energy.levels[3], ol2);
    QCOMPARE(e.energy.inTile(), al1 + wl1 + ol1 + ol2);
    QCOMPARE(e.energy.total(), e.energy.dram + e.energy.noc + e.energy.mac + e.energy.buffer +
                                   e.energy.weightWrite + e.energy.inTile());
}

// A template without levels charges none (its figures are those it always had).
void TestStorageLevels::noLevelsNoCharge() {
    const Network net = oneConv();
    Hardware hw = defaultHardware(1, 1, "plain");
    const RATree tree = test::parseTree("T 1/1\n\tconv 1\n", net);
    const Evaluation e = evaluate(net, hw, tree, 1, EvalOptions{});
    QVERIFY2(e.valid, e.reason.c_str());
    QCOMPARE(e.energy.inTile(), 0.0);
}

QTEST_GUILESS_MAIN(TestStorageLevels)
#include "tst_storage_levels.moc"
