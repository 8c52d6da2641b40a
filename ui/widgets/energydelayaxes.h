// The energy-versus-delay axes every scatter of schedules shares (Trade-off tab, DRAM
// boundary view, sweep viewer): both logarithmic, powers of ten, labelled with their units.
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

} // namespace tilescope::ui
