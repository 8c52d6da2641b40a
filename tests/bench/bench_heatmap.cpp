// Frame time of the NoC heatmap on large meshes: ResNet-50 batch 8 (the layer pipeline) on 12x12,
// 32x32 and 64x64 tiles. Prints ms per frame in a dock-sized view (regions on the large
// meshes) and a full-window one, zoomed into one region (single tiles and links), with bytes
// and with utilisation, and the time of a hover (hit test + text). Run:
// QT_QPA_PLATFORM=offscreen ./bench_heatmap
#include "core/selectionstate.h"
#include "mesh_documents.h"
#include "widgets/nocheatmapview.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QImage>
#include <QPainter>
#include <cstdio>

using namespace tilescope;
using namespace tilescope::ui;

namespace {

// Paints `n` frames into an image of the view's size, as a paint event does.
double msPerFrame(NocHeatmapView& view, int n) {
    QImage img(view.size(), QImage::Format_ARGB32_Premultiplied);
    {
        QPainter p(&img);
        view.paintTo(p, view.size()); // warm up
    }
    QElapsedTimer t;
    t.start();
    for (int i = 0; i < n; ++i) {
        QPainter p(&img);
        view.paintTo(p, view.size());
    }
    return double(t.nsecsElapsed()) * 1e-6 / n;
}

double msPerHover(NocHeatmapView& view, int n) {
    QElapsedTimer t;
    t.start();
    int named = 0;
    for (int i = 0; i < n; ++i) {
        const QPointF at(view.width() * (0.1 + 0.8 * (i % 17) / 17.0),
                         view.height() * (0.1 + 0.6 * (i % 13) / 13.0));
        named += !view.hoverText(at).isEmpty();
    }
    const double ms = double(t.nsecsElapsed()) * 1e-6 / n;
    (void)named;
    return ms;
}

void line(const char* what, NocHeatmapView& view, int frames) {
    const MeshRegions r = view.regions();
    std::printf("  %-40s %7.2f ms/frame  (%dx%d regions of %dx%d tiles)\n", what,
                msPerFrame(view, frames), r.columns(), r.rows(), r.side(), r.side());
}

} // namespace

int main(int argc, char** argv) {
    if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    for (const MeshCase& c : meshCases()) {
        auto doc = openResNet50(c, true);
        if (!doc) return 1;
        SelectionState sel;
        NocHeatmapView view(doc.get(), &sel);
        for (const QSize size : {QSize(420, 380), QSize(1600, 1000)}) {
            view.resize(size);
            view.resetZoom();
            std::printf(" view %dx%d px:\n", size.width(), size.height());
            line("whole mesh, link bytes", view, 20);
            std::printf("  %-40s %7.3f ms\n", "hover (hit test + text)", msPerHover(view, 200));
            view.setShowUtilisation(true);
            line("whole mesh, utilisation", view, 20);
            view.setShowUtilisation(false);
            if (!view.zoomable()) continue;
            view.zoomIn(QPointF(size.width() / 2.0, size.height() / 3.0));
            line("wheel zoom in once", view, 20);
            view.resetZoom();
            if (!view.regions().single()) {
                view.zoomToRegion(view.regions().count() / 2);
                line("zoomed into one region", view, 20);
                std::printf("  %-40s %7.3f ms\n", "hover (hit test + text)", msPerHover(view, 200));
            }
        }
    }
    return 0;
}
