// The energy-versus-delay axes every scatter of schedules shares (Trade-off tab, DRAM
// boundary view, sweep viewer): both logarithmic, powers of ten, labelled with their units;
// and the marker of the current schedule on them.
#pragma once

#include <QCoreApplication>
#include <qcustomplot.h>

namespace tilescope::ui {

inline void setEnergyDelayAxes(QCustomPlot* plot, int tickCount) {
    for (QCPAxis* ax : {plot->xAxis, plot->yAxis}) {
        ax->setScaleType(QCPAxis::stLogarithmic);
        auto t = QSharedPointer<QCPAxisTickerLog>::create();
        t->setSubTickCount(8);
        t->setTickCount(tickCount);
        ax->setTicker(t);
        ax->setNumberFormat(QStringLiteral("eb"));
        ax->setNumberPrecision(0);
    }
    plot->xAxis->setLabel(QCoreApplication::translate("EnergyDelayAxes", "delay (cycles)"));
    plot->yAxis->setLabel(QCoreApplication::translate("EnergyDelayAxes", "energy (pJ)"));
}

// The current schedule on such a scatter: a red ring, not selectable.
inline QCPGraph* addCurrentMarker(QCustomPlot* plot) {
    QCPGraph* g = plot->addGraph();
    g->setLineStyle(QCPGraph::lsNone);
    g->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(QColor(198, 40, 40), 2), Qt::NoBrush, 12));
    g->setName(QCoreApplication::translate("EnergyDelayAxes", "current"));
    g->setSelectable(QCP::stNone);
    return g;
}

} // namespace tilescope::ui
