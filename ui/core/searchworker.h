// The search worker (the hotspot/heaptrack pattern): one QObject living on its own
// QThread owns the running engine search. The GUI starts runs with queued calls and
// controls a running one through the thread-safe request*() methods (the worker's event
// loop is busy inside the search, so controls cannot be queued slots). Results come back
// as immutable snapshots over queued signals, throttled to about 10 per second.
#pragma once

#include "core/searchsnapshot.h"

#include <QElapsedTimer>
#include <QObject>

#include <condition_variable>
#include <mutex>
#include <optional>
#include <stop_token>

namespace tilescope::ui {

class SearchWorker : public QObject {
    Q_OBJECT
public:
    explicit SearchWorker(QObject* parent = nullptr);

    // Run on the worker thread (QMetaObject::invokeMethod(worker, [=]{ worker->run(r); },
    // Qt::QueuedConnection)). Returns when the run ends.
    void run(std::shared_ptr<const RunRequest> request);
    // LS, LP and SA from their default starts with the request's settings (metrics panel).
    void compare(std::shared_ptr<const RunRequest> request);

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

private:
    void waitWhilePaused(quint64 generation);
    void beginRun();

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
