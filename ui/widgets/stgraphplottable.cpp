#include "widgets/stgraphplottable.h"

#include "core/layernames.h"
#include "widgets/palette.h"

#include <algorithm>
#include <cmath>

namespace tilescope::ui {

StGraphPlottable::StGraphPlottable(QCPAxis* keyAxis, QCPAxis* valueAxis)
    : QCPAbstractPlottable(keyAxis, valueAxis) {
    setAntialiasedFill(false);
    setSelectable(QCP::stNone); // selection is the shared SelectionState, not QCP's
}

void setTileTicker(QCPAxis* axis, int tiles) {
    if (tiles <= 40) {
        auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
        ticker->setTickStep(tiles <= 20 ? 1 : 2);
        ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
        axis->setTicker(ticker);
    } else {
        axis->setTicker(QSharedPointer<QCPAxisTicker>::create());
    }
}

void StGraphPlottable::setLayout(std::shared_ptr<const StLayout> layout) {
    m_layout = std::move(layout);
    m_grouped.clear();
    m_colors.clear();
    m_labelWidth.clear();
    if (m_layout) {
        const int layers = int(m_layout->shortNames().size());
        m_colors.reserve(size_t(layers));
        for (int l = 0; l < layers; ++l)
            m_colors.push_back(l < int(m_override.size()) ? m_override[size_t(l)] : layerColor(l));
        m_labelWidth.assign(size_t(layers), -1);
    }
}

void StGraphPlottable::setLayerColors(std::vector<QColor> colors) {
    m_override = std::move(colors);
    for (size_t l = 0; l < m_colors.size(); ++l)
        m_colors[l] = l < m_override.size() ? m_override[l] : layerColor(int(l));
}

QColor StGraphPlottable::layerColorOf(int layer) const {
    return layer >= 0 && size_t(layer) < m_colors.size() ? m_colors[size_t(layer)] : QColor();
}

void StGraphPlottable::setHighlight(std::vector<bool> leaves) {
    m_highlight = std::move(leaves);
    m_anyHighlight = std::find(m_highlight.begin(), m_highlight.end(), true) != m_highlight.end();
}

void StGraphPlottable::setBand(double lo, double hi) {
    m_bandLo = std::clamp(lo, 0.0, 1.0);
    m_bandHi = std::clamp(hi, m_bandLo, 1.0);
}

StMapping StGraphPlottable::mapping() const {
    QCPAxis* k = keyAxis();
    QCPAxis* v = valueAxis();
    if (!k || !v) return {};
    return StMapping(k->range().lower, k->range().upper, v->range().lower, v->range().upper,
                     QRectF(k->axisRect()->rect()), v->rangeReversed());
}

bool StGraphPlottable::hatched(const StRect& r) const {
    return !m_ghost && m_layout && m_layout->blocksOf(r) > 1;
}

int StGraphPlottable::rectAt(const QPointF& pos) const {
    if (!m_layout) return -1;
    const StMapping m = mapping();
    if (!m.pixels().contains(pos)) return -1;
    const int tile = m.tileAtY(pos.y(), m_layout->tiles());
    if (tile < 0) return -1;
    return shownLayout()->hit(m.xToCycle(pos.x()), tile);
}

double StGraphPlottable::selectTest(const QPointF& pos, bool onlySelectable,
                                    QVariant* details) const {
    if (onlySelectable && !selectable()) return -1;
    const int i = rectAt(pos);
    if (i < 0) return -1;
    if (details) *details = i;
    return 0;
}

QCPRange StGraphPlottable::getKeyRange(bool& foundRange, QCP::SignDomain) const {
    foundRange = m_layout && !m_layout->rects().empty();
    return foundRange ? QCPRange(0, m_layout->endCycle()) : QCPRange();
}

QCPRange StGraphPlottable::getValueRange(bool& foundRange, QCP::SignDomain, const QCPRange&) const {
    foundRange = m_layout && m_layout->tiles() > 0;
    return foundRange ? QCPRange(-0.5, m_layout->tiles() - 0.5) : QCPRange();
}

void StGraphPlottable::drawLegendIcon(QCPPainter* painter, const QRectF& rect) const {
    painter->fillRect(rect, layerColor(0));
}

void StGraphPlottable::fillRect(QCPPainter* painter, const QRectF& px, const QColor& colour,
                                bool hatched) {
    painter->fillRect(px, colour);
    // Diagonal lines over a blocked leaf's colour: its blocks run one after another.
    if (hatched) painter->fillRect(px, QBrush(QColor(0, 0, 0, 110), Qt::BDiagPattern));
}

// A label only where it fits; the rectangle's own colour decides the text colour.
void StGraphPlottable::drawLabel(QCPPainter* painter, const QFontMetrics& fm, const StRect& r,
                                 const QRectF& px) {
    if (px.width() <= 30 || px.height() < fm.height() || r.layer < 0 ||
        r.layer >= m_layout->shortNames().size())
        return;
    QString label = m_layout->shortNames()[r.layer];
    if (r.interval >= 0) {
        const BusyInterval& iv = m_layout->evaluation().intervals[size_t(r.interval)];
        label = rectLabel(label, iv.firstSample, iv.lastSample);
    }
    if (fm.horizontalAdvance(label) + 4 <= px.width()) {
        painter->setPen(QColor(20, 20, 20));
        painter->drawText(px, Qt::AlignCenter, label);
        ++m_stats.labels;
    }
}

int StGraphPlottable::rowTiles() const {
    if (!m_layout || m_layout->tiles() <= 1) return 1;
    return StLayout::rowGroupSize(mapping().pixelsPerTile(), m_layout->tiles(),
                                  m_layout->rowOrder().period);
}

std::shared_ptr<const StLayout> StGraphPlottable::shownLayout() const {
    const int g = rowTiles();
    if (!m_layout || g <= 1) return m_layout;
    for (const auto& l : m_grouped)
        if (l->rowTiles() == g) return l;
    // Grouping is one pass over the rectangles (a few ms for 100,000): done when first drawn,
    // kept while the layout lasts.
    m_grouped.push_back(m_layout->grouped(g));
    return m_grouped.back();
}

QColor StGraphPlottable::fillFor(int layer, bool hl, bool anyHighlight) const {
    QColor c = layer >= 0 && size_t(layer) < m_colors.size() ? m_colors[size_t(layer)]
                                                             : QColor(150, 150, 150);
    if (anyHighlight && !hl) c = QColor::fromHslF(c.hslHueF(), c.hslSaturationF() * 0.25f, 0.86f);
    // One translucent blue (the search's "best" colour): the schedule underneath keeps
    // its layer colours and shows through.
    if (m_ghost) c = QColor(21, 101, 192, 55);
    return c;
}

void StGraphPlottable::draw(QCPPainter* painter) {
    m_stats = {};
    if (!m_layout || m_layout->rects().empty()) return;
    const StMapping m = mapping();
    const QRectF area = m.pixels();
    const std::shared_ptr<const StLayout> shown = shownLayout();
    const auto& rects = shown->rects();
    const int tiles = m_layout->tiles();
    const int g = shown->rowTiles();
    // The rows in view (tile coordinates of the axis range), with one row to spare.
    const double ta = m.yToTile(area.top()), tb = m.yToTile(area.bottom());
    const int firstRow = std::max(0, int(std::floor(std::min(ta, tb) + 0.5)) / g - 1);
    const int lastRow = std::min((tiles - 1) / g, int(std::floor(std::max(ta, tb) + 0.5)) / g + 1);
    if (lastRow < firstRow) return;
    const int rows = lastRow - firstRow + 1;
    // Tile ids [t0, t1] of row k; a gap between rows in proportion to their height.
    const double inset = 0.08 * g;
    auto rowRect = [&](double c0, double c1, int k) {
        return m.rectFor(c0, c1, k * g, std::min(tiles, (k + 1) * g) - 1, inset);
    };
    // Sub-rows per row in the level-of-detail image: 1 unless rectangles cover only part
    // of a row (a band, thin transfer bars, grouped rows), then enough to place a 20 % bar.
    const bool partial = m_bandLo > 0 || m_bandHi < 1 || m_layout->simulated() || g > 1;
    const int K = partial ? 10 : 1;
    // A rectangle's vertical fraction [f0, f1) of its rows, inside this plottable's band.
    auto frac = [&](float y) { return m_bandLo + (m_bandHi - m_bandLo) * double(y); };
    const int W = std::max(1, int(std::ceil(area.width())) + 1);
    const double c0 = m.cycleLo(), c1 = m.cycleHi();
    painter->setRenderHint(QPainter::Antialiasing, false);
    const bool anyHighlight = !m_ghost && ((m_anyHighlight && !m_suppressHighlight) || m_faded);

    // Level of detail: rectangles under two pixels wide are not drawn one by one; they
    // mark their pixel columns in a per-row buffer (value = layer + 1, bit 30 for a
    // highlighted one) and the buffer is drawn as runs of equal value at the end.
    std::vector<int> lod(size_t(rows) * size_t(K) * size_t(W), 0);
    constexpr int kHighlightBit = 1 << 30;
    auto highlighted = [&](const StRect& r) {
        return !m_faded && anyHighlight && r.node >= 0 && size_t(r.node) < m_highlight.size() &&
               m_highlight[size_t(r.node)];
    };

    const QFontMetrics fm(painter->font());
    const QPen outline =
        m_ghost ? QPen(QColor(21, 101, 192, 230), 1.5, Qt::DashLine) : QPen(QColor(0, 0, 0, 90), 0);
    const QPen hlOutline(QColor(20, 20, 20), 2);
    for (size_t i = shown->firstVisible(c0); i < rects.size() && rects[i].start <= c1; ++i) {
        const StRect& r = rects[i];
        const int ra = r.tile0 / g, rb = r.tile1 / g;
        if (r.end < c0 || rb < firstRow || ra > lastRow) continue;
        const bool hl = highlighted(r);
        const bool blocked = hatched(r);
        QRectF px = m.rectFor(r.start, r.end, r.tile0, r.tile1, inset);
        const double f0 = frac(r.y0), f1 = frac(r.y1);
        if (px.width() < 2.0) {
            const int xa = std::clamp(int(px.left() - area.left()), 0, W - 1);
            const int xb = std::clamp(int(px.right() - area.left()), 0, W - 1);
            const int v = (r.layer + 1) | (hl ? kHighlightBit : 0);
            const int s0 = std::clamp(int(f0 * K), 0, K - 1);
            const int s1 = std::clamp(int(std::ceil(f1 * K)) - 1, s0, K - 1);
            for (int k = std::max(firstRow, ra); k <= std::min(lastRow, rb); ++k)
                for (int s = s0; s <= s1; ++s) {
                    int* row = &lod[(size_t(k - firstRow) * size_t(K) + size_t(s)) * size_t(W)];
                    for (int x = xa; x <= xb; ++x)
                        if (!(row[x] & kHighlightBit)) row[x] = v; // a highlight wins its pixel
                }
            ++m_stats.merged;
            continue;
        }
        if (partial && rb > ra) {
            // A band is a part of each row, not of the run: rows are filled one by one.
            for (int k = std::max(firstRow, ra + 1); k <= std::min(lastRow, rb); ++k) {
                QRectF row = rowRect(r.start, r.end, k);
                row.setTop(row.top() + row.height() * f0);
                row.setHeight(row.height() * (f1 - f0));
                fillRect(painter, row.intersected(area.adjusted(-2, -2, 2, 2)),
                         fillFor(r.layer, hl, anyHighlight), blocked);
            }
            px = rowRect(r.start, r.end, ra);
        }
        if (partial) {
            const double h = px.height();
            px.setTop(px.top() + h * f0);
            px.setHeight(h * (f1 - f0));
        }
        px = px.intersected(area.adjusted(-2, -2, 2, 2));
        fillRect(painter, px, fillFor(r.layer, hl, anyHighlight), blocked);
        m_stats.hatched += blocked;
        if (px.width() >= 5 && px.height() >= 5) {
            painter->setPen(hl ? hlOutline : outline);
            painter->setBrush(Qt::NoBrush);
            painter->drawRect(px);
        }
        ++m_stats.drawn;
        if (!m_ghost) drawLabel(painter, fm, r, px);
    }
    if (m_stats.merged > 0) drawMerged(painter, m, lod, W, firstRow, rows, K, g, anyHighlight);
}

// The merged pixels become one image, one pixel per (column, sub-row), scaled onto the rows
// by a single drawImage: far cheaper than a fillRect per run when a column alternates between
// many layers. Vector outputs (SVG, PDF) get them as rectangles, not a bitmap that blurs when
// scaled.
void StGraphPlottable::drawMerged(QCPPainter* painter, const StMapping& m,
                                  const std::vector<int>& lod, int W, int firstRow, int rows, int K,
                                  int g, bool anyHighlight) {
    constexpr int kHighlightBit = 1 << 30;
    const QRectF area = m.pixels();
    const double ya = m.tileToY(firstRow * g - 0.5), yb = m.tileToY((firstRow + rows) * g - 0.5);
    if (painter->modes().testFlag(QCPPainter::pmVectorized)) {
        const double rowH = (yb - ya) / double(rows * K);
        for (int t = 0; t < rows * K; ++t) {
            const int* row = &lod[size_t(t) * size_t(W)];
            for (int x = 0; x < W;) {
                const int v = row[x];
                int e = x + 1;
                while (e < W && row[e] == v)
                    ++e;
                if (v) {
                    const int layer = (v & ~kHighlightBit) - 1;
                    const bool hl = (v & kHighlightBit) || !anyHighlight;
                    const double y0 = ya + rowH * t, y1 = y0 + rowH;
                    painter->fillRect(
                        QRectF(area.left() + x, std::min(y0, y1), e - x, std::abs(y1 - y0)),
                        fillFor(layer, hl, anyHighlight));
                }
                x = e;
            }
        }
        return;
    }
    QImage img(W, rows * K, QImage::Format_ARGB32_Premultiplied);
    img.fill(Qt::transparent);
    std::vector<QRgb> layerRgb(m_colors.size() + 1), dimRgb(m_colors.size() + 1);
    for (size_t l = 0; l <= m_colors.size(); ++l) {
        // The image is premultiplied (a ghost's colours are translucent).
        layerRgb[l] = qPremultiply(fillFor(int(l) - 1, true, anyHighlight).rgba());
        dimRgb[l] = qPremultiply(fillFor(int(l) - 1, false, anyHighlight).rgba());
    }
    for (int t = 0; t < rows * K; ++t) {
        const int* row = &lod[size_t(t) * size_t(W)];
        auto* line = reinterpret_cast<QRgb*>(img.scanLine(t));
        for (int x = 0; x < W; ++x) {
            const int v = row[x];
            if (!v) continue;
            const size_t l = std::min(size_t((v & ~kHighlightBit)), layerRgb.size() - 1);
            line[x] = (v & kHighlightBit) || !anyHighlight ? layerRgb[l] : dimRgb[l];
        }
    }
    if (ya > yb) img = img.mirrored(false, true);
    painter->save();
    painter->setRenderHint(QPainter::SmoothPixmapTransform, false);
    painter->drawImage(QRectF(area.left(), std::min(ya, yb), W, std::abs(yb - ya)), img);
    painter->restore();
}

} // namespace tilescope::ui
