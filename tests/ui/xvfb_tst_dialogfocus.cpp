// Keyboard shortcuts after a dialog closes, under X (xvfb, QT_QPA_PLATFORM=xcb) with real
// key presses (xdotool, through the X server's focus): the user guide (F1, closed with Esc)
// and the About box (a modal dialog) each hand the keyboard back to the main window, so the
// next F1 opens the guide again without a click on the window first.
#include "testwindow.h"
#include "widgets/userguidedialog.h"

#include <QApplication>
#include <QMessageBox>
#include <QProcess>
#include <QStandardPaths>
#include <QTest>
#include <QTimer>

using namespace tilescope;
using namespace tilescope::ui;

class XvfbTstDialogFocus : public QObject {
    Q_OBJECT
  private:
    QTemporaryDir m_dir;
    QString m_xdotool;

    // A key pressed as a user would: through X to the window that has the X focus.
    void press(const char* key) {
        if (!m_xdotool.isEmpty()) {
            QProcess::execute(m_xdotool, {QStringLiteral("key"), QLatin1String(key)});
            return;
        }
        // Without xdotool: to the widget Qt has the keyboard focus on, if any window has it.
        QWidget* to = QApplication::focusWidget();
        if (!to) to = QApplication::activeWindow();
        if (to)
            QTest::keyClick(to, QLatin1String(key) == QLatin1String("Escape") ? Qt::Key_Escape
                                                                              : Qt::Key_F1);
    }

    static UserGuideDialog* guide(QWidget* w) { return w->findChild<UserGuideDialog*>(); }

  private slots:
    void initTestCase() {
        if (QGuiApplication::platformName() != QLatin1String("xcb"))
            QSKIP("needs the xcb platform (run under xvfb-run with QT_QPA_PLATFORM=xcb)");
        m_xdotool = QStandardPaths::findExecutable(QStringLiteral("xdotool"));
    }

    void shortcutsWorkAfterDialogs() {
        auto w = openTestWindow(m_dir);
        QVERIFY(w);
        w->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(w.get()));
        // F1 opens the guide, Esc closes it; the main window has the keyboard again.
        for (int round = 0; round < 2; ++round) {
            press("F1");
            QTRY_VERIFY_WITH_TIMEOUT(guide(w.get()) && guide(w.get())->isActiveWindow(), 5000);
            press("Escape");
            QTRY_VERIFY_WITH_TIMEOUT(!guide(w.get()), 5000);
            QTRY_COMPARE_WITH_TIMEOUT(QApplication::activeWindow(), w.get(), 5000);
        }
        // A modal dialog (About), closed with Esc: F1 works right after it.
        QTimer::singleShot(300, this, [this] { press("Escape"); });
        QMessageBox::about(w.get(), QStringLiteral("About"), QStringLiteral("About"));
        QTRY_COMPARE_WITH_TIMEOUT(QApplication::activeWindow(), w.get(), 5000);
        press("F1");
        QTRY_VERIFY_WITH_TIMEOUT(guide(w.get()) && guide(w.get())->isVisible(), 5000);
        guide(w.get())->close();
    }
};

QTEST_MAIN(XvfbTstDialogFocus)
#include "xvfb_tst_dialogfocus.moc"
