// The whole instruction path through the command-line tool, on the samples: a short seeded
// anneal, export-instructions, then simulate --json --trace. The acceptance figures of the
// instruction path are checked from the files the tools write, independently of the
// simulator's own validation: DRAM bytes of the program against the schedule (1%), every
// SEND received, every buffer reference inside the tile's buffer, a deadlock-free replay,
// the simulated delay within 15% of the evaluator's, and a loadable Perfetto trace.
#include "clirunner.h"
#include "codegen/instruction_program.h"
#include "hw/hardware.h"

#include <QtTest>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

using namespace tilescope;
using nlohmann::json;

namespace {

json readJson(const QString& path) {
    std::ifstream in(path.toStdString());
    std::stringstream ss;
    ss << in.rdbuf();
    return json::parse(ss.str(), nullptr, false);
}

QString sample(const QString& model) {
    return QStringLiteral(TILESCOPE_SAMPLES "/models/") + model + ".onnx";
}

} // namespace

class TestPipelineE2e : public QObject {
    Q_OBJECT
  private slots:
    void annealExportSimulate_data();
    void annealExportSimulate();

  private:
    QTemporaryDir m_dir;
};

void TestPipelineE2e::annealExportSimulate_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("hw");
    QTest::addColumn<int>("batch");
    QTest::addColumn<int>("seed");
    // Annealed trees with S cuts on both chips (beta 2 keeps each run well under a second).
    QTest::newRow("resnet50 testchip b4") << "resnet50"
                                          << "testchip" << 4 << 1;
    QTest::newRow("resnet50 edge b4") << "resnet50"
                                      << "edge" << 4 << 1;
    QTest::newRow("resnet50 edge b2 s2") << "resnet50"
                                         << "edge" << 2 << 2;
    QTest::newRow("transformer testchip b2") << "transformer"
                                             << "testchip" << 2 << 1;
    QTest::newRow("transformer edge b4") << "transformer"
                                         << "edge" << 4 << 1;
    QTest::newRow("googlenet edge b4") << "googlenet"
                                       << "edge" << 4 << 1;
}

void TestPipelineE2e::annealExportSimulate() {
    QFETCH(QString, model);
    QFETCH(QString, hw);
    QFETCH(int, batch);
    QFETCH(int, seed);
    QVERIFY(m_dir.isValid());
    const QString tag =
        model + "-" + hw + "-" + QString::number(batch) + "-" + QString::number(seed);
    const QString result = m_dir.filePath(tag + ".json"), progDir = m_dir.filePath(tag + "-prog"),
                  simJson = m_dir.filePath(tag + "-sim.json"),
                  trace = m_dir.filePath(tag + "-trace.json");

    // EDP and plain annealing: the trees these rows were chosen for (the presets' default
    // objectives and the Set portfolio's dp-lp starts give other trees).
    test::CliRun r =
        test::runCli({"anneal", sample(model), "--hw", hw, "--batch", QString::number(batch),
                      "--beta", "2", "--seed", QString::number(seed), "--chains", "1",
                      "--objective", "1,1", "--no-portfolio", "--json", result, "--quiet"});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    r = test::runCli({"export-instructions", result, "--out", progDir, "--formats", "bin,json"});
    QVERIFY2(r.status == 0, qPrintable(r.err + r.out));
    r = test::runCli({"simulate", progDir, "--json", simJson, "--trace", trace, "--quiet"});
    QVERIFY2(r.status == 0, qPrintable(r.err + r.out));

    const json sim = readJson(simJson);
    QVERIFY(sim.is_object());
    QVERIFY(sim["deadlock_free"].get<bool>());
    QCOMPARE(sim["completed"].get<long long>(), sim["instructions"].get<long long>());
    const double dram = sim["dram_bytes"].get<double>(),
                 sched = sim["schedule_dram_bytes"].get<double>();
    QVERIFY2(std::abs(dram - sched) <= 0.01 * sched,
             qPrintable(QString("DRAM %1 vs schedule %2").arg(dram).arg(sched)));
    const double ratio = sim["delay_ratio"].get<double>();
    qInfo("%s: sim/eval delay %.3f, %lld instructions", qPrintable(tag), ratio,
          sim["instructions"].get<long long>());
    QVERIFY2(ratio >= 0.85 && ratio <= 1.15,
             qPrintable(QString("sim/eval delay ratio %1").arg(ratio)));

    // The program itself: every SEND destination has an instruction on that tile that
    // depends on it (the consumer's compute); every buffer reference lies inside its tile's
    // buffer, and every SEND writes into a buffer of each of its destinations; DRAM bytes
    // add up.
    const json pj = readJson(progDir + "/program.json");
    auto prog = programFromJson(pj, "program.json");
    QVERIFY2(bool(prog), prog ? "" : prog.error().message.c_str());
    auto hwr = parseHardware(prog->hardwareJson, "program.json (hardware)");
    QVERIFY(bool(hwr));
    std::map<std::uint32_t, const Instruction*> byId;
    for (const auto& t : prog->tiles)
        for (const auto& i : t.instructions)
            byId[i.id] = &i;
    std::map<std::uint32_t, std::set<int>>
        received; // SEND id -> tiles with an instruction waiting on it
    std::uint64_t programDram = 0;
    size_t sends = 0;
    for (const auto& [id, ip] : byId) {
        const Instruction& i = *ip;
        for (const auto& b : i.buffers)
            QVERIFY2(double(b.offset + b.bytes) <= hwr->bufferBytes,
                     qPrintable(QString("instruction %1 writes past the buffer").arg(id)));
        if ((i.op == Op::Load && i.src == kDram) || i.op == Op::Store) programDram += i.bytes;
        if (i.op == Op::Send) {
            ++sends;
            std::set<int> written;
            for (const auto& b : i.buffers)
                if (b.write) written.insert(b.tile);
            for (auto d : i.destinations())
                QVERIFY2(written.count(d),
                         qPrintable(QString("SEND %1 writes nothing on tile %2").arg(id).arg(d)));
        }
        for (const auto& d : i.deps) {
            const Instruction& q = *byId.at(d.id);
            if (q.op == Op::Send) {
                const auto dsts = q.destinations();
                if (std::find(dsts.begin(), dsts.end(), i.tile) != dsts.end())
                    received[q.id].insert(i.tile);
            }
        }
    }
    for (const auto& [id, ip] : byId)
        if (ip->op == Op::Send)
            for (auto d : ip->destinations())
                QVERIFY2(received[id].count(d),
                         qPrintable(QString("SEND %1 to tile %2 has no consumer").arg(id).arg(d)));
    QVERIFY(sends > 0); // annealed trees keep feature maps on chip somewhere
    QCOMPARE(double(programDram), dram);

    // The Perfetto trace: valid JSON, one complete event per instruction on track
    // (pid = tile, tid = engine), ending at the simulated delay in microseconds.
    const json tr = readJson(trace);
    QVERIFY(tr.is_object() && tr["traceEvents"].is_array());
    const double usPerCycle = 1.0 / (hwr->clockGHz * 1000.0);
    size_t complete = 0;
    double last = 0;
    std::set<std::pair<int, int>> named;
    // The DRAM counter track (its own process, after the tiles): the bandwidth in use over
    // time moves exactly the program's DRAM bytes and drops to 0 at the end.
    double counterBytes = 0, counterAt = 0, counterUse = 0;
    size_t counters = 0;
    for (const auto& e : tr["traceEvents"]) {
        if (e["ph"] == "M" && e["name"] == "thread_name")
            named.insert({e["pid"].get<int>(), e["tid"].get<int>()});
        if (e["ph"] == "C") {
            QCOMPARE(e["pid"].get<int>(), hwr->tiles());
            const double at = e["ts"].get<double>() / usPerCycle;
            QVERIFY(at >= counterAt);
            counterBytes += (at - counterAt) * counterUse;
            counterAt = at;
            counterUse = e["args"]["in use"].get<double>();
            QVERIFY(counterUse >= 0 && counterUse <= hwr->dramBytesPerCycle * (1 + 1e-9));
            ++counters;
        }
        if (e["ph"] != "X") continue;
        ++complete;
        const int pid = e["pid"].get<int>(), tid = e["tid"].get<int>();
        QVERIFY(pid >= 0 && pid < hwr->tiles());
        QVERIFY(tid >= 0 &&
                tid <= 2 + (hwr->maxOutstandingLoads - 1)); // 3.. : further LOADs in flight
        QVERIFY(named.count({pid, tid}));                   // metadata precedes the events
        QVERIFY(e["ts"].get<double>() >= 0 && e["dur"].get<double>() >= 0);
        last = std::max(last, e["ts"].get<double>() + e["dur"].get<double>());
    }
    QVERIFY(counters >= 2);
    QCOMPARE(counterUse, 0.0);
    QVERIFY(std::abs(counterBytes - double(programDram)) <= 1e-6 * double(programDram));
    QCOMPARE(qint64(complete), sim["instructions"].get<qint64>());
    QVERIFY(std::abs(last - sim["delay_cycles"].get<double>() * usPerCycle) <= 1e-6 * last + 1e-9);
}

QTEST_GUILESS_MAIN(TestPipelineE2e)
#include "tst_pipeline_e2e.moc"
