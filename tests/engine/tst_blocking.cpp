// Leaves blocked in time (docs/cost-model.md §2b): a slice larger than its tile's buffer is
// worked through in blocks. A convolution, an attention product and an attention head in
// the flash order (query x key blocks) on one small tile, every expected figure worked out
// by hand in a comment (block counts and boxes, DRAM bytes with the halo rows or operand B
// read again per block, cycles); blocked programs replayed by the simulator; a tree without
// blocked leaves costs what it cost before blocking existed; weights that fit no blocking
// stay a buffer overflow naming the layer; and compute-in-memory tiles block too,
// programming their crossbars once for row blocks and per block for channel blocks.
#include "clirunner.h"
#include "codegen/codegen.h"
#include "eval/evaluator.h"
#include "eval/transfers.h"
#include "hw/mesh.h"
#include "mapping/cim.h"
#include "mapping/mapper.h"
#include "model/model_loader.h"
#include "netbuilder.h"
#include "replaycheck.h"
#include "report/layers.h"
#include "search/search.h"
#include "sim/fidelity.h"
#include "sim/simulator.h"

#include <QtTest>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace tilescope;

namespace {

// One tile (1024 MACs: 32 input x 32 output channel lanes; 8-bit data, so a byte an
// element) with a buffer of `bufferBytes`. DRAM by the default rule: 0.5 B/cycle per TOPS,
// 2 x 1024 MACs = 2 TOPS -> 1 B/cycle.
Hardware oneTile(Bytes bufferBytes) {
    Hardware hw = defaultHardware(1, 1, "one-tile");
    hw.bufferBytes = bufferBytes;
    return hw;
}

// One compute-in-memory tile of the `cim` preset (4 cores x 9 crossbars of 64 x 64 cells,
// 2 bits a cell: 16 output channels of 64 weight rows a crossbar, 36 crossbars; 8 cycles a
// crossbar pass, 50 cycles a written row, tile binding) with a buffer of
// `bufferBytes` and 8 DRAM bytes a cycle.
Hardware oneCimTile(Bytes bufferBytes) {
    Hardware hw;
    presetHardware("cim", hw);
    hw.meshX = hw.meshY = 1;
    hw.name = "one-cim-tile";
    hw.bufferBytes = bufferBytes;
    hw.dramBytesPerCycle = 8;
    return hw;
}

// The PROGRAM instructions of a program: how many, and the crossbar weight bytes they write.
std::pair<int, std::uint64_t> programs(const Program& p) {
    int n = 0;
    std::uint64_t bytes = 0;
    for (const TileProgram& tp : p.tiles)
        for (const Instruction& i : tp.instructions)
            if (i.op == Op::Program) ++n, bytes += i.bytes;
    return {n, bytes};
}

Box box(std::array<int, 4> lo, std::array<int, 4> hi) {
    Box b;
    b.lo = lo;
    b.hi = hi;
    return b;
}

// The worked example of docs/cost-model.md §2b: a 3x3 convolution, stride 1, padding 1,
// 16 -> 16 channels on 64 x 64, one tile with a 40 KiB buffer.
Network convExample() {
    Network n;
    n.name = "conv_example";
    n.layers.push_back(test::conv("conv", 16, 16, 64, 3, -1));
    return test::finish(n);
}
constexpr Bytes kConvBuffer = 40 * 1024;

// A program's DRAM LOADs of 3x3 weights (their boxes end at R = S = 3) and STOREs.
struct DramTransfers {
    int weightLoads = 0, stores = 0;
    std::uint64_t weightBytes = 0, storedBytes = 0;
};
DramTransfers dramTransfers(const Program& program) {
    DramTransfers d;
    for (const TileProgram& tp : program.tiles)
        for (const Instruction& i : tp.instructions) {
            if (i.op == Op::Load && i.src == kDram && i.hi[2] == 3 && i.hi[3] == 3)
                ++d.weightLoads, d.weightBytes += i.bytes;
            if (i.op == Op::Store && i.dst == kDram) ++d.stores, d.storedBytes += i.bytes;
        }
    return d;
}

// An attention score product Q x K^T (act x act, no weights) in the importer's geometry:
// rows -> the sq query positions (outH), reduction -> the d channels (inC), columns -> the
// sk key positions (outC); Q and K are network inputs, K the operand B.
Network scores(int d, int sq, int sk) {
    Network n;
    n.name = "scores";
    Layer l;
    l.name = "qk";
    l.kind = LayerKind::MatMul;
    l.op = "MatMul";
    l.inC = d, l.inH = sq, l.inW = 1;
    l.outC = sk, l.outH = sq, l.outW = 1;
    for (const char* in : {"q", "k"}) {
        LayerInput li;
        li.networkInput = in;
        li.bytesPerSample = Count(d) * (in[0] == 'q' ? sq : sk);
        l.inputs.push_back(li);
        n.inputBytes[in] = li.bytesPerSample;
    }
    n.layers.push_back(l);
    n.outputs = {"qk"};
    return n;
}

// One attention head in the importer's geometry: QK^T (d -> sk key channels on sq query
// rows, K its operand B), a Softmax over the keys, and AV (sk -> d channels on the sq
// rows, V its operand B); Q, K and V are network inputs.
Network attention(int d, int sq, int sk) {
    Network n = scores(d, sq, sk);
    n.name = "attention";
    Layer sm;
    sm.name = "softmax";
    sm.kind = LayerKind::Vector;
    sm.op = "Softmax";
    sm.inC = sm.outC = sk, sm.inH = sm.outH = sq, sm.inW = sm.outW = 1;
    LayerInput s;
    s.producer = 0;
    s.bytesPerSample = Count(sk) * sq;
    sm.inputs.push_back(s);
    n.layers.push_back(sm);
    Layer av;
    av.name = "av";
    av.kind = LayerKind::MatMul;
    av.op = "MatMul";
    av.inC = sk, av.inH = sq, av.inW = 1;
    av.outC = d, av.outH = sq, av.outW = 1;
    LayerInput a;
    a.producer = 1;
    a.bytesPerSample = Count(sk) * sq;
    av.inputs.push_back(a);
    LayerInput v;
    v.networkInput = "v";
    v.bytesPerSample = Count(d) * sk;
    av.inputs.push_back(v);
    n.inputBytes["v"] = v.bytesPerSample;
    n.layers.push_back(av);
    n.outputs = {"av"};
    return n;
}

// `heads` attention heads in one product each, as the importer gives multi-head attention:
// QK^T with one group per head (h x d -> h x sk channels, head-major), a Softmax over each
// head's keys, AV with one group per head (h x sk -> h x d); Q, K and V are network inputs.
Network attentionHeads(int heads, int d, int sq, int sk) {
    Network n = attention(d * heads, sq, sk * heads);
    n.name = "attention_heads";
    Layer& qk = n.layers[0];
    qk.groups = heads;
    qk.inputs[1].bytesPerSample = n.inputBytes["k"] = Count(heads) * d * sk;
    Layer& av = n.layers[2];
    av.groups = heads;
    av.inputs[1].bytesPerSample = n.inputBytes["v"] = Count(heads) * d * sk;
    return n;
}

// A decoder's prefill attention as the importer gives it with a KV cache: QK^T reads Q and
// operand B in two parts, the cache's past keys (flat, `past` keys) and the step's keys
// ([kvHeads x d channels, sq rows]), a Concat folded in front; AV likewise the past and the
// step's values. `heads` query heads share `kvHeads` key / value heads (grouped-query
// attention), each head sees past + sq keys.
Network attentionKvCache(int heads, int kvHeads, int d, int sq, int past) {
    const int keys = past + sq;
    Network n = attentionHeads(heads, d, sq, keys);
    n.name = "attention_kv_cache";
    auto parts = [&](Layer& l, const char* pastName, const char* stepName) {
        l.inputs.resize(1);
        for (const char* in : {pastName, stepName}) {
            LayerInput li;
            li.networkInput = in;
            li.bytesPerSample = Count(kvHeads) * d * (in == pastName ? past : sq);
            l.inputs.push_back(li);
            n.inputBytes[in] = li.bytesPerSample;
        }
    };
    n.inputBytes.erase("k");
    n.inputBytes.erase("v");
    parts(n.layers[0], "past_k", "k");
    parts(n.layers[2], "past_v", "v");
    return n;
}

// The attention exports' tree T [T [S [the three projections in `order`], QK^T, the
// Softmax, AV, the output projection]]: the projections side by side, then the chain.
RATree projectionsThenAttention(const Network& net, const std::array<const char*, 3>& order) {
    std::string text = "T 1/1\n\tT 1/1\n\t\tS 1/1\n";
    for (const char* p : order)
        text += std::string("\t\t\t/") + p + "/MatMul 1\n";
    text += "\t\t/qk/MatMul 1\n\t\t/Softmax 1\n\t\t/av/MatMul 1\n\t\t/o/MatMul 1\n";
    return test::parseTree(text, net);
}

Evaluation detailed(EvalContext& ctx, const RATree& t, int batch) {
    EvalOptions opt;
    opt.detail = true;
    return evaluate(ctx, t, batch, opt);
}

// Generates tree t's program into `out` and replays it: it must move the estimate's DRAM
// bytes exactly and take the estimate's time within 15%.
void replaysAsEstimated(EvalContext& ctx, const RATree& t, const Hardware& hw, int batch,
                        const Evaluation& e, CodegenResult& out) {
    auto r = generateProgram(ctx, t, batch, {});
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    out = std::move(r).value();
    QCOMPARE(double(out.programDramBytes), e.dramBytes);
    SimResult s;
    test::replayChecked(out, hw, s);
    if (QTest::currentTestFailed()) return;
    const ModelAgreement a = modelAgreement(s.delay, e.delay);
    qInfo("sim %.0f eval %.0f ratio %.3f", s.delay, e.delay, a.ratio);
    QVERIFY2(a.agrees, qPrintable(QString("sim %1 eval %2").arg(s.delay).arg(e.delay)));
}

// The COMPUTE instructions of the program, in issue order over the tiles.
std::vector<const Instruction*> computes(const Program& p) {
    std::vector<const Instruction*> out;
    for (const TileProgram& tp : p.tiles)
        for (const Instruction& i : tp.instructions)
            if (i.op == Op::Compute) out.push_back(&i);
    return out;
}

std::string readFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// Exports `result` (res, its JSON) to `prog` in `formats` and replays it through the CLI:
// deadlock-free, the result's DRAM bytes, the delay within 15% of the estimate.
void exportAndReplayCli(const QString& result, const nlohmann::json& res, const QString& prog,
                        const QString& formats) {
    test::CliRun r =
        test::runCli({"export-instructions", result, "--out", prog, "--formats", formats});
    QVERIFY2(r.status == 0, qPrintable(r.err + r.out));
    const QString sim = prog + "/sim.json";
    r = test::runCli({"simulate", prog, "--json", sim, "--quiet"});
    QVERIFY2(r.status == 0, qPrintable(r.err + r.out));
    const auto s = nlohmann::json::parse(readFile(sim.toStdString()));
    QVERIFY(s["deadlock_free"].get<bool>());
    QCOMPARE(s["dram_bytes"].get<double>(), res["dram_bytes"].get<double>());
    QCOMPARE(s["schedule_dram_bytes"].get<double>(), res["dram_bytes"].get<double>());
    const double ratio = s["delay_ratio"].get<double>();
    qInfo("sim/eval delay %.3f", ratio);
    QVERIFY2(ratio >= 0.85 && ratio <= 1.15, qPrintable(QString::number(ratio)));
}

} // namespace

class TestBlocking : public QObject {
    Q_OBJECT
  private slots:
    void convRowBlocks();
    void inputChannelParts();
    void inputChannelPartsEvaluated();
    void inputChannelPartsOverTheNoc_data();
    void inputChannelPartsOverTheNoc();
    void convRowBlocksEvaluated();
    void scoresRowBlocks();
    void scoresChannelBlocksReadOperandAPerBlock();
    void attentionKeyBlocks();
    void attentionHeadsKeyBlocks();
    void attentionKvCacheKeyBlocks();
    void sCutInPassDrawnWithoutOverlap();
    void streamedInputBoundedByCompulsory();
    void chainWaitsForItsLinks();
    void keyBlocksNeverEmpty();
    void flashKeepsKeysOnOneTile();
    void roundTrip_data();
    void roundTrip();
    void roundTripCli();
    void channelSplitCli();
    void longPromptPrefillCli();
    void unblockedTreeUnchanged();
    void sCutStagesStreamRowBlocks();
    void stagesStreamOnlyWhereTheCutFits();
    void segStemStagesStream();
    void weightsStreamInChannelBlocks();
    void inputChannelBlocksKeepPartialSums();
    void weightsThatFitNoBlocking();
    void cimRowBlocksProgramOnce();
    void cimRowBlocksOverInvocations();
    void cimChannelBlocksProgramPerBlock();
    void cimInputChannelBlocksProgramTheirCut();
};

// The convolution's slice does not fit, so the mapper blocks it by rows:
//   whole slice: input 16 x 64 x 64 = 65536 B, weights 16 x 16 x 3 x 3 = 2304 B, output
//   16 x 64 x 64 = 65536 B: 133376 B, 3.3 x the 40960 B buffer (the output alone 1.6 x).
//   With bh row blocks of h = ceil(64 / bh) output rows, a block reads h + 2 input rows (the
//   halo of the 3x3 window): input 16 x (h + 2) x 64 = 1024 (h + 2), output 1024 h, and
//   fits when weights + 2 blocks <= buffer: 2304 + 2 (1024 (h + 2) + 1024 h)
//   = 2304 + 4096 (h + 1) <= 40960, i.e. h <= 8: bh = 7 gives h = 10 (47360 B, too much),
//   bh = 8 gives h = 8 (39168 B). Rows and columns cost the same on a square map; rows are
//   tried first and kept on a tie.
//   A block: input 16 x 10 x 64 = 10240 B, output 16 x 8 x 64 = 8192 B.
//   Cycles: a block is 8 x 64 = 512 positions x 9 kernel taps x ceil(16 / 32) input x
//   ceil(16 / 32) output channel passes = 4608; the leaf 8 x 4608 = 36864 (as unblocked:
//   64 x 64 x 9 = 36864, the rows divide evenly).
// Input-channel parts (LeafMapping::pc): a 1x1 convolution of many input channels and few
// outputs on 16 tiles splits its reduction once the mapper may; the MACs stay, the slowest
// tile's time drops; the members of a slot share its output box, each reads its own input
// channels, and the root alone holds the output.
void TestBlocking::inputChannelParts() {
    const Network net = test::network("reduce", {test::conv("c", 4096, 16, 4, 1, -1)});
    const Hardware hw = defaultHardware(4, 4, "edge");
    Mapper plain(net, hw);
    const LeafMapping a = plain.map(0, 16, 1);
    QCOMPARE(a.pc, 1);
    Mapper split(net, hw);
    split.setChannelSplit(true);
    const LeafMapping& m = split.map(0, 16, 1);
    QVERIFY2(m.pc > 1, m.partitionLabel().c_str());
    QCOMPARE(m.groupSize(), 16);
    QCOMPARE(m.macs, a.macs);
    QVERIFY2(m.cycles < a.cycles,
             (std::to_string(m.cycles) + " vs " + std::to_string(a.cycles)).c_str());
    QVERIFY(m.partitionLabel().find(" C" + std::to_string(m.pc)) != std::string::npos);
    const TransferGeometry geo(net, hw.dataBits, hw.loadOrder, std::uint64_t(hw.stageBytes));
    std::vector<int> covered(4096, 0);
    for (int t = 0; t < 16; ++t) {
        const int root = t - t % m.pc;
        QCOMPARE(TransferGeometry::holdsOutput(m, t), t == root);
        const Box o = geo.tileBox(0, m, t, 0, 1);
        QCOMPARE(o.lo, geo.tileBox(0, m, root, 0, 1).lo);
        QCOMPARE(o.hi, geo.tileBox(0, m, root, 0, 1).hi);
        const auto [c0, c1] = geo.memberChannels(0, m, t);
        QCOMPARE(c1 - c0, 4096 / m.pc);
        const Box w = geo.memberWindow(0, 0, m, t, o);
        QCOMPARE(w.lo[1], c0);
        QCOMPARE(w.hi[1], c1);
        if (t == root) // one slot's members cover the channels once
            for (int u = t; u < t + m.pc; ++u)
                for (int c = geo.memberChannels(0, m, u).first;
                     c < geo.memberChannels(0, m, u).second; ++c)
                    ++covered[size_t(c)];
    }
    const int slotCount = 16 / m.pc;
    QVERIFY(std::all_of(covered.begin(), covered.end(), [&](int n) { return n == slotCount; }));
}

// The split leaf evaluated: its DRAM bytes are the unsplit one's (input, weights and output
// each once: a member reads its channels' share), and its NoC carries each member's partial
// sums to its root, hop by hop, on top of what the unsplit leaf moves.
void TestBlocking::inputChannelPartsEvaluated() {
    const Network net = test::network("reduce", {test::conv("c", 4096, 16, 4, 1, -1)});
    Hardware hw = defaultHardware(4, 4, "edge");
    const RATree tree = test::parseTree("T 1/1\n\tc 1\n", net);
    const Evaluation plain = evaluate(net, hw, tree, 1, {});
    hw.channelSplit = true;
    const Evaluation split = evaluate(net, hw, tree, 1, {});
    QVERIFY2(plain.valid, plain.reason.c_str());
    QVERIFY2(split.valid, split.reason.c_str());
    QCOMPARE(split.dramBytes, plain.dramBytes);
    QCOMPARE(split.macs, plain.macs);
    Mapper mapper(net, hw);
    mapper.setChannelSplit(true);
    const LeafMapping& m = mapper.map(0, 16, 1);
    QVERIFY(m.pc > 1);
    const Mesh mesh(hw);
    const TransferGeometry geo(net, hw.dataBits, hw.loadOrder, std::uint64_t(hw.stageBytes));
    double psumHops = 0; // each member's box at 32 bits, over its route to the root
    for (int t = 0; t < 16; ++t) {
        const int ic = TransferGeometry::memberOf(m, t);
        if (ic == 0) continue;
        psumHops += double(geo.tileBox(0, m, t, 0, 1).volume()) * 4 *
                    mesh.hops(mesh.tileAt(t), mesh.tileAt(t - ic));
    }
    QVERIFY(psumHops > 0);
    // Each member's channels reach it alone instead of every input reaching every tile: on
    // this layer the NoC carries less, partial sums included.
    QVERIFY(split.nocHopBytes > psumHops);
    QVERIFY(split.nocHopBytes < plain.nocHopBytes);
    qInfo("pc %d: NoC hop bytes %.0f split, %.0f plain; partial sums %.0f; delay %.0f vs %.0f",
          m.pc, split.nocHopBytes, plain.nocHopBytes, psumHops, split.delay, plain.delay);
    // Its program: every member computes and SENDs its partial sums to its root, whose add
    // (a COMPUTE of the mapper's reduceCycles) waits for them; the roots alone store. It
    // replays as estimated, DRAM bytes exact.
    EvalContext ctx(net, hw);
    CodegenResult out;
    replaysAsEstimated(ctx, tree, hw, 1, split, out);
    if (QTest::currentTestFailed()) return;
    int sends = 0, stores = 0, adds = 0;
    const std::vector<int>& snake = mesh.snakeOrder();
    for (const TileProgram& tp : out.program.tiles)
        for (const Instruction& i : tp.instructions) {
            const int t = int(std::find(snake.begin(), snake.end(), i.tile) - snake.begin());
            const bool root = TransferGeometry::holdsOutput(m, t);
            if (i.op == Op::Send) {
                ++sends;
                QVERIFY(!root);
                QCOMPARE(i.dst, mesh.tileAt(t - TransferGeometry::memberOf(m, t)));
                QCOMPARE(double(i.bytes), double(geo.tileBox(0, m, t, 0, 1).volume()) * 4);
            }
            if (i.op == Op::Store) {
                ++stores;
                QVERIFY(root);
            }
            if (i.op == Op::Compute && i.cycles == std::uint64_t(m.reduceCycles)) ++adds;
        }
    QCOMPARE(sends, 16 - 16 / m.pc);
    QCOMPARE(stores, 16 / m.pc);
    QVERIFY(adds >= 16 / m.pc);
}

// A split leaf between two others: its members read their channels of the producer's output
// over the NoC (or in place), its roots send the reduced output on to the consumer. In one
// segment on the same tiles (T) and side by side (S, the split leaf on its own 8 tiles),
// the program replays as estimated, DRAM bytes exact; the split leaf's figures are the
// mapper's with the template's tile.channel_split.
void TestBlocking::inputChannelPartsOverTheNoc_data() {
    QTest::addColumn<QString>("tree");
    QTest::newRow("T") << "T 1/1\n\twide 1\n\tnarrow 1\n\tout 1\n";
    QTest::newRow("S") << "S 1/1\n\twide 1\n\tnarrow 1\n\tout 1\n";
}

void TestBlocking::inputChannelPartsOverTheNoc() {
    QFETCH(QString, tree);
    const Network net = test::network("reduce", {test::conv("wide", 16, 4096, 4, 1, -1),
                                                 test::conv("narrow", 4096, 16, 4, 1, 0),
                                                 test::conv("out", 16, 16, 4, 1, 1)});
    auto hw = parseHardware(R"({"mesh": {"x": 4, "y": 4}, "tile": {"channel_split": true}})",
                            "split.json");
    QVERIFY(hw.ok());
    EvalContext ctx(net, *hw);
    const RATree t = test::parseTree(tree.toStdString(), net);
    const Evaluation e = detailed(ctx, t, 1);
    QVERIFY2(e.valid, e.reason.c_str());
    CodegenResult out;
    replaysAsEstimated(ctx, t, *hw, 1, e, out);
    if (QTest::currentTestFailed()) return;
    const LeafLayout& leaf = *std::find_if(out.layout.leaves.begin(), out.layout.leaves.end(),
                                           [](const LeafLayout& l) { return l.layer == 1; });
    const LeafMapping& m = leaf.mapping;
    QVERIFY2(m.pc > 1, m.partitionLabel().c_str());
    Mapper mapper(net, *hw);
    QCOMPARE(mapper.map(1, leaf.tileCount, 1).partitionLabel(), m.partitionLabel());
    // Each member sends its partial sums to its root alone; the narrow layer's output leaves
    // the roots only.
    int psumSends = 0;
    for (const TileProgram& tp : out.program.tiles)
        for (const Instruction& i : tp.instructions) {
            if (i.op != Op::Send || i.layer != 1) continue;
            const int t =
                int(std::find(leaf.tiles.begin(), leaf.tiles.end(), i.tile) - leaf.tiles.begin());
            QVERIFY(t < leaf.tileCount);
            if (TransferGeometry::holdsOutput(m, t)) continue;
            ++psumSends;
            QCOMPARE(i.dst, leaf.tiles[size_t(t - TransferGeometry::memberOf(m, t))]);
            QVERIFY(i.mcast.empty());
        }
    QCOMPARE(psumSends, leaf.tileCount - leaf.tileCount / m.pc);
}

void TestBlocking::convRowBlocks() {
    const Network net = convExample();
    const Hardware hw = oneTile(kConvBuffer);
    Mapper mapper(net, hw);
    const LeafMapping& m = mapper.map(0, 1, 1);
    QCOMPARE(m.bh, 8);
    QCOMPARE(m.bk, 1);
    QCOMPARE(m.bw, 1);
    QCOMPARE(m.blocks(), 8);
    QCOMPARE(m.blockLabel(), std::string("8 row blocks"));
    QCOMPARE(m.ifmapPerTile, 10240.0);
    QCOMPARE(m.ofmapPerTile, 8192.0);
    QCOMPARE(m.weightPerTile, 2304.0);
    QCOMPARE(m.activationPerTile(), 36864.0);
    QCOMPARE(m.weightPerTile + m.activationPerTile(), 39168.0);
    QCOMPARE(m.cycles, 36864.0);
    QCOMPARE(mapper.unblocked(0, 1, 1).cycles, 36864.0);
    // Block j holds output rows [8j, 8j + 8), every channel and column; the tile's box is
    // their hull, the whole output.
    const TransferGeometry geo(net, hw.dataBits);
    for (int j = 0; j < 8; ++j)
        QCOMPARE(geo.blockBox(0, m, 0, j, 0, 1), box({0, 0, 8 * j, 0}, {1, 16, 8 * j + 8, 64}));
    QCOMPARE(geo.tileBox(0, m, 0, 0, 1), box({0, 0, 0, 0}, {1, 16, 64, 64}));
    // Block j's input window: rows [8j - 1, 8j + 9) clipped to the map, 9 rows at the top and
    // bottom, 10 between.
    QCOMPARE(geo.window(0, 0, geo.blockBox(0, m, 0, 0, 0, 1)), box({0, 0, 0, 0}, {1, 16, 9, 64}));
    QCOMPARE(geo.window(0, 0, geo.blockBox(0, m, 0, 3, 0, 1)), box({0, 0, 23, 0}, {1, 16, 33, 64}));
    QCOMPARE(geo.window(0, 0, geo.blockBox(0, m, 0, 7, 0, 1)), box({0, 0, 55, 0}, {1, 16, 64, 64}));
}

// The convolution evaluated alone and replayed. DRAM bytes, by hand:
//   input: 9 + 6 x 10 + 9 = 78 rows of 16 x 64 B = 79872 B (the whole map, 64 rows =
//   65536 B, plus 2 halo rows at each of the 7 block boundaries read again, 14 x 1024 =
//   14336 B); output stored once, 65536 B; weights read once, 2304 B. Total 147712 B, of
//   which blocking adds 14336 B.
//   The program: 8 invocations of the tile, one per block, each computing 4608 cycles.
void TestBlocking::convRowBlocksEvaluated() {
    const Network net = convExample();
    const Hardware hw = oneTile(kConvBuffer);
    EvalContext ctx(net, hw);
    const RATree t = test::parseTree("T 1/1\n\tconv 1\n", net);
    const Evaluation e = detailed(ctx, t, 1);
    QVERIFY2(e.valid, e.reason.c_str());
    QCOMPARE(e.blockedLeaves, 1);
    QCOMPARE(e.dramBytes, 147712.0);
    QCOMPARE(e.blockingDramBytes, 14336.0);
    const NodeFigures& f = e.nodes[size_t(t.nodeAtPath("/0"))];
    QCOMPARE(f.blocks, 8);
    QCOMPARE(f.blocking, std::string("8 row blocks"));
    QCOMPARE(f.runDramBytes, 147712.0);
    QCOMPARE(f.runBlockingDramBytes, 14336.0);
    QVERIFY2(f.blockingReason.find("8 row blocks") != std::string::npos, f.blockingReason.c_str());
    // At 1 B/cycle the leaf is DRAM bound: no shorter than its 147712 bytes.
    QVERIFY(e.delay >= 147712.0);

    CodegenResult r;
    replaysAsEstimated(ctx, t, hw, 1, e, r);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(r.workloadCount, size_t(8));
    QCOMPARE(r.programDramBytes, std::uint64_t(147712));
    const auto cs = computes(r.program);
    QCOMPARE(cs.size(), size_t(8));
    for (const Instruction* c : cs)
        QCOMPARE(c->cycles, std::uint64_t(4608));
}

// Attention scores Q x K^T with 64 channels, 1024 query rows and 64 keys, one tile of
// 44 KiB (45056 B). By hand:
//   Q = 64 x 1024 = 65536 B, K = 64 x 64 = 4096 B, scores 64 x 1024 = 65536 B: 135168 B.
//   Key (channel) blocks keep all of Q per block: 2 x 65536 > 45056, never fits.
//   Row blocks of h = ceil(1024 / bh) queries: Q 64 h, all of K (4096), scores 64 h; fits
//   when 2 (128 h + 4096) <= 45056, i.e. h <= 144: bh = 7 gives h = 147 (45824 B, too
//   much), bh = 8 gives h = 128 (40960 B). A block: Q 8192 B, K 4096 B, scores 8192 B.
//   (Columns: the product has one, nothing to block.)
//   Cycles: a block is 128 rows x ceil(64 / 32) input x ceil(64 / 32) output passes = 512;
//   the leaf 8 x 512 = 4096.
//   DRAM: Q once (8 blocks of 128 rows = 65536 B), K once per block (8 x 4096 = 32768 B),
//   scores stored once (65536 B): 163840 B; blocking adds K read 7 more times, 28672 B.
void TestBlocking::scoresRowBlocks() {
    const Network net = scores(64, 1024, 64);
    const Hardware hw = oneTile(44 * 1024);
    Mapper mapper(net, hw);
    const LeafMapping& m = mapper.map(0, 1, 1);
    QCOMPARE(m.bh, 8);
    QCOMPARE(m.bk, 1);
    QCOMPARE(m.bw, 1);
    QCOMPARE(m.ifmapPerTile, 8192.0);
    QCOMPARE(m.operandBPerTile, 4096.0);
    QCOMPARE(m.ofmapPerTile, 8192.0);
    QCOMPARE(m.activationPerTile(), 40960.0);
    QCOMPARE(m.cycles, 4096.0);
    const TransferGeometry geo(net, hw.dataBits);
    for (int j = 0; j < 8; ++j) {
        const Box b = geo.blockBox(0, m, 0, j, 0, 1);
        QCOMPARE(b, box({0, 0, 128 * j, 0}, {1, 64, 128 * j + 128, 1}));
        // Its Q rows, and all of K (operand B: the keys' share of it, here every key).
        QCOMPARE(geo.window(0, 0, b), box({0, 0, 128 * j, 0}, {1, 64, 128 * j + 128, 1}));
        QCOMPARE(geo.window(0, 1, b), box({0, 0, 0, 0}, {1, 4096, 1, 1}));
    }

    EvalContext ctx(net, hw);
    const RATree t = test::parseTree("T 1/1\n\tqk 1\n", net);
    const Evaluation e = detailed(ctx, t, 1);
    QVERIFY2(e.valid, e.reason.c_str());
    QCOMPARE(e.blockedLeaves, 1);
    QCOMPARE(e.dramBytes, 163840.0);
    QCOMPARE(e.blockingDramBytes, 28672.0);
    QCOMPARE(e.nodes[size_t(t.nodeAtPath("/0"))].blocking, std::string("8 row blocks"));

    CodegenResult r;
    replaysAsEstimated(ctx, t, hw, 1, e, r);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(r.programDramBytes, std::uint64_t(163840));
    const auto cs = computes(r.program);
    QCOMPARE(cs.size(), size_t(8));
    for (const Instruction* c : cs)
        QCOMPARE(c->cycles, std::uint64_t(512));
}

// Key (channel) blocks of a product re-read all of operand A (Q) per block, which the
// evaluator counts; the mapper's choice between the blockings must count it too. 64
// channels, 384 queries, 64 keys on one 50 KiB (51200 B) tile. By hand:
//   Q = 64 x 384 = 24576 B, K = 64 x 64 = 4096 B, scores 64 x 384 = 24576 B: 53248 B, too
//   much unblocked.
//   Key blocks of k keys: Q 24576, K 64 k, scores 384 k; 2 (24576 + 448 k) <= 51200 for
//   k <= 2: 32 blocks of 2 keys. DRAM: Q per block 32 x 24576 + K once 4096 + scores
//   24576 = 815104 B.
//   Row blocks of h queries: Q 64 h, K 4096, scores 64 h; 2 (128 h + 4096) <= 51200 for
//   h <= 168: 3 blocks of 128 rows. DRAM: Q once 24576 + K per block 3 x 4096 + scores
//   24576 = 61440 B; and a sixteenth of the compute (a 2-key block fills 2 of the 32
//   output lanes: 32 x 384 x 2 = 24576 cycles against 3 x 128 x 2 x 2 = 1536).
//   Row blocks are the better blocking on every count.
void TestBlocking::scoresChannelBlocksReadOperandAPerBlock() {
    const Network net = scores(64, 384, 64);
    const Hardware hw = oneTile(50 * 1024);
    EvalContext ctx(net, hw);
    const RATree t = test::parseTree("T 1/1\n\tqk 1\n", net);
    const Evaluation e = detailed(ctx, t, 1);
    QVERIFY2(e.valid, e.reason.c_str());
    const NodeFigures& f = e.nodes[size_t(t.nodeAtPath("/0"))];
    qInfo("chosen: %s, DRAM %.0f B", f.blocking.c_str(), e.dramBytes);
    QCOMPARE(f.blocking, std::string("3 row blocks"));
    QCOMPARE(e.dramBytes, 61440.0);
}

// Attention's flash order (docs/cost-model.md §2b, "Key blocks"): d = 32, 64 queries, 256
// keys on one 8 KiB tile (64 vector lanes, 1 DRAM byte a cycle). By hand, 8-bit:
//   Q = 32 x 64 = 2048 B, K = V = 32 x 256 = 8192 B, scores 256 x 64 = 16384 B.
//   Row blocks alone never fit: a one-row block of AV holds the row's 256 probabilities
//   and all of V twice, 2 (256 + 8192 + 32 x 4) > 8192.
//   A block of r query rows and c keys holds: QK^T Q 32 r, K 32 c, scores r c; the
//   Softmax its scores in and out and the rows' statistics 8 r; AV the probabilities r c,
//   V 32 c and its partial sums 32 r x 4 B, beside the Softmax's output and statistics:
//   AV's 2 (r c + 32 c + 128 r) + r c + 16 r <= 8192 decides. With c = 16 (16 key
//   blocks): 2 (16 r + 512 + 128 r) + 32 r = 320 r + 1024 <= 8192 for r <= 22: 3 query
//   blocks (22, 22, 20 rows), 48 blocks in all.
//   DRAM: Q once (a query block's rows loaded with its first key block and kept to its
//   last) 2048, K and V once per query block 3 x 8192 each, the output once 2048: 53248 B;
//   the scores never leave the tile. (Q again for every key block would add 15 x 2048.)
//   Cycles: a full QK^T or AV block is 22 rows x 1 input pass x 1 output pass = 22, a
//   Softmax block 22 x 16 x 4 / 64 = 22; the blocks add up to 16 x 64 / 22 = 46.5 full
//   ones, 1024 cycles each layer. The flash order adds a Softmax block's statistics,
//   ceil(3 x 22 / 64) = 2 cycles, and AV's rescale of its 22 x 32 partial sums,
//   ceil(704 / 64) = 11 cycles: 1117 and 1536. DRAM (53248 cycles) dominates.
void TestBlocking::attentionKeyBlocks() {
    const Network net = attention(32, 64, 256);
    const Hardware hw = oneTile(8 * 1024);
    QCOMPARE(hw.vectorLanes, 64);
    Mapper mapper(net, hw);
    const std::vector<LeafMapping> ms = mapper.chainMapping({0, 1, 2}, 1, 1);
    QCOMPARE(ms.size(), size_t(3));
    for (const LeafMapping& m : ms) {
        QVERIFY(m.flash);
        QCOMPARE(m.bh, 3);
        QCOMPARE(m.blocks(), 48);
        QCOMPARE(m.blockLabel(), std::string("3 query x 16 key blocks (flash order)"));
    }
    QCOMPARE(ms[0].bk, 16);
    QCOMPARE(ms[1].bk, 16);
    QCOMPARE(ms[2].bc, 16);
    QCOMPARE(ms[0].ifmapPerTile, 704.0);
    QCOMPARE(ms[0].operandBPerTile, 512.0);
    QCOMPARE(ms[0].ofmapPerTile, 352.0);
    QCOMPARE(ms[1].statsPerTile, 176.0);
    QCOMPARE(ms[2].ifmapPerTile, 352.0);
    QCOMPARE(ms[2].operandBPerTile, 512.0);
    QCOMPARE(ms[2].ofmapPerTile, 2816.0);
    QCOMPARE(ms[2].activationPerTile() + ms[1].ofmapPerTile + 2 * ms[1].statsPerTile, 8064.0);
    QCOMPARE(std::round(ms[0].cycles), 1024.0);
    QCOMPARE(std::round(ms[1].cycles), 1117.0);
    QCOMPARE(std::round(ms[2].cycles), 1536.0);

    // Block j is (query block j / 16, key block j % 16) in all three: block 21 is rows
    // [22, 44) and keys [80, 96); AV reads those probabilities and V's share of keys 80-95.
    const TransferGeometry geo(net, hw.dataBits);
    QCOMPARE(geo.blockBox(0, ms[0], 0, 21, 0, 1), box({0, 80, 22, 0}, {1, 96, 44, 1}));
    QCOMPARE(geo.blockBox(1, ms[1], 0, 21, 0, 1), box({0, 80, 22, 0}, {1, 96, 44, 1}));
    const Box avOut = geo.blockBox(2, ms[2], 0, 21, 0, 1);
    QCOMPARE(avOut, box({0, 0, 22, 0}, {1, 32, 44, 1}));
    QCOMPARE(geo.blockWindow(2, 0, ms[2], 21, avOut), box({0, 80, 22, 0}, {1, 96, 44, 1}));
    QCOMPARE(geo.blockWindow(2, 1, ms[2], 21, avOut), box({0, 2560, 0, 0}, {1, 3072, 1, 1}));

    EvalContext ctx(net, hw);
    const RATree t = test::parseTree("T 1/1\n\tT 1/1\n\t\tqk 1\n\t\tsoftmax 1\n\t\tav 1\n", net);
    const Evaluation e = detailed(ctx, t, 1);
    QVERIFY2(e.valid, e.reason.c_str());
    QCOMPARE(e.dramBytes, 53248.0);
    const NodeFigures& qk = e.nodes[size_t(t.nodeAtPath("/0/0"))];
    const NodeFigures& sm = e.nodes[size_t(t.nodeAtPath("/0/1"))];
    const NodeFigures& av = e.nodes[size_t(t.nodeAtPath("/0/2"))];
    QCOMPARE(qk.blocking, std::string("3 query x 16 key blocks (flash order)"));
    QCOMPARE(qk.runDramBytes, 2048.0 + 24576.0); // Q once, K per query block
    QCOMPARE(sm.runDramBytes, 0.0);
    QCOMPARE(av.runDramBytes, 24576.0 + 2048.0); // V per query block, the output once
    QVERIFY(e.delay >= 53248.0);

    CodegenResult r;
    replaysAsEstimated(ctx, t, hw, 1, e, r);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(r.programDramBytes, std::uint64_t(53248));
    QCOMPARE(computes(r.program).size(), size_t(3 * 48));
    // Only AV's output is stored, once per query block.
    const DramTransfers d = dramTransfers(r.program);
    QCOMPARE(d.storedBytes, std::uint64_t(2048));
    // Each Softmax COMPUTE writes its probabilities and its rows' statistics (8 B a row,
    // kept from a query block's first key block to its last, which the later ones also
    // read): 16 key blocks x 64 rows x (16 + 8) B written, 15 x 64 x 8 B read.
    std::uint64_t written = 0, statsRead = 0;
    for (const Instruction* c : computes(r.program)) {
        if (c->layer != 1) continue;
        for (const BufferRef& b : c->buffers)
            if (b.write)
                written += b.bytes;
            else if (b.bytes == 8 * std::uint64_t(c->hi[2] - c->lo[2]))
                statsRead += b.bytes;
    }
    QCOMPARE(written, std::uint64_t(16 * 64 * 24));
    QCOMPARE(statsRead, std::uint64_t(15 * 64 * 8));
}

// Two heads of attentionKeyBlocks' size (d 32, 64 queries, 256 keys each) in one product
// each, on the same 8 KiB tile. AV keeps both heads' partial sums, 13 query rows x 64
// outputs x 4 B = 3,328 B a block (4 query blocks: 16 rows, 4,096 B, twice over the buffer
// with nothing else), so 5 query blocks (13, 13, 13, 13, 12 rows). Beside them the key
// blocks may hold at most 12 keys: AV's two blocks 2 x (13 k + 32 k + 3,328) and the
// Softmax's output block and statistics (13 k + 2 x 104) within 8,192 B: 103 k <= 1,328.
// The largest such power of two dividing a head's 256 keys is 8: 32 key blocks a head.
void TestBlocking::attentionHeadsKeyBlocks() {
    const Network net = attentionHeads(2, 32, 64, 256);
    const Hardware hw = oneTile(8 * 1024);
    Mapper mapper(net, hw);
    QVERIFY(mapper.flashTriple(0, 1, 2));
    const std::vector<LeafMapping> ms = mapper.chainMapping({0, 1, 2}, 1, 1);
    QCOMPARE(ms.size(), size_t(3));
    for (const LeafMapping& m : ms) {
        QVERIFY(m.flash);
        QCOMPARE(m.heads, 2);
        QCOMPARE(m.bh, 5);
        QCOMPARE(m.blocks(), 5 * 2 * 32);
        QCOMPARE(m.blockLabel(), std::string("5 query x 2 heads x 32 key blocks (flash order)"));
    }
    QCOMPARE(ms[0].bk, 64);
    QCOMPARE(ms[2].bc, 64);
    QCOMPARE(ms[0].ifmapPerTile, 416.0);    // 13 rows of one head's Q (32 channels)
    QCOMPARE(ms[0].operandBPerTile, 256.0); // 8 keys of that head's K
    QCOMPARE(ms[1].statsPerTile, 104.0);    // 13 rows x 8 B, one head at a time
    QCOMPARE(ms[2].operandBPerTile, 256.0); // 8 keys of V
    QCOMPARE(ms[2].ofmapPerTile, 3328.0);   // both heads' partial sums
    QCOMPARE(ms[2].activationPerTile() + ms[1].ofmapPerTile + 2 * ms[1].statsPerTile, 7688.0);
    // AV: a block is one head's product, 13 rows x 1 x 1 lane blocks = 13 cycles, and its
    // rescale of that head's 13 x 32 partial sums, ceil(416 / 64) = 7 cycles; 64 / 13
    // full query blocks x 64 key blocks: (13 + 7) x 315.08 = 6,301.5.
    QCOMPARE(std::round(ms[0].cycles), 4096.0);
    QCOMPARE(std::round(ms[2].cycles * 10) / 10, 6301.5);

    // Block j: query block j / 64, head (j % 64) / 32, key block j % 32. Block 100 is rows
    // [13, 26), head 1's keys [32, 40): QK^T reads head 1's Q channels [32, 64).
    const TransferGeometry geo(net, hw.dataBits);
    const Box qk100 = geo.blockBox(0, ms[0], 0, 100, 0, 1);
    QCOMPARE(qk100, box({0, 288, 13, 0}, {1, 296, 26, 1}));
    QCOMPARE(geo.blockWindow(0, 0, ms[0], 100, qk100), box({0, 32, 13, 0}, {1, 64, 26, 1}));
    QVERIFY(ms[0].firstKeyBlock(96) && ms[0].lastKeyBlock(95) && !ms[0].firstKeyBlock(100));
    QVERIFY(ms[0].readsInput(0, 96) && !ms[0].readsInput(0, 100) && ms[0].readsInput(1, 100));

    EvalContext ctx(net, hw);
    const RATree t = test::parseTree("T 1/1\n\tT 1/1\n\t\tqk 1\n\t\tsoftmax 1\n\t\tav 1\n", net);
    const Evaluation e = detailed(ctx, t, 1);
    QVERIFY2(e.valid, e.reason.c_str());
    // Q once (64 rows x 64 channels: each head's rows with its first key block), K and V
    // once per query block (2 x 256 x 32 = 16,384 B, x 5), the output once (64 x 64).
    QCOMPARE(e.nodes[size_t(t.nodeAtPath("/0/0"))].runDramBytes, 4096.0 + 5 * 16384.0);
    QCOMPARE(e.nodes[size_t(t.nodeAtPath("/0/1"))].runDramBytes, 0.0);
    QCOMPARE(e.nodes[size_t(t.nodeAtPath("/0/2"))].runDramBytes, 5 * 16384.0 + 4096.0);
    QCOMPARE(e.dramBytes, 172032.0);
    // AV's probabilities stream on chip from the Softmax: its bound is its compulsory
    // bytes (V and the output once), not its layer's pebble bound alone.
    QCOMPARE(layerFigures(e, t, net, hw)[2].ioLowerBoundBytes, 16384.0 + 4096.0);

    CodegenResult r;
    replaysAsEstimated(ctx, t, hw, 1, e, r);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(r.programDramBytes, std::uint64_t(172032));
    QCOMPARE(computes(r.program).size(), size_t(3 * 320));
    QCOMPARE(dramTransfers(r.program).storedBytes, std::uint64_t(4096));
    // The Softmax's statistics are a head's: written by its first key block, read by its
    // 31 later ones, per query block. Its scores block is 8 B a row too: 64 key blocks of
    // every row read once.
    std::uint64_t rowReads = 0;
    for (const Instruction* c : computes(r.program))
        if (c->layer == 1)
            for (const BufferRef& b : c->buffers)
                if (!b.write && b.bytes == 8 * std::uint64_t(c->hi[2] - c->lo[2]))
                    rowReads += b.bytes;
    QCOMPARE(rowReads, std::uint64_t(64 * 64 * 8 + 31 * 2 * 64 * 8));
}

// A prefill with a KV cache: 4 query heads sharing 2 key / value heads of d 16, 32 new
// tokens after 8 cached ones (40 keys a head), one 4 KiB tile. AV keeps every head's
// partial sums: r rows x 64 x 4 B, so 5 query blocks (7 rows, 1,792 B; 8 rows would fill
// the buffer twice over). Beside them c keys a block: 2 (7 c + 16 c + 1,792) for AV and
// 7 c + 2 x 56 for the Softmax: 53 c <= 400, c <= 7, so 8 key blocks a head of 5 keys.
// A block's keys come from the parts that hold them: head 0's block 1 (keys 5-9) reads
// cached keys 5-7 and new keys 0-1 of its key head; heads 0 and 1 read key head 0. Without
// a cache (one operand B holding both key heads) the blocks and bytes are the same.
void TestBlocking::attentionKvCacheKeyBlocks() {
    const Network net = attentionKvCache(4, 2, 16, 32, 8);
    const Hardware hw = oneTile(4 * 1024);
    Mapper mapper(net, hw);
    QVERIFY(mapper.flashTriple(0, 1, 2));
    const std::vector<LeafMapping> ms = mapper.chainMapping({0, 1, 2}, 1, 1);
    QCOMPARE(ms.size(), size_t(3));
    for (const LeafMapping& m : ms)
        QCOMPARE(m.blockLabel(), std::string("5 query x 4 heads x 8 key blocks (flash order)"));
    QCOMPARE(ms[0].operandBPerTile, 80.0); // 5 keys x 16 channels of one key head
    QCOMPARE(ms[2].operandBPerTile, 80.0);
    QCOMPARE(ms[2].ofmapPerTile, 1792.0);
    QCOMPARE(ms[2].activationPerTile() + ms[1].ofmapPerTile + 2 * ms[1].statsPerTile, 3961.0);

    const TransferGeometry geo(net, hw.dataBits);
    auto windows = [&](int j) {
        const Box o = geo.blockBox(0, ms[0], 0, j, 0, 1);
        return std::pair(geo.blockWindow(0, 1, ms[0], j, o), geo.blockWindow(0, 2, ms[0], j, o));
    };
    // Block 1: cached keys 5-7 of key head 0 (flat, 16 B a key) and new rows 0-1.
    auto [past1, step1] = windows(1);
    QCOMPARE(past1, box({0, 80, 0, 0}, {1, 128, 1, 1}));
    QCOMPARE(step1, box({0, 0, 0, 0}, {1, 16, 2, 1}));
    // Block 8 (head 1, keys 0-4): all cached, key head 0 again; block 17 (head 2, keys
    // 5-9): key head 1, channels 16-32 of the new keys.
    auto [past8, step8] = windows(8);
    QCOMPARE(past8, box({0, 0, 0, 0}, {1, 80, 1, 1}));
    QVERIFY(step8.empty());
    auto [past17, step17] = windows(17);
    QCOMPARE(past17, box({0, 208, 0, 0}, {1, 256, 1, 1}));
    QCOMPARE(step17, box({0, 16, 0, 0}, {1, 32, 2, 1}));

    EvalContext ctx(net, hw);
    const RATree t = test::parseTree("T 1/1\n\tT 1/1\n\t\tqk 1\n\t\tsoftmax 1\n\t\tav 1\n", net);
    const Evaluation e = detailed(ctx, t, 1);
    QVERIFY2(e.valid, e.reason.c_str());
    // Q once (32 x 64); per query block every head's 40 keys of its key head (4 x 40 x 16 =
    // 2,560 B, x 5), the values alike; the output once.
    QCOMPARE(e.nodes[size_t(t.nodeAtPath("/0/0"))].runDramBytes, 2048.0 + 5 * 2560.0);
    QCOMPARE(e.nodes[size_t(t.nodeAtPath("/0/2"))].runDramBytes, 5 * 2560.0 + 2048.0);
    QCOMPARE(e.dramBytes, 29696.0);
    CodegenResult r;
    replaysAsEstimated(ctx, t, hw, 1, e, r);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(r.programDramBytes, std::uint64_t(29696));
    QCOMPARE(computes(r.program).size(), size_t(3 * 5 * 32));

    // The same 40 keys in one operand B (grouped-query attention without a cache): the
    // same blocks and bytes; head 2's block 1 reads keys 5-9 of key head 1, flat bytes
    // (40 + 5) x 16 to (40 + 10) x 16.
    Network one = attentionHeads(4, 16, 32, 40);
    for (int l : {0, 2})
        one.layers[size_t(l)].inputs[1].bytesPerSample = 2 * 16 * 40;
    one.inputBytes["k"] = one.inputBytes["v"] = 2 * 16 * 40;
    Mapper oneMapper(one, hw);
    QVERIFY(oneMapper.flashTriple(0, 1, 2));
    const std::vector<LeafMapping> oms = oneMapper.chainMapping({0, 1, 2}, 1, 1);
    QCOMPARE(oms.size(), size_t(3));
    QCOMPARE(oms[0].blockLabel(), ms[0].blockLabel());
    QCOMPARE(oms[0].operandBPerTile, 80.0);
    const TransferGeometry oneGeo(one, hw.dataBits);
    const Box o17 = oneGeo.blockBox(0, oms[0], 0, 17, 0, 1);
    QCOMPARE(oneGeo.blockWindow(0, 1, oms[0], 17, o17), box({0, 720, 0, 0}, {1, 800, 1, 1}));
    EvalContext oneCtx(one, hw);
    const RATree ot = test::parseTree("T 1/1\n\tT 1/1\n\t\tqk 1\n\t\tsoftmax 1\n\t\tav 1\n", one);
    const Evaluation oe = detailed(oneCtx, ot, 1);
    QVERIFY2(oe.valid, oe.reason.c_str());
    QCOMPARE(oe.dramBytes, 29696.0);
    CodegenResult oneProgram;
    replaysAsEstimated(oneCtx, ot, hw, 1, oe, oneProgram);
}

// The S-T graph draws a T cut's one pass as the evaluator placed its children (on the
// program's clock): on testchip the S cut of the three projections, held up by the DRAM's
// order (2.11 M cycles for leaves of 1.06 M each), is followed at 1.06 M by the attention
// chain on the same tiles, so its leaves are drawn 1.06 M long, not stretched over the
// chain: no tile has two rectangles at once.
// Four heads at sequence 16,384 on testchip in the flash order: AV moves 54.5 MB (V once per
// query block, the output once) while the pebble bound of its layer alone, every operand
// from outside its tiles, is 96.2 MB; its probabilities never leave the tiles. Every leaf's
// reported bound is below what it moves.
void TestBlocking::streamedInputBoundedByCompulsory() {
    auto net = loadModel(std::string(TILESCOPE_TESTDATA) + "/attention_heads4_seq16384.onnx");
    QVERIFY2(net.ok(), net.ok() ? "" : net.error().message.c_str());
    Hardware hw;
    QVERIFY(presetHardware("testchip", hw));
    EvalContext ctx(*net, hw);
    const RATree t = test::parseTree("T 1/1\n\t/k/MatMul 1\n\tT 1/1\n\t\tS 1/1\n"
                                     "\t\t\t/v/MatMul 1\n\t\t\t/q/MatMul 1\n\t\t/qk/MatMul 1\n"
                                     "\t\t/Softmax 1\n\t\t/av/MatMul 1\n\t\t/o/MatMul 1\n",
                                     *net);
    EvalOptions opt;
    opt.detail = true;
    opt.objective = {2, 1}; // testchip's
    const Evaluation e = evaluate(ctx, t, 1, opt);
    QVERIFY2(e.valid, e.reason.c_str());
    bool sawAv = false;
    for (const LayerFigures& r : layerFigures(e, t, *net, hw)) {
        QVERIFY2(r.movedBytes >= r.ioLowerBoundBytes, r.name.c_str());
        if (r.name != "/av/MatMul") continue;
        sawAv = true;
        QVERIFY(r.pebbleBoundBytes > r.movedBytes);
        QCOMPARE(r.ioLowerBoundBytes, r.compulsoryBytes);
    }
    QVERIFY(sawAv);
}

// On the 32x32 wafer preset one head at sequence 32,768 streams on 1,024 tiles in 32 key
// blocks: each block's K and V go from the DRAM ports to every tile, and their links, not
// the DRAM's 1,024 B a cycle, bound the chain. Counting only the DRAM the estimate was
// 206,508 cycles against a replay of 236,689 (1.146); with the links the replay is within
// 12%.
void TestBlocking::chainWaitsForItsLinks() {
    auto net = loadModel(std::string(TILESCOPE_TESTDATA) + "/attention_seq32768.onnx");
    QVERIFY2(net.ok(), net.ok() ? "" : net.error().message.c_str());
    Hardware hw;
    QVERIFY(presetHardware("wafer", hw));
    EvalContext ctx(*net, hw);
    const RATree t = projectionsThenAttention(*net, {"v", "q", "k"});
    const Evaluation e = detailed(ctx, t, 1);
    QVERIFY2(e.valid, e.reason.c_str());
    QCOMPARE(e.nodes[size_t(t.nodeAtPath("/0/2"))].blocking,
             std::string("1 query x 32 key blocks (flash order)"));
    auto r = generateProgram(ctx, t, 1, {});
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(double(r->programDramBytes), e.dramBytes);
    SimResult s;
    test::replayChecked(*r, hw, s);
    if (QTest::currentTestFailed()) return;
    qInfo("sim %.0f eval %.0f ratio %.3f", s.delay, e.delay, s.delay / e.delay);
    QVERIFY2(s.delay < 1.12 * e.delay && s.delay > 0.88 * e.delay,
             qPrintable(QString::number(s.delay / e.delay)));
}

// 40 keys (d 16, 64 queries) on a 1 KiB tile: blocks of 2 keys fit. 32 blocks of
// ceil(40 / 32) = 2 keys would leave blocks 20-31 empty, a tile's kept Q rows and the
// Softmax's statistics waiting for a last key block with no work; the mapper takes the
// fewest blocks of that size, 20, every one holding keys.
void TestBlocking::keyBlocksNeverEmpty() {
    const Network net = attention(16, 64, 40);
    const Hardware hw = oneTile(1024);
    Mapper mapper(net, hw);
    const std::vector<LeafMapping> ms = mapper.chainMapping({0, 1, 2}, 1, 1);
    QCOMPARE(ms.size(), size_t(3));
    QCOMPARE(ms[0].blockLabel(), std::string("11 query x 20 key blocks (flash order)"));
    const TransferGeometry geo(net, hw.dataBits);
    for (int j = 0; j < ms[0].bk; ++j)
        QVERIFY(!geo.blockBox(0, ms[0], 0, j, 0, 1).empty());
    EvalContext ctx(net, hw);
    const RATree t = test::parseTree("T 1/1\n\tT 1/1\n\t\tqk 1\n\t\tsoftmax 1\n\t\tav 1\n", net);
    const Evaluation e = detailed(ctx, t, 1);
    QVERIFY2(e.valid, e.reason.c_str());
    CodegenResult r;
    replaysAsEstimated(ctx, t, hw, 1, e, r);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(computes(r.program).size(), size_t(3 * 11 * 20));
}

void TestBlocking::sCutInPassDrawnWithoutOverlap() {
    auto net = loadModel(std::string(TILESCOPE_TESTDATA) + "/attention_seq32768.onnx");
    QVERIFY2(net.ok(), net.ok() ? "" : net.error().message.c_str());
    Hardware hw;
    QVERIFY(presetHardware("testchip", hw));
    EvalContext ctx(*net, hw);
    const RATree t = projectionsThenAttention(*net, {"q", "k", "v"});
    const Evaluation e = detailed(ctx, t, 1);
    QVERIFY2(e.valid, e.reason.c_str());
    const NodeFigures& s = e.nodes[size_t(t.nodeAtPath("/0/0"))];
    const NodeFigures& q = e.nodes[size_t(t.nodeAtPath("/0/0/0"))];
    QVERIFY(s.time > 1.9 * q.time); // the DRAM's order holds the S cut up
    std::vector<std::vector<std::pair<Cycles, Cycles>>> perTile(size_t(hw.meshX * hw.meshY));
    for (const BusyInterval& i : e.intervals)
        for (int k = i.tileBegin; k < i.tileBegin + i.tileCount; ++k)
            perTile[size_t(k)].push_back({i.start, i.end});
    for (auto& spans : perTile) {
        std::sort(spans.begin(), spans.end());
        for (size_t k = 1; k < spans.size(); ++k)
            QVERIFY2(
                spans[k].first >= spans[k - 1].second - 1e-6 * spans[k - 1].second,
                qPrintable(QString("%1 before %2").arg(spans[k - 1].second).arg(spans[k].first)));
    }
    Cycles last = 0;
    for (const BusyInterval& i : e.intervals)
        last = std::max(last, i.end);
    QCOMPARE(last, e.delay);
}

// Blocked leaves round-trip through the instruction generator and the simulator: the
// replay moves exactly the schedule's DRAM bytes and agrees with its delay within 15%
// (docs/isa.md, "Evaluator agreement"): the segmentation stem layer by layer on edge
// (every convolution blocked), the encoder on cloud with a tree a short search finds
// (its score products, softmaxes and A x V products blocked), and the long-context
// attention on testchip (key blocks).
// On 144 tiles the partitions the mapper likes best split the 32768 keys over tiles too;
// AV sums a query row over all its keys on one tile, so the flash order keeps the keys
// whole and splits the queries: the chain streams (no scores through DRAM) and replays.
void TestBlocking::flashKeepsKeysOnOneTile() {
    auto net = loadModel(std::string(TILESCOPE_TESTDATA) + "/attention_seq32768.onnx");
    QVERIFY2(net.ok(), net.ok() ? "" : net.error().message.c_str());
    Hardware hw;
    QVERIFY(presetHardware("cloud", hw));
    EvalContext ctx(*net, hw);
    const RATree t = test::parseTree("T 1/1\n\tS 1/1\n\t\t/q/MatMul 1\n\t\t/k/MatMul 1\n"
                                     "\t\t/v/MatMul 1\n\tT 1/1\n\t\t/qk/MatMul 1\n"
                                     "\t\t/Softmax 1\n\t\t/av/MatMul 1\n\t/o/MatMul 1\n",
                                     *net);
    const Evaluation e = detailed(ctx, t, 1);
    QVERIFY2(e.valid, e.reason.c_str());
    for (const char* path : {"/1/0", "/1/1", "/1/2"}) {
        const NodeFigures& f = e.nodes[size_t(t.nodeAtPath(path))];
        QVERIFY2(f.blocking.find("key blocks (flash order)") != std::string::npos,
                 f.blocking.c_str());
    }
    QCOMPARE(e.nodes[size_t(t.nodeAtPath("/1/1"))].runDramBytes, 0.0); // scores on chip
    QVERIFY(e.dramBytes < 32e6); // the scores alone would be 1 GB
    CodegenResult r;
    replaysAsEstimated(ctx, t, hw, 1, e, r);
}

void TestBlocking::roundTrip_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("hw");
    QTest::addColumn<bool>("anneal");
    QTest::newRow("seg stem edge ls1") << "seg_stem_1024x2048"
                                       << "edge" << false;
    QTest::newRow("encoder cloud sa1") << "encoder_seq4096"
                                       << "cloud" << true;
    // No layer-sequential tree fits (the scores need 270.5 MB a tile): the search starts
    // from QK^T, the Softmax and AV under one T cut, in the flash order.
    QTest::newRow("attention 32768 testchip sa1") << "attention_seq32768"
                                                  << "testchip" << true;
    // Four heads in one product each: a head's keys (2 MiB of K) fit no tile, so the key
    // blocks are cut within each head.
    QTest::newRow("attention 4 heads 16384 testchip sa1") << "attention_heads4_seq16384"
                                                          << "testchip" << true;
}

void TestBlocking::roundTrip() {
    QFETCH(QString, model);
    QFETCH(QString, hw);
    QFETCH(bool, anneal);
    auto net = loadModel(std::string(TILESCOPE_TESTDATA) + "/" + model.toStdString() + ".onnx");
    QVERIFY2(net.ok(), net.ok() ? "" : net.error().message.c_str());
    Hardware h;
    QVERIFY(presetHardware(hw.toStdString(), h));
    EvalContext ctx(*net, h);
    RATree t = RATree::layerSequential(*net, 1);
    if (anneal) {
        SearchConfig cfg;
        cfg.seed = 1;
        cfg.iterations = 100;
        cfg.chains = 1;
        cfg.totalBatch = 1;
        auto s = runSearch(*net, h, cfg);
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().message.c_str());
        t = s->bestTree;
    }
    const Evaluation e = evaluate(ctx, t, 1, {});
    QVERIFY2(e.valid, e.reason.c_str());
    QVERIFY(e.blockedLeaves >= (anneal ? 2 : 4));
    // Row blocks read the halo again; attention in the flash order with one query block
    // reads every input once.
    QVERIFY(anneal || e.blockingDramBytes > 0);
    CodegenResult r;
    replaysAsEstimated(ctx, t, h, 1, e, r);
}

// The same through the command line and the binary program: evaluate the segmentation
// stem layer by layer on edge, export-instructions --formats bin, simulate: DRAM bytes
// exact, delay within 15%.
void TestBlocking::roundTripCli() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string model = std::string(TILESCOPE_TESTDATA) + "/seg_stem_1024x2048.onnx";
    auto net = loadModel(model);
    QVERIFY2(net.ok(), net.ok() ? "" : net.error().message.c_str());
    const QString tree = dir.filePath("ls1.tree"), result = dir.filePath("result.json"),
                  prog = dir.filePath("prog");
    std::ofstream(tree.toStdString()) << treeToText(RATree::layerSequential(*net, 1), *net);
    test::CliRun r = test::runCli({"evaluate", QString::fromStdString(model), "--hw", "edge",
                                   "--tree", tree, "--json", result});
    QVERIFY2(r.status == 0, qPrintable(r.err + r.out));
    const auto res = nlohmann::json::parse(readFile(result.toStdString()));
    QCOMPARE(res["blocked_leaves"].get<int>(), 4);
    exportAndReplayCli(result, res, prog, "bin");
}

// tile.channel_split through the CLI: `mapping` reports the split (the label's " C<c>", the
// partition's "c" and the partial sums' fields) and a search on the template exports a
// program that replays within 15% with the result's DRAM bytes, its members' partial sums
// among its SENDs.
void TestBlocking::channelSplitCli() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString model = QStringLiteral(TILESCOPE_SAMPLES "/models/resnet50.onnx");
    const QString hw = dir.filePath("split.json"), result = dir.filePath("result.json"),
                  prog = dir.filePath("prog");
    std::ofstream(hw.toStdString())
        << R"({"name": "split", "mesh": {"x": 4, "y": 4}, "tile": {"channel_split": true}})";
    test::CliRun r = test::runCli({"mapping", model, "--hw", hw, "--layer", "/fc/Gemm", "--json"});
    QVERIFY2(r.status == 0, qPrintable(r.err + r.out));
    const auto m = nlohmann::json::parse(r.out.toStdString());
    const int c = m["partition"]["c"].get<int>();
    QVERIFY2(c > 1, r.out.toUtf8().constData());
    QVERIFY(m["partition"]["label"].get<std::string>().find(" C" + std::to_string(c)) !=
            std::string::npos);
    QCOMPARE(m["partial_sums"]["members_per_slot"].get<int>(), c);
    QVERIFY(m["partial_sums"]["reduce_cycles"].get<double>() > 0);
    r = test::runCli({"mapping", model, "--hw", "edge", "--layer", "/fc/Gemm", "--json"});
    QVERIFY2(r.status == 0, qPrintable(r.err + r.out));
    QCOMPARE(nlohmann::json::parse(r.out.toStdString())["partition"]["c"].get<int>(), 1);
    r = test::runCli({"anneal", model, "--hw", hw, "--batch", "2", "--iterations", "200", "--seed",
                      "1", "--json", result, "--quiet"});
    QVERIFY2(r.status == 0, qPrintable(r.err + r.out));
    const auto res = nlohmann::json::parse(readFile(result.toStdString()));
    QVERIFY(res["hw"]["tile"]["channel_split"].get<bool>());
    exportAndReplayCli(result, res, prog, "bin,json");
    if (QTest::currentTestFailed()) return;
    // Partial sums travel at 32 bits an element: SENDs of 4 bytes per element of their box
    // (the data moves at 8).
    const auto program = nlohmann::json::parse(readFile((prog + "/program.json").toStdString()));
    int psumSends = 0;
    for (const auto& tile : program["tiles"])
        for (const auto& i : tile["instructions"]) {
            if (i["op"] != "SEND") continue;
            long long elements = 1;
            for (size_t d = 0; d < 4; ++d)
                elements *=
                    i["range"]["hi"][d].get<long long>() - i["range"]["lo"][d].get<long long>();
            if (i["bytes"].get<long long>() == 4 * elements) ++psumSends;
        }
    QVERIFY(psumSends > 0);
}

// A decoder's prefill at a prompt whose scores fit no tile (tests/data/llama_decoder.onnx,
// 4 heads on 2 key heads, a KV cache, at 16,384 tokens on edge: QK^T alone needs 68.3 MB a
// tile) through `generate`: the start tree wraps each block's attention in a T cut, the
// search keeps it in the flash order, and the exported prefill replays within 15% with the
// schedule's DRAM bytes.
void TestBlocking::longPromptPrefillCli() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString model = QString(TILESCOPE_TESTDATA) + "/llama_decoder.onnx";
    const QString out = dir.filePath("programs"), result = dir.filePath("generate.json");
    const test::CliRun r = test::runCli(
        {"generate", model, "--hw",         "edge", "--prompt", "16384", "--tokens",  "16",
         "--points", "1",   "--iterations", "100",  "--seed",   "1",     "--threads", "1",
         "--export", out,   "--json",       result, "--quiet"});
    QVERIFY2(r.status == 0, qPrintable(r.err + r.out));
    const auto res = nlohmann::json::parse(readFile(result.toStdString()));
    const auto& prefill = res["phases"][0];
    QCOMPARE(prefill["phase"].get<std::string>(), std::string("prefill"));
    int flash = 0;
    for (const auto& l : prefill["result"]["layers"])
        if (l.value("blocking", "").find("heads x") != std::string::npos) ++flash;
    QCOMPARE(flash, 6); // QK^T, the Softmax and AV of both blocks
    const auto& p = prefill["program"];
    QCOMPARE(p["program_dram_bytes"].get<double>(), p["schedule_dram_bytes"].get<double>());
    const double ratio = p["delay_ratio"].get<double>();
    qInfo("prefill sim/eval delay %.3f", ratio);
    QVERIFY2(ratio >= 0.85 && ratio <= 1.15, qPrintable(QString::number(ratio)));
}

// A tree whose slices all fit has no blocked leaf and costs exactly what the evaluator
// without blocking gives it: resnet50 on edge at batch 8 with the tree `anneal --seed 1
// --iterations 1500` found, 131944360 DRAM bytes, delay 9121346.423800508 cycles and cost
// (objective E^2 x D) 3.760681968142817e+27 with edge's in-tile levels, buffer energies
// and memory interleaved over its ports (docs/hardware-format.md).
void TestBlocking::unblockedTreeUnchanged() {
    auto net = loadModel(std::string(TILESCOPE_SAMPLES) + "/models/resnet50.onnx");
    QVERIFY2(net.ok(), net.ok() ? "" : net.error().message.c_str());
    Hardware hw;
    QVERIFY(presetHardware("edge", hw));
    const RATree t = test::parseTree(
        readFile(std::string(TILESCOPE_TESTDATA) + "/trees/resnet50_edge_b8_s1.tree"), *net);
    EvalOptions opt;
    opt.objective = {2, 1};
    opt.detail = true;
    const Evaluation e = evaluate(*net, hw, t, 8, opt);
    QVERIFY2(e.valid, e.reason.c_str());
    QCOMPARE(e.blockedLeaves, 0);
    QCOMPARE(e.blockingDramBytes, 0.0);
    for (const NodeFigures& f : e.nodes) {
        QCOMPARE(f.blocks, 1);
        QVERIFY(f.blocking.empty());
    }
    QCOMPARE(e.cost, 3.760681968142817e+27);
    QCOMPARE(e.delay, 9121346.423800508);
    QCOMPARE(e.dramBytes, 131944360.0);
}

// Two S-cut stages streaming row blocks (docs/cost-model.md §2b, "Streaming between the
// stages of an S cut"): the worked convolution twice, a -> b, S 1/1 [a, b] on a 2 x 1 mesh
// of 40 KiB tiles, one tile each. By hand (the 3x3 window's halo: a block of h output rows
// reads h + 2 input rows):
//   Each alone is blocked (convRowBlocks: 8 blocks of 8 rows). Streaming, both take n row
//   blocks of h = ceil(64 / n) rows; the producer keeps one output block more:
//   a: 2304 + 2 (1024 (h + 2) + 1024 h) + 1024 h = 6400 + 5120 h <= 40960: h <= 6;
//   b: 2304 + 2 (1024 (h + 2) + 1024 h) = 6400 + 4096 h: fits at h = 6 too.
//   n = 10 gives h = 7 (42240 B for a), n = 11 gives h = 6 (37120 B): 11 blocks, ten of 6
//   rows and one of 4. Block j of b reads rows [6j - 1, 6j + 7) of a's output: a's blocks
//   j - 1 to j + 1 hold them, so they stream.
//   DRAM: a's input once, 16 x 64 x 64 = 65536 B, and the 2 rows where neighbouring
//   blocks' windows overlap once more per boundary, 10 x 2 x 16 x 64 = 20480 B; the two
//   weight sets, 2 x 2304 B; b's output, 65536 B: 156160 B in all. Nothing of a's output.
//   NoC: b's windows, 65536 + 20480 = 86016 B, over the one link between the tiles.
//   Through DRAM instead (each blocked alone), a's output would be stored (65536 B) and b's
//   input read with its halo (65536 + 14336 B) on top.
void TestBlocking::sCutStagesStreamRowBlocks() {
    Network n;
    n.name = "two_convs";
    n.layers.push_back(test::conv("a", 16, 16, 64, 3, -1));
    n.layers.push_back(test::conv("b", 16, 16, 64, 3, 0));
    n = test::finish(n);
    Hardware hw = defaultHardware(2, 1, "two-tiles");
    hw.bufferBytes = kConvBuffer;
    EvalContext ctx(n, hw);
    const RATree t = test::parseTree("S 1/1\n\ta 1\n\tb 1\n", n);
    const Evaluation e = detailed(ctx, t, 1);
    QVERIFY2(e.valid, e.reason.c_str());
    const NodeFigures& a = e.nodes[size_t(t.nodeAtPath("/0"))];
    const NodeFigures& b = e.nodes[size_t(t.nodeAtPath("/1"))];
    QCOMPARE(a.blocks, 11);
    QCOMPARE(b.blocks, 11);
    QVERIFY2(a.blockingReason.find("output streamed over the NoC to the S-cut stage after") !=
                 std::string::npos,
             a.blockingReason.c_str());
    QVERIFY2(b.blockingReason.find("its input streamed over the NoC from the S-cut stage "
                                   "before") != std::string::npos,
             b.blockingReason.c_str());
    QCOMPARE(e.dramBytes, 156160.0);
    QCOMPARE(a.runDramBytes, 65536.0 + 20480 + 2304);
    QCOMPARE(b.runDramBytes, 2304.0 + 65536);
    QCOMPARE(b.runNocInBytes, 86016.0);
    QCOMPARE(a.runNocOutBytes, 86016.0);
    QVERIFY(!a.writesDram);
    QVERIFY(!b.inputViaDram[0]);
    CodegenResult out;
    replaysAsEstimated(ctx, t, hw, 1, e, out);
    // DRAM-bound at the default 2 B/cycle (156160 / 2 = 78080 cycles). With a fast DRAM the
    // stages overlap block by block: b's block j follows a's block j + 1, so the cut lasts
    // about a's 11 blocks (6 x 64 positions x 9 taps = 3456 cycles each, 38016) plus b's
    // last two, not a + b.
    hw.dramBytesPerCycle = 64;
    EvalContext fast(n, hw);
    const Evaluation f = detailed(fast, t, 1);
    QVERIFY2(f.valid, f.reason.c_str());
    qInfo("fast DRAM: %.0f cycles", f.delay);
    QVERIFY(f.delay < 38016.0 * 1.35);
    replaysAsEstimated(fast, t, hw, 1, f, out);
}

// Streaming never turns a cut that fits into one that overflows. The worked conv twice (a,
// b) and a 1x1 conv c (16 -> 256 channels, weights 4096 B) reading b, on three tiles of
// 43008 B, in one S cut, which charges the most weights and the most working set of its
// stages (docs/cost-model.md §6):
//   Through DRAM, a and b each take 8 blocks of h = 8 rows (as convRowBlocks, 2304 +
//   4096 (h + 1) <= 43008): working set 4096 x 9 = 36864 B; c needs a row a block (2 x (16 +
//   256) x 64 = 34816 B). The cut: 4096 + 36864 = 40960 B, it fits.
//   Streaming a's rows to b, a keeps one output block more: 2304 + 4096 (h + 1) + 1024 h
//   <= 43008 gives h = 7, 10 blocks, 39936 B; the cut would need 4096 + 39936 = 44032 B,
//   1024 B over. So the stages go through DRAM; with 1024 B more buffer they stream.
void TestBlocking::stagesStreamOnlyWhereTheCutFits() {
    const Network n = test::network("three_convs", {test::conv("a", 16, 16, 64, 3, -1),
                                                    test::conv("b", 16, 16, 64, 3, 0),
                                                    test::conv("c", 16, 256, 64, 1, 1)});
    const RATree t = test::parseTree("S 1/1\n\ta 1\n\tb 1\n\tc 1\n", n);
    // The cut on tiles of `bytes`: the producer's blocks, its reason and the cut's buffer
    // use; the program replays as estimated.
    auto cut = [&](double bytes, int blocks, const char* output, double buffer) {
        Hardware hw = defaultHardware(3, 1, "three-tiles");
        hw.bufferBytes = bytes;
        EvalContext ctx(n, hw);
        const Evaluation e = detailed(ctx, t, 1);
        QVERIFY2(e.valid, e.reason.c_str());
        const NodeFigures& a = e.nodes[size_t(t.nodeAtPath("/0"))];
        QCOMPARE(a.blocks, blocks);
        QVERIFY2(a.blockingReason.find(output) != std::string::npos, a.blockingReason.c_str());
        QCOMPARE(e.nodes[size_t(t.root)].bufferPerTile, buffer);
        CodegenResult out;
        replaysAsEstimated(ctx, t, hw, 1, e, out);
    };
    cut(43008, 8, "output stored to DRAM", 40960);
    cut(44032, 10, "output streamed over the NoC to the S-cut stage after", 44032);
}

// The segmentation stem of the workloads larger than the chip (docs/cost-model.md §2b) on
// edge as two S cuts of two convolutions each: through DRAM the first S cut overflows; its
// stages stream row blocks instead. DRAM by hand: net.0's input 3 x 1024 x 2048 =
// 6291456 B, net.2's output (stored, read by the next S cut) 32 x 512 x 1024 = 16777216 B
// twice, net.6's output 64 x 256 x 512 = 8388608 B, the weights 896 + 9248 + 18496 + 36928
// = 65568 B, and the halo rows of the two DRAM readers once more per block boundary:
// net.0 (stride 2: 1 input row of 3 x 2048 B) 8 x 6144 = 49152 B at 9 blocks, net.4 (1 row
// of 32 x 1024 B) 12 x 32768 = 393216 B at 13 blocks: 48742432 B in all.
void TestBlocking::segStemStagesStream() {
    auto net = loadModel(std::string(TILESCOPE_TESTDATA) + "/seg_stem_1024x2048.onnx");
    QVERIFY2(net.ok(), net.ok() ? "" : net.error().message.c_str());
    Hardware hw;
    QVERIFY(presetHardware("edge", hw));
    EvalContext ctx(*net, hw);
    const RATree t = test::parseTree("T 1/1\n\tS 1/1\n\t\t/net/net.0/Conv 1\n\t\t/net/net.2/Conv "
                                     "1\n\tS 1/1\n\t\t/net/net.4/Conv 1\n\t\t/net/net.6/Conv 1\n",
                                     *net);
    EvalOptions opt;
    opt.detail = true;
    opt.objective = {2, 1};
    const Evaluation e = evaluate(ctx, t, 1, opt);
    QVERIFY2(e.valid, e.reason.c_str());
    QCOMPARE(e.nodes[size_t(t.nodeAtPath("/0/0"))].blocks, 9);
    QCOMPARE(e.nodes[size_t(t.nodeAtPath("/1/1"))].blocks, 13);
    QCOMPARE(e.dramBytes, 48742432.0);
    CodegenResult out;
    replaysAsEstimated(ctx, t, hw, 1, e, out);
}

// A layer whose weights alone outgrow the buffer streams them in output-channel blocks, each
// block loading its own channels' weights (docs/cost-model.md §2b): 128 -> 128 channels 3x3
// on an 8x8 map, one 40 KiB tile (40960 B). By hand:
//   weights 128 x 128 x 9 = 147456 B; input 128 x 8 x 8 = 8192 B; output 128 x 64 = 8192 B.
//   A block of c output channels holds two blocks: 2 (1152 c + 8192 + 64 c) <= 40960, so
//   c <= 10: 13 blocks of ceil(128 / 13) = 10 channels (the last 8); 12 blocks need 11.
//   DRAM: the input once per block, 13 x 8192 = 106496 B; the weights once, 147456 B; the
//   output once, 8192 B. Total 262144 B, of which the 12 extra input reads, 98304 B, are
//   what blocking adds.
void TestBlocking::weightsStreamInChannelBlocks() {
    Network n;
    n.name = "heavy";
    n.layers.push_back(test::conv("heavy_conv", 128, 128, 8, 3, -1));
    const Network net = test::finish(n);
    const Hardware hw = oneTile(kConvBuffer);
    Mapper mapper(net, hw);
    const LeafMapping& m = mapper.map(0, 1, 1);
    QCOMPARE(m.bk, 13);
    QCOMPARE(m.blocks(), 13);
    QVERIFY(m.streamsWeights());
    QCOMPARE(m.weightPerTile, 11520.0);
    QCOMPARE(m.residentWeightPerTile(), 0.0);
    QCOMPARE(m.blockLabel(), std::string("13 channel blocks"));
    EvalContext ctx(net, hw);
    const RATree t = test::parseTree("T 1/1\n\theavy_conv 1\n", net);
    const Evaluation e = detailed(ctx, t, 1);
    QVERIFY2(e.valid, e.reason.c_str());
    QCOMPARE(e.dramBytes, 262144.0);
    QCOMPARE(e.blockedLeaves, 1);
    QCOMPARE(e.blockingDramBytes, 98304.0);
    const NodeFigures& f = e.nodes[size_t(t.nodeAtPath("/0"))];
    QVERIFY2(f.blockingReason.find("each with its own channels' weights") != std::string::npos,
             f.blockingReason.c_str());
    CodegenResult r;
    replaysAsEstimated(ctx, t, hw, 1, e, r);
    if (QTest::currentTestFailed()) return;
    // One weight LOAD per block, of that block's channels.
    const DramTransfers w = dramTransfers(r.program);
    QCOMPARE(w.weightLoads, 13);
    QCOMPARE(w.weightBytes, std::uint64_t(147456));
}

// A wide reduction: 4096 -> 4 channels 3x3 on a 2 x 2 map, on one 40 KiB tile. Its
// weights, 4 x 4096 x 9 = 147456 B, outgrow the buffer even one output channel at a time
// (36864 B, two of which do not fit), and rows or columns keep them all resident; so the
// mapper cuts the reduction into input-channel blocks of c channels, each bringing its input
// (c x 2 x 2 = 4c B) and its weights (4 x c x 9 = 36c B), both double-buffered, while the
// tile keeps its 16 outputs as 32-bit partial sums (64 B, also doubled):
//   2 (36c + 4c + 64) <= 40960, so c <= 510: 8 blocks need 512 channels, 9 blocks take
//   ceil(4096 / 9) = 456 (eight of 456, the last 448).
//   A block: input 1824 B, weights 16416 B, partial sums 64 B.
//   DRAM: the input once, 16384 B; the weights once, 147456 B (9 LOADs, their channels'
//   share each); the output once, 16 B, after the last block. 163856 B: blocking adds none.
//   Cycles: a block is 4 positions x 9 taps x ceil(456 / 32) = 15 input x 1 output channel
//   passes = 540; the leaf 9 x 540 = 4860 (unblocked 4 x 9 x 128 = 4608: the last block's
//   short pass and the 456-channel chunks' rounding).
void TestBlocking::inputChannelBlocksKeepPartialSums() {
    Network n;
    n.name = "wide";
    n.layers.push_back(test::conv("wide_conv", 4096, 4, 2, 3, -1));
    const Network net = test::finish(n);
    const Hardware hw = oneTile(kConvBuffer);
    Mapper mapper(net, hw);
    const LeafMapping& m = mapper.map(0, 1, 1);
    QCOMPARE(m.bc, 9);
    QCOMPARE(m.blocks(), 9);
    QVERIFY(m.reduces());
    QVERIFY(m.streamsWeights());
    QCOMPARE(m.blockLabel(), std::string("9 input-channel blocks"));
    QCOMPARE(m.ifmapPerTile, 1824.0);
    QCOMPARE(m.weightPerTile, 16416.0);
    QCOMPARE(m.ofmapPerTile, 64.0);
    QCOMPARE(m.bufferPerTile(), 36608.0);
    QCOMPARE(m.cycles, 4860.0);
    QCOMPARE(m.macs, Count(4 * 4 * 4096 * 9));
    // Every block computes the tile's whole output; block j reads its own channels.
    const TransferGeometry geo(net, hw.dataBits);
    for (int j = 0; j < 9; ++j)
        QCOMPARE(geo.blockBox(0, m, 0, j, 0, 1), box({0, 0, 0, 0}, {1, 4, 2, 2}));
    QCOMPARE(geo.blockChannels(0, m, 0), std::make_pair(0, 456));
    QCOMPARE(geo.blockChannels(0, m, 8), std::make_pair(3648, 4096));
    QCOMPARE(geo.blockWindow(0, 0, m, 3, geo.blockBox(0, m, 0, 3, 0, 1)),
             box({0, 1368, 0, 0}, {1, 1824, 2, 2}));
    long long weights = 0;
    for (int j = 0; j < 9; ++j) {
        const auto [c0, c1] = geo.blockChannels(0, m, j);
        weights += geo.weightElems(0, 0, 4, c0, c1);
    }
    QCOMPARE(weights, 147456LL);

    EvalContext ctx(net, hw);
    const RATree t = test::parseTree("T 1/1\n\twide_conv 1\n", net);
    const Evaluation e = detailed(ctx, t, 1);
    QVERIFY2(e.valid, e.reason.c_str());
    QCOMPARE(e.dramBytes, 163856.0);
    QCOMPARE(e.blockedLeaves, 1);
    QCOMPARE(e.blockingDramBytes, 0.0);
    const NodeFigures& f = e.nodes[size_t(t.nodeAtPath("/0"))];
    QVERIFY2(f.blockingReason.find("partial sums") != std::string::npos, f.blockingReason.c_str());
    CodegenResult r;
    replaysAsEstimated(ctx, t, hw, 1, e, r);
    if (QTest::currentTestFailed()) return;
    // One weight LOAD per block, of its channels; one STORE, after the last block.
    const DramTransfers w = dramTransfers(r.program);
    QCOMPARE(w.weightLoads, 9);
    QCOMPARE(w.weightBytes, std::uint64_t(147456));
    QCOMPARE(w.stores, 1);
    QCOMPARE(w.storedBytes, std::uint64_t(16));
}

// A layer whose weights outgrow the buffer whichever way it is cut: 4096 -> 4096 channels
// 3x3 on a 1 x 1 map. One output channel's weights (36864 B) and one input channel's
// (4096 x 9 = 36864 B) are each too much to hold twice in a 40 KiB tile, and rows or columns
// keep all of them resident. No blocking fits, so the mapping stays unblocked and the tree
// is invalid, the reason naming the layer.
void TestBlocking::weightsThatFitNoBlocking() {
    Network n;
    n.name = "heavy";
    n.layers.push_back(test::conv("heavy_conv", 4096, 4096, 1, 3, -1));
    const Network net = test::finish(n);
    const Hardware hw = oneTile(kConvBuffer);
    Mapper mapper(net, hw);
    const LeafMapping& m = mapper.map(0, 1, 1);
    QVERIFY(!m.blocked());
    QCOMPARE(m.weightPerTile, 150994944.0);
    const Evaluation e = evaluate(net, hw, test::parseTree("T 1/1\n\theavy_conv 1\n", net), 1, {});
    QVERIFY(!e.valid);
    QVERIFY2(e.reason.find("buffer overflow") != std::string::npos &&
                 e.reason.find("heavy_conv") != std::string::npos,
             e.reason.c_str());
    QCOMPARE(e.blockedLeaves, 0);
}

// The worked example of docs/cost-model.md §8, "Blocked leaves": the 3x3 convolution of
// convExample (16 -> 16 channels, 64 x 64, padding 1) on one compute-in-memory tile with a
// 40 KiB buffer. Its crossbar blocks: 16 x 9 = 144 weight rows over 64-row crossbars, n_R = 3,
// and 16 output channels in one column block, n_C = 1: 3 blocks, well within 36 crossbars.
// Weights 16 x 16 x 9 = 2304 B. Input and output are 64 KiB each.
//   A block of r full rows holds input 16 x (r + 2) x 64 = 1024 (r + 2) B and output 1024 r B:
//   2304 + 2 x 1024 (2r + 2) <= 40960 gives r <= 8, so b_H = 8 blocks of 8 rows (2 fail
//   at 32 rows, 4 at 16; 6 and 7 blocks are 11 and 10 rows).
//   The 3 crossbar blocks stay written from block to block: 3 programmings, in the first
//   block's PROGRAM (3 x 1024 weight bytes), not 8 x 3.
//   Cycles: a block is 1 crossbar pass x 8 x 64 positions x 8 cycles = 4096; the write is
//   ceil(3 / 4 cores) x 64 rows x 50 = 3200 cycles, once: 8 x 4096 + 3200 = 35968 (8 x 7296
//   = 58368 if every block wrote them).
//   DRAM: block j reads input rows [8j - 1, 8j + 9) clipped, 9 + 6 x 10 + 9 = 78 rows of
//   1024 B = 79872 B (14 halo rows, 14336 B, added by blocking); output 65536 B; weights
//   2304 B: 147712 B, as on a MAC tile (convRowBlocksEvaluated).
void TestBlocking::cimRowBlocksProgramOnce() {
    const Network net = convExample();
    const Hardware hw = oneCimTile(kConvBuffer);
    Mapper mapper(net, hw);
    const LeafMapping& m = mapper.map(0, 1, 1);
    QCOMPARE(m.bh, 8);
    QCOMPARE(m.blocks(), 8);
    QVERIFY(!m.streamsWeights());
    QVERIFY(m.cim.used);
    QVERIFY(m.cim.keptAcrossBlocks);
    QCOMPARE(m.cim.blocksPerTile, Count(3));
    QCOMPARE(m.cim.programmings, Count(3));
    QCOMPARE(m.cim.computeCycles, 32768.0);
    QCOMPARE(m.cim.exposedWrite, 3200.0);
    QCOMPARE(m.cycles, 35968.0);

    EvalContext ctx(net, hw);
    const RATree t = test::parseTree("T 1/1\n\tconv 1\n", net);
    const Evaluation e = detailed(ctx, t, 1);
    QVERIFY2(e.valid, e.reason.c_str());
    QCOMPARE(e.blockedLeaves, 1);
    QCOMPARE(e.dramBytes, 147712.0);
    QCOMPARE(e.blockingDramBytes, 14336.0);
    QCOMPARE(e.weightProgrammings, Count(3));
    QCOMPARE(e.energy.weightWrite, 3 * cimWritePj(hw));
    CodegenResult r;
    replaysAsEstimated(ctx, t, hw, 1, e, r);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(programs(r.program), std::make_pair(1, std::uint64_t(3 * 1024)));
    QCOMPARE(dramTransfers(r.program).stores, 8);
}

// The row-blocked convolution above over two samples, one per invocation. As two segment
// invocations (T 2/2 at the root) each writes the 3 crossbar blocks in its first block: 6
// programmings in 2 PROGRAMs. As one segment invocation of two leaf invocations (the inner
// T) the leaf keeps them (its 3 blocks alone on the tile's 36 crossbars): 3 programmings in
// 1 PROGRAM, at the first block of the first invocation.
void TestBlocking::cimRowBlocksOverInvocations() {
    const Network net = convExample();
    const Hardware hw = oneCimTile(kConvBuffer);
    const std::string trees[2] = {"T 2/2\n\tconv 1\n", "T 2/1\n\tT 2/2\n\t\tconv 1\n"};
    const Count programmings[2] = {6, 3};
    const int programCount[2] = {2, 1};
    for (int i = 0; i < 2; ++i) {
        EvalContext ctx(net, hw);
        const RATree t = test::parseTree(trees[i], net);
        const Evaluation e = detailed(ctx, t, 2);
        QVERIFY2(e.valid, e.reason.c_str());
        QCOMPARE(e.blockedLeaves, 1);
        QCOMPARE(e.weightProgrammings, programmings[i]);
        CodegenResult r;
        replaysAsEstimated(ctx, t, hw, 2, e, r);
        if (QTest::currentTestFailed()) return;
        QCOMPARE(programs(r.program),
                 std::make_pair(programCount[i], std::uint64_t(programmings[i]) * 1024));
    }
}

// Weights that do not fit the buffer on a compute-in-memory tile: 128 -> 128 channels 3x3
// on 8 x 8 (147,584 B of weights) on one 40 KiB tile, as weightsStreamInChannelBlocks on a
// MAC tile. Each block brings its own weights and writes them into the crossbars: a PROGRAM
// per block, the programmings of all blocks adding up to the mapper's count, which the
// evaluator charges; the replay within 15% and the DRAM bytes exact.
void TestBlocking::cimChannelBlocksProgramPerBlock() {
    Network n;
    n.name = "heavy";
    n.layers.push_back(test::conv("heavy_conv", 128, 128, 8, 3, -1));
    const Network net = test::finish(n);
    const Hardware hw = oneCimTile(kConvBuffer);
    Mapper mapper(net, hw);
    const LeafMapping& m = mapper.map(0, 1, 1);
    QVERIFY(m.blocked());
    QVERIFY(m.streamsWeights());
    QVERIFY(!m.cim.keptAcrossBlocks);
    EvalContext ctx(net, hw);
    const RATree t = test::parseTree("T 1/1\n\theavy_conv 1\n", net);
    const Evaluation e = detailed(ctx, t, 1);
    QVERIFY2(e.valid, e.reason.c_str());
    QCOMPARE(e.weightProgrammings, m.cim.programmings);
    CodegenResult r;
    replaysAsEstimated(ctx, t, hw, 1, e, r);
    if (QTest::currentTestFailed()) return;
    const auto [count, bytes] = programs(r.program);
    qInfo("%s: %d programs, %lld programmings", m.blockLabel().c_str(), count,
          static_cast<long long>(m.cim.programmings));
    QCOMPARE(count, m.blocks());
    QCOMPARE(bytes, std::uint64_t(m.cim.programmings) * 1024);
    QCOMPARE(dramTransfers(r.program).weightBytes, std::uint64_t(147456));
}

// The wide reduction of inputChannelBlocksKeepPartialSums (4096 -> 4 channels 3x3 on 2 x 2)
// on one compute-in-memory tile with a 40 KiB buffer: the same 9 input-channel blocks of 456
// channels (the buffer rule does not depend on the tile type). A block writes the crossbar
// blocks of the layer cut to 456 channels: 456 x 9 = 4104 weight rows over 64, n_R = 65, and
// 4 output channels in one column block: 65 blocks over 36 crossbars. Its 4 positions' partial
// sums (4 x 16 x 4 B) fit the 8 KiB buffer, so column-row-space order writes each once: 65
// programmings a block, 9 x 65 = 585 for the leaf, in 9 PROGRAMs of 65 x 1024 B.
//   Cycles of a block: ceil(65 / 36) = 2 passes x 4 positions x 8 = 64 to compute and
//   ceil(65 / 4 cores) x 64 rows x 50 = 54400 to write; the leaf 9 x 54464 = 490176.
//   DRAM as on the MAC tile: 163856 B.
void TestBlocking::cimInputChannelBlocksProgramTheirCut() {
    Network n;
    n.name = "wide";
    n.layers.push_back(test::conv("wide_conv", 4096, 4, 2, 3, -1));
    const Network net = test::finish(n);
    const Hardware hw = oneCimTile(kConvBuffer);
    Mapper mapper(net, hw);
    const LeafMapping& m = mapper.map(0, 1, 1);
    QCOMPARE(m.bc, 9);
    QVERIFY(m.reduces());
    QVERIFY(!m.cim.keptAcrossBlocks);
    QCOMPARE(m.cim.programmings, Count(585));
    QCOMPARE(m.cim.computeCycles, 576.0);
    QCOMPARE(m.cim.exposedWrite, 489600.0);
    QCOMPARE(m.cycles, 490176.0);
    EvalContext ctx(net, hw);
    const RATree t = test::parseTree("T 1/1\n\twide_conv 1\n", net);
    const Evaluation e = detailed(ctx, t, 1);
    QVERIFY2(e.valid, e.reason.c_str());
    QCOMPARE(e.dramBytes, 163856.0);
    QCOMPARE(e.weightProgrammings, Count(585));
    CodegenResult r;
    replaysAsEstimated(ctx, t, hw, 1, e, r);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(programs(r.program), std::make_pair(9, std::uint64_t(585 * 1024)));
    QCOMPARE(dramTransfers(r.program).stores, 1);
}

QTEST_GUILESS_MAIN(TestBlocking)
#include "tst_blocking.moc"
