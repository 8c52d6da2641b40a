// Colours shared by the charts: one colour per layer (neighbouring layers differ
// strongly) and the heat scale of the NoC heatmap.
#pragma once

#include <QColor>

namespace tilescope::ui {

QColor layerColor(int layer);
// t in [0, 1] -> a perceptually ordered scale (dark blue - teal - yellow, viridis-like).
QColor heatColor(double t);
// Achieved / bound traffic of a leaf (engine/report/layers.h): green at 1 (at the bound)
// through amber to red at 4 and above, on a log scale; grey when the leaf has no bound.
QColor efficiencyColor(double ratio);
// Share of a compute-in-memory leaf's time spent writing its crossbars: pale blue at 0
// through purple to deep magenta at 1; grey when the leaf has no crossbar weights (< 0).
QColor programmingColor(double share);

} // namespace tilescope::ui
