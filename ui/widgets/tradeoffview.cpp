#include "widgets/tradeoffview.h"

#include "util/units.h"
#include "widgets/axisfit.h"
#include "widgets/energydelayaxes.h"

#include <QVBoxLayout>
#include <qcustomplot.h>

namespace tilescope::ui {

TradeoffView::TradeoffView(QWidget* parent) : QWidget(parent), m_plot(new QCustomPlot(this)) {
    setObjectName(QStringLiteral("tradeoff"));
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(2, 2, 2, 2);
    lay->addWidget(m_plot);
    m_plot->setMinimumHeight(120);
    setEnergyDelayAxes(m_plot, 4);
    m_history = m_plot->addGraph();
    m_history->setLineStyle(QCPGraph::lsNone);
    m_history->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(160, 160, 160), 3));
    m_history->setName(tr("search history"));
    m_history->setSelectable(QCP::stNone);
    m_marks = m_plot->addGraph();
    m_marks->setLineStyle(QCPGraph::lsNone);
    m_marks->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond,
                                             QPen(QColor(21, 101, 192), 1.5),
                                             QColor(21, 101, 192, 120), 10));
    m_marks->setName(tr("click to adopt"));
    m_marks->setSelectable(QCP::stSingleData);
    m_current = addCurrentMarker(m_plot);
    m_plot->legend->setVisible(true);
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    m_plot->legend->setFont(small);
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    m_plot->setInteractions(QCP::iSelectPlottables | QCP::iRangeDrag | QCP::iRangeZoom);
    fitAxisTicks(m_plot);
    m_plot->setToolTip(tr("Energy against delay of every schedule seen; click a blue diamond to "
                          "adopt its tree (undoable)"));
    connect(m_plot, &QCustomPlot::plottableClick, this,
            [this](QCPAbstractPlottable* p, int index, QMouseEvent*) {
                if (p != m_marks) return;
                // The graph's data are sorted by delay: find the candidate by its point.
                const auto it = m_marks->data()->at(index);
                for (int i = 0; i < int(m_candidates.size()); ++i)
                    if (m_candidates[size_t(i)].delay == it->key &&
                        m_candidates[size_t(i)].energy == it->value) {
                        activate(i);
                        return;
                    }
            });
}

void TradeoffView::clear() {
    m_candidates.clear();
    m_history->data()->clear();
    m_current->data()->clear();
    rebuild();
}

void TradeoffView::clearHistory() {
    m_history->data()->clear();
    rebuild();
}

int TradeoffView::historyCount() const {
    return m_history->dataCount();
}

void TradeoffView::addHistory(double energyPj, double delayCycles) {
    if (!(energyPj > 0 && delayCycles > 0)) return;
    m_history->addData(delayCycles, energyPj);
    rebuild();
}

void TradeoffView::setCandidate(const QString& label, const RATree& tree, double energyPj,
                                double delayCycles) {
    if (!(energyPj > 0 && delayCycles > 0)) return;
    for (Candidate& c : m_candidates)
        if (c.label == label) {
            c = {label, tree, energyPj, delayCycles};
            rebuild();
            return;
        }
    m_candidates.push_back({label, tree, energyPj, delayCycles});
    rebuild();
}

void TradeoffView::setCurrent(double energyPj, double delayCycles, bool valid) {
    m_current->data()->clear();
    if (valid && energyPj > 0 && delayCycles > 0) m_current->addData(delayCycles, energyPj);
    rebuild();
}

void TradeoffView::activate(int i) {
    if (i < 0 || i >= int(m_candidates.size())) return;
    emit adoptRequested(m_candidates[size_t(i)].tree,
                        tr("Adopt %1").arg(m_candidates[size_t(i)].label));
}

void TradeoffView::rebuild() {
    m_marks->data()->clear();
    // Labels beside the markers.
    m_plot->clearItems();
    for (const Candidate& c : m_candidates) {
        m_marks->addData(c.delay, c.energy);
        auto* t = new QCPItemText(m_plot);
        t->position->setCoords(c.delay, c.energy);
        t->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        t->setPadding(QMargins(6, 0, 0, 2));
        t->setText(c.label);
        QFont f = font();
        f.setPointSizeF(f.pointSizeF() * 0.8);
        t->setFont(f);
        t->setSelectable(false);
    }
    bool any = false;
    QCPRange kx, ky;
    for (QCPGraph* g : {m_history, m_marks, m_current}) {
        bool found = false;
        const QCPRange k = g->getKeyRange(found, QCP::sdPositive);
        if (!found) continue;
        const QCPRange v = g->getValueRange(found, QCP::sdPositive);
        if (!found) continue;
        kx = any ? QCPRange(std::min(kx.lower, k.lower), std::max(kx.upper, k.upper)) : k;
        ky = any ? QCPRange(std::min(ky.lower, v.lower), std::max(ky.upper, v.upper)) : v;
        any = true;
    }
    if (any) {
        m_plot->xAxis->setRange(kx.lower / 1.3, kx.upper * 1.3);
        m_plot->yAxis->setRange(ky.lower / 1.3, ky.upper * 1.3);
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace tilescope::ui
