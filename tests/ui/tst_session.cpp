// Session files: a save / open round trip restores model, hardware, batch, objective,
// tree, pins and search settings; a changed or missing model is refused with the reason
// and the current document is kept.
#include "core/document.h"
#include "core/session.h"
#include "expectok.h"
#include "widgets/mainwindow.h"
#include "widgets/searchpanel.h"
#include "widgets/sessioncontroller.h"

#include <QFile>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace tilescope;
using namespace tilescope::ui;

class TstSession : public QObject {
    Q_OBJECT
  private:
    QTemporaryDir m_dir;
    QString copyModel(const QString& name) {
        const QString p = m_dir.filePath(name);
        QFile::remove(p);
        if (!QFile::copy(TILESCOPE_SAMPLES "/models/resnet50.onnx", p)) return {};
        QFile(p).setPermissions(QFile::ReadOwner | QFile::WriteOwner);
        return p;
    }

  private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
    }

    void roundTrip() {
        const QString model = copyModel(QStringLiteral("model.onnx"));
        QVERIFY(!model.isEmpty());
        MainWindow a;
        a.setInteractive(false);
        QVERIFY(a.openHardware(QStringLiteral("testchip")));
        QVERIFY(a.setBatch(4));
        QVERIFY(a.openModel(model));
        Document* doc = a.document();
        QVERIFY_OK(doc->wrap(doc->tree().root, 1, 2, NodeType::S));
        QVERIFY_OK(doc->setPinned(doc->tree().nodeAtPath("/1"), true));
        doc->setObjective(Objective{2, 1});
        SearchConfig cfg = a.searchPanel()->settings();
        cfg.seed = 42;
        cfg.beta = 12.5;
        cfg.t0 = 0.05;
        cfg.alpha = 4;
        cfg.mode = SearchMode::LP;
        cfg.chains = 3;
        cfg.objective = Objective{2, 1};
        a.searchPanel()->setSettings(cfg);
        const QString path = m_dir.filePath(QStringLiteral("s.tilescope.json"));
        QVERIFY2(a.sessions()->saveSession(path), qPrintable(a.lastError()));

        MainWindow b;
        b.setInteractive(false);
        QVERIFY2(b.sessions()->openSession(path), qPrintable(b.lastError()));
        Document* d = b.document();
        QVERIFY(d->tree() == doc->tree());
        QVERIFY(d->tree().node(d->tree().nodeAtPath("/1")).pinned);
        QCOMPARE(d->batch(), 4);
        QCOMPARE(d->hardware()->meshX, 2);
        QCOMPARE(d->objective().n, 2.0);
        QCOMPARE(d->objective().m, 1.0);
        QCOMPARE(d->modelSha256(), doc->modelSha256());
        QCOMPARE(d->evaluation()->cost, doc->evaluation()->cost);
        const SearchConfig got = b.searchPanel()->settings();
        QCOMPARE(got.seed, std::uint64_t(42));
        QCOMPARE(got.beta, 12.5);
        QCOMPARE(got.t0, 0.05);
        QCOMPARE(got.alpha, 4.0);
        QCOMPARE(got.mode, SearchMode::LP);
        QCOMPARE(got.chains, 3);
        // The file records the results and the pinned paths for tools.
        auto s = Session::load(path);
        QVERIFY(s.ok());
        QCOMPARE(s->pinned, QStringList{QStringLiteral("/1")});
        QVERIFY(s->results.contains("energy_pj"));
    }

    void changedModelIsRefused() {
        const QString model = copyModel(QStringLiteral("changing.onnx"));
        MainWindow a;
        a.setInteractive(false);
        QVERIFY(a.openModel(model));
        const QString path = m_dir.filePath(QStringLiteral("changing.tilescope.json"));
        QVERIFY(a.sessions()->saveSession(path));

        // Another window holds a different document that must survive the failed open.
        MainWindow b;
        b.setInteractive(false);
        QVERIFY(b.openModel(TILESCOPE_SAMPLES "/models/mobilenet_v2.onnx"));
        const RATree before = b.document()->tree();
        const QString beforePath = b.document()->modelPath();

        QFile f(model);
        QVERIFY(f.open(QIODevice::Append));
        f.write("x");
        f.close();
        QVERIFY(!b.sessions()->openSession(path));
        QVERIFY2(b.lastError().contains(QLatin1String("sha256 mismatch")),
                 qPrintable(b.lastError()));
        QVERIFY(b.lastError().contains(path));
        QVERIFY(b.document()->tree() == before);
        QCOMPARE(b.document()->modelPath(), beforePath);

        QVERIFY(QFile::remove(model));
        QVERIFY(!b.sessions()->openSession(path));
        QVERIFY2(b.lastError().contains(QLatin1String("missing")), qPrintable(b.lastError()));
        QVERIFY(b.document()->tree() == before);
    }

    // What a network keeps on chip (a decode step's weights or KV cache) is saved with the
    // model and applied when the session opens; a record that does not fit the model is
    // refused with the key or the name, and the current document is kept.
    void keptOnChipIsChecked() {
        const QString model = copyModel(QStringLiteral("kept.onnx"));
        MainWindow a;
        a.setInteractive(false);
        QVERIFY(a.openHardware(QStringLiteral("edge")));
        QVERIFY(a.openModel(model));
        const QString path = m_dir.filePath(QStringLiteral("kept.tilescope.json"));
        QVERIFY2(a.sessions()->saveSession(path), qPrintable(a.lastError()));
        auto s = Session::load(path);
        QVERIFY(s.ok());
        QVERIFY(s->keptOnChip.is_null()); // nothing kept: the key is absent
        auto write = [&](const nlohmann::json& kept) {
            Session t = *s;
            t.keptOnChip = kept;
            QVERIFY(!t.save(path));
        };
        write({{"inputs", {"nope"}}, {"weights", false}});
        MainWindow b;
        b.setInteractive(false);
        QVERIFY(!b.sessions()->openSession(path));
        QVERIFY2(b.lastError().contains(QStringLiteral("no input named 'nope'")),
                 qPrintable(b.lastError()));
        write({{"weights", "yes"}});
        auto bad = Session::load(path);
        QVERIFY(!bad.ok());
        QVERIFY2(bad.error().message.find("kept_on_chip.weights") != std::string::npos,
                 bad.error().message.c_str());
        write({{"inputs", nlohmann::json::array()}, {"weights", true}});
        MainWindow c;
        c.setInteractive(false);
        QVERIFY2(c.sessions()->openSession(path), qPrintable(c.lastError()));
        int kept = 0, withWeights = 0;
        for (const Layer& l : c.document()->network()->layers) {
            kept += l.weightsResident;
            withWeights += l.weightBytes > 0;
        }
        QCOMPARE(kept, withWeights);
        QVERIFY(kept > 0);
    }

    void malformedSessionIsRefused() {
        const QString path = m_dir.filePath(QStringLiteral("bad.json"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"format\": \"tilescope-session\", \"model\": 3}");
        f.close();
        auto s = Session::load(path);
        QVERIFY(!s.ok());
        QVERIFY(QString::fromStdString(s.error().message).startsWith(path));
        QVERIFY(!Session::load(m_dir.filePath(QStringLiteral("none.json"))).ok());
    }
};

QTEST_MAIN(TstSession)
#include "tst_session.moc"
