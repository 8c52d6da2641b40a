#include "core/backgroundjob.h"

#include <QThread>
#include <algorithm>

namespace tilescope::ui {

QThreadPool* BackgroundJob::pool() {
    // At least two threads, so that on one core a quick job (an evaluation) still starts
    // while a long one (a sampling walk, a simulation) runs. Destroyed after main()
    // returns; it waits for the jobs still running, whose results are dropped.
    static QThreadPool jobs;
    static const bool sized = [] {
        jobs.setObjectName(QStringLiteral("TilescopeJobs"));
        jobs.setMaxThreadCount(std::max(2, QThread::idealThreadCount()));
        return true;
    }();
    (void)sized;
    return &jobs;
}

} // namespace tilescope::ui
