// Tick labels that never run into each other: after every layout each
// axis of a plot gets the largest tick count (at most its preferred one) whose labels, in
// the axis's own font and number format, fit side by side (or stacked) with a gap.
#pragma once

class QCPAxis;
class QCustomPlot;

namespace tilescope::ui {

// Fits every axis of every axis rect of `plot` at each replot. Call it once the axes are
// set up: the tick count each has then is its preferred (largest) count.
void fitAxisTicks(QCustomPlot* plot);
// The axis's current tick labels as drawn: does any pair of neighbours overlap, or come
// closer than `gapPx`? (Tests and the fitting itself.)
bool tickLabelsCrowded(const QCPAxis* axis, int gapPx = 6);

} // namespace tilescope::ui
