// Compute-in-memory tiles (docs/cost-model.md §8): crossbar blocks, weight
// programmings of the default and the optimised loop order (closed form against a
// brute-force run of the loop nest), the RA-tree rule for keeping weights programmed, the
// PROGRAM instructions and their replay, the `mapping` command and resnet50 end to end.
#include "clirunner.h"
#include "codegen/codegen.h"
#include "codegen/instruction_program.h"
#include "eval/evaluator.h"
#include "hw/hardware.h"
#include "mapping/cim.h"
#include "mapping/cim_records.h"
#include "mapping/mapper.h"
#include "model/model_loader.h"
#include "netbuilder.h"
#include "pipeline/program_flow.h"
#include "sim/validation.h"
#include "tree/ratree.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <map>
#include <random>
#include <set>

using namespace tilescope;
using namespace tilescope::test;

namespace {

Hardware cimPreset() {
    Hardware hw;
    presetHardware("cim", hw);
    return hw;
}

// A mesh of `x` by `y` reference CIM tiles.
Hardware cimMesh(int x, int y) {
    Hardware hw = cimPreset();
    hw.meshX = x;
    hw.meshY = y;
    hw.name = "cim-test";
    hw.dramBytesPerCycle = 0.5 * hw.peakTops() / hw.clockGHz;
    return hw;
}

// Runs the loop nest of `o` literally: per iteration (chunk s, column c, row block r) the
// block c * nR + r must sit in crossbar (c * nR + r) mod X, else it is written; partial sums
// of (chunk, column) open at their first row block and close after the last.
struct Enumerated {
    Count programmings = 0;
    Bytes psumBytes = 0;
};
Enumerated enumerate(const CimBlocks& k, const CimOrder& o) {
    const Count nS = o.chunks(k), nC = k.colBlocks, nR = k.rowBlocks, X = k.crossbars;
    std::vector<Count> crossbar(size_t(X), -1);
    std::map<std::pair<Count, Count>, Count> rowsSeen; // open (chunk, column) -> row blocks done
    Enumerated e;
    size_t peakOpen = 0;
    auto extent = [&](CimLoop l) { return l == CimLoop::Space ? nS : l == CimLoop::Col ? nC : nR; };
    Count idx[3];
    for (idx[0] = 0; idx[0] < extent(o.loops[0]); ++idx[0])
        for (idx[1] = 0; idx[1] < extent(o.loops[1]); ++idx[1])
            for (idx[2] = 0; idx[2] < extent(o.loops[2]); ++idx[2]) {
                Count s = 0, c = 0, r = 0;
                for (int d = 0; d < 3; ++d)
                    (o.loops[size_t(d)] == CimLoop::Space ? s
                     : o.loops[size_t(d)] == CimLoop::Col ? c
                                                          : r) = idx[d];
                const Count b = c * nR + r;
                if (crossbar[size_t(b % X)] != b) {
                    crossbar[size_t(b % X)] = b;
                    ++e.programmings;
                }
                auto& seen = rowsSeen[{s, c}];
                ++seen;
                peakOpen = std::max(peakOpen, rowsSeen.size());
                if (seen == nR) rowsSeen.erase({s, c});
            }
    e.psumBytes = double(peakOpen) * double(o.chunk) * k.weightColumns * 4.0;
    return e;
}

std::vector<CimOrder> allOrders(const CimBlocks& k) {
    constexpr CimLoop S = CimLoop::Space, C = CimLoop::Col, R = CimLoop::Row;
    std::vector<CimOrder> out;
    std::set<Count> chunks;
    for (Count x = 1; x <= k.positions; ++x)
        chunks.insert(x);
    for (Count chunk : chunks)
        for (auto loops : {std::array{C, S, R}, std::array{C, R, S}, std::array{R, C, S},
                           std::array{R, S, C}, std::array{S, C, R}, std::array{S, R, C}})
            out.push_back(CimOrder{loops, chunk});
    return out;
}

} // namespace

class TestCim : public QObject {
    Q_OBJECT
  private slots:
    void presetFigures();
    void referenceConv();
    void closedFormMatchesEnumeration();
    void logicalCrossbarsBoundToCores();
    void perCoreStreams();
    void spatialBoxesReadLess();
    void recordFile();
    void perCoreNestsMatchEnumeration();
    void bestOrderIsTheEnumeratedMinimum();
    void dmaRuns();
    void tCutRewritesSCutKeeps();
    void doubleBufferingHidesWrites();
    void standardTilesHaveNoCimFigures();
    void mappingCommand();
    void agreement_data();
    void agreement();
    void resnet50EndToEnd();
    void strideGapsCountedOnce();
};

void TestCim::presetFigures() {
    const Hardware hw = cimPreset();
    QCOMPARE(hw.arch, TileArch::Cim);
    QCOMPARE(hw.tiles(), 16);
    QCOMPARE(hw.cim.crossbars(), 36); // 4 cores x 9 crossbars
    // 8-bit weights at 2 bits per cell: 4 cells each, 16 weights per 64-cell crossbar row.
    QCOMPARE(hw.cim.weightColumns(8), 16);
    // 36 crossbars x 64 rows x 16 weights / 8 cycles per product.
    QCOMPARE(hw.macsPerTile, 36 * 64 * 16 / 8);
    // 147,456 cells (the "~144 Kb" of the reference design) = 36 KiB of 8-bit weights.
    QCOMPARE(double(hw.cim.crossbars()) * cimCrossbarWeightBytes(hw), 36.0 * 1024);
    QCOMPARE(cimWritePj(hw), 64.0 * 64 * 2 * 2.0);
    auto back = parseHardware(hardwareToJson(hw), "mem");
    QVERIFY(back.ok());
    QCOMPARE(hardwareToJson(*back), hardwareToJson(hw));
    auto file = loadHardware(std::string(TILESCOPE_SAMPLES) + "/hw/cim-4x4.json");
    QVERIFY2(file.ok(), file.ok() ? "" : file.error().message.c_str());
    QCOMPARE(hardwareToJson(*file), hardwareToJson(hw));
}

// The reference case: conv 28x28, 128 -> 256, 3x3, one cim tile, batch 1.
void TestCim::referenceConv() {
    Network n;
    n.layers.push_back(conv("conv", 128, 256, 28, 3, -1));
    n = finish(n);
    const Hardware hw = cimPreset();
    Mapper mapper(n, hw);
    const LeafMapping& m = mapper.map(0, 1, 1);
    QVERIFY(m.cim.used);
    // By hand: rows 128 x 9 = 1152 -> 18 row blocks of 64; columns 256 / 16 = 16 blocks;
    // 288 blocks on 36 crossbars.
    QCOMPARE(m.cim.blocksPerTile, Count(288));
    QCOMPARE(m.cim.crossbars, 36);
    // Optimised: every block written once (column outer, its 18 row blocks stay while
    // the positions stream: 18 <= 36), 288.
    QCOMPARE(m.cim.programmings, Count(288));
    // Default: one output row (28 positions, 28 x 16 x 4 B = 1792 B of partial sums) per
    // spatial tile, outermost; 288 = 8 x 36 blocks, so every crossbar holds 8 of them in
    // turn and rewrites each for every one of the 28 rows: 288 x 28 = 8064.
    QCOMPARE(m.cim.programmingsDefault, Count(8064));
    QVERIFY(double(m.cim.programmings) <= 0.15 * double(m.cim.programmingsDefault));
    // Write time: 288 programmings over 4 cores, 64 rows x 50 cycles each.
    QCOMPARE(m.cim.writeCycles, 72.0 * 64 * 50);
    QCOMPARE(m.cim.exposedWrite, m.cim.writeCycles); // not double-buffered: all exposed
    // Compute: ceil(288 / 36) = 8 passes over 784 positions, 8 cycles each.
    QCOMPARE(m.cim.computeCycles, 8.0 * 784 * 8);
    QCOMPARE(m.cycles, m.cim.computeCycles + m.cim.exposedWrite);
}

// Random small convs and crossbar shapes: the closed forms of cimProgrammings and
// cimPsumBytes against the loop nest run literally, for every order and chunk size.
void TestCim::closedFormMatchesEnumeration() {
    std::mt19937 rng(13);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    for (int trial = 0; trial < 60; ++trial) {
        Network n;
        const int c = pick(1, 24), k = pick(1, 40), hwSize = pick(1, 5), kernel = pick(1, 3);
        n.layers.push_back(conv("conv", c, k, hwSize, kernel, -1));
        n = finish(n);
        Hardware hw = cimMesh(1, 1);
        hw.cim.rows = pick(2, 16);
        hw.cim.cols = 4 * pick(1, 4);
        hw.cim.cores = pick(1, 2);
        hw.cim.crossbarsPerCore = pick(1, 4);
        const Count batch = pick(1, 2);
        const CimTileWork w = cimTileWork(n.layers[0], hw, 1, k, c, batch, hwSize, hwSize);
        const CimBlocks& b = w.blocks;
        // The blocks by hand.
        QCOMPARE(b.rowBlocks, Count((c * kernel * kernel + hw.cim.rows - 1) / hw.cim.rows));
        QCOMPARE(b.colBlocks, Count((k + hw.cim.cols / 4 - 1) / (hw.cim.cols / 4)));
        QCOMPARE(b.positions, batch * hwSize * hwSize);
        for (const CimOrder& o : allOrders(b)) {
            const Enumerated e = enumerate(b, o);
            QVERIFY2(cimProgrammings(b, o) == e.programmings,
                     qPrintable(QString("trial %1, order %2: closed form %3, enumerated %4")
                                    .arg(trial)
                                    .arg(QString::fromStdString(o.text()))
                                    .arg(cimProgrammings(b, o))
                                    .arg(e.programmings)));
            QCOMPARE(cimPsumBytes(b, o), e.psumBytes);
        }
        // The default template enumerated.
        const CimOrder d = cimDefaultOrder(b, hw.cim.psumBufferBytes);
        QCOMPARE(w.defaultProgrammings, enumerate(b, d).programmings);
    }
}

// The method's reading of its reference tile: 8-bit weights sliced over 4 crossbars of 2-bit
// cells (a logical crossbar of 64 x 64 weights), column blocks dealt to the 4 cores in turn.
void TestCim::logicalCrossbarsBoundToCores() {
    Network n;
    n.layers.push_back(conv("conv", 128, 256, 28, 3, -1));
    n = finish(n);
    Hardware hw = cimPreset();
    hw.cim.slicing = CimSlicing::Crossbars;
    hw.cim.binding = CimBinding::OutputChannels;
    hw.cim.psumBufferBytes = 4.0 * 784 * 64 * 4; // every core's sums of every position
    hw.macsPerTile = hw.cim.peakMacs(hw.dataBits);
    QCOMPARE(hw.macsPerTile, 36 * 64 * 64 / 8);
    QCOMPARE(cimCrossbarWeightBytes(hw), 4096.0);
    QCOMPARE(cimWritePj(hw), 64.0 * 64 * 4 * 2 * 2.0); // every slice's cells
    const CimTileWork w = cimBoxWork(n.layers[0], hw, 0, 256, 1, 28, 28);
    // By hand: 18 row blocks (1152 / 64), 4 column blocks (256 / 64): one per core, whose
    // 18 blocks share its 9 crossbars.
    QCOMPARE(w.blocks.rowBlocks, Count(18));
    QCOMPARE(w.blocks.colBlocks, Count(4));
    QCOMPARE(w.footprint, Count(4 * 18)); // more than the tile's 36: not kept across runs
    QCOMPARE(w.passes, Count(2));
    // Chosen: the positions innermost, every block written once: 4 x 18.
    QCOMPARE(w.best.programmings, Count(72));
    // Default: one output row (28 positions) per spatial tile; each core's 18 blocks on 9
    // crossbars, 2 each, rewritten for every row: 4 x 9 x 2 x 28.
    QCOMPARE(w.defaultProgrammings, Count(2016));
    // Each core writes its own 18 one physical row at a time: 18 x 4 slices x 64 rows x 50.
    QCOMPARE(w.writeCycles, 18.0 * 4 * 64 * 50);
    QCOMPARE(w.computeCycles, 2.0 * 784 * 8);
    // The same blocks on the tile's crossbars in order (the cores sharing one nest): the same
    // counts here, the write time split over the cores.
    hw.cim.binding = CimBinding::Tile;
    const CimTileWork t = cimBoxWork(n.layers[0], hw, 0, 256, 1, 28, 28);
    QCOMPARE(t.best.programmings, Count(72));
    QCOMPARE(t.defaultProgrammings, Count(2016));
    QCOMPARE(t.footprint, Count(72));
    QCOMPARE(t.writeCycles, 18.0 * 4 * 64 * 50);
    // The sample template of this reading: the preset with the two keys, its peak and DRAM
    // following the logical crossbars.
    auto file = loadHardware(std::string(TILESCOPE_SAMPLES) + "/hw/cim-logical-4x4.json");
    QVERIFY2(file.ok(), file.ok() ? "" : file.error().message.c_str());
    const Hardware preset = cimPreset();
    QCOMPARE(file->cim.slicing, CimSlicing::Crossbars);
    QCOMPARE(file->cim.binding, CimBinding::OutputChannels);
    QCOMPARE(file->cim.crossbars(), preset.cim.crossbars());
    QCOMPARE(file->cim.rows, preset.cim.rows);
    QCOMPARE(file->cim.bitsPerCell, preset.cim.bitsPerCell);
    QCOMPARE(file->macsPerTile, 4 * preset.macsPerTile);
    QCOMPARE(file->dramBytesPerCycle, 0.5 * file->peakTops() / file->clockGHz);
}

// The method's split spatial loops (samples, rows and columns apart): among the orders with
// the fewest programmings the one whose chunks read the least input window wins. A 3x3 conv
// of 16 channels on 28 x 28: 3 row blocks and 1 column block stay programmed whatever the
// order (3 programmings), and 8 KiB of partial sums hold 128 positions of 16 channels.
void TestCim::spatialBoxesReadLess() {
    Network n;
    n.layers.push_back(conv("conv", 16, 16, 28, 3, -1));
    n = finish(n);
    const Hardware hw = cimPreset();
    const CimTileWork w = cimBoxWork(n.layers[0], hw, 0, 16, 1, 28, 28);
    QCOMPARE(w.best.programmings, Count(3));
    // Boxes of 14 rows x 7 columns (98 positions): 8 windows of 16 x 9 pixels, 1152 pixels
    // of 16 bytes; 7 x 14 reads the same and comes later.
    QCOMPARE(w.best.order.box, (std::array<Count, 3>{1, 14, 7}));
    QCOMPARE(w.best.inputReads, 1152.0 * 16);
    QCOMPARE(w.best.order.text(), std::string("c s1x14x7 r"));
    // 128 consecutive positions instead (the largest chunk whose sums fit): chunks of 5, 6,
    // 5, 6, 5, 6 rows read 7 or 8 input rows of 30 columns, the last 16 positions of row 27
    // read 3 rows of 18: 3 x 210 + 3 x 240 + 54 = 1404 pixels.
    CimOrder linear{{CimLoop::Col, CimLoop::Space, CimLoop::Row}, 128};
    QCOMPARE(cimInputReads(w.blocks, linear), 1404.0 * 16);
    QCOMPARE(cimProgrammings(w.blocks, linear), Count(3));
    // Consecutive positions of every size against the chunks walked one by one.
    std::mt19937 rng(5);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    for (int trial = 0; trial < 200; ++trial) {
        CimBlocks b;
        b.colBlocks = pick(1, 3);
        b.space.samples = pick(1, 3);
        b.space.rows = pick(1, 6);
        b.space.cols = pick(1, 9);
        b.space.strideH = pick(1, 2);
        b.space.strideW = pick(1, 2);
        b.space.spanH = pick(1, 3);
        b.space.spanW = pick(1, 3);
        b.space.pixelBytes = 1;
        b.positions = b.space.samples * b.space.rows * b.space.cols;
        const CimSpace& sp = b.space;
        auto rowsOf = [&](Count h) { return double((h - 1) * sp.strideH + sp.spanH); };
        auto colsOf = [&](Count c) { return double((c - 1) * sp.strideW + sp.spanW); };
        for (Count chunk = 1; chunk <= b.positions; ++chunk) {
            double walked = 0;
            const Count plane = sp.rows * sp.cols;
            for (Count p0 = 0; p0 < b.positions; p0 += chunk) {
                const Count p1 = std::min(b.positions, p0 + chunk) - 1;
                const Count n0 = p0 / plane, n1 = p1 / plane;
                const Count h0 = p0 % plane / sp.cols, h1 = p1 % plane / sp.cols;
                if (n0 != n1)
                    walked += double(n1 - n0 + 1) * rowsOf(sp.rows) * colsOf(sp.cols);
                else if (h0 != h1)
                    walked += rowsOf(h1 - h0 + 1) * colsOf(sp.cols);
                else
                    walked += rowsOf(1) * colsOf(p1 % sp.cols - p0 % sp.cols + 1);
            }
            QCOMPARE(cimInputReads(b, CimOrder{{}, chunk}), walked * double(b.colBlocks));
        }
    }
}

// The record file: a workload searched once is taken from the book afterwards, the book
// survives its JSON, a record that does not cost what it says is refused by place; through
// the CLI a second run reuses every record, figures unchanged, and a bad file is kept as it
// was with the reason.
void TestCim::recordFile() {
    Network n;
    n.layers.push_back(conv("conv", 128, 256, 28, 3, -1));
    n = finish(n);
    Hardware hw = cimPreset();
    hw.cim.records = std::make_shared<CimRecordBook>();
    const CimTileWork first = cimBoxWork(n.layers[0], hw, 0, 256, 1, 28, 28);
    QCOMPARE(hw.cim.records->size(), size_t(1));
    QCOMPARE(hw.cim.records->reused(), size_t(0));
    const CimTileWork again = cimBoxWork(n.layers[0], hw, 0, 256, 1, 28, 28);
    QCOMPARE(hw.cim.records->reused(), size_t(1));
    QCOMPARE(again.best.programmings, first.best.programmings);
    QCOMPARE(again.best.order.text(), first.best.order.text());
    // Without a book: the same choice.
    Hardware plain = cimPreset();
    QCOMPARE(cimBoxWork(n.layers[0], plain, 0, 256, 1, 28, 28).best.order.text(),
             first.best.order.text());
    // Its JSON read back holds the same record.
    nlohmann::json j = hw.cim.records->toJson();
    auto back = CimRecordBook::fromJson(j, "rec.json");
    QVERIFY2(back.ok(), back.ok() ? "" : back.error().message.c_str());
    QCOMPARE((*back)->size(), size_t(1));
    QCOMPARE((*back)->toJson(), j);
    // Orders read back as written.
    for (const char* text : {"c s1x14x7 r", "s784 c r", "r c s3"})
        QCOMPARE(parseCimOrder(text)->text(), std::string(text));
    for (const char* text : {"c s r", "c c s1 ", "c s1x2 r", "c s0 r", "c s4 r x"})
        QVERIFY2(!parseCimOrder(text), text);
    // Tampered records: refused with the place and the reason.
    j["records"][0]["programmings"] = 7;
    auto bad = CimRecordBook::fromJson(j, "rec.json");
    QVERIFY(!bad.ok());
    QVERIFY2(bad.error().message.find("rec.json: records[0]: the order " + first.best.order.text() +
                                      " gives 288 programmings") == 0,
             bad.error().message.c_str());
    j["records"][0]["order"] = "c q r";
    bad = CimRecordBook::fromJson(j, "rec.json");
    QVERIFY(!bad.ok());
    QVERIFY2(bad.error().message.find("records[0].order: not a loop order ('c q r')") !=
                 std::string::npos,
             bad.error().message.c_str());

    // Through the CLI.
    QTemporaryDir dir;
    const QString file = dir.filePath("cim-records.json");
    const QString model = QStringLiteral(TILESCOPE_SAMPLES "/models/mobilenet_v2.onnx");
    const QStringList anneal{"anneal", model, "--hw",         "cim", "--batch", "1",
                             "--seed", "1",   "--iterations", "200", "--quiet", "--json"};
    CliRun r = runCli(anneal + QStringList{dir.filePath("a.json"), "--cim-records", file});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains("reused"), qPrintable(r.err));
    QVERIFY(QFile::exists(file));
    r = runCli(anneal + QStringList{dir.filePath("b.json"), "--cim-records", file});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains("(0 new)"), qPrintable(r.err));
    r = runCli(anneal + QStringList{dir.filePath("c.json")});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    auto figures = [&](const QString& name) {
        QFile f(dir.filePath(name));
        f.open(QIODevice::ReadOnly);
        const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
        return std::pair(o["energy_pj"].toDouble(), o["weight_programmings"].toInt());
    };
    QCOMPARE(figures("b.json"), figures("a.json"));
    QCOMPARE(figures("c.json"), figures("a.json"));
    // A corrupt file: exit 1 naming it, left as it was.
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"format": "tilescope-cim-records", "version": 1, "records": [{"order": 3}]})");
    f.close();
    r = runCli(anneal + QStringList{dir.filePath("d.json"), "--cim-records", file});
    QCOMPARE(r.status, 1);
    QVERIFY2(r.err.contains("cim-records.json: records[0]: incomplete"), qPrintable(r.err));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(f.readAll().contains(R"("order": 3)"));
    // A template without crossbars.
    r = runCli({"mapping", model, "--hw", "edge", "--layer",
                "/features/features.0/features.0.0/Conv", "--cim-records", file});
    QCOMPARE(r.status, 1);
    QVERIFY2(r.err.contains("edge has no compute-in-memory tiles"), qPrintable(r.err));
}

// Output-channel binding in the exported program: every core of a tile runs its own PROGRAM
// and COMPUTE stream, their crossbar writes add up to the tile's, core 0's COMPUTE waits for
// the others stage by stage; the core survives every encoding, and the checks refuse a core
// where there is none.
void TestCim::perCoreStreams() {
    Network n;
    n.layers.push_back(conv("a", 64, 320, 14, 3, -1)); // 5 column blocks of 64 on one tile
    n.layers.push_back(conv("b", 320, 64, 14, 1, 0));
    n = finish(n);
    auto hw = loadHardware(std::string(TILESCOPE_SAMPLES) + "/hw/cim-logical-4x4.json");
    QVERIFY(hw.ok());
    hw->meshX = hw->meshY = 1;
    hw->name = "cim-logical-1x1";
    EvalContext ctx(n, *hw);
    auto r = generateProgram(ctx, RATree::layerSequential(n, 1), 1, {});
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    std::map<int, std::map<std::pair<Op, int>, int>> perLayer; // layer -> (op, core) -> count
    std::map<std::uint32_t, const Instruction*> byId;
    double programmed = 0;
    for (const auto& t : r->program.tiles)
        for (const auto& i : t.instructions) {
            byId[i.id] = &i;
            if (i.op == Op::Program || i.op == Op::Compute) ++perLayer[i.layer][{i.op, i.core}];
            if (i.op == Op::Program) programmed += double(i.bytes);
        }
    // Layer a: 5 column blocks on 4 cores (2, 1, 1, 1): a PROGRAM and a COMPUTE each.
    for (int core = 0; core < 4; ++core) {
        QCOMPARE(perLayer[0][std::pair(Op::Program, core)], 1);
        QCOMPARE(perLayer[0][std::pair(Op::Compute, core)], 1);
    }
    QCOMPARE(perLayer[0][std::pair(Op::Compute, -1)], 0);
    // Layer b: one column block: core 0 alone.
    QCOMPARE(perLayer[1][std::pair(Op::Compute, 0)], 1);
    QCOMPARE(perLayer[1][std::pair(Op::Compute, 1)], 0);
    const Evaluation& ev = r->layout.evaluation;
    QCOMPARE(programmed, double(ev.weightProgrammings) * cimCrossbarWeightBytes(*hw));
    // Core 0's COMPUTE of layer a waits for the other cores' stage by stage.
    for (const auto& [id, i] : byId)
        if (i->op == Op::Compute && i->layer == 0 && i->core == 0) {
            int others = 0;
            for (const Dep& d : i->deps)
                if (byId[d.id]->op == Op::Compute && byId[d.id]->core > 0) {
                    QCOMPARE(d.stage, 1u);
                    ++others;
                }
            QCOMPARE(others, 3);
        }
    auto replay = replayProgram(r->program, *hw, "generated");
    QVERIFY2(replay.ok(), replay.ok() ? "" : replay.error().message.c_str());
    QVERIFY(replay->fine.deadlockFree);
    const double ratio = replay->fine.delay / ev.delay;
    QVERIFY2(ratio > 0.85 && ratio < 1.15, qPrintable(QString::number(ratio)));
    // Encodings: the binary is version 4 and every form gives the program back.
    const std::string bin = encodeProgram(r->program);
    QCOMPARE(int(std::uint8_t(bin[8])), 4);
    auto back = decodeProgram(bin, "p.bin");
    QVERIFY2(back.ok(), back.ok() ? "" : back.error().message.c_str());
    QVERIFY(*back == r->program);
    auto fromJson = programFromJson(programToJson(r->program), "p.json");
    QVERIFY(fromJson.ok());
    QVERIFY(*fromJson == r->program);
    QVERIFY(programToText(r->program).find("core 3") != std::string::npos);
    // The checks: a core on a LOAD, a core the tile does not have.
    Program bad = r->program;
    for (auto& i : bad.tiles[0].instructions)
        if (i.op == Op::Compute && i.core == 3) i.core = 4;
    auto err = validateProgram(bad, *hw, "p.json");
    QVERIFY(err.has_value());
    QVERIFY2(err->message.find("core 4 outside the tile's 4 compute-in-memory cores") !=
                 std::string::npos,
             err->message.c_str());
    bad = r->program;
    for (auto& i : bad.tiles[0].instructions)
        if (i.op == Op::Load) {
            i.core = 0;
            break;
        }
    err = validateProgram(bad, *hw, "p.json");
    QVERIFY(err.has_value());
    QVERIFY2(err->message.find("LOAD runs on the tile's engines, not a core") != std::string::npos,
             err->message.c_str());
}

// Output-channel binding: each core's loop nest over its own column blocks (c mod cores) and
// crossbars, run literally, gives the counts the closed forms sum; the chosen order is never
// worse than the default and its summed partial sums fit.
void TestCim::perCoreNestsMatchEnumeration() {
    std::mt19937 rng(29);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    for (int trial = 0; trial < 60; ++trial) {
        Network n;
        const int c = pick(1, 24), k = pick(1, 60), hwSize = pick(1, 5), kernel = pick(1, 3);
        n.layers.push_back(conv("conv", c, k, hwSize, kernel, -1));
        n = finish(n);
        Hardware hw = cimMesh(1, 1);
        hw.cim.binding = CimBinding::OutputChannels;
        hw.cim.slicing = pick(0, 1) ? CimSlicing::Crossbars : CimSlicing::Cells;
        hw.cim.rows = pick(2, 16);
        hw.cim.cols = 4 * pick(1, 4);
        hw.cim.cores = pick(1, 4);
        hw.cim.crossbarsPerCore = pick(1, 4);
        hw.cim.psumBufferBytes = 4.0 * hw.cim.weightColumns(8) * hw.cim.cores * pick(1, 40);
        const CimTileWork w = cimTileWork(n.layers[0], hw, 1, k, c, 1, hwSize, hwSize);
        const CimBlocks& b = w.blocks;
        Count chosen = 0, dflt = 0, busiest = 0;
        for (int core = 0; core < hw.cim.cores; ++core) {
            CimBlocks mine = b;
            mine.colBlocks = (b.colBlocks - core + hw.cim.cores - 1) / hw.cim.cores;
            mine.crossbars = hw.cim.crossbarsPerCore;
            if (mine.colBlocks == 0) continue;
            const Count p = enumerate(mine, w.best.order).programmings;
            chosen += p;
            busiest = std::max(busiest, p);
            dflt += enumerate(mine, w.defaultOrder).programmings;
        }
        QCOMPARE(w.best.programmings, chosen);
        QCOMPARE(w.defaultProgrammings, dflt);
        QVERIFY(w.best.programmings <= w.defaultProgrammings);
        QVERIFY(w.best.psumBytes <= hw.cim.psumBufferBytes);
        QCOMPARE(w.writeCycles, double(busiest) * hw.cim.rows * hw.cim.writeCyclesPerRow *
                                    hw.cim.slices(hw.dataBits));
    }
}

// cimBestOrder searches a few chunk sizes; the enumeration tries every chunk of every order
// whose partial sums fit, and finds nothing better.
void TestCim::bestOrderIsTheEnumeratedMinimum() {
    std::mt19937 rng(7);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    for (int trial = 0; trial < 60; ++trial) {
        CimBlocks b;
        b.rowBlocks = pick(1, 9);
        b.colBlocks = pick(1, 7);
        b.crossbars = pick(1, 12);
        b.weightColumns = pick(1, 4);
        b.positions = pick(1, 20);
        b.rowPositions = pick(1, int(b.positions));
        const Bytes psum = 4.0 * b.weightColumns * pick(1, 60);
        Count best = -1;
        for (const CimOrder& o : allOrders(b)) {
            const Enumerated e = enumerate(b, o);
            if (e.psumBytes <= psum && (best < 0 || e.programmings < best)) best = e.programmings;
        }
        const CimChoice c = cimBestOrder(b, psum);
        QVERIFY(c.psumBytes <= psum);
        QCOMPARE(c.programmings, enumerate(b, c.order).programmings);
        QVERIFY2(c.programmings == best, qPrintable(QString("trial %1: chosen %2, minimum %3")
                                                        .arg(trial)
                                                        .arg(c.programmings)
                                                        .arg(best)));
        // Never worse than the default template.
        QVERIFY(c.programmings <= cimProgrammings(b, cimDefaultOrder(b, psum)));
    }
}

void TestCim::dmaRuns() {
    // A narrow window: one run per row segment (2 samples x 3 channels x 5 rows).
    QCOMPARE(contiguousRuns({2, 3, 5, 4}, {2, 8, 16, 16}), Count(30));
    // Full rows: one run per channel plane slice.
    QCOMPARE(contiguousRuns({2, 3, 5, 16}, {2, 8, 16, 16}), Count(6));
    // Full planes: one run per sample's channel range.
    QCOMPARE(contiguousRuns({2, 3, 16, 16}, {2, 8, 16, 16}), Count(2));
    // The whole tensor: one run.
    QCOMPARE(contiguousRuns({2, 8, 16, 16}, {2, 8, 16, 16}), Count(1));
}

// Two convs of 0.6 of a tile's crossbars each (22 of 36 blocks): under a T cut on two
// tiles both sit on every tile (44 > 36), so each sub-batch writes them again; under an
// S cut each keeps its own tile and is written once.
void TestCim::tCutRewritesSCutKeeps() {
    Network n;
    n.name = "toy";
    n.layers.push_back(conv("a", 156, 16, 8, 3, -1));
    n.layers.push_back(conv("b", 156, 16, 8, 3, -1));
    n = finish(n);
    const Hardware hw = cimMesh(2, 1);
    Mapper mapper(n, hw);
    // 156 x 9 = 1404 rows -> 22 row blocks; 16 channels -> 1 column block.
    QCOMPARE(mapper.map(0, 1, 1).cim.blocksPerTile, Count(22));
    QCOMPARE(mapper.map(0, 2, 1).cim.blocksPerTile, Count(22));
    const std::string trees[2] = {"T 4/1\n\tT 4/4\n\t\ta 1\n\t\tb 1\n",
                                  "T 4/1\n\tS 4/4\n\t\ta 1\n\t\tb 1\n"};
    // Programmings per leaf over the run, by hand: T: 4 sub-batches x 2 tiles x 22;
    // S: one tile x 22, once.
    const Count expected[2] = {4 * 2 * 22, 22};
    const Count programs[2] = {4 * 2 * 2, 2}; // PROGRAM instructions: leaf x tile x writes
    for (int i = 0; i < 2; ++i) {
        auto tree = parseTreeText(trees[i], n, "toy.tree");
        QVERIFY2(tree.ok(), tree.ok() ? "" : tree.error().message.c_str());
        EvalContext ctx(n, hw);
        EvalOptions opt;
        opt.detail = true;
        const Evaluation e = evaluate(ctx, *tree, 4, opt);
        QVERIFY2(e.valid, e.reason.c_str());
        Count total = 0;
        for (int id = 0; id < tree->size(); ++id)
            if (tree->node(id).type == NodeType::Leaf) {
                QCOMPARE(e.nodes[size_t(id)].weightProgrammings, expected[i]);
                total += e.nodes[size_t(id)].weightProgrammings;
            }
        QCOMPARE(e.weightProgrammings, total);
        QCOMPARE(e.energy.weightWrite, double(total) * cimWritePj(hw));
        // The program writes the same crossbars, and its replay stays with the estimate.
        auto built = buildProgram(ctx, *tree, 4, opt);
        QVERIFY2(built.ok(), built.ok() ? "" : built.error().message.c_str());
        Count programInstructions = 0;
        double programmedBytes = 0;
        for (const auto& t : built->program.tiles)
            for (const auto& ins : t.instructions)
                if (ins.op == Op::Program) {
                    ++programInstructions;
                    programmedBytes += double(ins.bytes);
                    QVERIFY(ins.cycles > 0);
                }
        QCOMPARE(programInstructions, programs[i]);
        QCOMPARE(programmedBytes, double(total) * cimCrossbarWeightBytes(hw));
        auto replay = replayProgram(built->program, hw, "toy");
        QVERIFY2(replay.ok(), replay.ok() ? "" : replay.error().message.c_str());
        QVERIFY(replay->fine.deadlockFree);
        QCOMPARE(replay->fine.dramBytes, e.dramBytes);
        const double ratio = replay->fine.delay / e.delay;
        QVERIFY2(ratio > 0.85 && ratio < 1.15, qPrintable(QString("%1: sim %2 / eval %3 = %4")
                                                              .arg(QString::fromStdString(trees[i]))
                                                              .arg(replay->fine.delay)
                                                              .arg(e.delay)
                                                              .arg(ratio)));
    }
}

void TestCim::doubleBufferingHidesWrites() {
    Network n;
    n.layers.push_back(conv("conv", 128, 256, 28, 3, -1));
    n = finish(n);
    Hardware hw = cimPreset();
    hw.cim.doubleBufferedCrossbars = true;
    Mapper mapper(n, hw);
    const LeafMapping& m = mapper.map(0, 1, 1);
    // Half the crossbars (18) hold blocks at a time: 288 / 18 = 16 passes.
    QCOMPARE(m.cim.crossbars, 18);
    QCOMPARE(m.cim.computeCycles, 16.0 * 784 * 8);
    // The first 18 blocks (5 rounds of 4 cores) are waited for; the rest of the writes
    // (72 rounds) overlap the compute as far as it lasts.
    const double row = 64.0 * 50;
    const double first = 5 * row, all = 72 * row;
    QCOMPARE(m.cim.exposedWrite, first + std::max(0.0, all - first - m.cim.computeCycles));
    QVERIFY(m.cim.exposedWrite < m.cim.writeCycles);
}

// A MAC-array template has no CIM figures and keeps its result keys.
void TestCim::standardTilesHaveNoCimFigures() {
    const Network n = twoConvs();
    Hardware hw;
    presetHardware("edge", hw);
    Mapper mapper(n, hw);
    QVERIFY(!mapper.map(0, 4, 1).cim.used);
    auto tree = parseTreeText("T 2/1\n\tconv1 2\n\tconv2 2\n", n, "t");
    QVERIFY(tree.ok());
    const Evaluation e = evaluate(n, hw, *tree, 2, EvalOptions{});
    QVERIFY(e.valid);
    QCOMPARE(e.energy.weightWrite, 0.0);
    QCOMPARE(e.weightProgrammings, Count(0));
    QCOMPARE(e.energy.total(),
             e.energy.dram + e.energy.noc + e.energy.mac + e.energy.buffer + e.energy.inTile());
}

void TestCim::mappingCommand() {
    const QString model = QStringLiteral(TILESCOPE_SAMPLES "/models/resnet50.onnx");
    const QString layer = QStringLiteral("/layer2/layer2.0/conv2/Conv"); // 128 -> 128, 3x3
    CliRun r = runCli({"mapping", model, "--hw", "cim", "--layer", layer, "--tiles", "1", "--batch",
                       "1", "--json"});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(j["layer"].toString(), layer);
    QCOMPARE(j["arch"].toString(), QStringLiteral("cim"));
    QCOMPARE(j["partition"].toObject()["label"].toString(), QStringLiteral("K1 B1 H1 W1"));
    // 128 x 9 = 1152 rows -> 18 row blocks, 128 / 16 = 8 column blocks: 144 blocks. Stride 2
    // in torchvision's resnet50 v1.5: 28 x 28 outputs, one row of 28 per default tile:
    // 144 = 4 x 36, so 4 blocks per crossbar rewritten for each of 28 rows.
    QCOMPARE(j["cim"].toObject()["blocks_per_tile"].toInt(), 144);
    QCOMPARE(j["weight_programmings"].toInt(), 144);
    QCOMPARE(j["weight_programmings_default"].toInt(), 144 * 28);
    QVERIFY(j["energy_pj"].toObject()["weight_write"].toDouble() > 0);
    // Every tile type: a MAC-array template reports its mapping without the CIM keys.
    r = runCli({"mapping", model, "--hw", "edge", "--layer", layer, "--json"});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    const QJsonObject e = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(e["tiles"].toInt(), 16);
    QVERIFY(!e.contains("weight_programmings"));
    QVERIFY(e["cycles"].toDouble() > 0);
    // The text form names the counts.
    r = runCli({"mapping", model, "--hw", "cim", "--layer", layer, "--tiles", "1"});
    QCOMPARE(r.status, 0);
    QVERIFY2(r.out.contains("default template 4032"), qPrintable(r.out));
    // Errors: an unknown layer is a user error naming the model, bad arguments exit 2.
    r = runCli({"mapping", model, "--hw", "cim", "--layer", "nope"});
    QCOMPARE(r.status, 1);
    QVERIFY2(r.err.contains("no scheduled layer named 'nope'"), qPrintable(r.err));
    r = runCli({"mapping", model, "--hw", "cim", "--layer", layer, "--tiles", "17"});
    QCOMPARE(r.status, 2);
    r = runCli({"mapping", model, "--hw", "cim"});
    QCOMPARE(r.status, 2);
    QVERIFY(r.err.contains("--layer is required"));
}

// Layer-sequential schedules of the samples on the cim preset (batch 1 and the largest
// valid batch <= 8): the program writes exactly the crossbars the evaluator counts (PROGRAM
// bytes = programmings x a crossbar's weights), moves its DRAM bytes, and replays within 15%.
void TestCim::agreement_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<int>("batch");
    QTest::addColumn<bool>("logical");
    for (bool logical : {false, true})
        for (const char* m :
             {"mobilenet_v2", "resnet50", "googlenet", "inception_v3", "transformer"})
            for (int b : {1, 8})
                QTest::newRow(
                    (std::string(m) + " ls" + std::to_string(b) + (logical ? " logical" : ""))
                        .c_str())
                    << m << b << logical;
}

void TestCim::agreement() {
    QFETCH(QString, model);
    QFETCH(int, batch);
    QFETCH(bool, logical);
    auto net =
        loadModel(std::string(TILESCOPE_SAMPLES) + "/models/" + model.toStdString() + ".onnx");
    QVERIFY2(net.ok(), net.ok() ? "" : net.error().message.c_str());
    Hardware hw = cimPreset();
    if (logical) {
        auto file = loadHardware(std::string(TILESCOPE_SAMPLES) + "/hw/cim-logical-4x4.json");
        QVERIFY(file.ok());
        hw = *file;
    }
    EvalContext ctx(*net, hw);
    for (; batch > 1; batch /= 2)
        if (evaluate(ctx, RATree::layerSequential(*net, batch), batch, {}).valid) break;
    const RATree t = RATree::layerSequential(*net, batch);
    auto r = generateProgram(ctx, t, batch, {});
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    const Evaluation& ev = r->layout.evaluation;
    QVERIFY(ev.weightProgrammings > 0);
    double programmed = 0;
    for (const auto& tile : r->program.tiles)
        for (const auto& ins : tile.instructions)
            if (ins.op == Op::Program) programmed += double(ins.bytes);
    QCOMPARE(programmed, double(ev.weightProgrammings) * cimCrossbarWeightBytes(hw));
    auto replay = replayProgram(r->program, hw, "generated");
    QVERIFY2(replay.ok(), replay.ok() ? "" : replay.error().message.c_str());
    QVERIFY(replay->fine.deadlockFree);
    QCOMPARE(double(r->programDramBytes), ev.dramBytes);
    const double ratio = replay->fine.delay / ev.delay;
    qInfo("%s: sim %.0f eval %.0f ratio %.3f", QTest::currentDataTag(), replay->fine.delay,
          ev.delay, ratio);
    QVERIFY2(ratio > 0.85 && ratio < 1.15, qPrintable(QString::number(ratio)));
}

// End to end through the CLI: anneal, export, simulate.
void TestCim::resnet50EndToEnd() {
    QTemporaryDir dir;
    const QString result = dir.filePath("r50.json"), prog = dir.filePath("prog"),
                  sim = dir.filePath("sim.json");
    CliRun r = runCli({"anneal", TILESCOPE_SAMPLES "/models/resnet50.onnx", "--hw", "cim",
                       "--batch", "8", "--beta", "20", "--seed", "1", "--json", result, "--quiet"},
                      600000);
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QFile f(result);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject j = QJsonDocument::fromJson(f.readAll()).object();
    QVERIFY(j["valid"].toBool());
    const QJsonObject breakdown = j["breakdown_pj"].toObject();
    QString writeKey;
    for (const QString& k : breakdown.keys())
        if (k.contains("weight_write")) writeKey = k;
    QVERIFY(!writeKey.isEmpty());
    QVERIFY(breakdown[writeKey].toDouble() > 0);
    QVERIFY(j["weight_programmings"].toDouble() > 0);
    QVERIFY(j["weight_programmings"].toDouble() < j["weight_programmings_default"].toDouble());
    r = runCli({"export-instructions", result, "--out", prog}, 600000);
    QVERIFY2(r.status == 0, qPrintable(r.err));
    r = runCli({"simulate", prog, "--json", sim}, 600000);
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QFile s(sim);
    QVERIFY(s.open(QIODevice::ReadOnly));
    const QJsonObject sj = QJsonDocument::fromJson(s.readAll()).object();
    const double ratio = sj["delay_cycles"].toDouble() / j["delay_cycles"].toDouble();
    QVERIFY2(ratio > 0.85 && ratio < 1.15, qPrintable(QString("sim/eval %1").arg(ratio)));
    QCOMPARE(sj["dram_bytes"].toDouble(), j["dram_bytes"].toDouble());
}

// The window of a compute-in-memory tile already holds a strided convolution's gaps (the
// mapper counts the gap after its last row and column), so the buffer check takes it as
// it is: ResNet-50's 1x1 stride-2 downsamples on all 16 tiles at batch 8 fit, and the
// generator lays the layer-sequential schedule out with the schedule's DRAM bytes.
void TestCim::strideGapsCountedOnce() {
    auto net = loadModel(std::string(TILESCOPE_SAMPLES) + "/models/resnet50.onnx");
    QVERIFY2(net.ok(), net.ok() ? "" : net.error().message.c_str());
    const Hardware hw = cimPreset();
    EvalContext ctx(*net, hw);
    const RATree t = RATree::layerSequential(*net, 8);
    const Evaluation ev = evaluate(ctx, t, 8, {});
    QVERIFY2(ev.valid, ev.reason.c_str());
    const Layer* down = nullptr;
    for (const Layer& l : net->layers)
        if (l.kind == LayerKind::Conv && l.strideH == 2 && l.kernelH == 1) down = &l;
    QVERIFY(down);
    Mapper mapper(*net, hw);
    const LeafMapping& m = mapper.map(int(down - net->layers.data()), hw.tiles(), 8);
    QCOMPARE(dramGapShare(*down, hw.arch, m.ph * m.bh, m.pw * m.bw), 1.0);
    QVERIFY(dramGapShare(*down, TileArch::Nvdla, m.ph * m.bh, m.pw * m.bw) > 1.0);
    auto r = generateProgram(ctx, t, 8, {});
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(double(r->programDramBytes), r->layout.evaluation.dramBytes);
}

QTEST_GUILESS_MAIN(TestCim)
#include "tst_cim.moc"
