// Nothing lost: the autosave writes the session to the recovery file only while there are
// unsaved changes and removes it on save, on undo back to the saved state and on a clean
// exit; a failed open keeps the current document; and for real, a `tilescope` process
// killed with SIGKILL leaves a recovery file that holds its edited tree and that the next
// start restores.
#include "core/autosaver.h"
#include "core/document.h"
#include "core/session.h"
#include "expectok.h"
#include "widgets/mainwindow.h"
#include "widgets/sessioncontroller.h"

#include <QAbstractButton>
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMessageBox>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

using namespace tilescope;
using namespace tilescope::ui;

namespace {
// The GUI binary sits next to the command-line tool in the build tree.
QString guiBinary() {
    return QFileInfo(QStringLiteral(TILESCOPE_CLI)).dir().filePath(QStringLiteral("tilescope"));
}
const char* kModel = TILESCOPE_SAMPLES "/models/resnet50.onnx";
} // namespace

class TstRecovery : public QObject {
    Q_OBJECT
  private:
    QTemporaryDir m_dir;
    QString m_recoveryDir;
    QString recoveryFile() const {
        return QDir(m_recoveryDir).filePath(QStringLiteral("recovery.tilescope.json"));
    }

    static void openSmall(MainWindow& w) {
        w.setInteractive(false);
        QVERIFY(w.openHardware(QStringLiteral("testchip")));
        QVERIFY(w.setBatch(4));
        QVERIFY2(w.openModel(QString::fromLatin1(kModel)), qPrintable(w.lastError()));
    }

    // The small model in a window on screen that asks its questions (message boxes).
    static void openShown(MainWindow& w) {
        openSmall(w);
        w.setInteractive(true);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
    }

  private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        m_recoveryDir = m_dir.filePath(QStringLiteral("recovery"));
        qputenv("TILESCOPE_RECOVERY_DIR", m_recoveryDir.toUtf8());
        qputenv("TILESCOPE_AUTOSAVE_MS", "100");
        qunsetenv("TILESCOPE_RECOVERY_AUTO");
        QVERIFY(QFileInfo(guiBinary()).isExecutable());
    }

    void autosaveOnlyWhileModified() {
        QFile::remove(recoveryFile());
        {
            MainWindow w;
            QCOMPARE(w.sessions()->autoSaver()->recoveryPath(), recoveryFile());
            QCOMPARE(w.sessions()->autoSaver()->intervalMs(), 100);
            openSmall(w);
            QVERIFY(!w.sessions()->isModified());
            QTest::qWait(400);
            QVERIFY(!QFile::exists(recoveryFile())); // a fresh model: nothing to lose
            Document* doc = w.document();
            QVERIFY_OK(doc->wrap(doc->tree().root, 1, 2, NodeType::S));
            QVERIFY(w.sessions()->isModified());
            QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(recoveryFile()), 5000);
            auto s = Session::load(recoveryFile());
            QVERIFY2(s, s ? "" : s.error().message.c_str());
            QCOMPARE(s->treeText, treeToText(doc->tree(), *doc->network()));
            doc->undoStack()->undo(); // back at the opened state
            QTRY_VERIFY_WITH_TIMEOUT(!QFile::exists(recoveryFile()), 5000);
            doc->undoStack()->redo();
            QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(recoveryFile()), 5000);
            QVERIFY(
                w.sessions()->saveSession(m_dir.filePath(QStringLiteral("saved.tilescope.json"))));
            QVERIFY(!w.sessions()->isModified());
            QVERIFY(!QFile::exists(recoveryFile()));
            QVERIFY_OK(doc->flip(doc->tree().root));
            QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(recoveryFile()), 5000);
        }
        // The window is gone the clean way: the file goes with it.
        QVERIFY(!QFile::exists(recoveryFile()));
    }

    // Closing with unsaved edits asks first: Cancel keeps the window and the edit,
    // Discard closes; with nothing modified there is no question at all.
    void closeAsksBeforeDroppingEdits() {
        MainWindow w;
        openShown(w);
        Document* doc = w.document();
        QVERIFY_OK(doc->wrap(doc->tree().root, 1, 2, NodeType::S));
        QVERIFY(w.sessions()->isModified());
        auto answer = [](QMessageBox::StandardButton which, bool* asked) {
            QTimer::singleShot(200, [which, asked] {
                auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
                if (!box) return;
                *asked = true;
                box->button(which)->click();
            });
        };
        bool asked = false;
        answer(QMessageBox::Cancel, &asked);
        QVERIFY(!w.close());
        QVERIFY(asked);
        QVERIFY(w.isVisible());
        QVERIFY(w.sessions()->isModified());
        asked = false;
        answer(QMessageBox::Discard, &asked);
        QVERIFY(w.close());
        QVERIFY(asked);
        MainWindow clean;
        openShown(clean);
        asked = false;
        answer(QMessageBox::Cancel, &asked);
        QVERIFY(clean.close()); // nothing to lose: closes without a question
        QTest::qWait(300);
        QVERIFY(!asked);
    }

    // Opening another model (menu, recent list, welcome page) with unsaved edits asks
    // first: Cancel keeps the edited schedule, Discard opens the other model.
    void openAsksBeforeDroppingEdits() {
        MainWindow w;
        openShown(w);
        Document* doc = w.document();
        QVERIFY_OK(doc->wrap(doc->tree().root, 1, 2, NodeType::S));
        const std::string edited = treeToText(doc->tree(), *doc->network());
        bool asked = false;
        auto answer = [&asked](QMessageBox::StandardButton which) {
            QTimer::singleShot(200, [which, &asked] {
                auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
                if (!box) return;
                asked = true;
                box->button(which)->click();
            });
        };
        const QString other = QString::fromLatin1(TILESCOPE_SAMPLES "/models/mobilenet_v2.onnx");
        answer(QMessageBox::Cancel);
        QVERIFY(!w.openModelAsking(other));
        QVERIFY(asked);
        QCOMPARE(doc->modelPath(), QString::fromLatin1(kModel));
        QCOMPARE(treeToText(doc->tree(), *doc->network()), edited);
        QVERIFY(w.sessions()->isModified());
        asked = false;
        answer(QMessageBox::Discard);
        QVERIFY(w.openModelAsking(other));
        QVERIFY(asked);
        QCOMPARE(doc->modelPath(), other);
        w.setInteractive(false); // the window closes without a question
    }

    void failedOpenKeepsDocument() {
        MainWindow w;
        openSmall(w);
        Document* doc = w.document();
        QVERIFY_OK(doc->wrap(doc->tree().root, 1, 2, NodeType::S));
        const std::string tree = treeToText(doc->tree(), *doc->network());
        const quint64 rev = doc->revision();
        const int undo = doc->undoStack()->count();
        auto unchanged = [&] {
            QCOMPARE(treeToText(doc->tree(), *doc->network()), tree);
            QCOMPARE(doc->revision(), rev);
            QCOMPARE(doc->undoStack()->count(), undo);
            QCOMPARE(doc->modelPath(), QString::fromLatin1(kModel));
            QVERIFY(w.sessions()->isModified());
        };
        QVERIFY(!w.openModel(m_dir.filePath(QStringLiteral("missing.onnx"))));
        unchanged();
        const QString junk = m_dir.filePath(QStringLiteral("junk.onnx"));
        {
            QFile f(junk);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("\x08\x01garbage that is no protobuf");
        }
        QVERIFY(!w.openModel(junk));
        unchanged();
        // A session cut off in the middle (what a non-atomic write would leave behind).
        const QString good = m_dir.filePath(QStringLiteral("good.tilescope.json"));
        QVERIFY(w.sessions()->saveSession(good));
        QVERIFY_OK(doc->wrap(doc->tree().root, 0, 2, NodeType::T)); // modified again
        const std::string tree2 = treeToText(doc->tree(), *doc->network());
        QFile in(good);
        QVERIFY(in.open(QIODevice::ReadOnly));
        const QByteArray all = in.readAll();
        const QString cut = m_dir.filePath(QStringLiteral("cut.tilescope.json"));
        QFile out(cut);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(all.left(all.size() / 2));
        out.close();
        const quint64 rev2 = doc->revision();
        QVERIFY(!w.sessions()->openSession(cut));
        QVERIFY(!w.lastError().contains(QLatin1Char('\n')));
        QCOMPARE(treeToText(doc->tree(), *doc->network()), tree2);
        QCOMPARE(doc->revision(), rev2);
        QVERIFY(w.sessions()->isModified());
    }

    void killedProcessIsRecovered() {
        QFile::remove(recoveryFile());
        // An edited tree, made here with the engine's edits and handed to the app as a file.
        std::string treeText;
        {
            MainWindow w;
            openSmall(w);
            Document* doc = w.document();
            QVERIFY_OK(doc->wrap(doc->tree().root, 1, 2, NodeType::S));
            treeText = treeToText(doc->tree(), *doc->network());
            QVERIFY(treeText !=
                    treeToText(RATree::layerSequential(*doc->network(), 4), *doc->network()));
        }
        const QString treeFile = m_dir.filePath(QStringLiteral("edited.tree"));
        {
            QFile f(treeFile);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray::fromStdString(treeText));
        }
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        env.insert(QStringLiteral("TILESCOPE_RECOVERY_DIR"), m_recoveryDir);
        env.insert(QStringLiteral("TILESCOPE_AUTOSAVE_MS"), QStringLiteral("300"));
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), m_dir.filePath(QStringLiteral("config")));

        QProcess app;
        app.setProcessEnvironment(env);
        app.setProcessChannelMode(QProcess::MergedChannels);
        app.start(guiBinary(), {QString::fromLatin1(kModel), QStringLiteral("--hw"),
                                QStringLiteral("testchip"), QStringLiteral("--batch"),
                                QStringLiteral("4"), QStringLiteral("--tree"), treeFile});
        QVERIFY(app.waitForStarted(10000));
        QTRY_VERIFY_WITH_TIMEOUT(
            QFile::exists(recoveryFile()) || app.state() == QProcess::NotRunning, 30000);
        QVERIFY2(app.state() == QProcess::Running, app.readAll().constData());
        app.kill(); // SIGKILL: no close event, no destructor
        QVERIFY(app.waitForFinished(10000));
        QCOMPARE(app.exitStatus(), QProcess::CrashExit);

        QVERIFY(QFile::exists(recoveryFile()));
        auto s = Session::load(recoveryFile());
        QVERIFY2(s, s ? "" : s.error().message.c_str());
        QCOMPARE(s->treeText, treeText);
        QCOMPARE(s->batch, 4);

        // The next start restores it (auto-accepted), with no model on its command line.
        QProcess again;
        QProcessEnvironment env2 = env;
        env2.insert(QStringLiteral("TILESCOPE_RECOVERY_AUTO"), QStringLiteral("accept"));
        again.setProcessEnvironment(env2);
        again.setProcessChannelMode(QProcess::MergedChannels);
        again.start(guiBinary(), {});
        QVERIFY(again.waitForStarted(10000));
        QByteArray log;
        QTRY_VERIFY_WITH_TIMEOUT(
            (log += again.readAll()).contains("restored the unsaved session") ||
                again.state() == QProcess::NotRunning,
            30000);
        QVERIFY2(log.contains("restored the unsaved session"), log.constData());
        again.kill();
        again.waitForFinished(10000);
        // Restored work is still unsaved work: the file is still there after that crash too.
        QVERIFY(QFile::exists(recoveryFile()));

        // The same restore in this process: the document holds exactly the killed app's tree.
        qputenv("TILESCOPE_RECOVERY_AUTO", "accept");
        {
            MainWindow w;
            w.setInteractive(false);
            QVERIFY2(w.sessions()->offerRecovery(), qPrintable(w.lastError()));
            qunsetenv("TILESCOPE_RECOVERY_AUTO");
            QCOMPARE(treeToText(w.document()->tree(), *w.document()->network()), treeText);
            QCOMPARE(w.document()->batch(), 4);
            QVERIFY(w.sessions()->isModified());
        }
        QVERIFY(!QFile::exists(recoveryFile())); // clean exit after the restore
    }
};

QTEST_MAIN(TstRecovery)
#include "tst_recovery.moc"
