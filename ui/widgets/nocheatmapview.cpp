#include "widgets/nocheatmapview.h"

#include "core/bytestext.h"
#include "core/document.h"
#include "core/livebestpreview.h"
#include "core/selectionstate.h"
#include "eval/linkload.h"
#include "hw/mesh.h"
#include "widgets/palette.h"
#include "widgets/plotexport.h"

#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>
#include <QTransform>
#include <algorithm>
#include <cmath>

namespace tilescope::ui {

namespace {
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
    m_busy.assign(size_t(tiles), 0.0);
    m_inGroup.assign(size_t(tiles), false);
    m_dominantLeaf.assign(size_t(tiles), -1);
    m_maxLink = 0;
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
    for (size_t l = 0; l < m_eval->linkBytes.size(); ++l)
        m_maxLink = std::max(m_maxLink, linkValue(int(l)));
    update();
}

void NocHeatmapView::setLiveBest(std::shared_ptr<const LiveBest> best) {
    m_liveBest = std::move(best);
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
    if (!m_liveBest || !m_hw || link < 0 || size_t(link) >= m_liveBest->eval->linkBytes.size())
        return 0;
    if (!m_utilisation) return m_liveBest->eval->linkBytes[size_t(link)];
    return linkUtilisation(*m_liveBest->eval, Mesh(*m_hw), link);
}

double NocHeatmapView::tileBusy(int tile) const {
    return tile >= 0 && size_t(tile) < m_busy.size() ? m_busy[size_t(tile)] : 0.0;
}

double NocHeatmapView::linkValue(int link) const {
    if (!m_eval || link < 0 || size_t(link) >= m_eval->linkBytes.size()) return 0;
    if (!m_utilisation) return m_eval->linkBytes[size_t(link)];
    return linkUtilisation(*m_eval, Mesh(*m_hw), link);
}

std::vector<QLineF> NocHeatmapView::chipletBoundaries(const Geometry& g) const {
    std::vector<QLineF> out;
    if (!m_hw || m_hw->chiplets.count() <= 1) return out;
    const Mesh mesh(*m_hw);
    if (!mesh.hasChiplets()) return out;
    const QRectF& r = g.mesh;
    for (int x = mesh.chipletWidth(); x < mesh.width(); x += mesh.chipletWidth())
        out.emplace_back(r.left() + x * g.cell, r.top(), r.left() + x * g.cell, r.bottom());
    for (int y = mesh.chipletHeight(); y < mesh.height(); y += mesh.chipletHeight())
        out.emplace_back(r.left(), r.top() + y * g.cell, r.right(), r.top() + y * g.cell);
    return out;
}

std::vector<QLineF> NocHeatmapView::chipletBoundaries() const {
    return chipletBoundaries(geometry(size()));
}

QRectF NocHeatmapView::Geometry::tileRect(int x, int y) const {
    const double pad = (cell - tileSize) / 2;
    return QRectF(mesh.left() + x * cell + pad, mesh.top() + y * cell + pad, tileSize, tileSize);
}

NocHeatmapView::Geometry NocHeatmapView::geometry(const QSize& size) const {
    Geometry g;
    const int mx = m_hw ? m_hw->meshX : 1, my = m_hw ? m_hw->meshY : 1;
    // Room for the DRAM bars (west / east / north / south) and the legend below.
    const double margin = 34;
    const double w = size.width() - 2 * margin, h = size.height() - 2 * margin - kLegendHeight;
    g.cell = std::max(8.0, std::min(w / mx, h / my));
    g.tileSize = g.cell * 0.56;
    const double mw = g.cell * mx, mh = g.cell * my;
    g.mesh = QRectF(margin + (w - mw) / 2, margin + (h - mh) / 2, mw, mh);
    return g;
}

std::vector<NocHeatmapView::LinkShape> NocHeatmapView::linkShapes(const Geometry& g) const {
    std::vector<LinkShape> out;
    if (!m_hw || !m_eval) return out;
    const Mesh mesh(*m_hw);
    const double gap = (g.cell - g.tileSize); // space between neighbouring tiles
    const double lane = g.tileSize * 0.16;    // half the distance between the two directions
    const double thick = std::max(2.0, g.tileSize * 0.11);
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
    for (int link = 0; link < mesh.linkCount() && size_t(link) < m_eval->linkBytes.size(); ++link) {
        const auto info = mesh.linkInfo(link);
        const int x = mesh.tileX(info.tile), y = mesh.tileY(info.tile);
        const QRectF r = g.tileRect(x, y);
        const QPointF c = r.center();
        const bool port = mesh.isPortLink(link);
        if (port && std::find(m_hw->dramSides.begin(), m_hw->dramSides.end(),
                              info.dir == West    ? MeshSide::West
                              : info.dir == East  ? MeshSide::East
                              : info.dir == North ? MeshSide::North
                                                  : MeshSide::South) == m_hw->dramSides.end())
            continue; // an edge link towards a side without DRAM carries nothing
        if (info.fromDram) {
            const bool onEdge =
                (info.dir == West && x == 0) || (info.dir == East && x == mesh.width() - 1) ||
                (info.dir == North && y == 0) || (info.dir == South && y == mesh.height() - 1);
            if (!onEdge) continue;
        }
        // Direction vector and the lane offset: the two directions of one physical link sit
        // side by side (to the right of travel).
        QPointF u, n;
        switch (info.dir) {
        case East:
            u = {1, 0};
            break;
        case West:
            u = {-1, 0};
            break;
        case North:
            u = {0, -1};
            break;
        case South:
            u = {0, 1};
            break;
        }
        n = QPointF(-u.y(), u.x());
        const double half = g.tileSize / 2;
        QPointF a = c + u * half, b = a + u * gap;
        if (info.fromDram) std::swap(a, b); // DRAM -> tile: into the tile
        const double off = info.fromDram ? -lane : lane;
        out.push_back({link, arrow(a + n * off, b + n * off)});
    }
    return out;
}

void NocHeatmapView::paintDramBars(QPainter& p, const Geometry& g) const {
    p.setPen(Qt::NoPen);
    for (MeshSide s : m_hw->dramSides) {
        QRectF bar;
        const double t = 14, d = (g.cell - g.tileSize) + 4;
        switch (s) {
        case MeshSide::West:
            bar = QRectF(g.mesh.left() - d - t + (g.cell - g.tileSize) / 2, g.mesh.top(), t,
                         g.mesh.height());
            break;
        case MeshSide::East:
            bar = QRectF(g.mesh.right() + d - (g.cell - g.tileSize) / 2, g.mesh.top(), t,
                         g.mesh.height());
            break;
        case MeshSide::North:
            bar = QRectF(g.mesh.left(), g.mesh.top() - d - t + (g.cell - g.tileSize) / 2,
                         g.mesh.width(), t);
            break;
        case MeshSide::South:
            bar = QRectF(g.mesh.left(), g.mesh.bottom() + d - (g.cell - g.tileSize) / 2,
                         g.mesh.width(), t);
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
    const Mesh mesh(*m_hw);
    // Exports leave out the selection (outline, dimming): a view state, not the figure.
    const bool selected = !m_exporting && m_selection->node() >= 0;
    const bool dim = m_filter && selected;

    paintDramBars(p, g);

    // Tiles.
    QFont small = p.font();
    small.setPointSizeF(std::max(6.0, std::min(small.pointSizeF(), g.tileSize / 4.2)));
    p.setFont(small);
    for (int t = 0; t < mesh.tiles(); ++t) {
        const QRectF r = g.tileRect(mesh.tileX(t), mesh.tileY(t));
        QColor c = busyColor(m_busy[size_t(t)]);
        if (dim && !m_inGroup[size_t(t)]) c = c.lighter(115);
        p.setBrush(c);
        const bool sel = selected && m_inGroup[size_t(t)];
        p.setPen(sel ? QPen(QColor(21, 101, 192), 3) : QPen(QColor(120, 120, 120), 1));
        p.drawRect(r);
        p.setPen(QColor(40, 40, 40));
        if (g.tileSize >= 22)
            p.drawText(r, Qt::AlignCenter,
                       QStringLiteral("%1\n%2%").arg(t).arg(m_busy[size_t(t)] * 100, 0, 'f', 0));
    }

    // Chiplet boundaries: thick dashed lines between the chiplets, under the links that
    // cross them.
    if (const auto lines = chipletBoundaries(g); !lines.empty()) {
        QPen pen(QColor(90, 60, 140), std::max(2.0, g.cell * 0.06), Qt::DashLine);
        pen.setCapStyle(Qt::FlatCap);
        p.setPen(pen);
        for (const QLineF& l : lines)
            p.drawLine(l);
    }

    // Links.
    p.setPen(Qt::NoPen);
    // One link scale for the schedule and its live best: the larger maximum of the two.
    double maxLink = m_maxLink;
    if (liveBestShown())
        for (size_t l = 0; l < m_liveBest->eval->linkBytes.size(); ++l)
            maxLink = std::max(maxLink, liveBestLinkValue(int(l)));
    const double scale = m_utilisation ? 1.0 : std::max(1.0, maxLink);
    for (const LinkShape& s : linkShapes(g)) {
        const double v = linkValue(s.link);
        QColor c = v <= 0 ? QColor(215, 215, 215) : heatColor(v / scale);
        if (dim) {
            const auto info = mesh.linkInfo(s.link);
            if (!m_inGroup[size_t(info.tile)]) c.setAlpha(70);
        }
        p.setBrush(c);
        p.drawPolygon(s.shape);
    }

    // The live best: a blue-edged inner square per tile in its busy colour and, where the
    // arrows are wide enough to hold one, a stripe along each link, on the same scales.
    if (liveBestShown()) {
        // Small tiles (a 12x12 mesh in a dock) get a solid outline: dashes blur there.
        const bool large = g.tileSize >= 24;
        const QPen ghostPen(QColor(21, 101, 192), large ? 1.5 : 1.0,
                            large ? Qt::DashLine : Qt::SolidLine);
        for (int t = 0; t < mesh.tiles(); ++t) {
            const QRectF r = g.tileRect(mesh.tileX(t), mesh.tileY(t));
            const QRectF inner = QRectF(0, 0, r.width() * 0.45, r.height() * 0.45);
            p.setBrush(busyColor(liveBestTileBusy(t)));
            p.setPen(ghostPen);
            p.drawRect(inner.translated(r.right() - inner.width() - 1, r.top() + 1));
        }
        p.setPen(Qt::NoPen);
        for (const LinkShape& s : large ? linkShapes(g) : std::vector<LinkShape>{}) {
            const double v = liveBestLinkValue(s.link);
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

    // Colour scales.
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
    gradientBar(x0, m_utilisation ? tr("link bandwidth utilisation") : tr("link bytes"),
                QStringLiteral("0"),
                m_utilisation ? QStringLiteral("100%") : bytesText(maxLink, -1),
                [](double t) { return heatColor(t); });
    gradientBar(x0 + lw + 24, dim ? tr("tile busy (selection only)") : tr("tile busy"),
                QStringLiteral("0%"), QStringLiteral("100%"),
                [](double t) { return busyColor(t); });
    if (liveBestShown()) {
        p.setPen(palette().color(QPalette::Text));
        p.setPen(QColor(21, 101, 192));
        p.drawText(QRectF(x0, 4, size.width() - 2 * x0, 30), Qt::AlignLeft | Qt::TextWordWrap,
                   tr("Blue-edged inner squares: the search's best so far"));
    }
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

int NocHeatmapView::tileAt(const QPointF& pos) const {
    if (!m_hw) return -1;
    const Geometry g = geometry(size());
    for (int t = 0; t < m_hw->tiles(); ++t)
        if (g.tileRect(t % m_hw->meshX, t / m_hw->meshX).contains(pos)) return t;
    return -1;
}

int NocHeatmapView::linkAt(const QPointF& pos) const {
    const Geometry g = geometry(size());
    for (const LinkShape& s : linkShapes(g)) {
        // The shapes are thin: accept a small neighbourhood.
        const QRectF b = s.shape.boundingRect().adjusted(-2, -2, 2, 2);
        if (b.contains(pos)) return s.link;
    }
    return -1;
}

void NocHeatmapView::mouseMoveEvent(QMouseEvent* e) {
    if (!m_hw || !m_eval || !m_doc->hasModel()) return;
    const Mesh mesh(*m_hw);
    if (int t = tileAt(e->position()); t >= 0) {
        const int leaf = m_dominantLeaf[size_t(t)];
        QString who;
        if (leaf >= 0 && leaf < m_tree.size() && m_tree.node(leaf).layer >= 0)
            who = QString::fromStdString(
                m_doc->network()->layers[size_t(m_tree.node(leaf).layer)].name);
        QToolTip::showText(e->globalPosition().toPoint(),
                           tr("tile %1 (%2,%3)\nbusy %4%\nDRAM bytes %5\nmost time: %6")
                               .arg(t)
                               .arg(mesh.tileX(t))
                               .arg(mesh.tileY(t))
                               .arg(m_busy[size_t(t)] * 100, 0, 'f', 1)
                               .arg(size_t(t) < m_eval->tileDramBytes.size()
                                        ? bytesText(m_eval->tileDramBytes[size_t(t)], -1)
                                        : QStringLiteral("-"))
                               .arg(who),
                           this);
        return;
    }
    if (int l = linkAt(e->position()); l >= 0) {
        const auto info = mesh.linkInfo(l);
        static const char* dirs[] = {"east", "west", "north", "south"};
        const QString what =
            info.fromDram
                ? tr("DRAM -> tile %1 (%2 port)").arg(info.tile).arg(QLatin1String(dirs[info.dir]))
            : mesh.isPortLink(l)
                ? tr("tile %1 -> DRAM (%2 port)").arg(info.tile).arg(QLatin1String(dirs[info.dir]))
            : mesh.crossesChiplet(l)
                ? tr("tile %1 -> %2 (inter-chiplet link)")
                      .arg(info.tile)
                      .arg(QLatin1String(dirs[info.dir]))
                : tr("tile %1 -> %2").arg(info.tile).arg(QLatin1String(dirs[info.dir]));
        const bool util = m_utilisation;
        const double bytes = m_eval->linkBytes[size_t(l)];
        QToolTip::showText(
            e->globalPosition().toPoint(),
            tr("%1\n%2%3")
                .arg(what, bytesText(bytes, -1),
                     util ? tr("\nutilisation %1%").arg(linkValue(l) * 100, 0, 'f', 1) : QString()),
            this);
        return;
    }
    QToolTip::hideText();
}

void NocHeatmapView::mouseReleaseEvent(QMouseEvent* e) {
    if (e->button() != Qt::LeftButton) return;
    const int t = tileAt(e->position());
    if (t < 0) return;
    // A tile runs many nodes over time; a click picks the leaf that keeps it busy longest.
    const int leaf = m_dominantLeaf[size_t(t)];
    if (leaf >= 0 && leaf < m_tree.size())
        m_selection->select(leaf, QString::fromStdString(m_tree.pathOf(leaf)));
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
