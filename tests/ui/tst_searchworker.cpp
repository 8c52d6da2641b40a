// The search worker on its own thread: start, pause, resume, stop, a natural end, and
// edits / pins handed over while it runs (the run continues from the handed-over tree).
#include "core/searchworker.h"
#include "model/model_loader.h"
#include "tree/ratree.h"

#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <atomic>

using namespace tilescope;
using namespace tilescope::ui;

class TstSearchWorker : public QObject {
    Q_OBJECT
  private:
    QThread m_thread;
    SearchWorker* m_worker = nullptr;
    std::shared_ptr<const Network> m_net;
    std::shared_ptr<const Hardware> m_hw;
    RATree m_start;
    quint64 m_gen = 0;

    std::shared_ptr<RunRequest> request(long long iterations) {
        auto r = std::make_shared<RunRequest>();
        r->generation = ++m_gen;
        r->net = m_net;
        r->hw = m_hw;
        r->config.seed = 7;
        r->config.iterations = iterations;
        r->config.totalBatch = 8;
        r->config.beta = 1; // unused when iterations is set
        r->config.initialTree = m_start;
        return r;
    }
    void start(std::shared_ptr<RunRequest> r) { m_worker->startRun(std::move(r)); }
    static RunState stateOf(const QList<QVariant>& args) { return args.at(1).value<RunState>(); }
    static bool sawState(const QSignalSpy& spy, RunState s) {
        for (const auto& a : spy)
            if (stateOf(a) == s) return true;
        return false;
    }
    static SnapshotPtr snap(const QSignalSpy& spy, qsizetype i) {
        return spy.at(i).at(0).value<SnapshotPtr>();
    }
    static OutcomePtr outcome(const QSignalSpy& spy, qsizetype i) {
        return spy.at(i).at(0).value<OutcomePtr>();
    }

  private slots:
    void initTestCase() {
        auto net = loadModel(TILESCOPE_SAMPLES "/models/resnet50.onnx");
        QVERIFY(net.ok());
        m_net = std::make_shared<const Network>(std::move(net).value());
        Hardware hw;
        QVERIFY(presetHardware("edge", hw));
        m_hw = std::make_shared<const Hardware>(hw);
        auto t = defaultInitialTree(*m_net, *m_hw, SearchMode::Set, 8, Objective{});
        QVERIFY(t.ok());
        m_start = *t;
        m_worker = new SearchWorker;
        m_worker->moveToThread(&m_thread);
        connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
        m_thread.start();
    }
    void cleanupTestCase() {
        m_worker->requestStop();
        m_thread.quit();
        m_thread.wait();
    }

    void runsToTheEnd() {
        QSignalSpy snaps(m_worker, &SearchWorker::snapshotReady);
        QSignalSpy outs(m_worker, &SearchWorker::outcomeReady);
        QSignalSpy states(m_worker, &SearchWorker::stateChanged);
        // The signals are emitted on the thread that created the worker (this one), never on
        // the worker's: a direct connection sees where.
        std::atomic<int> offThread = 0;
        const auto where = connect(
            m_worker, &SearchWorker::snapshotReady, this,
            [&offThread] { offThread += QThread::currentThread() != qApp->thread(); },
            Qt::DirectConnection);
        auto r = request(400);
        start(r);
        QTRY_VERIFY_WITH_TIMEOUT(sawState(states, RunState::Finished), 30000);
        disconnect(where);
        QCOMPARE(offThread.load(), 0);
        QCOMPARE(outs.count(), 1);
        const OutcomePtr o = outcome(outs, 0);
        QVERIFY(o->final);
        QVERIFY(!o->stopped);
        QCOMPARE(o->generation, r->generation);
        // One chain of 400: the Set portfolio's warm-up chains take their share of the same
        // total (docs/search.md).
        QCOMPARE(o->result.iterations, 400);
        QCOMPARE(o->result.iterationsRun, 400);
        QVERIFY(o->result.best.valid);
        QVERIFY(o->result.best.cost <= o->result.initialEval.cost);
        // The final snapshot always arrives and carries the best.
        QVERIFY(snaps.count() >= 1);
        const SnapshotPtr last = snap(snaps, snaps.count() - 1);
        QVERIFY(last->final);
        QCOMPARE(last->iteration, 400);
        QCOMPARE(last->bestCost, o->result.best.cost);
        for (const auto& a : snaps)
            QCOMPARE(a.at(0).value<SnapshotPtr>()->generation, r->generation);
        QVERIFY(!m_worker->busy());
    }

    void pauseResumeStop() {
        QSignalSpy snaps(m_worker, &SearchWorker::snapshotReady);
        QSignalSpy outs(m_worker, &SearchWorker::outcomeReady);
        QSignalSpy states(m_worker, &SearchWorker::stateChanged);
        start(request(100000000)); // far more than the test lets it run
        QTRY_VERIFY_WITH_TIMEOUT(snaps.count() >= 3, 20000);
        QVERIFY(m_worker->busy());

        m_worker->requestPause(true);
        QTRY_VERIFY_WITH_TIMEOUT(sawState(states, RunState::Paused), 5000);
        QTest::qWait(300); // snapshots already queued before the pause drain here
        const qsizetype n = snaps.count();
        const long long it = snap(snaps, n - 1)->iteration;
        QTest::qWait(700);
        QCOMPARE(snaps.count(), n); // nothing advances while paused
        QCOMPARE(outs.count(), 0);

        m_worker->requestPause(false);
        QTRY_VERIFY_WITH_TIMEOUT(snaps.count() >= n + 2, 10000);
        QVERIFY(snap(snaps, snaps.count() - 1)->iteration > it);
        QCOMPARE(stateOf(states.last()), RunState::Running);

        m_worker->requestStop();
        QTRY_VERIFY_WITH_TIMEOUT(sawState(states, RunState::Stopped), 10000);
        QCOMPARE(outs.count(), 1);
        QVERIFY(outcome(outs, 0)->final);
        QVERIFY(outcome(outs, 0)->stopped);
        QVERIFY(snap(snaps, snaps.count() - 1)->final);
        QTRY_VERIFY(!m_worker->busy());
    }

    void stopWhilePaused() {
        QSignalSpy states(m_worker, &SearchWorker::stateChanged);
        start(request(100000000));
        QTRY_VERIFY_WITH_TIMEOUT(sawState(states, RunState::Running), 10000);
        m_worker->requestPause(true);
        QTRY_VERIFY_WITH_TIMEOUT(sawState(states, RunState::Paused), 5000);
        m_worker->requestStop();
        QTRY_VERIFY_WITH_TIMEOUT(sawState(states, RunState::Stopped), 10000);
    }

    void editWhileRunning() {
        QSignalSpy snaps(m_worker, &SearchWorker::snapshotReady);
        QSignalSpy outs(m_worker, &SearchWorker::outcomeReady);
        QSignalSpy states(m_worker, &SearchWorker::stateChanged);
        start(request(100000000));
        QTRY_VERIFY_WITH_TIMEOUT(snaps.count() >= 2, 20000);
        // The user wraps two leaves in an S cut: the worker restarts from that tree.
        auto edited = edit::wrap(m_start, *m_net, m_start.root, 1, 2, NodeType::S, 1);
        QVERIFY(edited.ok());
        m_worker->requestReplaceTree(*edited);
        QTRY_VERIFY_WITH_TIMEOUT(outs.count() >= 1, 10000);
        const OutcomePtr seg = outcome(outs, 0);
        QVERIFY(!seg->final); // the run goes on
        QTRY_VERIFY_WITH_TIMEOUT(snap(snaps, snaps.count() - 1)->segment == 1, 10000);
        m_worker->requestStop();
        QTRY_VERIFY_WITH_TIMEOUT(sawState(states, RunState::Stopped), 10000);
        QCOMPARE(outs.count(), 2);
        const OutcomePtr last = outcome(outs, 1);
        QVERIFY(last->final);
        // The second segment started from exactly the edited tree.
        QVERIFY(last->result.initialTree == *edited);
        // Iterations continue across the restart: no snapshot goes backwards.
        for (qsizetype i = 1; i < snaps.count(); ++i)
            QVERIFY(snap(snaps, i)->iteration >= snap(snaps, i - 1)->iteration);
    }

    void pinWhileRunning() {
        QSignalSpy snaps(m_worker, &SearchWorker::snapshotReady);
        QSignalSpy outs(m_worker, &SearchWorker::outcomeReady);
        QSignalSpy states(m_worker, &SearchWorker::stateChanged);
        // A small run that ends on its own after the pin (the budget is per chain).
        start(request(3000));
        QTRY_VERIFY_WITH_TIMEOUT(snaps.count() >= 1, 20000);
        auto wrapped = edit::wrap(m_start, *m_net, m_start.root, 3, 3, NodeType::T, 1);
        QVERIFY(wrapped.ok());
        const int cut = wrapped->nodeAtPath("/3");
        auto pinned = edit::setPinned(*wrapped, cut, true);
        QVERIFY(pinned.ok());
        const std::string frozen = subtreeToText(*pinned, *m_net, cut);
        m_worker->requestReplaceTree(*pinned);
        QTRY_VERIFY_WITH_TIMEOUT(
            sawState(states, RunState::Finished) || sawState(states, RunState::Stopped), 60000);
        const OutcomePtr last = outcome(outs, outs.count() - 1);
        QVERIFY(last->final);
        if (outs.count() < 2) QSKIP("the run ended before the pin arrived (machine too fast)");
        QVERIFY(last->result.initialTree == *pinned);
        // The pinned cut survives unchanged in the best tree.
        const RATree& best = last->result.bestTree;
        bool found = false;
        for (int i = 0; i < best.size(); ++i)
            if (best.attached(i) && best.node(i).pinned) {
                QCOMPARE(subtreeToText(best, *m_net, i), frozen);
                found = true;
            }
        QVERIFY(found);
    }

    // An edit (or a pin) restarts the engine from the edited tree, which
    // starts worse than the best found so far; the run's best must survive the restart in
    // the snapshots and in every later outcome.
    void editKeepsBestSoFar() {
        QSignalSpy snaps(m_worker, &SearchWorker::snapshotReady);
        QSignalSpy outs(m_worker, &SearchWorker::outcomeReady);
        QSignalSpy states(m_worker, &SearchWorker::stateChanged);
        start(request(100000000));
        QTRY_VERIFY_WITH_TIMEOUT(snaps.count() >= 5, 20000);
        // Hand back the (much worse) start tree with a pin, as pressing P on it does.
        auto pinned = edit::setPinned(m_start, m_start.node(m_start.root).children[2], true);
        QVERIFY(pinned.ok());
        m_worker->requestReplaceTree(*pinned);
        QTRY_VERIFY_WITH_TIMEOUT(outs.count() >= 1, 10000);
        const OutcomePtr seg = outcome(outs, 0);
        const double before = seg->best.cost;
        QVERIFY(seg->best.valid);
        QVERIFY(before < seg->result.initialEval.cost); // the first segment improved
        const qsizetype firstAfter = snaps.count();
        QTRY_VERIFY_WITH_TIMEOUT(snaps.count() >= firstAfter + 3, 10000);
        m_worker->requestStop();
        QTRY_VERIFY_WITH_TIMEOUT(sawState(states, RunState::Stopped), 10000);
        for (qsizetype i = firstAfter; i < snaps.count(); ++i)
            QVERIFY2(snap(snaps, i)->bestCost <= before * (1 + 1e-12),
                     qPrintable(QStringLiteral("snapshot %1: best %2 > %3")
                                    .arg(i)
                                    .arg(snap(snaps, i)->bestCost)
                                    .arg(before)));
        const OutcomePtr last = outcome(outs, outs.count() - 1);
        QVERIFY(last->final);
        QVERIFY(last->best.cost <= before);
        QVERIFY(last->result.initialTree == *pinned); // the restart used the edited tree
    }

    void adoptBestContinues() {
        QSignalSpy snaps(m_worker, &SearchWorker::snapshotReady);
        QSignalSpy outs(m_worker, &SearchWorker::outcomeReady);
        QSignalSpy states(m_worker, &SearchWorker::stateChanged);
        start(request(100000000));
        QTRY_VERIFY_WITH_TIMEOUT(snaps.count() >= 3, 20000);
        m_worker->requestAdoptBest();
        QTRY_VERIFY_WITH_TIMEOUT(outs.count() >= 1, 10000);
        const OutcomePtr o = outcome(outs, 0);
        QVERIFY(o->adopt);
        QVERIFY(!o->final);
        QVERIFY(o->result.best.valid);
        QVERIFY(m_worker->busy());
        m_worker->requestStop();
        QTRY_VERIFY_WITH_TIMEOUT(sawState(states, RunState::Stopped), 10000);
        // The next segment started from the adopted best.
        QVERIFY(outcome(outs, outs.count() - 1)->result.initialTree == o->bestTree);
    }

    void timedRunCountsDownAndPauses() {
        QSignalSpy snaps(m_worker, &SearchWorker::snapshotReady);
        QSignalSpy outs(m_worker, &SearchWorker::outcomeReady);
        QSignalSpy states(m_worker, &SearchWorker::stateChanged);
        auto r = request(0);
        r->config.seconds = 2.0;
        start(r);
        QTRY_VERIFY_WITH_TIMEOUT(snaps.count() >= 3, 20000);
        m_worker->requestPause(true);
        QTRY_VERIFY_WITH_TIMEOUT(sawState(states, RunState::Paused), 5000);
        QTest::qWait(300);
        const qsizetype n = snaps.count();
        const SnapshotPtr before = snap(snaps, n - 1);
        QTest::qWait(700);
        QCOMPARE(snaps.count(), n); // the time budget does not run while paused
        m_worker->requestPause(false);
        QTRY_VERIFY_WITH_TIMEOUT(sawState(states, RunState::Finished), 30000);
        const SnapshotPtr last = snap(snaps, snaps.count() - 1);
        QVERIFY(last->final);
        for (qsizetype i = 0; i + 1 < snaps.count(); ++i) {
            const SnapshotPtr s = snap(snaps, i);
            QVERIFY(s->secondsLeft >= 0 && s->secondsLeft <= 2.0);
            QCOMPARE(s->etaSeconds, s->secondsLeft);
        }
        QVERIFY(before->secondsLeft > 0);
        // The pause ended a segment; the run went on from its best with the time left.
        QVERIFY(outs.count() >= 2);
        const OutcomePtr fin = outcome(outs, outs.count() - 1);
        QVERIFY(fin->final);
        QVERIFY(fin->result.initialTree == outcome(outs, outs.count() - 2)->result.bestTree);
        QVERIFY(fin->result.config.seconds > 0 && fin->result.config.seconds < 2.0);
        QTRY_VERIFY(!m_worker->busy());
    }

    void compareShowsDpLp() {
        QSignalSpy done(m_worker, &SearchWorker::compareReady);
        auto r = request(60);
        r->config.chains = 2;
        m_worker->startCompare(r);
        QTRY_VERIFY_WITH_TIMEOUT(done.count() == 1, 60000);
        const ComparePtr c = done.at(0).at(0).value<ComparePtr>();
        QVERIFY(!c->stopped);
        const auto modes = compareModes();
        QCOMPARE(c->rows.size(), modes.size());
        for (size_t i = 0; i < modes.size(); ++i) {
            QCOMPARE(c->rows[i].mode, modes[i]);
            QVERIFY2(c->rows[i].ok, qPrintable(c->rows[i].error));
        }
        QCOMPARE(c->rows[2].mode, SearchMode::DpLp);
        // SA (last) was seeded with the others' bests.
        for (size_t i = 0; i + 1 < c->rows.size(); ++i)
            QVERIFY(c->rows.back().eval.cost <= c->rows[i].eval.cost);
        QTRY_VERIFY(!m_worker->busy());
    }
};

QTEST_MAIN(TstSearchWorker)
#include "tst_searchworker.moc"
