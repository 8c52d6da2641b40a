// The units policy (engine/util/units.h) as QStrings for the views: one formatter for
// energy, time (cycles and wall time at the template clock) and bytes, shared with the
// HTML report and the CLI tables.
#pragma once

#include "util/units.h"

#include <QString>

namespace tilescope::ui {

// `decimals` is kept for old callers; the significant digits are the policy's.
inline QString bytesText(double b, int /*decimals*/ = 2) {
    return QString::fromStdString(formatBytes(b));
}
inline QString energyText(PicoJoules e, bool sign = false) {
    return QString::fromStdString(formatEnergy(e, sign));
}
inline QString cyclesText(Cycles c, bool sign = false) {
    return QString::fromStdString(formatCycles(c, sign));
}
inline QString durationText(Cycles c, double clockGHz) {
    return QString::fromStdString(formatDuration(c, clockGHz));
}
inline QString timeText(Cycles c, double clockGHz, bool sign = false) {
    return QString::fromStdString(formatTime(c, clockGHz, sign));
}
inline QString engText(double v, const char* unit = "", int significant = 4) {
    return QString::fromStdString(formatEngineering(v, unit, significant));
}
// A unitless figure that spans many decades (an objective E^n x D^m): four significant
// digits always, "5.800e+26", as every other figure has.
inline QString objectiveText(double v) {
    return QString::number(v, 'e', 3);
}

// Temporal blocking's totals (Evaluation::blockedLeaves, blockingDramBytes) as the metrics
// panel, the Layers summary and the HTML report show them: "4, +1.2 MB DRAM"; empty when
// every leaf's slice fits.
inline QString blockedLeavesText(int leaves, Bytes dram) {
    if (leaves <= 0) return {};
    return QStringLiteral("%1, +%2 DRAM").arg(leaves).arg(bytesText(dram));
}

struct EnergyScale {
    double factor; // pJ -> the shown unit
    QString unit;  // "mJ"
};
inline EnergyScale energyScale(PicoJoules maxValue) {
    const UnitScale s = tilescope::energyScale(maxValue);
    return {s.factor, QString::fromStdString(s.unit)};
}

} // namespace tilescope::ui
