#include "widgets/palette.h"

#include <algorithm>
#include <cmath>

namespace tilescope::ui {

QColor layerColor(int layer) {
    if (layer < 0) return QColor(160, 160, 160);
    // Golden-ratio hue steps spread consecutive layers around the wheel; two lightness
    // levels alternate so that layers 1/phi apart still differ.
    const double h = std::fmod(0.13 + layer * 0.61803398875, 1.0);
    return QColor::fromHslF(float(h), 0.55f, (layer % 2) ? 0.62f : 0.52f);
}

QColor heatColor(double t) {
    t = std::clamp(t, 0.0, 1.0);
    // Anchor points of viridis, linearly interpolated.
    static const double pts[][3] = {
        {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
    const double x = t * 4;
    const int i = std::min(3, int(x));
    const double f = x - i;
    return QColor(int(pts[i][0] + f * (pts[i + 1][0] - pts[i][0])),
                  int(pts[i][1] + f * (pts[i + 1][1] - pts[i][1])),
                  int(pts[i][2] + f * (pts[i + 1][2] - pts[i][2])));
}

} // namespace tilescope::ui
