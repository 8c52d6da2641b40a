#include "widgets/boundaryview.h"

#include "core/backgroundjob.h"
#include "core/bytestext.h"
#include "core/document.h"
#include "widgets/axisfit.h"
#include "widgets/energydelayaxes.h"
#include "widgets/palette.h"

#include <QElapsedTimer>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <qcustomplot.h>

namespace tilescope::ui {

namespace {

// DRAM-time ratio bands, each drawn as one graph in its own colour.
constexpr double kBandEdges[] = {0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 1.0001};
constexpr int kBands = 6;

int bandOf(double ratio) {
    for (int b = kBands - 1; b >= 0; --b)
        if (ratio >= kBandEdges[b]) return b;
    return 0;
}

} // namespace

BoundaryView::BoundaryView(Document* doc, QWidget* parent)
    : QWidget(parent), m_doc(doc), m_plot(new QCustomPlot(this)), m_count(new QSpinBox(this)),
      m_start(new QPushButton(tr("Sample"), this)), m_cancel(new QPushButton(tr("Cancel"), this)),
      m_progress(new QProgressBar(this)), m_status(new QLabel(this)), m_poll(new QTimer(this)),
      m_job(std::make_unique<BackgroundJob>(this)), m_done(std::make_shared<std::atomic<int>>(0)) {
    setObjectName(QStringLiteral("boundaryView"));
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(2, 2, 2, 2);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Random trees:"), this));
    m_count->setObjectName(QStringLiteral("boundaryCount"));
    m_count->setRange(10, 100000);
    m_count->setSingleStep(500);
    m_count->setValue(2000);
    bar->addWidget(m_count);
    m_start->setObjectName(QStringLiteral("boundaryStart"));
    m_start->setToolTip(tr("Sample random valid trees of this model, hardware and batch (the "
                           "random search's walk) in the background"));
    m_cancel->setObjectName(QStringLiteral("boundaryCancel"));
    m_cancel->setEnabled(false);
    bar->addWidget(m_start);
    bar->addWidget(m_cancel);
    m_progress->setObjectName(QStringLiteral("boundaryProgress"));
    m_progress->setRange(0, 100);
    m_progress->setValue(0);
    m_progress->setTextVisible(true);
    bar->addWidget(m_progress, 1);
    lay->addLayout(bar);
    m_status->setObjectName(QStringLiteral("boundaryStatus"));
    m_status->setWordWrap(true);
    lay->addWidget(m_status);
    lay->addWidget(m_plot, 1);
    m_plot->setObjectName(QStringLiteral("boundaryPlot"));
    m_plot->setMinimumHeight(160);
    m_plot->setMouseTracking(true);
    setEnergyDelayAxes(m_plot, 4);
    m_boundary = m_plot->addGraph();
    m_boundary->setName(tr("DRAM boundary"));
    m_boundary->setPen(QPen(QColor(60, 60, 60), 1.5, Qt::DashLine));
    m_boundary->setSelectable(QCP::stNone);
    for (int b = 0; b < kBands; ++b) {
        QCPGraph* g = m_plot->addGraph();
        g->setLineStyle(QCPGraph::lsNone);
        const QColor c = heatColor((b + 0.5) / kBands);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c, 5));
        g->setName(
            b + 1 < kBands
                ? tr("ratio %1-%2").arg(kBandEdges[b], 0, 'f', 1).arg(kBandEdges[b + 1], 0, 'f', 1)
                : tr("ratio >= %1").arg(kBandEdges[b], 0, 'f', 1));
        g->setSelectable(QCP::stNone);
        m_bins.push_back(g);
    }
    m_path = new QCPCurve(m_plot->xAxis, m_plot->yAxis);
    m_path->setName(tr("search best"));
    m_path->setPen(QPen(QColor(21, 101, 192), 2));
    m_path->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QColor(21, 101, 192), 5));
    m_path->setSelectable(QCP::stNone);
    m_current = addCurrentMarker(m_plot);
    // The legend to the right of the plot, compact: it never covers the points.
    m_plot->legend->setVisible(true);
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.75);
    m_plot->legend->setFont(small);
    m_plot->legend->setRowSpacing(-2);
    m_plot->legend->setIconSize(14, 8);
    m_plot->legend->setBorderPen(Qt::NoPen);
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    m_plot->axisRect()->insetLayout()->simplify();
    auto* side = new QCPLayoutGrid;
    m_plot->plotLayout()->addElement(0, 1, side);
    side->addElement(0, 0, m_plot->legend);
    side->setRowStretchFactor(0, 0.001);
    auto* title =
        new QCPTextElement(m_plot, tr("DRAM-time ratio\n= DRAM bytes / BW / delay"), small);
    side->insertRow(0);
    side->addElement(0, 0, title);
    side->addElement(2, 0, new QCPLayoutElement(m_plot));
    m_plot->plotLayout()->setColumnStretchFactor(1, 0.001);

    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    fitAxisTicks(m_plot);

    connect(m_start, &QPushButton::clicked, this, &BoundaryView::startSampling);
    connect(m_cancel, &QPushButton::clicked, this, &BoundaryView::cancelSampling);
    m_poll->setInterval(100);
    connect(m_poll, &QTimer::timeout, this, [this] {
        const int n = std::max(1, m_count->value());
        m_progress->setValue(int(100.0 * m_done->load() / n));
    });
    connect(m_plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) { hover(e->pos()); });
    connect(m_plot, &QCustomPlot::mouseRelease, this, [this](QMouseEvent* e) {
        if (e->button() != Qt::LeftButton) return;
        const int i = sampleAt(e->pos());
        if (i >= 0) activate(i);
    });
    auto current = [this] {
        m_current->data()->clear();
        const auto e = m_doc->evaluation();
        if (e && e->valid && e->energy.total() > 0 && e->delay > 0)
            m_current->addData(e->delay, e->energy.total());
        if (!m_samples.empty()) rescale();
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    };
    connect(doc, &Document::treeChanged, this, current);
    connect(doc, &Document::documentReset, this, [this, current] {
        // New model, hardware or batch: the samples describe other inputs; a running walk
        // is stopped and its result dropped.
        if (m_running) {
            m_stop.request_stop();
            m_job->drop();
            m_running = false;
            m_poll->stop();
            m_start->setEnabled(true);
            m_cancel->setEnabled(false);
            m_progress->setValue(0);
        }
        m_samples.clear();
        clearPath();
        rebuild();
        current();
        m_status->setText(m_doc->hasModel() ? tr("Sample random trees to see the DRAM boundary.")
                                            : tr("Open a model first."));
    });
    m_status->setText(tr("Open a model first."));
    rebuild();
}

BoundaryView::~BoundaryView() {
    m_stop.request_stop();
}

void BoundaryView::setSampleCount(int n) {
    m_count->setValue(n);
}

bool BoundaryView::sampling() const {
    return m_running;
}

void BoundaryView::startSampling() {
    if (!m_doc->hasModel() || m_running) return;
    m_stop = std::stop_source();
    m_done->store(0);
    m_running = true;
    m_start->setEnabled(false);
    m_cancel->setEnabled(true);
    m_progress->setValue(0);
    m_poll->start();
    m_status->setText(tr("Sampling %1 random valid trees...").arg(m_count->value()));
    SampleConfig c;
    c.count = m_count->value();
    c.totalBatch = m_doc->batch();
    c.objective = m_doc->objective();
    c.layouts = m_doc->layouts();
    c.seed = 1;
    auto net = m_doc->network();
    auto hw = m_doc->hardware();
    auto done = m_done;
    auto stop = m_stop.get_token();
    m_job->run(
        m_doc->revision(),
        [net, hw, c, done, stop] {
            QElapsedTimer t;
            t.start();
            auto s = sampleTrees(
                *net, *hw, c, [done](int n, int) { done->store(n); }, stop);
            return std::make_pair(std::move(s), t.elapsed() / 1000.0);
        },
        [this](std::pair<std::vector<TreeSample>, double> r, quint64) {
            m_running = false;
            m_poll->stop();
            m_start->setEnabled(true);
            m_cancel->setEnabled(false);
            m_sampleSeconds = r.second;
            m_progress->setValue(100);
            showSamples(std::move(r.first));
            emit samplingFinished();
        });
}

void BoundaryView::cancelSampling() {
    if (!m_running) return;
    // The walk stops at its next tree and returns what it has; those are shown.
    m_stop.request_stop();
    m_status->setText(tr("Cancelling..."));
}

void BoundaryView::showSamples(std::vector<TreeSample> samples) {
    m_samples = std::move(samples);
    int near = 0;
    for (const TreeSample& s : m_samples)
        near += s.dramTimeRatio >= 0.8;
    m_status->setText(
        tr("%1 trees in %2 s; %3 within 20% of the DRAM boundary. Click a point to load its "
           "tree (undoable); hover for its depth.")
            .arg(m_samples.size())
            .arg(m_sampleSeconds, 0, 'f', 1)
            .arg(near));
    rebuild();
    rescale();
}

void BoundaryView::rebuild() {
    for (QCPGraph* g : m_bins)
        g->data()->clear();
    m_boundary->data()->clear();
    for (const TreeSample& s : m_samples)
        if (s.delay > 0 && s.energy > 0)
            m_bins[size_t(bandOf(s.dramTimeRatio))]->addData(s.delay, s.energy);
    // The boundary line: where a tree moving b DRAM bytes would sit if DRAM alone set its
    // delay (b / bandwidth), at the energy of the samples' median non-DRAM part plus the
    // DRAM energy of b bytes.
    if (!m_samples.empty() && m_doc->hasModel()) {
        std::vector<double> rest;
        double lo = 1e300, hi = 0, pjPerByte = 0;
        for (const TreeSample& s : m_samples) {
            rest.push_back(s.energy - s.dramEnergy);
            lo = std::min(lo, s.dramBytes);
            hi = std::max(hi, s.dramBytes);
            if (s.dramBytes > 0) pjPerByte = s.dramEnergy / s.dramBytes;
        }
        std::nth_element(rest.begin(), rest.begin() + long(rest.size() / 2), rest.end());
        const double e0 = rest[rest.size() / 2];
        const Hardware& hw = *m_doc->hardware();
        for (int i = 0; i <= 40 && hi > 0; ++i) {
            const double b =
                std::max(1.0, lo / 1.5) * std::pow(hi * 1.5 / std::max(1.0, lo / 1.5), i / 40.0);
            m_boundary->addData(dramBoundaryDelay(hw, b), e0 + b * pjPerByte);
        }
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void BoundaryView::rescale() {
    bool any = false;
    QCPRange kx, ky;
    // The current schedule's marker too: it must never sit outside the plotted range.
    std::vector<QCPGraph*> graphs(m_bins.begin(), m_bins.end());
    graphs.push_back(m_current);
    for (QCPGraph* g : graphs) {
        bool found = false;
        const QCPRange k = g->getKeyRange(found, QCP::sdPositive);
        if (!found) continue;
        const QCPRange v = g->getValueRange(found, QCP::sdPositive);
        kx = any ? QCPRange(std::min(kx.lower, k.lower), std::max(kx.upper, k.upper)) : k;
        ky = any ? QCPRange(std::min(ky.lower, v.lower), std::max(ky.upper, v.upper)) : v;
        any = true;
    }
    if (!any) return;
    m_plot->xAxis->setRange(kx.lower / 1.5, kx.upper * 1.5);
    m_plot->yAxis->setRange(ky.lower / 1.3, ky.upper * 1.3);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

int BoundaryView::sampleAt(const QPoint& pos) const {
    int best = -1;
    double bestD = 8 * 8; // pixels squared
    for (size_t i = 0; i < m_samples.size(); ++i) {
        const TreeSample& s = m_samples[i];
        if (!(s.delay > 0 && s.energy > 0)) continue;
        const double dx = m_plot->xAxis->coordToPixel(s.delay) - pos.x();
        const double dy = m_plot->yAxis->coordToPixel(s.energy) - pos.y();
        if (dx * dx + dy * dy < bestD) bestD = dx * dx + dy * dy, best = int(i);
    }
    return best;
}

void BoundaryView::hover(const QPoint& pos) {
    const int i = sampleAt(pos);
    if (i < 0) {
        QToolTip::hideText();
        return;
    }
    const TreeSample& s = m_samples[size_t(i)];
    QToolTip::showText(m_plot->mapToGlobal(pos),
                       tr("tree %1: depth %2\nenergy %3, delay %4\nDRAM %5, DRAM-time ratio "
                          "%6\nclick to load it (undoable)")
                           .arg(i + 1)
                           .arg(s.depth)
                           .arg(energyText(s.energy), cyclesText(s.delay), bytesText(s.dramBytes))
                           .arg(s.dramTimeRatio, 0, 'f', 2),
                       m_plot);
}

void BoundaryView::activate(int i) {
    if (i < 0 || i >= int(m_samples.size())) return;
    emit adoptRequested(m_samples[size_t(i)].tree, tr("Load random tree %1").arg(i + 1));
}

void BoundaryView::addSearchPoint(double energyPj, double delayCycles) {
    if (!(energyPj > 0 && delayCycles > 0)) return;
    // Only changes of the best extend the path.
    if (m_pathCount > 0) {
        const auto last = m_path->data()->at(m_pathCount - 1);
        if (last->key == delayCycles && last->value == energyPj) return;
    }
    m_path->addData(m_pathCount++, delayCycles, energyPj);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void BoundaryView::clearPath() {
    m_path->data()->clear();
    m_pathCount = 0;
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

int BoundaryView::pathPoints() const {
    return m_pathCount;
}

} // namespace tilescope::ui
