// Compute-in-memory in the GUI: on a cim template the metrics panel shows the
// crossbar programming energy and counts (and a fifth energy bar), the S-T graph colours
// each leaf by the share of its time spent writing crossbars; a MAC-array template shows
// neither.
#include "core/document.h"
#include "core/reportbuilder.h"
#include "eval/evaluation.h"
#include "testwindow.h"
#include "tree/ratree.h"
#include "widgets/mainwindow.h"
#include "widgets/metricspanel.h"
#include "widgets/palette.h"
#include "widgets/stgraphplottable.h"
#include "widgets/stgraphview.h"

#include <QComboBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <qcustomplot.h>

using namespace tilescope;
using namespace tilescope::ui;

class TstCimUi : public QObject {
    Q_OBJECT
  private:
    std::unique_ptr<MainWindow> m_w;
    QTemporaryDir m_dir;

    int energyBars() const {
        auto* bars = qobject_cast<QCPBars*>(m_w->metrics()->energyPlot()->plottable(0));
        return bars ? bars->dataCount() : -1;
    }

  private slots:
    void initTestCase() {
        m_w = openTestWindow(m_dir);
        QVERIFY(m_w);
        QVERIFY(m_w->openSample(QStringLiteral(TILESCOPE_SAMPLES "/models/resnet50.onnx"),
                                QStringLiteral("cim"), false));
        QTRY_VERIFY_WITH_TIMEOUT(m_w->stGraph()->hasLayout(), 20000);
    }

    void metricsShowWeightWrites() {
        const auto e = m_w->document()->evaluation();
        QVERIFY(e && e->valid);
        QVERIFY(e->energy.weightWrite > 0);
        QVERIFY(e->weightProgrammings > 0);
        MetricsPanel* p = m_w->metrics();
        QVERIFY(p->weightWritesShown());
        const QString text = p->figureText(QStringLiteral("Weight writes"));
        QVERIFY2(text.contains(QLocale().toString(qlonglong(e->weightProgrammings)) +
                               QStringLiteral(" programmings")),
                 qPrintable(text));
        QVERIFY2(text.contains(QLocale().toString(qlonglong(e->weightProgrammingsDefault))),
                 qPrintable(text));
        QCOMPARE(energyBars(), 5);
    }

    void reportCarriesThem() {
        const auto e = m_w->document()->evaluation();
        const QString h = ReportBuilder(*m_w->document(), nullptr, nullptr).html();
        QVERIFY(h.contains(QLatin1String("Weight writes")));
        QVERIFY2(h.contains(QStringLiteral("Crossbar programmings</th><td>%1 ")
                                .arg(QLocale().toString(qlonglong(e->weightProgrammings)))),
                 qPrintable(h.left(4000)));
        // The result JSON the report embeds carries the key the CLI's does.
        const auto j = ReportBuilder(*m_w->document(), nullptr, nullptr).json();
        QVERIFY(j.dump().find("weight_write") != std::string::npos);
    }

    void stGraphColoursProgrammingTime() {
        StGraphView* st = m_w->stGraph();
        auto* box = st->findChild<QComboBox*>(QStringLiteral("stColouring"));
        QVERIFY(box);
        box->setCurrentIndex(int(StGraphView::Colouring::Programming));
        QCOMPARE(st->colouring(), StGraphView::Colouring::Programming);
        const auto e = m_w->document()->evaluation();
        const RATree& t = m_w->document()->tree();
        int coloured = 0;
        for (int id = 0; id < t.size(); ++id) {
            const RANode& nd = t.node(id);
            if (nd.type != NodeType::Leaf) continue;
            const NodeFigures& f = e->nodes[size_t(id)];
            const QColor want = f.weightProgrammings > 0 && f.time > 0
                                    ? programmingColor(f.writeCycles / f.time)
                                    : programmingColor(-1);
            QCOMPARE(st->plottable()->layerColorOf(nd.layer), want);
            if (f.weightProgrammings > 0) {
                ++coloured;
                QVERIFY(f.writeCycles > 0 && f.writeCycles <= f.time);
            }
        }
        QVERIFY(coloured > 0);
        st->setColouring(StGraphView::Colouring::Layer);
        QCOMPARE(st->plottable()->layerColorOf(2), layerColor(2));
    }

    void macArrayHidesThem() {
        QVERIFY(m_w->openSample(QStringLiteral(TILESCOPE_SAMPLES "/models/resnet50.onnx"),
                                QStringLiteral("edge"), false));
        QTRY_VERIFY_WITH_TIMEOUT(m_w->stGraph()->hasLayout(), 20000);
        QVERIFY(!m_w->metrics()->weightWritesShown());
        // DRAM, NoC, MAC, buffer and one bar per in-tile level (al1, wl1, ol1, ol2 on edge),
        // no weight-write bar.
        QCOMPARE(int(m_w->document()->hardware()->levels.size()), 4);
        QCOMPARE(energyBars(), 8);
        QCOMPARE(m_w->document()->evaluation()->energy.weightWrite, 0.0);
        const QString h = ReportBuilder(*m_w->document(), nullptr, nullptr).html();
        QVERIFY(!h.contains(QLatin1String("Crossbar programmings")));
        QVERIFY(h.contains(QLatin1String("&nbsp;al1")));
    }

    void cleanupTestCase() { m_w.reset(); }
};

QTEST_MAIN(TstCimUi)
#include "tst_cim_ui.moc"
