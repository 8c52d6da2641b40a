#include "widgets/mainwindow.h"

#include "core/autosaver.h"
#include "core/document.h"
#include "core/livebestpreview.h"
#include "core/programrunner.h"
#include "core/reportbuilder.h"
#include "core/searchworker.h"
#include "core/selectionstate.h"
#include "core/session.h"
#include "core/sweeptable.h"
#include "model/model_loader.h"
#include "pipeline/export.h"
#include "pipeline/program.h"
#include "report/result_json.h"
#include "report/trace_json.h"
#include "tree/tree_json.h"
#include "util/fileio.h"
#include "widgets/boundaryview.h"
#include "widgets/comparesessionsdialog.h"
#include "widgets/diffpanel.h"
#include "widgets/instructionspanel.h"
#include "widgets/layerspanel.h"
#include "widgets/metricspanel.h"
#include "widgets/nocheatmapview.h"
#include "widgets/plotexport.h"
#include "widgets/programformatsdialog.h"
#include "widgets/searchpanel.h"
#include "widgets/stgraphview.h"
#include "widgets/sweepview.h"
#include "widgets/tradeoffview.h"
#include "widgets/treepanel.h"
#include "widgets/welcomepage.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QDateTime>
#include <QDialog>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QLocale>
#include <QMenuBar>
#include <QMessageBox>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QTimer>
#include <QUndoStack>
#include <QVBoxLayout>

// Resources of a static library are not registered automatically; Q_INIT_RESOURCE has to
// run outside any namespace.
static void initTilescopeResources() {
    Q_INIT_RESOURCE(resources);
}

namespace tilescope::ui {

namespace {
constexpr int kMaxRecent = 10;
QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

// What the off-thread test-chip export reports back.
struct TestChipExport {
    QString error;
    size_t instructions = 0;
    std::uint64_t programDram = 0;
    double scheduleDram = 0;
};
} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), m_doc(new Document(this)), m_selection(new SelectionState(this)),
      m_inputsLabel(new QLabel(this)), m_worker(new SearchWorker) {
    initTilescopeResources();
    setObjectName(QStringLiteral("mainWindow"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/tilescope.svg")));
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks |
                   QMainWindow::AllowNestedDocks);

    m_st = new StGraphView(m_doc, m_selection, this);
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
            [this](const QString& model, const QString& preset, bool run) {
                openSample(model, preset, run);
            });
    connect(m_welcome, &WelcomePage::openModelRequested, this, &MainWindow::openModelDialog);
    connect(m_welcome, &WelcomePage::openSessionRequested, this, &MainWindow::openSessionDialog);
    connect(m_welcome, &WelcomePage::recentRequested, this,
            [this](const QString& kind, const QString& path) {
                if (kind == QLatin1String("session"))
                    openSessionAsking(path);
                else
                    openModelAsking(path);
            });
    connect(m_welcome, &WelcomePage::guideRequested, this, &MainWindow::showGuide);
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
    connect(m_tradeoff, &TradeoffView::adoptRequested, this,
            [this](const RATree& tree, const QString& label) {
                if (!m_doc->adoptTree(tree, label))
                    statusBar()->showMessage(tr("%1: Undo (Ctrl+Z) goes back").arg(label), 5000);
            });
    connect(m_doc, &Document::treeChanged, this, [this] {
        const auto e = m_doc->evaluation();
        m_tradeoff->setCurrent(e->energy.total(), e->delay, e->valid);
    });
    m_st->setProgramRunner(m_programs);
    m_metrics->setProgramRunner(m_programs);
    m_autosave = new AutoSaver([this](const QString& p) { return makeSession().save(p); },
                               [this] { return isModified(); }, this);
    connect(m_autosave, &AutoSaver::failed, this, [this](const QString& msg) {
        statusBar()->showMessage(tr("Autosave failed: %1").arg(msg), 15000);
    });
    buildDocks();
    buildMenus();
    statusBar()->addPermanentWidget(m_inputsLabel);

    // Views follow the document; the selection follows the tree across renumbering edits.
    connect(m_doc, &Document::treeChanged, this, [this] { m_selection->remap(m_doc->tree()); });
    connect(m_doc, &Document::documentReset, this, [this](bool undoable) {
        m_selection->clear();
        // A new model, hardware or batch makes every search result meaningless.
        if (m_running || m_comparing) {
            ++m_generation;
            m_worker->requestStop();
            m_running = m_comparing = false;
            m_search->setRunState(RunState::Stopped, tr("Stopped: the inputs changed"));
            m_metrics->setCompareRunning(false);
        }
        m_lastSearch.reset();
        m_lastCompare.reset();
        m_tradeoff->clear();
        m_search->setObjective(m_doc->objective());
        m_search->setCanStart(m_doc->hasModel());
        m_central->setCurrentIndex(m_doc->hasModel() ? 1 : 0);
        // Opening a model or session resets this flag after the fact. A batch or hardware
        // change is an undo step (the undo stack's clean state tracks it), except without a
        // model, where there is nothing to undo.
        if (!undoable) m_dirtyInputs = true;
        modifiedChanged();
        updateTitle();
    });
    // A refusal stays until the next accepted edit or selection, not for a fixed time
    // after it stopped being true (issue 16, item 8).
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
    // Every accepted edit, undo and redo moves the undo index: that is what a running
    // search must hear about (it continues from the edited tree, pins included).
    connect(m_doc->undoStack(), &QUndoStack::indexChanged, this, [this] {
        modifiedChanged();
        if (m_running && m_forwardEdits) {
            m_worker->requestReplaceTree(m_doc->tree());
            statusBar()->showMessage(tr("The search continues from the edited tree"), 5000);
        }
    });
    connect(m_search, &SearchPanel::startRequested, this, &MainWindow::startSearch);
    connect(m_search, &SearchPanel::pauseRequested, this, &MainWindow::pauseSearch);
    connect(m_search, &SearchPanel::stopRequested, this, &MainWindow::stopSearch);
    connect(m_search, &SearchPanel::adoptRequested, this, &MainWindow::adoptBest);
    connect(m_search, &SearchPanel::objectiveEdited, m_doc, &Document::setObjective);
    connect(m_metrics, &MetricsPanel::compareRequested, this, &MainWindow::runCompare);

    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    m_thread.setObjectName(QStringLiteral("search"));
    m_thread.start();
    connectWorker();

    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    m_restoredLayout = restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    rebuildRecentMenu();
    m_search->setCanStart(m_doc->hasModel());
    updateTitle();
}

MainWindow::~MainWindow() {
    // Destruction is the clean exit (a crash never gets here): the recovery file goes.
    m_autosave->release();
    m_worker->requestStop();
    m_thread.quit();
    m_thread.wait();
}

bool MainWindow::saveToSessionFile() {
    QString p = m_sessionPath;
    if (p.isEmpty())
        p = QFileDialog::getSaveFileName(this, tr("Save session"), {},
                                         tr("Tilescope sessions (*.tilescope.json)"));
    return !p.isEmpty() && saveSession(p);
}

bool MainWindow::confirmDiscard(const QString& question) {
    if (!m_interactive || !isModified()) return true;
    const auto answer = QMessageBox::question(
        this, tr("Unsaved changes"), question,
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    return answer == QMessageBox::Discard || (answer == QMessageBox::Save && saveToSessionFile());
}

void MainWindow::closeEvent(QCloseEvent* e) {
    // Quitting must not drop hand edits or an adopted search result without asking.
    if (!confirmDiscard(tr("The schedule has changes that are not saved in a session. Save "
                           "them before closing?"))) {
        e->ignore();
        return;
    }
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    m_worker->requestStop();
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
    auto* heatDock =
        dock(tr("NoC heatmap"), QStringLiteral("heatmapDock"), heat, Qt::RightDockWidgetArea);
    // docs/method.md §6: tree | S-T graph | heatmap on top; metrics and the live search plot under
    // them.
    auto* searchDock =
        dock(tr("Search"), QStringLiteral("searchDock"), m_search, Qt::BottomDockWidgetArea);
    auto* metricsDock =
        dock(tr("Metrics"), QStringLiteral("metricsDock"), m_metrics, Qt::BottomDockWidgetArea);
    splitDockWidget(searchDock, metricsDock, Qt::Horizontal);
    // The listing shares the metrics' place as a tab: both are read beside the search plot.
    auto* instrDock = dock(tr("Instructions"), QStringLiteral("instructionsDock"), m_instructions,
                           Qt::BottomDockWidgetArea);
    tabifyDockWidget(metricsDock, instrDock);
    auto* tradeDock =
        dock(tr("Trade-off"), QStringLiteral("tradeoffDock"), m_tradeoff, Qt::BottomDockWidgetArea);
    tabifyDockWidget(metricsDock, tradeDock);
    auto* diffDock =
        dock(tr("Diff A/B"), QStringLiteral("diffDock"), m_diff, Qt::BottomDockWidgetArea);
    tabifyDockWidget(metricsDock, diffDock);
    auto* layersDock =
        dock(tr("Layers"), QStringLiteral("layersDock"), m_layers, Qt::BottomDockWidgetArea);
    tabifyDockWidget(metricsDock, layersDock);
    auto* boundaryDock = dock(tr("DRAM boundary"), QStringLiteral("boundaryDock"), m_boundaryView,
                              Qt::BottomDockWidgetArea);
    tabifyDockWidget(metricsDock, boundaryDock);
    metricsDock->raise();
    // First start (no saved geometry): most of the screen.
    const QRect avail = screen() ? screen()->availableGeometry() : QRect(0, 0, 1500, 950);
    resize(std::min(2400, avail.width() * 19 / 20), std::min(1500, avail.height() * 19 / 20));
    m_searchDock = searchDock;
    m_metricsDock = metricsDock;
    m_heatDock = heatDock;
}

void MainWindow::applyDefaultDockSizes() {
    // Shares of the width, applied once the window has its real size: 1280x800 keeps the
    // tree's time and energy and the metrics readable (issue 16, item 6) and 1920x1080
    // gives the S-T graph the rest.
    const int w = width();
    resizeDocks({m_docks[0], m_heatDock}, {std::max(310, w * 26 / 100), std::max(260, w / 5)},
                Qt::Horizontal);
    resizeDocks({m_searchDock, m_metricsDock}, {w / 2, w / 2}, Qt::Horizontal);
    resizeDocks({m_searchDock}, {std::max(300, height() * 38 / 100)}, Qt::Vertical);
}

void MainWindow::showEvent(QShowEvent* e) {
    QMainWindow::showEvent(e);
    // Only the first time, and only without a saved layout (restoreState wins).
    if (!std::exchange(m_shownOnce, true) && !m_restoredLayout)
        QTimer::singleShot(0, this, &MainWindow::applyDefaultDockSizes);
}

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open model..."), QKeySequence::Open, this, &MainWindow::openModelDialog);
    file->addAction(tr("Open &hardware template..."), this, [this] {
        const QString p =
            QFileDialog::getOpenFileName(this, tr("Open hardware template"), {},
                                         tr("Hardware templates (*.json);;All files (*)"));
        if (!p.isEmpty()) openHardware(p);
    });
    QMenu* presets = file->addMenu(tr("Hardware &preset"));
    for (const std::string& name : presetNames()) {
        const QString n = qs(name);
        presets->addAction(n, this, [this, n] { openHardware(n); });
    }
    file->addAction(tr("Set &batch..."), this, [this] {
        bool ok = false;
        const int b = QInputDialog::getInt(this, tr("Batch"), tr("Batch size B:"), m_doc->batch(),
                                           1, 4096, 1, &ok);
        if (ok) setBatch(b);
    });
    file->addAction(tr("&Import tree..."), this, [this] {
        const QString p = QFileDialog::getOpenFileName(
            this, tr("Import tree"), {}, tr("Trees (*.tree *.txt *.json);;All files (*)"));
        if (!p.isEmpty()) importTree(p);
    });
    file->addAction(tr("&Compare with tree file (A/B)..."), this, [this] {
        const QString p =
            QFileDialog::getOpenFileName(this, tr("Compare with tree file"), {},
                                         tr("Trees (*.tree *.txt *.json);;All files (*)"));
        if (!p.isEmpty()) compareWithTreeFile(p);
    });
    file->addAction(tr("Compare &sessions (A/B)..."), this, [this] {
        const QString filter = tr("Tilescope sessions (*.tilescope.json *.json)");
        const QString a = QFileDialog::getOpenFileName(this, tr("Compare sessions: A"), {}, filter);
        if (a.isEmpty()) return;
        const QString b = QFileDialog::getOpenFileName(this, tr("Compare sessions: B"),
                                                       QFileInfo(a).absolutePath(), filter);
        if (!b.isEmpty()) compareSessions(a, b);
    });
    file->addSeparator();
    file->addAction(tr("Open &session..."), this, &MainWindow::openSessionDialog);
    file->addAction(tr("Open s&weep database..."), this, [this] {
        const QString p = QFileDialog::getOpenFileName(
            this, tr("Open sweep database"), {},
            tr("Sweep databases (*.sqlite *.db *.sqlite3);;All files (*)"));
        if (!p.isEmpty()) openSweepDatabase(p);
    });
    file->addAction(tr("&Save session"), QKeySequence::Save, this, [this] { saveToSessionFile(); });
    file->addAction(tr("Save session &as..."), QKeySequence::SaveAs, this, [this] {
        const QString p = QFileDialog::getSaveFileName(this, tr("Save session"), {},
                                                       tr("Tilescope sessions (*.tilescope.json)"));
        if (!p.isEmpty()) saveSession(p);
    });
    m_recentMenu = file->addMenu(tr("&Recent files"));
    QMenu* exp = file->addMenu(tr("&Export"));
    exp->addAction(tr("S-T graph (PNG, SVG, PDF)..."), this, [this] {
        exportDialog(QStringLiteral("st"), tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf)"),
                     QStringLiteral("png"));
    });
    exp->addAction(tr("NoC heatmap (PNG, SVG, PDF)..."), this, [this] {
        exportDialog(QStringLiteral("heatmap"), tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf)"),
                     QStringLiteral("png"));
    });
    exp->addSeparator();
    exp->addAction(tr("Report (HTML)..."), this, [this] {
        exportDialog(QStringLiteral("html"), tr("HTML (*.html)"), QStringLiteral("html"));
    });
    exp->addAction(tr("Report (JSON)..."), this, [this] {
        exportDialog(QStringLiteral("json"), tr("JSON (*.json)"), QStringLiteral("json"));
    });
    exp->addAction(tr("Tree (text)..."), this, [this] {
        exportDialog(QStringLiteral("tree-text"), tr("Tree text (*.tree *.txt)"),
                     QStringLiteral("tree"));
    });
    exp->addAction(tr("Tree (JSON)..."), this, [this] {
        exportDialog(QStringLiteral("tree-json"), tr("JSON (*.json)"), QStringLiteral("json"));
    });
    exp->addAction(tr("Timeline (Chrome trace / Perfetto)..."), this, [this] {
        exportDialog(QStringLiteral("trace"), tr("Trace events (*.json)"), QStringLiteral("json"));
    });
    file->addAction(tr("Export for &test chip..."), this, [this] {
        // A folder chooser, not a save-file dialog (issue 16, item 9); "Create New Folder"
        // makes a fresh one. Its contents are replaced as a whole.
        const QString dir = QFileDialog::getExistingDirectory(
            this, tr("Export for test chip: choose or create the program folder"));
        if (dir.isEmpty()) return;
        ProgramFormatsDialog ask(m_exportFormats, this);
        if (ask.exec() != QDialog::Accepted) return;
        m_exportFormats = ask.formats();
        exportForTestChip(dir, m_exportFormats);
    });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = m_doc->undoStack()->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = m_doc->undoStack()->createRedoAction(this, tr("&Redo"));
    redo->setShortcut(QKeySequence::Redo);
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    edit->addActions(m_tree->editActions());

    m_viewMenu = menuBar()->addMenu(tr("&View"));
    for (QDockWidget* d : m_docks)
        m_viewMenu->addAction(d->toggleViewAction());
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
        m_st->setShowLiveBest(on);
        m_heatmap->setShowLiveBest(on);
        if (!on) m_liveBest->clear(); // nothing is evaluated for a hidden overlay
    });

    QMenu* search = menuBar()->addMenu(tr("&Search"));
    search->addAction(tr("&Start"), QKeySequence(Qt::Key_F5), this, &MainWindow::startSearch);
    search->addAction(tr("&Pause / resume"), QKeySequence(Qt::Key_F6), this,
                      [this] { pauseSearch(!m_search->property("paused").toBool()); });
    search->addAction(tr("S&top"), QKeySequence(Qt::SHIFT | Qt::Key_F5), this,
                      &MainWindow::stopSearch);
    search->addAction(tr("&Adopt best"), this, &MainWindow::adoptBest);
    search->addSeparator();
    search->addAction(tr("&Compare LS / LP / DP-LP / SA"), this, &MainWindow::runCompare);

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

void MainWindow::openSessionDialog() {
    const QString p = QFileDialog::getOpenFileName(
        this, tr("Open session"), {}, tr("Tilescope sessions (*.tilescope.json *.json)"));
    if (!p.isEmpty()) openSessionAsking(p);
}

bool MainWindow::confirmOpening(const QString& what) {
    return confirmDiscard(tr("The schedule has changes that are not saved in a session. Save "
                             "them before opening %1?")
                              .arg(what));
}

bool MainWindow::openModelAsking(const QString& path) {
    return confirmOpening(QFileInfo(path).fileName()) && openModel(path);
}

bool MainWindow::openSessionAsking(const QString& path) {
    return confirmOpening(QFileInfo(path).fileName()) && openSession(path);
}

bool MainWindow::openSample(const QString& model, const QString& preset, bool run) {
    if (!confirmOpening(tr("the sample"))) return false;
    // The preset first (no model yet: nothing to undo), then the model, evaluated once.
    if (!m_doc->hasModel() && !openHardware(preset)) return false;
    if (!openModel(model)) return false;
    if (m_doc->hardwareSource() != preset && !openHardware(preset)) return false;
    m_central->setCurrentWidget(m_st);
    if (run) startSearch();
    return true;
}

void MainWindow::showGuide() {
    // docs/gui.md ships inside the binary (resources.qrc): no browser, no network.
    QFile f(QStringLiteral(":/docs/gui.md"));
    if (!f.open(QIODevice::ReadOnly)) return;
    auto* dlg = new QDialog(this);
    dlg->setAttribute(Qt::WA_DeleteOnClose);
    dlg->setObjectName(QStringLiteral("userGuide"));
    dlg->setWindowTitle(tr("Tilescope user guide"));
    auto* lay = new QVBoxLayout(dlg);
    auto* text = new QTextBrowser(dlg);
    text->setMarkdown(QString::fromUtf8(f.readAll()));
    text->setOpenExternalLinks(true);
    lay->addWidget(text);
    dlg->resize(std::min(900, width() * 4 / 5), std::min(800, height() * 9 / 10));
    dlg->show();
}

void MainWindow::connectWorker() {
    connect(m_worker, &SearchWorker::snapshotReady, this, [this](SnapshotPtr s) {
        if (s->generation != m_generation) return; // a run we no longer show
        m_search->addSnapshot(*s);
        if (!s->final) m_tradeoff->addHistory(s->energy, s->delay);
        if (!s->final) m_boundaryView->addSearchPoint(s->bestEnergy, s->bestDelay);
        if (!s->final && m_showLiveBest->isChecked()) m_liveBest->offer(s->bestTree);
    });
    connect(m_worker, &SearchWorker::outcomeReady, this, [this](OutcomePtr o) {
        if (o->generation != m_generation || o->net != m_doc->network()) return;
        m_lastSearch = o;
        m_search->setAdoptEnabled(true);
        // Preview before adopting: the diff against the best so far.
        if (o->best.valid && !o->adopt) m_diff->setOther(o->bestTree, tr("search best"));
        if (o->best.valid)
            m_tradeoff->setCandidate(tr("search best (seed %1)").arg(o->result.seed), o->bestTree,
                                     o->best.energy.total(), o->best.delay);
        if (o->adopt) {
            m_liveBest->clear(); // the best is now the document's own tree
            // The worker already continues from this tree: do not send it back.
            m_forwardEdits = false;
            // A refusal reaches the status bar through Document::editRefused.
            static_cast<void>(m_doc->adoptTree(o->bestTree, tr("Adopt best")));
            m_forwardEdits = true;
        }
    });
    connect(m_worker, &SearchWorker::stateChanged, this,
            [this](quint64 gen, RunState s, const QString& msg) {
                if (gen != m_generation) return;
                if (m_comparing) {
                    statusBar()->showMessage(msg, 5000);
                    return;
                }
                m_search->setProperty("paused", s == RunState::Paused);
                m_search->setRunState(s, msg);
                const bool wasRunning = m_running;
                m_running = s == RunState::Running || s == RunState::Paused;
                if (wasRunning && !m_running) {
                    m_liveBest->clear();
                    if (s == RunState::Failed)
                        showError(tr("Search"), msg);
                    else
                        statusBar()->showMessage(
                            tr("Search %1; \"Adopt best\" makes its best tree the document's")
                                .arg(msg.toLower()),
                            8000);
                    emit searchFinished();
                }
            });
    connect(m_worker, &SearchWorker::compareReady, this, [this](ComparePtr c) {
        if (c->generation != m_generation) return;
        m_comparing = false;
        m_lastCompare = c;
        m_metrics->setCompare(c);
        for (const auto& r : c->rows)
            if (r.ok && r.eval.valid)
                m_tradeoff->setCandidate(r.mode == SearchMode::Set
                                             ? QStringLiteral("SA")
                                             : QString::fromLatin1(toString(r.mode)).toUpper(),
                                         r.best, r.eval.energy.total(), r.eval.delay);
        m_metrics->setCompareRunning(false);
        emit compareFinished();
    });
}

std::shared_ptr<RunRequest> MainWindow::makeRequest() {
    auto req = std::make_shared<RunRequest>();
    req->generation = ++m_generation;
    req->net = m_doc->network();
    req->hw = m_doc->hardware();
    req->config = m_search->settings();
    req->config.objective = m_doc->objective();
    req->config.totalBatch = m_doc->batch();
    return req;
}

void MainWindow::startSearch() {
    if (!m_doc->hasModel()) {
        showError(tr("Search"), tr("Open a model first"));
        return;
    }
    if (m_running || m_comparing || m_worker->busy()) return;
    auto req = makeRequest();
    // Continue from the document's tree when it is a valid start in this space (the
    // restricted LS / LP spaces start from their own default trees).
    if (m_doc->evaluation()->valid &&
        (req->config.mode == SearchMode::Set || req->config.mode == SearchMode::Random))
        req->config.initialTree = m_doc->tree();
    m_search->clearHistory();
    m_tradeoff->clearHistory();
    m_boundaryView->clearPath();
    m_search->setAdoptEnabled(false);
    m_lastSearch.reset();
    m_running = true;
    m_search->setRunState(RunState::Running, tr("Starting..."));
    m_worker->startRun(req);
}

void MainWindow::pauseSearch(bool paused) {
    if (m_running) m_worker->requestPause(paused);
}

void MainWindow::stopSearch() {
    if (m_running || m_comparing) m_worker->requestStop();
}

void MainWindow::adoptBest() {
    if (m_running) {
        m_worker->requestAdoptBest();
        return;
    }
    if (!m_lastSearch) {
        statusBar()->showMessage(tr("No search result to adopt yet"), 5000);
        return;
    }
    // A refusal reaches the status bar through Document::editRefused.
    static_cast<void>(m_doc->adoptTree(m_lastSearch->bestTree, tr("Adopt best")));
}

void MainWindow::runCompare() {
    if (!m_doc->hasModel()) {
        showError(tr("Compare"), tr("Open a model first"));
        return;
    }
    if (m_running || m_comparing || m_worker->busy()) {
        statusBar()->showMessage(tr("Compare: stop the running search first"), 5000);
        return;
    }
    auto req = makeRequest();
    m_comparing = true;
    m_metrics->setCompareRunning(true);
    m_worker->startCompare(req);
}

void MainWindow::showError(const QString& title, const QString& message) {
    m_lastError = message;
    // Also on stderr: a failed open from the command line should be visible in a terminal.
    qWarning("tilescope: %s: %s", qPrintable(title), qPrintable(message));
    statusBar()->showMessage(message, 15000);
    if (m_interactive) QMessageBox::critical(this, title, message);
}

bool MainWindow::openModel(const QString& path) {
    QApplication::setOverrideCursor(Qt::WaitCursor);
    const QString err = errorText(m_doc->openModel(path));
    QApplication::restoreOverrideCursor();
    if (!err.isEmpty()) {
        showError(tr("Open model"), err);
        return false;
    }
    m_sessionPath.clear();
    // A freshly opened model is reproducible from its file: nothing to recover yet.
    m_dirtyInputs = false;
    modifiedChanged();
    addRecent(QStringLiteral("model"), QFileInfo(path).absoluteFilePath());
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

bool MainWindow::importTree(const QString& path) {
    if (!m_doc->hasModel()) {
        showError(tr("Import tree"), tr("Open a model first"));
        return false;
    }
    auto text = readFile(path.toStdString());
    if (!text) {
        showError(tr("Import tree"), qs(text.error().message));
        return false;
    }
    auto tree = parseTreeDocument(*text, *m_doc->network(), path.toStdString());
    if (!tree) {
        showError(tr("Import tree"), qs(tree.error().message));
        return false;
    }
    const QString err = errorText(m_doc->adoptTree(*tree, tr("Import tree")));
    if (!err.isEmpty()) {
        showError(tr("Import tree"), path + QStringLiteral(": ") + err);
        return false;
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
    if (!confirmDiscard(tr("The schedule has changes that are not saved in a session. Save "
                           "them before opening the sweep point?")))
        return false;
    QString modelPath = qs(row.model);
    if (!QFileInfo::exists(modelPath)) {
        const QString beside =
            QFileInfo(databasePath).dir().filePath(QFileInfo(modelPath).fileName());
        if (QFileInfo::exists(beside)) modelPath = beside;
    }
    const std::string where = databasePath.toStdString() + ": point " + row.point.substr(0, 16);
    auto fail = [&](const std::string& msg) {
        showError(title, qs(msg));
        return false;
    };
    auto sha = sha256File(modelPath.toStdString());
    if (!sha) return fail(where + ": " + sha.error().message);
    if (*sha != row.modelSha256)
        return fail(where + ": " + modelPath.toStdString() +
                    ": the file changed since the sweep (sha256 differs)");
    QApplication::setOverrideCursor(Qt::WaitCursor);
    auto net = loadModel(modelPath.toStdString());
    QApplication::restoreOverrideCursor();
    if (!net) return fail(net.error().message);
    auto hw = parseHardware(row.hwJson, where + ": hw_json");
    if (!hw) return fail(hw.error().message);
    auto tree = parseTreeJson(row.treeJson, *net, where + ": tree_json");
    if (!tree) return fail(tree.error().message);
    const Objective objective{row.objectiveN, row.objectiveM};
    auto shared = std::make_shared<const Network>(std::move(net).value());
    if (auto err =
            m_doc->restore(shared, QFileInfo(modelPath).absoluteFilePath(), qs(row.modelSha256),
                           *hw, qs(row.hwName), row.batch, objective, *tree))
        return fail(where + ": tree: " + err->message);
    m_search->setObjective(objective);
    // Reproducible from the database, like a freshly opened model: nothing unsaved yet.
    m_sessionPath.clear();
    m_dirtyInputs = false;
    modifiedChanged();
    updateTitle();
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

bool MainWindow::compareWithTreeFile(const QString& path) {
    if (!m_doc->hasModel()) {
        showError(tr("Compare with tree file"), tr("Open a model first"));
        return false;
    }
    auto text = readFile(path.toStdString());
    if (!text) {
        showError(tr("Compare with tree file"), qs(text.error().message));
        return false;
    }
    auto tree = parseTreeDocument(*text, *m_doc->network(), path.toStdString());
    if (!tree) {
        showError(tr("Compare with tree file"), qs(tree.error().message));
        return false;
    }
    m_diff->setOther(*tree, QFileInfo(path).fileName());
    for (QDockWidget* d : std::as_const(m_docks))
        if (d->widget() == m_diff) {
            d->show();
            d->raise();
        }
    return true;
}

bool MainWindow::saveSession(const QString& path) {
    if (!m_doc->hasModel()) {
        showError(tr("Save session"), tr("Nothing to save: open a model first"));
        return false;
    }
    if (auto err = makeSession().save(path)) {
        showError(tr("Save session"), qs(err->message));
        return false;
    }
    m_dirtyInputs = false;
    m_doc->undoStack()->setClean();
    m_autosave->discard(); // saved: nothing left to recover
    modifiedChanged();
    m_sessionPath = path;
    addRecent(QStringLiteral("session"), QFileInfo(path).absoluteFilePath());
    statusBar()->showMessage(tr("Saved %1").arg(path), 5000);
    return true;
}

Session MainWindow::makeSession() const {
    Session s;
    s.modelPath = m_doc->modelPath();
    s.modelSha256 = m_doc->modelSha256();
    s.hardware = hardwareToJson(*m_doc->hardware());
    s.hardwareSource = m_doc->hardwareSource();
    s.batch = m_doc->batch();
    s.objective = m_doc->objective();
    const RATree& t = m_doc->tree();
    s.treeText = treeToText(t, *m_doc->network());
    for (int i = 0; i < t.size(); ++i)
        if (t.node(i).pinned && t.attached(i)) s.pinned << qs(t.pathOf(i));
    s.search = m_search->settings();
    s.results = ReportBuilder(*m_doc, m_lastSearch, m_lastCompare).json();
    return s;
}

bool MainWindow::openSession(const QString& path) {
    return loadSession(path, true);
}

bool MainWindow::loadSession(const QString& path, bool remember) {
    auto s = Session::load(path);
    if (!s) {
        showError(tr("Open session"), qs(s.error().message));
        return false;
    }
    auto fail = [&](const std::string& msg) {
        showError(tr("Open session"), qs(msg));
        return false;
    };
    auto in = s->resolve(path);
    if (!in) return fail(in.error().message);
    if (auto err = m_doc->restore(in->net, s->modelPath, s->modelSha256, in->hw,
                                  s->hardwareSource.isEmpty() ? qs(in->hw.name) : s->hardwareSource,
                                  s->batch, s->objective, in->tree))
        return fail(path.toStdString() + ": tree: " + err->message);
    m_search->setSettings(s->search);
    m_search->setObjective(s->objective);
    // A recovered session is unsaved work (remember == false): it keeps no file name and
    // stays modified until saved.
    m_dirtyInputs = !remember;
    modifiedChanged();
    if (!remember) {
        updateTitle();
        return true;
    }
    m_sessionPath = path;
    addRecent(QStringLiteral("session"), QFileInfo(path).absoluteFilePath());
    statusBar()->showMessage(tr("Opened session %1").arg(path), 5000);
    return true;
}

bool MainWindow::welcomeShown() const {
    return m_central->currentIndex() == 0;
}

bool MainWindow::isModified() const {
    return m_doc->hasModel() && (m_dirtyInputs || !m_doc->undoStack()->isClean());
}

void MainWindow::modifiedChanged() {
    m_autosave->documentChanged();
    setWindowModified(isModified());
}

bool MainWindow::restoreRecovery() {
    const QString path = m_autosave->recoveryPath();
    if (!loadSession(path, false)) return false;
    // The file now stands for this window's unsaved work: a clean exit or a save removes it.
    m_autosave->takeOver();
    qInfo("tilescope: restored the unsaved session from %s", qPrintable(path));
    statusBar()->showMessage(tr("Restored the unsaved session from %1").arg(path), 10000);
    return true;
}

bool MainWindow::offerRecovery() {
    if (!m_autosave->hasRecovery()) return false;
    const QString mode = qEnvironmentVariable("TILESCOPE_RECOVERY_AUTO");
    bool accept = mode == QLatin1String("accept");
    if (mode.isEmpty()) {
        if (!m_interactive) return false; // leave it for an interactive start
        const QFileInfo fi(m_autosave->recoveryPath());
        accept = QMessageBox::question(
                     this, tr("Restore unsaved work?"),
                     tr("Tilescope did not exit cleanly last time. Restore the unsaved session "
                        "autosaved at %1?\n\n(Discard deletes it.)")
                         .arg(QLocale().toString(fi.lastModified(), QLocale::ShortFormat)),
                     QMessageBox::Yes | QMessageBox::Discard, QMessageBox::Yes) == QMessageBox::Yes;
    }
    if (!accept) {
        m_autosave->discard();
        return false;
    }
    return restoreRecovery();
}

void MainWindow::exportForTestChip(const QString& dir, const ProgramFormats& formats) {
    if (!m_doc->hasModel()) {
        showError(tr("Export for test chip"), tr("Nothing to export: open a model first"));
        emit testChipExported(false, m_lastError);
        return;
    }
    if (m_exportJob.busy()) {
        statusBar()->showMessage(tr("An export for the test chip is already running"), 5000);
        return;
    }
    statusBar()->showMessage(tr("Generating the program for %1...").arg(dir));
    // A context of its own: the document's belongs to the GUI thread.
    auto net = m_doc->network();
    auto hw = m_doc->hardware();
    const RATree tree = m_doc->tree();
    const int batch = m_doc->batch();
    const Objective obj = m_doc->objective();
    const std::string model = QFileInfo(m_doc->modelPath()).fileName().toStdString();
    const std::string out = dir.toStdString();
    auto work = [net, hw, tree, batch, obj, model, out, formats] {
        TestChipExport r;
        EvalContext ctx(*net, *hw);
        EvalOptions eo;
        eo.objective = obj;
        CodegenOptions co;
        co.withIr = formats.ir;
        auto gen = buildProgram(ctx, tree, batch, eo, model, co);
        if (!gen) {
            r.error = qs(out + ": " + gen.error().message);
            return r;
        }
        if (auto e = exportProgram(out, *gen, *net, *hw, formats)) {
            r.error = qs(e->message);
            return r;
        }
        r.instructions = gen->program.instructionCount();
        r.programDram = gen->programDramBytes;
        r.scheduleDram = gen->layout.evaluation.dramBytes;
        return r;
    };
    // The export reports its outcome whatever was edited meanwhile: the stamp is unused.
    m_exportJob.run(
        m_doc->revision(), std::move(work), [this, dir](const TestChipExport& r, quint64) {
            if (!r.error.isEmpty()) {
                showError(tr("Export for test chip"), r.error);
                emit testChipExported(false, r.error);
                return;
            }
            const QLocale loc;
            const QString msg =
                tr("Exported %1: %2 instructions, DRAM bytes %3 (schedule %4, %5%)")
                    .arg(dir, loc.toString(qulonglong(r.instructions)),
                         loc.toString(qulonglong(r.programDram)),
                         loc.toString(r.scheduleDram, 'f', 0))
                    .arg(r.scheduleDram > 0
                             ? 100.0 * (double(r.programDram) - r.scheduleDram) / r.scheduleDram
                             : 0.0,
                         0, 'f', 3);
            statusBar()->showMessage(msg, 15000);
            emit testChipExported(true, msg);
        });
}

bool MainWindow::exportTo(const QString& kind, const QString& path) {
    if (!m_doc->hasModel()) {
        showError(tr("Export"), tr("Nothing to export: open a model first"));
        return false;
    }
    QString err;
    const Network& net = *m_doc->network();
    if (kind == QLatin1String("st"))
        err = m_st->exportTo(path);
    else if (kind == QLatin1String("heatmap"))
        err = m_heatmap->exportTo(path);
    else if (kind == QLatin1String("html"))
        err = writeTextFile(path, reportHtml().toUtf8());
    else if (kind == QLatin1String("json"))
        err = writeTextFile(
            path, QByteArray::fromStdString(
                      ReportBuilder(*m_doc, m_lastSearch, m_lastCompare).json().dump(2) + "\n"));
    else if (kind == QLatin1String("tree-text"))
        err = writeTextFile(path, QByteArray::fromStdString(treeToText(m_doc->tree(), net)));
    else if (kind == QLatin1String("tree-json"))
        err = writeTextFile(path, QByteArray::fromStdString(treeToJson(m_doc->tree(), net) + "\n"));
    else if (kind == QLatin1String("trace"))
        err =
            writeTextFile(path, QByteArray::fromStdString(traceEventJson(
                                    *m_doc->evaluation(), net, *m_doc->hardware(), m_doc->tree())));
    else
        err = tr("unknown export kind '%1'").arg(kind);
    if (!err.isEmpty()) {
        showError(tr("Export"), err);
        return false;
    }
    statusBar()->showMessage(tr("Exported %1").arg(path), 5000);
    return true;
}

QString MainWindow::reportHtml() {
    // The report carries the S-T graph and the heatmap as the views draw them (issue 16,
    // item 10), rendered through the export path (2x PNG, no selection) into a scratch
    // folder and embedded.
    ReportBuilder report(*m_doc, m_lastSearch, m_lastCompare);
    QTemporaryDir tmp;
    if (tmp.isValid()) {
        auto embed = [&](const QString& caption, const QString& file, auto render) {
            const QString p = tmp.filePath(file);
            if (!render(p).isEmpty()) return;
            QFile f(p);
            if (f.open(QIODevice::ReadOnly))
                report.addFigure(caption, f.readAll(), QStringLiteral("image/png"));
        };
        embed(tr("S-T graph: time (cycles) against tile id"), QStringLiteral("st.png"),
              [this](const QString& p) { return m_st->exportTo(p); });
        embed(tr("NoC heatmap: tile busy fraction and link traffic"), QStringLiteral("noc.png"),
              [this](const QString& p) { return m_heatmap->exportTo(p); });
    }
    return report.html();
}

void MainWindow::exportDialog(const QString& kind, const QString& filter, const QString& suffix) {
    QFileDialog dlg(this, tr("Export"), {}, filter);
    dlg.setAcceptMode(QFileDialog::AcceptSave);
    dlg.setDefaultSuffix(suffix);
    if (dlg.exec() != QDialog::Accepted || dlg.selectedFiles().isEmpty()) return;
    QString path = dlg.selectedFiles().front();
    // The chosen filter decides the format when the name has no suffix of its own.
    if (QFileInfo(path).suffix().isEmpty()) {
        const QString f = dlg.selectedNameFilter();
        const int a = f.indexOf(QLatin1String("*.")), b = f.indexOf(QLatin1Char(')'), a);
        if (a >= 0 && b > a) path += f.mid(a + 1, b - a - 1);
    }
    exportTo(kind, path);
}

void MainWindow::addRecent(const QString& kind, const QString& path) {
    QSettings settings;
    QStringList list = settings.value(QStringLiteral("recentFiles")).toStringList();
    const QString entry = kind + QLatin1Char(':') + path;
    list.removeAll(entry);
    list.prepend(entry);
    while (list.size() > kMaxRecent)
        list.removeLast();
    settings.setValue(QStringLiteral("recentFiles"), list);
    rebuildRecentMenu();
    updateTitle();
}

void MainWindow::rebuildRecentMenu() {
    if (!m_recentMenu) return;
    m_recentMenu->clear();
    const QStringList list = QSettings().value(QStringLiteral("recentFiles")).toStringList();
    m_welcome->setRecent(list);
    for (const QString& entry : list) {
        const int colon = entry.indexOf(QLatin1Char(':'));
        const QString kind = entry.left(colon), path = entry.mid(colon + 1);
        QAction* a = m_recentMenu->addAction(
            QStringLiteral("%1  (%2)").arg(QFileInfo(path).fileName(), kind));
        a->setToolTip(path);
        connect(a, &QAction::triggered, this, [this, kind, path] {
            if (kind == QLatin1String("session"))
                openSessionAsking(path);
            else
                openModelAsking(path);
        });
    }
    m_recentMenu->setEnabled(!list.isEmpty());
    if (!list.isEmpty()) {
        m_recentMenu->addSeparator();
        m_recentMenu->addAction(tr("Clear list"), this, [this] {
            QSettings().remove(QStringLiteral("recentFiles"));
            rebuildRecentMenu();
        });
    }
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
    setWindowTitle(tr("%1[*] - Tilescope")
                       .arg(m_sessionPath.isEmpty() ? model : QFileInfo(m_sessionPath).fileName()));
    m_inputsLabel->setText(tr("%1 (%2 layers) | %3 | batch %4")
                               .arg(model)
                               .arg(m_doc->network()->layers.size())
                               .arg(hwText)
                               .arg(m_doc->batch()));
}

} // namespace tilescope::ui
