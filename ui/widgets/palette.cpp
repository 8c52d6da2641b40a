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

QColor efficiencyColor(double ratio) {
    if (!(ratio > 0)) return QColor(189, 189, 189);
    const double t = std::clamp(std::log2(std::max(1.0, ratio)) / 2.0, 0.0, 1.0);
    // green (1) -> amber (2) -> red (4)
    const QColor a(46, 125, 50), b(249, 168, 37), c(198, 40, 40);
    const QColor& lo = t < 0.5 ? a : b;
    const QColor& hi = t < 0.5 ? b : c;
    const double u = t < 0.5 ? t * 2 : (t - 0.5) * 2;
    return QColor(int(lo.red() + (hi.red() - lo.red()) * u),
                  int(lo.green() + (hi.green() - lo.green()) * u),
                  int(lo.blue() + (hi.blue() - lo.blue()) * u));
}

QColor programmingColor(double share) {
    if (share < 0) return QColor(189, 189, 189);
    const double t = std::clamp(share, 0.0, 1.0);
    const QColor lo(187, 222, 251), hi(136, 14, 79); // pale blue -> deep magenta
    return QColor(int(lo.red() + (hi.red() - lo.red()) * t),
                  int(lo.green() + (hi.green() - lo.green()) * t),
                  int(lo.blue() + (hi.blue() - lo.blue()) * t));
}

} // namespace tilescope::ui
