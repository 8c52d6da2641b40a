#include "core/backgroundjob.h"

#include <QCoreApplication>
#include <QThread>
#include <algorithm>

namespace tilescope::ui {

namespace {

// As QCoreApplication does for the global pool: when the application object goes away,
// the jobs not yet started are dropped and the running ones are waited for (their owners
// are gone by then, so their results are dropped), before anything they use is torn down.
void drainJobs() {
    BackgroundJob::pool()->clear();
    BackgroundJob::pool()->waitForDone();
}

// At least two threads, so that on one core a quick job (an evaluation) still starts
// while a long one (a sampling walk, a simulation) runs.
class JobPool : public QThreadPool {
  public:
    JobPool() {
        setObjectName(QStringLiteral("TilescopeJobs"));
        setMaxThreadCount(std::max(2, QThread::idealThreadCount()));
        if (QCoreApplication::instance()) qAddPostRoutine(drainJobs);
    }
};

} // namespace

QThreadPool* BackgroundJob::pool() {
    static JobPool jobs;
    return &jobs;
}

} // namespace tilescope::ui
