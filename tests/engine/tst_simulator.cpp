// The instruction-level simulator: hand-derived replays (DRAM and link bandwidth, stage
// overlap), validation of malformed programs through the CLI (clear one-line message,
// exit 1), and export-instructions -> simulate end to end.
#include "codegen/program.h"
#include "sim/simulator.h"

#include "clirunner.h"
#include <QTemporaryDir>
#include <QtTest>

using namespace tilescope;

namespace {

const QString kPrograms = QString(TILESCOPE_TESTDATA) + "/programs/";

using Run = test::CliRun;

Run cli(const QStringList& args) { return test::runCli(args); }

Hardware testchip() {
    Hardware hw;
    presetHardware("testchip", hw);
    return hw;
}

Instruction make(std::uint32_t id, Op op, int tile, int src, int dst, std::uint64_t bytes, std::uint32_t stages,
                 std::uint64_t cycles = 0, std::vector<Dep> deps = {}) {
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

} // namespace

class TestSimulator : public QObject {
    Q_OBJECT
private slots:
    void loadThenCompute();
    void dramIsShared();
    void sendOverOneLink();
    void sendReadByCompute();
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

// Two tiles each load 800 B: the shared 4 B/cycle DRAM serves them one after the other,
// 1600 / 4 = 400 cycles in all (not 200 as two private interfaces would give).
void TestSimulator::dramIsShared() {
    const Hardware hw = testchip();
    Program p = twoTiles({make(1, Op::Load, 0, kDram, 0, 800, 1)}, {make(2, Op::Load, 1, kDram, 1, 800, 1)});
    const SimResult r = simulate(p, hw);
    QVERIFY(r.deadlockFree);
    QCOMPARE(r.delay, 400.0);
}

// A SEND of 2400 B from tile 0 to its east neighbour crosses one link at 24 B/cycle: 100
// cycles; the receiving LOAD only acknowledges, and the STORE of 400 B to DRAM takes 100.
void TestSimulator::sendOverOneLink() {
    const Hardware hw = testchip();
    Program p = twoTiles({make(1, Op::Send, 0, 0, 1, 2400, 1)},
                         {make(2, Op::Load, 1, 0, 1, 2400, 1, 0, {{1, 1}}), make(3, Op::Store, 1, 1, kDram, 400, 1, 0, {{2, 1}})});
    QVERIFY(!validateProgram(p, hw, "t"));
    const SimResult r = simulate(p, hw);
    QCOMPARE(r.delay, 200.0);
    QCOMPARE(r.nocHopBytes, 2400.0 + 400.0 * 1); // one mesh link, then tile 1's port link
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

void TestSimulator::validationApi() {
    const Hardware hw = testchip();
    // A dependency on a later instruction of the same in-order queue is a deadlock.
    Program p = twoTiles({make(1, Op::Load, 0, kDram, 0, 64, 1, 0, {{2, 1}}), make(2, Op::Load, 0, kDram, 0, 64, 1)});
    auto e = validateProgram(p, hw, "q.json");
    QVERIFY(e);
    QVERIFY2(e->message.find("cycle") != std::string::npos, e->message.c_str());
    // A stage beyond the producer's count.
    p = twoTiles({make(1, Op::Load, 0, kDram, 0, 64, 2), make(2, Op::Compute, 0, 0, 0, 0, 1, 5, {{1, 3}})});
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
    QTest::newRow("missing dependency") << "missing_dependency.json" << "instruction 2" << "missing dependency target 99";
    QTest::newRow("cycle") << "dependency_cycle.json" << "instruction " << "dependency cycle";
    QTest::newRow("over capacity") << "over_capacity.json" << "instruction 1" << "buffer over capacity";
    QTest::newRow("send without consumer") << "send_without_consumer.json" << "instruction 3" << "SEND without a consumer";
    QTest::newRow("garbage binary") << "garbage.bin" << "" << "checksum mismatch";
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
    for (const auto& l : info["layer_list"]) text += "\t" + l["name"].get<std::string>() + " 2\n";
    {
        QFile f(tree);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(text.c_str());
    }
    const QString result = dir.filePath("result.json");
    QCOMPARE(cli({"evaluate", model, "--hw", "testchip", "--tree", tree, "--batch", "2", "--json", result}).status, 0);
    const QString out = dir.filePath("prog");
    const Run ex = cli({"export-instructions", result, "--out", out});
    QVERIFY2(ex.status == 0, qPrintable(ex.err));
    for (const char* f : {"program.json", "program.bin", "program.txt", "ir.json", "hw.json"})
        QVERIFY2(QFile::exists(out + "/" + f), f);
    QVERIFY(QDir(dir.path()).entryList({"prog.tmp-*"}, QDir::AllEntries).isEmpty()); // renamed into place
    const QString simJson = dir.filePath("sim.json");
    const Run sim = cli({"simulate", out, "--json", simJson});
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
