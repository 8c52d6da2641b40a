// The views on meshes of thousands of tiles. The NoC heatmap gathers a 64x64 mesh into
// regions (a 4x4 mesh keeps single tiles), draws each region's mean busy and the busiest link
// across each side (MeshRegions, checked here against sums and maxima taken tile by tile and
// link by link), zooms in and out, and names a region or a tile on hover. The S-T graph groups
// tile rows too thin to read (in the snake order on such a mesh) and expands them on zoom.
#include "core/document.h"
#include "core/meshregions.h"
#include "core/selectionstate.h"
#include "core/stlayout.h"
#include "hw/hardware.h"
#include "hw/mesh.h"
#include "widgets/nocheatmapview.h"
#include "widgets/stgraphplottable.h"
#include "widgets/stgraphview.h"

#include <QSignalSpy>
#include <QTest>
#include <qcustomplot.h>

using namespace tilescope;
using namespace tilescope::ui;

namespace {
// The first hover text (widget rows top to bottom, each left to right, every 3 px: boxes
// and arrows are wider) starting with `prefix`.
QString firstHover(const NocHeatmapView& view, const QString& prefix) {
    for (int y = 0; y < view.height(); y += 3)
        for (int x = 0; x < view.width(); x += 3)
            if (const QString t = view.hoverText(QPointF(x + 0.5, y + 0.5)); t.startsWith(prefix))
                return t;
    return {};
}
// AlexNet (eight layers: a quick evaluation even on 4,096 tiles) at batch 8 on a mesh of
// cloud tiles with DRAM on four sides.
std::unique_ptr<Document> openOn(int side) {
    auto doc = std::make_unique<Document>();
    Hardware hw = defaultHardware(side, side, "mesh");
    hw.dramSides = {MeshSide::West, MeshSide::East, MeshSide::North, MeshSide::South};
    if (doc->setHardware(hw, QStringLiteral("mesh")) || doc->setBatch(8) ||
        doc->openModel(QStringLiteral(TILESCOPE_TESTDATA "/alexnet.onnx")))
        return nullptr;
    return doc;
}
} // namespace

class TstLargeMesh : public QObject {
    Q_OBJECT
    std::unique_ptr<Document> m_big; // 64x64
    SelectionState m_sel;

  private slots:
    void initTestCase() {
        m_big = openOn(64);
        QVERIFY(m_big);
        QVERIFY(m_big->evaluation() && m_big->evaluation()->valid);
    }

    // The region side follows the pitch: single tiles on a small mesh at any size, and on a
    // large one where tiles are readable; else the smallest power of two that is.
    void regionSide() {
        QCOMPARE(MeshRegions::regionSide(4, 4, 3.0), 1);
        QCOMPARE(MeshRegions::regionSide(16, 16, 5.0), 1);
        QCOMPARE(MeshRegions::regionSide(64, 64, 30.0), 1);
        QCOMPARE(MeshRegions::regionSide(64, 64, 3.97), 8); // 31.8 px >= 24
        QCOMPARE(MeshRegions::regionSide(64, 64, 6.5), 4);  // 26 px
        QCOMPARE(MeshRegions::regionSide(64, 64, 2.9), 16); // 23.2 px < 24 at 8
        QCOMPARE(MeshRegions::regionSide(32, 32, 7.9), 4);
        // A 30-tile window in regions of 4: the last column and row of regions are 2 wide.
        const MeshRegions r(64, 64, TileWindow{10, 20, 30, 30}, 4);
        QCOMPARE(r.columns(), 8);
        QCOMPARE(r.rows(), 8);
        QCOMPARE(r.tilesOf(7).w, 2);
        QCOMPARE(r.tilesOf(7).x0, 38);
        QCOMPARE(r.regionAt(39, 49), 63);
        QCOMPARE(r.regionAt(40, 20), -1);
        QCOMPARE(r.neighbour(7, East), -1);
        QCOMPARE(r.neighbour(0, South), 8);
    }

    void smallMeshKeepsTiles() {
        auto doc = openOn(4);
        QVERIFY(doc);
        NocHeatmapView view(doc.get(), &m_sel);
        view.resize(420, 380);
        QVERIFY(!view.zoomable());
        const MeshRegions r = view.regions();
        QVERIFY(r.single());
        QCOMPARE(r.count(), 16);
        view.zoomIn(QPointF(200, 150)); // no zoom on a small mesh
        QCOMPARE(view.window(), (TileWindow{0, 0, 4, 4}));
        QVERIFY(view.hoverText(QPointF(-10, -10)).isEmpty());
    }

    // A port link's hover names the ports' convention: on edge, memory interleaved over its
    // 8 ports; on a template with the nearest port, nothing more.
    void portLinksNameTheirPorts() {
        auto doc = std::make_unique<Document>();
        Hardware edge;
        QVERIFY(presetHardware("edge", edge));
        QVERIFY(!doc->setHardware(edge, QStringLiteral("edge")));
        QVERIFY(!doc->setBatch(2));
        QVERIFY(!doc->openModel(QStringLiteral(TILESCOPE_TESTDATA "/alexnet.onnx")));
        QVERIFY(doc->evaluation() && doc->evaluation()->valid);
        NocHeatmapView view(doc.get(), &m_sel);
        view.resize(420, 380);
        const QString in = firstHover(view, QStringLiteral("DRAM -> tile"));
        QVERIFY2(in.contains(QStringLiteral("memory interleaved over 8 ports")), qPrintable(in));
        auto nearest = openOn(4);
        QVERIFY(nearest);
        NocHeatmapView other(nearest.get(), &m_sel);
        other.resize(420, 380);
        const QString plain = firstHover(other, QStringLiteral("DRAM -> tile"));
        QVERIFY2(plain.contains(QStringLiteral(" port)")), qPrintable(plain));
        QVERIFY(!plain.contains(QStringLiteral("interleaved")));
    }

    // At 64x64 in a 500x560 view (6.75 px per tile) the heatmap draws 16x16 regions of 4x4
    // tiles (27 px apart); each
    // region's load is the mean (and maximum) of its tiles' busy fractions, and its arrows
    // carry the busiest of the links crossing each side.
    void regionsAtLargeMesh() {
        NocHeatmapView view(m_big.get(), &m_sel);
        view.resize(500, 560);
        QVERIFY(view.zoomable());
        const MeshRegions r = view.regions();
        QCOMPARE(r.side(), 4);
        QCOMPARE(r.count(), 256);
        const Mesh mesh(*m_big->hardware());
        for (int region : {0, 17, 136, 255}) {
            double sum = 0, max = -1;
            for (int y = 0; y < 4; ++y)
                for (int x = 0; x < 4; ++x) {
                    const int tile = mesh.tileId(region % 16 * 4 + x, region / 16 * 4 + y);
                    sum += view.tileBusy(tile);
                    max = std::max(max, view.tileBusy(tile));
                }
            const RegionLoad load = view.regionLoad(region);
            QCOMPARE(load.tiles, 16);
            QVERIFY(qAbs(load.meanBusy - sum / 16) < 1e-12);
            QCOMPARE(load.maxBusy, max);
            QCOMPARE(view.tileBusy(load.busiestTile), max);
        }
        QVERIFY(view.regionLoad(0).meanBusy > 0);
        // Region 17 (tiles x 4-7, y 4-7): east side crosses from x = 7 into x = 8.
        const auto value = [&](int l) { return view.linkValue(l); };
        const BoundaryLink east = r.busiest(mesh, 17, East, MeshRegions::Crossing::Out, value);
        double busiest = 0;
        for (int y = 4; y < 8; ++y)
            busiest = std::max(busiest, view.linkValue(mesh.outLink(mesh.tileId(7, y), East)));
        QCOMPARE(east.links, 4);
        QCOMPARE(east.value, busiest);
        QCOMPARE(mesh.linkInfo(east.link).dir, East);
        QCOMPARE(mesh.tileX(mesh.linkInfo(east.link).tile), 7);
        // Region 0 sits in the north-west corner: DRAM feeds it from the west through 4 ports.
        const BoundaryLink dram = r.busiest(mesh, 0, West, MeshRegions::Crossing::FromDram, value);
        QCOMPARE(dram.links, 4);
        QVERIFY(mesh.linkInfo(dram.link).fromDram);
        QCOMPARE(r.busiest(mesh, 17, West, MeshRegions::Crossing::FromDram, value).links, 0);
    }

    // Double-click zooms into a region (single tiles), the wheel halves or doubles the
    // window, Escape steps back, Home shows the whole mesh.
    void zoomChangesTheLevel() {
        NocHeatmapView view(m_big.get(), &m_sel);
        view.resize(500, 560);
        const TileWindow whole{0, 0, 64, 64};
        QCOMPARE(view.window(), whole);
        view.zoomToRegion(17);
        QCOMPARE(view.window(), (TileWindow{4, 4, 4, 4}));
        QVERIFY(view.regions().single());
        view.zoomOut();
        QCOMPARE(view.window(), whole);
        QCOMPARE(view.regions().side(), 4);
        // One wheel step in: a 32x32 window in regions of 2; two more: 8x8 single tiles.
        view.zoomIn(QPointF(210, 150));
        QCOMPARE(view.window().w, 32);
        QCOMPARE(view.regions().side(), 2);
        view.zoomIn(QPointF(210, 150));
        view.zoomIn(QPointF(210, 150));
        QCOMPARE(view.window().w, 8);
        QVERIFY(view.regions().single());
        QTest::keyClick(&view, Qt::Key_Escape);
        QCOMPARE(view.window().w, 16);
        QTest::keyClick(&view, Qt::Key_Home);
        QCOMPARE(view.window(), whole);
    }

    // Hover names the region (its tiles, mean and busiest tile) or, zoomed in, the tile;
    // on an arrow the region's busiest link across that side.
    void hoverNamesWhatIsUnder() {
        NocHeatmapView view(m_big.get(), &m_sel);
        view.resize(500, 560);
        // The first region from the top left is region 0.
        QString text = firstHover(view, QStringLiteral("region "));
        QVERIFY2(text.startsWith(QLatin1String("region x 0-3, y 0-3 (16 tiles)")),
                 qPrintable(text));
        QVERIFY(text.contains(QLatin1String("busiest tile")));
        // An arrow between two regions names the busiest link of its side.
        QVERIFY(!firstHover(view, QStringLiteral("busiest of 4 links across")).isEmpty());
        view.zoomToRegion(0);
        text = firstHover(view, QStringLiteral("tile 0 ("));
        QVERIFY2(text.startsWith(QLatin1String("tile 0 (0,0)\nbusy")), qPrintable(text));
    }

    // Grouped rows: a rectangle on tile ids [a, b] becomes one piece per row it touches (full
    // rows between as one), one interval's pieces in a row become one, and a piece covering
    // part of its row says how much and is drawn that high (a quarter at least).
    void stRowsGroup() {
        QCOMPARE(StLayout::rowGroupSize(3.0, 4096, 64), 1);
        QCOMPARE(StLayout::rowGroupSize(0.19, 4096, 64), 32);  // 6.1 px
        QCOMPARE(StLayout::rowGroupSize(0.05, 4096, 64), 128); // two mesh rows
        QCOMPARE(StLayout::rowGroupSize(1.0, 576, 24), 6);     // a divisor of the width
        auto eval = std::make_shared<Evaluation>();
        for (int t = 0; t < 256; ++t)
            eval->tileOrder.push_back(t);
        BusyInterval a; // tiles 10-69: part of row 0, rows 1-3 whole (of 16), part of row 4
        a.node = 1, a.layer = 0, a.start = 0, a.end = 100, a.tileBegin = 10, a.tileCount = 60;
        BusyInterval b; // positions 3-4: tiles 3 and 5 (two runs) in row 0
        b.node = 2, b.layer = 1, b.start = 100, b.end = 200, b.tileBegin = 3, b.tileCount = 2;
        eval->tileOrder[4] = 5;
        eval->intervals = {a, b};
        const auto layout = StLayout::build(eval, 256, {QStringLiteral("a"), QStringLiteral("b")});
        const auto grouped = layout->grouped(16);
        QCOMPARE(grouped->rowTiles(), 16);
        std::vector<StRect> pieces = grouped->rects();
        QCOMPARE(int(pieces.size()), 4);
        QCOMPARE(pieces[0].tile0, 0); // a in row 0: tiles 10-15
        QCOMPARE(pieces[0].covered, 6);
        QCOMPARE(pieces[0].y1, 6.0f / 16);
        QCOMPARE(pieces[1].tile0, 16); // rows 1-3 whole
        QCOMPARE(pieces[1].tile1, 63);
        QCOMPARE(pieces[1].y1, 1.0f);
        QCOMPARE(pieces[2].tile0, 64); // row 4: tiles 64-69
        QCOMPARE(pieces[2].covered, 6);
        QCOMPARE(pieces[3].covered, 2); // b's two runs, one piece, drawn a quarter high
        QCOMPARE(pieces[3].y1, 0.25f);
        QCOMPARE(grouped->hit(150, 7), 3);
    }

    // On 64x64 the S-T graph's 4,096 tile rows are grouped at the full view; double-click
    // expands the group under the cursor into single tiles; hover names the group.
    void stGraphGroupsAndExpands() {
        StGraphView view(m_big.get(), &m_sel);
        view.resize(1000, 600);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTRY_VERIFY_WITH_TIMEOUT(view.hasLayout(), 20000);
        view.resetZoom();
        QCustomPlot* plot = view.plot();
        plot->replot();
        StGraphPlottable* p = view.plottable();
        // Rows in the snake order: each busy interval is one run of rows, one rectangle.
        const auto layout = p->layout();
        QVERIFY(layout->rowOrder().snake());
        QCOMPARE(layout->rects().size(), m_big->evaluation()->intervals.size());
        QCOMPARE(layout->tileOfRow(0), Mesh(*m_big->hardware()).tileAt(0));
        QVERIFY(!StRowOrder::forHardware(defaultHardware(16, 16, "small")).snake());
        const int g = p->rowTiles();
        const int period = layout->rowOrder().period;
        QVERIFY2(g > 1 && (period % g == 0 || g % period == 0), qPrintable(QString::number(g)));
        QVERIFY(p->mapping().pixelsPerTile() * g >= StLayout::kGroupRowPx);
        QCOMPARE(plot->yAxis->label(),
                 QStringLiteral("tile, snake order (rows of %1 tiles)").arg(g));
        const QRect area = plot->axisRect()->rect();
        const QPoint mid = area.center();
        const int i = p->rectAt(mid);
        QVERIFY(i >= 0);
        const QString tip = view.rectToolTip(*p->shownLayout(), i);
        QVERIFY2(tip.contains(QLatin1String(" tiles in x ")), qPrintable(tip));
        view.expandRowAt(mid);
        plot->replot();
        QCOMPARE(p->rowTiles(), 1);
        QCOMPARE(plot->yAxis->range().size(), double(g));
        // Ctrl+wheel out returns to grouped rows.
        for (int k = 0; k < 20; ++k)
            view.zoomRowsBy(1 / 0.7, 2048);
        plot->replot();
        QCOMPARE(p->rowTiles(), g);
    }
};

QTEST_MAIN(TstLargeMesh)
#include "tst_largemesh.moc"
