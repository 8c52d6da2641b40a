// Search control for the main window: the search worker on its own thread, one search or
// compare at a time, and their snapshots and outcomes routed to the panels that show them.
// Each run carries a generation id; a run the inputs have since replaced is dropped.
#pragma once

#include "core/searchsnapshot.h"

#include <QObject>
#include <QThread>
#include <memory>

namespace tilescope::ui {

class Document;
class SearchWorker;
class SearchPanel;
class MetricsPanel;
class TradeoffView;
class BoundaryView;
class DiffPanel;
class LiveBestPreview;

class SearchController : public QObject {
    Q_OBJECT
  public:
    // The views a search feeds; the controller neither owns nor lays them out.
    struct Views {
        SearchPanel* panel;
        MetricsPanel* metrics;
        TradeoffView* tradeoff;
        BoundaryView* boundary;
        DiffPanel* diff;
        LiveBestPreview* liveBest;
    };
    SearchController(Document* doc, const Views& views, QObject* parent);
    ~SearchController() override;

    SearchWorker* worker() const { return m_worker; }
    bool running() const { return m_running; }
    OutcomePtr lastSearch() const { return m_lastSearch; }
    ComparePtr lastCompare() const { return m_lastCompare; }
    // View > Show live best: whether a running search's best is offered to the preview.
    void setLiveBestShown(bool on) { m_liveBestShown = on; }
    // Stops the worker and joins its thread (the window is going away).
    void shutdown();

  public slots:
    void start();
    void pause(bool paused);
    void togglePause();
    void stop();
    void adoptBest();
    void runCompare();

  signals:
    void searchFinished(); // the worker reported the end of a search (tests)
    void compareFinished();
    void errorOccurred(const QString& title, const QString& message);
    void statusMessage(const QString& text, int timeoutMs);

  private:
    void connectWorker();
    void showSnapshot(const SnapshotPtr& s);
    void takeOutcome(const OutcomePtr& o);
    void followState(quint64 generation, RunState state, const QString& message);
    void takeCompare(const ComparePtr& c);
    void inputsReset();
    std::shared_ptr<RunRequest> makeRequest();
    // The line a finished search leaves in the panel: its gain over the start and, for a
    // time budget, how to repeat it.
    QString resultSummary() const;

    Document* m_doc;
    Views m_views;
    QThread m_thread;
    SearchWorker* m_worker;
    quint64 m_generation = 0;
    bool m_running = false;
    bool m_comparing = false;
    // false while adopting a best tree the worker already continues from
    bool m_forwardEdits = true;
    bool m_liveBestShown = true;
    OutcomePtr m_lastSearch;
    ComparePtr m_lastCompare;
    double m_startCost = 0; // the document's objective when the search started (0: invalid)
};

} // namespace tilescope::ui
