#include "hw/mesh.h"

#include <algorithm>
#include <cstdlib>

namespace tilescope {

Mesh::Mesh(const Hardware& hw) : m_x(hw.meshX), m_y(hw.meshY) {
    for (MeshSide s : hw.dramSides) {
        switch (s) {
        case MeshSide::West: m_sides.push_back(West); break;
        case MeshSide::East: m_sides.push_back(East); break;
        case MeshSide::North: m_sides.push_back(North); break;
        case MeshSide::South: m_sides.push_back(South); break;
        }
    }
    const int stripe = std::clamp(hw.stripe, 1, m_x);
    m_order.reserve(size_t(tiles()));
    int stripeIdx = 0;
    for (int x0 = 0; x0 < m_x; x0 += stripe, ++stripeIdx) {
        const int x1 = std::min(m_x, x0 + stripe);
        const bool down = stripeIdx % 2 == 0;
        for (int r = 0; r < m_y; ++r) {
            const int y = down ? r : m_y - 1 - r;
            for (int x = x0; x < x1; ++x) m_order.push_back(tileId(x, y));
        }
    }
}

Mesh::LinkInfo Mesh::linkInfo(int link) const {
    const bool fromDram = link >= tiles() * 4;
    const int l = fromDram ? link - tiles() * 4 : link;
    return {l / 4, Dir(l % 4), fromDram};
}

bool Mesh::isPortLink(int link) const {
    const LinkInfo i = linkInfo(link);
    if (i.fromDram) return true;
    const int x = tileX(i.tile), y = tileY(i.tile);
    return (i.dir == West && x == 0) || (i.dir == East && x == m_x - 1) ||
           (i.dir == North && y == 0) || (i.dir == South && y == m_y - 1);
}

int Mesh::hops(int a, int b) const {
    return std::abs(tileX(a) - tileX(b)) + std::abs(tileY(a) - tileY(b));
}

void Mesh::route(int a, int b, std::vector<int>& out) const {
    int x = tileX(a), y = tileY(a);
    const int bx = tileX(b), by = tileY(b);
    while (x != bx) {
        const Dir d = bx > x ? East : West;
        out.push_back(outLink(tileId(x, y), d));
        x += (d == East) ? 1 : -1;
    }
    while (y != by) {
        const Dir d = by > y ? South : North;
        out.push_back(outLink(tileId(x, y), d));
        y += (d == South) ? 1 : -1;
    }
}

std::pair<Dir, int> Mesh::nearestPort(int tile) const {
    const int x = tileX(tile), y = tileY(tile);
    Dir best = m_sides.empty() ? West : m_sides.front();
    int bestDist = 1 << 30;
    for (Dir s : m_sides) {
        const int d = s == West ? x : s == East ? m_x - 1 - x : s == North ? y : m_y - 1 - y;
        if (d < bestDist) {
            bestDist = d;
            best = s;
        }
    }
    int edge;
    switch (best) {
    case West: edge = tileId(0, y); break;
    case East: edge = tileId(m_x - 1, y); break;
    case North: edge = tileId(x, 0); break;
    default: edge = tileId(x, m_y - 1); break;
    }
    return {best, edge};
}

std::vector<Dir> Mesh::dramSidesOf(const std::vector<int>& tiles) const {
    std::vector<Dir> sides;
    for (int t : tiles) sides.push_back(nearestPort(t).first);
    std::sort(sides.begin(), sides.end());
    sides.erase(std::unique(sides.begin(), sides.end()), sides.end());
    return sides;
}

void Mesh::routeFromDram(int tile, std::vector<int>& out) const {
    auto [side, edge] = nearestPort(tile);
    out.push_back(portInLink(edge, side));
    route(edge, tile, out);
}

void Mesh::routeToDram(int tile, std::vector<int>& out) const {
    auto [side, edge] = nearestPort(tile);
    route(tile, edge, out);
    out.push_back(outLink(edge, side));
}

} // namespace tilescope
