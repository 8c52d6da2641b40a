// The main window: the S-T graph in the centre, the RA tree, NoC heatmap, metrics and
// search panels as dock widgets; File / Edit / View / Search menus; the search worker's
// thread; session files, recent files and exports. It wires the pieces together and
// owns no schedule state of its own: that lives in the Document.
#pragma once

#include "core/backgroundjob.h"
#include "core/searchsnapshot.h"
#include "pipeline/export.h"
#include "sweep/sweep.h"

#include <QMainWindow>
#include <QThread>

class QDockWidget;
class QLabel;
class QMenu;
class QCheckBox;
class QStackedWidget;

namespace tilescope::ui {

class Document;
class SelectionState;
class SearchWorker;
class TreePanel;
class StGraphView;
class NocHeatmapView;
class MetricsPanel;
class SearchPanel;
class ProgramRunner;
class InstructionsPanel;
class AutoSaver;
class Session;
class WelcomePage;
class TradeoffView;
class DiffPanel;
class SweepView;
class LayersPanel;
class BoundaryView;
class LiveBestPreview;
class CompareSessionsDialog;

class MainWindow : public QMainWindow {
    Q_OBJECT
  public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Errors go to a modal dialog when interactive (the default), else only to the status
    // bar and lastError() (tests).
    void setInteractive(bool on) { m_interactive = on; }
    QString lastError() const { return m_lastError; }

    bool openModel(const QString& path);
    bool openHardware(const QString& pathOrPreset);
    bool setBatch(int batch);
    bool openSession(const QString& path);
    // What the menus, the recent list and the welcome page call: with unsaved changes,
    // ask first (Save, Discard or Cancel); false if the user cancelled or the open failed.
    bool openModelAsking(const QString& path);
    bool openSessionAsking(const QString& path);
    bool saveSession(const QString& path);
    // Save to the current session file, asking for one if there is none; false if the
    // user cancelled or the save failed (the error was shown).
    bool saveToSessionFile();
    bool importTree(const QString& path);
    // File > Open sweep database: the sweep viewer over that database (docs/sweep.md).
    bool openSweepDatabase(const QString& path);
    SweepView* sweepView() const { return m_sweep; }
    // A sweep point's model + hardware + tree as the document (double-click in the viewer),
    // after asking about unsaved changes. The model is the row's path, or a file of that name
    // beside the database (a database copied from a cluster); its sha256 must match.
    bool openSweepPoint(const tilescope::SweepRow& row, const QString& databasePath);
    // The welcome page's one click: preset, model, and optionally the search.
    bool openSample(const QString& modelPath, const QString& preset, bool run);
    WelcomePage* welcomePage() const { return m_welcome; }
    TradeoffView* tradeoff() const { return m_tradeoff; }
    DiffPanel* diffPanel() const { return m_diff; }
    LayersPanel* layersPanel() const { return m_layers; }
    BoundaryView* boundaryView() const { return m_boundaryView; }
    // A/B compare: the diff of the document's tree against a tree file.
    bool compareWithTreeFile(const QString& path);
    // A/B compare of two saved sessions: a dialog with both S-T graphs on one time axis, the
    // figures of each and their tree diff; null (the error shown) when either is unreadable.
    CompareSessionsDialog* compareSessions(const QString& pathA, const QString& pathB);
    bool welcomeShown() const;
    // Generates the program for the current tree off the GUI thread and writes the test-chip
    // folder (exportProgram: atomic, validated) in the given formats (program.bin alone by
    // default; the menu asks with a ProgramFormatsDialog); testChipExported reports the outcome.
    void exportForTestChip(const QString& dir, const ProgramFormats& formats = {});
    // Crash recovery: true when a recovery file was found and restored. Asks the user unless
    // TILESCOPE_RECOVERY_AUTO is "accept" or "reject" (tests, scripted starts).
    bool offerRecovery();
    bool restoreRecovery();  // restores without asking
    bool isModified() const; // unsaved changes a crash would lose
    AutoSaver* autoSaver() const { return m_autosave; }
    // Export by kind: "st" / "heatmap" (png, svg, pdf by suffix), "html", "json",
    // "tree-text", "tree-json", "trace".
    bool exportTo(const QString& kind, const QString& path);

    Document* document() const { return m_doc; }
    SelectionState* selection() const { return m_selection; }
    SearchWorker* worker() const { return m_worker; }
    TreePanel* treePanel() const { return m_tree; }
    StGraphView* stGraph() const { return m_st; }
    NocHeatmapView* heatmap() const { return m_heatmap; }
    MetricsPanel* metrics() const { return m_metrics; }
    SearchPanel* searchPanel() const { return m_search; }
    InstructionsPanel* instructionsPanel() const { return m_instructions; }
    ProgramRunner* programRunner() const { return m_programs; }
    LiveBestPreview* liveBestPreview() const { return m_liveBest; }
    QAction* showLiveBestAction() const { return m_showLiveBest; }
    bool searchRunning() const { return m_running; }
    OutcomePtr lastSearch() const { return m_lastSearch; }

  public slots:
    void startSearch();
    void showGuide();
    void openModelDialog();
    void openSessionDialog();
    void pauseSearch(bool paused);
    void stopSearch();
    void adoptBest();
    void runCompare();

  signals:
    void searchFinished(); // the worker reported the end of a search (tests)
    void compareFinished();
    void testChipExported(bool ok, const QString& message);

  protected:
    void closeEvent(QCloseEvent* e) override;
    void showEvent(QShowEvent* e) override;

  private:
    // Unsaved changes: Save / Discard / Cancel; true when the caller may go on.
    bool confirmDiscard(const QString& question);
    bool confirmOpening(const QString& what); // confirmDiscard before opening `what`
    void buildMenus();
    void buildDocks();
    void connectWorker();
    void showError(const QString& title, const QString& message);
    void addRecent(const QString& kind, const QString& path);
    void rebuildRecentMenu();
    void updateTitle();
    void exportDialog(const QString& kind, const QString& filter, const QString& suffix);
    std::shared_ptr<RunRequest> makeRequest();
    Session makeSession() const;
    bool loadSession(const QString& path, bool remember);
    void modifiedChanged();
    void inputsChangedMessage();
    void applyDefaultDockSizes();
    QString reportHtml();

    Document* m_doc;
    SelectionState* m_selection;
    TreePanel* m_tree;
    StGraphView* m_st;
    NocHeatmapView* m_heatmap;
    MetricsPanel* m_metrics;
    SearchPanel* m_search;
    ProgramRunner* m_programs;
    InstructionsPanel* m_instructions;
    AutoSaver* m_autosave;
    QList<QDockWidget*> m_docks;
    QDockWidget *m_searchDock = nullptr, *m_metricsDock = nullptr, *m_heatDock = nullptr;
    bool m_shownOnce = false;
    bool m_restoredLayout = false;
    WelcomePage* m_welcome = nullptr;
    TradeoffView* m_tradeoff = nullptr;
    DiffPanel* m_diff = nullptr;
    SweepView* m_sweep = nullptr;
    LayersPanel* m_layers = nullptr;
    BoundaryView* m_boundaryView = nullptr;
    QStackedWidget* m_central = nullptr;
    QMenu* m_viewMenu = nullptr;
    LiveBestPreview* m_liveBest = nullptr; // the running search's best, for the overlays
    QAction* m_showLiveBest = nullptr;     // View > Show live best
    QMenu* m_recentMenu = nullptr;
    QLabel* m_inputsLabel;
    QThread m_thread;
    SearchWorker* m_worker;
    quint64 m_generation = 0;
    bool m_running = false;
    bool m_comparing = false;
    bool m_forwardEdits =
        true; // false while adopting a best tree the worker already continues from
    OutcomePtr m_lastSearch;
    ComparePtr m_lastCompare;
    QString m_sessionPath;
    QString m_lastError;
    QString m_refusal; // the refusal on the status bar, cleared by the next edit
    bool m_interactive = true;
    // Inputs changed by hand (batch, hardware) or a recovered session: unsaved even though
    // the undo stack, cleared by those changes, is clean.
    bool m_dirtyInputs = false;
    BackgroundJob m_exportJob{this}; // a test-chip export; busy() refuses a second one
    ProgramFormats m_exportFormats;  // the formats last chosen for a test-chip export
};

} // namespace tilescope::ui
