// The [C, H, W] geometry of tensors of every rank the importer accepts, and their split
// over tiles: a 3-D conv net (rank-5 tensors, depth folded into the rows) and a 1-D conv
// net (rank 3, one row of L columns), whose element-wise layers must read their producers'
// outputs in the geometry those were written in; a 3-D conv partitioned by hand.
#include "eval/transfers.h"
#include "mapping/mapper.h"
#include "model/model_loader.h"
#include "samples.h"

#include <QtTest>

using namespace tilescope;

namespace {

Network loadData(const char* file) {
    auto r = loadModel(std::string(TILESCOPE_TESTDATA) + "/" + file);
    if (!r) qFatal("cannot load %s: %s", file, r.error().message.c_str());
    return std::move(r).value();
}

Box box(std::array<int, 4> lo, std::array<int, 4> hi) {
    Box b;
    b.lo = lo, b.hi = hi;
    return b;
}

// Every Eltwise / Vector layer has the output geometry of each of its producers, so that
// the mapper splits its inputs over tiles instead of delivering them whole.
void checkProducerGeometry(const Network& net) {
    int checked = 0;
    for (const Layer& l : net.layers) {
        if (l.kind != LayerKind::Eltwise && l.kind != LayerKind::Vector) continue;
        for (const LayerInput& in : l.inputs) {
            QVERIFY(in.producer >= 0);
            const Layer& p = net.layers[size_t(in.producer)];
            const std::string what = l.name + " <- " + p.name;
            QVERIFY2(p.outC == l.inC && p.outH == l.inH && p.outW == l.inW, what.c_str());
            QVERIFY2(l.outC == l.inC && l.outH == l.inH && l.outW == l.inW, what.c_str());
            ++checked;
        }
    }
    QVERIFY(checked > 0);
}

} // namespace

class TestTensorGeometry : public QObject {
    Q_OBJECT
  private slots:
    void conv3dResidualAdds();
    void conv3dPartitionByHand();
    void conv1dResidualAdds();
};

// r3d_18: every residual Add (per sample [C, D, H, W]) takes its convs' folded (C, D*H, W).
void TestTensorGeometry::conv3dResidualAdds() {
    const Network net = loadData("r3d_18.onnx");
    checkProducerGeometry(net);
    const int add = net.indexOf("/layer1/layer1.0/Add");
    QVERIFY(add >= 0);
    const Layer& a = net.layers[size_t(add)];
    // The stem's output: 64 channels, 8 frames x 28 rows, 28 columns (input 8 x 56 x 56).
    QCOMPARE(std::vector<int>({a.outC, a.outH, a.outW}), std::vector<int>({64, 8 * 28, 28}));

    // On cloud's 144 tiles at batch 8 each tile receives its share of the two inputs, not
    // the whole per-sample tensor: about twice its output slice (two operands).
    const Hardware hw = test::preset("cloud"); // the mapper keeps a reference
    Mapper mapper(net, hw);
    const LeafMapping& m = mapper.map(add, 144, 8);
    QVERIFY(m.ofmapPerTile > 0);
    QVERIFY2(
        m.ifmapPerTile <= 2.5 * m.ofmapPerTile,
        qPrintable(QStringLiteral("ifmap %1 ofmap %2").arg(m.ifmapPerTile).arg(m.ofmapPerTile)));
    QVERIFY(m.ifmapPerTile < double(a.inputBytesPerSample()) / 4);
}

// A Conv3d 4 -> 8, kernel 3x3x3, pad 1 on [1, 4, 8, 16, 16], by hand: depth folds into the
// rows, 8 x 16 = 128 rows of 16 columns, a 3 x 3 = 9-row kernel; 8 x 128 x 16 = 16384
// outputs, each 4 x 27 = 108 MACs, 1 769 472 in all (the torch-hook count of
// scripts/make_samples.py).
void TestTensorGeometry::conv3dPartitionByHand() {
    const Network net = loadData("conv3d_small.onnx");
    QCOMPARE(net.layers.size(), size_t(1));
    const Layer& l = net.layers[0];
    QCOMPARE(std::vector<int>({l.inC, l.inH, l.inW, l.outC, l.outH, l.outW}),
             std::vector<int>({4, 128, 16, 8, 128, 16}));
    QCOMPARE(std::vector<int>({l.kernelH, l.kernelW, l.strideH, l.strideW, l.padH, l.padW}),
             std::vector<int>({9, 3, 1, 1, 8, 2}));
    QCOMPARE(l.macsPerSample(), Count(1769472));
    QCOMPARE(l.outputBytesPerSample(), Count(16384));
    QCOMPARE(l.weightBytes, Count(8 * 4 * 27 + 8));

    // Rows cut in 4 on 4 tiles: 32 rows (two whole depth slices) of every channel and
    // column per tile, 8 x 32 x 16 = 4096 outputs and 4096 x 108 = 442 368 MACs each.
    LeafMapping m;
    m.ph = 4;
    const TransferGeometry geo(net, 8);
    Count macs = 0, outputs = 0;
    for (int t = 0; t < 4; ++t) {
        const Box o = geo.tileBox(0, m, t, 0, 1);
        QCOMPARE(o, box({0, 0, 32 * t, 0}, {1, 8, 32 * (t + 1), 16}));
        QCOMPARE(o.volume(), 4096LL);
        outputs += o.volume();
        macs += o.volume() * (l.inC / l.groups) * 27;
        // The input window in the folded rows: the kernel's 9 rows around the box with the
        // pad of 4 on top (docs/import.md: the halo of a folded row block is approximate).
        const Box w = geo.window(0, 0, o);
        QCOMPARE(w,
                 box({0, 0, std::max(0, 32 * t - 4), 0}, {1, 4, std::min(128, 32 * t + 36), 16}));
    }
    QCOMPARE(outputs, l.outputBytesPerSample());
    QCOMPARE(macs, l.macsPerSample());
    const Hardware hw = test::preset("edge"); // the mapper keeps a reference
    Mapper mapper(net, hw);
    QCOMPARE(mapper.map(0, 4, 1).macs, Count(1769472));
}

// A 1-D conv net: stem Conv1d, two residual blocks (Conv1d, BN, ReLU, Conv1d, BN) added to
// the block input, [16, 256] per sample. Each Add reads its convs' (16, 1, 256), in
// either operand order, and its inputs split over the tiles.
void TestTensorGeometry::conv1dResidualAdds() {
    const Network net = loadData("conv1d_resnet.onnx");
    QCOMPARE(net.layers.size(), size_t(7));
    checkProducerGeometry(net);
    for (const char* name : {"/Add", "/Add_1"}) {
        const int add = net.indexOf(name);
        QVERIFY2(add >= 0, name);
        const Layer& a = net.layers[size_t(add)];
        QCOMPARE(std::vector<int>({a.outC, a.outH, a.outW}), std::vector<int>({16, 1, 256}));
        const Hardware hw = test::preset("edge"); // the mapper keeps a reference
        Mapper mapper(net, hw);
        const LeafMapping& m = mapper.map(add, 16, 1);
        QVERIFY(m.ofmapPerTile > 0);
        QVERIFY2(m.ifmapPerTile <= 2.5 * m.ofmapPerTile, name);
        QVERIFY(m.ifmapPerTile < double(a.inputBytesPerSample()) / 4);
    }
}

QTEST_GUILESS_MAIN(TestTensorGeometry)
#include "tst_tensorgeometry.moc"
