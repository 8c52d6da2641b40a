// BackgroundJob (ui/core/backgroundjob.h): results come back on the owner's thread with
// their stamp; a job overtaken by a newer run() or a drop() is dropped, whatever the order
// in which the pool finishes them. With Policy::OneAtATime a newer run() waits for the
// running job, and only the newest waiting request starts.
#include "core/backgroundjob.h"

#include <QScopeGuard>
#include <QSemaphore>
#include <QTest>
#include <QThread>
#include <QThreadPool>
#include <algorithm>
#include <atomic>

using namespace tilescope::ui;

class TstBackgroundJob : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() {
        // The first job blocks one pool thread; the others need another one (a 1-core
        // machine's pool has a single thread).
        BackgroundJob::pool()->setMaxThreadCount(
            std::max(4, BackgroundJob::pool()->maxThreadCount()));
    }
    void newestWins() {
        BackgroundJob job(this);
        // Every job waits at its own gate: a job that is done before the next run() starts
        // is delivered (nothing newer existed yet), so the order is forced here.
        QSemaphore g1, g2, g3;
        const auto open = qScopeGuard([&] {
            g1.release();
            g2.release();
            g3.release();
        }); // also when a check fails
        QList<int> got;
        QList<quint64> stamps;
        bool onOwnerThread = true;
        auto done = [&](int v, quint64 stamp) {
            got << v;
            stamps << stamp;
            onOwnerThread = onOwnerThread && QThread::currentThread() == thread();
        };
        auto gated = [](QSemaphore& g, int v) {
            return [&g, v] {
                g.acquire();
                return v;
            };
        };
        job.run(1, gated(g1, 1), done);
        job.run(2, gated(g2, 2), done);
        job.run(3, gated(g3, 3), done);
        QCOMPARE(job.stamp(), quint64(3));
        g3.release(); // the newest finishes first, the older ones after it
        QTRY_COMPARE(got, QList<int>{3});
        g2.release();
        g1.release();
        QTRY_VERIFY(!job.busy());
        QCOMPARE(got, QList<int>{3});
        QCOMPARE(stamps, QList<quint64>{3});
        QCOMPARE(job.droppedCount(), 2);
        QVERIFY(onOwnerThread);
    }
    void dropDiscardsRunning() {
        BackgroundJob job(this);
        // The job waits at a gate until after drop(): a job already done when run()
        // attaches its continuation is delivered at once, before drop() could come.
        QSemaphore gate;
        const auto open = qScopeGuard([&] { gate.release(); });
        int calls = 0;
        job.run(
            7,
            [&gate] {
                gate.acquire();
                return 7;
            },
            [&](int, quint64) { ++calls; });
        job.drop();
        gate.release();
        QTRY_VERIFY(!job.busy());
        QCOMPARE(calls, 0);
        QCOMPARE(job.droppedCount(), 1);
    }
    void overlapStartsAtOnce() {
        // The default policy hands every run() to the pool at once.
        BackgroundJob job(this);
        QSemaphore gate;
        const auto open = qScopeGuard([&] { gate.release(3); });
        std::atomic<int> entered{0};
        auto work = [&] {
            ++entered;
            gate.acquire();
            return 0;
        };
        for (int i = 0; i < 3; ++i)
            job.run(quint64(i), work, [](int, quint64) {});
        QCOMPARE(job.startedCount(), 3);
        QTRY_COMPARE(entered.load(), 3); // all three compute side by side
        gate.release(3);
        QTRY_VERIFY(!job.busy());
        QCOMPARE(job.droppedCount(), 2);
    }
    void oneAtATimeRunsNewestAfterRunning() {
        BackgroundJob job(this, BackgroundJob::Policy::OneAtATime);
        QSemaphore g1, g3;
        const auto open = qScopeGuard([&] {
            g1.release();
            g3.release();
        });
        std::atomic<int> entered{0};
        QList<int> got;
        QList<quint64> stamps;
        auto done = [&](int v, quint64 stamp) {
            got << v;
            stamps << stamp;
        };
        auto gated = [&entered](QSemaphore* g, int v) {
            return [&entered, g, v] {
                ++entered;
                if (g) g->acquire();
                return v;
            };
        };
        job.run(1, gated(&g1, 1), done);
        QTRY_COMPARE(entered.load(), 1);
        job.run(2, gated(nullptr, 2), done); // waits for job 1...
        job.run(3, gated(&g3, 3), done);     // ...and is replaced by job 3 before it starts
        QCOMPARE(job.startedCount(), 1);
        QCOMPARE(job.supersededCount(), 1);
        QCOMPARE(job.stamp(), quint64(3));
        QVERIFY(job.busy());
        QTest::qWait(50);
        QCOMPARE(entered.load(), 1); // nothing else computes while job 1 does
        g1.release();                // job 1 returns: dropped, job 3 starts
        QTRY_COMPARE(job.startedCount(), 2);
        QTRY_COMPARE(entered.load(), 2);
        QCOMPARE(job.droppedCount(), 1);
        QVERIFY(got.isEmpty());
        QVERIFY(job.busy());
        g3.release();
        QTRY_VERIFY(!job.busy());
        QCOMPARE(got, QList<int>{3});
        QCOMPARE(stamps, QList<quint64>{3});
        QCOMPARE(entered.load(), 2); // job 2 never ran
        // Idle again: the next run() starts at once.
        job.run(4, gated(nullptr, 4), done);
        QCOMPARE(job.startedCount(), 3);
        QTRY_COMPARE(got, (QList<int>{3, 4}));
    }
    void dropCancelsWaitingJob() {
        BackgroundJob job(this, BackgroundJob::Policy::OneAtATime);
        QSemaphore gate;
        const auto open = qScopeGuard([&] { gate.release(); });
        std::atomic<int> entered{0};
        int calls = 0;
        auto work = [&] {
            ++entered;
            gate.acquire();
            return 0;
        };
        job.run(1, work, [&](int, quint64) { ++calls; });
        job.run(
            2, [&] { return ++entered; }, [&](int, quint64) { ++calls; });
        job.drop(); // the running job is dropped, the waiting one never starts
        QVERIFY(job.busy());
        QCOMPARE(job.supersededCount(), 1);
        gate.release();
        QTRY_VERIFY(!job.busy());
        QTest::qWait(50);
        QCOMPARE(entered.load(), 1);
        QCOMPARE(calls, 0);
        QCOMPARE(job.startedCount(), 1);
        QCOMPARE(job.droppedCount(), 1);
    }
    // Jobs run on the application's pool and leave Qt's global one alone: Qt's raster
    // paint engine hands parts of large fills to the global pool and waits for them on the
    // GUI thread, so jobs filling that pool froze painting (one core: 3 s while sampling).
    void globalPoolStaysFree() {
        QVERIFY(BackgroundJob::pool() != QThreadPool::globalInstance());
        QVERIFY(BackgroundJob::pool()->maxThreadCount() >= 2);
        QSemaphore gate;
        const auto open = qScopeGuard([&] { gate.release(2); });
        std::atomic<int> entered{0};
        QThread* ranOn[2] = {nullptr, nullptr};
        BackgroundJob a(this), b(this);
        auto work = [&](int i) {
            return [&, i] {
                ranOn[i] = QThread::currentThread();
                ++entered;
                gate.acquire();
                return i;
            };
        };
        int calls = 0;
        a.run(1, work(0), [&](int, quint64) { ++calls; });
        b.run(1, work(1), [&](int, quint64) { ++calls; });
        QTRY_COMPARE(entered.load(), 2); // both run at once, even on one core
        QCOMPARE(QThreadPool::globalInstance()->activeThreadCount(), 0);
        QCOMPARE(BackgroundJob::pool()->activeThreadCount(), 2);
        for (QThread* t : ranOn)
            QVERIFY(t && t != thread());
        gate.release(2);
        QTRY_COMPARE(calls, 2);
    }
    // The owner goes away while its job runs: the result is dropped and nothing touches
    // the dead owner (with a continuation context that died first, a debug build aborted
    // in qfuture_impl.h: "ASSERT: context").
    void ownerDestroyedWhileRunning() {
        QSemaphore gate;
        const auto open = qScopeGuard([&] { gate.release(); });
        int calls = 0;
        {
            QObject owner;
            BackgroundJob job(&owner, BackgroundJob::Policy::OneAtATime);
            job.run(
                1,
                [&] {
                    gate.acquire();
                    return 1;
                },
                [&](int, quint64) { ++calls; });
            job.run(
                2, [] { return 2; }, [&](int, quint64) { ++calls; }); // waiting
        }
        gate.release();
        QTRY_COMPARE(BackgroundJob::pool()->activeThreadCount(), 0);
        QTest::qWait(100);
        QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
        QCOMPARE(calls, 0);
    }
};

QTEST_GUILESS_MAIN(TstBackgroundJob)
#include "tst_backgroundjob.moc"
