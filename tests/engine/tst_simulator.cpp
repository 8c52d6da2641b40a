// The instruction-level simulator: hand-derived replays (DRAM and link bandwidth, stage
// overlap), validation of malformed programs through the CLI (clear one-line message,
// exit 1), and export-instructions -> simulate end to end.
#include "clirunner.h"
#include "codegen/instruction_program.h"
#include "hw/mesh.h"
#include "sim/simulator.h"
#include "util/fileio.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace tilescope;

namespace {

const QString kPrograms = QString(TILESCOPE_TESTDATA) + "/programs/";

using Run = test::CliRun;

Run cli(const QStringList& args) {
    return test::runCli(args);
}

Hardware testchip() {
    Hardware hw;
    presetHardware("testchip", hw);
    return hw;
}

Instruction make(std::uint32_t id, Op op, int tile, int src, int dst, std::uint64_t bytes,
                 std::uint32_t stages, std::uint64_t cycles = 0, std::vector<Dep> deps = {}) {
    Instruction i;
    i.id = id;
    i.op = op;
    i.tile = tile;
    i.src = src;
    i.dst = dst;
    i.bytes = bytes;
    i.stages = stages;
    i.cycles = cycles;
    i.deps = std::move(deps);
    return i;
}

Program twoTiles(std::vector<Instruction> t0, std::vector<Instruction> t1 = {}) {
    Program p;
    p.layers = {"l"};
    p.tiles = {{0, 0, 0, std::move(t0)}, {1, 1, 0, std::move(t1)}};
    return p;
}

// A program on the given tiles of hw's mesh: (tile id, its instructions) pairs.
Program onTiles(const Hardware& hw, std::vector<std::pair<int, std::vector<Instruction>>> tiles) {
    const Mesh mesh(hw);
    Program p;
    p.layers = {"l"};
    for (auto& [t, ins] : tiles)
        p.tiles.push_back({t, mesh.tileX(t), mesh.tileY(t), std::move(ins)});
    return p;
}

Cycles endOf(const SimResult& r, std::uint32_t id) {
    for (const auto& iv : r.timeline)
        if (iv.id == id) return iv.end;
    return -1;
}

Cycles startOf(const SimResult& r, std::uint32_t id) {
    for (const auto& iv : r.timeline)
        if (iv.id == id) return iv.start;
    return -1;
}

} // namespace

class TestSimulator : public QObject {
    Q_OBJECT
  private slots:
    void loadThenCompute();
    void sparseIdsReplayTheSame();
    void mappedFileAndStreamedWrite();
    void dramIsShared();
    void dramServesNeedOrder();
    void waitingLoadLeavesLinksFree();
    void storeNeededByItsQueue();
    void dramLeftoverGrows();
    void dramEmptyTransferTakesNothing();
    void dramServesNeedBetweenStages();
    void sendOverOneLink();
    void interleavedLoadOverEveryPort();
    void sendReadByCompute();
    void loadsInFlightHideLatency();
    void cloudPortLinksInParallel();
    void linksAndDramAreIndependent();
    void linkIsShared();
    void linkSharedPerTransfer();
    void dramPortLimit();
    void storeIsPosted();
    void validationApi();
    void malformedPrograms_data();
    void malformedPrograms();
    void validProgramFile();
    void exportThenSimulate();
};

// Test chip: DRAM 4 B/cycle (0.5 GB/s per TOPS, 8 TOPS at 1 GHz), links 24 B/cycle.
// LOAD 1600 B from DRAM: 1600 / 4 = 400 cycles. COMPUTE 100 cycles after it: 500 coarse.
// With 4 stages each: load stages end at 100, 200, 300, 400; compute stage j (25 cycles)
// starts when load stage j is done, so the last ends at 400 + 25 = 425.
void TestSimulator::loadThenCompute() {
    const Hardware hw = testchip();
    Program p = twoTiles({make(1, Op::Load, 0, kDram, 0, 1600, 4),
                          make(2, Op::Compute, 0, 0, 0, 0, 4, 100, {{1, 1}})});
    QVERIFY(!validateProgram(p, hw, "t"));
    SimOptions fine;
    const SimResult f = simulate(p, hw, fine);
    QVERIFY(f.deadlockFree);
    QCOMPARE(f.delay, 425.0);
    QCOMPARE(f.dramBytes, 1600.0);
    SimOptions coarse;
    coarse.fineGrained = false;
    QCOMPARE(simulate(p, hw, coarse).delay, 500.0);
    // stage = N waits for the whole load even in fine mode.
    p.tiles[0].instructions[1].deps[0].stage = 4;
    QCOMPARE(simulate(p, hw, fine).delay, 500.0);
    QCOMPARE(f.busy[0][1], 100.0); // compute engine busy time
}

// Generated programs number instructions 1..N and are indexed by id directly; ids far
// apart (a hand-written program) take the hash-map path and replay exactly the same, and a
// repeated id is refused on both paths.
void TestSimulator::sparseIdsReplayTheSame() {
    const Hardware hw = testchip();
    const Program dense = twoTiles({make(1, Op::Load, 0, kDram, 0, 1600, 4),
                                    make(2, Op::Compute, 0, 0, 0, 0, 4, 100, {{1, 1}})});
    const Program sparse = twoTiles({make(7, Op::Load, 0, kDram, 0, 1600, 4),
                                     make(4000000000u, Op::Compute, 0, 0, 0, 0, 4, 100, {{7, 1}})});
    QVERIFY(!validateProgram(dense, hw, "d"));
    QVERIFY(!validateProgram(sparse, hw, "s"));
    const SimResult a = simulate(dense, hw), b = simulate(sparse, hw);
    QCOMPARE(a.delay, 425.0);
    QCOMPARE(b.delay, a.delay);
    QCOMPARE(b.timeline.size(), a.timeline.size());
    for (const Program& twice :
         {twoTiles({make(3, Op::Load, 0, kDram, 0, 64, 1), make(3, Op::Load, 0, kDram, 0, 64, 1)}),
          twoTiles({make(3000000000u, Op::Load, 0, kDram, 0, 64, 1),
                    make(3000000000u, Op::Load, 0, kDram, 0, 64, 1)})}) {
        auto e = validateProgram(twice, hw, "t");
        QVERIFY(e);
        QVERIFY2(e->message.find("duplicate") != std::string::npos, e->message.c_str());
    }
}

// simulate reads program.bin mapped (util/fileio.h MappedFile) and writes its --json
// streamed (writeFileAtomic with a StreamWriter): both see exactly the file's bytes.
void TestSimulator::mappedFileAndStreamedWrite() {
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("p.bin")).toStdString();
    const std::string bytes = encodeProgram(twoTiles({make(1, Op::Load, 0, kDram, 0, 64, 1)}));
    QVERIFY(!writeFileAtomic(path, StreamWriter([&](std::ostream& out) { out << bytes; })));
    auto m = MappedFile::open(path);
    QVERIFY(m.ok());
    QCOMPARE(std::string(m->view()), bytes);
    auto p = decodeProgram(m->view(), path);
    QVERIFY(p.ok());
    QCOMPARE(p->instructionCount(), size_t(1));
    const std::string empty = dir.filePath(QStringLiteral("empty")).toStdString();
    QVERIFY(!writeFileAtomic(empty, std::string()));
    auto e = MappedFile::open(empty);
    QVERIFY(e.ok());
    QVERIFY(e->view().empty());
    auto missing = MappedFile::open(dir.filePath(QStringLiteral("none")).toStdString());
    QVERIFY(!missing.ok());
    QVERIFY(missing.error().message.find("none") != std::string::npos);
    QVERIFY(!MappedFile::open(dir.path().toStdString()).ok());
}

// Two tiles each load 800 B: the shared 4 B/cycle DRAM serves them one after the other,
// 1600 / 4 = 400 cycles in all (not 200 as two private interfaces would give).
void TestSimulator::dramIsShared() {
    const Hardware hw = testchip();
    Program p = twoTiles({make(1, Op::Load, 0, kDram, 0, 800, 1)},
                         {make(2, Op::Load, 1, kDram, 1, 800, 1)});
    const SimResult r = simulate(p, hw);
    QVERIFY(r.deadlockFree);
    QCOMPARE(r.delay, 400.0);
}

// The DRAM serves the waiting stage whose first dependent instruction comes first in
// program order (docs/isa.md, "Replay"). Test chip, DRAM 4 B/cycle. Tile 0 loads 800 B
// for COMPUTE 5 (50 cycles); tile 1 loads 40 B for COMPUTE 3 (100 cycles); both LOADs
// issue at 0. LOAD 2 is needed first (by 3): DRAM [0, 10), COMPUTE 3 [10, 110); LOAD 1
// [10, 210), COMPUTE 5 [210, 260). In arrival order (tile 0's engine first) LOAD 2 would
// wait for LOAD 1: [200, 210), and COMPUTE 3 end at 310.
// A stage in service is not interrupted: with LOAD 1 in 4 stages of 200 B and LOAD 2
// issued at 30 (after a 30-cycle COMPUTE 4), stage 0 of LOAD 1 runs [0, 50), LOAD 2
// [50, 60), then LOAD 1's stages 1-3 [60, 210).
void TestSimulator::dramServesNeedOrder() {
    const Hardware hw = testchip();
    Program p = twoTiles(
        {make(1, Op::Load, 0, kDram, 0, 800, 1), make(5, Op::Compute, 0, 0, 0, 0, 1, 50, {{1, 1}})},
        {make(2, Op::Load, 1, kDram, 1, 40, 1),
         make(3, Op::Compute, 1, 1, 1, 0, 1, 100, {{2, 1}})});
    QVERIFY(!validateProgram(p, hw, "t"));
    SimResult r = simulate(p, hw);
    QVERIFY(r.deadlockFree);
    QCOMPARE(endOf(r, 2), 10.0);
    QCOMPARE(endOf(r, 3), 110.0);
    QCOMPARE(endOf(r, 1), 210.0);
    QCOMPARE(r.delay, 260.0);
    QCOMPARE(r.dramBusy, 210.0);

    p = twoTiles(
        {make(1, Op::Load, 0, kDram, 0, 800, 4), make(5, Op::Compute, 0, 0, 0, 0, 1, 50, {{1, 4}})},
        {make(4, Op::Compute, 1, 1, 1, 0, 1, 30),
         make(2, Op::Load, 1, kDram, 1, 40, 1, 0, {{4, 1}}),
         make(3, Op::Compute, 1, 1, 1, 0, 1, 100, {{2, 1}})});
    QVERIFY(!validateProgram(p, hw, "t"));
    r = simulate(p, hw);
    QVERIFY(r.deadlockFree);
    QCOMPARE(startOf(r, 2), 30.0);
    QCOMPARE(endOf(r, 2), 60.0);
    QCOMPARE(endOf(r, 1), 210.0);
    QCOMPARE(r.delay, 260.0);
}

// A LOAD waiting for the DRAM does not move bytes yet, so it does not take a share of its
// links (docs/isa.md, "Replay"). Test chip with DRAM at the link bandwidth (24 B/cycle):
// tile 0 issues two 2,400-byte LOADs at 0 over the same port link; the second is needed
// first (COMPUTE 3), so the DRAM serves it over [0, 100) at the full rate its route takes,
// then the first over [100, 200). Booking both on the link from 0 would halve the needed
// LOAD's share: it would end at 200 with the other.
void TestSimulator::waitingLoadLeavesLinksFree() {
    Hardware hw = testchip();
    hw.dramBytesPerCycle = 24;
    const Program p =
        twoTiles({make(1, Op::Load, 0, kDram, 0, 2400, 1), make(2, Op::Load, 0, kDram, 0, 2400, 1),
                  make(3, Op::Compute, 0, 0, 0, 0, 1, 10, {{2, 1}}),
                  make(4, Op::Compute, 0, 0, 0, 0, 1, 10, {{1, 1}})});
    QVERIFY(!validateProgram(p, hw, "t"));
    const SimResult r = simulate(p, hw);
    QVERIFY(r.deadlockFree);
    QCOMPARE(endOf(r, 2), 100.0);
    QCOMPARE(endOf(r, 3), 110.0);
    QCOMPARE(endOf(r, 1), 200.0);
    QCOMPARE(r.delay, 210.0);
    QCOMPARE(r.dramBusy, 200.0);
}

// The DRAM bandwidth a transfer finds left when it is served grows as the transfers
// served before it end (docs/isa.md, "Replay"). Test chip with DRAM at 25 B/cycle and
// links at 24: LOAD 1 (2400 B to tile 0, west port) takes 24 B/cycle over [0, 100); LOAD 2
// (2400 B to tile 1, east port) gets the 1 B/cycle left until 100 and then its route's 24:
// 100 + 2300 / 24 = 195.83. A transfer keeping the rate it started with (until session
// 14) moved LOAD 2 at 1 B/cycle to the end: 2400 (on 5x5 meshes, whose DRAM is 25
// B/cycle, a 401 KB input LOAD took 400,000 cycles that way).
void TestSimulator::dramLeftoverGrows() {
    Hardware hw = testchip();
    hw.dramBytesPerCycle = 25;
    hw.nocBytesPerCycle = 24;
    const Program p = twoTiles({make(1, Op::Load, 0, kDram, 0, 2400, 1)},
                               {make(2, Op::Load, 1, kDram, 1, 2400, 1)});
    QVERIFY(!validateProgram(p, hw, "t"));
    const SimResult r = simulate(p, hw);
    QVERIFY(r.deadlockFree);
    QCOMPARE(endOf(r, 1), 100.0);
    QCOMPARE(endOf(r, 2), 100.0 + 2300.0 / 24.0);
    QCOMPARE(r.delay, 100.0 + 2300.0 / 24.0);
    // The DRAM's bandwidth in use: all 25 B/cycle (24 + the 1 left), then 24, then none.
    const std::vector<std::pair<Cycles, double>> inUse{
        {0.0, 25.0}, {100.0, 24.0}, {100.0 + 2300.0 / 24.0, 0.0}};
    QCOMPARE(r.dramInUse, inUse);
}

// A transfer with no bytes takes no DRAM time and leaves the bandwidth to the others
// (test chip, DRAM 4 B/cycle): an empty LOAD on tile 0 and a 400-byte LOAD on tile 1, both
// issued at 0: the empty one ends at 0, the other at 100. An empty stage once booked the
// DRAM's whole bandwidth from its start on, and the second LOAD never ran.
void TestSimulator::dramEmptyTransferTakesNothing() {
    const Hardware hw = testchip();
    const Program p =
        twoTiles({make(1, Op::Load, 0, kDram, 0, 0, 1)}, {make(2, Op::Load, 1, kDram, 1, 400, 1)});
    QVERIFY(!validateProgram(p, hw, "t"));
    const SimResult r = simulate(p, hw);
    QVERIFY(r.deadlockFree);
    QCOMPARE(endOf(r, 1), 0.0);
    QCOMPARE(endOf(r, 2), 100.0);
}

// The DRAM serves one stage of a transfer at a time, so a stage the program needs sooner
// is served between the stages of ones it needs later (docs/isa.md, "Replay"). Test
// chip, DRAM 50 B/cycle, links 24: tiles 0 and 1 each LOAD 2400 B in 8 stages (for
// COMPUTEs late in the program), each stage 12.5 cycles at its route's 24 B/cycle; tile
// 3 computes 10 cycles and then STOREs 240 B, read back by its LOAD 3. At 10 the two
// LOADs' first stages leave 2 B/cycle: the STORE moves 5 B by 12.5, when those stages are
// done and it, needed sooner, gets its route's 24 B/cycle ahead of their next stages:
// it ends at 12.5 + 235 / 24 = 22.29. Booking every stage of a transfer as soon as its
// engine issued it would keep both LOADs on the DRAM until 100, and the STORE would move
// at the 2 B/cycle it started with: 10 + 120 = 130.
void TestSimulator::dramServesNeedBetweenStages() {
    Hardware hw = testchip();
    hw.dramBytesPerCycle = 50;
    hw.nocBytesPerCycle = 24;
    const Program p = onTiles(hw, {{0,
                                    {make(5, Op::Load, 0, kDram, 0, 2400, 8),
                                     make(6, Op::Compute, 0, 0, 0, 0, 1, 1, {{5, 1}})}},
                                   {1,
                                    {make(7, Op::Load, 1, kDram, 1, 2400, 8),
                                     make(8, Op::Compute, 1, 1, 1, 0, 1, 1, {{7, 1}})}},
                                   {3,
                                    {make(1, Op::Compute, 3, 3, 3, 0, 1, 10),
                                     make(2, Op::Store, 3, 3, kDram, 240, 1, 0, {{1, 1}}),
                                     make(3, Op::Load, 3, kDram, 3, 240, 1, 0, {{2, 1}})}}});
    QVERIFY(!validateProgram(p, hw, "t"));
    const SimResult r = simulate(p, hw);
    QVERIFY(r.deadlockFree);
    QCOMPARE(endOf(r, 2), 12.5 + 235.0 / 24.0);
    QCOMPARE(r.dramBytes, 2 * 2400.0 + 2 * 240.0);
}

// A STORE holds its tile's STORE/SEND engine until the DRAM takes it, so the DRAM serves
// it as soon as the SENDs queued behind it are needed (docs/isa.md, "Replay"). Test chip,
// DRAM 4 B/cycle: tile 0 stores 400 B (read back later by LOAD 6) and then SENDs 240 B
// to tile 1, whose COMPUTE 3 needs them; tile 1's LOAD 4 (400 B, for COMPUTE 5) competes
// for the DRAM. The STORE is needed at 3 (its SEND's consumer), before LOAD 4 (5): STORE
// [0, 100), SEND [100, 110), LOAD 4 [100, 200). Were it needed only at 6 (its own reader),
// the STORE would wait for LOAD 4 and the SEND would end at 210.
void TestSimulator::storeNeededByItsQueue() {
    const Hardware hw = testchip();
    const Program p = twoTiles(
        {make(1, Op::Store, 0, 0, kDram, 400, 1), make(2, Op::Send, 0, 0, 1, 240, 1)},
        {make(3, Op::Compute, 1, 1, 1, 0, 1, 10, {{2, 1}}), make(4, Op::Load, 1, kDram, 1, 400, 1),
         make(5, Op::Compute, 1, 1, 1, 0, 1, 10, {{4, 1}}),
         make(6, Op::Load, 1, kDram, 1, 400, 1, 0, {{1, 1}})});
    QVERIFY(!validateProgram(p, hw, "t"));
    const SimResult r = simulate(p, hw);
    QVERIFY(r.deadlockFree);
    QCOMPARE(endOf(r, 1), 100.0);
    QCOMPARE(endOf(r, 2), 110.0);
    QCOMPARE(endOf(r, 3), 120.0);
    QCOMPARE(endOf(r, 4), 200.0);
    QCOMPARE(endOf(r, 6), 300.0);
}

// Memory interleaved over the ports (edge: west and east, 8 ports): a LOAD of 800 B from
// DRAM to tile (1, 2) comes 100 B from each port, over the port-in link and the X-then-Y
// route from that port's edge tile (x = 0 or 3, row y'): 1 + |2 - y'| hops from the west,
// 2 + |2 - y'| from the east; |2 - y'| over the four rows is 4 on each side, so 4 x 1 + 4
// from the west and 4 x 2 + 4 from the east, 20 mesh hops: 20 x 100 = 2,000 hop-bytes (the
// port links are the DRAM's interface). The route
// enters the tile from the north for rows 0 and 1 of both sides (400 B), from the south for
// row 3 (200 B), from the west and the east for row 2 (100 B each): the busiest link
// carries half the bytes, so the LOAD moves at the DRAM's 16 B/cycle (links 24 / 0.5 = 48)
// in 50 cycles, and each side's controller moves half of it.
void TestSimulator::interleavedLoadOverEveryPort() {
    Hardware hw;
    QVERIFY(presetHardware("edge", hw));
    QVERIFY(hw.dramInterleaved);
    const Mesh mesh(hw);
    const int t = mesh.tileId(1, 2);
    std::vector<int> route;
    mesh.routeFromDram(t, route);
    QCOMPARE(route.size(), size_t(8 + 20)); // 8 port-in links, 20 mesh hops
    QCOMPARE(mesh.dramShare(), 1.0 / 8);
    QCOMPARE(mesh.dramSlowness(route), 0.5);
    QCOMPARE(mesh.dramSidesOf({t}), (std::vector<Dir>{East, West}));

    const Program p = onTiles(hw, {{t, {make(1, Op::Load, t, kDram, t, 800, 1)}}});
    QVERIFY(!validateProgram(p, hw, "t"));
    const SimResult r = simulate(p, hw);
    QCOMPARE(r.delay, 50.0);
    QCOMPARE(r.dramBytes, 800.0);
    QCOMPARE(r.nocHopBytes, 2000.0);
    QCOMPARE(r.linkBytes[size_t(mesh.outLink(mesh.tileId(1, 1), South))], 400.0);
    QCOMPARE(r.linkBytes[size_t(mesh.outLink(mesh.tileId(1, 3), North))], 200.0);
    QCOMPARE(r.linkBytes[size_t(mesh.outLink(mesh.tileId(0, 2), East))], 100.0);
    QCOMPARE(r.linkBytes[size_t(mesh.outLink(mesh.tileId(2, 2), West))], 100.0);
    QCOMPARE(r.linkBytes[size_t(mesh.portInLink(mesh.tileId(3, 0), East))], 100.0);
    QCOMPARE(r.dramSideBytes[West], 400.0);
    QCOMPARE(r.dramSideBytes[East], 400.0);
}

// A SEND of 2400 B from tile 0 to its east neighbour crosses one link at 24 B/cycle: 100
// cycles; the receiving LOAD only acknowledges, and the STORE of 400 B to DRAM takes 100.
void TestSimulator::sendOverOneLink() {
    const Hardware hw = testchip();
    Program p = twoTiles({make(1, Op::Send, 0, 0, 1, 2400, 1)},
                         {make(2, Op::Load, 1, 0, 1, 2400, 1, 0, {{1, 1}}),
                          make(3, Op::Store, 1, 1, kDram, 400, 1, 0, {{2, 1}})});
    QVERIFY(!validateProgram(p, hw, "t"));
    const SimResult r = simulate(p, hw);
    QCOMPARE(r.delay, 200.0);
    QCOMPARE(r.nocHopBytes, 2400.0); // one mesh link; tile 1's port link is the DRAM's
    // Per link: tile 1 (x = 1) is nearest the east side, so its STORE leaves by its own
    // east port link.
    const Mesh mesh(hw);
    QCOMPARE(r.linkBytes.size(), size_t(mesh.linkCount()));
    QCOMPARE(r.linkBytes[size_t(mesh.outLink(0, East))], 2400.0);
    QCOMPARE(r.linkBytes[size_t(mesh.outLink(1, East))], 400.0);
    double sum = 0;
    for (double b : r.linkBytes)
        sum += b;
    QCOMPARE(sum, r.nocHopBytes + 400.0);
    QCOMPARE(r.dramSideBytes[East], 400.0);
    QCOMPARE(r.dramSideBytes[West], 0.0);
}

// The generator's form: a SEND writes into the destination's buffer and the consumer's
// COMPUTE depends on it directly, stage by stage. 2400 B over one link in 2 stages (50
// cycles each); the 2-stage compute of 300 cycles starts its first half after the first
// SEND stage: 50 + 150, then its second half after the first: 50 + 150 + 150 = 350.
void TestSimulator::sendReadByCompute() {
    const Hardware hw = testchip();
    Instruction send = make(1, Op::Send, 0, 0, 1, 2400, 2);
    send.buffers = {{1, 0, 2400, true}};
    Program p = twoTiles({send}, {make(2, Op::Compute, 1, 1, 1, 0, 2, 300, {{1, 1}})});
    QVERIFY(!validateProgram(p, hw, "t"));
    const SimResult r = simulate(p, hw);
    QVERIFY(r.deadlockFree);
    QCOMPARE(r.delay, 350.0);
    // Without the consumer's dependency the SEND has no consumer.
    p.tiles[1].instructions[0].deps.clear();
    auto e = validateProgram(p, hw, "u.json");
    QVERIFY(e);
    QVERIFY2(e->message.find("SEND without a consumer") != std::string::npos, e->message.c_str());
    QVERIFY(e->message.find("instruction 1") != std::string::npos);
}

// Test chip (DRAM 4 B/cycle, links 24 B/cycle), DRAM latency 200: four 100-byte LOADs
// on tile 0, one stage each, no dependencies. Each books the DRAM for 100 / 4 = 25 cycles
// (its port link for 100 / 24 = 4.2, never the bottleneck) and its data arrives 200 later.
// One in flight: each waits for the previous one's data, 4 x (25 + 200) = 900.
// Four in flight: all issue at 0, the DRAM serves them at 25, 50, 75, 100, data at
// 225 .. 300. Two in flight: the first two end at 225 and 250; the third issues at 225
// (the first has completed), DRAM 225-250, data at 450; the fourth issues at 250, DRAM
// 250-275, data at 475.
void TestSimulator::loadsInFlightHideLatency() {
    Hardware hw = testchip();
    hw.dramLatencyCycles = 200;
    const Program p =
        twoTiles({make(1, Op::Load, 0, kDram, 0, 100, 1), make(2, Op::Load, 0, kDram, 0, 100, 1),
                  make(3, Op::Load, 0, kDram, 0, 100, 1), make(4, Op::Load, 0, kDram, 0, 100, 1)});
    QVERIFY(!validateProgram(p, hw, "t"));
    hw.maxOutstandingLoads = 1;
    SimResult r = simulate(p, hw);
    QVERIFY(r.deadlockFree);
    QCOMPARE(r.delay, 900.0);
    QCOMPARE(startOf(r, 4), 675.0);
    hw.maxOutstandingLoads = 4;
    r = simulate(p, hw);
    QCOMPARE(r.delay, 300.0);
    QCOMPARE(endOf(r, 1), 225.0);
    QCOMPARE(r.busy[0][0], 300.0); // overlapping loads count once: [0, 300) has one in flight
    QCOMPARE(r.dramBusy, 100.0);
    hw.maxOutstandingLoads = 2;
    r = simulate(p, hw);
    QCOMPARE(r.delay, 475.0);
    QCOMPARE(startOf(r, 3), 225.0);
    // The stages of one LOAD issue back to back and pay the latency once: one 400-byte
    // LOAD in 4 stages with one in flight moves its stages at 25, 50, 75, 100 -> 300.
    hw.maxOutstandingLoads = 1;
    r = simulate(twoTiles({make(1, Op::Load, 0, kDram, 0, 400, 4)}), hw);
    QCOMPARE(r.delay, 300.0);
}

// Cloud (12x12, DRAM 144 B/cycle, links 24 B/cycle, ports west and east): three
// 786,432-byte LOADs, one stage each, to tiles (2,1) and (3,4) (nearest side west) and
// (9,7) (east), on different rows, so their port-in links and row routes are disjoint. The
// DRAM serves them one after the other in 786,432 / 144 = 5,461.3 cycles each (done at
// 16,384), while each port link needs 786,432 / 24 = 32,768 cycles: all three end at
// 32,768. (Holding DRAM and links together, as the replay used to, ended them at 32,768,
// 38,229 and 43,691.)
void TestSimulator::cloudPortLinksInParallel() {
    Hardware hw;
    QVERIFY(presetHardware("cloud", hw));
    const Mesh mesh(hw);
    const int a = mesh.tileId(2, 1), b = mesh.tileId(3, 4), c = mesh.tileId(9, 7);
    QCOMPARE(mesh.nearestPort(a).first, West);
    QCOMPARE(mesh.nearestPort(b).first, West);
    QCOMPARE(mesh.nearestPort(c).first, East);
    const std::uint64_t bytes = 786432;
    const Program p = onTiles(hw, {{a, {make(1, Op::Load, a, kDram, a, bytes, 1)}},
                                   {b, {make(2, Op::Load, b, kDram, b, bytes, 1)}},
                                   {c, {make(3, Op::Load, c, kDram, c, bytes, 1)}}});
    QVERIFY(!validateProgram(p, hw, "t"));
    const SimResult r = simulate(p, hw);
    QVERIFY(r.deadlockFree);
    for (std::uint32_t id : {1u, 2u, 3u})
        QCOMPARE(endOf(r, id), 32768.0);
    QCOMPARE(r.delay, 32768.0);
    QVERIFY(std::abs(r.dramBusy - 16384.0) < 1e-6);
    QCOMPARE(r.linkBytes[size_t(mesh.portInLink(mesh.tileId(0, 1), West))], double(bytes));
    QCOMPARE(r.linkBytes[size_t(mesh.portInLink(mesh.tileId(11, 7), East))], double(bytes));
    QCOMPARE(r.dramSideBytes[West], 2.0 * bytes);
    QCOMPARE(r.dramSideBytes[East], double(bytes));
}

// Test chip with DRAM on the west side only, so tile 1's LOAD enters at tile 0 and crosses
// tile 0's east link. X: SEND tile 0 -> 1, 2400 B, uses that link for 100 cycles. Y: LOAD
// 400 B to tile 1: DRAM [0, 100) (400 / 4), port-in link of tile 0 16.7 cycles, and the
// link X uses, shared with X: 16.7 alone + 16.7 while X runs = 33.3 -> Y ends with the DRAM
// at 100. Z: LOAD 400 B to tile 2 (0,1) shares the DRAM with Y but no link: DRAM [100, 200),
// ends at 200. (Holding all resources together, Y started at 100 and kept the DRAM to 200,
// Z ended at 300.)
// A link is shared by the transfers crossing it (docs/isa.md). Test chip, DRAM on the west
// side only and fast (1e6 B/cycle), so LOADs to tile 1 enter at tile 0 and cross tile 0's
// east link (24 B/cycle) like tile 0's SEND to tile 1. All ready at 0:
// X: SEND 2400 B, 100 cycles alone. Y: LOAD 240 B, 10 alone; it shares the link with X for
// its 10 cycles and ends at 20, not behind X at 110. Z: LOAD 2400 B, X and Y running and
// 110 cycles of backlog ahead: 100 + min(110, 2 x 100) = 210, after both (the link moved
// 5,040 B in 210 cycles: never more than its bandwidth). X keeps its 100.
void TestSimulator::linkIsShared() {
    Hardware hw = testchip();
    hw.dramSides = {MeshSide::West};
    hw.dramBytesPerCycle = 1e6;
    Instruction x = make(1, Op::Send, 0, 0, 1, 2400, 1);
    x.buffers = {{1, 0, 2400, true}};
    const Program p = onTiles(
        hw, {{0, {x}},
             {1,
              {make(2, Op::Load, 1, kDram, 1, 240, 1), make(3, Op::Load, 1, kDram, 1, 2400, 1),
               make(4, Op::Compute, 1, 1, 1, 0, 1, 0, {{1, 1}})}}});
    QVERIFY(!validateProgram(p, hw, "t"));
    const SimResult r = simulate(p, hw);
    QVERIFY(r.deadlockFree);
    QCOMPARE(endOf(r, 1), 100.0);
    QCOMPARE(endOf(r, 2), 20.0);
    QCOMPARE(endOf(r, 3), 210.0);
}

// A link is shared per transfer, not per stage: a 2400-byte LOAD in 8 stages (100 cycles
// of tile 0's east link; its route's 24 B/cycle lets the DRAM serve a stage every 12.5
// cycles) and a 240-byte SEND over the same link from 1 (after a 1-cycle COMPUTE). At 1
// the LOAD has 11.5 cycles of work left there; the SEND (10 cycles) gets half the link
// until it is done: 1 + 10 + min(11.5, 10) = 21. Counting the LOAD's queued stages as
// transfers of their own made it 1 + 10 + min(99, 8 x 10) = 91. The link moves both, 110
// cycles of work: the LOAD ends at 110 (booking all eight stages on the DRAM at 0,
// a LOAD booked before the SEND came would not be slowed by it: 100).
void TestSimulator::linkSharedPerTransfer() {
    Hardware hw = testchip();
    hw.dramSides = {MeshSide::West};
    hw.dramBytesPerCycle = 1e6;
    Instruction x = make(2, Op::Send, 0, 0, 1, 240, 1, 0, {{1, 1}});
    x.buffers = {{1, 0, 240, true}};
    const Program p = onTiles(hw, {{0, {make(1, Op::Compute, 0, 0, 0, 0, 1, 1), x}},
                                   {1,
                                    {make(3, Op::Load, 1, kDram, 1, 2400, 8),
                                     make(4, Op::Compute, 1, 1, 1, 0, 1, 0, {{2, 1}})}}});
    QVERIFY(!validateProgram(p, hw, "t"));
    const SimResult r = simulate(p, hw);
    QVERIFY(r.deadlockFree);
    QCOMPARE(endOf(r, 2), 21.0);
    QCOMPARE(endOf(r, 3), 110.0);
}

void TestSimulator::linksAndDramAreIndependent() {
    Hardware hw = testchip();
    hw.dramSides = {MeshSide::West};
    Instruction x = make(1, Op::Send, 0, 0, 1, 2400, 1);
    x.buffers = {{1, 0, 2400, true}};
    const Program p = onTiles(hw, {{0, {x}},
                                   {1,
                                    {make(2, Op::Load, 1, kDram, 1, 400, 1),
                                     make(4, Op::Compute, 1, 1, 1, 0, 1, 0, {{1, 1}})}},
                                   {2, {make(3, Op::Load, 2, kDram, 2, 400, 1)}}});
    QVERIFY(!validateProgram(p, hw, "t"));
    const SimResult r = simulate(p, hw);
    QVERIFY(r.deadlockFree);
    QCOMPARE(endOf(r, 1), 100.0);
    QCOMPARE(endOf(r, 2), 100.0);
    QCOMPARE(endOf(r, 3), 200.0);
    QCOMPARE(r.delay, 200.0);
    const Mesh mesh(hw);
    QCOMPARE(r.linkBytes[size_t(mesh.outLink(0, East))], 2400.0 + 400.0);
    QCOMPARE(r.linkBytes[size_t(mesh.portInLink(0, West))], 400.0);
    QCOMPARE(r.linkBytes[size_t(mesh.portInLink(2, West))], 400.0);
}

// Test chip with DRAM 8 B/cycle in total and 4 B/cycle per side. Two 400-byte STOREs from
// tiles 0 and 2 (both x = 0, west): the total DRAM takes 50 cycles each ([0, 50), [50,
// 100)) but the west controller 100 each: they end at 100 and 200. From tiles 0 (west)
// and 1 (x = 1, east) each side carries one: both end at 100. Without the per-side limit
// the same-side pair ends at 50 and 100.
// A LOAD from DRAM is charged to the distinct nearest sides of its destinations, its
// bytes split evenly: 400 B multicast to tiles 0 and 1 puts 200 B on each side (50
// cycles, as the total's 400 / 8) -> 50; to tiles 0 and 2, all 400 B on west -> 100.
void TestSimulator::dramPortLimit() {
    Hardware hw = testchip();
    hw.dramBytesPerCycle = 8;
    hw.dramPortBytesPerCycle = 4;
    const Mesh mesh(hw);
    QCOMPARE(mesh.dramSidesOf({0, 2}), std::vector<Dir>{West});
    QCOMPARE(mesh.dramSidesOf({1, 0, 3}), (std::vector<Dir>{East, West}));
    auto stores = [&](int a, int b) {
        return onTiles(hw, {{a, {make(1, Op::Store, a, a, kDram, 400, 1)}},
                            {b, {make(2, Op::Store, b, b, kDram, 400, 1)}}});
    };
    SimResult r = simulate(stores(0, 2), hw);
    QCOMPARE(endOf(r, 1), 100.0);
    QCOMPARE(endOf(r, 2), 200.0);
    QCOMPARE(r.dramSideBytes[West], 800.0);
    r = simulate(stores(0, 1), hw);
    QCOMPARE(endOf(r, 1), 100.0);
    QCOMPARE(endOf(r, 2), 100.0);
    QCOMPARE(r.dramSideBytes[West], 400.0);
    QCOMPARE(r.dramSideBytes[East], 400.0);
    Hardware noLimit = hw;
    noLimit.dramPortBytesPerCycle = 0;
    r = simulate(stores(0, 2), noLimit);
    QCOMPARE(endOf(r, 1), 50.0);
    QCOMPARE(endOf(r, 2), 100.0);

    Instruction both = make(1, Op::Load, 0, kDram, 0, 400, 1);
    both.mcast = {1};
    r = simulate(onTiles(hw, {{0, {both}}, {1, {}}}), hw);
    QCOMPARE(r.delay, 50.0);
    QCOMPARE(r.dramSideBytes[West], 200.0);
    QCOMPARE(r.dramSideBytes[East], 200.0);
    both.mcast = {2};
    r = simulate(onTiles(hw, {{0, {both}}, {2, {}}}), hw);
    QCOMPARE(r.delay, 100.0);
}

// A STORE is posted: with a DRAM latency of 200 on the test chip, a 400-byte STORE from
// tile 0 ends when its data has left (DRAM 400 / 4 = 100 cycles), and a LOAD that
// depends on it (it reuses the region) starts at 100, moves 400 B by 200 and has its data
// at 200 + 200 = 400.
void TestSimulator::storeIsPosted() {
    Hardware hw = testchip();
    hw.dramLatencyCycles = 200;
    const Program p = twoTiles({make(1, Op::Store, 0, 0, kDram, 400, 1),
                                make(2, Op::Load, 0, kDram, 0, 400, 1, 0, {{1, 1}})});
    QVERIFY(!validateProgram(p, hw, "t"));
    const SimResult r = simulate(p, hw);
    QVERIFY(r.deadlockFree);
    QCOMPARE(endOf(r, 1), 100.0);
    QCOMPARE(startOf(r, 2), 100.0);
    QCOMPARE(r.delay, 400.0);
}

void TestSimulator::validationApi() {
    const Hardware hw = testchip();
    // A dependency on a later instruction of the same in-order queue is a deadlock.
    Program p = twoTiles({make(1, Op::Load, 0, kDram, 0, 64, 1, 0, {{2, 1}}),
                          make(2, Op::Load, 0, kDram, 0, 64, 1)});
    auto e = validateProgram(p, hw, "q.json");
    QVERIFY(e);
    QVERIFY2(e->message.find("cycle") != std::string::npos, e->message.c_str());
    // A stage beyond the producer's count.
    p = twoTiles(
        {make(1, Op::Load, 0, kDram, 0, 64, 2), make(2, Op::Compute, 0, 0, 0, 0, 1, 5, {{1, 3}})});
    e = validateProgram(p, hw, "s.json");
    QVERIFY(e);
    QVERIFY(e->message.find("instruction 2") != std::string::npos);
    // A LOAD from a tile with no SEND behind it.
    p = twoTiles({}, {make(1, Op::Load, 1, 0, 1, 64, 1)});
    e = validateProgram(p, hw, "r.json");
    QVERIFY(e);
    QVERIFY(e->message.find("no SEND") != std::string::npos);
}

void TestSimulator::malformedPrograms_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("id");
    QTest::addColumn<QString>("reason");
    QTest::newRow("missing dependency") << "missing_dependency.json"
                                        << "instruction 2"
                                        << "missing dependency target 99";
    QTest::newRow("cycle") << "dependency_cycle.json"
                           << "instruction "
                           << "dependency cycle";
    QTest::newRow("over capacity") << "over_capacity.json"
                                   << "instruction 1"
                                   << "buffer over capacity";
    QTest::newRow("send without consumer") << "send_without_consumer.json"
                                           << "instruction 3"
                                           << "SEND without a consumer";
    QTest::newRow("garbage binary") << "garbage.bin"
                                    << ""
                                    << "checksum mismatch";
    QTest::newRow("version 1 binary") << "version1.bin"
                                      << "byte 8"
                                      << "version 1 (the varint encoding) is no longer read";
}

void TestSimulator::malformedPrograms() {
    QFETCH(QString, file);
    QFETCH(QString, id);
    QFETCH(QString, reason);
    const Run r = cli({"simulate", kPrograms + file});
    QCOMPARE(r.status, 1);
    const QString msg = r.err.trimmed();
    QVERIFY2(!msg.contains('\n'), qPrintable(msg)); // one line
    QVERIFY2(msg.contains(file), qPrintable(msg));
    QVERIFY2(msg.contains(id), qPrintable(msg));
    QVERIFY2(msg.contains(reason), qPrintable(msg));
    QVERIFY(r.out.isEmpty());
}

// The valid version of the same chain: 256 (load 1024 B at 4 B/cycle) + 100 (compute) +
// 1024/24 (send over one link) + 0 (receive) + 256 (store) = 654.67 cycles.
void TestSimulator::validProgramFile() {
    QTemporaryDir dir;
    const QString json = dir.filePath("sim.json");
    const Run r = cli({"simulate", kPrograms + "valid_chain.json", "--json", json});
    QCOMPARE(r.status, 0);
    QVERIFY(r.out.contains("deadlock-free: yes"));
    QFile f(json);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const auto j = nlohmann::json::parse(f.readAll().toStdString());
    QVERIFY(j["deadlock_free"].get<bool>());
    QVERIFY(std::abs(j["delay_cycles"].get<double>() - (256 + 100 + 1024.0 / 24 + 256)) < 1e-6);
    QCOMPARE(j["timeline"]["0"].size(), size_t(3));
}

void TestSimulator::exportThenSimulate() {
    QTemporaryDir dir;
    // A result JSON as evaluate writes it (the fields export-instructions reads).
    const QString model = QString(TILESCOPE_SAMPLES) + "/models/mobilenet_v2.onnx";
    const QString tree = dir.filePath("t.tree");
    const Run ins = cli({"inspect", model, "--json"});
    QCOMPARE(ins.status, 0);
    const auto info = nlohmann::json::parse(ins.out.toStdString());
    std::string text = "T 2/1\n";
    for (const auto& l : info["layer_list"])
        text += "\t" + l["name"].get<std::string>() + " 2\n";
    {
        QFile f(tree);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(text.c_str());
    }
    const QString result = dir.filePath("result.json");
    QCOMPARE(cli({"evaluate", model, "--hw", "testchip", "--tree", tree, "--batch", "2", "--json",
                  result})
                 .status,
             0);
    const QString out = dir.filePath("prog");
    // By default the folder holds program.bin and hw.json only, and simulate replays it.
    const Run ex = cli({"export-instructions", result, "--out", out});
    QVERIFY2(ex.status == 0, qPrintable(ex.err));
    QCOMPARE(QDir(out).entryList(QDir::Files, QDir::Name), QStringList({"hw.json", "program.bin"}));
    const QString simOnlyBin = dir.filePath("simonlybin.json");
    QCOMPARE(cli({"simulate", out, "--json", simOnlyBin, "--quiet"}).status, 0);
    // --formats: an unknown name is a usage error naming the option and the name; nothing
    // is written.
    const Run badFormat =
        cli({"export-instructions", result, "--out", dir.filePath("x"), "--formats", "bin,xml"});
    QCOMPARE(badFormat.status, 2);
    QVERIFY2(badFormat.err.contains("--formats") && badFormat.err.contains("'xml'"),
             qPrintable(badFormat.err));
    QVERIFY(!QFileInfo::exists(dir.filePath("x")));
    QCOMPARE(
        cli({"export-instructions", result, "--out", dir.filePath("x"), "--formats", ""}).status,
        2);
    // Every format when asked for; a second export replaces the folder as a whole.
    const Run all =
        cli({"export-instructions", result, "--out", out, "--formats", "txt,json,ir,bin"});
    QVERIFY2(all.status == 0, qPrintable(all.err));
    for (const char* f : {"program.json", "program.bin", "program.txt", "ir.json", "hw.json"})
        QVERIFY2(QFile::exists(out + "/" + f), f);
    const Run txtOnly =
        cli({"export-instructions", result, "--out", dir.filePath("t"), "--formats", "txt"});
    QVERIFY2(txtOnly.status == 0, qPrintable(txtOnly.err));
    QCOMPARE(QDir(dir.filePath("t")).entryList(QDir::Files, QDir::Name),
             QStringList({"hw.json", "program.txt"}));
    QVERIFY(QDir(dir.path())
                .entryList({"prog.tmp-*"}, QDir::AllEntries)
                .isEmpty()); // renamed into place
    const QString simJson = dir.filePath("sim.json");
    const Run sim = cli({"simulate", out + "/program.json", "--json", simJson});
    QVERIFY2(sim.status == 0, qPrintable(sim.err));
    QFile f(simJson);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const auto j = nlohmann::json::parse(f.readAll().toStdString());
    QVERIFY(j["deadlock_free"].get<bool>());
    const double ratio = j["delay_ratio"].get<double>();
    QVERIFY2(ratio > 0.85 && ratio < 1.15, qPrintable(QString::number(ratio)));
    QVERIFY(std::abs(j["dram_bytes"].get<double>() - j["schedule_dram_bytes"].get<double>()) <=
            0.01 * j["schedule_dram_bytes"].get<double>());
    QVERIFY(j["speedup_fine_vs_coarse"].get<double>() >= 0.99);
    // The binary encoding replays to the same figures.
    const QString simBin = dir.filePath("simbin.json");
    QCOMPARE(cli({"simulate", out + "/program.bin", "--json", simBin, "--quiet"}).status, 0);
    QFile fb(simBin);
    QVERIFY(fb.open(QIODevice::ReadOnly));
    const auto jb = nlohmann::json::parse(fb.readAll().toStdString());
    QCOMPARE(jb["delay_cycles"].get<double>(), j["delay_cycles"].get<double>());
    QFile fo(simOnlyBin);
    QVERIFY(fo.open(QIODevice::ReadOnly));
    const auto jo = nlohmann::json::parse(fo.readAll().toStdString());
    QCOMPARE(jo["delay_cycles"].get<double>(), j["delay_cycles"].get<double>());
    QCOMPARE(jo["dram_bytes"].get<double>(), j["dram_bytes"].get<double>());
    // A truncated program.bin is rejected with exit 1.
    QFile bin(out + "/program.bin");
    QVERIFY(bin.open(QIODevice::ReadOnly));
    const QByteArray bytes = bin.readAll();
    const QString cut = dir.filePath("cut.bin");
    QFile c(cut);
    QVERIFY(c.open(QIODevice::WriteOnly));
    c.write(bytes.left(bytes.size() / 2));
    c.close();
    const Run bad = cli({"simulate", cut});
    QCOMPARE(bad.status, 1);
    QVERIFY(bad.err.contains("cut.bin"));
}

QTEST_APPLESS_MAIN(TestSimulator)
#include "tst_simulator.moc"
