// Short display names for layers: ONNX names such as "/layer1/layer1.0/conv1/Conv" are too
// long for an S-T rectangle, so the graph shows "layer1.0/conv1".
#pragma once

#include "model/network.h"

#include <QString>
#include <QStringList>

namespace tilescope::ui {

// Drops empty path parts, a trailing op-type part ("Conv", "MaxPool", ...) and parts that
// only repeat the start of the next ("layer1" before "layer1.0"), keeps the last two.
QString shortLayerName(const QString& name);
// The names of a whole network: as shortLayerName, but names that would collide ("attn/q"
// in every transformer block) keep more leading parts until they are unique
// ("layers.3/attn/q"). Whole names that are equal stay equal.
QStringList shortLayerNames(const QStringList& names);

// shortLayerNames of every layer of `net`, in layer order.
QStringList displayLayerNames(const tilescope::Network& net);

// "conv1[0,1]": the rectangle label of docs/method.md §2 (samples first..last).
QString rectLabel(const QString& shortName, int firstSample, int lastSample);

} // namespace tilescope::ui
