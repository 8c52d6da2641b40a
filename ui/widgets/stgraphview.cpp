#include "widgets/stgraphview.h"

#include "core/document.h"
#include "core/layernames.h"
#include "core/selectionstate.h"
#include "widgets/plotexport.h"
#include "widgets/stgraphplottable.h"

#include <QKeyEvent>
#include <QToolTip>
#include <QVBoxLayout>
#include <QtConcurrent>
#include <qcustomplot.h>

namespace tilescope::ui {

StGraphView::StGraphView(Document* doc, SelectionState* selection, QWidget* parent)
    : QWidget(parent), m_doc(doc), m_selection(selection), m_plot(new QCustomPlot(this)) {
    setObjectName(QStringLiteral("stGraph"));
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    lay->addWidget(m_plot);
    m_plot->setObjectName(QStringLiteral("stGraphPlot"));
    m_plot->setFocusPolicy(Qt::StrongFocus);
    m_plot->setMouseTracking(true);
    m_plot->setNoAntialiasingOnDrag(true);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->axisRect()->setRangeDrag(Qt::Horizontal | Qt::Vertical);
    m_plot->axisRect()->setRangeZoom(Qt::Horizontal);
    m_plot->xAxis->setLabel(tr("time (cycles)"));
    m_plot->xAxis->setNumberFormat(QStringLiteral("gb"));
    m_plot->yAxis->setLabel(tr("tile"));
    m_plot->yAxis->setRangeReversed(true); // tile 0 on top, like a listing
    m_plot->yAxis->grid()->setVisible(false);
    m_rects = new StGraphPlottable(m_plot->xAxis, m_plot->yAxis);
    m_plot->installEventFilter(this);

    connect(m_plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) { hover(e->pos()); });
    connect(m_plot, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) { m_pressPos = e->pos(); });
    connect(m_plot, &QCustomPlot::mouseRelease, this, [this](QMouseEvent* e) {
        if ((e->pos() - m_pressPos).manhattanLength() > 4 || e->button() != Qt::LeftButton) return;
        const int i = m_rects->rectAt(e->pos());
        if (i < 0 || !m_rects->layout()) {
            m_selection->clear();
            return;
        }
        const int node = m_rects->layout()->rects()[size_t(i)].node;
        if (node >= 0 && node < m_tree.size())
            m_selection->select(node, QString::fromStdString(m_tree.pathOf(node)));
    });
    connect(m_doc, &Document::documentReset, this, [this] { m_rescalePending = true; });
    connect(m_doc, &Document::treeChanged, this, [this] { documentChanged(false); });
    connect(m_selection, &SelectionState::changed, this, &StGraphView::selectionChanged);
    documentChanged(true);
}

bool StGraphView::hasLayout() const { return m_rects->layout() != nullptr; }

void StGraphView::documentChanged(bool reset) {
    if (reset) m_rescalePending = true;
    if (!m_doc->hasModel()) return;
    // Laying out tens of thousands of rectangles (tile runs, sorting) happens on the
    // thread pool; the revision drops a layout overtaken by a newer edit.
    const quint64 rev = m_doc->revision();
    m_pendingRevision = rev;
    auto eval = m_doc->evaluation();
    const int tiles = m_doc->hardware()->tiles();
    QStringList names;
    for (const Layer& l : m_doc->network()->layers) names << shortLayerName(QString::fromStdString(l.name));
    RATree tree = m_doc->tree();
    QtConcurrent::run([eval, tiles, names] { return StLayout::build(eval, tiles, names); })
        .then(this, [this, rev, tree](std::shared_ptr<const StLayout> layout) {
            if (rev != m_pendingRevision) return;
            showLayout(std::move(layout), tree, m_rescalePending);
            m_rescalePending = false;
        });
}

void StGraphView::showLayout(std::shared_ptr<const StLayout> layout, const RATree& tree, bool rescale) {
    m_tree = tree;
    const int tiles = layout->tiles();
    m_rects->setLayout(std::move(layout));
    if (tiles <= 40) {
        auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
        ticker->setTickStep(tiles <= 20 ? 1 : 2);
        ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
        m_plot->yAxis->setTicker(ticker);
    } else {
        m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
    }
    if (rescale) resetZoom();
    selectionChanged(m_selection->node());
    emit layoutReady();
}

void StGraphView::resetZoom() {
    bool found = false;
    const QCPRange k = m_rects->getKeyRange(found);
    if (found) m_plot->xAxis->setRange(k.lower, k.upper + std::max(1.0, k.size() * 0.01));
    const QCPRange v = m_rects->getValueRange(found);
    if (found) m_plot->yAxis->setRange(v);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void StGraphView::selectionChanged(int node) {
    std::vector<bool> leaves;
    if (node >= 0 && node < m_tree.size() && !m_selection->path().isEmpty() &&
        m_tree.nodeAtPath(m_selection->path().toStdString()) == node) {
        leaves.assign(size_t(m_tree.size()), false);
        for (int layer : m_tree.layersUnder(node)) {
            const int leaf = m_tree.leafOf(layer);
            if (leaf >= 0) leaves[size_t(leaf)] = true;
        }
    }
    m_rects->setHighlight(std::move(leaves));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void StGraphView::hover(const QPoint& pos) {
    const int i = m_rects->rectAt(pos);
    if (i < 0) {
        QToolTip::hideText();
        return;
    }
    const auto& layout = *m_rects->layout();
    const StRect& r = layout.rects()[size_t(i)];
    const BusyInterval& iv = layout.evaluation().intervals[size_t(r.interval)];
    const auto& net = m_doc->network();
    const QString layer = net && r.layer >= 0 && r.layer < int(net->layers.size())
                              ? QString::fromStdString(net->layers[size_t(r.layer)].name)
                              : QString::number(r.layer);
    QStringList tiles;
    for (auto [a, b] : StLayout::tileRuns(layout.evaluation().tileOrder, iv.tileBegin, iv.tileCount))
        tiles << (a == b ? QString::number(a) : QStringLiteral("%1-%2").arg(a).arg(b));
    const QString text = tr("<b>%1</b><br>samples %2..%3<br>cycles %4 - %5 (%6)<br>tiles %7<br>energy %8 pJ")
                             .arg(layer.toHtmlEscaped())
                             .arg(iv.firstSample)
                             .arg(iv.lastSample)
                             .arg(iv.start, 0, 'f', 0)
                             .arg(iv.end, 0, 'f', 0)
                             .arg(iv.end - iv.start, 0, 'f', 0)
                             .arg(tiles.join(QStringLiteral(", ")))
                             .arg(iv.energy, 0, 'g', 4);
    QToolTip::showText(m_plot->mapToGlobal(pos), text, m_plot);
}

void StGraphView::zoomBy(double factor) {
    m_plot->xAxis->scaleRange(factor, m_plot->xAxis->range().center());
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void StGraphView::panBy(double fraction) {
    const double d = m_plot->xAxis->range().size() * fraction;
    m_plot->xAxis->moveRange(d);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

bool StGraphView::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_plot && event->type() == QEvent::KeyPress) {
        auto* k = static_cast<QKeyEvent*>(event);
        switch (k->key()) {
        case Qt::Key_Plus:
        case Qt::Key_Equal: zoomBy(0.7); return true;
        case Qt::Key_Minus: zoomBy(1 / 0.7); return true;
        case Qt::Key_Left: panBy(-0.15); return true;
        case Qt::Key_Right: panBy(0.15); return true;
        case Qt::Key_Home:
        case Qt::Key_0: resetZoom(); return true;
        default: break;
        }
    }
    return QWidget::eventFilter(watched, event);
}

QString StGraphView::exportTo(const QString& path) { return exportPlot(m_plot, path); }

} // namespace tilescope::ui
