// The S-T graph's coordinate mapping (a value type) and layout: cycles <-> pixels,
// tile <-> rows, snake-order tile groups split into contiguous runs of tile ids, hit tests.
#include "core/layernames.h"
#include "core/stlayout.h"
#include "core/stmapping.h"
#include "hw/mesh.h"
#include "model/model_loader.h"

#include <QSet>
#include <QTest>

using namespace tilescope;
using namespace tilescope::ui;

class TstStMapping : public QObject {
    Q_OBJECT
  private slots:
    void cyclesToPixels() {
        // 1000 cycles over 500 px starting at x = 100: 0.5 px per cycle.
        const StMapping m(0, 1000, -0.5, 15.5, QRectF(100, 20, 500, 320));
        QCOMPARE(m.cycleToX(0), 100.0);
        QCOMPARE(m.cycleToX(1000), 600.0);
        QCOMPARE(m.cycleToX(250), 225.0);
        QCOMPARE(m.pixelsPerCycle(), 0.5);
        QCOMPARE(m.xToCycle(m.cycleToX(377)), 377.0);
    }
    void tilesToRows() {
        // 16 tiles over 320 px, tile 0 on top: each tile band is 20 px, tile t centred at
        // 20 + 20 t + 10.
        const StMapping m(0, 1000, -0.5, 15.5, QRectF(100, 20, 500, 320));
        QCOMPARE(m.tileToY(0), 30.0);
        QCOMPARE(m.tileToY(15), 330.0);
        QCOMPARE(m.pixelsPerTile(), 20.0);
        QCOMPARE(m.tileAtY(30, 16), 0);
        QCOMPARE(m.tileAtY(39.9, 16), 0);
        QCOMPARE(m.tileAtY(40.1, 16), 1);
        QCOMPARE(m.tileAtY(335, 16), 15);
        QCOMPARE(m.tileAtY(345, 16), -1);
        QCOMPARE(m.tileAtY(10, 16), -1);
        // Bottom-up orientation mirrors it.
        const StMapping up(0, 1000, -0.5, 15.5, QRectF(100, 20, 500, 320), false);
        QCOMPARE(up.tileToY(0), 330.0);
        QCOMPARE(up.tileAtY(30, 16), 15);
    }
    void rectangles() {
        const StMapping m(0, 1000, -0.5, 15.5, QRectF(100, 20, 500, 320));
        const QRectF r = m.rectFor(200, 400, 2, 3, 0.0);
        QCOMPARE(r.left(), 200.0);
        QCOMPARE(r.right(), 300.0);
        QCOMPARE(r.top(), 60.0);     // top of tile 2's band
        QCOMPARE(r.bottom(), 100.0); // bottom of tile 3's band
        const QRectF inset = m.rectFor(200, 400, 2, 3, 0.1);
        QCOMPARE(inset.top(), 62.0);
        QCOMPARE(inset.height(), 36.0);
    }
    void degenerateRangesStayFinite() {
        const StMapping m(5, 5, 0, 0, QRectF(0, 0, 100, 100));
        QVERIFY(std::isfinite(m.cycleToX(5)));
        QVERIFY(std::isfinite(m.tileToY(0)));
        QCOMPARE(StMapping(0, 1, 0, 1, QRectF(0, 0, 1, 1)),
                 StMapping(0, 1, 0, 1, QRectF(0, 0, 1, 1)));
    }

    void snakeRuns() {
        // The edge mesh's snake (stripes of two columns): positions 0..15 visit tiles
        // 0,1,4,5,8,9,12,13 then 14,15,10,11,6,7,2,3 (hw/mesh.h).
        Hardware hw;
        QVERIFY(presetHardware("edge", hw));
        const Mesh mesh(hw);
        const std::vector<int> order = mesh.snakeOrder();
        QCOMPARE(order, (std::vector<int>{0, 1, 4, 5, 8, 9, 12, 13, 14, 15, 10, 11, 6, 7, 2, 3}));
        using Runs = std::vector<std::pair<int, int>>;
        QCOMPARE(StLayout::tileRuns(order, 0, 4), (Runs{{0, 1}, {4, 5}}));
        QCOMPARE(StLayout::tileRuns(order, 6, 4), (Runs{{12, 15}}));
        QCOMPARE(StLayout::tileRuns(order, 0, 16), (Runs{{0, 15}}));
        QCOMPARE(StLayout::tileRuns(order, 8, 8), (Runs{{2, 3}, {6, 7}, {10, 11}, {14, 15}}));
    }

    void layoutAndHits() {
        auto e = std::make_shared<Evaluation>();
        e->tileOrder = {0, 1, 4, 5, 8, 9, 12, 13, 14, 15, 10, 11, 6, 7, 2, 3};
        // Leaf 1 on positions 0..3 (tiles 0,1,4,5) for cycles [0, 100); leaf 2 on
        // positions 8..15 for [50, 300).
        e->intervals.push_back(BusyInterval{1, 0, 0, 1, 0, 100, 0, 4, 5});
        e->intervals.push_back(BusyInterval{2, 1, 0, 1, 50, 300, 8, 8, 7});
        auto l = StLayout::build(e, 16, {QStringLiteral("a"), QStringLiteral("b")});
        QCOMPARE(int(l->rects().size()), 2 + 4);
        QCOMPARE(l->endCycle(), 300.0);
        QCOMPARE(l->longest(), 250.0);
        QCOMPARE(l->rects()[l->hit(10, 4)].node, 1);
        QCOMPARE(l->rects()[l->hit(60, 15)].node, 2);
        QCOMPARE(l->rects()[l->hit(299, 2)].node, 2);
        QCOMPARE(l->hit(10, 2), -1);  // tile 2 is idle before cycle 50
        QCOMPARE(l->hit(150, 0), -1); // leaf 1 ended
        QCOMPARE(l->hit(10, 8), -1);  // tile 8 never used
        // Sorted by start, so the visible range starts from a binary search.
        QCOMPARE(l->firstVisible(0), size_t(0));
        QVERIFY(l->firstVisible(1e9) == l->rects().size());
    }

    void labels() {
        QCOMPARE(shortLayerName(QStringLiteral("/layer1/layer1.0/conv1/Conv")),
                 QStringLiteral("layer1.0/conv1"));
        QCOMPARE(shortLayerName(QStringLiteral("/conv1/Conv")), QStringLiteral("conv1"));
        QCOMPARE(shortLayerName(QStringLiteral("conv1")), QStringLiteral("conv1"));
        QCOMPARE(shortLayerName(QStringLiteral("/features/features.0/Conv")),
                 QStringLiteral("features.0"));
        QCOMPARE(rectLabel(QStringLiteral("conv1"), 0, 1), QStringLiteral("conv1[0,1]"));
        // A part repeating the start of the next one goes too.
        QCOMPARE(shortLayerName(QStringLiteral("/layer2/layer2.0/downsample/downsample.0/Conv")),
                 QStringLiteral("layer2.0/downsample.0"));
        QCOMPARE(shortLayerNames({QStringLiteral("/layers.0/attn/q/MatMul"),
                                  QStringLiteral("/layers.1/attn/q/MatMul"),
                                  QStringLiteral("/head/Gemm")}),
                 QStringList({QStringLiteral("layers.0/attn/q"), QStringLiteral("layers.1/attn/q"),
                              QStringLiteral("head")}));
    }

    // Short names must not collide ("attn/q" for every transformer block's query projection,
    // "downsample/downsample.0" for every ResNet stage's shortcut): the names the views show
    // must be as distinct as the layers' own names.
    void shortNamesAreUnique_data() {
        QTest::addColumn<QString>("model");
        QTest::newRow("resnet50") << QStringLiteral("resnet50.onnx");
        QTest::newRow("transformer12") << QStringLiteral("transformer12.onnx");
        QTest::newRow("googlenet") << QStringLiteral("googlenet.onnx");
    }
    void shortNamesAreUnique() {
        QFETCH(QString, model);
        auto net = loadModel((QStringLiteral(TILESCOPE_SAMPLES "/models/") + model).toStdString());
        QVERIFY(net.ok());
        const QStringList names = displayLayerNames(*net);
        QCOMPARE(names.size(), qsizetype(net->layers.size()));
        QSet<QString> seen;
        for (int i = 0; i < names.size(); ++i) {
            QVERIFY2(!seen.contains(names[i]),
                     qPrintable(names[i] + QStringLiteral(" is shown for two layers")));
            seen.insert(names[i]);
            QVERIFY(names[i].size() <= int(net->layers[size_t(i)].name.size()));
        }
    }
};

QTEST_MAIN(TstStMapping)
#include "tst_stmapping.moc"
