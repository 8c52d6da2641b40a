// Preview before adopting: while a search runs, its best so far is drawn faded
// over the S-T graph and the NoC heatmap. LiveBestPreview (ui/core) lays the offered best
// out off the GUI thread, throttled; the views draw what it hands them; View > Show live
// best switches it off; it ends with the run or when the best is adopted. Adopting works
// during a run and paused, and from the energy-delay trade-off plot afterwards.
#include "core/document.h"
#include "core/layernames.h"
#include "core/livebestpreview.h"
#include "core/stlayout.h"
#include "eval/linkload.h"
#include "expectok.h"
#include "testwindow.h"
#include "tree/ratree.h"
#include "widgets/mainwindow.h"
#include "widgets/nocheatmapview.h"
#include "widgets/searchcontroller.h"
#include "widgets/searchpanel.h"
#include "widgets/stgraphplottable.h"
#include "widgets/stgraphview.h"
#include "widgets/tradeoffview.h"

#include <QAction>
#include <QImage>
#include <QPainter>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <qcustomplot.h>
#include <set>

using namespace tilescope;
using namespace tilescope::ui;

namespace {
// Trees of the document's inputs other than its own: one edit each, undone.
RATree edited(Document& doc, int first, NodeType type) {
    if (doc.wrap(doc.tree().root, first, 2, type)) return {};
    RATree t = doc.tree();
    doc.undoStack()->undo();
    return t;
}

QImage render(NocHeatmapView* v) {
    QImage img(QSize(500, 460), QImage::Format_ARGB32);
    QPainter p(&img);
    v->paintTo(p, img.size());
    return img;
}
} // namespace

class TstLiveBest : public QObject {
    Q_OBJECT
  private:
    Document m_doc;
    RATree m_a, m_b, m_c;
    QTemporaryDir m_dir;
    std::unique_ptr<MainWindow> m_w; // searched in by adoptDuringRun, then read on

  private slots:
    void initTestCase() {
        QVERIFY_OK(m_doc.openHardware(QStringLiteral("edge")));
        QVERIFY_OK(m_doc.openModel(TILESCOPE_SAMPLES "/models/resnet50.onnx"));
        m_a = edited(m_doc, 0, NodeType::T);
        m_b = edited(m_doc, 2, NodeType::S);
        m_c = edited(m_doc, 4, NodeType::T);
        for (const RATree* t : {&m_a, &m_b, &m_c}) {
            QVERIFY(!t->empty());
            QVERIFY(!(*t == m_doc.tree()));
            QVERIFY(m_doc.evaluateOther(*t).valid);
        }
        QVERIFY(!(m_a == m_b) && !(m_b == m_c));
    }

    // The offered tree is evaluated and laid out like the document's own: checked against
    // the document's evaluation of it (its own context, apart from the preview's) and a
    // layout built here from that.
    void layoutOfOfferedBest() {
        LiveBestPreview p(&m_doc);
        QSignalSpy changed(&p, &LiveBestPreview::changed);
        p.offer(std::make_shared<const RATree>(m_a));
        QTRY_COMPARE_WITH_TIMEOUT(changed.count(), 1, 20000);
        auto best = p.current();
        QVERIFY(best && best->layout && best->eval);
        QVERIFY(*best->tree == m_a);
        const auto e = std::make_shared<const Evaluation>(m_doc.evaluateOther(m_a));
        QCOMPARE(best->eval->delay, e->delay);
        QCOMPARE(best->eval->cost, e->cost);
        const int tiles = m_doc.hardware()->tiles();
        auto ref = StLayout::build(e, tiles, displayLayerNames(*m_doc.network()));
        QCOMPARE(best->layout->rects().size(), ref->rects().size());
        QVERIFY(!ref->rects().empty());
        for (size_t i = 0; i < ref->rects().size(); ++i) {
            const StRect &x = best->layout->rects()[i], &y = ref->rects()[i];
            QCOMPARE(x.start, y.start);
            QCOMPARE(x.end, y.end);
            QCOMPARE(x.tile0, y.tile0);
            QCOMPARE(x.tile1, y.tile1);
            QCOMPARE(x.node, y.node);
        }
        // Its rectangles are the best tree's leaves (node ids of that tree, not the
        // document's), every leaf of it.
        std::set<int> nodes;
        for (const StRect& r : best->layout->rects())
            nodes.insert(r.node);
        QCOMPARE(nodes, leavesOf(m_a, *m_doc.network()));
        QCOMPARE(best->load.busy, tileLoad(*e, tiles).busy);
    }

    // Bests arriving faster than the throttle: the first shows at once, the newest after
    // the interval, the ones between never get laid out.
    void throttled() {
        LiveBestPreview p(&m_doc);
        p.setThrottleMs(300);
        QSignalSpy changed(&p, &LiveBestPreview::changed);
        p.offer(std::make_shared<const RATree>(m_a));
        p.offer(std::make_shared<const RATree>(m_b));
        p.offer(std::make_shared<const RATree>(m_c));
        QTRY_COMPARE_WITH_TIMEOUT(changed.count(), 2, 20000);
        QTest::qWait(600);
        QCOMPARE(changed.count(), 2);
        QCOMPARE(p.layoutsBuilt(), 2);
        QVERIFY(*changed.at(0).at(0).value<std::shared_ptr<const LiveBest>>()->tree == m_a);
        QVERIFY(*p.current()->tree == m_c);
        // The same pointer again changes nothing.
        p.offer(p.current()->tree);
        QTest::qWait(500);
        QCOMPARE(p.layoutsBuilt(), 2);
    }

    // clear() ends the preview: a job under way is dropped, the views get null, and a best
    // offered afterwards is shown again.
    void clearDropsRunningJob() {
        LiveBestPreview p(&m_doc);
        p.setThrottleMs(50);
        QSignalSpy changed(&p, &LiveBestPreview::changed);
        // The first best starts at once. Its job is usually under way when clear() comes and
        // is dropped (nothing is shown); with the engine's memo caches warm it may be done
        // before run() returns (Qt runs a finished future's continuation at once), then it
        // was shown and clear() takes it away. Either way nothing comes after the clear.
        p.offer(std::make_shared<const RATree>(m_a));
        p.clear();
        const qsizetype atClear = changed.count();
        QVERIFY2(atClear == 0 || atClear == 2, qPrintable(QString::number(atClear)));
        QTest::qWait(1500);
        QCOMPARE(changed.count(), atClear);
        QCOMPARE(p.layoutsBuilt(), int(atClear / 2));
        QVERIFY(!p.current());
        p.offer(std::make_shared<const RATree>(m_c));
        QTRY_COMPARE_WITH_TIMEOUT(changed.count(), atClear + 1, 20000);
        QVERIFY(*p.current()->tree == m_c);
        p.offer(std::make_shared<const RATree>(m_b)); // waits for the throttle
        p.clear();
        QCOMPARE(changed.count(), atClear + 2);
        QVERIFY(!changed.last().at(0).value<std::shared_ptr<const LiveBest>>());
        QVERIFY(!p.current());
        QTest::qWait(500);
        QCOMPARE(changed.count(), atClear + 2);
        QCOMPARE(p.layoutsBuilt(), int(atClear / 2) + 1);
    }

    // A best equal to the document's tree (just adopted) is nothing to preview.
    void documentTreeIsNoPreview() {
        LiveBestPreview p(&m_doc);
        QSignalSpy changed(&p, &LiveBestPreview::changed);
        p.offer(std::make_shared<const RATree>(m_a));
        QTRY_COMPARE_WITH_TIMEOUT(changed.count(), 1, 20000);
        p.offer(std::make_shared<const RATree>(m_doc.tree()));
        QCOMPARE(changed.count(), 2);
        QVERIFY(!p.current());
        QTest::qWait(600);
        QCOMPARE(p.layoutsBuilt(), 1);
    }

    // The whole loop in the main window: a running search's best shows over the S-T graph
    // and the heatmap, follows the preview, switches off from the View menu and ends with
    // the run.
    // resnet50 on cloud with a 40 s search budget (the tests stop it early).
    static std::unique_ptr<MainWindow> openSearchWindow(const QTemporaryDir& dir) {
        auto w = openTestWindow(dir);
        if (!w || !w->openSample(TILESCOPE_SAMPLES "/models/resnet50.onnx", QStringLiteral("cloud"),
                                 false))
            return nullptr;
        SearchConfig c = w->searchPanel()->settings();
        c.seconds = 40;
        w->searchPanel()->setSettings(c);
        return w;
    }

    void overlayDuringRun() {
        QTemporaryDir dir;
        auto window = openSearchWindow(dir);
        QVERIFY(window);
        MainWindow& w = *window;
        QTRY_VERIFY_WITH_TIMEOUT(w.stGraph()->hasLayout(), 20000);
        StGraphPlottable* ghost = w.stGraph()->liveBestPlottable();
        NocHeatmapView* heat = w.heatmap();
        QVERIFY(!ghost->visible() && !heat->liveBestShown());
        QVERIFY(w.showLiveBestAction()->isChecked()); // on by default
        const QImage before = render(heat);

        QSignalSpy finished(w.searchControl(), &SearchController::searchFinished);
        w.searchControl()->start();
        LiveBestPreview* p = w.liveBestPreview();
        QTRY_VERIFY_WITH_TIMEOUT(p->current() && ghost->visible(), 30000);
        QTest::qWait(50);
        auto best = p->current(); // a newer one may have come meanwhile: read both now
        QCOMPARE(ghost->layout(), best->layout);
        QVERIFY(!(*best->tree == w.document()->tree()));
        std::set<int> nodes;
        for (const StRect& r : ghost->layout()->rects())
            nodes.insert(r.node);
        QCOMPARE(nodes, leavesOf(*best->tree, *w.document()->network()));
        QVERIFY(ghost->ghost() && !w.stGraph()->plottable()->ghost());
        QCPItemText* legend = w.stGraph()->liveBestLegend();
        QVERIFY(legend->visible());
        // The heatmap draws the best's tile load, which is not the document's.
        QVERIFY(heat->liveBestShown());
        for (int t = 0; t < w.document()->hardware()->tiles(); ++t)
            QCOMPARE(heat->liveBestTileBusy(t), best->load.busy[size_t(t)]);
        QVERIFY(render(heat) != before);

        w.showLiveBestAction()->setChecked(false);
        QVERIFY(!ghost->visible());
        QVERIFY(!legend->visible());
        QVERIFY(!heat->liveBestShown());
        QVERIFY(!p->current());
        w.showLiveBestAction()->setChecked(true);
        QTRY_VERIFY_WITH_TIMEOUT(p->current() && ghost->visible(), 30000);

        w.searchControl()->stop();
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() >= 1, 30000);
        QTRY_VERIFY_WITH_TIMEOUT(!ghost->visible(), 5000);
        QVERIFY(!p->current());
        QVERIFY(!heat->liveBestShown());
    }

    // Adopting the best ends its preview: the document now shows that tree.
    void adoptEndsPreview() {
        QTemporaryDir dir;
        auto window = openSearchWindow(dir);
        QVERIFY(window);
        MainWindow& w = *window;
        QSignalSpy finished(w.searchControl(), &SearchController::searchFinished);
        w.searchControl()->start();
        LiveBestPreview* p = w.liveBestPreview();
        QTRY_VERIFY_WITH_TIMEOUT(p->current(), 30000);
        bool previewAtAdopt = true;
        connect(w.document(), &Document::treeChanged, this,
                [&] { previewAtAdopt = p->current() != nullptr; });
        QSignalSpy changed(w.document(), &Document::treeChanged);
        w.searchControl()->adoptBest();
        QTRY_VERIFY_WITH_TIMEOUT(changed.count() >= 1, 30000);
        QVERIFY(!previewAtAdopt);
        QVERIFY(!w.stGraph()->liveBestPlottable()->visible());
        w.searchControl()->stop();
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() >= 1, 30000);
    }

    // Adopt best stays enabled during a run; while paused the best-so-far readout stays;
    // after adopting, the S-T graph shows the whole adopted schedule. The window is kept for
    // tradeoffPlotAdopts.
    void adoptDuringRun() {
        m_w = openSearchWindow(m_dir);
        QVERIFY(m_w);
        QVERIFY(waitForLayout(*m_w));
        SearchPanel* sp = m_w->searchPanel();
        QSignalSpy finished(m_w->searchControl(), &SearchController::searchFinished);
        m_w->searchControl()->start();
        QVERIFY(m_w->searchControl()->running());
        QVERIFY(sp->adoptEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(sp->bestText().contains(QLatin1String("Best so far")), 20000);
        QTest::qWait(1500);
        m_w->searchControl()->pause(true);
        QTRY_VERIFY_WITH_TIMEOUT(sp->property("paused").toBool(), 10000);
        QVERIFY(sp->bestText().contains(QLatin1String("Best so far")));
        m_w->searchControl()->pause(false);
        const double before = m_w->document()->evaluation()->delay;
        QSignalSpy changed(m_w->document(), &Document::treeChanged);
        m_w->searchControl()->adoptBest();
        QTRY_VERIFY_WITH_TIMEOUT(changed.count() >= 1, 20000);
        m_w->searchControl()->stop();
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() >= 1, 20000);
        QTest::qWait(300);
        const double after = m_w->document()->evaluation()->delay;
        QVERIFY(after != before);
        // The graph shows the whole adopted schedule, not the old time range.
        const QCPRange x = m_w->stGraph()->plot()->xAxis->range();
        QVERIFY2(x.upper < after * 1.05 && x.upper >= after,
                 qPrintable(QStringLiteral("%1 vs %2").arg(x.upper).arg(after)));
    }

    // The energy-delay trade-off plot holds the search history and the bests; clicking one
    // adopts it as one undo step.
    void tradeoffPlotAdopts() {
        QVERIFY(m_w); // the window adoptDuringRun searched in
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

    void cleanupTestCase() { m_w.reset(); }
};

QTEST_MAIN(TstLiveBest)
#include "tst_livebest.moc"
