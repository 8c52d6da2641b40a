// The main window from its first start: a welcome page until the sample (ResNet-50 on edge)
// is opened; then the S-T graph and the NoC heatmap areas hold many non-background pixels
// in several colours; the selection highlights and follows its node through edits; every
// export writes a well-formed file atomically (the HTML report with the views' figures,
// image exports without the selection) and an unwritable one reports the error; an invalid
// tree keeps the last valid picture; tick labels never crowd.
#include "core/bytestext.h"
#include "core/document.h"
#include "core/ratreemodel.h"
#include "core/selectionstate.h"
#include "expectok.h"
#include "report/segments.h"
#include "testwindow.h"
#include "widgets/axisfit.h"
#include "widgets/exportcontroller.h"
#include "widgets/mainwindow.h"
#include "widgets/metricspanel.h"
#include "widgets/nocheatmapview.h"
#include "widgets/searchpanel.h"
#include "widgets/stgraphplottable.h"
#include "widgets/stgraphview.h"
#include "widgets/treepanel.h"
#include "widgets/welcomepage.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QSet>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>
#include <QUndoStack>
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
QString readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
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
    }

    // The first start: a welcome page instead of empty panels, Start disabled without a
    // model, and one click that opens a sample with a hardware preset.
    void firstStartOpensASample() {
        QSignalSpy ready(m_w->stGraph(), &StGraphView::layoutReady);
        QVERIFY(m_w->welcomeShown());
        auto* start = m_w->searchPanel()->findChild<QPushButton*>(QStringLiteral("startButton"));
        QVERIFY(start);
        QVERIFY(!start->isEnabled());
        WelcomePage* wp = m_w->welcomePage();
        QVERIFY2(wp->sampleBox()->count() >= 5, "the samples folder was not found");
        QCOMPARE(wp->sampleBox()->currentText(), QStringLiteral("resnet50"));
        QVERIFY(wp->presetBox()->findData(QStringLiteral("cloud")) >= 0);
        QCOMPARE(wp->presetBox()->itemText(wp->presetBox()->findData(QStringLiteral("cloud"))),
                 QStringLiteral("cloud (12x12)"));
        QCOMPARE(wp->batchBox()->value(), 8);
        QVERIFY(!wp->findChild<QLabel*>(QStringLiteral("welcomeShortcuts"))->text().isEmpty());
        QVERIFY(m_w->openSample(wp->sampleBox()->currentData().toString(), QStringLiteral("edge"),
                                false));
        QVERIFY(!m_w->welcomeShown());
        QVERIFY(start->isEnabled());
        QCOMPARE(m_w->document()->hardwareSource(), QStringLiteral("edge"));
        // The undo stack holds nothing from opening: a preset chosen before the model is
        // not an edit.
        QCOMPARE(m_w->document()->undoStack()->count(), 0);
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

    // The selection follows its node through an edit that renumbers the tree (not the old
    // path, which would jump to whatever node took that place), and a refusal does not stay
    // on the status bar after a later success.
    void selectionFollowsTheNode() {
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
        QVERIFY(waitForLayout(*m_w));
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
            QVERIFY2(m_w->exports()->exportTo(QString::fromLatin1(c.kind), p),
                     qPrintable(m_w->lastError()));
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

    // Every segment's figures read the same in the metrics panel and the HTML report (with
    // two root sub-batches each segment runs twice, the case that used to differ), and the
    // segments' shares add up to the delay.
    void reportAgreesWithTheViews() {
        Document* doc = m_w->document();
        const RATree& t = doc->tree();
        QVERIFY(t.node(t.root).subBatch >= 1);
        if (t.node(t.root).subBatch == 1) QVERIFY_OK(doc->stepSubBatch(t.root, +1));
        QVERIFY(waitForLayout(*m_w));
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
        QVERIFY2(m_w->exports()->exportTo(QStringLiteral("html"), path),
                 qPrintable(m_w->lastError()));
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
        // The report carries the S-T graph and the heatmap as figures, embedded.
        QCOMPARE(html.count(QLatin1String("<img ")), 2);
        QVERIFY(html.contains(QLatin1String("src=\"data:image/png;base64,iVBOR")));
        doc->undoStack()->undo();
        QVERIFY(waitForLayout(*m_w));
    }

    // SVG exports draw the merged rectangles as vector shapes, not one bitmap that blurs when
    // scaled; image exports leave out the selection's dimming (a view state, not the figure).
    void imageExportsMatchTheViews() {
        Document* doc = m_w->document();
        const QString svg = m_dir.filePath(QStringLiteral("st.svg"));
        QVERIFY(m_w->exports()->exportTo(QStringLiteral("st"), svg));
        QVERIFY(m_w->stGraph()->plottable()->lastDrawStats().merged > 0); // some were merged
        const QString text = readAll(svg);
        QVERIFY(!text.contains(QLatin1String("<image")));
        const QString a = m_dir.filePath(QStringLiteral("a.png")),
                      b = m_dir.filePath(QStringLiteral("b.png"));
        QVERIFY(m_w->exports()->exportTo(QStringLiteral("st"), a));
        const int leaf = doc->tree().nodeAtPath("/3");
        m_w->selection()->select(leaf, QStringLiteral("/3"));
        QVERIFY(m_w->exports()->exportTo(QStringLiteral("st"), b));
        QCOMPARE(QImage(a), QImage(b));
        const QString ha = m_dir.filePath(QStringLiteral("ha.png")),
                      hb = m_dir.filePath(QStringLiteral("hb.png"));
        QVERIFY(m_w->exports()->exportTo(QStringLiteral("heatmap"), hb));
        m_w->selection()->clear();
        QVERIFY(m_w->exports()->exportTo(QStringLiteral("heatmap"), ha));
        QCOMPARE(QImage(ha), QImage(hb));
    }

    void unwritableDestination() {
        const QString p = QStringLiteral("/nonexistent-tilescope-dir/out.png");
        QVERIFY(!m_w->exports()->exportTo(QStringLiteral("st"), p));
        QVERIFY2(m_w->lastError().contains(p), qPrintable(m_w->lastError()));
        QVERIFY(!m_w->exports()->exportTo(QStringLiteral("trace"),
                                          QStringLiteral("/nonexistent-tilescope-dir/t.json")));
        QVERIFY(!QFile::exists(p));
    }

    // An invalid tree keeps the last valid schedule on screen, faded under a banner with the
    // reason, and its figures in the metrics, instead of zeros and blank views.
    void invalidTreeKeepsLastPicture() {
        Document* doc = m_w->document();
        const auto valid = doc->evaluation();
        // Everything in one S cut on 16 tiles: 72 stages cannot be allocated.
        const int kids = int(doc->tree().node(doc->tree().root).children.size());
        QVERIFY_OK(doc->wrap(doc->tree().root, 0, kids, NodeType::S));
        if (doc->evaluation()->valid) QSKIP("the all-S tree is valid on this template");
        QVERIFY(waitForLayout(*m_w));
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
        QVERIFY(waitForLayout(*m_w));
        QVERIFY(!m_w->stGraph()->plottable()->faded());
        QVERIFY(m_w->stGraph()->bannerText().isEmpty());
    }

    // Link classes: the heatmap draws a dashed line between chiplets, one per
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

    // Tick labels never crowd (the search strips' iteration and energy axes once did, at any
    // size): every axis of every chart fits its tick count to its length, at 1280x800 and
    // smaller. Last: the docks keep the sizes it leaves them.
    void tickLabelsNeverCrowd() {
        const QSize shown = m_w->size();
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
        m_w->resize(shown);
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
