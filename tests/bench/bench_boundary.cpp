// The DRAM boundary view's figures (docs/gui.md): how long sampling N random valid trees
// takes (engine/search/sampling.h) and how long the view takes from "Sample" to the
// scatter drawn, on the offscreen platform. Prints figures; never timed by ctest.
//   bench_boundary [model] [preset] [N] [batch]   (default resnet50 edge 2000 8)
//   bench_boundary --shot PREFIX [WxH]: under a real X server (xvfb-run), the main window
//   with the Layers table (efficiency colouring on) and with the DRAM boundary view after
//   sampling, saved as PREFIX-layers.png and PREFIX-boundary.png (docs/gui.md screenshot
//   checks).
#include "core/document.h"
#include "core/selectionstate.h"
#include "search/sampling.h"
#include "widgets/boundaryview.h"
#include "widgets/mainwindow.h"
#include "widgets/stgraphview.h"

#include <QApplication>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QScreen>
#include <QTimer>
#include <cstdio>
#include <qcustomplot.h>

using namespace tilescope;
using namespace tilescope::ui;

namespace {

void settle(int ms) {
    QEventLoop loop;
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
}

int shots(const QString& prefix, const QString& size) {
    MainWindow w;
    w.setInteractive(false);
    const QStringList wh = size.split('x');
    w.resize(wh.value(0, "1280").toInt(), wh.value(1, "800").toInt());
    w.show();
    if (!w.openSample(QStringLiteral(TILESCOPE_SAMPLES "/models/resnet50.onnx"), "edge", false))
        return 1;
    settle(1500);
    w.stGraph()->setColouring(StGraphView::Colouring::Efficiency);
    w.findChild<QDockWidget*>("layersDock")->raise();
    const int leaf = w.document()->tree().node(w.document()->tree().root).children.at(5);
    w.selection()->select(leaf, QString::fromStdString(w.document()->tree().pathOf(leaf)));
    settle(800);
    w.grab().save(prefix + "-layers.png");
    w.selection()->clear();
    w.findChild<QDockWidget*>("boundaryDock")->raise();
    QEventLoop loop;
    QObject::connect(w.boundaryView(), &BoundaryView::samplingFinished, &loop, &QEventLoop::quit);
    w.boundaryView()->setSampleCount(2000);
    w.boundaryView()->startSampling();
    loop.exec();
    settle(800);
    w.grab().save(prefix + "-boundary.png");
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    const bool shot = argc > 2 && std::string(argv[1]) == "--shot";
    if (!shot) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    if (shot) return shots(argv[2], argc > 3 ? argv[3] : "1280x800");
    const QString model = argc > 1 ? argv[1] : "resnet50";
    const QString preset = argc > 2 ? argv[2] : "edge";
    const int n = argc > 3 ? std::atoi(argv[3]) : 2000;
    const int batch = argc > 4 ? std::atoi(argv[4]) : 8;
    Document doc;
    if (doc.openModel(QStringLiteral(TILESCOPE_SAMPLES "/models/") + model + ".onnx") ||
        doc.openHardware(preset) || doc.setBatch(batch)) {
        std::fprintf(stderr, "cannot open %s on %s\n", qPrintable(model), qPrintable(preset));
        return 1;
    }
    // The engine alone.
    SampleConfig c;
    c.count = n;
    c.totalBatch = batch;
    c.objective = doc.objective();
    QElapsedTimer t;
    t.start();
    const auto samples = sampleTrees(*doc.network(), *doc.hardware(), c);
    const double engine = t.elapsed() / 1000.0;
    int near = 0, deep = 0;
    for (const TreeSample& s : samples)
        near += s.dramTimeRatio >= 0.8, deep = std::max(deep, s.depth);
    std::printf("%s %s batch %d: %zu trees sampled in %.2f s (%.0f trees/s); %d with DRAM-time "
                "ratio >= 0.8; deepest %d\n",
                qPrintable(model), qPrintable(preset), batch, samples.size(), engine,
                samples.size() / std::max(1e-9, engine), near, deep);
    // The view: Sample -> background walk -> scatter replotted.
    BoundaryView view(&doc);
    view.resize(1000, 600);
    view.show();
    view.setSampleCount(n);
    QEventLoop loop;
    QObject::connect(&view, &BoundaryView::samplingFinished, &loop, &QEventLoop::quit);
    t.restart();
    view.startSampling();
    loop.exec();
    view.plot()->replot(QCustomPlot::rpImmediateRefresh);
    const double total = t.elapsed() / 1000.0;
    QElapsedTimer r;
    r.start();
    view.plot()->replot(QCustomPlot::rpImmediateRefresh);
    std::printf("view: %zu points from Sample to drawn in %.2f s; one replot %.1f ms\n",
                view.samples().size(), total, r.nsecsElapsed() / 1e6);
    return 0;
}
