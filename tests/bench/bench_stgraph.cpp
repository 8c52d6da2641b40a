// Frame time of the S-T graph with 50,000 rectangles (docs/method.md §6: fluid zoom and pan).
// Prints ms per frame for the full view (every rectangle sub-pixel: level of detail
// merges them), a 5%, 0.2% and 0.02% zoom (rectangles drawn, then labelled, one by one), and a
// pan sequence; plus the off-thread layout time. Then ResNet-50 batch 8 (layer-sequential and
// layer-pipeline trees) on
// 12x12, 32x32 and 64x64 tiles: the full view (tile rows grouped where they are too thin),
// the tile axis zoomed to an eighth, one group expanded into its tiles, and a 5% time zoom.
// Run: QT_QPA_PLATFORM=offscreen ./bench_stgraph [rects]
#include "core/document.h"
#include "core/layernames.h"
#include "core/selectionstate.h"
#include "core/stlayout.h"
#include "mesh_documents.h"
#include "widgets/stgraphplottable.h"
#include "widgets/stgraphview.h"

#include <QApplication>
#include <QElapsedTimer>
#include <cstdio>
#include <qcustomplot.h>
#include <random>

using namespace tilescope;
using namespace tilescope::ui;

namespace {

template <class Setup> void frames(StGraphView& view, const char* what, int n, Setup setup) {
    QCustomPlot* plot = view.plot();
    plot->replot(QCustomPlot::rpImmediateRefresh); // warm up
    QElapsedTimer ft;
    ft.start();
    for (int i = 0; i < n; ++i) {
        setup(i);
        plot->replot(QCustomPlot::rpImmediateRefresh);
    }
    const double ms = double(ft.nsecsElapsed()) * 1e-6 / n;
    const auto s = view.plottable()->lastDrawStats();
    std::printf("%-34s %7.2f ms/frame  (drawn %d, merged %d, labels %d, rows of %d tiles)\n", what,
                ms, s.drawn, s.merged, s.labels, view.plottable()->rowTiles());
}

// The S-T graph of a real schedule on each mesh of meshCases().
void meshFrames() {
    for (const MeshCase& c : meshCases())
        for (const bool pipeline : {false, true}) {
            auto doc = openResNet50(c, pipeline);
            if (!doc) return;
            QElapsedTimer t;
            t.start();
            const int tiles = doc->hardware()->tiles();
            auto layout =
                StLayout::build(doc->evaluation(), tiles, displayLayerNames(*doc->network()));
            const double layoutMs = double(t.nsecsElapsed()) * 1e-6;
            Document empty;
            SelectionState sel;
            StGraphView view(&empty, &sel);
            view.resize(1400, 800);
            view.show();
            QApplication::processEvents();
            view.showLayout(layout, doc->tree(), true);
            QCustomPlot* plot = view.plot();
            std::printf("%zu rectangles, %d tiles, plot %dx%d px; %-12s %7.2f ms\n",
                        layout->rects().size(), tiles, plot->width(), plot->height(), "layout",
                        layoutMs);
            const double end = layout->endCycle();
            frames(view, "full view", 20, [&](int) { plot->xAxis->setRange(0, end); });
            frames(view, "tile axis zoomed to 1/8, panning", 20, [&](int i) {
                const double h = tiles / 8.0, y0 = (tiles - h) * (i % 10) / 10.0;
                plot->yAxis->setRange(y0 - 0.5, y0 + h - 0.5);
            });
            view.resetZoom();
            const int g = view.plottable()->rowTiles();
            frames(view, "one group expanded", 20,
                   [&](int) { plot->yAxis->setRange(g * 3 - 0.5, g * 4 - 0.5); });
            view.resetZoom();
            frames(view, "zoom 5% of time, panning", 20,
                   [&](int i) { plot->xAxis->setRange(end * 0.04 * i, end * (0.04 * i + 0.05)); });
        }
}

} // namespace

int main(int argc, char** argv) {
    if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    const int wanted = argc > 1 ? std::atoi(argv[1]) : 50000;

    // A synthetic 16-tile schedule: 60 layers, each split into sub-batch runs on tile
    // groups of 1..16 snake positions, back to back per group, until `wanted` rectangles.
    auto eval = std::make_shared<Evaluation>();
    eval->tileOrder = {0, 1, 4, 5, 8, 9, 12, 13, 14, 15, 10, 11, 6, 7, 2, 3};
    std::mt19937 rng(1);
    const int layers = 60;
    QStringList names;
    for (int l = 0; l < layers; ++l)
        names << QStringLiteral("layer%1/conv").arg(l);
    std::vector<double> freeAt(16, 0.0);
    int rects = 0, sample = 0;
    while (rects < wanted) {
        const int group = 1 << (rng() % 5); // 1, 2, 4, 8, 16 positions
        const int begin = int(rng() % (17 - group)) / group * group;
        double start = 0;
        for (int p = begin; p < begin + group; ++p)
            start = std::max(start, freeAt[size_t(p)]);
        const double dur = 200 + rng() % 5000;
        BusyInterval iv;
        iv.node = rects % 500;
        iv.layer = int(rng() % layers);
        iv.firstSample = sample % 64;
        iv.lastSample = sample % 64 + 1;
        iv.start = start;
        iv.end = start + dur;
        iv.tileBegin = begin;
        iv.tileCount = group;
        for (int p = begin; p < begin + group; ++p)
            freeAt[size_t(p)] = iv.end;
        eval->intervals.push_back(iv);
        rects += int(StLayout::tileRuns(eval->tileOrder, begin, group).size());
        ++sample;
    }
    QElapsedTimer t;
    t.start();
    auto layout = StLayout::build(eval, 16, names);
    const double layoutMs = double(t.nsecsElapsed()) * 1e-6;

    Document doc;
    SelectionState sel;
    StGraphView view(&doc, &sel);
    view.resize(1400, 800);
    view.show();
    QApplication::processEvents();
    RATree tree;
    view.showLayout(layout, tree, true);
    QCustomPlot* plot = view.plot();
    std::vector<bool> hl(500, false);
    for (int i = 0; i < 500; i += 7)
        hl[size_t(i)] = true;

    const double end = layout->endCycle();
    std::printf("S-T graph benchmark: %zu rectangles (%zu intervals), %d tiles, plot %dx%d px\n",
                layout->rects().size(), eval->intervals.size(), layout->tiles(), plot->width(),
                plot->height());
    std::printf("%-34s %7.2f ms\n", "layout (off the GUI thread)", layoutMs);
    frames(view, "full view", 40, [&](int) { plot->xAxis->setRange(0, end); });
    frames(view, "full view, 1/7 nodes highlighted", 40, [&](int i) {
        if (i == 0) view.plottable()->setHighlight(hl);
        plot->xAxis->setRange(0, end);
    });
    view.plottable()->setHighlight({});
    frames(view, "zoom 5%, panning", 40,
           [&](int i) { plot->xAxis->setRange(end * 0.01 * i, end * (0.01 * i + 0.05)); });
    frames(view, "zoom 0.2%, panning", 40,
           [&](int i) { plot->xAxis->setRange(end * 0.02 * i, end * (0.02 * i + 0.002)); });
    frames(view, "zoom 0.02%, labelled, panning", 40,
           [&](int i) { plot->xAxis->setRange(end * 0.02 * i, end * (0.02 * i + 0.0002)); });
    frames(view, "zooming in (100% -> 1%)", 40, [&](int i) {
        const double w = end * std::pow(0.89, i);
        plot->xAxis->setRange(end / 2 - w / 2, end / 2 + w / 2);
    });
    meshFrames();
    return 0;
}
