// Colours shared by the charts: one colour per layer (neighbouring layers differ
// strongly) and the heat scale of the NoC heatmap.
#pragma once

#include <QColor>

namespace tilescope::ui {

QColor layerColor(int layer);
// t in [0, 1] -> a perceptually ordered scale (dark blue - teal - yellow, viridis-like).
QColor heatColor(double t);

} // namespace tilescope::ui
