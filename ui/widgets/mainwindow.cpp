#include "widgets/mainwindow.h"

#include "core/autosaver.h"
#include "core/document.h"
#include "core/layersmodel.h"
#include "core/livebestpreview.h"
#include "core/programmodel.h"
#include "core/programrunner.h"
#include "core/qstrings.h"
#include "core/searchworker.h"
#include "core/selectionstate.h"
#include "core/sweeptable.h"
#include "model/model_loader.h"
#include "report/result_json.h"
#include "util/fileio.h"
#include "widgets/boundaryview.h"
#include "widgets/comparesessionsdialog.h"
#include "widgets/diffpanel.h"
#include "widgets/dimensionsdialog.h"
#include "widgets/exportcontroller.h"
#include "widgets/generatecontroller.h"
#include "widgets/instructionspanel.h"
#include "widgets/layerspanel.h"
#include "widgets/metricspanel.h"
#include "widgets/nocheatmapview.h"
#include "widgets/searchcontroller.h"
#include "widgets/searchpanel.h"
#include "widgets/sessioncontroller.h"
#include "widgets/stgraphview.h"
#include "widgets/sweepview.h"
#include "widgets/tradeoffview.h"
#include "widgets/treepanel.h"
#include "widgets/userguidedialog.h"
#include "widgets/welcomepage.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QDialog>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTimer>
#include <QUndoStack>
#include <QVBoxLayout>
#include <algorithm>

// Resources of a static library are not registered automatically; Q_INIT_RESOURCE has to
// run outside any namespace.
static void initTilescopeResources() {
    Q_INIT_RESOURCE(resources);
}

namespace tilescope::ui {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), m_doc(new Document(this)), m_selection(new SelectionState(this)),
      m_inputsLabel(new QLabel(this)) {
    initTilescopeResources();
    setObjectName(QStringLiteral("mainWindow"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/tilescope.svg")));
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks |
                   QMainWindow::AllowNestedDocks);
    buildViews();
    buildControllers();
    buildDocks();
    buildMenus();
    // Dialogs (this window's children) are watched as they close: see eventFilter.
    qApp->installEventFilter(this);
    statusBar()->addPermanentWidget(m_inputsLabel);
    connectDocument();

    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    m_restoredLayout = restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    fitToScreen();
    updateTitle();
}

MainWindow::~MainWindow() {
    // Destruction is the clean exit (a crash never gets here): the recovery file goes.
    m_sessions->autoSaver()->release();
    m_searchControl->shutdown();
}

void MainWindow::buildViews() {
    m_st = new StGraphView(m_doc, m_selection, this);
    buildWelcomePage();
    m_tree = new TreePanel(m_doc, m_selection, this);
    m_heatmap = new NocHeatmapView(m_doc, m_selection, this);
    m_metrics = new MetricsPanel(m_doc, this);
    m_search = new SearchPanel(this);
    m_programs = new ProgramRunner(m_doc, this);
    m_liveBest = new LiveBestPreview(m_doc, this);
    connect(m_liveBest, &LiveBestPreview::changed, m_st, &StGraphView::setLiveBest);
    connect(m_liveBest, &LiveBestPreview::changed, m_heatmap, &NocHeatmapView::setLiveBest);
    m_instructions = new InstructionsPanel(m_doc, m_selection, m_programs, this);
    m_diff = new DiffPanel(m_doc, this);
    m_tradeoff = new TradeoffView(this);
    m_layers = new LayersPanel(m_doc, m_selection, this);
    m_boundaryView = new BoundaryView(m_doc, this);
    auto adoptOther = [this](const RATree& tree, const QString& label) {
        if (!m_doc->adoptTree(tree, label))
            statusBar()->showMessage(tr("%1: Undo (Ctrl+Z) goes back").arg(label), 5000);
    };
    connect(m_diff, &DiffPanel::adoptRequested, this, adoptOther);
    connect(m_boundaryView, &BoundaryView::adoptRequested, this, adoptOther);
    connect(m_tradeoff, &TradeoffView::adoptRequested, this, adoptOther);
    m_st->setProgramRunner(m_programs);
    m_metrics->setProgramRunner(m_programs);
}

void MainWindow::buildWelcomePage() {
    // The welcome page stands in for the S-T graph until a model is open.
    m_welcome = new WelcomePage(this);
    m_central = new QStackedWidget(this);
    // In a scroll area: a stacked widget is as wide as its widest page's minimum, and the
    // welcome page's would squeeze the tree and heatmap docks at 1280x800.
    auto* welcomeScroll = new QScrollArea(this);
    welcomeScroll->setWidget(m_welcome);
    welcomeScroll->setWidgetResizable(true);
    welcomeScroll->setFrameShape(QFrame::NoFrame);
    m_central->addWidget(welcomeScroll);
    m_central->addWidget(m_st);
    setCentralWidget(m_central);
    connect(m_welcome, &WelcomePage::openSampleRequested, this,
            [this](const QString& model, const QString& preset, int batch, bool run) {
                openSample(model, preset, run, batch);
            });
    connect(m_welcome, &WelcomePage::openModelRequested, this, &MainWindow::openModelDialog);
    connect(m_welcome, &WelcomePage::recentRequested, this, &MainWindow::openRecent);
    connect(m_welcome, &WelcomePage::guideRequested, this, &MainWindow::showGuide);
}

template <class Controller> void MainWindow::routeMessages(Controller* controller) {
    connect(controller, &Controller::errorOccurred, this, &MainWindow::showError);
    connect(controller, &Controller::statusMessage, statusBar(), &QStatusBar::showMessage);
}

void MainWindow::buildControllers() {
    m_searchControl = new SearchController(
        m_doc, {m_search, m_metrics, m_tradeoff, m_boundaryView, m_diff, m_liveBest}, this);
    routeMessages(m_searchControl);
    m_sessions = new SessionController(m_doc, m_search, m_searchControl, this);
    routeMessages(m_sessions);
    connect(m_sessions, &SessionController::modifiedChanged, this, &QWidget::setWindowModified);
    connect(m_sessions, &SessionController::titleChanged, this, &MainWindow::updateTitle);
    connect(m_sessions, &SessionController::recentChanged, m_welcome, &WelcomePage::setRecent);
    connect(m_sessions, &SessionController::openRecentRequested, this, &MainWindow::openRecent);
    connect(m_welcome, &WelcomePage::openSessionRequested, m_sessions,
            &SessionController::openSessionDialog);
    m_exports = new ExportController(m_doc, m_st, m_heatmap, m_searchControl, this);
    routeMessages(m_exports);
    for (const auto& [name, plot] : charts())
        m_exports->addChart(name, plot);
    m_exports->addTable(QStringLiteral("layers"), m_layers->model());
    m_exports->addTable(QStringLiteral("instructions"), m_instructions->model());
    m_generate = new GenerateController(m_doc, this);
    routeMessages(m_generate);
    m_generate->setConfirmReplace(
        [this] { return m_sessions->confirmOpening(tr("the phase's schedule")); });
    addDockWidget(Qt::RightDockWidgetArea, m_generate->dock());
    m_generate->dock()->hide();
}

void MainWindow::connectDocument() {
    connect(m_doc, &Document::treeChanged, this, [this] {
        const auto e = m_doc->evaluation();
        m_tradeoff->setCurrent(e->energy.total(), e->delay, e->valid);
    });
    // Views follow the document; the selection follows the tree across renumbering edits.
    connect(m_doc, &Document::treeChanged, this, [this] { m_selection->remap(m_doc->tree()); });
    connect(m_doc, &Document::documentReset, this, [this] {
        m_selection->clear();
        m_central->setCurrentIndex(m_doc->hasModel() ? 1 : 0);
        updateTitle();
    });
    // A refusal stays until the next accepted edit or selection, not for a fixed time: a
    // message that outlives what it says, or vanishes while it is still true, misleads.
    auto refusal = [this](const QString& r) {
        m_refusal = r;
        statusBar()->showMessage(r, 10000);
    };
    connect(m_doc, &Document::editRefused, this, refusal);
    connect(m_tree, &TreePanel::message, this, refusal);
    auto clearRefusal = [this] {
        if (!m_refusal.isEmpty() && statusBar()->currentMessage() == m_refusal)
            statusBar()->clearMessage();
        m_refusal.clear();
    };
    connect(m_doc, &Document::treeChanged, this, clearRefusal);
    connect(m_selection, &SelectionState::changed, this, clearRefusal);
}

void MainWindow::setInteractive(bool on) {
    m_interactive = on;
    m_sessions->setInteractive(on);
}

void MainWindow::closeEvent(QCloseEvent* e) {
    // Quitting must not drop hand edits or an adopted search result without asking.
    if (!m_sessions->confirmDiscard(tr("The schedule has changes that are not saved in a "
                                       "session. Save them before closing?"))) {
        e->ignore();
        return;
    }
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    m_searchControl->worker()->requestStop();
    QMainWindow::closeEvent(e);
}

void MainWindow::buildDocks() {
    auto dock = [&](const QString& title, const QString& name, QWidget* w,
                    Qt::DockWidgetArea area) {
        auto* d = new QDockWidget(title, this);
        d->setObjectName(name);
        d->setWidget(w);
        addDockWidget(area, d);
        m_docks << d;
        return d;
    };
    dock(tr("RA tree"), QStringLiteral("treeDock"), m_tree, Qt::LeftDockWidgetArea);

    auto* heat = new QWidget(this);
    auto* hl = new QVBoxLayout(heat);
    hl->setContentsMargins(2, 2, 2, 2);
    auto* util = new QCheckBox(tr("Link utilisation"), heat);
    util->setToolTip(tr("Colour links by bandwidth utilisation = bytes / (link bandwidth x "
                        "delay) instead of bytes"));
    auto* filter = new QCheckBox(tr("Only the selected node"), heat);
    util->setObjectName(QStringLiteral("heatUtilisation"));
    filter->setObjectName(QStringLiteral("heatFilter"));
    connect(util, &QCheckBox::toggled, m_heatmap, &NocHeatmapView::setShowUtilisation);
    connect(filter, &QCheckBox::toggled, m_heatmap, &NocHeatmapView::setFilterToSelection);
    hl->addWidget(m_heatmap, 1);
    hl->addWidget(util);
    hl->addWidget(filter);
    m_heatDock =
        dock(tr("NoC heatmap"), QStringLiteral("heatmapDock"), heat, Qt::RightDockWidgetArea);
    // docs/method.md §6: tree | S-T graph | heatmap on top; metrics and the live search plot under
    // them.
    m_searchDock =
        dock(tr("Search"), QStringLiteral("searchDock"), m_search, Qt::BottomDockWidgetArea);
    m_metricsDock =
        dock(tr("Metrics"), QStringLiteral("metricsDock"), m_metrics, Qt::BottomDockWidgetArea);
    splitDockWidget(m_searchDock, m_metricsDock, Qt::Horizontal);
    // The listing, the diff and the layers share the metrics' place as tabs; the trade-off
    // plot and the DRAM boundary, both energy-delay scatters a search feeds, share the
    // search's. Six tabs in one place were cut to "Met..." and "La..." at 1280x800.
    const struct {
        QDockWidget* beside;
        QString title, name;
        QWidget* widget;
    } tabs[] = {
        {m_metricsDock, tr("Instructions"), QStringLiteral("instructionsDock"), m_instructions},
        {m_metricsDock, tr("Diff A/B"), QStringLiteral("diffDock"), m_diff},
        {m_metricsDock, tr("Layers"), QStringLiteral("layersDock"), m_layers},
        {m_searchDock, tr("Trade-off"), QStringLiteral("tradeoffDock"), m_tradeoff},
        {m_searchDock, tr("DRAM boundary"), QStringLiteral("boundaryDock"), m_boundaryView}};
    for (const auto& t : tabs)
        tabifyDockWidget(t.beside, dock(t.title, t.name, t.widget, Qt::BottomDockWidgetArea));
    m_metricsDock->raise();
    m_searchDock->raise();
    // First start (no saved geometry): most of the screen.
    const QRect avail = screen() ? screen()->availableGeometry() : QRect(0, 0, 1500, 950);
    resize(std::min(2400, avail.width() * 19 / 20), std::min(1500, avail.height() * 19 / 20));
}

void MainWindow::applyDefaultDockSizes() {
    // Shares of the width, applied once the window has its real size: 1280x800 keeps the
    // tree's time and energy and the metrics readable, and 1920x1080 gives the S-T graph
    // the rest.
    const int w = width();
    // The tree needs about 460 px for its name, time, energy, batch/sb and pin columns; on a
    // wide screen the heatmap takes a quarter, where a 12x12 mesh's tiles hold their numbers.
    resizeDocks({m_docks[0], m_heatDock},
                {std::max(460, w * 26 / 100), std::max(240, w >= 1600 ? w / 4 : w / 5)},
                Qt::Horizontal);
    resizeDocks({m_searchDock, m_metricsDock}, {w / 2, w / 2}, Qt::Horizontal);
    resizeDocks({m_searchDock}, {std::max(300, height() * 38 / 100)}, Qt::Vertical);
}

void MainWindow::fitToScreen() {
    // A geometry saved on a larger screen would put the heatmap, the search buttons and the
    // status bar out of reach: shrink the window to the screen it opens on and move it in.
    const QScreen* s = screen();
    if (!s || isMaximized() || isFullScreen()) return;
    const QRect avail = s->availableGeometry();
    // The frame is known once shown; before that, leave room for a typical title bar.
    const QMargins frame = isVisible() ? QMargins(geometry().left() - frameGeometry().left(),
                                                  geometry().top() - frameGeometry().top(),
                                                  frameGeometry().right() - geometry().right(),
                                                  frameGeometry().bottom() - geometry().bottom())
                                       : QMargins(0, 0, 0, 0);
    const QRect room = avail.marginsRemoved(frame);
    QRect g = geometry();
    if (room.contains(g)) return;
    g.setSize(g.size().boundedTo(room.size()).expandedTo(minimumSizeHint().boundedTo(room.size())));
    g.moveLeft(std::clamp(g.left(), room.left(), room.right() - g.width() + 1));
    g.moveTop(std::clamp(g.top(), room.top(), room.bottom() - g.height() + 1));
    setGeometry(g);
}

void MainWindow::showEvent(QShowEvent* e) {
    QMainWindow::showEvent(e);
    if (!m_shownOnce) QTimer::singleShot(0, this, &MainWindow::fitToScreen);
    // Only the first time, and only without a saved layout (restoreState wins).
    if (!std::exchange(m_shownOnce, true) && !m_restoredLayout)
        QTimer::singleShot(0, this, &MainWindow::applyDefaultDockSizes);
}

void MainWindow::buildMenus() {
    buildFileMenu();

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = m_doc->undoStack()->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = m_doc->undoStack()->createRedoAction(this, tr("&Redo"));
    redo->setShortcut(QKeySequence::Redo);
    // Say what was undone or redone: an "Adopt best" undone by a stray Ctrl+Z went unnoticed.
    // These run after the stack's own slots, so the step is already done.
    connect(undo, &QAction::triggered, this, [this] {
        statusBar()->showMessage(tr("Undone: %1").arg(m_doc->undoStack()->redoText()), 5000);
    });
    connect(redo, &QAction::triggered, this, [this] {
        statusBar()->showMessage(tr("Redone: %1").arg(m_doc->undoStack()->undoText()), 5000);
    });
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    edit->addActions(m_tree->editActions());
    edit->addSeparator();
    edit->addMenu(m_layers->pinMenu());

    buildViewMenu();

    SearchController* sc = m_searchControl;
    QMenu* search = menuBar()->addMenu(tr("&Search"));
    search->addAction(tr("&Start"), QKeySequence(Qt::Key_F5), sc, &SearchController::start);
    search->addAction(tr("&Pause / resume"), QKeySequence(Qt::Key_F6), sc,
                      &SearchController::togglePause);
    search->addAction(tr("S&top"), QKeySequence(Qt::SHIFT | Qt::Key_F5), sc,
                      &SearchController::stop);
    search->addAction(tr("&Adopt best"), sc, &SearchController::adoptBest);
    search->addSeparator();
    search->addAction(tr("&Compare LS / LP / DP-LP / SA"), sc, &SearchController::runCompare);
    search->addSeparator();
    search->addAction(tr("Prefill and &decode..."), m_generate, &GenerateController::openDialog);
    search->addAction(tr("Stop prefill and decode"), m_generate, &GenerateController::stop);

    buildHelpMenu();
}

void MainWindow::buildFileMenu() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open model..."), QKeySequence::Open, this, &MainWindow::openModelDialog);
    // An open-file dialog, then `open` on the chosen file (nothing when cancelled).
    auto askOpen = [this](const QString& title, const QString& filter, auto open) {
        return [this, title, filter, open] {
            const QString p = QFileDialog::getOpenFileName(this, title, {}, filter);
            if (!p.isEmpty()) open(p);
        };
    };
    file->addAction(tr("Open &hardware template..."), this,
                    askOpen(tr("Open hardware template"),
                            tr("Hardware templates (*.json);;All files (*)"),
                            [this](const QString& p) { openHardware(p); }));
    QMenu* presets = file->addMenu(tr("Hardware &preset"));
    presets->setObjectName(QStringLiteral("presetMenu"));
    // The current preset is ticked (none for a template read from a file).
    auto* group = new QActionGroup(presets);
    group->setExclusionPolicy(QActionGroup::ExclusionPolicy::ExclusiveOptional);
    for (const std::string& name : presetNames()) {
        const QString n = qs(name);
        QAction* a = presets->addAction(n, this, [this, n] { openHardware(n); });
        a->setCheckable(true);
        group->addAction(a);
    }
    auto tick = [this, group] {
        for (QAction* a : group->actions())
            a->setChecked(a->text() == m_doc->hardwareSource());
    };
    connect(m_doc, &Document::documentReset, group, tick);
    connect(group, &QActionGroup::triggered, this, tick); // a refused open keeps the old tick
    tick();
    file->addAction(tr("Set &batch..."), this, [this] {
        bool ok = false;
        const int b = QInputDialog::getInt(this, tr("Batch"), tr("Batch size B:"), m_doc->batch(),
                                           1, 4096, 1, &ok);
        if (ok) setBatch(b);
    });
    file->addMenu(m_layers->layoutsMenu());
    const QString trees = tr("Trees (*.tree *.txt *.json);;All files (*)");
    file->addAction(tr("&Import tree..."), this,
                    askOpen(tr("Import tree"), trees, [this](const QString& p) { importTree(p); }));
    file->addAction(tr("&Compare with tree file (A/B)..."), this,
                    askOpen(tr("Compare with tree file"), trees,
                            [this](const QString& p) { compareWithTreeFile(p); }));
    file->addAction(tr("Compare &sessions (A/B)..."), this, [this] {
        const QString filter = tr("Tilescope sessions (*.tilescope.json *.json)");
        const QString a = QFileDialog::getOpenFileName(this, tr("Compare sessions: A"), {}, filter);
        if (a.isEmpty()) return;
        const QString b = QFileDialog::getOpenFileName(this, tr("Compare sessions: B"),
                                                       QFileInfo(a).absolutePath(), filter);
        if (!b.isEmpty()) compareSessions(a, b);
    });
    file->addSeparator();
    file->addAction(tr("Open &session..."), m_sessions, &SessionController::openSessionDialog);
    file->addAction(tr("Open s&weep database..."), this,
                    askOpen(tr("Open sweep database"),
                            tr("Sweep databases (*.sqlite *.db *.sqlite3);;All files (*)"),
                            [this](const QString& p) { openSweepDatabase(p); }));
    file->addAction(tr("&Save session"), QKeySequence::Save, m_sessions,
                    [this] { m_sessions->saveToSessionFile(); });
    file->addAction(tr("Save session &as..."), QKeySequence::SaveAs, m_sessions,
                    &SessionController::saveSessionAsDialog);
    m_sessions->setRecentMenu(file->addMenu(tr("&Recent files")));
    buildExportMenu(file);
    file->addAction(tr("Export for &test chip..."), m_exports,
                    &ExportController::exportForTestChipDialog);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
}

void MainWindow::buildExportMenu(QMenu* file) {
    QMenu* exp = file->addMenu(tr("&Export"));
    const QString images = tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf)");
    const QString json = tr("JSON (*.json)");
    struct Entry {
        QString label, kind, filter, suffix;
    };
    const Entry entries[] = {
        {tr("S-T graph (PNG, SVG, PDF)..."), QStringLiteral("st"), images, QStringLiteral("png")},
        {tr("NoC heatmap (PNG, SVG, PDF)..."), QStringLiteral("heatmap"), images,
         QStringLiteral("png")},
        {tr("Report (HTML)..."), QStringLiteral("html"), tr("HTML (*.html)"),
         QStringLiteral("html")},
        {tr("Report (JSON)..."), QStringLiteral("json"), json, QStringLiteral("json")},
        {tr("Tree (text)..."), QStringLiteral("tree-text"), tr("Tree text (*.tree *.txt)"),
         QStringLiteral("tree")},
        {tr("Tree (JSON)..."), QStringLiteral("tree-json"), json, QStringLiteral("json")},
        {tr("Timeline (Chrome trace / Perfetto)..."), QStringLiteral("trace"),
         tr("Trace events (*.json)"), QStringLiteral("json")}};
    for (const Entry& e : entries) {
        // Images first, then what is written from the document.
        if (e.kind == QLatin1String("html")) exp->addSeparator();
        exp->addAction(e.label, m_exports,
                       [this, e] { m_exports->exportDialog(e.kind, e.filter, e.suffix); });
    }
    // Every chart as an image or its data, every table as CSV.
    exp->addSeparator();
    const QString chartFilter = tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf);;Data as CSV (*.csv)");
    for (const auto& [name, plot] : charts()) {
        const QString kind = QStringLiteral("chart:") + name;
        exp->addAction(tr("Chart: %1 (PNG, SVG, PDF, CSV)...").arg(chartTitle(name)), m_exports,
                       [this, kind, chartFilter] {
                           m_exports->exportDialog(kind, chartFilter, QStringLiteral("png"));
                       });
    }
    for (const QString& table : {QStringLiteral("layers"), QStringLiteral("instructions")})
        exp->addAction(tr("Table: %1 (CSV)...").arg(chartTitle(table)), m_exports, [this, table] {
            m_exports->exportDialog(QStringLiteral("table:") + table, tr("CSV (*.csv)"),
                                    QStringLiteral("csv"));
        });
}

std::vector<std::pair<QString, QCustomPlot*>> MainWindow::charts() const {
    return {{QStringLiteral("search"), m_search->plot()},
            {QStringLiteral("tradeoff"), m_tradeoff->plot()},
            {QStringLiteral("boundary"), m_boundaryView->plot()},
            {QStringLiteral("energy"), m_metrics->energyPlot()},
            {QStringLiteral("dram"), m_instructions->dramPlot()}};
}

QString MainWindow::chartTitle(const QString& name) {
    static const QHash<QString, const char*> titles = {
        {QStringLiteral("search"), QT_TR_NOOP("live search plot")},
        {QStringLiteral("tradeoff"), QT_TR_NOOP("energy-delay trade-off")},
        {QStringLiteral("boundary"), QT_TR_NOOP("DRAM boundary")},
        {QStringLiteral("energy"), QT_TR_NOOP("energy breakdown")},
        {QStringLiteral("dram"), QT_TR_NOOP("replayed DRAM bandwidth")},
        {QStringLiteral("layers"), QT_TR_NOOP("Layers")},
        {QStringLiteral("instructions"), QT_TR_NOOP("Instructions")}};
    return tr(titles.value(name, ""));
}

void MainWindow::buildViewMenu() {
    m_viewMenu = menuBar()->addMenu(tr("&View"));
    for (QDockWidget* d : m_docks)
        m_viewMenu->addAction(d->toggleViewAction());
    m_viewMenu->addAction(m_generate->dock()->toggleViewAction());
    m_viewMenu->addSeparator();
    m_viewMenu->addAction(tr("Reset S-T &zoom"), QKeySequence(Qt::CTRL | Qt::Key_0), m_st,
                          &StGraphView::resetZoom);
    m_showLiveBest = m_viewMenu->addAction(tr("Show &live best"));
    m_showLiveBest->setObjectName(QStringLiteral("showLiveBest"));
    m_showLiveBest->setCheckable(true);
    m_showLiveBest->setChecked(true);
    m_showLiveBest->setToolTip(tr("While a search runs, draw its best schedule so far faded "
                                  "over the S-T graph and the NoC heatmap"));
    connect(m_showLiveBest, &QAction::toggled, this, [this](bool on) {
        m_searchControl->setLiveBestShown(on);
        m_st->setShowLiveBest(on);
        m_heatmap->setShowLiveBest(on);
        if (!on) m_liveBest->clear(); // nothing is evaluated for a hidden overlay
    });
}

void MainWindow::buildHelpMenu() {
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&User guide"), QKeySequence::HelpContents, this, &MainWindow::showGuide);
    help->addAction(tr("&Welcome page"), this, [this] {
        m_central->setCurrentIndex(0);
        statusBar()->showMessage(tr("Opening a model returns to the S-T graph"), 5000);
    });
    help->addSeparator();
    help->addAction(tr("&About Tilescope"), this, [this] {
        QMessageBox::about(
            this, tr("About Tilescope"),
            tr("<b>Tilescope %1</b><br>Schedule explorer for DNN inference on tiled accelerators "
               "(RA-tree inter-layer scheduling).")
                .arg(QCoreApplication::applicationVersion()));
    });
}

void MainWindow::openModelDialog() {
    const QString p = QFileDialog::getOpenFileName(this, tr("Open model"), {},
                                                   tr("Models (*.onnx *.json);;All files (*)"));
    if (!p.isEmpty()) openModelAsking(p);
}

void MainWindow::openRecent(const QString& kind, const QString& path) {
    if (kind == QLatin1String("session"))
        m_sessions->openSessionAsking(path);
    else
        openModelAsking(path);
}

bool MainWindow::openModelAsking(const QString& path) {
    // The file first: a model that cannot be read is reported without asking to save work
    // that nothing is going to replace.
    const auto dims = askDimensions(path);
    if (!dims) return false;
    auto net = readModel(path, *dims);
    return net && m_sessions->confirmOpening(QFileInfo(path).fileName()) &&
           openModel(path, std::move(net).value());
}

bool MainWindow::openSample(const QString& model, const QString& preset, bool run, int batch) {
    if (!m_sessions->confirmOpening(tr("the sample"))) return false;
    // The preset and batch first (no model yet: nothing to undo), then the model, evaluated
    // once.
    if (!m_doc->hasModel() && !openHardware(preset)) return false;
    if (!m_doc->hasModel() && batch > 0 && batch != m_doc->batch() && !setBatch(batch))
        return false;
    if (!openModel(model)) return false;
    if (m_doc->hardwareSource() != preset && !openHardware(preset)) return false;
    if (batch > 0 && batch != m_doc->batch() && !setBatch(batch)) return false;
    m_central->setCurrentWidget(m_st);
    if (run) m_searchControl->start();
    return true;
}

void MainWindow::showGuide() {
    // docs/user-guide.md ships inside the binary (resources.qrc): no browser, no network.
    // One guide window: F1 again brings it to the front.
    if (auto* open = findChild<UserGuideDialog*>()) {
        open->raise();
        open->activateWindow();
        return;
    }
    auto* dlg = new UserGuideDialog(this);
    dlg->setAttribute(Qt::WA_DeleteOnClose);
    dlg->resize(std::min(900, width() * 4 / 5), std::min(800, height() * 9 / 10));
    dlg->show();
    // The keyboard goes to the guide (Esc and Ctrl+W close it) also where no window
    // manager gives a new window the focus.
    dlg->raise();
    dlg->activateWindow();
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
    // A dialog of this window closing: the keyboard comes back here (see reclaimKeyboard).
    if (event->type() == QEvent::Hide && watched != this && watched->isWidgetType()) {
        auto* w = static_cast<QWidget*>(watched);
        if (w->isWindow() && w->parentWidget() && w->parentWidget()->window() == this)
            QTimer::singleShot(0, this, &MainWindow::reclaimKeyboard);
    }
    return QMainWindow::eventFilter(watched, event);
}

void MainWindow::reclaimKeyboard() {
    // Where the closed dialog leaves no window of the application active (X gives the
    // focus to the root window without a window manager, and some managers do the same),
    // every shortcut would wait for a click on the window first.
    if (QApplication::activeWindow() || QApplication::activeModalWidget() ||
        QApplication::activePopupWidget() || !isVisible())
        return;
    activateWindow();
}

void MainWindow::showError(const QString& title, const QString& message) {
    m_lastError = message;
    // Also on stderr: a failed open from the command line should be visible in a terminal.
    qWarning("tilescope: %s: %s", qPrintable(title), qPrintable(message));
    statusBar()->showMessage(message, 15000);
    if (m_interactive) QMessageBox::critical(this, title, message);
}

// The sizes of a model's free dimensions (an LLM export's seq and past), asked in a dialog
// (docs/gui.md "Opening a model with free dimensions"): empty for a model without any and
// when scripted (the import then names them); nothing when the user cancels.
std::optional<std::map<std::string, std::int64_t>> MainWindow::askDimensions(const QString& path) {
    const auto free = freeDimensions(path.toStdString());
    if (!free.ok() || free->empty() || !m_interactive) return std::map<std::string, std::int64_t>{};
    DimensionsDialog dialog(path, *free, this);
    if (dialog.exec() != QDialog::Accepted) return std::nullopt;
    return dialog.bindings();
}

Result<Network> MainWindow::readModel(const QString& path,
                                      const std::map<std::string, std::int64_t>& dims) {
    ImportOptions options;
    options.dims = dims;
    QApplication::setOverrideCursor(Qt::WaitCursor);
    auto net = loadModel(path.toStdString(), options);
    QApplication::restoreOverrideCursor();
    if (!net) showError(tr("Open model"), qs(net.error().message));
    return net;
}

bool MainWindow::openModel(const QString& path) {
    const auto dims = askDimensions(path);
    return dims && openModel(path, *dims);
}

bool MainWindow::openModel(const QString& path, const std::map<std::string, std::int64_t>& dims) {
    auto net = readModel(path, dims);
    return net && openModel(path, std::move(net).value());
}

bool MainWindow::openModel(const QString& path, Network net) {
    QApplication::setOverrideCursor(Qt::WaitCursor);
    const QString err = errorText(m_doc->openModel(path, std::move(net)));
    QApplication::restoreOverrideCursor();
    if (!err.isEmpty()) {
        showError(tr("Open model"), err);
        return false;
    }
    // A freshly opened model is reproducible from its file: nothing to recover yet.
    m_sessions->documentFromFiles();
    m_sessions->addRecent(QStringLiteral("model"), QFileInfo(path).absoluteFilePath());
    statusBar()->showMessage(
        tr("Loaded %1: %2 layers").arg(path).arg(m_doc->network()->layers.size()), 5000);
    return true;
}

bool MainWindow::openHardware(const QString& pathOrPreset) {
    const QString err = errorText(m_doc->openHardware(pathOrPreset));
    if (!err.isEmpty()) {
        showError(tr("Open hardware"), err);
        return false;
    }
    inputsChangedMessage();
    return true;
}

void MainWindow::inputsChangedMessage() {
    if (!m_doc->hasModel()) return;
    statusBar()->showMessage(tr("%1: the schedule restarts from the default tree; Undo (Ctrl+Z) "
                                "brings back the previous inputs, tree and edits")
                                 .arg(m_doc->undoStack()->undoText()),
                             10000);
}

bool MainWindow::setBatch(int batch) {
    const QString err = errorText(m_doc->setBatch(batch));
    if (!err.isEmpty()) {
        showError(tr("Batch"), err);
        return false;
    }
    inputsChangedMessage();
    updateTitle();
    return true;
}

std::optional<RATree> MainWindow::readTreeFile(const QString& path, const QString& title) {
    auto fail = [&](const QString& message) {
        showError(title, message);
        return std::nullopt;
    };
    if (!m_doc->hasModel()) return fail(tr("Open a model first"));
    auto text = readFile(path.toStdString());
    if (!text) return fail(qs(text.error().message));
    auto tree = parseTreeDocument(*text, *m_doc->network(), path.toStdString());
    if (!tree) return fail(qs(tree.error().message));
    return std::move(tree).value();
}

bool MainWindow::importTree(const QString& path) {
    auto tree = readTreeFile(path, tr("Import tree"));
    if (!tree) return false;
    const QString err = errorText(m_doc->adoptTree(*tree, tr("Import tree")));
    if (!err.isEmpty()) {
        showError(tr("Import tree"), path + QStringLiteral(": ") + err);
        return false;
    }
    return true;
}

bool MainWindow::compareWithTreeFile(const QString& path) {
    auto tree = readTreeFile(path, tr("Compare with tree file"));
    if (!tree) return false;
    m_diff->setOther(*tree, QFileInfo(path).fileName());
    for (QDockWidget* d : std::as_const(m_docks))
        if (d->widget() == m_diff) {
            d->show();
            d->raise();
        }
    return true;
}

bool MainWindow::openSweepDatabase(const QString& path) {
    auto table = SweepTable::load(path);
    if (!table) {
        showError(tr("Open sweep database"), qs(table.error().message));
        return false;
    }
    if (table->size() == 0) {
        showError(tr("Open sweep database"), path + tr(": no points yet"));
        return false;
    }
    delete m_sweep; // one viewer: the latest database
    m_sweep = new SweepView(std::move(table).value(), path, this);
    m_sweep->setAttribute(Qt::WA_DeleteOnClose, false);
    connect(m_sweep, &SweepView::openPointRequested, this,
            [this](const SweepRow& row, const QString& db) { openSweepPoint(row, db); });
    m_sweep->show();
    m_sweep->raise();
    statusBar()->showMessage(
        tr("Opened sweep %1: %2 points").arg(path).arg(m_sweep->table().size()), 5000);
    return true;
}

bool MainWindow::openSweepPoint(const SweepRow& row, const QString& databasePath) {
    const QString title = tr("Open sweep point");
    if (row.treeJson.empty()) {
        showError(title, qs(row.hwName) + tr(": this point has no schedule: ") + qs(row.reason));
        return false;
    }
    if (!m_sessions->confirmOpening(tr("the sweep point"))) return false;
    QApplication::setOverrideCursor(Qt::WaitCursor);
    auto in = resolveSweepPoint(row, databasePath);
    QApplication::restoreOverrideCursor();
    if (!in) {
        showError(title, qs(in.error().message));
        return false;
    }
    if (auto err = m_doc->restore(in->net, in->modelPath, qs(row.modelSha256), in->hw,
                                  qs(row.hwName), row.batch, in->objective, in->tree)) {
        showError(title, qs(in->where + ": tree: " + err->message));
        return false;
    }
    m_search->setObjective(in->objective);
    // Reproducible from the database, like a freshly opened model: nothing unsaved yet.
    m_sessions->documentFromFiles();
    statusBar()->showMessage(tr("Opened sweep point %1 (%2, batch %3)")
                                 .arg(qs(row.point.substr(0, 12)), qs(row.hwName))
                                 .arg(row.batch),
                             8000);
    return true;
}

CompareSessionsDialog* MainWindow::compareSessions(const QString& pathA, const QString& pathB) {
    auto* dlg = new CompareSessionsDialog(this);
    dlg->setAttribute(Qt::WA_DeleteOnClose);
    if (!dlg->open(pathA, pathB)) {
        showError(tr("Compare sessions"), dlg->errorText());
        delete dlg;
        return nullptr;
    }
    dlg->show();
    return dlg;
}

bool MainWindow::welcomeShown() const {
    return m_central->currentIndex() == 0;
}

void MainWindow::updateTitle() {
    const auto& hw = *m_doc->hardware();
    const QString hwText =
        QStringLiteral("%1 (%2x%3)").arg(qs(hw.name)).arg(hw.meshX).arg(hw.meshY);
    if (!m_doc->hasModel()) {
        setWindowTitle(tr("Tilescope[*]"));
        m_inputsLabel->setText(tr("no model | %1 | batch %2").arg(hwText).arg(m_doc->batch()));
        return;
    }
    const QString model = QFileInfo(m_doc->modelPath()).fileName();
    const QString session = m_sessions->sessionPath();
    setWindowTitle(
        tr("%1[*] - Tilescope").arg(session.isEmpty() ? model : QFileInfo(session).fileName()));
    m_inputsLabel->setText(tr("%1 (%2 layers) | %3 | batch %4")
                               .arg(model)
                               .arg(m_doc->network()->layers.size())
                               .arg(hwText)
                               .arg(m_doc->batch()));
}

} // namespace tilescope::ui
