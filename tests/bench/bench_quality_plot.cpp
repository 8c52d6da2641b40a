// Best cost over time for SA against the baselines on one workload, as compare runs them
// (LS, LP, DP-LP, then SA seeded with their bests), plus SA on its own (the portfolio
// with its warm-up): prints the curves' end points and writes a PNG (docs/search.md).
// Run: QT_QPA_PLATFORM=offscreen ./bench_quality_plot [MODEL] [--hw edge] [--seed 1]
//      [--seconds 4] [--out search-quality.png]
#include "model/model_loader.h"
#include "search/search.h"

#include <QApplication>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <qcustomplot.h>
#include <string>
#include <vector>

using namespace tilescope;

namespace {

struct Curve {
    std::string name;
    QVector<double> t, best;
    double final = 0;
};

Curve record(const std::string& name, const Network& net, const Hardware& hw, SearchConfig cfg,
             SearchResult* out) {
    Curve c;
    c.name = name;
    std::mutex mu;
    cfg.progressInterval = 0.05;
    auto r = runSearch(net, hw, cfg, [&](const Progress& p) {
        if (p.bestCost <= 0) return; // a phase begins before any tree is costed
        std::lock_guard lock(mu);
        c.t.push_back(p.elapsedSeconds);
        c.best.push_back(p.bestCost);
    });
    if (!r) {
        std::fprintf(stderr, "%s: %s\n", name.c_str(), r.error().message.c_str());
        return c;
    }
    c.final = r->best.cost;
    if (c.t.isEmpty() || c.t.front() > 0) { // the start, before the first report
        c.t.prepend(0);
        c.best.prepend(c.best.isEmpty() ? r->best.cost : std::max(c.best.front(), r->best.cost));
    }
    std::printf("%-16s best %.5g after %.2f s (%lld iterations)\n", name.c_str(), r->best.cost,
                r->elapsedSeconds, r->iterationsRun);
    if (out) *out = std::move(r).value();
    return c;
}

} // namespace

int main(int argc, char** argv) {
    if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    std::string model = std::string(TILESCOPE_SAMPLES) + "/models/resnet50.onnx";
    std::string hwName = "edge", outPath = "search-quality.png";
    double seconds = defaultSearchSeconds();
    std::uint64_t seed = 1;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--hw") && i + 1 < argc)
            hwName = argv[++i];
        else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = std::strtoull(argv[++i], nullptr, 10);
        else if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = std::atof(argv[++i]);
        else if (!std::strcmp(argv[i], "--out") && i + 1 < argc)
            outPath = argv[++i];
        else
            model = argv[i];
    }
    auto net = loadModel(model);
    auto hw = loadHardware(hwName);
    if (!net || !hw) {
        std::fprintf(stderr, "%s\n", (!net ? net.error() : hw.error()).message.c_str());
        return 1;
    }
    SearchConfig base;
    base.seed = seed;
    base.totalBatch = 8;
    base.seconds = seconds;
    base.objective = defaultObjective(*hw);
    base.chains = defaultSearchChains();
    base.threads = 2;

    std::vector<Curve> curves;
    std::vector<SearchResult> done;
    for (SearchMode m : compareModes()) {
        std::vector<const SearchResult*> earlier;
        for (const auto& r : done)
            earlier.push_back(&r);
        SearchResult r;
        curves.push_back(record(m == SearchMode::Set ? "SA (compare)" : toString(m), *net, *hw,
                                compareConfig(base, m, earlier), &r));
        done.push_back(std::move(r));
    }
    SearchConfig alone = base;
    alone.mode = SearchMode::Set;
    curves.push_back(record("SA (anneal)", *net, *hw, alone, nullptr));

    QCustomPlot plot;
    plot.resize(900, 520);
    const QColor colours[] = {QColor(46, 125, 50),  QColor(239, 108, 0),   QColor(106, 27, 154),
                              QColor(21, 101, 192), QColor(120, 144, 156), QColor(198, 40, 40)};
    for (size_t i = 0; i < curves.size(); ++i) {
        QCPGraph* g = plot.addGraph();
        g->setName(QString::fromStdString(curves[i].name));
        g->setLineStyle(QCPGraph::lsStepLeft);
        QPen pen(colours[i % 6], 2);
        if (curves[i].name == "dp-lp") pen.setStyle(Qt::DashLine);
        if (curves[i].name == "SA (anneal)") pen.setStyle(Qt::DotLine);
        g->setPen(pen);
        QVector<double> t = curves[i].t, b = curves[i].best;
        // Hold each curve to the end of the budget, so a fast construction (dp-lp) is a line.
        t.push_back(seconds);
        b.push_back(curves[i].final > 0 ? curves[i].final : b.isEmpty() ? 1 : b.back());
        g->setData(t, b, true);
    }
    plot.yAxis->setScaleType(QCPAxis::stLogarithmic);
    plot.yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    plot.yAxis->setNumberFormat(QStringLiteral("eb"));
    plot.yAxis->setNumberPrecision(0);
    plot.yAxis->setLabel(
        QStringLiteral("best cost E^%1 x D^%2").arg(base.objective.n).arg(base.objective.m));
    plot.xAxis->setLabel(QStringLiteral("seconds since the mode started (2 chains, 2 threads)"));
    plot.xAxis->setRange(0, seconds);
    plot.rescaleAxes(true);
    plot.xAxis->setRange(0, seconds * 1.02);
    plot.yAxis->scaleRange(1.15, plot.yAxis->range().center());
    plot.legend->setVisible(true);
    plot.axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignVCenter | Qt::AlignRight);
    plot.plotLayout()->insertRow(0);
    plot.plotLayout()->addElement(
        0, 0,
        new QCPTextElement(&plot,
                           QStringLiteral("%1 on %2, batch 8, seed %3, %4 s per mode")
                               .arg(QString::fromStdString(net->name.empty() ? model : net->name))
                               .arg(QString::fromStdString(hw->name))
                               .arg(seed)
                               .arg(seconds)));
    if (!plot.savePng(QString::fromStdString(outPath), 900, 520)) {
        std::fprintf(stderr, "cannot write %s\n", outPath.c_str());
        return 1;
    }
    std::printf("wrote %s\n", outPath.c_str());
    return 0;
}
