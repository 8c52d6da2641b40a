// The coordinate mapping of the S-T graph as a plain value: cycles <-> x pixels and
// tile id <-> y pixels. The plottable draws with it and the hover / click hit-tests invert
// it, so both agree by construction; tests check it without any widget.
#pragma once

#include <QRectF>

namespace tilescope::ui {

class StMapping {
  public:
    StMapping() = default;
    // Visible cycles [cycleLo, cycleHi] span the pixel columns [left, right]; visible tile
    // coordinates [tileLo, tileHi] span the rows from bottom (tileLo) to top (tileHi)
    // unless `tilesDown` (tile 0 at the top, the S-T graph's default).
    StMapping(double cycleLo, double cycleHi, double tileLo, double tileHi, const QRectF& pixels,
              bool tilesDown = true);

    double cycleToX(double cycles) const;
    double xToCycle(double x) const;
    // Tile t occupies the band [t - 0.5, t + 0.5] in tile coordinates.
    double tileToY(double tile) const;
    double yToTile(double y) const;
    // Tile id under pixel row y (rounded), or -1 outside [0, tileCount).
    int tileAtY(double y, int tileCount) const;
    // Pixel rectangle of cycles [c0, c1] on the contiguous tile ids [t0, t1]; `inset` in
    // tile units leaves a gap between neighbouring tiles' rows.
    QRectF rectFor(double c0, double c1, int t0, int t1, double inset = 0.08) const;
    double pixelsPerCycle() const;
    double pixelsPerTile() const;
    const QRectF& pixels() const { return m_pixels; }
    double cycleLo() const { return m_c0; }
    double cycleHi() const { return m_c1; }

    bool operator==(const StMapping&) const = default;

  private:
    double m_c0 = 0, m_c1 = 1, m_t0 = -0.5, m_t1 = 0.5;
    QRectF m_pixels{0, 0, 1, 1};
    bool m_down = true;
};

} // namespace tilescope::ui
