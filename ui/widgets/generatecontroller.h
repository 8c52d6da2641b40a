// Search > Prefill and decode: the current decoder's prefill and decode step scheduled as
// `tilescope-cli generate` schedules them (engine/pipeline/llm_generate.h), off the GUI
// thread with progress and a stop; the figures in a dock (GeneratePanel), and a phase picked
// there shown in the main views as the document.
#pragma once

#include "core/backgroundjob.h"
#include "pipeline/llm_generate.h"

#include <QObject>
#include <QPointer>
#include <QString>
#include <functional>
#include <memory>
#include <stop_token>

class QDockWidget;
class QWidget;

namespace tilescope::ui {

class CallReceiver;
class Document;
class GeneratePanel;

class GenerateController : public QObject {
    Q_OBJECT
  public:
    // Dialogs open over `window`; the dock is the caller's to place.
    GenerateController(Document* doc, QWidget* window);
    ~GenerateController() override;

    QDockWidget* dock() const { return m_dock; }
    GeneratePanel* panel() const { return m_panel; }
    // Asked before a phase replaces the document (unsaved edits): false keeps the document.
    void setConfirmReplace(std::function<bool()> confirm) { m_confirm = std::move(confirm); }

    // The request dialog, then start().
    void openDialog();
    // Schedules the document's decoder (its sequence and past axes found from the graph)
    // with `secondsPerPhase` of search per phase; the document's hardware and objective.
    // Errors (not a decoder, a phase that fails) go to errorOccurred; finished() after.
    // `repeatBlocks`: every phase ties the decoder's repeated blocks (SearchConfig).
    void start(const GenerateRequest& request, double secondsPerPhase, bool repeatBlocks = false);
    void stop();
    bool busy() const;
    std::shared_ptr<const GenerateRun> lastRun() const { return m_run; }
    // Shows phase `index` of the last run in the main views: its network and best tree
    // become the document (after setConfirmReplace's question).
    bool showPhase(int index);
    // Every phase's program of the last run written under `dir` (prefill, decode-pastN) and
    // replayed, off the GUI thread; the panel shows each phase's replay against its
    // estimate. programsExported(ok) after (ok: every valid phase written).
    void exportPrograms(const QString& dir);

  signals:
    void finished(bool ok);
    void programsExported(bool ok);
    void errorOccurred(const QString& title, const QString& message);
    void statusMessage(const QString& text, int timeoutMs);

  private:
    // start() with the model's axes already found (openDialog found them).
    void run(const DecoderAxes& axes, const GenerateRequest& request, double secondsPerPhase,
             bool repeatBlocks);

    Document* m_doc;
    QWidget* m_window;
    QDockWidget* m_dock;
    GeneratePanel* m_panel;
    BackgroundJob m_job;
    CallReceiver* m_receiver; // the run's progress, on the GUI thread
    std::shared_ptr<std::stop_source> m_stop;
    std::shared_ptr<const GenerateRun> m_run;
    std::function<bool()> m_confirm;
    // What the last run was scheduled for (the document may move on meanwhile).
    std::shared_ptr<const Hardware> m_hw;
    QString m_hwSource, m_modelSha;
    Objective m_objective;
    int m_batch = 1;
    SearchConfig m_config; // the last run's search (its objective and utilisation floor)
    BackgroundJob m_exportJob;
};

} // namespace tilescope::ui
