// The NoC heatmap: the mesh's tiles (colour = busy fraction), its directed links (both
// directions side by side, colour = bytes or bandwidth utilisation) and the DRAM ports on
// the DRAM sides, with colour scales and hover values. The selected node's tiles are
// outlined; "only selection" restricts busy time to that node's leaves and dims the rest.
// While a search runs, its live best shows as inner squares / stripes (same colour scales).
#pragma once

#include "eval/evaluation.h"
#include "hw/hardware.h"
#include "tree/ratree.h"

#include <QLineF>
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

    QSize sizeHint() const override { return {420, 380}; }

  protected:
    void paintEvent(QPaintEvent*) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void mouseReleaseEvent(QMouseEvent* e) override;

  private:
    struct Geometry {
        QRectF mesh;     // tile area
        double cell = 0; // tile pitch
        double tileSize = 0;
        QRectF tileRect(int x, int y) const;
    };
    struct LinkShape {
        int link = -1;
        QPolygonF shape;
    };
    Geometry geometry(const QSize& size) const;
    std::vector<LinkShape> linkShapes(const Geometry& g) const;
    std::vector<QLineF> chipletBoundaries(const Geometry& g) const;
    // The DRAM bars along the mesh's DRAM sides, labelled.
    void paintDramBars(QPainter& p, const Geometry& g) const;
    void recompute();
    int tileAt(const QPointF& pos) const;
    int linkAt(const QPointF& pos) const;

    Document* m_doc;
    SelectionState* m_selection;
    std::shared_ptr<const Evaluation> m_eval;
    std::shared_ptr<const Hardware> m_hw;
    RATree m_tree;
    std::vector<double> m_busy;      // per tile, fraction of the delay (filtered)
    std::vector<bool> m_inGroup;     // per tile: in the selected node's group
    std::vector<int> m_dominantLeaf; // per tile: leaf with the most busy time there
    double m_maxLink = 0;
    bool m_utilisation = false;
    bool m_filter = false;
    bool m_exporting = false;
    std::shared_ptr<const LiveBest> m_liveBest;
    bool m_showLiveBest = true;
    QString m_invalidReason; // non-empty: the document's tree is invalid, m_eval the last valid
};

} // namespace tilescope::ui
