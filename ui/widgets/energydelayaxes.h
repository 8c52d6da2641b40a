// The energy-versus-delay axes every scatter of schedules shares (Trade-off tab, DRAM
// boundary view, sweep viewer): both logarithmic, tick labels in units (unitticker.h);
// and the marker of the current schedule on them.
#pragma once

#include "widgets/unitticker.h"

#include <QCoreApplication>
#include <qcustomplot.h>

namespace tilescope::ui {

inline void setEnergyDelayAxes(QCustomPlot* plot, int tickCount) {
    // Labels carry their units ("20 mJ", "2.5 M cycles"), as every figure does elsewhere.
    setLogUnitAxis(plot->xAxis, LogUnitTicker::Quantity::Cycles, tickCount);
    setLogUnitAxis(plot->yAxis, LogUnitTicker::Quantity::Energy, tickCount);
    plot->xAxis->setLabel(QCoreApplication::translate("EnergyDelayAxes", "delay"));
    plot->yAxis->setLabel(QCoreApplication::translate("EnergyDelayAxes", "energy"));
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
