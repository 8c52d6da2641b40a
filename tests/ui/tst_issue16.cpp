// Issue 16 (a new user's walk through the GUI), one regression test per numbered problem
// that a test can see; the numbers in the test names are the issue's. The rest of item 6
// (clipped text at 1280x800) is checked on screenshots (docs/gui.md "Screenshot checks").
#include "core/bytestext.h"
#include "core/document.h"
#include "core/ratreemodel.h"
#include "core/selectionstate.h"
#include "expectok.h"
#include "report/segments.h"
#include "testwindow.h"
#include "tree/ratree.h"
#include "widgets/axisfit.h"
#include "widgets/diffpanel.h"
#include "widgets/mainwindow.h"
#include "widgets/metricspanel.h"
#include "widgets/searchpanel.h"
#include "widgets/stgraphplottable.h"
#include "widgets/stgraphview.h"
#include "widgets/tradeoffview.h"
#include "widgets/treepanel.h"
#include "widgets/welcomepage.h"

#include <QComboBox>
#include <QFile>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <qcustomplot.h>

using namespace tilescope;
using namespace tilescope::ui;

namespace {
QString readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}
} // namespace

class TstIssue16 : public QObject {
    Q_OBJECT
  private:
    std::unique_ptr<MainWindow> m_w;
    QTemporaryDir m_dir;

    void waitLayout() {
        QTRY_VERIFY_WITH_TIMEOUT(m_w->stGraph()->hasLayout(), 20000);
        QTest::qWait(50);
    }

  private slots:
    void initTestCase() {
        m_w = openTestWindow(m_dir);
        QVERIFY(m_w);
    }

    // 9. First start: a welcome page instead of empty panels, Start disabled without a
    // model, one click opens a sample with a preset.
    void item9_firstStart() {
        QVERIFY(m_w->welcomeShown());
        auto* start = m_w->searchPanel()->findChild<QPushButton*>(QStringLiteral("startButton"));
        QVERIFY(start);
        QVERIFY(!start->isEnabled());
        WelcomePage* wp = m_w->welcomePage();
        QVERIFY2(wp->sampleBox()->count() >= 5, "the samples folder was not found");
        QCOMPARE(wp->sampleBox()->currentText(), QStringLiteral("resnet50"));
        QVERIFY(wp->presetBox()->findText(QStringLiteral("cloud")) >= 0);
        QVERIFY(!wp->findChild<QLabel*>(QStringLiteral("welcomeShortcuts"))->text().isEmpty());
        QVERIFY(m_w->openSample(wp->sampleBox()->currentData().toString(), QStringLiteral("edge"),
                                false));
        QVERIFY(!m_w->welcomeShown());
        QVERIFY(start->isEnabled());
        QCOMPARE(m_w->document()->hardwareSource(), QStringLiteral("edge"));
        // The undo stack holds nothing from opening: a preset chosen before the model is
        // not an edit.
        QCOMPARE(m_w->document()->undoStack()->count(), 0);
        waitLayout();
    }

    // 2. The Energy column scaled up only: "0.00 J" on every row.
    void item2_treeEnergyColumn() {
        RATreeModel* model = m_w->treePanel()->model();
        const QModelIndex root = model->index(0, RATreeModel::Energy);
        const QString rootText = model->data(root).toString();
        QVERIFY2(rootText.endsWith(QLatin1String("J")), qPrintable(rootText));
        QVERIFY2(!rootText.startsWith(QLatin1String("0")), qPrintable(rootText));
        QSet<QString> distinct;
        for (int r = 0; r < model->rowCount(model->index(0, 0)); ++r) {
            const QString t =
                model->data(model->index(r, RATreeModel::Energy, model->index(0, 0))).toString();
            QVERIFY2(!t.startsWith(QLatin1String("0")), qPrintable(t));
            distinct.insert(t);
        }
        QVERIFY(distinct.size() > 10);
        const auto e = m_w->document()->evaluation();
        QCOMPARE(rootText, energyText(e->nodes[size_t(m_w->document()->tree().root)].energy));
    }

    // 5. The GUI and the HTML report show the same figure for every segment, and the
    // segments' times add up to the delay.
    void item5_guiAndReportAgree() {
        // Two root sub-batches: each segment runs twice, the case that used to differ.
        Document* doc = m_w->document();
        const RATree& t = doc->tree();
        QVERIFY(t.node(t.root).subBatch >= 1);
        if (t.node(t.root).subBatch == 1) QVERIFY_OK(doc->stepSubBatch(t.root, +1));
        waitLayout();
        const Evaluation& e = *doc->evaluation();
        QVERIFY(e.valid);
        const auto segs = segmentFigures(e, doc->tree(), *doc->network());
        QVERIFY(segs.size() > 10);
        QVERIFY(segs.front().invocations >= 2);
        // Segments overlap (docs/cost-model.md §5): their shares add up to the delay, each
        // no more than its time.
        double sum = 0;
        for (const auto& s : segs) {
            sum += s.share;
            QVERIFY(s.share <= s.time * (1 + 1e-9));
        }
        QVERIFY2(std::abs(sum - e.delay) <= 1e-6 * e.delay,
                 qPrintable(QStringLiteral("%1 vs %2").arg(sum).arg(e.delay)));

        auto* table = m_w->metrics()->findChild<QTableWidget*>(QStringLiteral("segmentsTable"));
        QVERIFY(table);
        QCOMPARE(table->rowCount(), int(segs.size()));
        const QString path = m_dir.filePath(QStringLiteral("r.html"));
        QVERIFY2(m_w->exportTo(QStringLiteral("html"), path), qPrintable(m_w->lastError()));
        const QString html = readAll(path);
        const int at = html.indexOf(QLatin1String("<table id=\"segments\">"));
        QVERIFY(at >= 0);
        const QString segTable = html.mid(at, html.indexOf(QLatin1String("</table>"), at) - at);
        static const QRegularExpression rowRe(QStringLiteral("<tr><td class=\"l\">(.*?)</td>"
                                                             "<td class=\"l\">.*?</td><td>(.*?)"
                                                             "</td><td>(.*?)</td><td>(.*?)</td>"
                                                             ".*?<td class=\"l\">.*?</td>"
                                                             "<td>(.*?)</td><td>(.*?)</td>"));
        int row = 0;
        for (auto it = rowRe.globalMatch(segTable); it.hasNext(); ++row) {
            const auto m = it.next();
            QVERIFY(row < table->rowCount());
            QCOMPARE(m.captured(1).toHtmlEscaped(), table->item(row, 0)->text().toHtmlEscaped());
            QCOMPARE(m.captured(2), table->item(row, 1)->text());
            QCOMPARE(m.captured(3), table->item(row, 2)->text()); // time
            QCOMPARE(m.captured(4), table->item(row, 3)->text()); // energy
            QCOMPARE(m.captured(5), table->item(row, 5)->text()); // starts
            QCOMPARE(m.captured(6), table->item(row, 6)->text()); // adds
        }
        QCOMPARE(row, table->rowCount());
        // The figures: the whole-schedule ones read the same too.
        QVERIFY(html.contains(timeText(e.delay, doc->hardware()->clockGHz)));
        QCOMPARE(m_w->metrics()->figureText(QStringLiteral("Delay")),
                 timeText(e.delay, doc->hardware()->clockGHz));
        QVERIFY(html.contains(energyText(e.energy.total())));
        // 10. The report has figures now: the S-T graph and the heatmap, embedded.
        QCOMPARE(html.count(QLatin1String("<img ")), 2);
        QVERIFY(html.contains(QLatin1String("src=\"data:image/png;base64,iVBOR")));
        doc->undoStack()->undo();
        waitLayout();
    }

    // Deliverable: A/B compare of the document's tree with a saved schedule, with the diff
    // (added / removed / moved nodes, per-node energy and time change) and "Adopt B".
    void abCompareWithTreeFile() {
        Document* doc = m_w->document();
        const RATree saved = doc->tree();
        const QString file = m_dir.filePath(QStringLiteral("b.tree"));
        QVERIFY(m_w->exportTo(QStringLiteral("tree-text"), file));
        QVERIFY_OK(doc->wrap(doc->tree().root, 2, 2, NodeType::S));
        QVERIFY(m_w->compareWithTreeFile(file));
        DiffPanel* dp = m_w->diffPanel();
        // A has an S cut B lacks; its two leaves sit under different parents.
        QVERIFY2(dp->summary().contains(QLatin1String("0 added, 1 removed, 2 moved, 0 changed")),
                 qPrintable(dp->summary()));
        QCOMPARE(dp->rowCount(), 3);
        QCOMPARE(dp->table()->item(0, 0)->text(), QStringLiteral("removed"));
        QVERIFY(!dp->table()->item(0, 3)->text().isEmpty()); // energy change of the cut
        auto* adopt = dp->findChild<QPushButton*>();
        QVERIFY(adopt && adopt->isEnabled());
        adopt->click();
        QVERIFY(doc->tree() == saved);
        QVERIFY(dp->summary().contains(QLatin1String("identical")));
        doc->undoStack()->undo();
        doc->undoStack()->undo();
        QVERIFY(doc->tree() == saved);
        waitLayout();
    }

    // 10. SVG exports drew the merged rectangles as one bitmap; image exports kept the
    // selection's dimming.
    void item10_exports() {
        Document* doc = m_w->document();
        const QString svg = m_dir.filePath(QStringLiteral("st.svg"));
        QVERIFY(m_w->exportTo(QStringLiteral("st"), svg));
        QVERIFY(m_w->stGraph()->plottable()->lastDrawStats().merged > 0); // some were merged
        const QString text = readAll(svg);
        QVERIFY(!text.contains(QLatin1String("<image")));
        const QString a = m_dir.filePath(QStringLiteral("a.png")),
                      b = m_dir.filePath(QStringLiteral("b.png"));
        QVERIFY(m_w->exportTo(QStringLiteral("st"), a));
        const int leaf = doc->tree().nodeAtPath("/3");
        m_w->selection()->select(leaf, QStringLiteral("/3"));
        QVERIFY(m_w->exportTo(QStringLiteral("st"), b));
        QCOMPARE(QImage(a), QImage(b));
        const QString ha = m_dir.filePath(QStringLiteral("ha.png")),
                      hb = m_dir.filePath(QStringLiteral("hb.png"));
        QVERIFY(m_w->exportTo(QStringLiteral("heatmap"), hb));
        m_w->selection()->clear();
        QVERIFY(m_w->exportTo(QStringLiteral("heatmap"), ha));
        QCOMPARE(QImage(ha), QImage(hb));
    }

    // 8. The selection stayed on the old path after an edit (it jumped to whatever node
    // took that place) and refusals stayed on the status bar after a later success.
    void item8_selectionFollowsTheNode() {
        Document* doc = m_w->document();
        const RATree& t = doc->tree();
        const int leaf = t.nodeAtPath("/3");
        const int layer = t.node(leaf).layer;
        m_w->selection()->select(leaf, QStringLiteral("/3"));
        // Wrap /2 and /3 in an S cut: /3 is now a different node.
        QVERIFY_OK(doc->wrap(t.root, 2, 2, NodeType::S));
        const int now = m_w->selection()->node();
        QVERIFY(now >= 0);
        QCOMPARE(doc->tree().node(now).layer, layer);
        QCOMPARE(m_w->selection()->path(), QString::fromStdString(doc->tree().pathOf(now)));
        // The tree view shows the cut it went into expanded, the leaf current.
        auto* view = m_w->treePanel()->findChild<QTreeView*>();
        QVERIFY(view);
        QCOMPARE(m_w->treePanel()->model()->nodeId(view->currentIndex()), now);
        QVERIFY(
            view->isExpanded(m_w->treePanel()->model()->indexOfNode(doc->tree().node(now).parent)));

        QVERIFY(doc->dissolve(doc->tree().leafOf(0)).has_value()); // a leaf: refused
        QVERIFY(m_w->statusBar()->currentMessage().contains(QLatin1String("refused")));
        doc->undoStack()->undo();
        QVERIFY(m_w->statusBar()->currentMessage().isEmpty());
        waitLayout();
    }

    // 8. An invalid tree showed "0.000 mJ / 0 cycles" and blank views.
    void item8_invalidTreeKeepsLastPicture() {
        Document* doc = m_w->document();
        const auto valid = doc->evaluation();
        // Everything in one S cut on 16 tiles: 72 stages cannot be allocated.
        const int kids = int(doc->tree().node(doc->tree().root).children.size());
        QVERIFY_OK(doc->wrap(doc->tree().root, 0, kids, NodeType::S));
        if (doc->evaluation()->valid) QSKIP("the all-S tree is valid on this template");
        waitLayout();
        QVERIFY(doc->lastValidEvaluation() == valid);
        const QString banner = m_w->stGraph()->bannerText();
        QVERIFY2(banner.contains(QString::fromStdString(doc->evaluation()->reason)),
                 qPrintable(banner));
        QVERIFY(m_w->stGraph()->plottable()->faded());
        QVERIFY(!m_w->stGraph()->plottable()->layout()->rects().empty());
        QCOMPARE(m_w->metrics()->figureText(QStringLiteral("Energy")),
                 energyText(valid->energy.total()));
        QVERIFY(m_w->metrics()
                    ->figureText(QStringLiteral("Validity"))
                    .contains(QLatin1String("last valid")));
        doc->undoStack()->undo();
        waitLayout();
        QVERIFY(!m_w->stGraph()->plottable()->faded());
        QVERIFY(m_w->stGraph()->bannerText().isEmpty());
    }

    // 3. Adopt best was greyed out during a run. 8. While paused the best-so-far readout
    // was replaced by "Paused"; after adopting, the S-T graph kept its old time range.
    void item3_item8_adoptDuringRun() {
        SearchPanel* sp = m_w->searchPanel();
        QSignalSpy finished(m_w.get(), &MainWindow::searchFinished);
        SearchConfig c = sp->settings();
        c.seconds = 30;
        sp->setSettings(c);
        m_w->startSearch();
        QVERIFY(m_w->searchRunning());
        QVERIFY(sp->adoptEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(sp->bestText().contains(QLatin1String("Best so far")), 20000);
        QTest::qWait(1500);
        m_w->pauseSearch(true);
        QTRY_VERIFY_WITH_TIMEOUT(sp->property("paused").toBool(), 10000);
        QVERIFY(sp->bestText().contains(QLatin1String("Best so far")));
        m_w->pauseSearch(false);
        const double before = m_w->document()->evaluation()->delay;
        QSignalSpy changed(m_w->document(), &Document::treeChanged);
        m_w->adoptBest();
        QTRY_VERIFY_WITH_TIMEOUT(changed.count() >= 1, 20000);
        m_w->stopSearch();
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() >= 1, 20000);
        QTest::qWait(300);
        const double after = m_w->document()->evaluation()->delay;
        QVERIFY(after != before);
        // The graph shows the whole adopted schedule, not the old time range.
        const QCPRange x = m_w->stGraph()->plot()->xAxis->range();
        QVERIFY2(x.upper < after * 1.05 && x.upper >= after,
                 qPrintable(QStringLiteral("%1 vs %2").arg(x.upper).arg(after)));
    }

    // Deliverable: the energy-delay trade-off plot holds the search history and the bests;
    // clicking one adopts it as one undo step.
    void tradeoffPlotAdopts() {
        TradeoffView* tv = m_w->tradeoff();
        QVERIFY(tv->historyCount() > 5);
        QVERIFY(tv->candidateCount() >= 1);
        Document* doc = m_w->document();
        const int count = doc->undoStack()->count();
        doc->undoStack()->undo(); // back to a tree that is not the search's best
        const RATree before = doc->tree();
        tv->activate(0);
        QCOMPARE(doc->undoStack()->count(), count); // the redo went, the adoption came
        QVERIFY(!(doc->tree() == before));
        QVERIFY(doc->evaluation()->valid);
        QVERIFY(doc->undoStack()->undoText().startsWith(QLatin1String("Adopt search best")));
    }

    // 6. Tick labels overlapped (the search strips' iteration and energy axes, at any size):
    // every axis of every chart fits its tick count to its length, at 1280x800 and smaller.
    void item6_tickLabelsNeverCrowd() {
        const QList<QCustomPlot*> plots = m_w->findChildren<QCustomPlot*>();
        QVERIFY(plots.size() >= 4);
        for (const QSize size : {QSize(1280, 800), QSize(1024, 700)}) {
            m_w->resize(size);
            for (int round = 0; round < 3; ++round) { // the fit may ask for one more replot
                for (QCustomPlot* p : plots)
                    if (p->isVisible()) p->replot();
                QTest::qWait(50);
            }
            int checked = 0;
            for (QCustomPlot* p : plots) {
                if (!p->isVisible()) continue;
                for (QCPAxisRect* r : p->axisRects())
                    for (QCPAxis* ax : r->axes()) {
                        if (!ax->visible() || !ax->tickLabels()) continue;
                        ++checked;
                        QVERIFY2(!tickLabelsCrowded(ax, 2),
                                 qPrintable(QStringLiteral("%1 axis %2 at %3x%4: %5")
                                                .arg(p->objectName())
                                                .arg(int(ax->axisType()))
                                                .arg(size.width())
                                                .arg(size.height())
                                                .arg(ax->tickVectorLabels().join(u' '))));
                    }
            }
            QVERIFY(checked >= 8);
        }
        m_w->resize(1280, 800);
    }

    // 1. Switching the hardware preset discarded the edits and the undo history.
    void item1_presetSwitchIsUndoable() {
        Document* doc = m_w->document();
        const RATree edited = doc->tree();
        const int count = doc->undoStack()->count();
        QVERIFY(count >= 1);
        QVERIFY(m_w->openHardware(QStringLiteral("cloud")));
        QCOMPARE(doc->undoStack()->count(), count + 1);
        QVERIFY(m_w->statusBar()->currentMessage().contains(QLatin1String("Undo")));
        doc->undoStack()->undo();
        QCOMPARE(doc->hardwareSource(), QStringLiteral("edge"));
        QVERIFY(doc->tree() == edited);
        QVERIFY(m_w->setBatch(4));
        QCOMPARE(doc->undoStack()->count(), count + 1); // the redo of cloud went
        doc->undoStack()->undo();
        QCOMPARE(doc->batch(), 8);
        QVERIFY(doc->tree() == edited);
    }

    void cleanupTestCase() { m_w.reset(); }
};

QTEST_MAIN(TstIssue16)
#include "tst_issue16.moc"
