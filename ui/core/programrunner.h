// Keeps a generated and simulated program for the document's current tree: regenerates it
// on the thread pool when the tree or the inputs change (debounced; a BackgroundJob runs
// one job at a time and drops stale results by the document's revision) and announces it. Shared by
// the views that show it (Instructions panel, S-T graph overlay) like the SelectionState is.
#pragma once

#include "core/backgroundjob.h"
#include "core/jobcontext.h"
#include "core/programrun.h"

#include <QObject>
#include <QTimer>
#include <memory>

namespace tilescope {
struct Network;
struct Hardware;
} // namespace tilescope

namespace tilescope::ui {

class Document;

class ProgramRunner : public QObject {
    Q_OBJECT
  public:
    explicit ProgramRunner(Document* doc, QObject* parent = nullptr);

    // The run for the document's current revision, or null (none yet, or being built).
    std::shared_ptr<const ProgramRun> current() const;
    std::shared_ptr<const ProgramRun> last() const { return m_last; } // newest finished run
    bool busy() const { return m_job.busy() || m_debounce.isActive(); }
    int jobsStarted() const {
        return m_job.startedCount();
    } // tests: nothing is regenerated needlessly
    void setDebounceMs(int ms) { m_debounce.setInterval(ms); }

  signals:
    void runReady(std::shared_ptr<const tilescope::ui::ProgramRun> run);
    void runStarted(); // a regeneration is under way (views may grey out)

  private:
    void schedule();
    void start();

    Document* m_doc;
    QTimer m_debounce;
    JobContext m_ctx; // the jobs' evaluation context (its memo caches outlive edits)
    std::shared_ptr<const ProgramRun> m_last;
    // An edit during a job makes the job wait for the running one, whose result is dropped.
    BackgroundJob m_job{this, BackgroundJob::Policy::OneAtATime};
};

} // namespace tilescope::ui
