// Off-thread UI jobs whose results can go stale (issue 18): BackgroundJob::run() starts
// `work` on the thread pool and hands its result to `done` on the owner's thread, unless a
// newer run() or a drop() came after it; then the result is dropped. Each job carries the
// stamp it was started with (usually Document::revision()), so `done` can check it
// against the document too. Replaces the hand-written QtConcurrent::run(...).then(this,
// ...) + revision check of every view.
#pragma once

#include <QObject>
#include <QPointer>
#include <QtConcurrent>
#include <memory>
#include <type_traits>
#include <utility>

namespace tilescope::ui {

class BackgroundJob {
  public:
    // `owner` receives the results on its thread; the job must not outlive it (make the
    // BackgroundJob a member of the owner).
    explicit BackgroundJob(QObject* owner) : m_owner(owner), m_state(std::make_shared<State>()) {}
    BackgroundJob(const BackgroundJob&) = delete;
    BackgroundJob& operator=(const BackgroundJob&) = delete;
    ~BackgroundJob() { drop(); }

    // work() -> R runs on the thread pool; done(R, stamp) runs on the owner's thread if
    // this is still the newest job (possibly before run() returns when the work is done by
    // then: Qt runs a finished future's continuation at once).
    template <class Work, class Done> void run(quint64 stamp, Work work, Done done) {
        using R = std::invoke_result_t<Work>;
        const quint64 ticket = ++m_state->ticket;
        ++m_state->running;
        m_state->stamp = stamp;
        QtConcurrent::run(std::move(work))
            .then(m_owner.data(),
                  [state = m_state, ticket, stamp, done = std::move(done)](R result) {
                      --state->running;
                      if (ticket != state->ticket) {
                          ++state->dropped;
                          return;
                      }
                      done(std::move(result), stamp);
                  });
    }
    // Whatever is running now is dropped when it returns.
    void drop() { ++m_state->ticket; }
    bool busy() const { return m_state->running > 0; }
    quint64 stamp() const { return m_state->stamp; }      // of the newest job
    int droppedCount() const { return m_state->dropped; } // tests

  private:
    // Shared with the continuations, which run on the owner's thread only.
    struct State {
        quint64 ticket = 0;
        quint64 stamp = 0;
        int running = 0;
        int dropped = 0;
    };
    QPointer<QObject> m_owner;
    std::shared_ptr<State> m_state;
};

} // namespace tilescope::ui
