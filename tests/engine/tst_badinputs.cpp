// The bad-input corpus (tests/data/bad/) end to end through tilescope-cli: every case is a
// user error — exit status 1 and exactly one line on stderr naming the file and the place
// (node, layer, key or rule) — and no output file is left behind. The unit tests of each
// reader (tst_onnximport, tst_networkjson, tst_hardware, tst_ratree, tst_cli_search) check
// the messages in detail; this is the one list of them all as a user meets them.
// The ONNX files are written by tests/data/bad/make_bad.py; result_*.json are results as
// export-instructions reads them (model path relative to the file).
#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>
#include <nlohmann/json.hpp>

namespace {

const QString kCli = TILESCOPE_CLI;
const QString kBad = QStringLiteral(TILESCOPE_TESTDATA "/bad/");

struct Run {
    int status = -1;
    QString out, err;
};

Run cli(const QStringList& args) {
    QProcess p;
    p.start(kCli, args);
    if (!p.waitForFinished(120000)) qFatal("tilescope-cli did not finish");
    Run r;
    r.status = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

} // namespace

class TestBadInputs : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

  private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // command: the CLI arguments with MODEL / HW / TREE relative to tests/data/bad/ and
    // OUT standing for the --json output path; file: the file the message must name;
    // places: what else it must say (the node, layer, key or rule).
    void userError_data() {
        QTest::addColumn<QStringList>("command");
        QTest::addColumn<QString>("file");
        QTest::addColumn<QStringList>("places");

        const QStringList evalGood{"--hw", "edge", "--tree", "good.tree", "--json", "OUT"};
        auto evaluate = [&](const QString& model) {
            return QStringList{"evaluate", model} + evalGood;
        };
        auto anneal = [](const QString& model, const QString& hw) {
            return QStringList{"anneal", model, "--hw",    hw,       "--batch", "4",
                               "--beta", "1",   "--quiet", "--json", "OUT"};
        };

        // Models.
        QTest::newRow("truncated onnx") << evaluate("truncated.onnx") << "truncated.onnx"
                                        << QStringList{"not a valid ONNX model"};
        QTest::newRow("garbage onnx")
            << evaluate("garbage.onnx") << "garbage.onnx" << QStringList{"not a valid ONNX model"};
        QTest::newRow("dynamic shape blocks a conv")
            << evaluate("dynamic_shape.onnx") << "dynamic_shape.onnx"
            << QStringList{"free dimensions height (input 'x' axis 2), width (input 'x' axis 3)",
                           "--dim NAME=VALUE"};
        QTest::newRow("opset too new") << evaluate("opset_too_new.onnx") << "opset_too_new.onnx"
                                       << QStringList{"opset 99", "supported (17)"};
        QTest::newRow("zero-sized dim onnx") << evaluate("zero_dim.onnx") << "zero_dim.onnx"
                                             << QStringList{"input 'x'", "zero-sized"};
        QTest::newRow("inspect truncated onnx")
            << QStringList{"inspect", "truncated.onnx"} << "truncated.onnx"
            << QStringList{"not a valid ONNX model"};
        QTest::newRow("cycle in json network")
            << evaluate("cycle.json") << "cycle.json" << QStringList{"cycle", "conv1"};
        QTest::newRow("zero-sized dim json")
            << evaluate("zero_dim.json") << "zero_dim.json" << QStringList{"b1a", "zero"};
        QTest::newRow("anneal on a cyclic network")
            << anneal("cycle.json", "edge") << "cycle.json" << QStringList{"cycle"};

        // Hardware templates.
        QTest::newRow("hardware with 0 tiles")
            << QStringList{"evaluate", "smallres.json", "--hw",   "hw_zero_tiles.json",
                           "--tree",   "good.tree",     "--json", "OUT"}
            << "hw_zero_tiles.json" << QStringList{"mesh"};
        QTest::newRow("anneal, hardware with 0 tiles")
            << anneal("smallres.json", "hw_zero_tiles.json") << "hw_zero_tiles.json"
            << QStringList{"mesh"};
        QTest::newRow("cim partial-sum buffer too small")
            << anneal("smallres.json", "hw_cim_bad_psum.json") << "hw_cim_bad_psum.json"
            << QStringList{"cim.psum_buffer_bytes", "partial sums"};
        QTest::newRow("negative bandwidth")
            << anneal("smallres.json", "hw_negative_bandwidth.json") << "hw_negative_bandwidth.json"
            << QStringList{"link_bytes_per_cycle"};

        // A buffer too small for any layer: the schedule is infeasible and the message names
        // the first layer that does not fit. evaluate reports it as an invalid schedule
        // (exit 1, CLI.md "invalid tree"; see also bufferTooSmallEvaluateResult), anneal as
        // "no valid start" since not even batch 1 fits.
        QTest::newRow("anneal, buffer too small for any layer")
            << anneal("smallres.json", "hw_tiny_buffer.json") << "smallres.json"
            << QStringList{"conv1", "buffer"};

        // Trees.
        auto tree = [](const QString& t) {
            return QStringList{"evaluate", "smallres.json", "--hw", "edge", "--tree",
                               t,          "--json",        "OUT"};
        };
        QTest::newRow("tree: unknown layer") << tree("unknown_layer.tree") << "unknown_layer.tree"
                                             << QStringList{"line 5", "no_such_layer"};
        QTest::newRow("tree: duplicated layer")
            << tree("duplicate_layer.tree") << "duplicate_layer.tree" << QStringList{"b1b"};
        QTest::newRow("tree: missing layer")
            << tree("missing_layer.tree") << "missing_layer.tree" << QStringList{"ds2"};
        QTest::newRow("tree: sub-batch does not divide the batch")
            << tree("subbatch_not_dividing.tree") << "subbatch_not_dividing.tree"
            << QStringList{"3", "4"};
        QTest::newRow("anneal --init with an unknown layer")
            << anneal("smallres.json", "edge") + QStringList{"--init", "unknown_layer.tree"}
            << "unknown_layer.tree" << QStringList{"no_such_layer"};

        // Result / session files for export-instructions (OUT is the --out folder here).
        QTest::newRow("export: objective not numbers")
            << QStringList{"export-instructions", "result_bad_objective.json", "--out", "OUT"}
            << "result_bad_objective.json" << QStringList{"objective"};
        QTest::newRow("export: batch beyond int")
            << QStringList{"export-instructions", "result_huge_batch.json", "--out", "OUT"}
            << "result_huge_batch.json" << QStringList{"batch"};
        QTest::newRow("export: not JSON")
            << QStringList{"export-instructions", "good.tree", "--out", "OUT"} << "good.tree"
            << QStringList{"not a result"};
    }

    void userError() {
        QFETCH(QStringList, command);
        QFETCH(QString, file);
        QFETCH(QStringList, places);
        const QString out =
            m_dir.filePath(QString("out-%1.json").arg(QTest::currentDataTag()).replace(' ', '_'));
        for (QString& a : command) {
            if (a == "OUT")
                a = out;
            else if (QFile::exists(kBad + a))
                a = kBad + a;
        }
        const Run r = cli(command);
        QVERIFY2(r.status == 1,
                 qPrintable(QString("exit %1, stderr: %2").arg(r.status).arg(r.err)));
        const QStringList lines = r.err.trimmed().split('\n');
        QVERIFY2(lines.size() == 1, qPrintable("more than one line:\n" + r.err));
        QVERIFY2(lines[0].contains(kBad + file),
                 qPrintable("does not name " + file + ": " + r.err));
        for (const QString& p : places)
            QVERIFY2(lines[0].contains(p, Qt::CaseInsensitive),
                     qPrintable("lacks '" + p + "': " + r.err));
        // Never a partial output file, nor a temporary one.
        QVERIFY2(!QFile::exists(out), qPrintable(out + " was written"));
        QCOMPARE(QDir(m_dir.path())
                     .entryList({"*.tmp*"}, QDir::Files | QDir::Dirs | QDir::Hidden)
                     .size(),
                 0);
    }

    // evaluate of a feasible tree whose buffer need exceeds the template: exit 1 with the
    // reason on one line (the schedule is an "invalid tree" in CLI.md terms), and the --json
    // file is the complete result with valid: false and the same reason, so a sweep script
    // records why a point failed. This is the one failure that writes its --json output:
    // the file is a whole result, never a partial one.
    void bufferTooSmallEvaluateResult() {
        const QString out = m_dir.filePath("tiny.json");
        const Run r = cli({"evaluate", kBad + "smallres.json", "--hw", kBad + "hw_tiny_buffer.json",
                           "--tree", kBad + "good.tree", "--json", out});
        QCOMPARE(r.status, 1);
        const QStringList lines = r.err.trimmed().split('\n');
        QVERIFY2(lines.size() == 1, qPrintable(r.err));
        QVERIFY2(lines[0].contains(kBad + "good.tree"), qPrintable(r.err));
        QVERIFY2(lines[0].contains("invalid schedule"), qPrintable(r.err));
        QVERIFY2(lines[0].contains("conv1"), qPrintable(r.err));
        QVERIFY2(lines[0].contains("buffer", Qt::CaseInsensitive), qPrintable(r.err));
        std::ifstream f(out.toStdString());
        QVERIFY(f.good());
        const auto j = nlohmann::json::parse(f);
        QCOMPARE(j["valid"].get<bool>(), false);
        QVERIFY(QString::fromStdString(j["reason"].get<std::string>()).contains("conv1"));
        // Without --json the figures are not printed, only the reason.
        const Run plain = cli({"evaluate", kBad + "smallres.json", "--hw",
                               kBad + "hw_tiny_buffer.json", "--tree", kBad + "good.tree"});
        QCOMPARE(plain.status, 1);
        QVERIFY2(plain.out.contains("invalid:"), qPrintable(plain.out));
    }

    // The control: the same good files succeed, so the failures above come from the defect
    // each bad file carries and not from the surroundings.
    void goodInputsSucceed() {
        const QString out = m_dir.filePath("good.json");
        const Run r = cli({"evaluate", kBad + "smallres.json", "--hw", "edge", "--tree",
                           kBad + "good.tree", "--json", out});
        QVERIFY2(r.status == 0, qPrintable(r.err));
        QVERIFY(QFile::exists(out));
        const Run a = cli({"anneal", kBad + "smallres.json", "--hw", "edge", "--batch", "4",
                           "--beta", "1", "--quiet", "--json", m_dir.filePath("anneal.json")});
        QVERIFY2(a.status == 0, qPrintable(a.err));
        const Run x = cli(
            {"export-instructions", kBad + "result_good.json", "--out", m_dir.filePath("prog")});
        QVERIFY2(x.status == 0, qPrintable(x.err));
        QVERIFY(QFile::exists(m_dir.filePath("prog/program.bin")));
    }
};

QTEST_GUILESS_MAIN(TestBadInputs)
#include "tst_badinputs.moc"
