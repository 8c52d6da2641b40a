// Per-leaf traffic against its lower bounds (engine/report/layers.h, docs/cost-model.md §2a):
// no leaf of an LS or annealed tree of the samples moves less than its bound at its group's
// boundary nor between its buffers and arrays (where every leaf has a positive bound), the
// array bound matches hand-worked cases, the result JSON carries the figures, the mapper's
// output-block order stays near the bound on single 3x3 convolutions, and the sampler returns valid
// trees.
#include "clirunner.h"
#include "eval/evaluator.h"
#include "mapping/iobound.h"
#include "mapping/mapper.h"
#include "model/model_loader.h"
#include "netbuilder.h"
#include "report/layers.h"
#include "samples.h"
#include "search/sampling.h"
#include "search/search.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <map>
#include <memory>
#include <random>

using namespace tilescope;

namespace {

const std::string kSamples = TILESCOPE_SAMPLES;

using test::preset;
using test::sample;

// Every leaf moves at least its bound, at its group's boundary and between its buffers and
// arrays (where the bound is always positive), and the whole run's DRAM traffic is at
// least the network's compulsory traffic. The bound is positive for every leaf that touches DRAM,
// has weights or exchanges data with disjoint tiles; a leaf that only hands data on in place
// between leaves sharing its tiles may have none (docs/cost-model.md §2a), and then it
// moves nothing across its boundary. Those are counted.
// Returns the number of leaves.
// A tree's evaluation with the per-node figures, and its per-leaf table.
struct Figures {
    Evaluation e;
    std::vector<LayerFigures> f;
};
Figures figuresOf(const Network& net, const Hardware& hw, const RATree& tree, int batch) {
    EvalOptions opt;
    opt.detail = true;
    Figures r{evaluate(net, hw, tree, batch, opt), {}};
    r.f = layerFigures(r.e, tree, net, hw);
    return r;
}

int checkTree(const Network& net, const Hardware& hw, const RATree& tree, int batch,
              const char* what) {
    const auto [e, layers] = figuresOf(net, hw, tree, batch);
    if (!e.valid) qFatal("%s: invalid tree: %s", what, e.reason.c_str());
    if (layers.size() != net.layers.size()) qFatal("%s: %zu entries", what, layers.size());
    int zero = 0;
    for (const LayerFigures& f : layers) {
        const auto& nf = e.nodes[size_t(f.node)];
        bool touchesDram = nf.writesDram || net.layers[size_t(f.layer)].weightBytes > 0;
        for (char d : nf.inputViaDram)
            touchesDram |= d != 0;
        if (touchesDram && !(f.ioLowerBoundBytes > 0))
            qFatal("%s: %s has bound %g", what, f.name.c_str(), f.ioLowerBoundBytes);
        zero += !(f.ioLowerBoundBytes > 0);
        // A leaf without a bound moves nothing across its group's boundary (inputs from a
        // producer straddling the group count what its outside tiles must hold,
        // docs/cost-model.md §2a).
        if (!(f.ioLowerBoundBytes > 0) && f.movedBytes > 0)
            qFatal("%s: %s moves %g across its boundary without a bound", what, f.name.c_str(),
                   f.movedBytes);
        if (!(f.movedBytes >= f.ioLowerBoundBytes * (1 - 1e-9)))
            qFatal("%s: %s moves %g < bound %g (compulsory %g, pebble %g)", what, f.name.c_str(),
                   f.movedBytes, f.ioLowerBoundBytes, f.compulsoryBytes, f.pebbleBoundBytes);
        // The array level: positive for every leaf, and no leaf moves less than it between
        // its buffers and arrays (docs/cost-model.md §2a "Two levels").
        if (!(f.arrayLowerBoundBytes > 0))
            qFatal("%s: %s has array bound %g", what, f.name.c_str(), f.arrayLowerBoundBytes);
        if (!(f.arrayBytes >= f.arrayLowerBoundBytes * (1 - 1e-9)))
            qFatal("%s: %s moves %g between buffers and arrays < array bound %g (%s, %d tiles)",
                   what, f.name.c_str(), f.arrayBytes, f.arrayLowerBoundBytes, nf.mapping.c_str(),
                   f.tiles);
    }
    if (zero)
        qInfo("%s: %d of %zu leaves without a bound (on-chip hand-over only)", what, zero,
              layers.size());
    const double compulsory = compulsoryDramBytes(net, hw, batch);
    if (!(e.dramBytes >= compulsory * (1 - 1e-9)))
        qFatal("%s: DRAM %g < compulsory %g", what, e.dramBytes, compulsory);
    return int(layers.size());
}

} // namespace

class TstBounds : public QObject {
    Q_OBJECT
  private slots:
    void handWorkedConv();
    void arrayLevelByHand();
    void groupedPebbleBoundIsBelowThePerTileSum();
    void pebbleBoundIsItsFormula();
    void arrayFloorHoldsForEveryMapping();
    void noLeafBeatsItsBound_data();
    void noLeafBeatsItsBound();
    void straddlingProducerIsCounted();
    void outputBlockNearTheBound();
    void jsonCarriesLayers();
    void samplerGivesValidTrees();
};

// docs/cost-model.md §2a: ResNet-50's 3x3 conv 256 -> 256 at 14x14 on one edge tile.
void TstBounds::handWorkedConv() {
    Network n;
    n.name = "one_conv";
    n.layers.push_back(test::conv("conv", 256, 256, 14, 3, -1));
    n = test::finish(n);
    const Layer& l = n.layers[0];
    QCOMPARE(realMacs(l, 1), 256.0 * 256 * 40 * 40); // 14 rows: taps meet 13 + 14 + 13 rows
    const Hardware hw = preset("edge");
    const FastMemory m = groupMemory(hw, 1);
    QCOMPARE(m.bytes, 1048576.0 + 65536.0);
    QCOMPARE(layerPebbleBound(l, 1, m), 0.0); // the buffer holds the layer: no pebble term
    // Pebble bound on the array's local storage: positive, below its leading term.
    const double local = layerPebbleBound(l, 1, {kArrayLocalBytes, 1, kPartialSumBytes});
    const double lead = 2 * realMacs(l, 1) * 2 / std::sqrt(9 * kArrayLocalBytes);
    QVERIFY(local > 0 && local < lead);
    // On one tile it moves exactly its compulsory bytes: input, weights, output once.
    const RATree t = test::parseTree("T 1/1\n\tconv 1\n", n);
    const auto [e, f] = figuresOf(n, hw, t, 1);
    QVERIFY2(e.valid, e.reason.c_str());
    QCOMPARE(f.size(), size_t(1));
    QCOMPARE(f[0].compulsoryBytes, 256.0 * 14 * 14 + 256.0 * 256 * 9 + 256.0 * 14 * 14);
    QCOMPARE(f[0].ioLowerBoundBytes, f[0].compulsoryBytes);
    QCOMPARE(f[0].dramBytes, f[0].compulsoryBytes);
    QCOMPARE(f[0].ratio, 1.0);
    // The array level (docs/cost-model.md §2a "Two levels"): every operand once into or out
    // of the arrays, 50,176 + 589,824 + 50,176 bytes; the pebble term on the arrays' 64 KiB
    // is below that even on one tile (it falls with more tiles), so the bound is the sum.
    const double once = 256.0 * 14 * 14 + 256.0 * 256 * 9 + 256.0 * 14 * 14;
    QVERIFY(local < once);
    QCOMPARE(f[0].arrayLowerBoundBytes, once);
    QCOMPARE(f[0].arrayBytes, e.nodes[size_t(f[0].node)].runArrayBytes);
    QVERIFY(f[0].arrayBytes >= once);
    QCOMPARE(f[0].arrayRatio, f[0].arrayBytes / once);
}

// The array level by hand: an Add of two 64 x 28 x 28 maps on the edge mesh, 4 samples,
// reads both inputs and writes its output once between its buffers and its vector units,
// whatever the partition: 3 x 50,176 x 4 bytes, and the mapper moves exactly that. A
// 256 -> 512 3x3 conv at 28x28 on the same tiles: the arrays' pebble bound (the tiles'
// bounds summed at each M, mapping/iobound.h) exceeds its operands once.
void TstBounds::arrayLevelByHand() {
    Network n;
    n.name = "array";
    n.layers.push_back(test::conv("c", 64, 64, 28, 3, -1));
    n.layers.push_back(test::add("add", 64, 28, 0, 0));
    n.layers.push_back(test::conv("big", 64, 256, 28, 3, 1));
    n.layers.push_back(test::conv("big2", 256, 512, 28, 3, 2));
    n = test::finish(n);
    const Hardware hw = preset("edge");
    const double db = hw.dataBits / 8.0;
    const RATree t = test::parseTree("T 4/1\n\tc 4\n\tadd 4\n\tbig 4\n\tbig2 4\n", n);
    const auto [e, f] = figuresOf(n, hw, t, 4);
    QVERIFY2(e.valid, e.reason.c_str());
    QCOMPARE(f.size(), size_t(4));
    const LayerFigures& add = f[1];
    QCOMPARE(add.name, std::string("add"));
    QCOMPARE(add.arrayLowerBoundBytes, 3 * 64.0 * 28 * 28 * 4 * db);
    QCOMPARE(add.arrayBytes, add.arrayLowerBoundBytes);
    QCOMPARE(add.arrayRatio, 1.0);
    const LayerFigures& big = f[3];
    const Layer& l = n.layers[3];
    const double operands = (256.0 * 28 * 28 * 4 + 256.0 * 512 * 9 + 512.0 * 28 * 28 * 4) * db;
    const FastMemory local{kArrayLocalBytes, db, kPartialSumBytes};
    const double pebble =
        pebbleBoundBytes(realMacs(l, 4), 512.0 * 28 * 28 * 4, 9, local, big.tiles);
    // Leading term: 2 MACs e sqrt(p) / sqrt(R S), MACs ~ 256 x 512 x 9 x 784 x 4.
    const double lead = 2 * realMacs(l, 4) * db * 2 / std::sqrt(9 * kArrayLocalBytes);
    QVERIFY(pebble > operands && pebble < lead);
    QCOMPARE(big.arrayLowerBoundBytes, pebble);
    QVERIFY(big.arrayBytes >= big.arrayLowerBoundBytes);
}

// The array bound's pebble term for a group (mapping/iobound.h, processors = tiles) is at
// most the tiles' per-tile bounds summed for an even split, the mapper's per-tile
// ioLowerBound: so the group bound stays below what any of the mapper's tilings moves.
// The bound as docs/cost-model.md §2a states it, every power taken where it is used;
// pebbleBoundBytes keeps the powers of the last memory it saw and must give the same
// figure to the last bit, whichever memories come in turn.
void TstBounds::pebbleBoundIsItsFormula() {
    auto formula = [](double macs, double outputs, double reuse, const FastMemory& m,
                      double processors) {
        if (macs <= 0 || m.bytes <= 0) return 0.0;
        const double e = m.elementBytes, p = m.partialBytes, big = std::max(e, p);
        const double scale = std::sqrt(reuse / (e * e * p));
        auto g = [&](double z) { return scale * std::pow(z / 3.0, 1.5); };
        double best = 0;
        for (int j = -40; j <= 40; ++j) {
            const double M = 2.0 * m.bytes * std::pow(2.0, j / 8.0);
            const double Y = m.bytes + M + big, xMax = Y / e;
            const double ga = g(Y), gb = g(2 * Y);
            const double chordA = (g(Y + p * xMax) - ga) / xMax;
            const double chordB = (g(2 * Y + p * xMax) - gb) / xMax;
            best = std::max(best, M * ((macs - chordA * outputs) / ga - processors));
            best = std::max(best, M * ((macs - chordB * outputs) / gb - processors));
        }
        return best;
    };
    const FastMemory memories[] = {{kArrayLocalBytes, 1, kPartialSumBytes},
                                   {kArrayLocalBytes, 2, kPartialSumBytes},
                                   {1048576.0 + 65536.0, 1, kPartialSumBytes},
                                   {144 * (1048576.0 + 65536.0), 2, 4},
                                   {0, 1, 4}};
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    int positive = 0;
    for (int i = 0; i < 2000; ++i) {
        const FastMemory& m = memories[rng() % std::size(memories)];
        const double macs = std::floor(std::pow(10.0, 6 + 7 * unit(rng)));
        const double outputs = std::floor(macs / (1 + 5000 * unit(rng)));
        const double reuse = double(1 + rng() % 9);
        const double processors = i % 2 ? double(1 + rng() % 1024) : 0.0;
        const double got = pebbleBoundBytes(macs, outputs, reuse, m, processors);
        const double want = formula(macs, outputs, reuse, m, processors);
        if (!(got == want))
            QFAIL(qPrintable(QString("macs %1 outputs %2 memory %3: %4, the formula %5")
                                 .arg(macs)
                                 .arg(outputs)
                                 .arg(m.bytes)
                                 .arg(got, 0, 'g', 17)
                                 .arg(want, 0, 'g', 17)));
        positive += got > 0;
    }
    QVERIFY(positive > 200); // the bound bites in many of them
}

void TstBounds::groupedPebbleBoundIsBelowThePerTileSum() {
    const FastMemory local{kArrayLocalBytes, 1, kPartialSumBytes};
    for (double macs : {1e6, 1e8, 1e10})
        for (int tiles : {1, 2, 4, 16, 64}) {
            const double outputs = macs / 2000;
            const double group = pebbleBoundBytes(macs, outputs, 9, local, tiles);
            const double perTile = pebbleBoundBytes(macs / tiles, outputs / tiles, 9, local);
            QVERIFY(group <= tiles * perTile * (1 + 1e-12));
            if (tiles == 1) QCOMPARE(group, perTile);
        }
}

// Every mapping the mapper makes of two samples' layers, on 1 ... 16 tiles of edge and cim
// at batch 1, 2, 4, 8, moves at least the array floor between buffers and arrays; on
// MAC-array tiles also at least its own per-tile bound on every tile (a 1x1 stride-2 conv
// reads only the input rows and columns its windows touch: docs/cost-model.md §2a).
void TstBounds::arrayFloorHoldsForEveryMapping() {
    int checked = 0;
    for (const char* model : {"resnet50", "transformer"})
        for (const char* hn : {"edge", "cim"}) {
            const Network& net = sample(model);
            const Hardware hw = preset(hn);
            Mapper mapper(net, hw);
            for (size_t l = 0; l < net.layers.size(); ++l)
                for (int t = 1; t <= 16; ++t)
                    for (int b : {1, 2, 4, 8}) {
                        const LeafMapping& m = mapper.map(int(l), t, b);
                        const double floor = arrayLowerBoundBytes(net.layers[l], b, t, hw);
                        QVERIFY2(floor > 0 && m.bufferAccessBytes >= floor * (1 - 1e-12),
                                 net.layers[l].name.c_str());
                        if (hw.arch != TileArch::Cim)
                            QVERIFY2(m.bufferAccessBytes >= m.ioLowerBound * t * (1 - 1e-12),
                                     net.layers[l].name.c_str());
                        ++checked;
                    }
        }
    QCOMPARE(checked, (72 + 52) * 2 * 16 * 4);
}

void TstBounds::noLeafBeatsItsBound_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("hw");
    for (const char* m : {"resnet50", "googlenet", "transformer", "mobilenet_v2"})
        for (const char* h : {"edge", "cloud", "cim"})
            QTest::newRow((std::string(m) + " " + h).c_str()) << QString(m) << QString(h);
}

void TstBounds::noLeafBeatsItsBound() {
    QFETCH(QString, model);
    QFETCH(QString, hw);
    const Network& net = sample(model.toStdString());
    const Hardware h = preset(hw.toUtf8().constData());
    for (SearchMode mode : {SearchMode::LS, SearchMode::Set}) {
        SearchConfig c;
        c.mode = mode;
        c.totalBatch = 4;
        c.iterations = 150;
        c.portfolio = false;
        auto r = runSearch(net, h, c);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        const std::string what =
            model.toStdString() + " " + hw.toStdString() + " " + toString(mode);
        checkTree(net, h, r->initialTree, c.totalBatch, (what + " start").c_str());
        QCOMPARE(checkTree(net, h, r->bestTree, c.totalBatch, what.c_str()),
                 int(net.layers.size()));
    }
}

// An Add in an S cut reads two tensors made on the whole mesh (its group is a part of
// theirs) and hands its output on to an Add on the whole mesh: no weights, nothing through
// DRAM, yet the pieces on the tiles outside its group must come in, and those its
// consumer's outside tiles need must leave. Its bound counts both (needed less what the
// shared tiles can hold), so it is positive and below what it moves.
void TstBounds::straddlingProducerIsCounted() {
    Network n;
    n.name = "straddle";
    n.layers.push_back(test::conv("stem", 64, 64, 28, 3, -1));
    n.layers.push_back(test::conv("c1", 64, 64, 28, 3, 0));
    n.layers.push_back(test::add("add", 64, 28, 1, 1));
    n.layers.push_back(test::conv("side", 64, 64, 28, 3, 1));
    n.layers.push_back(test::add("add2", 64, 28, 2, 3));
    n = test::finish(n);
    const Hardware h = preset("edge");
    const RATree t = test::parseTree("T 4/1\n\tT 4/1\n\t\tstem 4\n\t\tc1 4\n\t\tS 4/4\n"
                                     "\t\t\tadd 1\n\t\t\tside 1\n\t\tadd2 4\n",
                                     n);
    checkTree(n, h, t, 4, "straddle");
    const auto [e, figures] = figuresOf(n, h, t, 4);
    QVERIFY(e.valid);
    for (const LayerFigures& f : figures) {
        if (f.name != "add") continue;
        const auto& nf = e.nodes[size_t(f.node)];
        QVERIFY(nf.tileCount < h.tiles());
        QVERIFY(f.nocBytesIn > 0);
        QVERIFY2(f.compulsoryBytes > 0, qPrintable(QString::number(f.compulsoryBytes)));
        QVERIFY(f.ioLowerBoundBytes <= f.movedBytes);
        // By hand (docs/cost-model.md §2a): a tile of a leaf partitioned K x B x H x W holds
        // at most ceil(64/K)/64 x ceil(4/B)/4 x ceil(28/H)/28 x ceil(28/W)/28 of a 64 x 28 x 28
        // map (4 samples). Each of the add's two inputs (c1, 50,176 B a sample) comes from
        // the whole mesh, less what c1 left on the add's own tiles; its output goes to add2
        // on the whole mesh, whose tiles outside the add's group need all but what add2's
        // tiles inside it read: an elementwise tile reads its own output box.
        auto share = [&](const std::string& name) {
            for (const LayerFigures& g : figures)
                if (g.name == name) {
                    const auto& p = e.nodes[size_t(g.node)].partitionFactors;
                    auto part = [](double d, int k) { return std::ceil(d / k) / d; };
                    return part(64, p[0]) * part(4, p[1]) * part(28, p[2]) * part(28, p[3]);
                }
            return 0.0;
        };
        const double map = 64.0 * 28 * 28, shared = nf.tileCount;
        const double in = 2 * (map - shared * share("c1") * map);
        const double out = map - shared * share("add2") * map;
        QVERIFY(out > 0);
        QCOMPARE(f.compulsoryBytes, 4 * (in + out));
        QVERIFY(f.nocBytesOut >= 4 * out);
        return;
    }
    QFAIL("no leaf named add");
}

// The output-block order (docs/cost-model.md §2a) on single 3x3 convolutions on one tile:
// no order moves less than max(bound, compulsory); where the output block spans all the
// tile's output channels (its block fits: one pass over the inputs) the order is within
// 1.25 of it. Where it does not, the provable bound is looser than that (the doc gives
// the figures).
void TstBounds::outputBlockNearTheBound() {
    struct Case {
        int c, k, hw;
    };
    const Hardware hw = preset("edge");
    int chosen = 0, fits = 0;
    for (const Case& cs :
         {Case{64, 64, 56}, Case{128, 128, 28}, Case{256, 256, 14}, Case{512, 512, 7},
          Case{64, 128, 28}, Case{32, 32, 112}, Case{256, 256, 28}, Case{128, 128, 56}}) {
        Network n;
        n.name = "one_conv";
        n.layers.push_back(test::conv("conv", cs.c, cs.k, cs.hw, 3, -1));
        n = test::finish(n);
        Mapper mapper(n, hw);
        const LeafMapping& m = mapper.map(0, 1, 1);
        const double ratio = m.bufferAccessBytes / m.ioLowerBound;
        qInfo("%d->%d at %dx%d: %s, traffic %.0f, bound %.0f, ratio %.3f", cs.c, cs.k, cs.hw, cs.hw,
              m.tiling.c_str(), m.bufferAccessBytes, m.ioLowerBound, ratio);
        QVERIFY(ratio >= 1 - 1e-9);
        if (m.tiling.rfind("OB z" + std::to_string(cs.k) + " ", 0) == 0) {
            ++chosen;
            QVERIFY2(ratio <= 1.25, m.tiling.c_str());
        }
        // The leading-order traffic of the bound-achieving dataflow (docs/cost-model.md §2a,
        // "The dataflow against its estimate"): output blocks x y z with x y = R z and
        // x y z p = S, each block reading its inputs and weights once:
        // 2 MACs e sqrt(p) / sqrt(R S) + the outputs. Where that block fits the layer
        // (z <= K, x y <= H W) the mapper's best order stays within 1.25 of it (or of the
        // compulsory bytes, when they are larger).
        const double e = hw.dataBits / 8.0, p = kPartialSumBytes, S = kArrayLocalBytes, R = 9;
        const double z = std::sqrt(S / (p * R));
        if (z > cs.k || R * z > double(cs.hw) * cs.hw) continue;
        const double macs = double(cs.c) * cs.k * 9 * cs.hw * cs.hw;
        const double outputs = double(cs.k) * cs.hw * cs.hw * e;
        const double estimate = 2 * macs * e * std::sqrt(p) / std::sqrt(R * S) + outputs;
        const double toEstimate = m.bufferAccessBytes / std::max(estimate, m.ioLowerBound);
        qInfo("    block fits: estimate %.0f, traffic / max(estimate, bound) %.3f", estimate,
              toEstimate);
        QVERIFY2(toEstimate <= 1.25, m.tiling.c_str());
        ++fits;
    }
    QVERIFY(chosen > 0);
    QVERIFY(fits >= 4); // 3x3 layers of ResNet-50's sizes where the block fits
}

void TstBounds::jsonCarriesLayers() {
    QTemporaryDir dir;
    const QString out = dir.filePath("r.json");
    const auto run =
        test::runCli({"anneal", QString::fromStdString(kSamples + "/models/resnet50.onnx"), "--hw",
                      "edge", "--batch", "2", "--iterations", "100", "--json", out, "--quiet"});
    QVERIFY2(run.status == 0, qPrintable(run.err));
    QFile f(out);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject j = QJsonDocument::fromJson(f.readAll()).object();
    QVERIFY(j.contains("dram_bytes")); // the existing keys stay
    QVERIFY(j.contains("segments"));
    const double compulsory = j["compulsory_dram_bytes"].toDouble();
    QVERIFY(compulsory > 0);
    QVERIFY(j["dram_bytes"].toDouble() >= compulsory);
    const QJsonArray layers = j["layers"].toArray();
    QCOMPARE(layers.size(), qsizetype(sample("resnet50").layers.size()));
    for (const auto& v : layers) {
        const QJsonObject l = v.toObject();
        for (const char* key : {"name", "tiles", "dram_bytes", "noc_bytes_in", "noc_bytes_out",
                                "io_lower_bound_bytes", "compulsory_bytes", "ratio", "array_bytes",
                                "array_lower_bound_bytes", "array_ratio"})
            QVERIFY2(l.contains(key), key);
        const double array = l["array_bytes"].toDouble();
        const double arrayBound = l["array_lower_bound_bytes"].toDouble();
        QVERIFY(arrayBound > 0);
        QVERIFY(array >= arrayBound * (1 - 1e-9));
        QCOMPARE(l["array_ratio"].toDouble(), array / arrayBound);
        const double moved = l["dram_bytes"].toDouble() + l["noc_bytes_in"].toDouble() +
                             l["noc_bytes_out"].toDouble();
        const double bound = l["io_lower_bound_bytes"].toDouble();
        QVERIFY(bound >= l["compulsory_bytes"].toDouble());
        QVERIFY(moved >= bound * (1 - 1e-9));
        QCOMPARE(l["ratio"].toDouble(), bound > 0 ? moved / bound : 0.0);
    }
}

void TstBounds::samplerGivesValidTrees() {
    const Network& net = sample("resnet50");
    const Hardware hw = preset("edge");
    SampleConfig c;
    c.count = 40;
    c.totalBatch = 4;
    int calls = 0;
    const auto s = sampleTrees(net, hw, c, [&](int done, int total) {
        ++calls;
        QCOMPARE(total, 40);
        QVERIFY(done <= total);
    });
    QCOMPARE(int(s.size()), 40);
    QCOMPARE(calls, 40);
    int deeper = 0;
    for (const TreeSample& t : s) {
        const Evaluation e = evaluate(net, hw, t.tree, 4, {});
        QVERIFY(e.valid);
        QCOMPARE(e.delay, t.delay);
        QVERIFY(t.delay >= dramBoundaryDelay(hw, t.dramBytes) * (1 - 1e-9));
        QVERIFY(t.dramTimeRatio > 0 && t.dramTimeRatio <= 1 + 1e-9);
        deeper += t.depth > 1;
    }
    QVERIFY(deeper > 0); // the walk leaves the layer-sequential start
    // A stop request ends the walk early.
    std::stop_source stop;
    stop.request_stop();
    QVERIFY(sampleTrees(net, hw, c, {}, stop.get_token()).size() <= 1);
}

QTEST_GUILESS_MAIN(TstBounds)
#include "tst_bounds.moc"
