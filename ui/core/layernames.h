// Short display names for layers: ONNX names such as "/layer1/layer1.0/conv1/Conv" are too
// long for an S-T rectangle, so the graph shows "layer1.0/conv1".
#pragma once

#include <QString>

namespace tilescope::ui {

// Drops empty path parts, a trailing op-type part ("Conv", "MaxPool", ...) and a first part
// that only repeats the prefix of the second ("layer1" before "layer1.0").
QString shortLayerName(const QString& name);

// "conv1[0,1]": the rectangle label of docs/method.md §2 (samples first..last).
QString rectLabel(const QString& shortName, int firstSample, int lastSample);

} // namespace tilescope::ui
