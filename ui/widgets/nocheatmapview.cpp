#include "widgets/nocheatmapview.h"

#include "core/bytestext.h"
#include "core/document.h"
#include "core/livebestpreview.h"
#include "core/selectionstate.h"
#include "eval/linkload.h"
#include "hw/mesh.h"
#include "widgets/palette.h"
#include "widgets/plotexport.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>
#include <QTransform>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <utility>

namespace tilescope::ui {

namespace {

// What a port link's tooltip adds where memory is interleaved over the ports: every
// transfer comes from (or goes to) all of them, a share each (docs/hardware-format.md).
QString interleavedNote(const Mesh& mesh) {
    if (!mesh.interleaved()) return {};
    return NocHeatmapView::tr("; memory interleaved over %1 ports, each transfer 1/%1 on each")
        .arg(int(std::lround(1.0 / mesh.dramShare())));
}
constexpr double kLegendHeight = 58;
QColor busyColor(double t) {
    // White (idle) to a warm orange (always busy): distinct from the links' viridis scale.
    t = std::clamp(t, 0.0, 1.0);
    return QColor(int(255 - t * (255 - 230)), int(255 - t * (255 - 110)),
                  int(255 - t * (255 - 20)));
}
} // namespace

NocHeatmapView::NocHeatmapView(Document* doc, SelectionState* selection, QWidget* parent)
    : QWidget(parent), m_doc(doc), m_selection(selection) {
    setObjectName(QStringLiteral("nocHeatmap"));
    setMouseTracking(true);
    setMinimumSize(240, 220);
    setAutoFillBackground(false);
    connect(doc, &Document::treeChanged, this, &NocHeatmapView::recompute);
    connect(doc, &Document::documentReset, this, &NocHeatmapView::recompute);
    connect(selection, &SelectionState::changed, this, &NocHeatmapView::recompute);
    recompute();
}

void NocHeatmapView::setShowUtilisation(bool on) {
    m_utilisation = on;
    recompute();
}

void NocHeatmapView::setFilterToSelection(bool on) {
    m_filter = on;
    recompute();
}

void NocHeatmapView::recompute() {
    m_eval = m_doc->evaluation();
    m_hw = m_doc->hardware();
    m_tree = m_doc->tree();
    // An invalid tree has no traffic: the last valid schedule stays, faded, under the
    // reason, instead of an empty mesh.
    m_invalidReason.clear();
    if (m_eval && !m_eval->valid && m_doc->hasModel()) {
        m_invalidReason = QString::fromStdString(m_eval->reason);
        if (auto last = m_doc->lastValidEvaluation()) {
            m_eval = last;
            m_tree = m_doc->lastValidTree();
        }
    }
    const int tiles = m_hw ? m_hw->tiles() : 0;
    // A new mesh shows all of it again.
    const int mx = m_hw ? m_hw->meshX : 0, my = m_hw ? m_hw->meshY : 0;
    if (m_meshSize != QSize(mx, my) || !zoomable()) {
        m_meshSize = QSize(mx, my);
        m_window = TileWindow{0, 0, mx, my};
        m_zoomBack.clear();
    }
    m_shapesValid = false;
    setFocusPolicy(zoomable() ? Qt::ClickFocus : Qt::NoFocus); // Escape and Home zoom out
    m_busy.assign(size_t(tiles), 0.0);
    m_inGroup.assign(size_t(tiles), false);
    m_dominantLeaf.assign(size_t(tiles), -1);
    m_maxLink = 0;
    m_linkValue.clear();
    if (!m_eval || !m_doc->hasModel() || m_eval->tileOrder.empty()) {
        update();
        return;
    }
    const int sel = m_selection->node();
    const bool haveSel = sel >= 0 && sel < m_tree.size() && size_t(sel) < m_eval->nodes.size();
    std::vector<bool> leafInSel;
    if (haveSel) {
        const NodeFigures& f = m_eval->nodes[size_t(sel)];
        for (int p = f.tileBegin;
             p < f.tileBegin + f.tileCount && p < int(m_eval->tileOrder.size()); ++p)
            m_inGroup[size_t(m_eval->tileOrder[size_t(p)])] = true;
        leafInSel.assign(size_t(m_tree.size()), false);
        for (int layer : m_tree.layersUnder(sel))
            if (int leaf = m_tree.leafOf(layer); leaf >= 0) leafInSel[size_t(leaf)] = true;
    }
    // The figures are the engine's (eval/linkload.h); this view only draws them.
    TileLoad load = tileLoad(*m_eval, tiles, [&](int node) {
        return !(m_filter && haveSel) ||
               (node >= 0 && size_t(node) < leafInSel.size() && leafInSel[size_t(node)]);
    });
    m_busy = std::move(load.busy);
    m_dominantLeaf = std::move(load.dominantLeaf);
    // Utilisation needs the mesh's capacities: computed once here, not per link drawn.
    m_linkValue = m_utilisation ? linkUtilisation(*m_eval, *m_hw) : m_eval->linkBytes;
    for (double v : m_linkValue)
        m_maxLink = std::max(m_maxLink, v);
    updateLiveLinkValues();
    update();
}

void NocHeatmapView::updateLiveLinkValues() {
    m_liveLinkValue.clear();
    if (!m_liveBest || !m_liveBest->eval || !m_hw) return;
    m_liveLinkValue =
        m_utilisation ? linkUtilisation(*m_liveBest->eval, *m_hw) : m_liveBest->eval->linkBytes;
}

void NocHeatmapView::setLiveBest(std::shared_ptr<const LiveBest> best) {
    m_liveBest = std::move(best);
    updateLiveLinkValues();
    update();
}

void NocHeatmapView::setShowLiveBest(bool on) {
    m_showLiveBest = on;
    update();
}

bool NocHeatmapView::liveBestShown() const {
    return m_showLiveBest && m_liveBest && !m_exporting && m_hw &&
           m_liveBest->load.busy.size() == size_t(m_hw->tiles());
}

double NocHeatmapView::liveBestTileBusy(int tile) const {
    if (!m_liveBest || tile < 0 || size_t(tile) >= m_liveBest->load.busy.size()) return 0;
    return m_liveBest->load.busy[size_t(tile)];
}

double NocHeatmapView::liveBestLinkValue(int link) const {
    if (!m_liveBest || link < 0 || size_t(link) >= m_liveLinkValue.size()) return 0;
    return m_liveLinkValue[size_t(link)];
}

double NocHeatmapView::tileBusy(int tile) const {
    return tile >= 0 && size_t(tile) < m_busy.size() ? m_busy[size_t(tile)] : 0.0;
}

double NocHeatmapView::linkValue(int link) const {
    if (!m_eval || link < 0 || size_t(link) >= m_linkValue.size()) return 0;
    return m_linkValue[size_t(link)];
}

std::vector<QLineF> NocHeatmapView::chipletBoundaries(const Geometry& g) const {
    std::vector<QLineF> out;
    if (!m_hw || m_hw->chiplets.count() <= 1) return out;
    const Mesh mesh(*m_hw);
    if (!mesh.hasChiplets()) return out;
    const QRectF& r = g.mesh;
    const TileWindow& w = g.window;
    for (int x = mesh.chipletWidth(); x < mesh.width(); x += mesh.chipletWidth())
        if (x > w.x0 && x < w.x0 + w.w)
            out.emplace_back(r.left() + (x - w.x0) * g.cell, r.top(),
                             r.left() + (x - w.x0) * g.cell, r.bottom());
    for (int y = mesh.chipletHeight(); y < mesh.height(); y += mesh.chipletHeight())
        if (y > w.y0 && y < w.y0 + w.h)
            out.emplace_back(r.left(), r.top() + (y - w.y0) * g.cell, r.right(),
                             r.top() + (y - w.y0) * g.cell);
    return out;
}

std::vector<QLineF> NocHeatmapView::chipletBoundaries() const {
    return chipletBoundaries(geometry(size()));
}

QRectF NocHeatmapView::Geometry::unitRect(int region) const {
    const TileWindow t = regions.tilesOf(region);
    const QRectF span(mesh.left() + (t.x0 - window.x0) * cell,
                      mesh.top() + (t.y0 - window.y0) * cell, t.w * cell, t.h * cell);
    // A region narrower than the others (on the window's right or bottom edge) keeps the
    // tiles' proportions.
    const double pad = gap() / 2;
    const double px = std::min(pad, span.width() * 0.22), py = std::min(pad, span.height() * 0.22);
    return span.adjusted(px, py, -px, -py);
}

NocHeatmapView::Geometry NocHeatmapView::geometry(const QSize& size) const {
    Geometry g;
    const int meshX = m_hw ? m_hw->meshX : 1, meshY = m_hw ? m_hw->meshY : 1;
    g.window = m_hw && m_window.w > 0 ? m_window : TileWindow{0, 0, meshX, meshY};
    // Room for the DRAM bars (west / east / north / south) and the legend below.
    const double margin = 34;
    const double w = size.width() - 2 * margin, h = size.height() - 2 * margin - kLegendHeight;
    g.cell = std::min(w / g.window.w, h / g.window.h);
    // A small mesh keeps readable tiles even in a small widget; a large one fits the widget
    // and gathers its tiles into regions instead.
    g.cell = zoomable() ? std::max(0.5, g.cell) : std::max(8.0, g.cell);
    g.tileSize = g.cell * 0.56;
    g.regions = MeshRegions(meshX, meshY, g.window, MeshRegions::regionSide(meshX, meshY, g.cell));
    const double mw = g.cell * g.window.w, mh = g.cell * g.window.h;
    g.mesh = QRectF(margin + (w - mw) / 2, margin + (h - mh) / 2, mw, mh);
    return g;
}

const std::vector<NocHeatmapView::LinkShape>& NocHeatmapView::linkShapes(const Geometry& g) const {
    if (!m_shapesValid || m_shapesMesh != g.mesh || m_shapesSide != g.regions.side()) {
        m_shapes = makeLinkShapes(g);
        m_shapesMesh = g.mesh;
        m_shapesSide = g.regions.side();
        m_shapesValid = true;
    }
    return m_shapes;
}

std::vector<NocHeatmapView::LinkShape> NocHeatmapView::makeLinkShapes(const Geometry& g) const {
    std::vector<LinkShape> out;
    if (!m_hw || !m_eval) return out;
    const Mesh mesh(*m_hw);
    const MeshRegions& regions = g.regions;
    const double unit = g.unitSize();
    const double lane = unit * 0.16; // half the distance between the two directions
    const double thick = std::max(2.0, unit * 0.11);
    auto arrow = [&](QPointF a, QPointF b) {
        // A thin arrow from a to b: a quadrilateral plus a head.
        const QPointF d = b - a;
        const double len = std::hypot(d.x(), d.y());
        if (len <= 0) return QPolygonF();
        const QPointF u = d / len, n(-u.y(), u.x());
        const double head = std::min(len * 0.45, thick * 1.8);
        const QPointF hb = b - u * head;
        return QPolygonF({a + n * thick / 2, hb + n * thick / 2, hb + n * thick, b, hb - n * thick,
                          hb - n * thick / 2, a - n * thick / 2});
    };
    auto dramSide = [&](Dir d) {
        const MeshSide s = d == West    ? MeshSide::West
                           : d == East  ? MeshSide::East
                           : d == North ? MeshSide::North
                                        : MeshSide::South;
        return std::find(m_hw->dramSides.begin(), m_hw->dramSides.end(), s) !=
               m_hw->dramSides.end();
    };
    const std::function<double(int)> value = [this](int l) { return linkValue(l); };
    static const QPointF unitVector[] = {{1, 0}, {-1, 0}, {0, -1}, {0, 1}}; // by Dir
    // The middle of a box's side towards u.
    auto sideMid = [](const QRectF& box, QPointF u) {
        return box.center() + QPointF(u.x() * box.width() / 2, u.y() * box.height() / 2);
    };
    using Crossing = MeshRegions::Crossing;
    for (int r = 0; r < regions.count(); ++r) {
        const QRectF box = g.unitRect(r);
        const TileWindow t = regions.tilesOf(r);
        for (Dir d : {East, West, North, South}) {
            const bool meshEdge = (d == East && t.x0 + t.w == mesh.width()) ||
                                  (d == West && t.x0 == 0) || (d == North && t.y0 == 0) ||
                                  (d == South && t.y0 + t.h == mesh.height());
            if (meshEdge && !dramSide(d)) continue; // no DRAM there: its edge links carry nothing
            // The two directions of one boundary sit side by side (to the right of travel).
            const QPointF u = unitVector[d], n(-u.y(), u.x());
            const QPointF a = sideMid(box, u);
            const int next = regions.neighbour(r, d);
            const QPointF b = next >= 0 ? sideMid(g.unitRect(next), -u) : a + u * g.gap();
            auto add = [&](Crossing c, QPointF from, QPointF to, double off) {
                const BoundaryLink bl = regions.busiest(mesh, r, d, c, value);
                if (bl.link < 0 || size_t(bl.link) >= m_eval->linkBytes.size()) return;
                out.push_back({bl.link, bl.links, r, d, c, arrow(from + n * off, to + n * off)});
            };
            add(Crossing::Out, a, b, lane);
            // Into the region from beyond the window (the neighbour inside draws its own).
            if (next < 0) add(meshEdge ? Crossing::FromDram : Crossing::In, b, a, -lane);
        }
    }
    return out;
}

void NocHeatmapView::paintDramBars(QPainter& p, const Geometry& g) const {
    p.setPen(Qt::NoPen);
    const TileWindow& w = g.window;
    for (MeshSide s : m_hw->dramSides) {
        // A zoomed window shows the bars only on the sides where it reaches the mesh's edge.
        if ((s == MeshSide::West && w.x0 > 0) ||
            (s == MeshSide::East && w.x0 + w.w < m_hw->meshX) ||
            (s == MeshSide::North && w.y0 > 0) ||
            (s == MeshSide::South && w.y0 + w.h < m_hw->meshY))
            continue;
        QRectF bar;
        const double t = 14, d = g.gap() + 4;
        switch (s) {
        case MeshSide::West:
            bar = QRectF(g.mesh.left() - d - t + g.gap() / 2, g.mesh.top(), t, g.mesh.height());
            break;
        case MeshSide::East:
            bar = QRectF(g.mesh.right() + d - g.gap() / 2, g.mesh.top(), t, g.mesh.height());
            break;
        case MeshSide::North:
            bar = QRectF(g.mesh.left(), g.mesh.top() - d - t + g.gap() / 2, g.mesh.width(), t);
            break;
        case MeshSide::South:
            bar = QRectF(g.mesh.left(), g.mesh.bottom() + d - g.gap() / 2, g.mesh.width(), t);
            break;
        }
        p.setBrush(QColor(96, 96, 110));
        p.drawRoundedRect(bar, 3, 3);
        p.save();
        p.setPen(Qt::white);
        QFont f = p.font();
        f.setPointSizeF(std::max(6.0, f.pointSizeF() * 0.8));
        p.setFont(f);
        if (s == MeshSide::West || s == MeshSide::East) {
            p.translate(bar.center());
            p.rotate(-90);
            p.drawText(QRectF(-bar.height() / 2, -bar.width() / 2, bar.height(), bar.width()),
                       Qt::AlignCenter, tr("DRAM"));
        } else {
            p.drawText(bar, Qt::AlignCenter, tr("DRAM"));
        }
        p.restore();
    }
}

bool NocHeatmapView::regionHasGroup(const MeshRegions& r, int region) const {
    const TileWindow t = r.tilesOf(region);
    for (int y = t.y0; y < t.y0 + t.h; ++y)
        for (int x = t.x0; x < t.x0 + t.w; ++x)
            if (m_inGroup[size_t(y * m_hw->meshX + x)]) return true;
    return false;
}

RegionLoad NocHeatmapView::regionLoad(int region) const {
    return regions().load(region, m_busy);
}

MeshRegions NocHeatmapView::regions() const {
    return geometry(size()).regions;
}

// Where a tile's label goes: the whole box when nothing covers it, else the band under the
// live best's inner square (top right), so the square never hides the number.
QRectF NocHeatmapView::labelRect(const Geometry& g, int region) const {
    const QRectF box = g.unitRect(region);
    if (!liveBestShown()) return box.adjusted(1, 1, -1, -1);
    const QRectF square = liveBestSquare(g, region);
    return QRectF(box.left() + 1, square.bottom() + 1, box.width() - 2,
                  box.bottom() - square.bottom() - 2);
}

namespace {
// The largest pixel size from `start` down to 7 in which `widest` fits `width` (set in `f`);
// below 7 when none does.
int fittingPixels(QFont& f, double width, const QString& widest, int start) {
    int px = start;
    for (; px >= 7; --px) {
        f.setPixelSize(px);
        if (QFontMetricsF(f).horizontalAdvance(widest) <= width) break;
    }
    return px;
}
} // namespace

bool NocHeatmapView::numbersFit(const Geometry& g) const {
    if (!m_hw || g.regions.count() == 0 || !g.regions.single()) return false;
    const QRectF box = g.unitRect(0).adjusted(1, 1, -1, -1);
    QFont f = font();
    return fittingPixels(f, box.width(), QString::number(m_hw->tiles() - 1),
                         int(std::min(box.height() * 0.85, 11.0))) >= 7;
}

QRectF NocHeatmapView::liveBestSquare(const Geometry& g, int region) const {
    const QRectF box = g.unitRect(region);
    // Where a tile holds its number the square leaves it a band of about 12 px below (the
    // square down to a quarter of the tile); elsewhere it takes 40% of the tile.
    const double side = box.height();
    const double share = numbersFit(g) ? std::clamp((side - 14) / side, 0.25, 0.4) : 0.4;
    const QRectF inner(0, 0, box.width() * share, side * share);
    return inner.translated(box.right() - inner.width() - 1, box.top() + 1);
}

std::vector<NocHeatmapView::TileLabel> NocHeatmapView::tileLabels(const Geometry& g,
                                                                  QFont* font) const {
    std::vector<TileLabel> out;
    const MeshRegions& regions = g.regions;
    if (!m_hw || regions.count() == 0) return out;
    // Tile numbers on meshes up to 12x12 (and on any window zoomed down to single tiles),
    // the busy share too where a box holds two lines; none below a readable 7 px font.
    const bool numbers = regions.single() || (m_hw->meshX <= 12 && m_hw->meshY <= 12);
    const QRectF first = labelRect(g, 0);
    QFont f = font ? *font : this->font();
    const int twoLines = int(std::min(f.pointSizeF() * 96 / 72, first.height() / 2.4));
    const bool both = regions.single() && !liveBestShown() && twoLines >= 8;
    // The largest font (down to 7 px) in which the widest number fits the box.
    const QString widest = both ? QStringLiteral("100%") : QString::number(m_hw->tiles() - 1);
    const int px = fittingPixels(f, first.width(), widest,
                                 both ? twoLines : int(std::min(first.height() * 0.85, 11.0)));
    if (px < 7 || (!numbers && g.unitSize() < 22)) return out;
    for (int r = 0; r < regions.count(); ++r) {
        const RegionLoad load = regions.load(r, m_busy);
        TileLabel l;
        l.rect = labelRect(g, r);
        if (!regions.single())
            l.text = QStringLiteral("%1%").arg(load.meanBusy * 100, 0, 'f', 0);
        else if (both)
            l.text =
                QStringLiteral("%1\n%2%").arg(load.busiestTile).arg(load.meanBusy * 100, 0, 'f', 0);
        else
            l.text = QString::number(load.busiestTile);
        out.push_back(std::move(l));
    }
    if (font) *font = f;
    return out;
}

std::vector<NocHeatmapView::TileLabel> NocHeatmapView::tileLabels() const {
    return tileLabels(geometry(size()), nullptr);
}

std::vector<QRectF> NocHeatmapView::liveBestSquares() const {
    std::vector<QRectF> out;
    if (!liveBestShown()) return out;
    const Geometry g = geometry(size());
    for (int r = 0; r < g.regions.count(); ++r)
        out.push_back(liveBestSquare(g, r));
    return out;
}

void NocHeatmapView::paintUnits(QPainter& p, const Geometry& g, bool selected, bool dim) const {
    const MeshRegions& regions = g.regions;
    for (int r = 0; r < regions.count(); ++r) {
        const QRectF box = g.unitRect(r);
        const RegionLoad load = regions.load(r, m_busy);
        const bool inGroup = regionHasGroup(regions, r);
        QColor c = busyColor(load.meanBusy);
        if (dim && !inGroup) c = c.lighter(115);
        p.setBrush(c);
        const bool sel = selected && inGroup;
        p.setPen(sel ? QPen(QColor(21, 101, 192), 3) : QPen(QColor(120, 120, 120), 1));
        p.drawRect(box);
    }
    QFont small = p.font();
    const auto labels = tileLabels(g, &small);
    p.setFont(small);
    p.setPen(QColor(40, 40, 40));
    for (const TileLabel& l : labels)
        p.drawText(l.rect, Qt::AlignCenter, l.text);
}

void NocHeatmapView::paintLinks(QPainter& p, const Geometry& g, double scale, bool dim) const {
    p.setPen(Qt::NoPen);
    // Thousands of small arrows on a large mesh: drawn without antialiasing, which costs more
    // than they gain at a few pixels (a small mesh keeps its smooth arrows).
    p.save();
    if (zoomable() && g.unitSize() < 24) p.setRenderHint(QPainter::Antialiasing, false);
    for (const LinkShape& s : linkShapes(g)) {
        const double v = linkValue(s.link);
        QColor c = v <= 0 ? QColor(215, 215, 215) : heatColor(v / scale);
        if (dim && !regionHasGroup(g.regions, s.region)) c.setAlpha(70);
        p.setBrush(c);
        p.drawPolygon(s.shape);
    }
    p.restore();
}

// The live best: a blue-edged inner square per tile (region) in its busy colour and, where
// the arrows are wide enough to hold one, a stripe along each, on the same scales.
void NocHeatmapView::paintLiveBest(QPainter& p, const Geometry& g, double scale) const {
    // Small tiles (a 12x12 mesh in a dock) get a solid outline: dashes blur there.
    const bool large = g.unitSize() >= 24;
    const QPen ghostPen(QColor(21, 101, 192), large ? 1.5 : 1.0,
                        large ? Qt::DashLine : Qt::SolidLine);
    const MeshRegions& regions = g.regions;
    for (int r = 0; r < regions.count(); ++r) {
        p.setBrush(busyColor(regions.load(r, m_liveBest->load.busy).meanBusy));
        p.setPen(ghostPen);
        p.drawRect(liveBestSquare(g, r));
    }
    if (!large) return;
    p.setPen(Qt::NoPen);
    const Mesh mesh(*m_hw);
    const std::function<double(int)> value = [this](int l) { return liveBestLinkValue(l); };
    for (const LinkShape& s : linkShapes(g)) {
        const double v = regions.busiest(mesh, s.region, s.dir, s.crossing, value).value;
        // The stripe: the arrow's shape shrunk towards its centre line.
        const QRectF b = s.shape.boundingRect();
        const QPointF mid = b.center();
        const bool horizontal = b.width() >= b.height();
        QTransform shrink;
        shrink.translate(mid.x(), mid.y());
        shrink.scale(horizontal ? 0.7 : 0.3, horizontal ? 0.3 : 0.7);
        shrink.translate(-mid.x(), -mid.y());
        p.setBrush(v <= 0 ? QColor(215, 215, 215) : heatColor(v / scale));
        p.drawPolygon(shrink.map(s.shape));
    }
}

QString NocHeatmapView::zoomHint(const Geometry& g) const {
    if (!zoomable() || m_exporting) return {};
    const TileWindow& w = g.window;
    QString where = w == TileWindow{0, 0, m_hw->meshX, m_hw->meshY}
                        ? tr("%1x%2 tiles").arg(w.w).arg(w.h)
                        : tr("tiles x %1-%2, y %3-%4 of %5x%6")
                              .arg(w.x0)
                              .arg(w.x0 + w.w - 1)
                              .arg(w.y0)
                              .arg(w.y0 + w.h - 1)
                              .arg(m_hw->meshX)
                              .arg(m_hw->meshY);
    if (!g.regions.single())
        where += tr(" in regions of %1x%2 (double-click or wheel: zoom in)")
                     .arg(g.regions.side())
                     .arg(g.regions.side());
    if (!m_zoomBack.empty()) where += tr("; Esc: back, Home: whole mesh");
    return where;
}

void NocHeatmapView::paintLegend(QPainter& p, const QSize& size, const Geometry& g, double maxLink,
                                 bool dim) const {
    const double ly = size.height() - kLegendHeight + 8, lw = std::min(220.0, size.width() * 0.4);
    auto gradientBar = [&](double x, const QString& title, const QString& lo, const QString& hi,
                           auto colorAt) {
        QLinearGradient grad(x, 0, x + lw, 0);
        for (int i = 0; i <= 10; ++i)
            grad.setColorAt(i / 10.0, colorAt(i / 10.0));
        p.setPen(QColor(80, 80, 80));
        p.setBrush(grad);
        p.drawRect(QRectF(x, ly + 16, lw, 10));
        p.setPen(palette().color(QPalette::Text));
        p.drawText(QRectF(x, ly, lw, 14), Qt::AlignLeft | Qt::AlignVCenter, title);
        p.drawText(QRectF(x, ly + 28, lw, 14), Qt::AlignLeft | Qt::AlignVCenter, lo);
        p.drawText(QRectF(x, ly + 28, lw, 14), Qt::AlignRight | Qt::AlignVCenter, hi);
    };
    const double x0 = 12;
    const bool regions = !g.regions.single();
    QString linkTitle = m_utilisation ? tr("link bandwidth utilisation") : tr("link bytes");
    if (regions) linkTitle += tr(" (busiest per side)");
    QString busyTitle = regions ? tr("region busy (mean)") : tr("tile busy");
    if (dim) busyTitle += tr(" (selection only)");
    gradientBar(x0, linkTitle, QStringLiteral("0"),
                m_utilisation ? QStringLiteral("100%") : bytesText(maxLink, -1),
                [](double t) { return heatColor(t); });
    gradientBar(x0 + lw + 24, busyTitle, QStringLiteral("0%"), QStringLiteral("100%"),
                [](double t) { return busyColor(t); });
    QStringList top;
    if (liveBestShown()) top << tr("Blue-edged inner squares: the search's best so far");
    if (const QString hint = zoomHint(g); !hint.isEmpty()) top << hint;
    if (!top.isEmpty()) {
        p.setPen(QColor(21, 101, 192));
        p.drawText(QRectF(x0, 4, size.width() - 2 * x0, 30), Qt::AlignLeft | Qt::TextWordWrap,
                   top.join(QLatin1Char('\n')));
    }
}

void NocHeatmapView::paintTo(QPainter& p, const QSize& size) const {
    p.fillRect(QRect(QPoint(0, 0), size), palette().color(QPalette::Base));
    p.setRenderHint(QPainter::Antialiasing);
    if (!m_doc->hasModel() || !m_hw || !m_eval || m_eval->tileOrder.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(QRect(QPoint(0, 0), size).adjusted(8, 8, -8, -8),
                   Qt::AlignCenter | Qt::TextWordWrap,
                   m_invalidReason.isEmpty() ? tr("No schedule")
                                             : tr("Invalid schedule: %1").arg(m_invalidReason));
        return;
    }
    const Geometry g = geometry(size);
    // Exports leave out the selection (outline, dimming): a view state, not the figure.
    const bool selected = !m_exporting && m_selection->node() >= 0;
    const bool dim = m_filter && selected;

    paintDramBars(p, g);
    paintUnits(p, g, selected, dim);

    // Chiplet boundaries: thick dashed lines between the chiplets, under the links that
    // cross them.
    if (const auto lines = chipletBoundaries(g); !lines.empty()) {
        QPen pen(QColor(90, 60, 140), std::max(2.0, g.cell * 0.06), Qt::DashLine);
        pen.setCapStyle(Qt::FlatCap);
        p.setPen(pen);
        for (const QLineF& l : lines)
            p.drawLine(l);
    }

    // One link scale for the schedule and its live best: the larger maximum of the two.
    double maxLink = m_maxLink;
    if (liveBestShown())
        for (size_t l = 0; l < m_liveBest->eval->linkBytes.size(); ++l)
            maxLink = std::max(maxLink, liveBestLinkValue(int(l)));
    const double scale = m_utilisation ? 1.0 : std::max(1.0, maxLink);
    paintLinks(p, g, scale, dim);
    if (liveBestShown()) paintLiveBest(p, g, scale);
    paintLegend(p, size, g, maxLink, dim);
    if (!m_invalidReason.isEmpty()) {
        p.fillRect(QRect(QPoint(0, 0), size), QColor(255, 255, 255, 150));
        const QRect box(6, 4, size.width() - 12, size.height() / 3);
        p.setPen(QColor(0xc6, 0x28, 0x28));
        p.drawText(box, Qt::AlignTop | Qt::AlignLeft | Qt::TextWordWrap,
                   tr("Invalid schedule: %1\nShowing the last valid schedule, faded.")
                       .arg(m_invalidReason));
    }
}

void NocHeatmapView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    paintTo(p, size());
}

int NocHeatmapView::regionAt(const Geometry& g, const QPointF& pos) const {
    if (!m_hw || !g.mesh.contains(pos)) return -1;
    const int x = g.window.x0 + std::min(g.window.w - 1, int((pos.x() - g.mesh.left()) / g.cell));
    const int y = g.window.y0 + std::min(g.window.h - 1, int((pos.y() - g.mesh.top()) / g.cell));
    const int r = g.regions.regionAt(x, y);
    return r >= 0 && g.unitRect(r).contains(pos) ? r : -1;
}

int NocHeatmapView::tileAt(const QPointF& pos) const {
    const Geometry g = geometry(size());
    const int r = regionAt(g, pos);
    if (r < 0) return -1;
    // A region stands for its busiest tile (the one a click selects the leaf of).
    return g.regions.single() ? g.window.x0 + r % g.regions.columns() +
                                    (g.window.y0 + r / g.regions.columns()) * m_hw->meshX
                              : g.regions.load(r, m_busy).busiestTile;
}

const NocHeatmapView::LinkShape* NocHeatmapView::linkAt(const Geometry& g,
                                                        const QPointF& pos) const {
    for (const LinkShape& s : linkShapes(g)) {
        // The shapes are thin: accept a small neighbourhood.
        const QRectF b = s.shape.boundingRect().adjusted(-2, -2, 2, 2);
        if (b.contains(pos)) return &s;
    }
    return nullptr;
}

QString NocHeatmapView::hoverText(const QPointF& pos) const {
    if (!m_hw || !m_eval || !m_doc->hasModel()) return {};
    const Geometry g = geometry(size());
    const Mesh mesh(*m_hw);
    if (const int r = regionAt(g, pos); r >= 0) {
        const RegionLoad load = g.regions.load(r, m_busy);
        const int t = load.busiestTile;
        const int leaf = m_dominantLeaf[size_t(t)];
        QString who;
        if (leaf >= 0 && leaf < m_tree.size() && m_tree.node(leaf).layer >= 0)
            who = QString::fromStdString(
                m_doc->network()->layers[size_t(m_tree.node(leaf).layer)].name);
        if (g.regions.single())
            return tr("tile %1 (%2,%3)\nbusy %4%\nDRAM bytes %5\nmost time: %6")
                .arg(t)
                .arg(mesh.tileX(t))
                .arg(mesh.tileY(t))
                .arg(m_busy[size_t(t)] * 100, 0, 'f', 1)
                .arg(size_t(t) < m_eval->tileDramBytes.size()
                         ? bytesText(m_eval->tileDramBytes[size_t(t)], -1)
                         : QStringLiteral("-"))
                .arg(who);
        const TileWindow w = g.regions.tilesOf(r);
        double dram = 0;
        for (int y = w.y0; y < w.y0 + w.h; ++y)
            for (int x = w.x0; x < w.x0 + w.w; ++x)
                if (size_t(y * mesh.width() + x) < m_eval->tileDramBytes.size())
                    dram += m_eval->tileDramBytes[size_t(y * mesh.width() + x)];
        return tr("region x %1-%2, y %3-%4 (%5 tiles)\nbusy %6% (mean), busiest tile %7 at "
                  "%8%\nDRAM bytes %9\nmost time on tile %7: %10\ndouble-click to zoom in")
            .arg(w.x0)
            .arg(w.x0 + w.w - 1)
            .arg(w.y0)
            .arg(w.y0 + w.h - 1)
            .arg(load.tiles)
            .arg(load.meanBusy * 100, 0, 'f', 1)
            .arg(t)
            .arg(load.maxBusy * 100, 0, 'f', 1)
            .arg(bytesText(dram, -1), who);
    }
    const LinkShape* s = linkAt(g, pos);
    if (!s) return {};
    const int l = s->link;
    const auto info = mesh.linkInfo(l);
    static const char* dirs[] = {"east", "west", "north", "south"};
    const QString what =
        info.fromDram ? tr("DRAM -> tile %1 (%2 port%3)")
                            .arg(info.tile)
                            .arg(QLatin1String(dirs[info.dir]), interleavedNote(mesh))
        : mesh.isPortLink(l) ? tr("tile %1 -> DRAM (%2 port%3)")
                                   .arg(info.tile)
                                   .arg(QLatin1String(dirs[info.dir]), interleavedNote(mesh))
        : mesh.crossesChiplet(l)
            ? tr("tile %1 -> %2 (inter-chiplet link)")
                  .arg(info.tile)
                  .arg(QLatin1String(dirs[info.dir]))
            : tr("tile %1 -> %2").arg(info.tile).arg(QLatin1String(dirs[info.dir]));
    const QString busiest = g.regions.single()
                                ? QString()
                                : tr("busiest of %1 links across the region's %2 side\n")
                                      .arg(s->links)
                                      .arg(QLatin1String(dirs[s->dir]));
    const double bytes = m_eval->linkBytes[size_t(l)];
    return tr("%1%2\n%3%4")
        .arg(busiest, what, bytesText(bytes, -1),
             m_utilisation ? tr("\nutilisation %1%").arg(linkValue(l) * 100, 0, 'f', 1)
                           : QString());
}

void NocHeatmapView::mouseMoveEvent(QMouseEvent* e) {
    const QString text = hoverText(e->position());
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(e->globalPosition().toPoint(), text, this);
}

void NocHeatmapView::mouseReleaseEvent(QMouseEvent* e) {
    // The release that ends a double-click (a zoom) selects nothing.
    if (std::exchange(m_zoomClick, false)) return;
    if (e->button() != Qt::LeftButton) return;
    const int t = tileAt(e->position());
    if (t < 0) return;
    // A tile runs many nodes over time; a click picks the leaf that keeps it busy longest.
    const int leaf = m_dominantLeaf[size_t(t)];
    if (leaf >= 0 && leaf < m_tree.size())
        m_selection->select(leaf, QString::fromStdString(m_tree.pathOf(leaf)));
}

bool NocHeatmapView::zoomable() const {
    return m_hw && std::max(m_hw->meshX, m_hw->meshY) > MeshRegions::kSmallMeshSide;
}

void NocHeatmapView::setWindow(const TileWindow& w) {
    m_window = w;
    m_shapesValid = false;
    update();
}

void NocHeatmapView::zoomIn(const QPointF& at) {
    if (!zoomable()) return;
    constexpr int kSmallestWindow = 4;
    const Geometry g = geometry(size());
    const TileWindow& w = m_window;
    if (std::max(w.w, w.h) <= kSmallestWindow) return;
    // The tile under the cursor stays under it: the new window is half as wide around it.
    const double fx = std::clamp((at.x() - g.mesh.left()) / g.mesh.width(), 0.0, 1.0);
    const double fy = std::clamp((at.y() - g.mesh.top()) / g.mesh.height(), 0.0, 1.0);
    const int nw = std::max(std::min(w.w, kSmallestWindow), w.w / 2);
    const int nh = std::max(std::min(w.h, kSmallestWindow), w.h / 2);
    const int x0 = std::clamp(int(std::lround(w.x0 + fx * w.w - fx * nw)), 0, m_hw->meshX - nw);
    const int y0 = std::clamp(int(std::lround(w.y0 + fy * w.h - fy * nh)), 0, m_hw->meshY - nh);
    m_zoomBack.push_back(w);
    setWindow({x0, y0, nw, nh});
}

void NocHeatmapView::zoomOut() {
    if (!zoomable()) return;
    if (!m_zoomBack.empty()) {
        const TileWindow w = m_zoomBack.back();
        m_zoomBack.pop_back();
        setWindow(w);
        return;
    }
    const TileWindow& w = m_window;
    const int nw = std::min(m_hw->meshX, w.w * 2), nh = std::min(m_hw->meshY, w.h * 2);
    setWindow({std::clamp(w.x0 - (nw - w.w) / 2, 0, m_hw->meshX - nw),
               std::clamp(w.y0 - (nh - w.h) / 2, 0, m_hw->meshY - nh), nw, nh});
}

void NocHeatmapView::zoomToRegion(int region) {
    const MeshRegions r = regions();
    if (!zoomable() || region < 0 || region >= r.count() || r.single()) return;
    m_zoomBack.push_back(m_window);
    setWindow(r.tilesOf(region));
}

void NocHeatmapView::resetZoom() {
    if (!m_hw) return;
    m_zoomBack.clear();
    setWindow({0, 0, m_hw->meshX, m_hw->meshY});
}

void NocHeatmapView::mouseDoubleClickEvent(QMouseEvent* e) {
    if (e->button() != Qt::LeftButton || !zoomable()) return;
    const Geometry g = geometry(size());
    m_zoomClick = true;
    if (const int r = regionAt(g, e->position()); r >= 0 && !g.regions.single())
        zoomToRegion(r);
    else if (r < 0 && !g.mesh.contains(e->position()))
        resetZoom(); // outside the mesh: all of it again
}

void NocHeatmapView::wheelEvent(QWheelEvent* e) {
    if (!zoomable()) {
        QWidget::wheelEvent(e);
        return;
    }
    if (e->angleDelta().y() > 0)
        zoomIn(e->position());
    else if (e->angleDelta().y() < 0)
        zoomOut();
    e->accept();
}

void NocHeatmapView::keyPressEvent(QKeyEvent* e) {
    if (zoomable() && (e->key() == Qt::Key_Escape || e->key() == Qt::Key_Backspace))
        zoomOut();
    else if (zoomable() && e->key() == Qt::Key_Home)
        resetZoom();
    else
        QWidget::keyPressEvent(e);
}

QString NocHeatmapView::exportTo(const QString& path) {
    const QSize s = size().isEmpty() ? QSize(600, 560) : size();
    m_exporting = true;
    const QString err = exportPainting(path, s, [this](QPaintDevice* dev, QSize sz) {
        QPainter p(dev);
        paintTo(p, sz);
    });
    m_exporting = false;
    return err;
}

} // namespace tilescope::ui
