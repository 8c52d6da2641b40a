// The NoC heatmap: the mesh's tiles (colour = busy fraction), its directed links (both
// directions side by side, colour = bytes or bandwidth utilisation) and the DRAM ports on
// the DRAM sides, with colour scales and hover values. The selected node's tiles are
// outlined; "only selection" restricts busy time to that node's leaves and dims the rest.
// While a search runs, its live best shows as inner squares / stripes (same colour scales).
// A mesh too large to read tile by tile (MeshRegions) is drawn as regions: each region's mean
// busy and the busiest link across each of its sides; the wheel and a double-click zoom into
// a window of the mesh, down to single tiles and links, Escape steps back, Home shows it all.
#pragma once

#include "core/meshregions.h"
#include "eval/evaluation.h"
#include "hw/hardware.h"
#include "tree/ratree.h"

#include <QLineF>
#include <QRectF>
#include <QString>
#include <QWidget>
#include <memory>
#include <optional>
#include <vector>

namespace tilescope::ui {

class Document;
class SelectionState;
struct LiveBest;

class NocHeatmapView : public QWidget {
    Q_OBJECT
  public:
    NocHeatmapView(Document* doc, SelectionState* selection, QWidget* parent = nullptr);

    void setShowUtilisation(bool on);
    void setFilterToSelection(bool on);
    bool showUtilisation() const { return m_utilisation; }
    bool filterToSelection() const { return m_filter; }
    // Paints the whole chart into a rectangle of this size (screen and export).
    void paintTo(QPainter& p, const QSize& size) const;
    QString exportTo(const QString& path);
    // Values behind the colours (tests and tooltips).
    double tileBusy(int tile) const;
    double linkValue(int link) const;
    // The running search's best (LiveBestPreview): each tile gets a blue-edged inner square
    // in the best's busy colour, each wide enough link a stripe in its colour; null removes
    // them.
    void setLiveBest(std::shared_ptr<const LiveBest> best);
    void setShowLiveBest(bool on);
    bool showLiveBest() const { return m_showLiveBest; }
    bool liveBestShown() const; // drawn now
    double liveBestTileBusy(int tile) const;
    double liveBestLinkValue(int link) const;
    // The lines drawn between chiplets (a template with Hardware::chiplets), in widget
    // coordinates at the current size: one per chiplet column and row boundary, each across
    // the whole mesh; empty on a single-chip template.
    std::vector<QLineF> chipletBoundaries() const;

    // Zoom on a mesh larger than MeshRegions::kSmallMeshSide a side (smaller meshes always
    // show all their tiles): the window of tiles shown and its regions at the current size.
    TileWindow window() const { return m_window; }
    MeshRegions regions() const;
    // The region's load as drawn (MeshRegions::load of the shown busy fractions).
    RegionLoad regionLoad(int region) const;
    // Halves the window around the tile at widget position `at` (down to a few tiles).
    void zoomIn(const QPointF& at);
    // The window before the last zoom-in, or twice the window; the whole mesh at most.
    void zoomOut();
    // Shows the region's tiles (single tiles and links).
    void zoomToRegion(int region);
    void resetZoom();
    bool zoomable() const;
    // The hover text at a widget position: a tile or region, a link or a region's busiest
    // link across a side; empty elsewhere.
    QString hoverText(const QPointF& pos) const;

    // The numbers drawn on the tiles at the current size: each tile's number (on meshes up
    // to 12x12, and its busy share where a box holds two lines) or a region's busy share,
    // with the rectangle it is centred in; empty where no label would be readable.
    struct TileLabel {
        QRectF rect;
        QString text;
    };
    std::vector<TileLabel> tileLabels() const;
    // The live best's inner squares as drawn (empty while it is not shown): labels keep
    // out of them.
    std::vector<QRectF> liveBestSquares() const;

    QSize sizeHint() const override { return {420, 380}; }

  protected:
    void paintEvent(QPaintEvent*) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void mouseReleaseEvent(QMouseEvent* e) override;
    void mouseDoubleClickEvent(QMouseEvent* e) override;
    void wheelEvent(QWheelEvent* e) override;
    void keyPressEvent(QKeyEvent* e) override;

  private:
    struct Geometry {
        QRectF mesh;     // the window's tile area
        double cell = 0; // tile pitch
        double tileSize = 0;
        TileWindow window; // the tiles shown
        MeshRegions regions;
        // The box drawn for a region (a tile when the regions are single tiles).
        QRectF unitRect(int region) const;
        double unitSize() const { return tileSize * regions.side(); }
        double gap() const { return regions.side() * (cell - tileSize); } // between boxes
    };
    // One arrow: the busiest link of one crossing of a region's side (the link itself when
    // regions are single tiles).
    struct LinkShape {
        int link = -1;
        int links = 0; // links of the crossing
        int region = -1;
        Dir dir = East;
        MeshRegions::Crossing crossing = MeshRegions::Crossing::Out;
        QPolygonF shape;
    };
    Geometry geometry(const QSize& size) const;
    const std::vector<LinkShape>& linkShapes(const Geometry& g) const;
    std::vector<LinkShape> makeLinkShapes(const Geometry& g) const;
    void paintUnits(QPainter& p, const Geometry& g, bool selected, bool dim) const;
    QRectF labelRect(const Geometry& g, int region) const;
    QRectF liveBestSquare(const Geometry& g, int region) const;
    // A tile's number fits it on one line (the live best's square then leaves room for it).
    bool numbersFit(const Geometry& g) const;
    // The labels and, into `font` (from the widget's), the font they are drawn in.
    std::vector<TileLabel> tileLabels(const Geometry& g, QFont* font) const;
    void paintLinks(QPainter& p, const Geometry& g, double scale, bool dim) const;
    void paintLiveBest(QPainter& p, const Geometry& g, double scale) const;
    void paintLegend(QPainter& p, const QSize& size, const Geometry& g, double maxLink,
                     bool dim) const;
    QString zoomHint(const Geometry& g) const;
    void setWindow(const TileWindow& w);
    bool regionHasGroup(const MeshRegions& r, int region) const;
    std::vector<QLineF> chipletBoundaries(const Geometry& g) const;
    // The DRAM bars along the mesh's DRAM sides, labelled.
    void paintDramBars(QPainter& p, const Geometry& g) const;
    void recompute();
    void updateLiveLinkValues();
    int regionAt(const Geometry& g, const QPointF& pos) const;
    int tileAt(const QPointF& pos) const;
    const LinkShape* linkAt(const Geometry& g, const QPointF& pos) const;

    Document* m_doc;
    SelectionState* m_selection;
    std::shared_ptr<const Evaluation> m_eval;
    std::shared_ptr<const Hardware> m_hw;
    RATree m_tree;
    std::vector<double> m_busy;          // per tile, fraction of the delay (filtered)
    std::vector<bool> m_inGroup;         // per tile: in the selected node's group
    std::vector<int> m_dominantLeaf;     // per tile: leaf with the most busy time there
    std::vector<double> m_linkValue;     // per link: bytes or utilisation (linkValue)
    std::vector<double> m_liveLinkValue; // the same for the live best
    double m_maxLink = 0;
    bool m_utilisation = false;
    bool m_filter = false;
    bool m_exporting = false;
    std::shared_ptr<const LiveBest> m_liveBest;
    bool m_showLiveBest = true;
    QString m_invalidReason; // non-empty: the document's tree is invalid, m_eval the last valid
    QSize m_meshSize;        // of the mesh the window is on
    TileWindow m_window;     // the tiles shown (the whole mesh unless zoomed)
    std::vector<TileWindow> m_zoomBack; // windows before each zoom-in (Escape steps back)
    bool m_zoomClick = false;           // a double-click zoomed: its release selects nothing
    // The arrows of the last geometry drawn or hit-tested (rebuilt when it changes).
    mutable std::vector<LinkShape> m_shapes;
    mutable QRectF m_shapesMesh;
    mutable int m_shapesSide = 0;
    mutable bool m_shapesValid = false;
};

} // namespace tilescope::ui
