#include "core/meshregions.h"

#include <algorithm>

namespace tilescope::ui {

int MeshRegions::regionSide(int meshW, int meshH, double tilePitch) {
    if (std::max(meshW, meshH) <= kSmallMeshSide || tilePitch >= kReadablePitch) return 1;
    int side = 2;
    while (side * tilePitch < kReadablePitch && side < std::max(meshW, meshH))
        side *= 2;
    return side;
}

MeshRegions::MeshRegions(int meshW, int meshH, TileWindow window, int side)
    : m_meshW(meshW), m_meshH(meshH), m_window(window), m_side(std::max(1, side)) {
    m_cols = (window.w + m_side - 1) / m_side;
    m_rows = (window.h + m_side - 1) / m_side;
}

int MeshRegions::regionAt(int x, int y) const {
    if (!m_window.contains(x, y)) return -1;
    return (y - m_window.y0) / m_side * m_cols + (x - m_window.x0) / m_side;
}

TileWindow MeshRegions::tilesOf(int region) const {
    if (region < 0 || region >= count()) return {};
    const int x0 = m_window.x0 + region % m_cols * m_side;
    const int y0 = m_window.y0 + region / m_cols * m_side;
    return {x0, y0, std::min(m_side, m_window.x0 + m_window.w - x0),
            std::min(m_side, m_window.y0 + m_window.h - y0)};
}

int MeshRegions::neighbour(int region, Dir dir) const {
    if (region < 0 || region >= count()) return -1;
    const int c = region % m_cols, r = region / m_cols;
    switch (dir) {
    case East:
        return c + 1 < m_cols ? region + 1 : -1;
    case West:
        return c > 0 ? region - 1 : -1;
    case North:
        return r > 0 ? region - m_cols : -1;
    case South:
        return r + 1 < m_rows ? region + m_cols : -1;
    }
    return -1;
}

RegionLoad MeshRegions::load(int region, const std::vector<double>& busy) const {
    RegionLoad out;
    const TileWindow t = tilesOf(region);
    double sum = 0;
    for (int y = t.y0; y < t.y0 + t.h; ++y)
        for (int x = t.x0; x < t.x0 + t.w; ++x) {
            const int tile = y * m_meshW + x;
            const double b = size_t(tile) < busy.size() ? busy[size_t(tile)] : 0.0;
            sum += b;
            ++out.tiles;
            if (out.busiestTile < 0 || b > out.maxBusy) {
                out.maxBusy = b;
                out.busiestTile = tile;
            }
        }
    out.meanBusy = out.tiles > 0 ? sum / out.tiles : 0;
    return out;
}

std::vector<int> MeshRegions::edgeTiles(int region, Dir dir) const {
    std::vector<int> out;
    const TileWindow t = tilesOf(region);
    if (t.w <= 0 || t.h <= 0) return out;
    if (dir == East || dir == West) {
        const int x = dir == East ? t.x0 + t.w - 1 : t.x0;
        for (int y = t.y0; y < t.y0 + t.h; ++y)
            out.push_back(y * m_meshW + x);
    } else {
        const int y = dir == South ? t.y0 + t.h - 1 : t.y0;
        for (int x = t.x0; x < t.x0 + t.w; ++x)
            out.push_back(y * m_meshW + x);
    }
    return out;
}

BoundaryLink MeshRegions::busiest(const Mesh& mesh, int region, Dir dir, Crossing crossing,
                                  const std::function<double(int)>& value) const {
    BoundaryLink out;
    static constexpr int dx[] = {1, -1, 0, 0}, dy[] = {0, 0, -1, 1}; // East, West, North, South
    static constexpr Dir opposite[] = {West, East, South, North};
    for (int tile : edgeTiles(region, dir)) {
        const int x = tile % m_meshW + dx[dir], y = tile / m_meshW + dy[dir];
        const bool beyondMesh = x < 0 || y < 0 || x >= m_meshW || y >= m_meshH;
        int link = -1;
        if (crossing == Crossing::Out)
            link = mesh.outLink(tile, dir);
        else if (crossing == Crossing::In && !beyondMesh)
            link = mesh.outLink(y * m_meshW + x, opposite[dir]);
        else if (crossing == Crossing::FromDram && beyondMesh)
            link = mesh.portInLink(tile, dir);
        if (link < 0) continue;
        const double v = value(link);
        if (out.link < 0 || v > out.value) {
            out.link = link;
            out.value = v;
        }
        ++out.links;
    }
    return out;
}

} // namespace tilescope::ui
