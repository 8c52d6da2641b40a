// Leaves working in blocks in the GUI: with the 1024x2048 segmentation stem on the edge
// preset under the layer-sequential tree every conv's slice overflows its tiles' buffers, so
// the Layers table names each leaf's blocks (why, as the tooltip; the DRAM they add), the
// S-T graph hatches their rectangles and names the blocks on hover, and the metrics panel
// and the HTML report count the blocked leaves. On the cloud preset every slice fits and
// none of it shows.
#include "core/bytestext.h"
#include "core/document.h"
#include "core/layersmodel.h"
#include "core/reportbuilder.h"
#include "eval/evaluation.h"
#include "expectok.h"
#include "report/layers.h"
#include "testwindow.h"
#include "tree/ratree.h"
#include "widgets/layerspanel.h"
#include "widgets/mainwindow.h"
#include "widgets/metricspanel.h"
#include "widgets/stgraphplottable.h"
#include "widgets/stgraphview.h"

#include <QLabel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <qcustomplot.h>

using namespace tilescope;
using namespace tilescope::ui;

class TstBlockingUi : public QObject {
    Q_OBJECT
  private:
    std::unique_ptr<MainWindow> m_w;
    QTemporaryDir m_dir;

    // Opens `model` on `preset` under the layer-sequential tree of `perInvocation` samples per
    // invocation and waits for the S-T graph to lay it out.
    bool openLayerSequential(const QString& model, const QString& preset, int perInvocation) {
        if (!m_w->openSample(model, preset, false)) return false;
        Document* doc = m_w->document();
        RATree ls = RATree::layerSequential(*doc->network(), doc->batch());
        ls.node(ls.root).subBatch = doc->batch() / perInvocation;
        ls.propagateBatches();
        if (!(doc->tree() == ls) && doc->adoptTree(ls, QStringLiteral("layer-sequential")))
            return false;
        StGraphPlottable* p = m_w->stGraph()->plottable();
        return QTest::qWaitFor(
            [&] { return p->layout() && &p->layout()->evaluation() == doc->evaluation().get(); },
            20000);
    }

    // The drawn figure (draw() counts the hatched rectangles it paints).
    StGraphPlottable::DrawStats drawn() const {
        m_w->stGraph()->plot()->replot(QCustomPlot::rpImmediateRefresh);
        return m_w->stGraph()->plottable()->lastDrawStats();
    }

  private slots:
    void initTestCase() {
        m_w = openTestWindow(m_dir);
        QVERIFY(m_w);
        QVERIFY2(openLayerSequential(QStringLiteral(TILESCOPE_TESTDATA "/seg_stem_1024x2048.onnx"),
                                     QStringLiteral("edge"), 8),
                 qPrintable(m_w->lastError()));
    }

    void layersTableNamesTheBlocks() {
        const auto e = m_w->document()->evaluation();
        QVERIFY(e && e->valid);
        // Every leaf of the stem is a conv whose slice overflows the 1 MB buffer.
        QCOMPARE(e->blockedLeaves, 4);
        QVERIFY(e->blockingDramBytes > 0);
        const LayersModel* m = m_w->layersPanel()->model();
        QCOMPARE(m->rowCount(), 4);
        for (int r = 0; r < m->rowCount(); ++r) {
            const LayerFigures& f = m->figures()[size_t(r)];
            QVERIFY(f.blocks > 1);
            QVERIFY(!f.blocking.empty());
            const QModelIndex blocks = m->index(r, LayersModel::Blocks);
            QCOMPARE(blocks.data().toString(), QString::fromStdString(f.blocking));
            QCOMPARE(blocks.data(LayersModel::SortRole).toInt(), f.blocks);
            const QString tip = blocks.data(Qt::ToolTipRole).toString();
            QVERIFY2(tip.contains(QString::fromStdString(f.blockingReason)), qPrintable(tip));
            const QModelIndex dram = m->index(r, LayersModel::BlockingDram);
            QCOMPARE(dram.data().toString(), QStringLiteral("+") + bytesText(f.blockingDramBytes));
            QCOMPARE(dram.data(LayersModel::SortRole).toDouble(), f.blockingDramBytes);
        }
        const auto* summary =
            m_w->layersPanel()->findChild<QLabel*>(QStringLiteral("layersSummary"));
        QVERIFY(summary);
        QVERIFY2(
            summary->text().contains(QStringLiteral("Blocked leaves ") +
                                     blockedLeavesText(e->blockedLeaves, e->blockingDramBytes)),
            qPrintable(summary->text()));
    }

    void stGraphHatchesBlockedRectangles() {
        StGraphPlottable* p = m_w->stGraph()->plottable();
        const auto layout = p->layout();
        QVERIFY(layout && !layout->rects().empty());
        const Evaluation& e = layout->evaluation();
        for (size_t i = 0; i < layout->rects().size(); ++i) {
            const StRect& r = layout->rects()[i];
            QCOMPARE(p->hatched(r), e.nodes[size_t(r.node)].blocks > 1);
            QVERIFY(p->hatched(r)); // every leaf is blocked
        }
        const auto stats = drawn();
        QVERIFY(stats.drawn > 0);
        QCOMPARE(stats.hatched, stats.drawn);
        // Hover names what the blocks split, per tile.
        const StRect& r = layout->rects().front();
        const QString tip = m_w->stGraph()->rectToolTip(*layout, 0);
        const NodeFigures& f = e.nodes[size_t(r.node)];
        QVERIFY2(tip.contains(QString::fromStdString(f.blocking) + QStringLiteral(" per tile")),
                 qPrintable(tip));
        // The live best's overlay is never hatched: it is one translucent colour.
        StGraphPlottable* ghost = m_w->stGraph()->liveBestPlottable();
        ghost->setLayout(layout);
        QVERIFY(!ghost->hatched(r));
        ghost->setLayout(nullptr);
    }

    void metricsAndReportCountThem() {
        const auto e = m_w->document()->evaluation();
        MetricsPanel* p = m_w->metrics();
        QVERIFY(p->figureShown(QStringLiteral("Blocked leaves")));
        const QString text = p->figureText(QStringLiteral("Blocked leaves"));
        QCOMPARE(text, QStringLiteral("4, +%1 DRAM").arg(bytesText(e->blockingDramBytes)));
        const QString h = ReportBuilder(*m_w->document(), nullptr, nullptr).html();
        QVERIFY2(h.contains(QStringLiteral("Blocked leaves</th><td>%1</td>").arg(text)),
                 qPrintable(h.left(4000)));
    }

    void nothingBlockedShowsNothing() {
        // The 12x12 cloud mesh gives each conv 9x the tiles, and one sample per invocation:
        // every slice fits.
        QVERIFY(openLayerSequential(QStringLiteral(TILESCOPE_TESTDATA "/seg_stem_1024x2048.onnx"),
                                    QStringLiteral("cloud"), 1));
        const auto e = m_w->document()->evaluation();
        QVERIFY(e && e->valid);
        QCOMPARE(e->blockedLeaves, 0);
        const LayersModel* m = m_w->layersPanel()->model();
        QVERIFY(m->rowCount() > 0);
        for (int r = 0; r < m->rowCount(); ++r) {
            QCOMPARE(m->index(r, LayersModel::Blocks).data().toString(), QString());
            QCOMPARE(m->index(r, LayersModel::BlockingDram).data().toString(), QString());
        }
        const auto* summary =
            m_w->layersPanel()->findChild<QLabel*>(QStringLiteral("layersSummary"));
        QVERIFY(!summary->text().contains(QLatin1String("Blocked")));
        QVERIFY(!m_w->metrics()->figureShown(QStringLiteral("Blocked leaves")));
        StGraphPlottable* p = m_w->stGraph()->plottable();
        for (const StRect& r : p->layout()->rects())
            QVERIFY(!p->hatched(r));
        QCOMPARE(drawn().hatched, 0);
        QVERIFY(!m_w->stGraph()->rectToolTip(*p->layout(), 0).contains(QLatin1String("block")));
        const QString h = ReportBuilder(*m_w->document(), nullptr, nullptr).html();
        QVERIFY(!h.contains(QLatin1String("Blocked leaves")));
    }
};

QTEST_MAIN(TstBlockingUi)
#include "tst_blocking_ui.moc"
