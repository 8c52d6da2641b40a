// The live best of a running search, ready for the views' faded overlay (a preview before
// adopting): the S-T graph and the NoC heatmap draw the best tree found
// so far over the document's own. Offered trees are evaluated (with intervals) and laid
// out on the thread pool, one job at a time and at most one per throttle interval, with
// the engine's own functions (StLayout::build, eval/linkload.h); clear() ends the preview
// when the run ends or its best is adopted.
#pragma once

#include "core/backgroundjob.h"
#include "core/jobcontext.h"
#include "core/stlayout.h"
#include "eval/evaluation.h"
#include "eval/linkload.h"
#include "tree/ratree.h"

#include <QObject>
#include <QTimer>
#include <memory>

namespace tilescope::ui {

class Document;

struct LiveBest {
    std::shared_ptr<const RATree> tree;
    std::shared_ptr<const Evaluation> eval; // detailed (intervals, link bytes)
    std::shared_ptr<const StLayout> layout; // the S-T rectangles of eval
    TileLoad load;                          // per tile busy fraction of eval's delay
};

class LiveBestPreview : public QObject {
    Q_OBJECT
  public:
    explicit LiveBestPreview(Document* doc, QObject* parent = nullptr);
    ~LiveBestPreview() override;

    // A search snapshot's best tree: shown once the throttle interval has passed (the same
    // pointer as last time, or null, changes nothing).
    void offer(std::shared_ptr<const RATree> best);
    // The preview ends: the views drop the overlay; a job under way is dropped.
    void clear();
    std::shared_ptr<const LiveBest> current() const { return m_current; }
    void setThrottleMs(int ms) { m_throttle.setInterval(ms); }
    int layoutsBuilt() const { return m_built; } // tests: throttling

  signals:
    // A new live best laid out, or null when the preview ended.
    void changed(std::shared_ptr<const tilescope::ui::LiveBest> best);

  private:
    void start();

    Document* m_doc;
    QTimer m_throttle;
    std::shared_ptr<const RATree> m_offered; // newest offered, not yet handed to a job
    std::shared_ptr<const RATree> m_started; // the last one handed to a job
    std::shared_ptr<const LiveBest> m_current;
    JobContext m_ctx;         // like ProgramRunner's: the document's belongs to the GUI thread
    quint64 m_generation = 0; // bumped by clear(): a job of an earlier preview is ignored
    int m_built = 0;
    BackgroundJob m_job{this}; // start() waits while it is busy
};

} // namespace tilescope::ui

Q_DECLARE_METATYPE(std::shared_ptr<const tilescope::ui::LiveBest>)
