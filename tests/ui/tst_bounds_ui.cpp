// The Layers table and the DRAM boundary view (docs/gui.md): the table sorts by its
// figures and a click selects the leaf in the document's shared selection; the S-T graph
// colours leaves by efficiency; the boundary view samples trees in the background, plots
// them, loads a clicked tree as one undo step and undo restores the previous tree.
#include "core/document.h"
#include "core/layersmodel.h"
#include "core/selectionstate.h"
#include "report/layers.h"
#include "testwindow.h"
#include "tree/ratree.h"
#include "widgets/boundaryview.h"
#include "widgets/layerspanel.h"
#include "widgets/mainwindow.h"
#include "widgets/palette.h"
#include "widgets/searchcontroller.h"
#include "widgets/stgraphplottable.h"
#include "widgets/stgraphview.h"

#include <QComboBox>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <qcustomplot.h>

using namespace tilescope;
using namespace tilescope::ui;

class TstBoundsUi : public QObject {
    Q_OBJECT
  private:
    std::unique_ptr<MainWindow> m_w;
    QTemporaryDir m_dir;

  private slots:
    void initTestCase() {
        m_w = openTestWindow(m_dir);
        QVERIFY(m_w);
        QVERIFY(m_w->openSample(QStringLiteral(TILESCOPE_SAMPLES "/models/resnet50.onnx"),
                                QStringLiteral("edge"), false));
        QTRY_VERIFY_WITH_TIMEOUT(m_w->stGraph()->hasLayout(), 20000);
    }

    void layersTableSortsAndSelects() {
        LayersPanel* p = m_w->layersPanel();
        QVERIFY(p);
        QTableView* v = p->view();
        const int leaves = int(m_w->document()->network()->layers.size());
        QCOMPARE(v->model()->rowCount(), leaves);
        // The rows are the engine's figures (report/layers.h), one per leaf.
        const auto figs = layerFigures(*m_w->document()->evaluation(), m_w->document()->tree(),
                                       *m_w->document()->network(), *m_w->document()->hardware());
        QCOMPARE(int(figs.size()), leaves);
        // Sorting by each numeric column orders the rows by that figure.
        for (int col :
             {int(LayersModel::Time), int(LayersModel::Energy), int(LayersModel::Dram),
              int(LayersModel::Bound), int(LayersModel::Ratio), int(LayersModel::ArrayRatio),
              int(LayersModel::ArrayBytes), int(LayersModel::ArrayBound)}) {
            v->sortByColumn(col, Qt::DescendingOrder);
            double prev = 1e300;
            for (int r = 0; r < v->model()->rowCount(); ++r) {
                const double x = v->model()->index(r, col).data(LayersModel::SortRole).toDouble();
                QVERIFY2(x <= prev, qPrintable(QString("column %1 row %2").arg(col).arg(r)));
                prev = x;
            }
        }
        // The array-level columns (docs/cost-model.md §2a "Two levels") carry the same
        // figures as report/layers.h, after the boundary columns, with header help.
        LayersModel* m = p->model();
        QVERIFY(m);
        // Edge has no DRAM run model: the layout columns after the array level are absent.
        QCOMPARE(m->columnCount(), int(LayersModel::InLayout));
        QVERIFY(int(LayersModel::ArrayRatio) > int(LayersModel::Tiles));
        for (int col : {int(LayersModel::ArrayRatio), int(LayersModel::ArrayBytes),
                        int(LayersModel::ArrayBound)}) {
            QVERIFY(!m->headerData(col, Qt::Horizontal, Qt::DisplayRole).toString().isEmpty());
            QVERIFY(!m->headerData(col, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty());
        }
        for (int r = 0; r < m->rowCount(); ++r) {
            const LayerFigures& f = figs[size_t(r)];
            QCOMPARE(m->index(r, 0).data(LayersModel::NodeRole).toInt(), f.node);
            QCOMPARE(m->index(r, LayersModel::ArrayBytes).data(LayersModel::SortRole).toDouble(),
                     f.arrayBytes);
            QCOMPARE(m->index(r, LayersModel::ArrayBound).data(LayersModel::SortRole).toDouble(),
                     f.arrayLowerBoundBytes);
            QCOMPARE(m->index(r, LayersModel::ArrayRatio).data(LayersModel::SortRole).toDouble(),
                     f.arrayRatio);
            QVERIFY(f.arrayLowerBoundBytes > 0 && f.arrayLowerBoundBytes <= f.arrayBytes);
            QCOMPARE(m->index(r, LayersModel::ArrayRatio).data(Qt::DisplayRole).toString(),
                     QString::number(f.arrayRatio, 'f', 2));
        }
        // A click on a row selects its leaf in the shared selection.
        const QModelIndex idx = v->model()->index(3, LayersModel::Name);
        const int node = idx.data(LayersModel::NodeRole).toInt();
        QTest::mouseClick(v->viewport(), Qt::LeftButton, {}, v->visualRect(idx).center());
        QCOMPARE(m_w->selection()->node(), node);
        QCOMPARE(m_w->document()->tree().node(node).type, NodeType::Leaf);
        // A selection made elsewhere moves the table's current row.
        const int other = v->model()->index(7, 0).data(LayersModel::NodeRole).toInt();
        m_w->selection()->select(other,
                                 QString::fromStdString(m_w->document()->tree().pathOf(other)));
        QCOMPARE(v->currentIndex().data(LayersModel::NodeRole).toInt(), other);
    }

    void efficiencyColouring() {
        StGraphView* st = m_w->stGraph();
        st->setColouring(StGraphView::Colouring::Efficiency);
        const auto figs = layerFigures(*m_w->document()->evaluation(), m_w->document()->tree(),
                                       *m_w->document()->network(), *m_w->document()->hardware());
        for (const LayerFigures& f : figs)
            QCOMPARE(st->plottable()->layerColorOf(f.layer), efficiencyColor(f.ratio));
        // The array level: every leaf has a positive bound, so none is left grey.
        st->setColouring(StGraphView::Colouring::ArrayEfficiency);
        const QColor grey = efficiencyColor(0);
        for (const LayerFigures& f : figs) {
            QVERIFY(f.arrayRatio >= 1.0 - 1e-9);
            QCOMPARE(st->plottable()->layerColorOf(f.layer), efficiencyColor(f.arrayRatio));
            QVERIFY(st->plottable()->layerColorOf(f.layer) != grey);
        }
        auto* box = m_w->findChild<QComboBox*>(QStringLiteral("stColouring"));
        QVERIFY(box);
        QCOMPARE(box->currentIndex(), int(StGraphView::Colouring::ArrayEfficiency));
        box->setCurrentIndex(int(StGraphView::Colouring::Efficiency)); // the user's path
        QCOMPARE(st->colouring(), StGraphView::Colouring::Efficiency);
        st->setColouring(StGraphView::Colouring::Layer);
        QCOMPARE(st->plottable()->layerColorOf(2), layerColor(2));
    }

    void boundaryViewSamplesAndLoads() {
        BoundaryView* b = m_w->boundaryView();
        QVERIFY(b);
        QSignalSpy done(b, &BoundaryView::samplingFinished);
        b->setSampleCount(30);
        b->startSampling();
        // A walk this short may be done before startSampling() returns: the job's
        // continuation then runs at once, on this thread (BackgroundJob::run). Otherwise it
        // is under way until the event loop delivers its result.
        if (done.isEmpty()) {
            QVERIFY(b->sampling());
            QVERIFY(done.wait(60000));
        }
        QCOMPARE(done.count(), 1);
        QVERIFY(!b->sampling());
        QCOMPARE(int(b->samples().size()), 30);
        int plotted = 0;
        for (int g = 0; g < b->plot()->graphCount(); ++g)
            if (b->plot()->graph(g)->name().startsWith(QStringLiteral("ratio")))
                plotted += b->plot()->graph(g)->dataCount();
        QCOMPARE(plotted, 30);
        // Click the point of a tree other than the current one: it is loaded, undoably.
        b->show();
        b->plot()->replot();
        const RATree before = m_w->document()->tree();
        int pick = -1;
        for (int i = int(b->samples().size()) - 1; i >= 0 && pick < 0; --i)
            if (!(b->samples()[size_t(i)].tree == before)) pick = i;
        QVERIFY(pick >= 0);
        const TreeSample& s = b->samples()[size_t(pick)];
        b->activate(pick);
        QVERIFY(m_w->document()->tree() == s.tree);
        QCOMPARE(m_w->document()->evaluation()->delay, s.delay);
        m_w->document()->undoStack()->undo();
        QVERIFY(m_w->document()->tree() == before);
        // Cancelling stops a long walk early with what it has.
        b->setSampleCount(100000);
        b->startSampling();
        QVERIFY(b->sampling());
        QTest::qWait(200);
        b->cancelSampling();
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 2, 60000);
        QVERIFY(b->samples().size() < 100000);
    }

    void boundaryViewClick() {
        BoundaryView* b = m_w->boundaryView();
        if (b->samples().empty()) QSKIP("no samples");
        // A mouse click on a plotted point picks that sample.
        b->plot()->replot();
        const TreeSample& s = b->samples().front();
        const QPoint p(int(b->plot()->xAxis->coordToPixel(s.delay)),
                       int(b->plot()->yAxis->coordToPixel(s.energy)));
        QCOMPARE(b->sampleAt(p) >= 0, true);
    }

    // A running search draws its best-so-far path over the samples.
    void boundaryViewFollowsTheSearch() {
        BoundaryView* b = m_w->boundaryView();
        QSignalSpy finished(m_w->searchControl(), &SearchController::searchFinished);
        m_w->searchControl()->start();
        QCOMPARE(b->pathPoints(), 0); // a new search starts a new path
        QVERIFY(finished.wait(120000));
        QVERIFY(b->pathPoints() > 0);
    }

    void cleanupTestCase() { m_w.reset(); }
};

QTEST_MAIN(TstBoundsUi)
#include "tst_bounds_ui.moc"
