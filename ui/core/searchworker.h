// The search worker (the hotspot/heaptrack pattern): one QObject living on its own
// QThread owns the running engine search. The GUI starts runs with startRun() /
// startCompare(), which post the call to the worker's thread, and controls a running one
// through the thread-safe request*() methods (the worker's event loop is busy inside the
// search, so controls cannot be posted calls). Results come back as immutable snapshots,
// throttled to about 10 per second; the signals are emitted on the thread that created the
// worker (the GUI thread), so its slots and QSignalSpy run there, directly.
//
// Both directions go through postCall() (core/crossthread.h), never through queued
// signals or QMetaObject::invokeMethod: the hand-off is then visible to ThreadSanitizer
// with Debian's uninstrumented Qt (docs/hardening.md).
#pragma once

#include "core/crossthread.h"
#include "core/searchsnapshot.h"

#include <QElapsedTimer>
#include <QObject>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <stop_token>

namespace tilescope::ui {

namespace detail {
class SearchWorkerRelay;
}

class SearchWorker : public QObject {
    Q_OBJECT
  public:
    // Create it on the thread that receives its signals, then move it to its own thread;
    // destroy it there once that thread's event loop has ended (QThread::finished ->
    // deleteLater, as MainWindow does). Results still queued for the GUI are then dropped.
    explicit SearchWorker(QObject* parent = nullptr);
    ~SearchWorker() override;

    // Thread-safe: queue a run / a comparison on the worker's thread; runs queued behind a
    // busy worker start when it is done.
    void startRun(std::shared_ptr<const RunRequest> request);
    // compareModes() (LS, LP, DP-LP, then SA seeded with their bests) with the request's
    // settings (metrics panel); each annealing mode gets the request's budget.
    void startCompare(std::shared_ptr<const RunRequest> request);

    // Thread-safe controls for the current run.
    void requestPause(bool paused);
    void requestStop();
    // The user edited or pinned: continue from this tree (pins are in the tree) with the
    // remaining budget and the same settings.
    void requestReplaceTree(const RATree& tree);
    // Ends the current segment, reports its best with adopt = true and continues from it.
    void requestAdoptBest();
    bool busy() const;

  signals:
    void snapshotReady(tilescope::ui::SnapshotPtr snapshot);
    void outcomeReady(tilescope::ui::OutcomePtr outcome);
    void compareReady(tilescope::ui::ComparePtr outcome);
    void stateChanged(quint64 generation, tilescope::ui::RunState state, const QString& message);

  protected:
    bool event(QEvent* e) override;

  private:
    // On the worker thread; return when the run ends.
    void run(std::shared_ptr<const RunRequest> request);
    void compare(std::shared_ptr<const RunRequest> request);
    void waitWhilePaused(quint64 generation);
    void beginRun();
    // A stop source for the next engine segment, already stopped when a stop, an adopt or
    // an edit is waiting.
    std::stop_source beginSegment();
    // The run's last snapshot again, marked final (when there is one), then the end state.
    void endRun(quint64 generation, const SnapshotPtr& last, RunState state,
                const QString& message);
    // Emit the signal on the creating thread, through m_relay.
    void sendSnapshot(SnapshotPtr snapshot);
    void sendOutcome(OutcomePtr outcome);
    void sendCompare(ComparePtr outcome);
    void sendState(quint64 generation, RunState state, const QString& message);

    // Lives on the creating thread; re-emits there, through direct connections to our
    // signals, what the worker posts to it. Set once in the constructor.
    detail::SearchWorkerRelay* const m_relay;

    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    bool m_busy = false;
    bool m_paused = false;
    bool m_stopAll = false;
    bool m_adopt = false;
    std::optional<RATree> m_pending;
    std::stop_source m_segmentStop;
    // Time spent paused in the current run (for the ETA), guarded by m_mutex.
    double m_pausedSeconds = 0;
};

} // namespace tilescope::ui
