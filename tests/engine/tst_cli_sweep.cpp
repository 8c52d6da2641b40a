// tilescope-cli sweep / sweep-merge end to end (docs/sweep.md): argument and spec errors,
// every row's cost equal to a standalone anneal, an idempotent rerun, a shard killed with
// SIGKILL mid-run and rerun, shards merged, and mpirun -np 2 against one process.
#include "clirunner.h"
#include "sweep/sweep.h"
#include "sweep/sweeprunner.h"
#include "sweep/sweepstore.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

using namespace tilescope;
using nlohmann::json;
using test::runCli;

namespace {

const std::string kSqueeze = std::string(TILESCOPE_TESTDATA) + "/squeezenet1_0.onnx";
const std::string kResnet = std::string(TILESCOPE_SAMPLES) + "/models/resnet50.onnx";

// 2 models x 2 NoC bandwidths x 2 batches = 8 points.
json eightPoints(int iterations, int chains) {
    return {{"models", {kSqueeze, kResnet}},
            {"hardware", {{{"base", "edge"}, {"vary", {{"noc.link_bytes_per_cycle", {12, 24}}}}}}},
            {"batches", {1, 2}},
            {"seeds", {3}},
            {"search", {{"iterations", iterations}, {"chains", chains}}}};
}

QString writeSpec(const QTemporaryDir& dir, const QString& name, const json& j) {
    const QString p = dir.filePath(name);
    std::ofstream(p.toStdString()) << j.dump(2);
    return p;
}

std::map<std::string, SweepRow> rowsOf(const QString& db) {
    std::map<std::string, SweepRow> out;
    auto st = SweepStore::open(db.toStdString(), false);
    if (!st) return out;
    auto rows = (*st)->rows();
    if (!rows) return out;
    for (SweepRow& r : *rows)
        out[r.point] = std::move(r);
    return out;
}

QString report(const test::CliRun& r) {
    return QStringLiteral("status %1\nstdout: %2\nstderr: %3").arg(r.status).arg(r.out, r.err);
}

} // namespace

class TstCliSweep : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void badArguments();
    void costsEqualAnneal();
    void shardsMerge();
    void killedShardRerun();
    void mpiMatchesOneProcess();

  private:
    QTemporaryDir m_dir;
    QString m_spec, m_full; // the 8-point spec with a small budget, and its one-process DB
};

void TstCliSweep::initTestCase() {
    QVERIFY(m_dir.isValid());
    m_spec = writeSpec(m_dir, "eight.json", eightPoints(40, 2));
    m_full = m_dir.filePath("full.sqlite");
    const auto r = runCli({"sweep", m_spec, "--db", m_full, "--jobs", "2", "--quiet"});
    QVERIFY2(r.status == 0, qPrintable(report(r)));
    QVERIFY2(r.out.contains("8 points; 0 already"), qPrintable(r.out));
    QVERIFY(r.err.isEmpty()); // --quiet
    QCOMPARE(int(rowsOf(m_full).size()), 8);
}

void TstCliSweep::badArguments() {
    const QString db = m_dir.filePath("bad.sqlite");
    QCOMPARE(runCli({"sweep", m_spec}).status, 2);
    QCOMPARE(runCli({"sweep", "--db", db}).status, 2);
    QCOMPARE(runCli({"sweep", m_spec, "--db", db, "--shard", "2/2"}).status, 2);
    QCOMPARE(runCli({"sweep", m_spec, "--db", db, "--shard", "x"}).status, 2);
    QCOMPARE(runCli({"sweep", m_spec, "--db", db, "--jobs", "0"}).status, 2);
    QCOMPARE(runCli({"sweep-merge", db}).status, 2);
    // A spec error: one line naming the file, the place and the reason; no database.
    json j = eightPoints(40, 2);
    j["hardware"][0]["vary"]["noc.link_bytes_per_cycle"] = "fast";
    const QString spec = writeSpec(m_dir, "bad.json", j);
    const auto r = runCli({"sweep", spec, "--db", db});
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err.trimmed().count('\n'), 0);
    QVERIFY2(r.err.contains(spec + ": hardware[0].vary.\"noc.link_bytes_per_cycle\": expected a "
                                   "non-empty list of values"),
             qPrintable(r.err));
    QVERIFY(!QFile::exists(db));
    // Not a database.
    const QString text = m_dir.filePath("text.sqlite");
    std::ofstream(text.toStdString()) << std::string(300, 'x');
    const auto nd = runCli({"sweep", m_spec, "--db", text});
    QCOMPARE(nd.status, 1);
    QVERIFY2(nd.err.contains(text + ": not an SQLite database"), qPrintable(nd.err));
}

void TstCliSweep::costsEqualAnneal() {
    const auto rows = rowsOf(m_full);
    QCOMPARE(int(rows.size()), 8);
    for (const auto& [key, row] : rows) {
        QVERIFY2(row.valid, row.reason.c_str());
        // The row holds everything anneal needs: model, hardware JSON, batch, objective,
        // seed and the search config.
        const QString hw =
            m_dir.filePath("hw-" + QString::fromStdString(key.substr(0, 12)) + ".json");
        std::ofstream(hw.toStdString()) << row.hwJson;
        const json search = json::parse(row.searchJson);
        const QString out = m_dir.filePath("anneal.json");
        const auto r =
            runCli({"anneal", QString::fromStdString(row.model), "--hw", hw, "--batch",
                    QString::number(row.batch), "--objective",
                    QStringLiteral("%1,%2").arg(row.objectiveN).arg(row.objectiveM), "--seed",
                    QString::number(row.seed), "--iterations",
                    QString::number(search["iterations"].get<long long>()), "--chains",
                    QString::number(search["chains"].get<int>()), "--quiet", "--json", out});
        QVERIFY2(r.status == 0, qPrintable(report(r)));
        std::ifstream f(out.toStdString());
        const json a = json::parse(f);
        QCOMPARE(a["cost"].get<double>(), row.cost);
        QCOMPARE(a["energy_pj"].get<double>(), row.energyPj);
        QCOMPARE(a["delay_cycles"].get<double>(), row.delayCycles);
        QCOMPARE(a["tree_json"].dump(), json::parse(row.treeJson).dump());
    }
    // A rerun finds every point and runs none.
    const auto again = runCli({"sweep", m_spec, "--db", m_full, "--quiet"});
    QVERIFY2(again.status == 0, qPrintable(report(again)));
    QVERIFY2(again.out.contains("8 already in") && again.out.contains("0 run now"),
             qPrintable(again.out));
    QCOMPARE(int(rowsOf(m_full).size()), 8);
}

void TstCliSweep::shardsMerge() {
    const QString a = m_dir.filePath("a.sqlite"), b = m_dir.filePath("b.sqlite"),
                  m = m_dir.filePath("merged.sqlite");
    for (const auto& [shard, db] : {std::pair{"0/2", a}, std::pair{"1/2", b}}) {
        const auto r = runCli({"sweep", m_spec, "--db", db, "--shard", shard, "--quiet"});
        QVERIFY2(r.status == 0, qPrintable(report(r)));
        QVERIFY2(r.out.contains("shard " + QString(shard) + " has 4"), qPrintable(r.out));
    }
    const auto ra = rowsOf(a), rb = rowsOf(b);
    QCOMPARE(int(ra.size()), 4);
    QCOMPARE(int(rb.size()), 4);
    for (const auto& [k, row] : ra)
        QVERIFY(!rb.count(k));
    const auto r = runCli({"sweep-merge", m, a, b});
    QVERIFY2(r.status == 0, qPrintable(report(r)));
    QVERIFY2(r.out.contains(m + ": 8 points"), qPrintable(r.out));
    const auto merged = rowsOf(m), full = rowsOf(m_full);
    QCOMPARE(int(merged.size()), 8);
    for (const auto& [k, row] : full) {
        QVERIFY(merged.count(k));
        QCOMPARE(merged.at(k).cost, row.cost);
    }
}

void TstCliSweep::killedShardRerun() {
    // A budget long enough (about half a second a point) to kill shard 1 between points.
    const QString spec = writeSpec(m_dir, "slow.json", eightPoints(8000, 1));
    const QString db = m_dir.filePath("killed.sqlite");
    auto parsed = loadSweepSpec(spec.toStdString());
    QVERIFY(parsed);
    const auto points = expandSweep(*parsed);
    QCOMPARE(int(points.size()), 8);
    std::set<std::string> shard1;
    for (std::size_t i : shardPoints(points.size(), 1, 2))
        shard1.insert(points[i].key);

    // Both shards write the same database at once (WAL, one transaction per point).
    QProcess s0, s1;
    s0.start(QStringLiteral(TILESCOPE_CLI),
             {"sweep", spec, "--db", db, "--shard", "0/2", "--quiet"});
    s1.start(QStringLiteral(TILESCOPE_CLI),
             {"sweep", spec, "--db", db, "--shard", "1/2", "--quiet"});
    QVERIFY(s0.waitForStarted() && s1.waitForStarted());
    QElapsedTimer t;
    t.start();
    int before = 0;
    while (t.elapsed() < 60000 && s1.state() == QProcess::Running) {
        int mine = 0;
        for (const auto& [k, row] : rowsOf(db))
            mine += int(shard1.count(k));
        if (mine >= 1) {
            s1.kill(); // SIGKILL
            break;
        }
        QThread::msleep(20);
    }
    QVERIFY(s1.waitForFinished(10000));
    QCOMPARE(s1.exitStatus(), QProcess::CrashExit);
    QVERIFY(s0.waitForFinished(60000));
    QVERIFY2(s0.exitCode() == 0, s0.readAllStandardError().constData());
    const auto afterKill = rowsOf(db);
    for (const auto& [k, row] : afterKill)
        before += int(shard1.count(k));
    QVERIFY2(before >= 1 && before < 4, qPrintable(QString::number(before)));
    QCOMPARE(int(afterKill.size()), 4 + before); // whole rows only: the database reads back

    const auto rerun = runCli({"sweep", spec, "--db", db, "--shard", "1/2", "--quiet"});
    QVERIFY2(rerun.status == 0, qPrintable(report(rerun)));
    QVERIFY2(rerun.out.contains(QStringLiteral("%1 already in").arg(before)) &&
                 rerun.out.contains(QStringLiteral("%1 run now").arg(4 - before)),
             qPrintable(rerun.out));
    const auto rows = rowsOf(db);
    QCOMPARE(int(rows.size()), 8);
    for (const auto& p : points) {
        QVERIFY(rows.count(p.key));
        QVERIFY2(rows.at(p.key).valid, rows.at(p.key).reason.c_str());
    }
    // The same costs as one uninterrupted process.
    const QString one = m_dir.filePath("one.sqlite");
    const auto r = runCli({"sweep", spec, "--db", one, "--jobs", "2", "--quiet"});
    QVERIFY2(r.status == 0, qPrintable(report(r)));
    for (const auto& [k, row] : rowsOf(one))
        QCOMPARE(rows.at(k).cost, row.cost);
}

void TstCliSweep::mpiMatchesOneProcess() {
    const QString mpirun = QStandardPaths::findExecutable(QStringLiteral("mpirun"));
    if (mpirun.isEmpty()) QSKIP("mpirun is not installed");
    const QString db = m_dir.filePath("mpi.sqlite");
    QProcess p;
    // Open MPI's own runtime does not free everything at MPI_Finalize (allocations in its
    // dlopen'ed components and ompi_op_base_op_select): under the ASan step of
    // scripts/ci-extra.sh LeakSanitizer would fail the ranks for memory that is not ours.
    // Address and UB checks stay on.
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    const QString asan = env.value(QStringLiteral("ASAN_OPTIONS"));
    env.insert(QStringLiteral("ASAN_OPTIONS"), asan.isEmpty()
                                                   ? QStringLiteral("detect_leaks=0")
                                                   : asan + QStringLiteral(":detect_leaks=0"));
    p.setProcessEnvironment(env);
    p.start(mpirun, {"--allow-run-as-root", "--oversubscribe", "-np", "2",
                     QStringLiteral(TILESCOPE_CLI), "sweep", m_spec, "--db", db, "--quiet"});
    QVERIFY(p.waitForFinished(120000));
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    const QString err = QString::fromUtf8(p.readAllStandardError());
    if (err.contains(QLatin1String("built without MPI"))) QSKIP("tilescope-cli built without MPI");
    QVERIFY2(p.exitCode() == 0, qPrintable(out + err));
    QVERIFY2(out.contains("on 2 MPI ranks"), qPrintable(out));
    QCOMPARE(out.count(QLatin1String("sweep ")), 1); // rank 0 alone reports
    const auto rows = rowsOf(db), full = rowsOf(m_full);
    QCOMPARE(int(rows.size()), 8);
    for (const auto& [k, row] : full) {
        QVERIFY(rows.count(k));
        QCOMPARE(rows.at(k).cost, row.cost);
    }
}

QTEST_GUILESS_MAIN(TstCliSweep)
#include "tst_cli_sweep.moc"
