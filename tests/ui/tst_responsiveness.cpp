// The GUI thread stays responsive during a ResNet-50 search (docs/method.md §6): a 5 ms heartbeat
// timer measures the longest gap between its ticks while the search runs with live plots,
// an edit is handed to the worker mid-run and the best tree is adopted at the end.
#include "core/document.h"
#include "expectok.h"
#include "widgets/mainwindow.h"
#include "widgets/searchcontroller.h"
#include "widgets/searchpanel.h"
#include "widgets/stgraphview.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <QTimer>
#include <QUndoStack>

using namespace tilescope;
using namespace tilescope::ui;

class TstResponsiveness : public QObject {
    Q_OBJECT
  private slots:
    void heartbeatDuringSearch() {
        QStandardPaths::setTestModeEnabled(true);
        MainWindow w;
        w.setInteractive(false);
        w.resize(1500, 950);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.setBatch(8));
        QVERIFY(w.openModel(TILESCOPE_SAMPLES "/models/resnet50.onnx"));
        QTest::qWait(200);

        QElapsedTimer clock;
        qint64 last = 0, maxGap = 0, ticks = 0;
        QTimer beat;
        beat.setTimerType(Qt::PreciseTimer);
        beat.setInterval(5);
        connect(&beat, &QTimer::timeout, [&] {
            const qint64 now = clock.nsecsElapsed();
            if (last) maxGap = std::max(maxGap, now - last);
            last = now;
            ++ticks;
        });
        QSignalSpy finished(w.searchControl(), &SearchController::searchFinished);
        SearchConfig cfg = w.searchPanel()->settings();
        cfg.beta = 400; // N = 400 x 72 iterations: a few seconds of search to watch over
        w.searchPanel()->setSettings(cfg);
        clock.start();
        beat.start();
        w.searchControl()->start();
        QTRY_VERIFY_WITH_TIMEOUT(w.searchPanel()->pointCount() >= 3, 30000);
        // An edit mid-run: re-evaluated on the GUI thread, handed to the worker.
        Document* doc = w.document();
        QVERIFY_OK(doc->wrap(doc->tree().root, 1, 2, NodeType::S));
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 120000);
        w.searchControl()->adoptBest();
        QTest::qWait(500); // the S-T layout of the adopted tree arrives from the pool
        beat.stop();
        const double seconds = double(clock.nsecsElapsed()) * 1e-9;
        qInfo("heartbeat: %lld ticks in %.2f s, max gap %.1f ms, %d plot points", ticks, seconds,
              double(maxGap) * 1e-6, w.searchPanel()->pointCount());
        QVERIFY(w.searchPanel()->pointCount() >= 5);
        QCOMPARE(doc->undoStack()->text(doc->undoStack()->index() - 1),
                 QStringLiteral("Adopt best"));
        // docs/method.md §6: never blocked for more than 50 ms; twice that absorbs a loaded CI
        // machine.
        QVERIFY2(maxGap < 100'000'000,
                 qPrintable(QStringLiteral("max gap %1 ms").arg(double(maxGap) * 1e-6)));
    }
};

QTEST_MAIN(TstResponsiveness)
#include "tst_responsiveness.moc"
