// Off-thread UI jobs whose results can go stale: BackgroundJob::run() starts
// `work` on the thread pool and hands its result to `done` on the owner's thread, unless a
// newer run() or a drop() came after it; then the result is dropped. Each job carries the
// stamp it was started with (usually Document::revision()), so `done` can check it
// against the document too. Every asynchronous UI job goes through this class (the search
// itself has its worker thread, ui/core/searchworker.h); it is the only user of
// QtConcurrent in ui/ and app/.
#pragma once

#include <QObject>
#include <QThreadPool>
#include <QtConcurrent>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace tilescope::ui {

class BackgroundJob {
  public:
    // Overlap: every run() starts at once; older jobs keep the pool busy but their results
    // are dropped (cheap jobs, where waiting would only add latency).
    // OneAtATime: a run() while a job is under way waits until that job returns (whose
    // result is then dropped) and replaces any run() that was already waiting, so at most
    // one job computes and only the newest request is started next (expensive jobs).
    enum class Policy { Overlap, OneAtATime };

    // `owner` receives the results on its thread; the job must not outlive it (make the
    // BackgroundJob a member of the owner).
    explicit BackgroundJob(QObject* owner, Policy policy = Policy::Overlap)
        : m_policy(policy), m_state(std::make_shared<State>()) {
        m_state->anchor = new QObject;
        m_state->anchor->moveToThread(owner->thread());
    }
    BackgroundJob(const BackgroundJob&) = delete;
    BackgroundJob& operator=(const BackgroundJob&) = delete;
    // A job still running keeps the anchor (the continuations' context) alive until it
    // returns: Qt asserts that a continuation's context outlives the job (qfuture_impl.h),
    // so the owner may go away with jobs running; their results are dropped.
    ~BackgroundJob() {
        drop();
        if (m_state->running == 0)
            delete m_state->anchor;
        else
            m_state->orphaned = true;
    }

    // The pool every job runs on: the application's own, not QThreadPool::globalInstance().
    // Qt's raster paint engine (Qt 6.4) splits large fills over the global pool and blocks
    // the GUI thread until they are done, so a long job there froze painting whenever it
    // filled that pool (on one core, sampling 100,000 trees froze the window for 3 s).
    static QThreadPool* pool();

    // work() -> R runs on pool(); done(R, stamp) runs on the owner's thread if
    // this is still the newest job (possibly before run() returns when the work is done by
    // then: Qt runs a finished future's continuation at once).
    template <class Work, class Done> void run(quint64 stamp, Work work, Done done) {
        const quint64 ticket = ++m_state->ticket;
        m_state->stamp = stamp;
        if (m_policy == Policy::OneAtATime && m_state->running > 0) {
            if (m_state->pending) ++m_state->superseded;
            m_state->pending = [ticket, stamp, work = std::move(work),
                                done = std::move(done)](const std::shared_ptr<State>& state) {
                launch(state, ticket, stamp, work, done);
            };
            return;
        }
        launch(m_state, ticket, stamp, std::move(work), std::move(done));
    }
    // Whatever is running now is dropped when it returns; a waiting job never starts.
    void drop() {
        ++m_state->ticket;
        if (m_state->pending) {
            m_state->pending = nullptr;
            ++m_state->superseded;
        }
    }
    // A job is computing or waiting to.
    bool busy() const { return m_state->running > 0 || m_state->pending != nullptr; }
    quint64 stamp() const { return m_state->stamp; }      // of the newest job
    int startedCount() const { return m_state->started; } // jobs handed to the pool
    int droppedCount() const { return m_state->dropped; } // computed, result dropped
    // OneAtATime: requests replaced by a newer one (or dropped) before they started.
    int supersededCount() const { return m_state->superseded; }

  private:
    // Shared with the continuations, which run on the owner's thread only.
    struct State {
        quint64 ticket = 0;
        quint64 stamp = 0;
        int running = 0;
        int started = 0;
        int dropped = 0;
        int superseded = 0;
        std::function<void(const std::shared_ptr<State>&)> pending; // OneAtATime only
        QObject* anchor = nullptr; // in the owner's thread; outlives the running jobs
        bool orphaned = false;     // the BackgroundJob is gone: the last job deletes anchor
    };

    template <class Work, class Done>
    static void launch(const std::shared_ptr<State>& state, quint64 ticket, quint64 stamp,
                       Work work, Done done) {
        using R = std::invoke_result_t<Work>;
        ++state->running;
        ++state->started;
        QtConcurrent::run(pool(), std::move(work))
            .then(state->anchor, [state, ticket, stamp, done = std::move(done)](R result) {
                --state->running;
                if (state->orphaned) {
                    if (state->running == 0) state->anchor->deleteLater();
                    return;
                }
                if (ticket != state->ticket) {
                    ++state->dropped;
                } else {
                    done(std::move(result), stamp);
                }
                // The request that waited for this job (it is the newest, so the result
                // above was dropped) starts now.
                if (state->running == 0 && state->pending) {
                    auto next = std::move(state->pending);
                    state->pending = nullptr;
                    next(state);
                }
            });
    }

    Policy m_policy;
    std::shared_ptr<State> m_state;
};

} // namespace tilescope::ui
