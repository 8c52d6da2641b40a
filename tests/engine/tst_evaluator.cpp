// The evaluator and analyzer: a hand-derived case, allocation against brute force, the
// data-flow rules, invariants, and the mesh numbering.
#include "eval/dram_profile.h"
#include "eval/evaluator.h"
#include "eval/linkload.h"
#include "eval/transfers.h"
#include "hw/mesh.h"
#include "mapping/mapper.h"
#include "netbuilder.h"
#include "report/segments.h"

#include <QtTest>
#include <functional>
#include <random>

using namespace tilescope;

namespace {

RATree parse(const std::string& text, const Network& net) {
    return test::parseTree(text, net);
}

// Evaluated with detail (per-node figures, intervals).
Evaluation detailed(const Network& net, const Hardware& hw, const RATree& t, int batch) {
    EvalOptions opt;
    opt.detail = true;
    return evaluate(net, hw, t, batch, opt);
}

// The two convs of test::twoConvs in one T segment, batch 2, evaluated with detail.
struct TwoConvsRun {
    Network net;
    RATree tree;
    Evaluation e;
};
TwoConvsRun twoConvsOneT(const Hardware& hw) {
    TwoConvsRun r{test::twoConvs(), {}, {}};
    r.tree = test::parseTree("T 2/1\n\tT 2/1\n\t\tconv1 2\n\t\tconv2 2\n", r.net);
    r.e = detailed(r.net, hw, r.tree, 2);
    return r;
}

// The edge preset with DRAM and NoC so fast that compute always dominates.
Hardware computeBoundEdge() {
    Hardware hw = defaultHardware(4, 4, "fast-io");
    hw.dramBytesPerCycle = 1e9;
    hw.nocBytesPerCycle = 1e9;
    return hw;
}

// computeBoundEdge with the DRAM at `bytesPerCycle`: the DRAM decides where it binds.
Hardware edgeWithDram(double bytesPerCycle) {
    Hardware hw = computeBoundEdge();
    hw.dramBytesPerCycle = bytesPerCycle;
    return hw;
}

// A row of `tiles` tiles with links at 1 B/cycle and DRAM at 1e9 B/cycle: the NoC decides.
Hardware slowLinkRow(int tiles) {
    Hardware hw = defaultHardware(tiles, 1, "slow-links");
    hw.dramBytesPerCycle = 1e9;
    hw.nocBytesPerCycle = 1;
    return hw;
}

// A chain of 1x1 convs a -> b -> ... on 28x28, 128 input channels, each conv's output
// channels as given.
Network chain1x1(const char* name, std::initializer_list<int> outChannels) {
    Network n;
    n.name = name;
    int in = 128, producer = -1;
    for (int out : outChannels) {
        n.layers.push_back(
            test::conv(std::string(1, char('a' + producer + 1)), in, out, 28, 1, producer));
        in = out;
        ++producer;
    }
    return test::finish(n);
}

// Four 3x3 convs a, b, c, d (128 -> 128 channels, 28x28): b reads a, c reads layer
// cReads (a or b), d reads c.
Network fourConvs(const char* name, int cReads) {
    Network n;
    n.name = name;
    n.layers.push_back(test::conv("a", 128, 128, 28, 3, -1));
    n.layers.push_back(test::conv("b", 128, 128, 28, 3, 0));
    n.layers.push_back(test::conv("c", 128, 128, 28, 3, cReads));
    n.layers.push_back(test::conv("d", 128, 128, 28, 3, 2));
    return test::finish(n);
}

} // namespace

class TestEvaluator : public QObject {
    Q_OBJECT
  private slots:
    // The DRAM booked as a fluid in need order (docs/cost-model.md §5, "Weights on few
    // tiles"), by hand at 100 B/cycle: 300 B at most 40 B/cycle end at 7.5; 600 B at the
    // DRAM's rate take the 60 left until 7.5 (450 B, their first 100 B at 1.667) and the
    // last 150 B at 100: 9.0; then the DRAM first has room at 9.0, and 40 B at 40 B/cycle
    // end at 10.0.
    void dramProfileBooksInNeedOrder() {
        DramProfile d;
        d.reset(100);
        QCOMPARE(d.book(300, 40), 7.5);
        double part = -1;
        QCOMPARE(d.book(600, 100, 100, &part), 9.0);
        QCOMPARE(part, 100.0 / 60);
        double room = -1;
        QCOMPARE(d.book(0, 100, 0, &room), 9.0);
        QCOMPARE(room, 9.0);
        QCOMPARE(d.book(40, 40), 10.0);
    }
    void handDerivedTwoConvs();
    void handDerivedEnergy();
    void leafDramOnItsCriticalPath();
    void dramLatency();
    void exchangeOnTheChain();
    void pacedExchange();
    void workOfNewPeriodsCounted();
    void pacedSendersSpreadInTime();
    void pacedHeldUpOnce();
    void producerSendsToOneConsumerAtATime();
    void tCutPassesReadAhead();
    void tChildOfSCutDrawnWithoutOverlap();
    void sCutFillsStageByStage();
    void segmentsOverlap();
    void segmentFiguresWithRootSubBatches();
    void tCutChildrenOverlap();
    void weightsAheadOfSegment();
    void weightsShareTheLinks();
    void allocationMatchesBruteForce();
    void allocationMatchesOneAtATime();
    void dataFlowRules();
    void checkedStructureStillChecksTheRootBatch();
    void invariants_data();
    void invariants();
    void utilisationThreshold();
    void bufferOverflowNamesNode();
    void heldInputChargedToCut();
    void heldOutputStaysOnProducerTiles();
    void snakeNumbering();
    void xyRoutes();
    void detailIntervalsCoverSchedule();
};

// Two identical 3x3 convs, 128 -> 128 channels, 28x28, batch 2, 16 tiles of 1024 MACs.
// MACs per conv per sample: 128 * 128 * 9 * 784 = 115,605,504.
// A 1024-MAC tile does at most 1024 MACs per cycle, so one conv on batch 2 over 16 tiles
// needs at least 2 * 115,605,504 / (1024 * 16) = 14,112 cycles; the partition
// K1 B2 H2 W4 (14 x 7 output block, 4 c-blocks x 4 k-blocks of 32) reaches it exactly,
// so the mapper's best is 14,112 cycles. The same holds for batch 1 on 8 tiles:
// 115,605,504 / (1024 * 8) = 14,112.
// T cut (root T 2/1 -> T 2/1 [conv1, conv2]): D = 14,112 + 14,112 = 28,224 cycles.
// S cut (root T 2/1 -> S 2/2 [conv1 1, conv2 1]): equal NPT -> 8 + 8 tiles; conv2 reads
// conv1, so it is stage 1 (s = 1). The first sample's pass: each of conv1's tiles sends
// its pieces of the output to conv2's tiles one after another on its STORE/SEND engine;
// the first streams with its compute and ends with it, so the pieces after it, and the
// conv2 tiles that need them, wait for conv1's end (docs/cost-model.md §5, "Pieces in
// turn"; keeping pace two stages behind, 31,752, was what the generator's dependencies
// alone allow). conv2 runs from 14,112 to 28,224 and the second sample follows one slot
// behind: D = 3 x 14,112 = 42,336 cycles, as the replay of its program (tst_codegen
// piecesInTurn).
void TestEvaluator::handDerivedTwoConvs() {
    const Network net = test::twoConvs();
    const Hardware hw = computeBoundEdge();
    const RATree t = parse("T 2/1\n\tT 2/1\n\t\tconv1 2\n\t\tconv2 2\n", net);
    const Evaluation et = detailed(net, hw, t, 2);
    QVERIFY2(et.valid, et.reason.c_str());
    // The first leaf cannot start before the first of its 8 weight slices is in
    // (docs/cost-model.md §5, weight arrival): conv1's 128*128*9 = 147,456 B / 8 at 1e9 B/cycle.
    // conv2's exchange with conv1 (docs/cost-model.md §5) at 1e9 B/cycle adds < 0.001 cycles.
    QVERIFY(std::abs(et.delay - (28224.0 + 147456 / 8e9)) < 1e-3);
    const RATree s = parse("T 2/1\n\tS 2/2\n\t\tconv1 1\n\t\tconv2 1\n", net);
    const Evaluation es = detailed(net, hw, s, 2);
    QVERIFY2(es.valid, es.reason.c_str());
    QVERIFY2(std::abs(es.delay - 42336.0) < 1e-3, qPrintable(QString::number(es.delay)));
    // The S cut split the 16 tiles 8 + 8 and put conv2 in stage 1.
    const int sId = s.node(s.root).children[0];
    const int c1 = s.node(sId).children[0], c2 = s.node(sId).children[1];
    QCOMPARE(es.nodes[size_t(c1)].tileCount, 8);
    QCOMPARE(es.nodes[size_t(c2)].tileCount, 8);
    QCOMPARE(es.nodes[size_t(c2)].tileBegin, 8);
    QCOMPARE(es.nodes[size_t(c2)].stage, 1);
    QCOMPARE(es.nodes[size_t(sId)].utilisation, 1.0);
}

// Energy parts that do not depend on the partition chosen:
// MAC: 2 convs * 2 samples * 115,605,504 MACs * 0.018 pJ = 8,323,596.288 pJ.
// DRAM: network input 128*28*28*2 = 200,704 B read, conv2's output 200,704 B written,
// weights 2 * 128*128*9 = 294,912 B read; conv1 -> conv2 stays on chip in both trees
// (adjacent T children; S stages 0 -> 1). 696,320 B * 8 bit * 7.5 pJ = 41,779,200 pJ.
void TestEvaluator::handDerivedEnergy() {
    const Network net = test::twoConvs();
    const Hardware hw = defaultHardware(4, 4, "edge");
    for (const char* text : {"T 2/1\n\tT 2/1\n\t\tconv1 2\n\t\tconv2 2\n",
                             "T 2/1\n\tS 2/2\n\t\tconv1 1\n\t\tconv2 1\n"}) {
        const Evaluation e = evaluate(net, hw, parse(text, net), 2, {});
        QVERIFY2(e.valid, e.reason.c_str());
        QCOMPARE(e.dramBytes, 696320.0);
        QVERIFY(qFuzzyCompare(e.energy.dram, 41779200.0));
        QVERIFY(qFuzzyCompare(e.energy.mac, 8323596.288));
        if (std::string(text).find("\tS") == std::string::npos) {
            // Edge DRAM: 16 B/cycle -> 696,320 / 16 = 43,520 cycles bound the segment.
            // Weight arrival: conv1's 147,456 B take 9,216 cycles and stream in 8 slices, so
            // conv1 starts after 1,152: 1,152 + 2 x 14,112 = 29,376, below the DRAM bound.
            QCOMPARE(e.delay, 43520.0);
            continue;
        }
        // S (8 + 8 tiles; conv1 14,112 cycles a sample, conv2 14,112 + 896 / 3 = 14,410.67
        // with its exchange over the edge links, starting at conv1's end:
        // handDerivedTwoConvs; slot 14,410.67) with
        // the DRAM serving in program order (docs/cost-model.md §5, "DRAM-ordered
        // pipeline"): conv1's sample 0 starts once the first slice of its weights is in,
        // 147,456 / 8 / 16 = 1,152; conv2's sample 0 (at 14,112 on the pipeline's clock)
        // once conv1's weights and input (247,808 B) and its own first slice (18,432) are:
        // 16,640; conv1's sample 1 (at 14,410.67) behind conv2's weights, 395,264 / 16 =
        // 24,704; conv2's sample 1 (at 28,522.67) behind conv1's second input and conv2's
        // first output stored (595,968 B: 37,248), and no earlier against conv1's sample 1
        // than in the fill: 24,704 + 14,112 = 38,816; it ends 14,410.67 later, 53,226.67,
        // above the DRAM bound. Then the weights' busiest link W = 3,072 cycles shares the
        // leaves' links: + 0.7 W ("Weights in the background"). The replay of this tree's
        // program takes 60,091 cycles (1.085 of this); the DRAM bound alone says 43,520.
        QVERIFY2(std::abs(e.delay - (24704 + 14112 + 14112 + 896.0 / 3 + 0.7 * 3072)) < 1e-3,
                 qPrintable(QString::number(e.delay, 'f', 4)));
    }
    // As two segments conv1's output goes through DRAM: 2 * 200,704 B more.
    const Evaluation e2 = evaluate(net, hw, parse("T 2/1\n\tconv1 2\n\tconv2 2\n", net), 2, {});
    QVERIFY(e2.valid);
    QCOMPARE(e2.dramBytes, 696320.0 + 2 * 200704.0);
}

// A leaf's own activation DRAM traffic cannot hide behind other leaves' compute: they
// need its output (docs/cost-model.md §5). residual(1) batch 4 in one T segment on 16
// compute-bound tiles with DRAM at 100 B/cycle. Feature map F = 64*28*28 = 50,176 B per
// sample, 200,704 B for 4 samples. Conv MACs per sample 64*64*9*784 = 28,901,376; 4 samples
// over 16 tiles of 1024 MACs: 4 * 28,901,376 / 16,384 = 7,056 cycles (B4 H2 W2: 14x14
// outputs x 9 x 2 c-blocks x 2 k-blocks). The add: 4 * 50,176 outputs, 1 op each, over
// 16 tiles x 64 lanes = 196 cycles.
// Activation DRAM: stem reads the input (F) and writes its output for the add (stem -> add
// skips two T children: DRAM), 401,408 B -> 4,014.08 cycles < 7,056: stem stays 7,056.
// The add reads stem's output and writes the network output, 401,408 B -> 4,014.08 > 196.
// c1, c2 move nothing through DRAM. The pipeline: 3 * 7,056 + 4,014.08 = 25,182.08 cycles,
// above both the compute sum 21,364 and the segment's DRAM bound (802,816 + weights
// 110,592) / 100 = 9,134.08, which were all an earlier model charged. Stem cannot start
// before the first of its 8 weight slices (64*64*9 = 36,864 B / 100 / 8 = 46.08 cycles):
// D = 25,228.16.
void TestEvaluator::leafDramOnItsCriticalPath() {
    const Network net = test::residual(1);
    const Hardware hw = edgeWithDram(100);
    const RATree t =
        parse("T 4/1\n\tT 4/1\n\t\tstem 4\n\t\tb0_c1 4\n\t\tb0_c2 4\n\t\tb0_add 4\n", net);
    const Evaluation e = detailed(net, hw, t, 4);
    QVERIFY2(e.valid, e.reason.c_str());
    QCOMPARE(e.dramBytes, 4 * 4 * 50176.0 + 3 * 64 * 64 * 9.0);
    const int seg = t.node(t.root).children[0];
    const auto& leaves = t.node(seg).children;
    QCOMPARE(e.nodes[size_t(leaves[0])].time, 7056.0);
    // (b0_c1's exchange with the stem at 1e9 B/cycle adds < 0.001 cycles.)
    QVERIFY(std::abs(e.nodes[size_t(leaves[1])].time - 7056.0) < 1e-3);
    QCOMPARE(e.nodes[size_t(leaves[3])].time, 4014.08);
    QVERIFY(std::abs(e.delay - (46.08 + 25182.08)) < 1e-3);
    QCOMPARE(e.nodes[size_t(seg)].bound, Bound::Dram);
}

// DRAM latency (docs/cost-model.md §5): compute-bound edge, 500 cycles of latency. conv1
// reads the network input from DRAM: 14,112 + 500 cycles; conv2 reads conv1 over the NoC:
// 14,112. conv1's first weight slice (147,456 / 8 B at 1e9 B/cycle) arrives 500 cycles
// after the start too, waited for at the same time as its input: D = 500 + 0.0000184 +
// 28,224 (the weight arrival bound; the pipeline alone is 500 + 28,224).
void TestEvaluator::dramLatency() {
    Hardware hw = computeBoundEdge();
    hw.dramLatencyCycles = 500;
    const auto [net, t, e] = twoConvsOneT(hw);
    QVERIFY2(e.valid, e.reason.c_str());
    const auto& leaves = t.node(t.node(t.root).children[0]).children;
    QCOMPARE(e.nodes[size_t(leaves[0])].time, 14112.0 + 500);
    QVERIFY(std::abs(e.nodes[size_t(leaves[1])].time - 14112.0) < 1e-3);
    QVERIFY(std::abs(e.delay - (500 + 147456 / 8e9 + 28224.0)) < 1e-3);
}

// The exchange between a producer and its consumer sits between their computes
// (docs/cost-model.md §5). Two tiles side by side (2x1 mesh), one link between them at
// 1 B/cycle, DRAM at 1e9 B/cycle. S 1/1 [conv1 1, conv2 1]: conv1 on tile 0, conv2 on
// tile 1; conv1's whole output, 128*28*28 = 100,352 B, crosses the one link. Each conv on
// one 1024-MAC tile: 115,605,504 / 1024 = 112,896 cycles. conv2 reads conv1 in conv1's own
// coordinates, streamed stage by stage: one stage of the exchange's 8 is left after
// conv1, 100,352 / 8 = 12,544 cycles, so conv2 takes 112,896 + 12,544 = 125,440 cycles (its
// link term, 100,352 cycles, is below).
void TestEvaluator::exchangeOnTheChain() {
    const Network net = test::twoConvs();
    const RATree s = parse("S 1/1\n\tconv1 1\n\tconv2 1\n", net);
    const Evaluation e = detailed(net, slowLinkRow(2), s, 1);
    QVERIFY2(e.valid, e.reason.c_str());
    const int c1 = s.node(s.root).children[0], c2 = s.node(s.root).children[1];
    QCOMPARE(e.nodes[size_t(c1)].tileCount, 1);
    QCOMPARE(e.nodes[size_t(c2)].tileCount, 1);
    QCOMPARE(e.nodes[size_t(c2)].time, 112896.0 + 12544.0);
}

// The exchange of an all-to-all on the first `parts` tiles of `hw`: conv1 (1x1, 96 -> 96,
// 12x12) split by output channels feeding conv2 split by rows, both over the same tiles.
static LeafTraffic allToAll(const Hardware& hw, int parts) {
    Network net;
    net.name = "all_to_all";
    net.layers.push_back(test::conv("conv1", 96, 96, 12, 1, -1));
    net.layers.push_back(test::conv("conv2", 96, 96, 12, 1, 0));
    net = test::finish(net);
    const Mesh mesh(hw);
    const TransferGeometry geo(net, hw.dataBits);
    LeafMapping byChannel, byRow;
    byChannel.pk = parts;
    byRow.ph = parts;
    const LeafPlacement producer{0, 1, 0, parts, &byChannel};
    const LeafPlacement consumer{1, 1, 0, parts, &byRow};
    return leafTrafficPeriod(geo, mesh, consumer, {&producer}, false);
}

// docs/cost-model.md §5: an all-to-all among three tiles in a row. conv1 (1x1, 96 -> 96,
// 12x12) split by output channels (32 each) feeds conv2 split by rows (4 each) on the same
// tiles: every tile sends its 32 channels x 4 rows x 12 columns = 1536 bytes to each other
// tile. Links E0, E1, W1, W2 each carry two pieces (3072 bytes), but E1 is shared by the
// SENDs of tiles 0 and 1 and W1 by those of tiles 1 and 2: piece by piece, tile 1's two
// pieces would each move at half a link (2 x 1536 x 2 = 6144 bytes' worth of link time).
// But the others' bytes hold it up once ("Held up once"): its own 3072 plus the 1536 the
// other tile puts on E1 (or W1), 4608, 1.5 x the busiest link. Its pieces take 2304 each
// (docs/cost-model.md §5, "The last piece streamed").
void TestEvaluator::pacedExchange() {
    const Hardware hw = defaultHardware(3, 1, "row");
    const Mesh mesh(hw);
    QCOMPARE(mesh.tileAt(1), 1);
    QCOMPARE(mesh.tileAt(2), 2);
    const LeafTraffic T = allToAll(hw, 3);
    QCOMPARE(T.nocSameMaxLink, 3072.0);
    QCOMPARE(T.maxEgress, 3072.0);
    QCOMPARE(T.nocPaced, 4608.0);
    QCOMPARE(T.nocPacedPiece, 2304.0);
    // The work of costing it: a piece from each tile to each other, over 1 + 2 + 1 + 1 + 1 + 2
    // links.
    QCOMPARE(T.pieces, 6LL);
    QCOMPARE(T.pieceLinks, 8LL);
}

// A context counts the work of the periods it costs anew (EvalStats::pieces), and only
// theirs: evaluating the same tree again finds every period in its memo.
void TestEvaluator::workOfNewPeriodsCounted() {
    const Network net = test::twoConvs();
    const Hardware hw = defaultHardware(2, 1, "row");
    const RATree s = parse("S 1/1\n\tconv1 1\n\tconv2 1\n", net);
    EvalContext ctx(net, hw);
    const Evaluation first = evaluate(ctx, s, 1, EvalOptions{});
    QVERIFY2(first.valid, first.reason.c_str());
    const EvalStats after1 = ctx.stats();
    QVERIFY(after1.periodsCosted >= 2); // each leaf's period
    // conv2 receives conv1's output over the NoC.
    QVERIFY(after1.pieces >= 1);
    QVERIFY(after1.pieceLinks >= after1.pieces);
    const Evaluation again = evaluate(ctx, s, 1, EvalOptions{});
    QCOMPARE(again.cost, first.cost);
    QCOMPARE(ctx.stats().periodsCosted, after1.periodsCosted);
    QCOMPARE(ctx.stats().pieces, after1.pieces);
    QCOMPARE(ctx.stats().pieceLinks, after1.pieceLinks);
}

// docs/cost-model.md §5, "Senders spread in time": the same all-to-all on a 2x2 mesh (X
// then Y routes; tile 0 at (0,0), 1 at (1,0), 2 at (0,1), 3 at (1,1)), conv1 split by
// output channels (24 each) feeding conv2 split by rows (3 each): every tile sends
// 24 x 3 x 12 = 864 bytes (p) to each other tile, 3p in all. Tile 0's piece to tile 2
// (down its column) shares that link with tile 1's piece to tile 2
// (west, then down), and its piece to tile 3 (east, then down tile 1's column) with tile
// 1's own piece to tile 3. As if both sent at once each would take p + p = 2p, and tile 0
// 5p; but tile 1 keeps each of those links busy for a third of its sending (p of 3p), so
// each takes p / (1 - 1/3) = 1.5p, and tile 0 (like every tile) p + 1.5p + 1.5p = 4p: 4p / 3
// a piece.
void TestEvaluator::pacedSendersSpreadInTime() {
    const LeafTraffic T = allToAll(defaultHardware(2, 2, "square"), 4);
    QCOMPARE(T.maxEgress, 3 * 864.0);
    QCOMPARE(T.nocPaced, 4 * 864.0);
    QCOMPARE(T.nocPacedPiece, 4 * 864.0 / 3);
}

// docs/cost-model.md §5, "Held up once": the all-to-all on a row of four tiles, every tile
// sending p = 24 x 3 x 12 = 864 bytes to each other tile (3p in all). East links: E0
// carries tile 0's three pieces, E1 tile 0's two and tile 1's two, E2 one each of tiles
// 0, 1 and 2; the west links the same, mirrored. Piece by piece, tile 1's piece to tile 0
// shares W1 with tiles 2 and 3 (p each, a third of their sending: p / (1 - 2/3) = 3p), its
// piece to tile 2 shares E1 with tile 0's 2p (p + min(2p, p) = 2p) and its piece to tile 3
// crosses E2 as well (3p): 8p. But the other senders put at most 2p on any one of tile 1's
// links (W1, E1, E2), and the links drain at once: tile 1 is done by 3p + 2p = 5p, as is
// every tile (tile 0: p + 2p + 3p = 6p piece by piece). The busiest link carries 4p.
void TestEvaluator::pacedHeldUpOnce() {
    const LeafTraffic T = allToAll(defaultHardware(4, 1, "row"), 4);
    QCOMPARE(T.nocSameMaxLink, 4 * 864.0);
    QCOMPARE(T.maxEgress, 3 * 864.0);
    QCOMPARE(T.nocPaced, 5 * 864.0);
    QCOMPARE(T.nocPacedPiece, 5 * 864.0 / 3);
}

// docs/cost-model.md §5, "One consumer at a time": a tile's STORE/SEND engine moves one
// transfer at a time. A 1x1 conv a (64 -> 64, 28x28) feeds three 1x1 convs b, c, d, each a
// consumer of its own; S 1/1 [a, b, c, d] on a row of four tiles, one each, links at 1
// B/cycle, DRAM at 1e9. a's whole output, 64 x 28 x 28 = 50,176 bytes, goes to each
// consumer in a SEND of its own, so a's tile sends 3 x 50,176 = 150,528 bytes one after
// another: a lasts 150,528 cycles (its compute is 3,136; before, the busiest link of its
// own traffic, 50,176). Each consumer still waits for its own 50,176 and stores its output
// (50,176 at the link's rate): 50,176 cycles.
void TestEvaluator::producerSendsToOneConsumerAtATime() {
    Network n;
    n.name = "one_to_three";
    n.layers.push_back(test::conv("a", 64, 64, 28, 1, -1));
    for (const char* name : {"b", "c", "d"})
        n.layers.push_back(test::conv(name, 64, 64, 28, 1, 0));
    const Network net = test::finish(n);
    const RATree t = parse("S 1/1\n\ta 1\n\tb 1\n\tc 1\n\td 1\n", net);
    const Evaluation e = detailed(net, slowLinkRow(4), t, 1);
    QVERIFY2(e.valid, e.reason.c_str());
    const auto& kids = t.node(t.root).children;
    for (int c : kids)
        QCOMPARE(e.nodes[size_t(c)].tileCount, 1);
    QCOMPARE(e.nodes[size_t(kids[0])].time, 3 * 50176.0);
    for (size_t k = 1; k < kids.size(); ++k)
        QCOMPARE(e.nodes[size_t(kids[k])].time, 50176.0);
    QVERIFY(e.delay >= 3 * 50176.0);
}

// docs/cost-model.md §5, "T-cut passes": the LOAD engines read a T cut's inputs ahead
// while the children before them compute, so after its first pass each pass lasts
// max(sum of the children's times without their DRAM reads, the pass's DRAM bytes / BW_D).
// Three 1x1 convs a -> b -> c (128 -> 128 channels, 28x28) in T 4/4 on the 16 tiles of a
// compute-bound edge, DRAM at 100 B/cycle: each conv computes 12,845,056 MACs / 16,384 =
// 784 cycles; a reads its input (100,352 bytes) from DRAM, 1,003.52 cycles; c stores its
// output, 1,003.52 cycles (a store is not read ahead). A pass: 1,003.52 + 784 + 1,003.52 =
// 2,791.04; without a's read 784 + 784 + 1,003.52 = 2,571.52; its DRAM bytes 200,704, 2,007.04
// cycles. Four passes: 2,791.04 + 3 x 2,571.52 = 10,505.6 (before: 4 x 2,791.04 =
// 11,164.16). The weights (16,384 B each) arrive in the DRAM's need order (docs/cost-model.md
// §5, weight arrival): b's come after a's weights and a's first input, (2 x 16,384 +
// 100,352) / 100 = 1,331.2, so its first slice is in at 1,331.2 - 7/8 x 163.84 = 1,187.84,
// 184.32 after b's start in the first pass (1,003.52), and the rest of the segment
// follows: 10,689.92 (a waits only for its own first slice, 20.48).
void TestEvaluator::tCutPassesReadAhead() {
    const Network net = chain1x1("three_1x1", {128, 128, 128});
    const Hardware hw = edgeWithDram(100);
    const RATree t = parse("T 4/1\n\tT 4/4\n\t\ta 1\n\t\tb 1\n\t\tc 1\n", net);
    const Evaluation e = detailed(net, hw, t, 4);
    QVERIFY2(e.valid, e.reason.c_str());
    const int seg = t.node(t.root).children[0];
    const auto& kids = t.node(seg).children;
    QVERIFY(std::abs(e.nodes[size_t(kids[0])].time - 1003.52) < 1e-6);
    QVERIFY(std::abs(e.nodes[size_t(kids[1])].time - 784) < 1e-3);
    QVERIFY(std::abs(e.nodes[size_t(kids[2])].time - 1003.52) < 1e-6);
    QVERIFY2(std::abs(e.nodes[size_t(seg)].time - 10689.92) < 1e-2,
             qPrintable(QString::number(e.nodes[size_t(seg)].time, 'f', 3)));
    // The S-T graph draws the later passes in proportion: c's last pass ends with the cut.
    double end = 0;
    for (const BusyInterval& b : e.intervals)
        end = std::max(end, b.end);
    QVERIFY(std::abs(end - e.nodes[size_t(seg)].time) < 1.0);
}

// A T child of an S cut runs each sub-batch in its later passes' time (docs/cost-model.md
// §5, "T-cut passes") and the S-T graph draws it so: its sub-batches, one slot apart, do not
// overlap on its tiles, and no tile is busy more than the whole delay (the NoC heatmap's
// tile busy). a (reading its input from DRAM at 50 B/cycle: 2,007.04 cycles, more than
// its compute on the T child's 9 tiles) and b in T 1/1 beside c and d (128 -> 8 channels: a
// small store) in S 4/4: the T child's first pass is longer than its later ones and than
// the slot (drawn at full length, sub-batch 1 started before sub-batch 0 ended).
void TestEvaluator::tChildOfSCutDrawnWithoutOverlap() {
    const Network net = chain1x1("t_child", {128, 128, 128, 8});
    const Hardware hw = edgeWithDram(50);
    const RATree t =
        parse("T 4/1\n\tS 4/4\n\t\tT 1/1\n\t\t\ta 1\n\t\t\tb 1\n\t\tc 1\n\t\td 1\n", net);
    const Evaluation e = detailed(net, hw, t, 4);
    QVERIFY2(e.valid, e.reason.c_str());
    const int tChild = t.node(t.node(t.root).children[0]).children[0];
    const int a = t.node(tChild).children[0];
    QVERIFY2(e.nodes[size_t(a)].time >= 2007.04 - 1e-6,
             qPrintable(QString::number(e.nodes[size_t(a)].time)));
    std::vector<std::vector<std::pair<double, double>>> onTile(size_t(hw.meshX * hw.meshY));
    for (const BusyInterval& b : e.intervals)
        for (int p = b.tileBegin; p < b.tileBegin + b.tileCount; ++p)
            onTile[size_t(e.tileOrder[size_t(p)])].push_back({b.start, b.end});
    for (auto& v : onTile) {
        std::sort(v.begin(), v.end());
        for (size_t i = 1; i < v.size(); ++i)
            QVERIFY2(v[i].first >= v[i - 1].second - 1e-6,
                     qPrintable(QString("%1 < %2").arg(v[i].first).arg(v[i - 1].second)));
    }
    for (double busy : tileLoad(e, hw.meshX * hw.meshY).busy)
        QVERIFY2(busy <= 1 + 1e-9, qPrintable(QString::number(busy)));
}

// An S cut's first sub-batch passes its stages one after another, each as long as its
// slowest child; later sub-batches follow a slot apart (docs/cost-model.md §5): a 3x3 conv
// and the 1x1 conv reading it, 4 samples one per slot, on 16 compute-bound tiles. The
// allocation gives the 3x3 (9x the work) most tiles, so the two stages differ and the
// cut lasts 3 slots + t1 + t2, not the 5 slots of lock-step stages.
void TestEvaluator::sCutFillsStageByStage() {
    Network n;
    n.name = "conv_then_1x1";
    n.layers.push_back(test::conv("big", 128, 128, 28, 3, -1));
    n.layers.push_back(test::conv("small", 128, 128, 28, 1, 0));
    const Network net = test::finish(n);
    const RATree t = parse("T 4/1\n\tS 4/4\n\t\tbig 1\n\t\tsmall 1\n", net);
    const Evaluation e = detailed(net, computeBoundEdge(), t, 4);
    QVERIFY2(e.valid, e.reason.c_str());
    const int sId = t.node(t.root).children[0];
    const int big = t.node(sId).children[0], small = t.node(sId).children[1];
    const double t1 = e.nodes[size_t(big)].time, t2 = e.nodes[size_t(small)].time;
    QCOMPARE(e.nodes[size_t(small)].stage, 1);
    QVERIFY2(std::abs(t1 - t2) > 0.05 * t1, qPrintable(QString("%1 %2").arg(t1).arg(t2)));
    const double slot = std::max(t1, t2);
    QVERIFY(std::abs(e.nodes[size_t(sId)].time - (3 * slot + t1 + t2)) < 1e-6 * slot);
    // The weights (128*128*(9+1) B at 1e9 B/cycle) add well under a cycle.
    QVERIFY(std::abs(e.delay - (3 * slot + t1 + t2)) < 1.0);
    // The S-T graph places the same schedule: small's sample j from t1 + j slots.
    for (const BusyInterval& b : e.intervals)
        if (b.node == small) QVERIFY(std::abs(b.start - (t1 + b.firstSample * slot)) < 1.0);
}

// Segments follow each other without a barrier (docs/cost-model.md §5, "Segments
// overlap"): four identical 3x3 convs, a -> b and a -> c -> d, in two segments S(a, b) and
// S(c, d), batch 1, on 16 compute-bound tiles. Each S cut splits the tiles 8 + 8 (a and c
// on tiles 0-7, b and d on 8-15), t one conv on 8 tiles. a also feeds c through DRAM, so
// it stores its output and b waits for all of it: S(a, b) lasts 2t. d waits for all of c
// too (c's tiles send their pieces in turn, docs/cost-model.md §5, "Pieces in turn"):
// S(c, d) lasts 2t. c needs a's output and a's tiles, both free at t, and d's tiles are
// free when b ends at 2t = t + d's offset t, so the second segment starts at t and the
// run ends at 3t, not the 4t of segments one after the other. The S-T graph places c
// from t and d from 2t.
void TestEvaluator::segmentsOverlap() {
    const Network net = fourConvs("two_branches", 0);
    const RATree t = parse("T 1/1\n\tS 1/1\n\t\ta 1\n\t\tb 1\n\tS 1/1\n\t\tc 1\n\t\td 1\n", net);
    const Evaluation e = detailed(net, computeBoundEdge(), t, 1);
    QVERIFY2(e.valid, e.reason.c_str());
    const auto& segs = t.node(t.root).children;
    const int a = t.node(segs[0]).children[0], c = t.node(segs[1]).children[0];
    const int d = t.node(segs[1]).children[1];
    QCOMPARE(e.nodes[size_t(a)].tileCount, 8);
    QCOMPARE(e.nodes[size_t(c)].tileBegin, e.nodes[size_t(a)].tileBegin);
    QCOMPARE(e.nodes[size_t(d)].tileCount, 8);
    const double conv = e.nodes[size_t(a)].time;
    QCOMPARE(e.nodes[size_t(c)].time, conv);
    // The segments last 2t each; the run 3t (the weights at 1e9 B/cycle add < 1 cycle).
    QVERIFY(std::abs(e.nodes[size_t(segs[0])].time - 2 * conv) < 1.0);
    QVERIFY(std::abs(e.nodes[size_t(segs[1])].time - 2 * conv) < 1.0);
    QVERIFY2(std::abs(e.delay - 3 * conv) < 1.0,
             qPrintable(QString("delay %1, t %2").arg(e.delay).arg(conv)));
    for (const BusyInterval& b : e.intervals) {
        if (b.node == c) QVERIFY(std::abs(b.start - conv) < 1.0);
        if (b.node == d) QVERIFY(std::abs(b.start - 2 * conv) < 1.0);
    }
    // Every view's segment table (report/segments.h): the second segment starts at t and
    // adds t to the delay; the shares add up to it.
    const auto segRows = segmentFigures(e, t, net);
    QCOMPARE(segRows.size(), size_t(2));
    QCOMPARE(segRows[0].start, 0.0);
    QVERIFY(std::abs(segRows[1].start - conv) < 1.0);
    QVERIFY(std::abs(segRows[0].share - 2 * conv) < 1.0);
    QVERIFY(std::abs(segRows[1].share - conv) < 1.0);
    QVERIFY(std::abs(segRows[0].share + segRows[1].share - e.delay) < 1e-6 * e.delay);
}

// Every view's segment table (report/segments.h) under a root T cut with sub-batches: each
// segment runs B_tot / b_i times, Evaluation::nodes holds a segment's energy over all of
// them and its time and DRAM bytes of one, so the segments' energies add up to the run's
// once (they were multiplied by the invocations a second time), their DRAM bytes too.
void TestEvaluator::segmentFiguresWithRootSubBatches() {
    const Network net = fourConvs("two_branches", 0);
    const RATree t = parse("T 4/2\n\tS 2/1\n\t\ta 2\n\t\tb 2\n\tS 2/1\n\t\tc 2\n\t\td 2\n", net);
    const Evaluation e = detailed(net, computeBoundEdge(), t, 4);
    QVERIFY2(e.valid, e.reason.c_str());
    const auto rows = segmentFigures(e, t, net);
    QCOMPARE(rows.size(), size_t(2));
    double energy = 0, dram = 0;
    for (const SegmentFigures& r : rows) {
        QCOMPARE(r.invocations, 2);
        QCOMPARE(r.time, 2 * e.nodes[size_t(r.node)].time);
        energy += r.energy;
        dram += r.dramBytes;
    }
    QVERIFY2(std::abs(energy - e.energy.total()) < 1e-9 * e.energy.total(),
             qPrintable(QString("segments %1, run %2").arg(energy).arg(e.energy.total())));
    QVERIFY2(std::abs(dram - e.dramBytes) < 1e-9 * e.dramBytes,
             qPrintable(QString("segments %1, run %2").arg(dram).arg(e.dramBytes)));
}

// T-cut children overlap in the same way inside a segment (docs/cost-model.md §5, "T-cut
// children overlap"): the two S cuts of segmentsOverlap under one T 1/1 that is the only
// segment. c's tiles (a's) and a's output are ready at t, and d's tiles (b's) free at 2t = t
// + d's offset t in S(c, d): the second child starts at t and the cut lasts 3t, not the 4t
// of its children one after the other. The S-T graph places c from t and d from 2t.
void TestEvaluator::tCutChildrenOverlap() {
    const Network net = fourConvs("two_branches", 0);
    const RATree t = parse(
        "T 1/1\n\tT 1/1\n\t\tS 1/1\n\t\t\ta 1\n\t\t\tb 1\n\t\tS 1/1\n\t\t\tc 1\n\t\t\td 1\n", net);
    const Evaluation e = detailed(net, computeBoundEdge(), t, 1);
    QVERIFY2(e.valid, e.reason.c_str());
    const int cut = t.node(t.root).children[0];
    const auto& kids = t.node(cut).children;
    const int a = t.node(kids[0]).children[0], c = t.node(kids[1]).children[0];
    const int d = t.node(kids[1]).children[1];
    QCOMPARE(e.nodes[size_t(c)].tileBegin, e.nodes[size_t(a)].tileBegin);
    const double conv = e.nodes[size_t(a)].time;
    QVERIFY(std::abs(e.nodes[size_t(c)].time - conv) < 1.0);
    QVERIFY(std::abs(e.nodes[size_t(kids[0])].time - 2 * conv) < 1.0);
    QVERIFY(std::abs(e.nodes[size_t(kids[1])].time - 2 * conv) < 1.0);
    QVERIFY2(std::abs(e.nodes[size_t(cut)].time - 3 * conv) < 1.0,
             qPrintable(QString("cut %1, t %2").arg(e.nodes[size_t(cut)].time).arg(conv)));
    QVERIFY2(std::abs(e.delay - 3 * conv) < 1.0,
             qPrintable(QString("delay %1, t %2").arg(e.delay).arg(conv)));
    int seen = 0;
    for (const BusyInterval& b : e.intervals) {
        if (b.node != c && b.node != d) continue;
        QVERIFY(std::abs(b.start - (b.node == c ? conv : 2 * conv)) < 1.0);
        ++seen;
    }
    QCOMPARE(seen, 2);
}

// Weights load ahead of their segment (docs/cost-model.md §5, "Weights ahead of their
// segment"), and that shortens the wait of an S cut for its own weights in the DRAM's order
// ("DRAM-ordered pipeline"): a -> b -> c -> d in S(a, b), S(c, d) on 16 compute-bound
// tiles, DRAM at 64 B/cycle. a and b are the 3x3 convs of handDerivedTwoConvs (8 + 8
// tiles, 14,112 cycles each, b waiting for all of a: a's tiles send their pieces in turn).
// a starts once the first of its 8 weight slices is in, 147,456 / 8 / 64 = 288 cycles; b
// (at 14,112 on the pipeline's clock, by which a's weights and input and its own first
// slice are in: (147,456 + 100,352 + 18,432) / 64 = 4,160) no earlier against a than in
// the fill, 288 + 14,112 = 14,400: segment 0 lasts 28,512, and drawn to that length a
// ends at 14,112 x 28,512 / 28,224 = 14,256. c is a fully connected layer on b's output
// (100,352 x 16 weights = 1,605,632 B, little compute), so it gets 2 tiles, the first two
// of a's; d (16 -> 128, 3x3 on 28x28) the rest. Segment 1 waits for b's output (b ends at
// 28,224 on the pipeline's clock) and moves 1,824,768 B (b's output read again, both
// weights, d's output): 28,512 cycles of DRAM. In the DRAM's order d starts once c's
// weights and input and its own first slice are in, (1,605,632 + 100,352 + 2,304) / 64 =
// 26,692 cycles, and ends 2,016 later: the S cut lasts 28,708. But c's tiles are free at
// 14,112, and the DRAM, done with segment 0's 7,744 cycles, loads 14,112 cycles of c's
// weights before segment 1 starts; with its weights in, the cut would take far less, so
// segment 1 lasts 28,708 - 14,112 = 14,596 and the run 28,224 + 14,596 = 42,820. The
// replay of this tree's program: 45,873 cycles (1.071 of it). Letting b keep pace and not
// shortening the cut by the head start would say 46,348: the head start is what the DRAM
// gains by loading the next segment's weights while this one computes.
void TestEvaluator::weightsAheadOfSegment() {
    Network n;
    n.name = "late_input";
    n.layers.push_back(test::conv("a", 128, 128, 28, 3, -1));
    n.layers.push_back(test::conv("b", 128, 128, 28, 3, 0));
    n.layers.push_back(test::conv("c", 128 * 28 * 28, 16, 1, 1, 1));
    n.layers.push_back(test::conv("d", 16, 128, 28, 3, 2, 16));
    const Network net = test::finish(n);
    const Hardware hw = edgeWithDram(64);
    const RATree t = parse("T 1/1\n\tS 1/1\n\t\ta 1\n\t\tb 1\n\tS 1/1\n\t\tc 1\n\t\td 1\n", net);
    const Evaluation e = detailed(net, hw, t, 1);
    QVERIFY2(e.valid, e.reason.c_str());
    const auto& segs = t.node(t.root).children;
    const int a = t.node(segs[0]).children[0], c = t.node(segs[1]).children[0];
    QCOMPARE(e.nodes[size_t(a)].tileBegin, 0);
    QCOMPARE(e.nodes[size_t(a)].tileCount, 8);
    QCOMPARE(e.nodes[size_t(c)].tileBegin, 0);
    QCOMPARE(e.nodes[size_t(c)].tileCount, 2);
    QCOMPARE(e.nodes[size_t(segs[0])].dramBytes, 495616.0);
    QCOMPARE(e.nodes[size_t(segs[1])].dramBytes, 1824768.0);
    QVERIFY2(std::abs(e.delay - 42820) < 1e-2, qPrintable(QString::number(e.delay)));
    const auto rows = segmentFigures(e, t, net);
    QCOMPARE(rows.size(), size_t(2));
    QVERIFY2(std::abs(rows[1].start - 28224) < 1e-3,
             qPrintable(QString::number(rows[1].start, 'f', 6)));
    QVERIFY(std::abs(e.nodes[size_t(segs[0])].time - 28512) < 1e-3);
    QVERIFY(std::abs(e.nodes[size_t(segs[1])].time - 14596) < 1e-2);
    QVERIFY(std::abs(rows[1].share - (42820 - 28512)) < 1e-2); // after segment 0's end
    for (const BusyInterval& b : e.intervals) {
        if (b.node == a) QVERIFY(std::abs(b.end - 14256) < 1e-3);
        if (b.node == c) QVERIFY(std::abs(b.start - 28224) < 1e-3);
    }
    // With the DRAM slow enough that segment 0's own traffic fills the window, nothing
    // loads ahead: at 16 B/cycle segment 0 moves its 495,616 B in 30,976 cycles, its
    // weights' first slice takes 1,152, and segment 1 follows with all of its 114,048.
    const Evaluation slow = detailed(net, edgeWithDram(16), t, 1);
    QVERIFY(std::abs(slow.delay - (30976 + 114048)) < 1e-3);
}

// The weights stream in behind the leaves' traffic on links it also uses: a segment lasts
// at least its leaves' time + 0.7 W, W its weights' busiest link / link bandwidth
// (docs/cost-model.md §5, "Weights in the background"). Two 3x3 convs (147,456 weight
// bytes each) on the edge mesh with slow links: W is of the order of the compute.
void TestEvaluator::weightsShareTheLinks() {
    Hardware hw = computeBoundEdge();
    hw.nocBytesPerCycle = 16;
    const auto [net, t, e] = twoConvsOneT(hw);
    QVERIFY2(e.valid, e.reason.c_str());
    const int seg = t.node(t.root).children[0];
    const NodeFigures& f = e.nodes[size_t(seg)];
    const auto& kids = t.node(seg).children;
    const double leaves = e.nodes[size_t(kids[0])].time + e.nodes[size_t(kids[1])].time;
    // Each port link carries every weight slice whose tiles lie in its row: at least one
    // conv's weights cross one link, at most both convs' cross every link.
    QVERIFY2(f.weightLinkCycles >= 147456 / 16.0 && f.weightLinkCycles <= 2 * 147456 / 16.0,
             qPrintable(QString::number(f.weightLinkCycles)));
    QVERIFY(f.time >= leaves + 0.7 * f.weightLinkCycles - 1e-6);
    QCOMPARE(f.bound, Bound::Noc);
    QVERIFY(std::abs(f.time - (leaves + 0.7 * f.weightLinkCycles)) < 1e-6 * f.time);
    QCOMPARE(e.delay, f.time);
}

void TestEvaluator::allocationMatchesBruteForce() {
    std::mt19937 rng(7);
    std::vector<int> got;
    for (int trial = 0; trial < 400; ++trial) {
        const int k = 1 + int(rng() % 4);
        const int N = k + int(rng() % 9);
        std::vector<double> a(static_cast<size_t>(k));
        for (auto& x : a)
            x = 1 + double(rng() % 1000);
        allocateTiles(a, N, got);
        int sum = 0;
        double gotMax = 0;
        for (int i = 0; i < k; ++i) {
            QVERIFY(got[size_t(i)] >= 1);
            sum += got[size_t(i)];
            gotMax = std::max(gotMax, a[size_t(i)] / got[size_t(i)]);
        }
        QCOMPARE(sum, N);
        // Brute force over every composition of N into k positive parts.
        double best = 1e300;
        std::vector<int> n(static_cast<size_t>(k), 1);
        std::function<void(int, int)> rec = [&](int i, int left) {
            if (i == k - 1) {
                n[size_t(i)] = left;
                double m = 0;
                for (int j = 0; j < k; ++j)
                    m = std::max(m, a[size_t(j)] / n[size_t(j)]);
                best = std::min(best, m);
                return;
            }
            for (int v = 1; v <= left - (k - 1 - i); ++v) {
                n[size_t(i)] = v;
                rec(i + 1, left - v);
            }
        };
        rec(0, N);
        QCOMPARE(gotMax, best);
    }
}

// The allocation hands most tiles out at once, by a threshold on the quotients a_i / j:
// the same counts as the greedy that hands them out one at a time, on cuts of 2 to 40
// children and up to 4,096 tiles, with equal work, zero work and near-ties.
void TestEvaluator::allocationMatchesOneAtATime() {
    auto oneAtATime = [](const std::vector<double>& a, int tiles) {
        std::vector<int> n(a.size(), 1);
        for (int left = tiles - int(a.size()); left > 0; --left) {
            std::pair<double, int> best{a[0] / n[0], 0};
            for (size_t i = 1; i < a.size(); ++i)
                best = std::max(best, std::pair<double, int>{a[i] / n[i], int(i)});
            ++n[size_t(best.second)];
        }
        return n;
    };
    std::mt19937 rng(11);
    std::vector<int> got;
    for (int trial = 0; trial < 3000; ++trial) {
        const int k = 2 + int(rng() % 39);
        const int N = k + int(rng() % (trial % 3 == 0 ? 4096 : 200));
        std::vector<double> a(static_cast<size_t>(k));
        for (auto& x : a) {
            const unsigned kind = rng() % 5;
            if (kind == 0)
                x = 0; // no work
            else if (kind == 1)
                x = 1000; // equal work
            else if (kind == 2)
                x = 1000 * (1 + 1e-15 * double(rng() % 4)); // near-ties
            else
                x = 1 + double(rng() % 100000) * 37.5;
        }
        allocateTiles(a, N, got);
        QCOMPARE(got, oneAtATime(a, N));
    }
}

// docs/method.md §2: a feature map goes through DRAM between segments, between non-adjacent T
// children, and across more than one pipeline stage; otherwise over the NoC.
// EvalOptions::structureChecked (the search's candidates, checked by the edit that made
// them): the same figures without the second check, and the root batch still checked.
void TestEvaluator::checkedStructureStillChecksTheRootBatch() {
    const Network net = test::residual(1);
    const Hardware hw = defaultHardware(4, 4, "edge");
    const RATree tree =
        parse("T 2/1\n\tS 2/1\n\t\tstem 2\n\t\tT 2/1\n\t\t\tb0_c1 2\n\t\t\tb0_c2 2\n"
              "\t\t\tb0_add 2\n",
              net);
    EvalOptions checked;
    checked.structureChecked = true;
    const Evaluation plain = evaluate(net, hw, tree, 2, {});
    const Evaluation skip = evaluate(net, hw, tree, 2, checked);
    QVERIFY2(plain.valid, plain.reason.c_str());
    QVERIFY2(skip.valid, skip.reason.c_str());
    QCOMPARE(skip.cost, plain.cost);
    QCOMPARE(skip.delay, plain.delay);
    QCOMPARE(skip.energy.total(), plain.energy.total());
    // Another total batch than the tree's root: refused either way, with the same reason.
    const Evaluation wrong = evaluate(net, hw, tree, 4, checked);
    QVERIFY(!wrong.valid);
    QCOMPARE(wrong.reason, evaluate(net, hw, tree, 4, {}).reason);
    QVERIFY2(wrong.reason.find("root batch") != std::string::npos, wrong.reason.c_str());
}

void TestEvaluator::dataFlowRules() {
    const Network net = test::residual(1); // stem -> c1 -> c2 -> add(stem, c2)
    const Hardware hw = defaultHardware(4, 4, "edge");
    const double fmap = 64.0 * 28 * 28;       // bytes per sample of each feature map
    const double weights = 3 * 64.0 * 64 * 9; // three 3x3 convs, 64 -> 64
    const double io = fmap /*input*/ + fmap /*add output*/;
    // All in one T segment: stem -> add skips c1, c2 (not adjacent) -> DRAM write + read.
    auto e = evaluate(
        net, hw, parse("T 1/1\n\tT 1/1\n\t\tstem 1\n\t\tb0_c1 1\n\t\tb0_c2 1\n\t\tb0_add 1\n", net),
        1, {});
    QVERIFY2(e.valid, e.reason.c_str());
    QCOMPARE(e.dramBytes, io + weights + 2 * fmap);
    // S cut: stem stage 0, c1 1, c2 2, add 3: stem -> add spans 3 stages -> DRAM.
    e = evaluate(net, hw,
                 parse("T 1/1\n\tS 1/1\n\t\tstem 1\n\t\tb0_c1 1\n\t\tb0_c2 1\n\t\tb0_add 1\n", net),
                 1, {});
    QVERIFY2(e.valid, e.reason.c_str());
    QCOMPARE(e.dramBytes, io + weights + 2 * fmap);
    // Wrap c1, c2 in a T cut: the add is the next sibling of that cut but stem is two
    // children back (T children stem, (c1 c2), add): still not adjacent -> DRAM.
    // With stem and the residual block as an S cut of two stages, stem -> add is one
    // stage -> NoC: no extra DRAM traffic.
    e = evaluate(
        net, hw,
        parse(
            "T 1/1\n\tS 1/1\n\t\tstem 1\n\t\tT 1/1\n\t\t\tb0_c1 1\n\t\t\tb0_c2 1\n\t\t\tb0_add 1\n",
            net),
        1, {});
    QVERIFY2(e.valid, e.reason.c_str());
    QCOMPARE(e.dramBytes, io + weights);
    // Every layer its own segment: every feature map goes through DRAM once written and
    // once per reading consumer (stem is read twice).
    e = evaluate(net, hw, parse("T 1/1\n\tstem 1\n\tb0_c1 1\n\tb0_c2 1\n\tb0_add 1\n", net), 1, {});
    QVERIFY2(e.valid, e.reason.c_str());
    QCOMPARE(e.dramBytes, io + weights + 3 * fmap /*writes*/ + 4 * fmap /*reads*/);
}

void TestEvaluator::invariants_data() {
    QTest::addColumn<QString>("tree");
    QTest::addColumn<QString>("hw");
    QTest::newRow("sequential edge")
        << "T 4/1\n\tstem 4\n\tb0_c1 4\n\tb0_c2 4\n\tb0_add 4\n\tb1_c1 4\n\tb1_c2 4\n\tb1_add 4\n"
        << "edge";
    QTest::newRow("pipelined edge")
        << "T 4/2\n\tS 2/2\n\t\tstem 1\n\t\tb0_c1 1\n\t\tb0_c2 1\n\t\tb0_add 1\n\tT 2/1\n\t\tb1_c1 "
           "2\n\t\tb1_c2 2\n\t\tb1_add 2\n"
        << "edge";
    QTest::newRow("mixed cloud")
        << "T 4/1\n\tS 4/4\n\t\tstem 1\n\t\tT 1/1\n\t\t\tb0_c1 1\n\t\t\tb0_c2 1\n\t\tb0_add 1\n\tS "
           "4/2\n\t\tb1_c1 2\n\t\tb1_c2 2\n\t\tb1_add 2\n"
        << "cloud";
    QTest::newRow("testchip") << "T 4/4\n\tT 1/1\n\t\tstem 1\n\t\tb0_c1 1\n\t\tb0_c2 1\n\t\tb0_add "
                                 "1\n\t\tb1_c1 1\n\t\tb1_c2 1\n\t\tb1_add 1\n"
                              << "testchip";
}

void TestEvaluator::invariants() {
    QFETCH(QString, tree);
    QFETCH(QString, hw);
    const Network net = test::residual(2);
    Hardware h;
    QVERIFY(presetHardware(hw.toStdString(), h));
    const Evaluation e = detailed(net, h, parse(tree.toStdString(), net), 4);
    QVERIFY2(e.valid, e.reason.c_str());
    // E is the sum of its breakdown; every part is positive.
    QVERIFY(qFuzzyCompare(e.energy.total(), e.energy.dram + e.energy.noc + e.energy.mac +
                                                e.energy.buffer + e.energy.inTile()));
    QVERIFY(e.energy.dram > 0 && e.energy.noc > 0 && e.energy.mac > 0 && e.energy.buffer > 0);
    QCOMPARE(e.energy.inTile() > 0, !h.levels.empty()); // edge's and cloud's tiles have levels
    // DRAM bytes >= weights + network input + output.
    const double floor = double(net.totalWeightBytes()) + 4.0 * (64 * 28 * 28) * 2;
    QVERIFY(e.dramBytes >= floor);
    // D >= DRAM bytes / DRAM bandwidth, and >= the ideal compute time.
    QVERIFY(e.delay >= e.dramBytes / h.dramBytesPerCycle - 1e-6);
    QVERIFY(e.delay >= double(net.totalMacsPerSample()) * 4 / (h.macsPerTile * h.tiles()));
    QCOMPARE(e.macs, net.totalMacsPerSample() * 4);
    QVERIFY(e.utilisation > 0 && e.utilisation <= 1.0);
    // NoC hop-bytes equal the sum of the per-link bytes over mesh links (a port link is the
    // DRAM's interface), and the NoC energy follows.
    const Mesh mesh(h);
    double links = 0;
    for (size_t l = 0; l < e.linkBytes.size(); ++l)
        if (!mesh.isPortLink(int(l))) links += e.linkBytes[l];
    QVERIFY(qFuzzyCompare(links, e.nocHopBytes));
    QVERIFY(qFuzzyCompare(e.energy.noc, e.nocHopBytes * 8 * h.energy.nocPjPerBitHop));
    double tileDram = 0;
    for (double b : e.tileDramBytes)
        tileDram += b;
    QVERIFY(qFuzzyCompare(tileDram, e.dramBytes));
    QCOMPARE(e.cost, e.energy.total() * e.delay);
}

void TestEvaluator::utilisationThreshold() {
    // On the 2x2 test chip an S cut over c1, c2 (equal NPT a) and the add (tiny NPT e)
    // gets tiles (2, 1, 1): max a_i / n_i = a, utilisation (2a + e) / (4a) ~ 0.5 < 0.75.
    const Network net = test::residual(1);
    Hardware h;
    presetHardware("testchip", h);
    const RATree t =
        parse("T 1/1\n\tstem 1\n\tS 1/1\n\t\tb0_c1 1\n\t\tb0_c2 1\n\t\tb0_add 1\n", net);
    const auto e = evaluate(net, h, t, 1, {});
    QVERIFY(!e.valid);
    QVERIFY2(QString::fromStdString(e.reason).contains("utilisation 0.5"), e.reason.c_str());
    QVERIFY2(QString::fromStdString(e.reason).contains("S cut /1"), e.reason.c_str());
    QCOMPARE(e.invalidNode, t.nodeAtPath("/1"));
    EvalOptions loose;
    loose.minUtilisation = 0.4;
    QVERIFY(evaluate(net, h, t, 1, loose).valid);
}

void TestEvaluator::bufferOverflowNamesNode() {
    const Network net = test::twoConvs();
    Hardware h = defaultHardware(4, 4, "tiny");
    h.bufferBytes = 64 * 1024;
    const auto e = evaluate(net, h, parse("T 64/1\n\tconv1 64\n\tconv2 64\n", net), 64, {});
    QVERIFY(!e.valid);
    QVERIFY2(QString::fromStdString(e.reason).contains("buffer overflow at /0 (conv1)"),
             e.reason.c_str());
    // In the units every view uses (util/units.h), decimal: "65.54 KB", not "64.0 KiB".
    QVERIFY2(QString::fromStdString(e.reason).contains("over the 65.54 KB buffer"),
             e.reason.c_str());
    QVERIFY(e.reason.find(" " + formatBytes(h.bufferBytes) + " buffer") != std::string::npos);
}

// T 4/1 [stem, T 4/1 [c1, c2, add]]: stem -> add is adjacent at the outer T cut, so it
// stays on chip, held in the buffers of the inner cut's 16 tiles while c1 and c2 run:
// 64 x 28 x 28 B x 4 samples / 16 tiles = 12,544 B per tile. The flat tree sends it
// through DRAM and holds nothing. With the buffer set to exactly the flat tree's need, the
// nested tree overflows at its segment; 12,544 B more and it fits.
// A feature map kept on chip for the next child of a T cut stays in its producer's buffers
// (the generator frees an output once its NoC readers have it), so it is charged per tile
// of the producer, not spread over the reading cut's tiles (docs/cost-model.md §6). Four
// 3x3 convs a -> b -> c -> d (128 -> 128 channels, 28x28), batch 8: in
// T(S(a, b), S(c, d)) b's tiles (8 of 16) keep b's output of all 8 samples until S(c, d)
// has read it: 8 x 128 x 28 x 28 / 8 = 100,352 B per tile, beside S(c, d)'s own work
// (spread over the 16 tiles it was 50,176). With the two S cuts as segments the map goes
// through DRAM and nothing is held.
void TestEvaluator::heldOutputStaysOnProducerTiles() {
    const Network net = fourConvs("chain4", 1);
    Hardware hw = computeBoundEdge();
    hw.bufferBytes = 4 << 20;
    const RATree held = parse(
        "T 8/1\n\tT 8/1\n\t\tS 8/8\n\t\t\ta 1\n\t\t\tb 1\n\t\tS 8/8\n\t\t\tc 1\n\t\t\td 1\n", net);
    const RATree segs = parse("T 8/1\n\tS 8/8\n\t\ta 1\n\t\tb 1\n\tS 8/8\n\t\tc 1\n\t\td 1\n", net);
    const Evaluation eh = detailed(net, hw, held, 8);
    const Evaluation es = detailed(net, hw, segs, 8);
    QVERIFY2(eh.valid, eh.reason.c_str());
    QVERIFY2(es.valid, es.reason.c_str());
    const Bytes second = es.nodes[size_t(segs.nodeAtPath("/1"))].bufferPerTile;
    QCOMPARE(eh.nodes[size_t(held.nodeAtPath("/0/1"))].tileCount, 16);
    // S(c, d) alone needs what it needs as a segment; inside the T cut b's slices of all 8
    // samples come on top: at least 100,352 B (the mapper's slice per tile, with its
    // rounding, is what the generator allocates).
    const Bytes need = eh.nodes[size_t(held.nodeAtPath("/0"))].bufferPerTile;
    QCOMPARE(eh.nodes[size_t(held.nodeAtPath("/0/1"))].bufferPerTile, second);
    QVERIFY2(need >= second + 100352.0, qPrintable(QString::number(need)));
    // A buffer one byte short makes the tree invalid, naming the T cut.
    hw.bufferBytes = need;
    QVERIFY(detailed(net, hw, held, 8).valid);
    hw.bufferBytes = need - 1;
    const Evaluation small = detailed(net, hw, held, 8);
    QVERIFY(!small.valid);
    QVERIFY2(QString::fromStdString(small.reason).startsWith("buffer overflow at T cut /0:"),
             small.reason.c_str());
}

void TestEvaluator::heldInputChargedToCut() {
    const Network net = test::residual(1);
    Hardware h = defaultHardware(4, 4, "edge");
    const RATree flat =
        parse("T 4/1\n\tT 4/1\n\t\tstem 4\n\t\tb0_c1 4\n\t\tb0_c2 4\n\t\tb0_add 4\n", net);
    const RATree nested = parse(
        "T 4/1\n\tT 4/1\n\t\tstem 4\n\t\tT 4/1\n\t\t\tb0_c1 4\n\t\t\tb0_c2 4\n\t\t\tb0_add 4\n",
        net);
    const Evaluation ef = detailed(net, h, flat, 4);
    QVERIFY2(ef.valid, ef.reason.c_str());
    const Bytes need = ef.nodes[size_t(flat.nodeAtPath("/0"))].bufferPerTile;
    h.bufferBytes = need;
    QVERIFY(detailed(net, h, flat, 4).valid);
    const Evaluation en = detailed(net, h, nested, 4);
    QVERIFY(!en.valid);
    QVERIFY2(QString::fromStdString(en.reason).startsWith("buffer overflow at T cut /0:"),
             en.reason.c_str());
    h.bufferBytes = need + 12544;
    const Evaluation ok = detailed(net, h, nested, 4);
    QVERIFY2(ok.valid, ok.reason.c_str());
    QCOMPARE(ok.nodes[size_t(nested.nodeAtPath("/0"))].bufferPerTile, need + 12544);
    h.bufferBytes = need + 12543;
    QVERIFY(!detailed(net, h, nested, 4).valid);
}

void TestEvaluator::snakeNumbering() {
    Hardware h = defaultHardware(4, 4, "edge"); // stripe 2
    Mesh m(h);
    // Stripe 0 (columns 0-1) top to bottom, stripe 1 (columns 2-3) bottom to top.
    const std::vector<int> expected = {0, 1, 4, 5, 8, 9, 12, 13, 14, 15, 10, 11, 6, 7, 2, 3};
    QCOMPARE(m.snakeOrder(), expected);
    // Consecutive positions are at most 2 hops apart with stripe 2 (row change).
    for (int i = 1; i < 16; ++i)
        QVERIFY(m.hops(m.tileAt(i - 1), m.tileAt(i)) <= 2);
}

void TestEvaluator::xyRoutes() {
    Mesh m(defaultHardware(4, 4, "edge"));
    std::vector<int> r;
    m.route(m.tileId(0, 0), m.tileId(2, 1), r);
    // X first: (0,0)->(1,0)->(2,0), then Y: (2,0)->(2,1).
    const std::vector<int> expected = {m.outLink(m.tileId(0, 0), East),
                                       m.outLink(m.tileId(1, 0), East),
                                       m.outLink(m.tileId(2, 0), South)};
    QCOMPARE(r, expected);
    r.clear();
    m.routeFromDram(m.tileId(3, 2), r); // east port is nearest
    QCOMPARE(r.front(), m.portInLink(m.tileId(3, 2), East));
    QCOMPARE(int(r.size()), 1);
}

void TestEvaluator::detailIntervalsCoverSchedule() {
    const Network net = test::residual(1);
    const Hardware h = defaultHardware(4, 4, "edge");
    const RATree t = parse(
        "T 4/2\n\tS 2/2\n\t\tstem 1\n\t\tT 1/1\n\t\t\tb0_c1 1\n\t\t\tb0_c2 1\n\t\t\tb0_add 1\n",
        net);
    const auto e = detailed(net, h, t, 4);
    QVERIFY2(e.valid, e.reason.c_str());
    // 4 leaves x 2 sub-batches x 2 root sub-batches = 16 rectangles.
    QCOMPARE(int(e.intervals.size()), 16);
    Cycles last = 0;
    for (const auto& b : e.intervals) {
        QVERIFY(b.end > b.start);
        last = std::max(last, b.end);
        QVERIFY(b.lastSample - b.firstSample + 1 == 1);
    }
    QVERIFY(std::abs(last - e.delay) < 1e-6 * e.delay);
}

QTEST_APPLESS_MAIN(TestEvaluator)
#include "tst_evaluator.moc"
