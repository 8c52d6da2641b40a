#include "core/stmapping.h"

#include <algorithm>
#include <cmath>

namespace tilescope::ui {

StMapping::StMapping(double cycleLo, double cycleHi, double tileLo, double tileHi,
                     const QRectF& pixels, bool tilesDown)
    : m_c0(cycleLo), m_c1(cycleHi), m_t0(tileLo), m_t1(tileHi), m_pixels(pixels),
      m_down(tilesDown) {
    // A degenerate range would divide by zero; one cycle / one tile is the smallest view.
    if (!(m_c1 > m_c0)) m_c1 = m_c0 + 1;
    if (!(m_t1 > m_t0)) m_t1 = m_t0 + 1;
}

double StMapping::cycleToX(double c) const {
    return m_pixels.left() + (c - m_c0) / (m_c1 - m_c0) * m_pixels.width();
}

double StMapping::xToCycle(double x) const {
    return m_c0 + (x - m_pixels.left()) / m_pixels.width() * (m_c1 - m_c0);
}

double StMapping::tileToY(double t) const {
    const double f = (t - m_t0) / (m_t1 - m_t0);
    return m_down ? m_pixels.top() + f * m_pixels.height()
                  : m_pixels.bottom() - f * m_pixels.height();
}

double StMapping::yToTile(double y) const {
    const double f = m_down ? (y - m_pixels.top()) / m_pixels.height()
                            : (m_pixels.bottom() - y) / m_pixels.height();
    return m_t0 + f * (m_t1 - m_t0);
}

int StMapping::tileAtY(double y, int tileCount) const {
    const double t = std::floor(yToTile(y) + 0.5);
    if (t < 0 || t >= tileCount) return -1;
    return int(t);
}

QRectF StMapping::rectFor(double c0, double c1, int t0, int t1, double inset) const {
    const double xa = cycleToX(c0), xb = cycleToX(c1);
    const double ya = tileToY(t0 - 0.5 + inset), yb = tileToY(t1 + 0.5 - inset);
    return QRectF(QPointF(std::min(xa, xb), std::min(ya, yb)),
                  QPointF(std::max(xa, xb), std::max(ya, yb)));
}

double StMapping::pixelsPerCycle() const {
    return m_pixels.width() / (m_c1 - m_c0);
}
double StMapping::pixelsPerTile() const {
    return m_pixels.height() / (m_t1 - m_t0);
}

} // namespace tilescope::ui
