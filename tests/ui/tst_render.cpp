// The main window draws: after loading ResNet-50 the S-T graph and the NoC heatmap areas
// hold many non-background pixels in several colours; the selection highlights; every
// export writes a well-formed file atomically and an unwritable one reports the error.
#include "core/document.h"
#include "core/selectionstate.h"
#include "testwindow.h"
#include "widgets/mainwindow.h"
#include "widgets/metricspanel.h"
#include "widgets/nocheatmapview.h"
#include "widgets/stgraphplottable.h"
#include "widgets/stgraphview.h"

#include <QDir>
#include <QFile>
#include <QSet>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <nlohmann/json.hpp>
#include <qcustomplot.h>
#include <set>

using namespace tilescope;
using namespace tilescope::ui;

namespace {
struct Ink {
    double fraction = 0; // pixels that are not the background
    int colours = 0;     // distinct colours among them (quantised)
};
Ink inkIn(const QImage& img, const QRect& r, QRgb background) {
    int ink = 0, total = 0;
    QSet<QRgb> colours;
    for (int y = r.top(); y <= r.bottom(); y += 2)
        for (int x = r.left(); x <= r.right(); x += 2) {
            const QRgb c = img.pixel(x, y) & 0xffffff;
            ++total;
            if (c != (background & 0xffffff)) {
                ++ink;
                colours.insert(c & 0xf0f0f0);
            }
        }
    return {total ? double(ink) / total : 0, int(colours.size())};
}
QByteArray head(const QString& path, int n) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.read(n) : QByteArray();
}
} // namespace

class TstRender : public QObject {
    Q_OBJECT
  private:
    std::unique_ptr<MainWindow> m_w;
    QTemporaryDir m_dir;
    QTemporaryDir m_recovery; // autosaves, kept apart from the exported files

  private slots:
    void initTestCase() {
        m_w = openTestWindow(m_recovery);
        QVERIFY(m_w);
        m_w->resize(1500, 950);
        QSignalSpy ready(m_w->stGraph(), &StGraphView::layoutReady);
        QVERIFY(m_w->openModel(TILESCOPE_SAMPLES "/models/resnet50.onnx"));
        QTRY_VERIFY_WITH_TIMEOUT(ready.count() >= 1, 20000);
    }

    void stGraphAndHeatmapDraw() {
        QCustomPlot* plot = m_w->stGraph()->plot();
        plot->replot();
        const QImage img = m_w->grab().toImage();
        const QRect st(plot->mapTo(m_w.get(), plot->axisRect()->rect().topLeft()),
                       plot->axisRect()->rect().size());
        const Ink stInk =
            inkIn(img, st.adjusted(2, 2, -2, -2),
                  plot->background().isNull() ? qRgb(255, 255, 255) : qRgb(255, 255, 255));
        // Layer-sequential ResNet-50 fills the whole tile x time plane with 72 layer colours.
        QVERIFY2(stInk.fraction > 0.6, qPrintable(QString::number(stInk.fraction)));
        QVERIFY2(stInk.colours >= 8, qPrintable(QString::number(stInk.colours)));
        QVERIFY(m_w->stGraph()->plottable()->lastDrawStats().drawn +
                    m_w->stGraph()->plottable()->lastDrawStats().merged >
                0);

        NocHeatmapView* heat = m_w->heatmap();
        const QRect hr(heat->mapTo(m_w.get(), QPoint(0, 0)), heat->size());
        const QRgb base = heat->palette().color(QPalette::Base).rgb();
        const Ink heatInk = inkIn(img, hr, base);
        QVERIFY2(heatInk.fraction > 0.1, qPrintable(QString::number(heatInk.fraction)));
        QVERIFY2(heatInk.colours >= 6, qPrintable(QString::number(heatInk.colours)));
        // Every tile of the layer-sequential schedule works during the whole run.
        for (int t = 0; t < 16; ++t)
            QVERIFY(heat->tileBusy(t) > 0.5);
    }

    void selectionHighlightsAndFilters() {
        const RATree& t = m_w->document()->tree();
        const int leaf = t.nodeAtPath("/3");
        QCustomPlot* plot = m_w->stGraph()->plot();
        plot->replot();
        const QImage before = plot->toPixmap().toImage();
        m_w->selection()->select(leaf, QStringLiteral("/3"));
        plot->replot();
        const QImage after = plot->toPixmap().toImage();
        QVERIFY(before != after); // other layers fade, the selected one keeps its colour
        NocHeatmapView* heat = m_w->heatmap();
        const double all = heat->tileBusy(0);
        heat->setFilterToSelection(true);
        QVERIFY(heat->tileBusy(0) < all); // only one of 72 layers' time counts
        QVERIFY(heat->tileBusy(0) > 0);
        heat->setFilterToSelection(false);
        heat->setShowUtilisation(true);
        double maxUtil = 0;
        for (int l = 0; l < 16 * 8; ++l)
            maxUtil = std::max(maxUtil, heat->linkValue(l));
        QVERIFY(maxUtil > 0 && maxUtil <= 1.0 + 1e-9);
        heat->setShowUtilisation(false);
        m_w->selection()->clear();
    }

    void exports() {
        struct Case {
            const char* kind;
            const char* file;
            QByteArray magic;
        };
        const Case cases[] = {
            {"st", "st.png", "\x89PNG"},
            {"st", "st.svg", "<?xml"},
            {"st", "st.pdf", "%PDF"},
            {"heatmap", "h.png", "\x89PNG"},
            {"heatmap", "h.svg", "<?xml"},
            {"heatmap", "h.pdf", "%PDF"},
            {"html", "r.html", "<!DOCTYPE html>"},
            {"json", "r.json", "{"},
            {"tree-text", "t.tree", "T "},
            {"tree-json", "t.json", "{"},
            {"trace", "trace.json", "{"},
        };
        for (const Case& c : cases) {
            const QString p = m_dir.filePath(QString::fromLatin1(c.file));
            QVERIFY2(m_w->exportTo(QString::fromLatin1(c.kind), p), qPrintable(m_w->lastError()));
            QVERIFY2(head(p, c.magic.size()) == c.magic, c.file);
        }
        // No temporary files left behind by the atomic writes.
        for (const QString& f : QDir(m_dir.path()).entryList(QDir::Files))
            QVERIFY2(!f.contains(QLatin1String(".tmp-")), qPrintable(f));

        // The trace: one track per tile, complete events in microseconds (1 GHz: cycles/1000).
        QFile f(m_dir.filePath(QStringLiteral("trace.json")));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const auto j = nlohmann::json::parse(f.readAll().toStdString());
        const Evaluation& e = *m_w->document()->evaluation();
        int complete = 0;
        std::set<int> tids;
        double maxEnd = 0;
        for (const auto& ev : j.at("traceEvents")) {
            if (ev.at("ph") != "X") continue;
            ++complete;
            tids.insert(ev.at("tid").get<int>());
            maxEnd = std::max(maxEnd, ev.at("ts").get<double>() + ev.at("dur").get<double>());
        }
        QCOMPARE(int(tids.size()), 16);
        long long expected = 0;
        for (const auto& iv : e.intervals)
            expected += iv.tileCount;
        QCOMPARE(complete, int(expected));
        QVERIFY(std::abs(maxEnd - e.delay / 1000.0) < 1e-6 * e.delay);

        // HTML report carries the figures and the tree.
        QFile html(m_dir.filePath(QStringLiteral("r.html")));
        QVERIFY(html.open(QIODevice::ReadOnly));
        const QString h = QString::fromUtf8(html.readAll());
        QVERIFY(h.contains(QLatin1String("/conv1/Conv")));
        QVERIFY(h.contains(QLatin1String("Segments")));
    }

    void unwritableDestination() {
        const QString p = QStringLiteral("/nonexistent-tilescope-dir/out.png");
        QVERIFY(!m_w->exportTo(QStringLiteral("st"), p));
        QVERIFY2(m_w->lastError().contains(p), qPrintable(m_w->lastError()));
        QVERIFY(!m_w->exportTo(QStringLiteral("trace"),
                               QStringLiteral("/nonexistent-tilescope-dir/t.json")));
        QVERIFY(!QFile::exists(p));
    }

    // Link classes (issue 14): the heatmap draws a dashed line between chiplets, one per
    // chiplet column and row boundary, across the whole mesh; none on a single-chip mesh.
    void chipletBoundaries() {
        NocHeatmapView* heat = m_w->heatmap();
        QVERIFY(heat->chipletBoundaries().empty()); // edge: one chip
        QVERIFY(m_w->openHardware(QStringLiteral("chiplet")));
        QTRY_VERIFY_WITH_TIMEOUT(m_w->document()->hardware()->chiplets.count() == 4, 20000);
        QTRY_COMPARE_WITH_TIMEOUT(int(heat->chipletBoundaries().size()), 2, 20000);
        const auto lines = heat->chipletBoundaries();
        const QLineF& v = lines[0];
        const QLineF& h = lines[1];
        QCOMPARE(v.x1(), v.x2()); // vertical, between tile columns 3 and 4
        QCOMPARE(h.y1(), h.y2()); // horizontal, between rows 3 and 4
        QVERIFY(v.length() > 0 && h.length() > 0);
        QVERIFY(qAbs(v.length() - h.length()) < 1e-6); // an 8x8 mesh: both span it
        // The two lines cross at the mesh's centre, inside the widget.
        QPointF centre;
        QCOMPARE(v.intersects(h, &centre), QLineF::BoundedIntersection);
        QVERIFY(qAbs(centre.x() - (v.p1().x())) < 1e-9);
        QVERIFY(QRectF(QPointF(0, 0), QSizeF(heat->size())).contains(centre));
        // The metrics give the inter-chiplet hop-bytes a row of their own, only here.
        QTRY_VERIFY_WITH_TIMEOUT(m_w->metrics()->figureShown(QStringLiteral("Inter-chiplet")),
                                 20000);
        QVERIFY(m_w->metrics()->figureText(QStringLiteral("Inter-chiplet")).endsWith(u'B'));
        figuresScrollRatherThanClip();
        QVERIFY(m_w->openHardware(QStringLiteral("edge")));
        QTRY_VERIFY_WITH_TIMEOUT(heat->chipletBoundaries().empty(), 20000);
        QTRY_VERIFY_WITH_TIMEOUT(!m_w->metrics()->figureShown(QStringLiteral("Inter-chiplet")),
                                 20000);
    }

    void cleanupTestCase() { m_w.reset(); }

  private:
    // With the extra row and a model-disagreement warning (several lines in the narrow
    // column at 1280x800) the figures are taller than the dock: every one of them can
    // still be scrolled to and seen whole, none is cut off.
    void figuresScrollRatherThanClip() {
        auto* scroll = m_w->metrics()->findChild<QScrollArea*>(QStringLiteral("metricsFigures"));
        QVERIFY(scroll && scroll->widget());
        QList<QLabel*> labels = scroll->widget()->findChildren<QLabel*>();
        QVERIFY(labels.size() >= 10);
        QLabel* simulated = nullptr;
        for (QLabel* l : labels)
            if (l->text() == m_w->metrics()->figureText(QStringLiteral("Simulated"))) simulated = l;
        QVERIFY(simulated);
        const QString before = simulated->text();
        simulated->setText(QStringLiteral("641.4 k cycles (0.735x) (872.7 k cycles): ") +
                           QStringLiteral("more than 15% apart; ").repeated(12));
        QApplication::processEvents();
        QVERIFY2(scroll->widget()->height() > scroll->viewport()->height(),
                 "the case is not tall enough to need scrolling");
        for (QLabel* l : labels) {
            if (!l->isVisibleTo(scroll->widget())) continue;
            scroll->ensureWidgetVisible(l, 0, 0);
            QApplication::processEvents();
            QCOMPARE(l->visibleRegion().boundingRect().height(), l->height());
        }
        simulated->setText(before);
    }
};

QTEST_MAIN(TstRender)
#include "tst_render.moc"
