// The transfers module on its own: box geometry (intersections, volumes, stage boxes and
// the lag between them), a partition slot's boxes and windows, DRAM input cells,
// producer-slice matching, per-link accounting, SendLog's pacing on a crowded link, and a
// leaf's traffic over a period. Every expected figure is worked out by hand in a comment.
#include "eval/link_accounting.h"
#include "eval/transfers.h"
#include "hw/mesh.h"
#include "mapping/mapper.h"
#include "netbuilder.h"

#include <QtTest>
#include <map>
#include <numeric>
#include <random>

using namespace tilescope;

Q_DECLARE_METATYPE(tilescope::Box)

namespace {

Box box(std::array<int, 4> lo, std::array<int, 4> hi) {
    Box b;
    b.lo = lo;
    b.hi = hi;
    return b;
}

// One sample, `channels` channels, rows [r0, r1), columns [0, cols).
Box rows(int r0, int r1, int channels = 2, int cols = 4) {
    return box({0, 0, r0, 0}, {1, channels, r1, cols});
}

// A 1x1 convolution a (2 -> 4 channels on 2x2) feeding a 1x1 convolution b (4 -> 4).
Network twoPointwise() {
    Network n;
    n.name = "two_pointwise";
    n.layers.push_back(test::conv("a", 2, 4, 2, 1, -1));
    n.layers.push_back(test::conv("b", 4, 4, 2, 1, 0));
    return test::finish(n);
}

LeafMapping partition(int pk, int pb, int ph, int pw) {
    LeafMapping m;
    m.pk = pk, m.pb = pb, m.ph = ph, m.pw = pw;
    return m;
}

// One NoC piece a tile sends: its bytes, the links of its route and the consumer input.
struct SentPiece {
    int tile;
    double bytes;
    std::vector<int> route;
    size_t input;
};

SendLog sendLogOf(std::initializer_list<SentPiece> pieces) {
    SendLog log;
    log.clear();
    for (const SentPiece& p : pieces)
        log.add(p.tile, p.bytes, p.route, p.input);
    return log;
}

} // namespace

class TestTransfers : public QObject {
    Q_OBJECT
  private slots:
    void boxGeometry_data();
    void boxGeometry();
    void splitBoxCutsOuterAxesFirst();
    void lagStage();
    void tileBoxAndWindow();
    void loadOrderDecidesComputeStages();
    void stageCountFollowsBytes();
    void weightSlicesAddUp();
    void dramCellsCoverOnce();
    void dramCellsGapTravelsWithNeighbour();
    void nocPiecesMatchSlices();
    void nocPiecesMulticast();
    void linkTallyCountsEachLinkOnce();
    void sendLogSharesALink();
    void sendLogHeldUpOnce();
    void sendLogMatchesThePerPieceRule();
    void leafTrafficFromDram();
    void leafTrafficFromInterleavedDram();
    void interleavedStoreShares();
    void leafTrafficOverNoc();
};

void TestTransfers::boxGeometry_data() {
    QTest::addColumn<Box>("a");
    QTest::addColumn<Box>("b");
    QTest::addColumn<long long>("volume"); // of a ∩ b
    QTest::addColumn<bool>("meets");
    const Box a = box({0, 0, 0, 0}, {2, 4, 6, 8});
    // [1,2) x [2,4) x [3,6) x [0,1): 1 x 2 x 3 x 1 = 6.
    QTest::newRow("overlap") << a << box({1, 2, 3, 0}, {3, 4, 9, 1}) << 6LL << true;
    // Rows [6, 9) start where a's end: nothing in common.
    QTest::newRow("touching") << a << box({0, 0, 6, 0}, {2, 4, 9, 8}) << 0LL << false;
    // b inside a: b itself, 1 x 1 x 2 x 3 = 6.
    QTest::newRow("inside") << a << box({1, 3, 2, 5}, {2, 4, 4, 8}) << 6LL << true;
    // Apart on the channel axis only.
    QTest::newRow("apart") << a << box({0, 4, 0, 0}, {2, 5, 6, 8}) << 0LL << false;
}

void TestTransfers::boxGeometry() {
    QFETCH(Box, a);
    QFETCH(Box, b);
    QFETCH(long long, volume);
    QFETCH(bool, meets);
    QCOMPARE(a.volume(), 2LL * 4 * 6 * 8);
    QCOMPARE(a.intersect(b).volume(), volume);
    QCOMPARE(b.intersect(a).volume(), volume);
    QCOMPARE(a.intersects(b), meets);
    QCOMPARE(a.intersect(b).empty(), !meets);
}

void TestTransfers::splitBoxCutsOuterAxesFirst() {
    // kActOrder cuts samples, then rows, columns, channels, from a budget of 8 stages:
    // 2 samples take 2 (4 left), 6 rows take 4 (1 left), nothing else is cut. Rows of
    // stage i: [6i/4, 6(i+1)/4) = [0,1), [1,3), [3,4), [4,6); samples outermost.
    const Box b = box({0, 0, 0, 0}, {2, 4, 6, 8});
    const std::vector<Box> stages = splitBox(b, kActOrder, kMaxStages);
    QCOMPARE(stages.size(), size_t(8));
    const std::array<std::pair<int, int>, 4> rowCuts{{{0, 1}, {1, 3}, {3, 4}, {4, 6}}};
    for (size_t i = 0; i < stages.size(); ++i) {
        QCOMPARE(stages[i].lo[0], int(i / 4));
        QCOMPARE(stages[i].hi[0], int(i / 4) + 1);
        QCOMPARE(stages[i].lo[2], rowCuts[i % 4].first);
        QCOMPARE(stages[i].hi[2], rowCuts[i % 4].second);
        QCOMPARE(stages[i].hi[1] - stages[i].lo[1], 4);
        QCOMPARE(stages[i].hi[3] - stages[i].lo[3], 8);
    }
    long long sum = 0;
    for (const Box& s : stages)
        sum += s.volume();
    QCOMPARE(sum, b.volume()); // 384: the stages tile the box
    // kChannelOrder on the same box: 4 channels take 4 stages, 2 samples the other 2.
    const std::vector<Box> byChannel = splitBox(b, kChannelOrder, kMaxStages);
    QCOMPARE(byChannel.size(), size_t(8));
    QCOMPARE(byChannel[0].hi[1], 1);
    QCOMPARE(byChannel[0].hi[0], 1);
    QCOMPARE(byChannel[1].lo[0], 1); // samples inside a channel stage
}

void TestTransfers::lagStage() {
    // Four producer stages of one row each. A consumer needing the same rows stage by
    // stage lags one stage (stage j needs producer stage j + 1: k = 1).
    std::vector<Box> prod;
    for (int r = 0; r < 4; ++r)
        prod.push_back(rows(r, r + 1));
    QCOMPARE(tilescope::lagStage(prod, prod), 1u);
    // A 3x3 window: stage j needs rows [j-1, j+2), so producer stage min(j+2, 4):
    // k = max over j of (min(j+2, 4) - j) = 2.
    std::vector<Box> window;
    for (int r = 0; r < 4; ++r)
        window.push_back(rows(std::max(0, r - 1), std::min(4, r + 2)));
    QCOMPARE(tilescope::lagStage(prod, window), 2u);
    // A consumer whose first stage needs everything waits for all 4.
    QCOMPARE(tilescope::lagStage(prod, std::vector<Box>{rows(0, 4)}), 4u);
}

void TestTransfers::tileBoxAndWindow() {
    // One 3x3 convolution, 2 -> 4 channels on 4x4 (padding 2, so 1 row above), its output
    // split in two by rows (ph = 2): slot 1 holds rows [2, 4) of all 4 channels.
    Network net;
    net.layers.push_back(test::conv("c", 2, 4, 4, 3, -1));
    net = test::finish(net);
    const TransferGeometry geo(net, 8);
    const LeafMapping m = partition(1, 1, 2, 1);
    const Box o = geo.tileBox(0, m, 1, 0, 1);
    QCOMPARE(o, box({0, 0, 2, 0}, {1, 4, 4, 4}));
    // Its window: both input channels, rows [2*1 - 1, (4-1) - 1 + 3) = [1, 5) clipped to
    // [1, 4), columns [-1, 5) clipped to [0, 4): 1 x 2 x 3 x 4 = 24 elements.
    const Box w = geo.window(0, 0, o);
    QCOMPARE(w, box({0, 0, 1, 0}, {1, 2, 4, 4}));
    QCOMPARE(geo.bytesOf(w.volume()), std::uint64_t(24));
    // At 4 bits an element, 3 elements are 12 bits: 2 bytes, rounded up.
    QCOMPARE(TransferGeometry(net, 4).bytesOf(3), std::uint64_t(2));
    // Samples [4, 6) of slot 0 (pb = 1): the absolute sample indices, rows [0, 2).
    QCOMPARE(geo.tileBox(0, m, 0, 4, 6), box({4, 0, 0, 0}, {6, 4, 2, 4}));
}

void TestTransfers::loadOrderDecidesComputeStages() {
    // A 1x1 convolution, 64 -> 256 channels on 2x2: its weights (16,384 elements) outweigh
    // its input window (256), so by default a compute that loads them streams by output
    // channel; the template's load order can fix either way; without loading weights it
    // goes by activations whatever the order.
    Network net;
    net.layers.push_back(test::conv("c", 64, 256, 2, 1, -1));
    net = test::finish(net);
    const Box o = box({0, 0, 0, 0}, {1, 256, 2, 2});
    QCOMPARE(TransferGeometry(net, 8).computeOrder(0, o, true), kChannelOrder);
    QCOMPARE(TransferGeometry(net, 8, LoadOrder::WeightsFirst).computeOrder(0, o, true), kActOrder);
    QCOMPARE(TransferGeometry(net, 8, LoadOrder::InputsFirst).computeOrder(0, o, true),
             kChannelOrder);
    QCOMPARE(TransferGeometry(net, 8, LoadOrder::InputsFirst).computeOrder(0, o, false), kActOrder);
    // A 3x3 convolution 2 -> 4 on 16x16: the input window outweighs the weights.
    Network small;
    small.layers.push_back(test::conv("s", 2, 4, 16, 3, -1));
    small = test::finish(small);
    const Box so = box({0, 0, 0, 0}, {1, 4, 16, 16});
    QCOMPARE(TransferGeometry(small, 8).computeOrder(0, so, true), kActOrder);
    QCOMPARE(TransferGeometry(small, 8, LoadOrder::InputsFirst).computeOrder(0, so, true),
             kChannelOrder);
}

void TestTransfers::stageCountFollowsBytes() {
    // Without a stage size every instruction has 8 stages, whatever its bytes.
    QCOMPARE(stageCount(1, 0), 8);
    QCOMPARE(stageCount(1'000'000, 0), 8);
    // With one: ceil(bytes / stage size), at least 1 and at most 64.
    QCOMPARE(stageCount(0, 256), 1);
    QCOMPARE(stageCount(256, 256), 1);
    QCOMPARE(stageCount(257, 256), 2);
    QCOMPARE(stageCount(4096, 256), 16);
    QCOMPARE(stageCount(16'384, 256), 64);
    QCOMPARE(stageCount(16'385, 256), 64);
    QCOMPARE(stageCount(1'000'000, 4096), 64);
    QCOMPARE(stageCount(12'288, 4096), 3);
    // A box of 1 x 16 x 8 x 8 elements is 1,024 bytes at 8 bits, 512 at 4 bits: with 300-byte
    // stages ceil(1024 / 300) = 4 and ceil(512 / 300) = 2 stages.
    Network net;
    net.layers.push_back(test::conv("c", 16, 16, 8, 3, -1));
    net = test::finish(net);
    const Box b = box({0, 0, 0, 0}, {1, 16, 8, 8});
    QCOMPARE(TransferGeometry(net, 8, LoadOrder::Auto, 300).stagesOf(b), 4);
    QCOMPARE(TransferGeometry(net, 4, LoadOrder::Auto, 300).stagesOf(b), 2);
    QCOMPARE(TransferGeometry(net, 8).stagesOf(b), 8);
    // splitBox cuts that box in as many: 4 stages of 2 rows each (one sample, 8 rows).
    const std::vector<Box> four = splitBox(b, kActOrder, 4);
    QCOMPARE(four.size(), size_t(4));
    QCOMPARE(four[1], box({0, 0, 2, 0}, {1, 16, 4, 8}));
}

void TestTransfers::weightSlicesAddUp() {
    // 10 weight bytes over 4 output channels: slice [k0, k1) is 10 k1 / 4 - 10 k0 / 4 in
    // integers, so 2, 3, 2, 3 (the rounding shared out, the sum exactly 10).
    Network net;
    net.layers.push_back(test::conv("c", 2, 4, 4, 1, -1));
    net.layers[0].weightBytes = 10;
    net = test::finish(net);
    const TransferGeometry geo(net, 8);
    QCOMPARE(geo.weightElems(0, 0, 1), 2LL);
    QCOMPARE(geo.weightElems(0, 1, 2), 3LL);
    QCOMPARE(geo.weightElems(0, 2, 3), 2LL);
    QCOMPARE(geo.weightElems(0, 3, 4), 3LL);
    QCOMPARE(geo.weightElems(0, 0, 4), 10LL);
}

void TestTransfers::dramCellsCoverOnce() {
    // Two windows on rows [0, 3) and [1, 4) of a 1 x 2 x 4 x 4 input: cut at rows 1 and 3,
    // rows [0,1) go to window 0, [1,3) to both, [3,4) to window 1: 8, 16 and 8 elements.
    const Box ext = rows(0, 4);
    const std::vector<DramCell> cells = dramCells(ext, {rows(0, 3), rows(1, 4)});
    QCOMPARE(cells.size(), size_t(3));
    QCOMPARE(cells[0].box, rows(0, 1));
    QCOMPARE(cells[0].to, std::vector<size_t>{0});
    QCOMPARE(cells[1].box, rows(1, 3));
    QCOMPARE(cells[1].to, (std::vector<size_t>{0, 1}));
    QCOMPARE(cells[2].box, rows(3, 4));
    QCOMPARE(cells[2].to, std::vector<size_t>{1});
    QCOMPARE(cells[0].box.volume() + cells[1].box.volume() + cells[2].box.volume(), 32LL);
}

void TestTransfers::dramCellsGapTravelsWithNeighbour() {
    // Windows on rows [0, 1) and [2, 3) (a stride larger than the kernel): row 1 no window
    // needs travels with its left neighbour (window 0), row 3 with its left (window 1), so
    // the four one-row cells cover the input once: 0, 0, 1, 1.
    const std::vector<DramCell> cells = dramCells(rows(0, 4), {rows(0, 1), rows(2, 3)});
    QCOMPARE(cells.size(), size_t(4));
    const std::array<size_t, 4> to{0, 0, 1, 1};
    long long covered = 0;
    for (size_t i = 0; i < 4; ++i) {
        QCOMPARE(cells[i].box, rows(int(i), int(i) + 1));
        QCOMPARE(cells[i].to, std::vector<size_t>{to[i]});
        covered += cells[i].box.volume();
    }
    QCOMPARE(covered, rows(0, 4).volume());
}

void TestTransfers::nocPiecesMatchSlices() {
    // Producer slices: rows [0, 2) on tile 0, rows [2, 4) on tile 1. Consumer 0 (tile 5)
    // wants rows [0, 3), consumer 1 (tile 1) rows [1, 4). Slice 0 meets consumer 0 in rows
    // [0, 2) and consumer 1 in [1, 2): two pieces. Slice 1 meets consumer 0 in [2, 3), and
    // consumer 1 on its own tile, which reads it in place.
    const std::vector<SliceRef> slices{{0, rows(0, 2)}, {1, rows(2, 4)}};
    const std::vector<int> consumerTiles{5, 1};
    const std::vector<std::vector<Box>> wants{{rows(0, 3)}, {rows(1, 4)}};
    std::vector<NocPiece> pieces;
    std::vector<std::vector<size_t>> local;
    nocPieces(slices, consumerTiles, wants, pieces, local);
    QCOMPARE(pieces.size(), size_t(3));
    QCOMPARE(pieces[0].slice, size_t(0));
    QCOMPARE(pieces[0].box, rows(0, 2));
    QCOMPARE(pieces[0].to, std::vector<size_t>{0});
    QCOMPARE(pieces[1].slice, size_t(0));
    QCOMPARE(pieces[1].box, rows(1, 2));
    QCOMPARE(pieces[1].to, std::vector<size_t>{1});
    QCOMPARE(pieces[2].slice, size_t(1));
    QCOMPARE(pieces[2].box, rows(2, 3));
    QCOMPARE(pieces[2].to, std::vector<size_t>{0});
    QCOMPARE(local.size(), size_t(2));
    QVERIFY(local[0].empty());
    QCOMPARE(local[1], std::vector<size_t>{1});
}

void TestTransfers::nocPiecesMulticast() {
    // Two consumers (tiles 5, 6) that both want all four rows: each slice is one piece
    // sent to both (a multicast), none read in place.
    const std::vector<SliceRef> slices{{0, rows(0, 2)}, {1, rows(2, 4)}};
    std::vector<NocPiece> pieces;
    std::vector<std::vector<size_t>> local;
    nocPieces(slices, {5, 6}, {{rows(0, 4)}, {rows(0, 4)}}, pieces, local);
    QCOMPARE(pieces.size(), size_t(2));
    for (size_t i = 0; i < 2; ++i) {
        QCOMPARE(pieces[i].slice, i);
        QCOMPARE(pieces[i].box, slices[i].box);
        QCOMPARE(pieces[i].to, (std::vector<size_t>{0, 1}));
    }
    QVERIFY(local[0].empty() && local[1].empty());
}

void TestTransfers::linkTallyCountsEachLinkOnce() {
    const Mesh mesh(defaultHardware(2, 2, "tally"));
    LinkTally tally;
    tally.ensure(mesh.linkCount());
    // A multicast whose routes share link 3 loads it once: links 3 and 5 get 10 bytes.
    tally.add({3, 5, 3}, 10);
    // Then 4 bytes on 5 and 7 (a tree without repeats): 5 has 14, 7 has 4.
    tally.addUnique(std::vector<int>{5, 7}, 4);
    std::vector<std::pair<int, double>> links;
    QCOMPARE(tally.take(mesh, links), 14.0); // no chiplets: every link at full speed
    const std::vector<std::pair<int, double>> expected{{3, 10.0}, {5, 14.0}, {7, 4.0}};
    QCOMPARE(links, expected);
    QCOMPARE(tally.takeMax(mesh), 0.0); // take() left it empty
    tally.add({2}, 6);
    QCOMPARE(tally.takeMax(mesh), 6.0);
}

void TestTransfers::sendLogSharesALink() {
    // Tile 0 sends piece A, 4 bytes over link 1; tile 1 sends B, 2 bytes over link 1, and
    // C, 6 bytes over link 2 (tile 1 sends 8 bytes in all).
    // Link 1: A waits for min(2, 4) of B's bytes, 4 + 2 = 6, but tile 1 keeps the link busy
    // only 2/8 of the time, so A takes at most 4 / (1 - 1/4) = 16/3. B waits for min(4, 2):
    // 2 + 2 = 4 (tile 0 keeps the link busy all of its time: no cap). Link 2: C alone, 6.
    // Tile 0: 16/3; tile 1: 4 + 6 = 10 (its own 8 bytes plus the most others put on one of
    // its links, 4, is 12: no cap). The busiest is tile 1 with 10, 5 per piece.
    const Mesh mesh(defaultHardware(2, 2, "pace"));
    SendLog log = sendLogOf({{0, 4, {1}, 0}, {1, 2, {1}, 0}, {1, 6, {2}, 1}});
    QCOMPARE(log.paced(mesh), 10.0);
    QCOMPARE(log.pieceTime(), 5.0);
    // Per input: input 0 is A on tile 0 (16/3) and B on tile 1 (4); input 1 is C (6).
    std::vector<double> byInput(2, 0.0);
    log.pacedByInput(mesh, byInput);
    QCOMPARE(byInput[0], 16.0 / 3.0);
    QCOMPARE(byInput[1], 6.0);
}

void TestTransfers::sendLogHeldUpOnce() {
    // Tile 0 sends two 4-byte pieces over link 1, tile 1 one 4-byte piece there. Each
    // piece waits for min(W, 4) of every other sender's W (8 and 4): 4 + 4 = 8, and with
    // the senders' shares adding up to 2 nothing caps it. Tile 0's pieces add up to 16,
    // but the others' bytes hold it up once: its 8 bytes plus tile 1's 4 on the link, 12.
    const Mesh mesh(defaultHardware(2, 2, "held"));
    SendLog log = sendLogOf({{0, 4, {1}, 0}, {0, 4, {1}, 0}, {1, 4, {1}, 0}});
    QCOMPARE(log.paced(mesh), 12.0);
    QCOMPARE(log.pieceTime(), 6.0);
    // Sending nothing takes nothing.
    log.clear();
    QCOMPARE(log.paced(mesh), 0.0);
}

void TestTransfers::sendLogMatchesThePerPieceRule() {
    // Random pieces on a 6x6 mesh (whole byte counts, routes of distinct links, some senders
    // sending many pieces of one size, some pieces larger than what other senders put on a
    // link), against the rule taken piece by piece and link by link as docs/cost-model.md §5
    // states it: a piece waits on each link for min(W, b) of every other sender's W there,
    // no longer than b / (1 - rho) while the others' shares rho add up to less than 1, and
    // takes its slowest link; a tile's pieces add up, to no more than its own bytes plus the
    // most the others put on one of its links.
    const Mesh mesh(defaultHardware(6, 6, "random"));
    const int links = mesh.linkCount(), tiles = mesh.tiles();
    std::mt19937 rng(7);
    for (int round = 0; round < 200; ++round) {
        const int pieces = 1 + int(rng() % 120), senders = 1 + int(rng() % 12);
        const int span = 2 + int(rng() % 12); // the links the routes draw from
        std::vector<SentPiece> all;
        for (int i = 0; i < pieces; ++i) {
            SentPiece p;
            p.tile = int(rng() % unsigned(std::min(senders, tiles)));
            p.bytes = round % 3 == 0 ? 16.0 : double(1 + rng() % 64);
            const int len = int(rng() % 6);
            for (int r = 0; r < len; ++r) {
                const int l = int(rng() % unsigned(std::min(span, links)));
                if (std::find(p.route.begin(), p.route.end(), l) == p.route.end())
                    p.route.push_back(l);
            }
            p.input = rng() % 2;
            all.push_back(p);
        }
        SendLog log;
        log.clear();
        for (const SentPiece& p : all)
            log.add(p.tile, p.bytes, p.route, p.input);
        std::vector<double> total(size_t(tiles), 0.0);
        std::map<std::pair<int, int>, double> w; // (link, tile) -> bytes
        std::vector<double> rho(size_t(links), 0.0), load(size_t(links), 0.0);
        for (const SentPiece& p : all)
            total[size_t(p.tile)] += p.bytes;
        for (const SentPiece& p : all)
            for (int l : p.route) {
                w[{l, p.tile}] += p.bytes;
                rho[size_t(l)] += p.bytes / total[size_t(p.tile)];
                load[size_t(l)] += p.bytes;
            }
        std::vector<double> sum(size_t(tiles), 0.0), own(size_t(tiles), 0.0),
            others(size_t(tiles), 0.0);
        for (const SentPiece& p : all) {
            double slowest = p.bytes;
            for (int l : p.route) {
                double waits = 0;
                for (const auto& [key, bytes] : w)
                    if (key.first == l && key.second != p.tile) waits += std::min(bytes, p.bytes);
                const double mine = w[{l, p.tile}];
                double time = p.bytes + waits;
                const double r = rho[size_t(l)] - mine / total[size_t(p.tile)];
                if (rho[size_t(l)] < 2 && r < 1) time = std::min(time, p.bytes / (1 - r));
                slowest = std::max(slowest, time * mesh.linkSlowness(l));
                others[size_t(p.tile)] = std::max(others[size_t(p.tile)],
                                                  (load[size_t(l)] - mine) * mesh.linkSlowness(l));
            }
            sum[size_t(p.tile)] += slowest;
            own[size_t(p.tile)] += p.route.empty() ? 0.0 : p.bytes;
        }
        double busiest = 0;
        for (int t = 0; t < tiles; ++t)
            busiest =
                std::max(busiest, std::min(sum[size_t(t)], own[size_t(t)] + others[size_t(t)]));
        const double got = log.paced(mesh);
        if (std::abs(got - busiest) > 1e-9 * std::max(1.0, busiest))
            QFAIL(qPrintable(QString("round %1: paced %2, the rule %3")
                                 .arg(round)
                                 .arg(got, 0, 'g', 17)
                                 .arg(busiest, 0, 'g', 17)));
    }
}

void TestTransfers::leafTrafficFromDram() {
    // Layer a (1x1 conv, 2 -> 4 channels on 2x2, 8 weight bytes) on both tiles of a 2x1
    // mesh (DRAM on the west and east sides), output channels split in two (pk = 2),
    // reading its input from DRAM and storing its output.
    const Network net = twoPointwise();
    const Hardware hw = defaultHardware(2, 1, "row");
    const Mesh mesh(hw);
    QCOMPARE(mesh.tileAt(0), 0);
    QCOMPARE(mesh.tileAt(1), 1);
    const TransferGeometry geo(net, hw.dataBits);
    QCOMPARE(hw.dataBits, 8);
    const LeafMapping m = partition(2, 1, 1, 1);
    const LeafPlacement leaf{0, 1, 0, 2, &m};
    const LeafTraffic t = leafTrafficPeriod(geo, mesh, leaf, {nullptr}, true);
    QCOMPARE(t.invocations, 1);
    // Weights: channels [0, 2) to tile 0 through the west port (4 bytes), [2, 4) to tile 1
    // through the east port (4 bytes).
    const int westIn = mesh.portInLink(0, West), eastIn = mesh.portInLink(1, East);
    QCOMPARE(t.weightDram, 8.0);
    QCOMPARE(t.weightDelivered, 8.0);
    const std::vector<std::pair<int, double>> weightLinks{{westIn, 4.0}, {eastIn, 4.0}};
    QCOMPARE(t.weightLinks, weightLinks);
    QCOMPARE(t.weightMaxLink, 4.0);
    // Input: both tiles need all 2 x 2 x 2 = 8 bytes: one cell, read once and sent to
    // both, each through its own port (8 bytes on each), 4 bytes charged to each side.
    // Output: 2 x 2 x 2 = 8 bytes from each tile to its port. DRAM: 8 + 16 = 24 bytes.
    QCOMPARE(t.actDram, 24.0);
    QCOMPARE(t.actDramOut, 16.0);
    QCOMPARE(t.actSide[West], 12.0);
    QCOMPARE(t.actSide[East], 12.0);
    // Links sorted by index: west out of tile 0 (1), east out of tile 1 (4), then the
    // port-in links of tile 0 from the west (9) and tile 1 from the east (12).
    const int westOut = mesh.outLink(0, West), eastOut = mesh.outLink(1, East);
    const std::vector<std::pair<int, double>> actLinks{
        {westOut, 8.0}, {eastOut, 8.0}, {westIn, 8.0}, {eastIn, 8.0}};
    QCOMPARE(t.actLinks, actLinks);
    QCOMPARE(t.actMaxLink, 8.0);
    // Delivered: 8 weight bytes, the input to two tiles (16); stores write no buffer.
    QCOMPARE(t.delivered, 24.0);
    QCOMPARE(t.maxEgress, 8.0);
    QCOMPARE(t.storedMax, 8.0);
    QCOMPARE(t.nocPaced, 0.0);

    // Three invocations: the activation part three times, the weights once. The busiest
    // link of both parts is a port-in link: 3 x 8 + 4 = 28.
    const LeafTraffic s = scaleTraffic(mesh, t, 3);
    QCOMPARE(s.invocations, 3);
    QCOMPARE(s.actDram, 72.0);
    QCOMPARE(s.actDramOut, 48.0);
    QCOMPARE(s.weightDram, 8.0);
    QCOMPARE(s.delivered, 8.0 + 3 * 16.0);
    // Every link here is a port link, the DRAM's interface: no NoC hop.
    QCOMPARE(s.actHop, 0.0);
    QCOMPARE(s.weightHop, 0.0);
    QCOMPARE(s.maxLink, 28.0);
    QCOMPARE(s.actInterHop, 0.0);
}

void TestTransfers::leafTrafficFromInterleavedDram() {
    // The leaf of leafTrafficFromDram with memory interleaved over the two ports (tile 0's
    // west, tile 1's east): every DRAM transfer comes half from each port, over its own
    // route. Links: 0 = tile 0 east, 1 = tile 0 west (port), 4 = tile 1 east (port), 5 =
    // tile 1 west, 9 = port in to tile 0, 12 = port in to tile 1.
    const Network net = twoPointwise();
    Hardware hw = defaultHardware(2, 1, "row");
    hw.dramInterleaved = true;
    const Mesh mesh(hw);
    const TransferGeometry geo(net, hw.dataBits);
    const LeafMapping m = partition(2, 1, 1, 1);
    const LeafPlacement leaf{0, 1, 0, 2, &m};
    const LeafTraffic t = leafTrafficPeriod(geo, mesh, leaf, {nullptr}, true);
    const int e0 = mesh.outLink(0, East), w0 = mesh.outLink(0, West);
    const int e1 = mesh.outLink(1, East), w1 = mesh.outLink(1, West);
    const int in0 = mesh.portInLink(0, West), in1 = mesh.portInLink(1, East);
    // Weights, 4 bytes per tile: 2 from the port at the tile, 2 from the other port one
    // mesh hop away.
    QCOMPARE(t.weightDram, 8.0);
    const std::vector<std::pair<int, double>> weightLinks{
        {e0, 2.0}, {w1, 2.0}, {in0, 4.0}, {in1, 4.0}};
    QCOMPARE(t.weightLinks, weightLinks);
    // Each weight LOAD is half on each of its two routes: it moves at twice a link's rate.
    QCOMPARE(t.weightLoads.size(), size_t(2));
    QCOMPARE(t.weightLoads[0].slowness, 0.5);
    QCOMPARE(t.weightLoads[0].sides, 2);
    // Input: the 8-byte cell multicast to both tiles, 4 bytes from each port over its tree
    // (the port-in link and the hop to the other tile). Output: each tile's 8 bytes, 4 to
    // each port (tile 0: out west, or east then tile 1's east port link; tile 1 likewise).
    const std::vector<std::pair<int, double>> actLinks{{e0, 8.0}, {w0, 8.0},  {e1, 8.0},
                                                       {w1, 8.0}, {in0, 4.0}, {in1, 4.0}};
    QCOMPARE(t.actLinks, actLinks);
    QCOMPARE(t.actDram, 24.0);
    QCOMPARE(t.actSide[West], 12.0);
    QCOMPARE(t.actSide[East], 12.0);
    // A tile's STORE leaves over two links at once, half on each: 8 x 0.5.
    QCOMPARE(t.maxEgress, 4.0);
    QCOMPARE(t.storedMax, 4.0);
    // Hop-bytes over the mesh links 0 and 5 only (the rest are port links).
    const LeafTraffic s = scaleTraffic(mesh, t, 1);
    QCOMPARE(s.actHop, 16.0);
    QCOMPARE(s.weightHop, 4.0);
}

// A STORE's shares on memory interleaved over the ports are the same whether the mesh keeps
// them per tile (edge: 16 tiles x 8 ports) or derives them on each call (a 32 x 32 mesh with
// DRAM on four sides: 1,024 tiles x 128 ports): its routes to every port, each link with the
// share of the ports whose routes cross it, the shares adding up to the links crossed / 128.
void TestTransfers::interleavedStoreShares() {
    for (int side : {4, 32}) {
        Hardware hw = defaultHardware(side, side, "mesh");
        hw.dramInterleaved = true;
        if (side == 32)
            hw.dramSides = {MeshSide::West, MeshSide::East, MeshSide::North, MeshSide::South};
        const Mesh mesh(hw);
        for (int t : {0, mesh.tiles() / 2 + side / 3, mesh.tiles() - 1}) {
            std::vector<int> route;
            mesh.routeToDram(t, route);
            std::vector<std::pair<int, double>> expected;
            mesh.dramLinkShares(route, expected);
            double slowness = 0;
            const auto got = mesh.storeShares(t, slowness);
            const std::vector<std::pair<int, double>> kept(got.begin(), got.end());
            QCOMPARE(kept, expected);
            QCOMPARE(slowness, mesh.dramSlowness(route));
            double sum = 0;
            for (const auto& [l, share] : got)
                sum += share;
            QCOMPARE(sum, double(route.size()) * mesh.dramShare());
        }
    }
}

void TestTransfers::leafTrafficOverNoc() {
    // Layer b (1x1 conv, 4 -> 4 channels on 2x2) on tile 1, fed by a on tile 0 over the
    // NoC, storing nothing. Its input is a's whole output, 4 x 2 x 2 = 16 bytes, in a's
    // own coordinates: one piece from tile 0 to tile 1 over link 0 -> east.
    const Network net = twoPointwise();
    const Hardware hw = defaultHardware(2, 1, "row");
    const Mesh mesh(hw);
    const TransferGeometry geo(net, hw.dataBits);
    QVERIFY(geo.input(1, 0).sameAsProducer);
    const LeafMapping whole = partition(1, 1, 1, 1);
    const LeafPlacement producer{0, 1, 0, 1, &whole};
    const LeafPlacement leaf{1, 1, 1, 1, &whole};
    const LeafTraffic t = leafTrafficPeriod(geo, mesh, leaf, {&producer}, false);
    QCOMPARE(t.actDram, 0.0);
    const std::vector<std::pair<int, double>> actLinks{{mesh.outLink(0, East), 16.0}};
    QCOMPARE(t.actLinks, actLinks);
    // Streamed in the producer's coordinates: counted as such, not as re-partitioned.
    QCOMPARE(t.nocSameMaxLink, 16.0);
    QCOMPARE(t.nocInMaxLink, 0.0);
    QCOMPARE(t.nocInByInput, std::vector<double>{16.0});     // from outside b's group
    QCOMPARE(t.nocOutOfProducer, std::vector<double>{16.0}); // leaving a's group
    QCOMPARE(t.nocInsideGroup, std::vector<double>{0.0});
    QCOMPARE(t.sentByInput, std::vector<double>{16.0});
    QCOMPARE(t.receivedByInput, std::vector<double>{16.0});
    QCOMPARE(t.maxEgress, 16.0);
    // Alone on its link: 16 bytes, one piece of 16.
    QCOMPARE(t.nocPaced, 16.0);
    QCOMPARE(t.nocPacedPiece, 16.0);
    // b's 16 weight bytes and the 16 input bytes written into its buffer.
    QCOMPARE(t.weightDram, 16.0);
    QCOMPARE(t.delivered, 32.0);
    // Without pacing asked for, the pace is left waiting for all of the producer.
    QCOMPARE(t.pace.size(), size_t(1));
    QCOMPARE(t.pace[0].lead, 1.0f);
    QCOMPARE(t.pace[0].tail, 1.0f);
}

QTEST_APPLESS_MAIN(TestTransfers)
#include "tst_transfers.moc"
