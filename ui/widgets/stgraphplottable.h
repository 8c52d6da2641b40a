// The S-T graph's rectangles as one QCustomPlot plottable. It draws only what is visible,
// and merges rectangles narrower than two pixels into per-row pixel runs (level of
// detail), so 50,000 rectangles cost one pass over a sorted array plus a few thousand
// fillRect calls instead of one QCPItem each. Rectangles of leaves working in blocks are
// hatched. Where tile rows would be thinner than StLayout::kThinRowPx it draws the layout's
// grouped rows (StLayout::grouped) instead, and the tiles' own rows again when zoomed in.
#pragma once

#include "core/stlayout.h"
#include "core/stmapping.h"

#include <memory>
#include <qcustomplot.h>
#include <vector>

namespace tilescope::ui {

// The tile axis of an S-T graph: whole tile ids (every one up to 20 tiles, every other one
// up to 40), the default ticker above that.
void setTileTicker(QCPAxis* axis, int tiles);

class StGraphPlottable : public QCPAbstractPlottable {
    Q_OBJECT
  public:
    explicit StGraphPlottable(QCPAxis* keyAxis, QCPAxis* valueAxis);

    void setLayout(std::shared_ptr<const StLayout> layout);
    // Per layer: the colour of its rectangles instead of the layer palette (the S-T
    // graph's efficiency colouring); empty restores the palette.
    void setLayerColors(std::vector<QColor> colors);
    QColor layerColorOf(int layer) const;
    std::shared_ptr<const StLayout> layout() const { return m_layout; }
    // Tiles per drawn row at the current axes (1: every tile its own row; else groups of the
    // layout's StRowOrder::period, StLayout::rowGroupSize).
    int rowTiles() const;
    // The layout drawn at the current axes: the layout or its grouped rows (rectAt indexes it).
    std::shared_ptr<const StLayout> shownLayout() const;
    // Per tree node id: true for leaves whose rectangles are highlighted (selection).
    void setHighlight(std::vector<bool> leaves);
    // Exports draw every rectangle in its own colour: the selection's dimming is a view
    // state, not part of the figure.
    void setHighlightSuppressed(bool on) { m_suppressHighlight = on; }
    // Everything drawn pale: the layout is the last valid schedule shown under an invalid
    // tree, or a preview.
    void setFaded(bool on) { m_faded = on; }
    bool faded() const { return m_faded; }
    // Drawn as a see-through overlay (translucent blue, dashed blue outlines, no labels, no
    // highlight) over another plottable: the live best of a running search.
    void setGhost(bool on) { m_ghost = on; }
    bool ghost() const { return m_ghost; }
    // The part [lo, hi) of each tile row this plottable draws in (0 = top): the evaluator
    // and the simulated timeline share rows as two bands when shown together.
    void setBand(double lo, double hi);
    StMapping mapping() const;
    // Whether the rectangle is drawn hatched (diagonal lines over its colour): its leaf works
    // in blocks (StLayout::blocksOf). Not on the live-best overlay, nor where a rectangle is
    // too narrow to draw on its own.
    bool hatched(const StRect& r) const;
    // Rectangle index of shownLayout() under a widget pixel position, or -1.
    int rectAt(const QPointF& pos) const;

    // Figures of the last draw (the benchmark prints them).
    struct DrawStats {
        int drawn = 0, merged = 0, labels = 0;
        int hatched = 0; // of the drawn ones
    };
    DrawStats lastDrawStats() const { return m_stats; }

    double selectTest(const QPointF& pos, bool onlySelectable,
                      QVariant* details = nullptr) const override;
    QCPRange getKeyRange(bool& foundRange,
                         QCP::SignDomain inSignDomain = QCP::sdBoth) const override;
    QCPRange getValueRange(bool& foundRange, QCP::SignDomain inSignDomain = QCP::sdBoth,
                           const QCPRange& inKeyRange = QCPRange()) const override;

  protected:
    void draw(QCPPainter* painter) override;
    void drawLegendIcon(QCPPainter* painter, const QRectF& rect) const override;

  private:
    static void fillRect(QCPPainter* painter, const QRectF& px, const QColor& colour, bool hatched);
    void drawLabel(QCPPainter* painter, const QFontMetrics& fm, const StRect& r, const QRectF& px);
    // Draws the rows of merged pixels (level of detail): one image, or rectangles on vector
    // outputs; `rows` are the buffer's rows from `firstRow` on, `K` sub-rows each.
    void drawMerged(QCPPainter* painter, const StMapping& m, const std::vector<int>& lod, int W,
                    int firstRow, int rows, int K, int rowTiles, bool anyHighlight);
    QColor fillFor(int layer, bool highlighted, bool anyHighlight) const;
    std::shared_ptr<const StLayout> m_layout;
    mutable std::vector<std::shared_ptr<const StLayout>> m_grouped; // by rows' tile count
    std::vector<bool> m_highlight;
    bool m_anyHighlight = false;
    bool m_suppressHighlight = false;
    bool m_faded = false;
    bool m_ghost = false;
    double m_bandLo = 0, m_bandHi = 1;
    std::vector<QColor> m_colors;   // per layer
    std::vector<QColor> m_override; // per layer, from setLayerColors
    std::vector<int> m_labelWidth;  // per layer, -1 until measured
    DrawStats m_stats;
};

} // namespace tilescope::ui
