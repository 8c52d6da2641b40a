// Replays every input the fuzzers ever crashed on (tests/data/fuzz-regressions/<target>/)
// and every committed seed (tests/fuzz/corpus/<target>/) through the same functions the
// libFuzzer targets call (tests/fuzz/fuzz_targets.h), in every build: each must come back
// as a value or an Error. A regression shows up as a crash, an escaping exception, an
// abort from a round-trip check, or (in the asan-ubsan build) a sanitizer report.
#include "../fuzz/fuzz_targets.h"
#include "util/fileio.h"

#include <QDir>
#include <QtTest>
#include <functional>
#include <map>

namespace {

const std::map<QString, std::function<bool(const std::string&)>>& targets() {
    static const std::map<QString, std::function<bool(const std::string&)>> t = {
        {"onnx", tilescope::fuzz::onnx},
        {"network_json", tilescope::fuzz::networkJson},
        {"hardware", tilescope::fuzz::hardware},
        {"tree_text", tilescope::fuzz::treeText},
        {"tree_json", tilescope::fuzz::treeJson},
        {"result_json", tilescope::fuzz::resultJson},
        {"program_bin", tilescope::fuzz::programBin},
    };
    return t;
}

const QString kRegressions = QStringLiteral(TILESCOPE_TESTDATA "/fuzz-regressions");
const QString kCorpus = QStringLiteral(TILESCOPE_TESTDATA "/../fuzz/corpus");

// Rows "<kind>/<target>/<file>" for every file under root/<target>/.
int addRows(const QString& root, const QString& kind) {
    int rows = 0;
    const QDir dir(root);
    for (const QString& target : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        const QDir sub(dir.filePath(target));
        for (const QString& f : sub.entryList(QDir::Files)) {
            QTest::newRow(qPrintable(kind + "/" + target + "/" + f)) << target << sub.filePath(f);
            ++rows;
        }
    }
    return rows;
}

} // namespace

class TestFuzzRegressions : public QObject {
    Q_OBJECT

  private slots:
    // Every folder names a target, so an input is never silently skipped.
    void foldersNameTargets() {
        for (const QString& root : {kRegressions, kCorpus}) {
            const QDir dir(root);
            QVERIFY2(dir.exists(), qPrintable(root));
            for (const QString& t : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot))
                QVERIFY2(targets().count(t), qPrintable(root + "/" + t + " is not a fuzz target"));
        }
        // Each target has a seed corpus.
        for (const auto& [name, fn] : targets())
            QVERIFY2(!QDir(kCorpus + "/" + name).entryList(QDir::Files).isEmpty(),
                     qPrintable(name));
    }

    void replay_data() {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("file");
        addRows(kRegressions, "regression");
        addRows(kCorpus, "seed");
    }

    void replay() {
        QFETCH(QString, target);
        QFETCH(QString, file);
        const auto bytes = tilescope::readFile(file.toStdString());
        QVERIFY2(bytes.ok(), qPrintable(file));
        // Either outcome is fine; returning at all (no crash, no exception) is the check.
        const bool accepted = targets().at(target)(*bytes);
        qDebug() << target << QFileInfo(file).fileName() << (accepted ? "accepted" : "rejected");
    }

    // The seeds that are real documents must be accepted (guards against a target that
    // rejects everything, which would make the fuzzing above pointless).
    void goodSeedsAccepted_data() {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("file");
        QTest::newRow("onnx") << "onnx"
                              << "alexnet.onnx";
        QTest::newRow("network_json") << "network_json"
                                      << "smallres.json";
        QTest::newRow("hardware") << "hardware"
                                  << "edge-4x4.json";
        QTest::newRow("tree_text") << "tree_text"
                                   << "smallres.tree";
        QTest::newRow("tree_json") << "tree_json"
                                   << "smallres.json";
        QTest::newRow("result_json tree") << "result_json"
                                          << "tree_smallres.json";
        QTest::newRow("result_json evaluate") << "result_json"
                                              << "evaluate_result.json";
        QTest::newRow("result_json anneal") << "result_json"
                                            << "anneal_result.json";
        QTest::newRow("result_json compare") << "result_json"
                                             << "compare_result.json";
        QTest::newRow("program_bin") << "program_bin"
                                     << "smallres_testchip.bin";
        // Compute-in-memory: PROGRAM instructions (op 4) and a cim template inside.
        QTest::newRow("program_bin cim") << "program_bin"
                                         << "smallres_cim_2x2.bin";
        QTest::newRow("hardware cim") << "hardware"
                                      << "cim-4x4.json";
    }
    void goodSeedsAccepted() {
        QFETCH(QString, target);
        QFETCH(QString, file);
        const auto bytes = tilescope::readFile((kCorpus + "/" + target + "/" + file).toStdString());
        QVERIFY(bytes.ok());
        QVERIFY(targets().at(target)(*bytes));
    }
};

QTEST_GUILESS_MAIN(TestFuzzRegressions)
#include "tst_fuzzregressions.moc"
