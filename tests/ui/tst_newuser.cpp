// What a new user meets in the first hour with the desktop explorer, each as it was found
// failing: a search result outliving the inputs it was found for, a session saved under a
// name the open dialog cannot see, a window restored larger than the screen, figures of one
// leaf that disagree between views, tree columns out of reach, views that go blank on an
// invalid edit, a test-chip export that refused a new folder, a developer's guide behind F1,
// and smaller things: the current preset unmarked, silent undo, and a save question asked
// before the file to open was found unreadable. Also the S-T hover's figures without their
// scope, the invalid banner over the graph's first row, colours without a key, temperature
// rises the live plot did not explain, a 12x12 heatmap without tile numbers, and the
// welcome page's samples where the package installs them.
#include "core/bytestext.h"
#include "core/document.h"
#include "core/layersmodel.h"
#include "core/livebestpreview.h"
#include "core/ratreemodel.h"
#include "core/searchsnapshot.h"
#include "expectok.h"
#include "report/node_scope.h"
#include "testwindow.h"
#include "widgets/exportcontroller.h"
#include "widgets/instructionspanel.h"
#include "widgets/layerspanel.h"
#include "widgets/metricspanel.h"
#include "widgets/nocheatmapview.h"
#include "widgets/palette.h"
#include "widgets/programformatsdialog.h"
#include "widgets/searchcontroller.h"
#include "widgets/searchpanel.h"
#include "widgets/sessioncontroller.h"
#include "widgets/stgraphplottable.h"
#include "widgets/stgraphview.h"
#include "widgets/treepanel.h"
#include "widgets/userguidedialog.h"
#include "widgets/welcomepage.h"

#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTabBar>
#include <QTableView>
#include <QTextBrowser>
#include <QTimer>
#include <QTreeView>
#include <QUndoStack>
#include <qcustomplot.h>
#include <set>

using namespace tilescope;
using namespace tilescope::ui;

class TstNewUser : public QObject {
    Q_OBJECT
  private:
    QTemporaryDir m_dir;

    // The Layers row of `node`'s layer, or -1.
    static int layersRow(const LayersModel& m, int node) { return m.rowOfNode(node); }

  private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }

    // A finished search's result belongs to the inputs it searched: after a hardware
    // change the panel shows no best, no plot and nothing to adopt.
    void searchResultGoesWithTheInputs() {
        auto w = openSampleWindow(m_dir);
        QVERIFY(w);
        SearchConfig c = w->searchPanel()->settings();
        c.seconds = 0; // beta sets an iteration count: a short, reproducible run
        c.beta = 1;
        c.chains = 1;
        w->searchPanel()->setSettings(c);
        QSignalSpy finished(w->searchControl(), &SearchController::searchFinished);
        w->searchControl()->start();
        QVERIFY(finished.wait(60000));
        SearchPanel* panel = w->searchPanel();
        QVERIFY(panel->adoptEnabled());
        QVERIFY(!panel->bestText().isEmpty());
        QVERIFY(panel->pointCount() > 0);
        // The end of the search says what it gained; an iteration budget is repeatable.
        QVERIFY2(panel->summaryText().contains(QLatin1String("better")),
                 qPrintable(panel->summaryText()));
        QVERIFY(!panel->summaryText().contains(QLatin1String("unrepeatable")));

        QVERIFY(w->openHardware(QStringLiteral("testchip")));
        QVERIFY(!panel->adoptEnabled());
        QVERIFY(panel->bestText().isEmpty());
        QCOMPARE(panel->pointCount(), 0);
        QVERIFY(!w->searchControl()->lastSearch());
        const auto* status = panel->findChild<QLabel*>(QStringLiteral("searchStatus"));
        QVERIFY(status->text().contains(QLatin1String("inputs changed")));
    }

    // "Save session as" with a bare name writes a file the Open session filter lists.
    void sessionNameGetsItsSuffix() {
        auto w = openSampleWindow(m_dir);
        QVERIFY(w);
        const QString typed = m_dir.filePath(QStringLiteral("s1"));
        QVERIFY2(w->sessions()->saveSession(typed), qPrintable(w->lastError()));
        QVERIFY(!QFile::exists(typed));
        QVERIFY(QFile::exists(typed + QStringLiteral(".tilescope.json")));
        QCOMPARE(w->sessions()->sessionPath(), typed + QStringLiteral(".tilescope.json"));
        // A name that has the suffix keeps it as typed.
        const QString full = m_dir.filePath(QStringLiteral("s2.json"));
        QVERIFY(w->sessions()->saveSession(full));
        QVERIFY(QFile::exists(full));
    }

    // A geometry saved on a larger screen is brought inside the screen it is restored on,
    // so the status bar and the docks' buttons stay within reach.
    void savedGeometryFitsTheScreen() {
        const QRect avail = QGuiApplication::primaryScreen()->availableGeometry();
        {
            QWidget big;
            big.setGeometry(avail.x() + 240, avail.y() + 150, avail.width() + 240,
                            avail.height() + 150);
            QSettings().setValue(QStringLiteral("window/geometry"), big.saveGeometry());
        }
        qputenv("TILESCOPE_RECOVERY_DIR", m_dir.path().toUtf8());
        MainWindow w;
        w.setInteractive(false);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QTest::qWait(100); // the window is fitted once shown, when its frame is known
        QVERIFY2(avail.contains(w.geometry()),
                 qPrintable(QStringLiteral("%1,%2 %3x%4 outside %5x%6")
                                .arg(w.x())
                                .arg(w.y())
                                .arg(w.width())
                                .arg(w.height())
                                .arg(avail.width())
                                .arg(avail.height())));
        QSettings().remove(QStringLiteral("window/geometry"));
    }

    // One figure per scope: the tree's Time and Energy are the whole run's, equal to the
    // Layers table's for every leaf, and their headers say so.
    void treeAndLayersAgree() {
        auto w = openSampleWindow(m_dir);
        QVERIFY(w);
        RATreeModel* tree = w->treePanel()->model();
        LayersModel* layers = w->layersPanel()->model();
        const Document& doc = *w->document();
        int leaves = 0, batched = 0;
        for (int node = 0; node < doc.tree().size(); ++node) {
            if (doc.tree().node(node).type != NodeType::Leaf) continue;
            const int row = layersRow(*layers, node);
            QVERIFY(row >= 0);
            const QModelIndex ti = tree->indexOfNode(node, RATreeModel::Time);
            const QModelIndex ei = tree->indexOfNode(node, RATreeModel::Energy);
            // The tree's header carries the unit ("Cycles (run)"), the table's cells.
            QCOMPARE(ti.data().toString() + QStringLiteral(" cycles"),
                     layers->index(row, LayersModel::Time).data().toString());
            QCOMPARE(ei.data().toString(),
                     layers->index(row, LayersModel::Energy).data().toString());
            ++leaves;
            batched += invocationsOf(doc.tree(), node) > 1;
        }
        QVERIFY(leaves > 10);
        QVERIFY2(batched > 0, "no leaf runs more than once: the scopes would not differ");
        for (int c : {int(RATreeModel::Time), int(RATreeModel::Energy)}) {
            QVERIFY(
                tree->headerData(c, Qt::Horizontal).toString().contains(QLatin1String("(run)")));
            QVERIFY(tree->headerData(c, Qt::Horizontal, Qt::ToolTipRole)
                        .toString()
                        .contains(QLatin1String("whole run")));
        }
        for (int c = 0; c < RATreeModel::ColumnCount; ++c)
            QVERIFY(!tree->headerData(c, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty());
        QVERIFY(tree->headerData(RATreeModel::Npt, Qt::Horizontal, Qt::ToolTipRole)
                    .toString()
                    .contains(QLatin1String("Normalised processing time")));
    }

    // The tree's figure columns, its sub-batch count and its pin boxes are visible without
    // scrolling at 1280x800 and at 1600x1000.
    void treeColumnsInReach_data() {
        QTest::addColumn<QSize>("size");
        QTest::newRow("1280x800") << QSize(1280, 800);
        QTest::newRow("1600x1000") << QSize(1600, 1000);
    }
    void treeColumnsInReach() {
        QFETCH(QSize, size);
        auto w = openSampleWindow(m_dir);
        QVERIFY(w);
        w->resize(size);
        QTest::qWait(200);
        QTreeView* view = w->treePanel()->view();
        QHeaderView* h = view->header();
        const int width = view->viewport()->width();
        QVector<int> needed = {RATreeModel::Name, RATreeModel::Time, RATreeModel::Energy,
                               RATreeModel::Batch, RATreeModel::Pinned};
        for (int c : needed) {
            const int right = h->sectionViewportPosition(c) + h->sectionSize(c);
            QVERIFY2(
                !h->isSectionHidden(c) && h->sectionViewportPosition(c) >= 0 && right <= width,
                qPrintable(
                    QStringLiteral("column %1 ends at %2 of %3").arg(c).arg(right).arg(width)));
        }
        // A section is wide enough for its header's text.
        for (int c : needed) {
            const QString text = h->model()->headerData(c, Qt::Horizontal).toString();
            for (const QString& line : text.split(QLatin1Char('\n')))
                QVERIFY2(h->sectionSize(c) >= h->fontMetrics().horizontalAdvance(line),
                         qPrintable(text));
        }
    }

    // At 1280x800 no dock tab is cut, the Instructions table shows its header and rows,
    // and a time figure takes at most two lines.
    void nothingClippedAt1280x800() {
        auto w = openSampleWindow(m_dir);
        QVERIFY(w);
        for (const char* dock : {"instructionsDock", "metricsDock"}) {
            w->findChild<QDockWidget*>(QLatin1String(dock))->raise();
            QTest::qWait(100);
        }
        for (QTabBar* bar : w->findChildren<QTabBar*>()) {
            if (!bar->isVisible()) continue;
            for (int i = 0; i < bar->count(); ++i)
                QVERIFY2(bar->tabRect(i).width() >=
                                 bar->fontMetrics().horizontalAdvance(bar->tabText(i)) &&
                             bar->rect().contains(bar->tabRect(i)),
                         qPrintable(bar->tabText(i)));
        }
        // The live plot's colour legend fits its width.
        QCustomPlot* live = w->searchPanel()->plot();
        auto* legend = qobject_cast<QCPTextElement*>(live->plotLayout()->element(0, 0));
        QVERIFY(legend);
        for (const QString& line : legend->text().split(QLatin1Char('\n')))
            QVERIFY2(QFontMetrics(legend->font()).horizontalAdvance(line) <= live->width(),
                     qPrintable(line));
        w->findChild<QDockWidget*>(QStringLiteral("instructionsDock"))->raise();
        QTest::qWait(100);
        QTableView* listing = w->instructionsPanel()->view();
        const int row = listing->verticalHeader()->defaultSectionSize();
        QVERIFY(listing->horizontalHeader()->isVisible());
        // The summary above it grows once the program is generated: wait for the layout.
        QTRY_VERIFY2_WITH_TIMEOUT(listing->viewport()->height() >= 5 * row,
                                  qPrintable(QString::number(listing->viewport()->height())),
                                  20000);
        w->findChild<QDockWidget*>(QStringLiteral("metricsDock"))->raise();
        QTest::qWait(100);
        const auto* delay = w->metrics()->findChild<QScrollArea*>(QStringLiteral("metricsFigures"));
        QVERIFY(delay);
        for (QLabel* l : delay->widget()->findChildren<QLabel*>())
            if (l->text().contains(QLatin1String("cycles")))
                QVERIFY2(l->height() <= 2 * l->fontMetrics().lineSpacing() + 4,
                         qPrintable(l->text()));
    }

    // An invalid edit keeps the last valid figures in the tree and the Layers table, faded,
    // instead of blank columns and "nothing to bound".
    void invalidEditKeepsFigures() {
        auto w = openSampleWindow(m_dir);
        QVERIFY(w);
        Document* doc = w->document();
        const int leaf = doc->tree().leafOf(3);
        const QString before =
            w->treePanel()->model()->indexOfNode(leaf, RATreeModel::Energy).data().toString();
        QVERIFY(!before.isEmpty());
        const int rows = w->layersPanel()->model()->rowCount();
        const int kids = int(doc->tree().node(doc->tree().root).children.size());
        QVERIFY_OK(doc->wrap(doc->tree().root, 0, kids, NodeType::S));
        QVERIFY(!doc->evaluation()->valid);
        RATreeModel* tree = w->treePanel()->model();
        const int moved = doc->tree().leafOf(3);
        const QModelIndex e = tree->indexOfNode(moved, RATreeModel::Energy);
        QCOMPARE(e.data().toString(), before);
        QVERIFY(e.data(Qt::ForegroundRole).isValid()); // faded
        QVERIFY(e.data(Qt::ToolTipRole).toString().contains(QLatin1String("Last valid")));
        LayersModel* layers = w->layersPanel()->model();
        QCOMPARE(layers->rowCount(), rows);
        QVERIFY(layers->stale());
        QCOMPARE(layers->index(layers->rowOfNode(moved), LayersModel::Energy).data().toString(),
                 before);
        const auto* summary = w->layersPanel()->findChild<QLabel*>(QStringLiteral("layersSummary"));
        QVERIFY(summary->text().contains(QLatin1String("last valid")));
        doc->undoStack()->undo();
        QVERIFY(!layers->stale());
        QVERIFY(!tree->indexOfNode(leaf, RATreeModel::Energy).data(Qt::ForegroundRole).isValid());
    }

    // "Export for test chip" takes a typed folder that does not exist yet and creates it,
    // as the docs promise ("choose or create").
    void testChipExportCreatesATypedFolder() {
        auto w = openSampleWindow(m_dir);
        QVERIFY(w);
        const QString folder = m_dir.filePath(QStringLiteral("new/program"));
        QVERIFY(!QFileInfo::exists(folder));
        QSignalSpy done(w->exports(), &ExportController::testChipExported);
        QTimer::singleShot(0, w.get(), [&] {
            auto* d = qobject_cast<ProgramFormatsDialog*>(QApplication::activeModalWidget());
            QVERIFY(d);
            d->folderEdit()->setText(folder);
            QVERIFY(d->okButton()->isEnabled());
            d->okButton()->click();
        });
        w->exports()->exportForTestChipDialog();
        QVERIFY(done.wait(60000) || !done.isEmpty());
        QVERIFY2(done.at(0).at(0).toBool(), qPrintable(done.at(0).at(1).toString()));
        QVERIFY(QFileInfo::exists(folder + QStringLiteral("/program.bin")));
    }

    // F1 opens a guide written for users, with contents and search, closed by Esc or
    // Ctrl+W.
    void guideForUsers() {
        auto w = openSampleWindow(m_dir);
        QVERIFY(w);
        for (const QKeySequence& close :
             {QKeySequence(Qt::Key_Escape), QKeySequence(Qt::CTRL | Qt::Key_W)}) {
            w->showGuide();
            auto* guide = w->findChild<UserGuideDialog*>();
            QVERIFY(guide);
            QVERIFY(QTest::qWaitForWindowExposed(guide));
            guide->activateWindow();
            QVERIFY(QTest::qWaitForWindowActive(guide));
            QVERIFY(guide->contents()->count() >= 6);
            const QString text = guide->text()->toPlainText();
            for (const char* dev : {"QThread", "ui/core", ".cpp", "QCustomPlot"})
                QVERIFY2(!text.contains(QLatin1String(dev)), dev);
            QVERIFY(text.contains(QLatin1String("Glossary")));
            QVERIFY(guide->find(QStringLiteral("sub-batch")));
            guide->searchBox()->setFocus();
            QTest::keySequence(guide->searchBox(), close);
            QTRY_VERIFY(!w->findChild<UserGuideDialog*>());
        }
    }

    // The Hardware preset menu ticks the current preset.
    void presetMenuShowsTheCurrentOne() {
        auto w = openSampleWindow(m_dir);
        QVERIFY(w);
        auto checked = [&] {
            for (QAction* a : w->findChild<QMenu*>(QStringLiteral("presetMenu"))->actions())
                if (a->isChecked()) return a->text();
            return QString();
        };
        QCOMPARE(checked(), QStringLiteral("edge"));
        QVERIFY(w->openHardware(QStringLiteral("testchip")));
        QCOMPARE(checked(), QStringLiteral("testchip"));
        w->document()->undoStack()->undo();
        QCOMPARE(checked(), QStringLiteral("edge"));
    }

    // Undo and redo say on the status bar what they undid or redid.
    void undoSaysWhat() {
        auto w = openSampleWindow(m_dir);
        QVERIFY(w);
        Document* doc = w->document();
        QVERIFY_OK(doc->wrap(doc->tree().root, 0, 2, NodeType::T));
        const QString label = doc->undoStack()->undoText();
        QAction *undo = nullptr, *redo = nullptr;
        for (QAction* a : w->findChildren<QAction*>()) {
            if (a->shortcut() == QKeySequence(QKeySequence::Undo)) undo = a;
            if (a->shortcut() == QKeySequence(QKeySequence::Redo)) redo = a;
        }
        QVERIFY(undo && redo);
        undo->trigger();
        QCOMPARE(w->statusBar()->currentMessage(), QStringLiteral("Undone: ") + label);
        redo->trigger();
        QCOMPARE(w->statusBar()->currentMessage(), QStringLiteral("Redone: ") + label);
    }

    // A model or session file that cannot be read is reported without first asking to save
    // the current (modified) work.
    void unreadableFileAsksNothing() {
        auto w = openSampleWindow(m_dir);
        QVERIFY(w);
        Document* doc = w->document();
        QVERIFY_OK(doc->wrap(doc->tree().root, 0, 2, NodeType::T)); // unsaved work
        w->setInteractive(true);
        const QString bad = m_dir.filePath(QStringLiteral("corrupt.onnx"));
        {
            QFile f(bad);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("not a model");
        }
        const QString badSession = m_dir.filePath(QStringLiteral("corrupt.tilescope.json"));
        QFile::copy(bad, badSession);
        QStringList asked; // the titles of the message boxes shown, closed at once
        QTimer watch;
        connect(&watch, &QTimer::timeout, this, [&] {
            if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) {
                asked << box->windowTitle();
                box->reject();
            }
        });
        watch.start(20);
        QVERIFY(!w->openModelAsking(bad));
        QVERIFY(!w->sessions()->openSessionAsking(badSession));
        watch.stop();
        w->setInteractive(false);
        QCOMPARE(asked,
                 QStringList({QStringLiteral("Open model"), QStringLiteral("Open session")}));
        QVERIFY(doc->undoStack()->count() == 1); // the work is still there
    }

    // Every chart exports as an image and as CSV data, the tables as CSV.
    // The S-T hover over a leaf's rectangle gives its leaf's figures in both scopes, each
    // named, the run's word for word as the tree and the Layers table show them.
    void stHoverGivesTheTreeFigures() {
        auto w = openSampleWindow(m_dir);
        QVERIFY(w);
        StGraphView* st = w->stGraph();
        const auto layout = st->plottable()->layout();
        QVERIFY(layout);
        const RATree& tree = w->document()->tree();
        LayersModel* layers = w->layersPanel()->model();
        std::set<int> seen;
        int batched = 0;
        for (int i = 0; i < int(layout->rects().size()); ++i) {
            const int node = layout->rects()[size_t(i)].node;
            if (node < 0 || !seen.insert(node).second) continue;
            const QString tip = st->rectToolTip(*layout, i);
            const int row = layers->rowOfNode(node);
            QVERIFY(row >= 0);
            for (int c : {int(LayersModel::Time), int(LayersModel::Energy)}) {
                const QString figure = layers->index(row, c).data().toString();
                QVERIFY2(tip.contains(figure), qPrintable(figure + QStringLiteral(" in ") + tip));
            }
            QVERIFY2(tip.contains(QLatin1String("per invocation")) &&
                         tip.contains(QLatin1String("total over the run")),
                     qPrintable(tip));
            batched += invocationsOf(tree, node) > 1;
        }
        QVERIFY(seen.size() > 10);
        QVERIFY2(batched > 0, "no leaf runs more than once: the scopes would not differ");
    }

    // The invalid-schedule banner sits above the S-T plot, never over its first tile row
    // or its axis, and the graph keeps the last valid schedule, faded.
    void stBannerLeavesThePlotFree() {
        auto w = openSampleWindow(m_dir);
        QVERIFY(w);
        Document* doc = w->document();
        StGraphView* st = w->stGraph();
        const int kids = int(doc->tree().node(doc->tree().root).children.size());
        QSignalSpy laid(st, &StGraphView::layoutReady);
        QVERIFY_OK(doc->wrap(doc->tree().root, 0, kids, NodeType::S));
        QVERIFY(!doc->evaluation()->valid);
        QVERIFY(laid.wait(20000) || !laid.isEmpty());
        QTest::qWait(50);
        auto* banner = st->findChild<QLabel*>(QStringLiteral("stInvalidBanner"));
        QVERIFY(banner && banner->isVisible());
        QVERIFY(st->bannerText().contains(QLatin1String("last valid")));
        const QRect b(banner->mapTo(st, QPoint(0, 0)), banner->size());
        const QRect plot(st->plot()->mapTo(st, QPoint(0, 0)), st->plot()->size());
        QVERIFY2(b.bottom() < plot.top(), qPrintable(QStringLiteral("banner ends at %1, plot "
                                                                    "starts at %2")
                                                         .arg(b.bottom())
                                                         .arg(plot.top())));
        QVERIFY(st->plottable()->faded());
        QVERIFY(st->plottable()->layout() && !st->plottable()->layout()->rects().empty());
        // The first tile row is inside the plot's axis rect, below the banner.
        QVERIFY(st->plot()->axisRect()->rect().top() >= 0);
    }

    // The S-T graph has a key for its colours (layers, efficiency) and, with both
    // timelines, says which half of a row is the estimate and which the replay.
    void stGraphHasAKey() {
        auto w = openSampleWindow(m_dir);
        QVERIFY(w);
        StGraphView* st = w->stGraph();
        auto* key = st->findChild<QLabel*>(QStringLiteral("stColourKey"));
        QVERIFY(key && key->isVisible());
        QVERIFY(st->keyText().contains(layerColor(0).name()));
        QVERIFY(key->toolTip().contains(layerColor(1).name()));
        st->setColouring(StGraphView::Colouring::Efficiency);
        for (const char* part : {"at the bound", "2x", "4x", "no bound"})
            QVERIFY2(st->keyText().contains(QLatin1String(part)), part);
        QVERIFY(st->keyText().contains(efficiencyColor(4).name()));
        st->setTimeline(StGraphView::Timeline::Both);
        QVERIFY(st->keyText().contains(QLatin1String("upper half the estimate")));
        QVERIFY(st->keyText().contains(QLatin1String("lower half the replay")));
        // The key takes no width: at 1280x800 it does not widen the graph's panel, and it
        // wraps rather than being cut.
        QCOMPARE(key->sizePolicy().horizontalPolicy(), QSizePolicy::Ignored);
        QTRY_VERIFY2(key->height() >= key->heightForWidth(key->width()),
                     qPrintable(QStringLiteral("%1 < %2")
                                    .arg(key->height())
                                    .arg(key->heightForWidth(key->width()))));
    }

    // Where the temperature starts high again the live plot has a line that says why: a
    // resume after a pause is named as one (it was taken for the next chain), and hovering
    // the line explains it.
    void liveplotSaysWhyTheTemperatureRises() {
        SearchPanel panel;
        panel.resize(900, 400);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        auto snap = [&](long long it, double temp) {
            SearchSnapshot s;
            s.iteration = it;
            s.total = 500;
            s.temperature = temp;
            s.currentCost = s.bestCost = 100;
            s.energy = s.delay = 10;
            s.phase = QStringLiteral("annealing");
            panel.addSnapshot(s);
        };
        panel.setRunState(RunState::Running, {});
        snap(100, 1.0);
        snap(200, 0.5);
        panel.setRunState(RunState::Paused, {});
        panel.setRunState(RunState::Running, {});
        snap(300, 1.0);
        snap(400, 0.4);
        snap(500, 1.0); // the next chain
        snap(600, 0.5);
        QCOMPARE(panel.restartMarks(),
                 QStringList({QStringLiteral("resumed"), QStringLiteral("next chain")}));
        panel.plot()->replot();
        QCPAxis* x = panel.plot()->axisRects().last()->axis(QCPAxis::atBottom);
        const QRect strip = panel.plot()->axisRects().last()->rect();
        const QPoint at(int(x->coordToPixel(300)), strip.center().y());
        QVERIFY2(panel.markTipAt(at).contains(QLatin1String("resumed after a pause")),
                 qPrintable(panel.markTipAt(at)));
        const QPoint next(int(x->coordToPixel(500)), strip.center().y());
        QVERIFY(panel.markTipAt(next).contains(QLatin1String("next chain")));
        QVERIFY(panel.markTipAt(QPoint(int(x->coordToPixel(400)), strip.center().y())).isEmpty());
    }

    // The 12x12 heatmap shows tile numbers where they are readable, and the live best's
    // inner squares keep off them.
    void heatmapNumbersOn12x12() {
        auto w = openTestWindow(m_dir);
        QVERIFY(w);
        QVERIFY(w->openSample(QStringLiteral(TILESCOPE_SAMPLES "/models/resnet50.onnx"),
                              QStringLiteral("cloud"), false));
        QVERIFY(waitForLayout(*w));
        // On a 1920x1080 screen the heatmap's dock starts at a quarter of the width.
        w->resize(1920, 1080);
        auto* dock = w->findChild<QDockWidget*>(QStringLiteral("heatmapDock"));
        QVERIFY(dock);
        w->resizeDocks({dock}, {1920 / 4}, Qt::Horizontal);
        NocHeatmapView* heat = w->heatmap();
        QTRY_VERIFY(heat->width() >= 400);
        const int tiles = w->document()->hardware()->tiles();
        QCOMPARE(tiles, 144);
        auto labels = heat->tileLabels();
        QCOMPARE(int(labels.size()), tiles);
        QVERIFY(labels.front().text.startsWith(QLatin1String("0")));
        auto best = std::make_shared<LiveBest>();
        best->eval = w->document()->evaluation();
        best->load.busy.assign(size_t(tiles), 0.5);
        heat->setLiveBest(best);
        heat->setShowLiveBest(true);
        QVERIFY(heat->liveBestShown());
        labels = heat->tileLabels();
        const auto squares = heat->liveBestSquares();
        QCOMPARE(int(labels.size()), tiles);
        QCOMPARE(int(squares.size()), tiles);
        for (size_t i = 0; i < labels.size(); ++i) {
            QVERIFY(!labels[i].rect.intersects(squares[i]));
            QVERIFY(labels[i].rect.height() >= 7);
            QVERIFY(squares[i].width() >= 4); // still a square to see
        }
    }

    // "Open sample" finds the samples where the package installs them, from the binary's
    // folder (usr/bin -> usr/share/tilescope/samples), and opens one. The tree is the
    // extracted package when TILESCOPE_INSTALLED_ROOT names one (scripts/check-package.sh),
    // else a temporary prefix laid out as the package lays it out.
    void openSampleFromTheInstalledTree() {
        QString root = qEnvironmentVariable("TILESCOPE_INSTALLED_ROOT");
        QTemporaryDir prefix;
        if (root.isEmpty()) {
            root = prefix.path();
            const QString samples = root + QStringLiteral("/usr/share/tilescope/samples");
            QVERIFY(QDir().mkpath(root + QStringLiteral("/usr/bin")));
            QVERIFY(QDir().mkpath(samples + QStringLiteral("/models")));
            QVERIFY(QFile::copy(QStringLiteral(TILESCOPE_SAMPLES "/models/resnet50.onnx"),
                                samples + QStringLiteral("/models/resnet50.onnx")));
        }
        const QByteArray env = qgetenv("TILESCOPE_SAMPLES_DIR");
        qunsetenv("TILESCOPE_SAMPLES_DIR");
        const QString dir = WelcomePage::samplesDir(root + QStringLiteral("/usr/bin"));
        if (!env.isNull()) qputenv("TILESCOPE_SAMPLES_DIR", env);
        QCOMPARE(dir, QDir(root + QStringLiteral("/usr/share/tilescope/samples")).absolutePath());
        WelcomePage page(nullptr, dir);
        QVERIFY(page.sampleButton()->isEnabled());
        QCOMPARE(page.sampleBox()->currentText(), QStringLiteral("resnet50"));
        QSignalSpy open(&page, &WelcomePage::openSampleRequested);
        page.sampleButton()->click();
        QCOMPARE(open.size(), 1);
        const QString model = open.at(0).at(0).toString();
        QVERIFY2(model.startsWith(dir), qPrintable(model));
        auto w = openTestWindow(m_dir);
        QVERIFY(w);
        QVERIFY2(w->openSample(model, QStringLiteral("edge"), false), qPrintable(w->lastError()));
        QVERIFY(waitForLayout(*w));
    }

    void chartsAndTablesExport() {
        auto w = openSampleWindow(m_dir);
        QVERIFY(w);
        const QString layers = m_dir.filePath(QStringLiteral("layers.csv"));
        QVERIFY2(w->exports()->exportTo(QStringLiteral("table:layers"), layers),
                 qPrintable(w->lastError()));
        QFile f(layers);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = f.readAll().split('\n');
        QVERIFY(lines.front().startsWith("Layer,Ratio,DRAM"));
        QCOMPARE(lines.size() - 1, w->layersPanel()->model()->rowCount() + 1); // last is empty
        for (const char* chart : {"search", "tradeoff", "boundary", "energy", "dram"})
            for (const char* suffix : {".png", ".svg", ".csv"}) {
                const QString p = m_dir.filePath(QLatin1String(chart) + QLatin1String(suffix));
                QVERIFY2(w->exports()->exportTo(QStringLiteral("chart:") + QLatin1String(chart), p),
                         qPrintable(w->lastError()));
                QVERIFY2(QFileInfo(p).size() > 0, qPrintable(p));
            }
        QFile energy(m_dir.filePath(QStringLiteral("energy.csv")));
        QVERIFY(energy.open(QIODevice::ReadOnly));
        QVERIFY(energy.readLine().startsWith("series,x axis,x,y axis,y"));
        QVERIFY(!energy.readLine().isEmpty()); // the breakdown has points
    }
};

// The offscreen platform's screen is 800 pixels wide, less than the window's minimum: these
// tests need the screens users have, so the platform is given a 1920x1080 one.
int main(int argc, char** argv) {
    QTemporaryDir dir;
    const QString config = dir.filePath(QStringLiteral("screen.json"));
    QFile f(config);
    if (!f.open(QIODevice::WriteOnly)) return 1;
    f.write(R"({"screens": [{"name": "screen", "x": 0, "y": 0, "width": 1920, "height": 1080,
                "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]})");
    f.close();
    if (qgetenv("QT_QPA_PLATFORM") == "offscreen")
        qputenv("QT_QPA_PLATFORM", "offscreen:configfile=" + config.toLocal8Bit());
    QApplication app(argc, argv);
    TstNewUser test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}
#include "tst_newuser.moc"
