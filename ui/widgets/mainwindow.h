// The main window: the S-T graph in the centre, the RA tree, NoC heatmap, metrics and
// search panels as dock widgets; File / Edit / View / Search / Help menus and the opening of
// models, hardware, trees and sweeps. It routes the menus to three controllers: search
// control, sessions (files, recovery, recent files) and exports. It owns no schedule state
// of its own: that lives in the Document.
#pragma once

#include "model/network.h"
#include "sweep/sweep.h"
#include "tree/ratree.h"

#include <QMainWindow>
#include <optional>
#include <utility>
#include <vector>

class QCustomPlot;
class QDockWidget;
class QLabel;
class QMenu;
class QStackedWidget;

namespace tilescope::ui {

class Document;
class SelectionState;
class TreePanel;
class StGraphView;
class NocHeatmapView;
class MetricsPanel;
class SearchPanel;
class ProgramRunner;
class InstructionsPanel;
class WelcomePage;
class TradeoffView;
class DiffPanel;
class SweepView;
class LayersPanel;
class BoundaryView;
class LiveBestPreview;
class CompareSessionsDialog;
class SearchController;
class SessionController;
class ExportController;
class GenerateController;

class MainWindow : public QMainWindow {
    Q_OBJECT
  public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Errors go to a modal dialog when interactive (the default), else only to the status
    // bar and lastError() (tests).
    void setInteractive(bool on);
    QString lastError() const { return m_lastError; }

    bool openModel(const QString& path);
    // With the sizes of its free dimensions given (no dialog).
    bool openModel(const QString& path, const std::map<std::string, std::int64_t>& dims);
    bool openHardware(const QString& pathOrPreset);
    bool setBatch(int batch);
    // What the menus, the recent list and the welcome page call: with unsaved changes,
    // ask first (Save, Discard or Cancel); false if the user cancelled or the open failed.
    bool openModelAsking(const QString& path);
    bool importTree(const QString& path);
    // File > Open sweep database: the sweep viewer over that database (docs/sweep.md).
    bool openSweepDatabase(const QString& path);
    SweepView* sweepView() const { return m_sweep; }
    // A sweep point's model + hardware + tree as the document (double-click in the viewer),
    // after asking about unsaved changes (resolveSweepPoint finds and checks the model).
    bool openSweepPoint(const tilescope::SweepRow& row, const QString& databasePath);
    // The welcome page's one click: preset, batch (0 keeps the document's), model, and
    // optionally the search.
    bool openSample(const QString& modelPath, const QString& preset, bool run, int batch = 0);
    // A/B compare: the diff of the document's tree against a tree file.
    bool compareWithTreeFile(const QString& path);
    // A/B compare of two saved sessions: a dialog with both S-T graphs on one time axis, the
    // figures of each and their tree diff; null (the error shown) when either is unreadable.
    CompareSessionsDialog* compareSessions(const QString& pathA, const QString& pathB);
    bool welcomeShown() const;

    SearchController* searchControl() const { return m_searchControl; }
    SessionController* sessions() const { return m_sessions; }
    ExportController* exports() const { return m_exports; }
    Document* document() const { return m_doc; }
    SelectionState* selection() const { return m_selection; }
    WelcomePage* welcomePage() const { return m_welcome; }
    TradeoffView* tradeoff() const { return m_tradeoff; }
    DiffPanel* diffPanel() const { return m_diff; }
    LayersPanel* layersPanel() const { return m_layers; }
    BoundaryView* boundaryView() const { return m_boundaryView; }
    TreePanel* treePanel() const { return m_tree; }
    StGraphView* stGraph() const { return m_st; }
    NocHeatmapView* heatmap() const { return m_heatmap; }
    MetricsPanel* metrics() const { return m_metrics; }
    SearchPanel* searchPanel() const { return m_search; }
    InstructionsPanel* instructionsPanel() const { return m_instructions; }
    ProgramRunner* programRunner() const { return m_programs; }
    LiveBestPreview* liveBestPreview() const { return m_liveBest; }
    QAction* showLiveBestAction() const { return m_showLiveBest; }
    GenerateController* generateController() const { return m_generate; }

  public slots:
    void showGuide();
    void openModelDialog();

  protected:
    void closeEvent(QCloseEvent* e) override;
    void showEvent(QShowEvent* e) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    // Gives this window the keyboard back after a dialog closed, when no window of the
    // application is active.
    void reclaimKeyboard();
    void buildViews();
    void buildWelcomePage();
    void buildControllers();
    template <class Controller> void routeMessages(Controller* controller);
    void connectDocument();
    void buildDocks();
    void buildMenus();
    void buildFileMenu();
    void buildExportMenu(QMenu* file);
    // The charts a user can export, by the name the exports know them by, and their titles.
    std::vector<std::pair<QString, QCustomPlot*>> charts() const;
    static QString chartTitle(const QString& name);
    void buildViewMenu();
    void buildHelpMenu();
    void showError(const QString& title, const QString& message);
    bool openModel(const QString& path, Network net); // read from `path` already
    std::optional<std::map<std::string, std::int64_t>> askDimensions(const QString& path);
    // Reads the model at those sizes; an error is shown (and returned).
    Result<Network> readModel(const QString& path, const std::map<std::string, std::int64_t>& dims);
    void openRecent(const QString& kind, const QString& path);
    // A tree file read against the open model; nullopt (the error shown under `title`)
    // without a model or when the file does not read or parse.
    std::optional<RATree> readTreeFile(const QString& path, const QString& title);
    void updateTitle();
    void inputsChangedMessage();
    void applyDefaultDockSizes();
    // Keeps the window inside the available area of its screen (a restored geometry may
    // come from a larger one).
    void fitToScreen();

    Document* m_doc;
    SelectionState* m_selection;
    // Set by buildViews and buildControllers, first thing in the constructor.
    TreePanel* m_tree;
    StGraphView* m_st;
    NocHeatmapView* m_heatmap;
    MetricsPanel* m_metrics;
    SearchPanel* m_search;
    ProgramRunner* m_programs;
    InstructionsPanel* m_instructions;
    SearchController* m_searchControl;
    SessionController* m_sessions;
    ExportController* m_exports;
    GenerateController* m_generate; // Search > Prefill and decode
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
    QLabel* m_inputsLabel;
    QString m_lastError;
    QString m_refusal; // the refusal on the status bar, cleared by the next edit
    bool m_interactive = true;
};

} // namespace tilescope::ui
