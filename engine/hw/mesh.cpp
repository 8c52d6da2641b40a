#include "hw/mesh.h"

#include <algorithm>
#include <cstdlib>
#include <tuple>

namespace tilescope {

Mesh::Mesh(const Hardware& hw)
    : m_x(hw.meshX), m_y(hw.meshY), m_nocBytesPerCycle(hw.nocBytesPerCycle),
      m_dramBytesPerCycle(hw.dramBytesPerCycle), m_runs(dramRunModel(hw)), m_cw(m_x), m_ch(m_y),
      m_interBytesPerCycle(hw.chiplets.linkBytesPerCycle), m_nocPj(hw.energy.nocPjPerBitHop),
      m_interPj(hw.chiplets.pjPerBitHop) {
    m_tileX.resize(size_t(std::max(0, tiles())));
    m_tileY.resize(size_t(std::max(0, tiles())));
    for (int t = 0; t < tiles(); ++t)
        m_tileX[size_t(t)] = t % m_x, m_tileY[size_t(t)] = t / m_x;
    initChiplets(hw.chiplets);
    m_portLink.assign(size_t(std::max(0, linkCount())), 0);
    for (int l = 0; l < linkCount(); ++l) {
        const LinkInfo i = linkInfo(l);
        const int x = tileX(i.tile), y = tileY(i.tile);
        m_portLink[size_t(l)] = i.fromDram || (i.dir == West && x == 0) ||
                                (i.dir == East && x == m_x - 1) || (i.dir == North && y == 0) ||
                                (i.dir == South && y == m_y - 1);
    }
    for (MeshSide s : hw.dramSides) {
        switch (s) {
        case MeshSide::West:
            m_sides.push_back(West);
            break;
        case MeshSide::East:
            m_sides.push_back(East);
            break;
        case MeshSide::North:
            m_sides.push_back(North);
            break;
        case MeshSide::South:
            m_sides.push_back(South);
            break;
        }
    }
    if (hw.dramInterleaved)
        for (Dir s : m_sides) {
            const bool column = s == West || s == East; // the side runs down a column
            for (int i = 0; i < (column ? m_y : m_x); ++i)
                m_ports.emplace_back(s, s == West    ? tileId(0, i)
                                        : s == East  ? tileId(m_x - 1, i)
                                        : s == North ? tileId(i, 0)
                                                     : tileId(i, m_y - 1));
        }
    m_sidesSorted = m_sides;
    std::sort(m_sidesSorted.begin(), m_sidesSorted.end());
    m_sidesSorted.erase(std::unique(m_sidesSorted.begin(), m_sidesSorted.end()),
                        m_sidesSorted.end());
    // A STORE's routes to every port, per tile, while that stays small (16 tiles x 8 ports
    // on edge); a 32 x 32 mesh with 128 ports would keep millions.
    if (interleaved() && size_t(tiles()) * m_ports.size() <= kStoreTableEntries) {
        std::vector<int> r;
        std::vector<std::pair<int, double>> shares;
        m_storeAt.assign(1, 0);
        for (int t = 0; t < tiles(); ++t) {
            r.clear();
            routeToDram(t, r);
            dramLinkShares(r, shares);
            m_storeShares.insert(m_storeShares.end(), shares.begin(), shares.end());
            m_storeAt.push_back(m_storeShares.size());
            m_storeSlowness.push_back(slownessOf(shares));
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
            for (int x = x0; x < x1; ++x)
                m_order.push_back(tileId(x, y));
        }
    }
}

void Mesh::initChiplets(const ChipletLinks& c) {
    // parseHardware rejects chiplet counts that do not divide the mesh; a hand-built
    // template that does anyway is treated as one chiplet.
    if (c.count() <= 1 || c.x < 1 || c.y < 1 || m_x % c.x != 0 || m_y % c.y != 0) return;
    m_chiplets = true;
    m_cw = m_x / c.x;
    m_ch = m_y / c.y;
    m_interSlowness = m_nocBytesPerCycle / std::max(1e-9, m_interBytesPerCycle);
    m_linkClass.assign(size_t(linkCount()), 0);
    for (int t = 0; t < tiles(); ++t) {
        const int x = tileX(t), y = tileY(t);
        const bool east = x + 1 < m_x && (x + 1) % m_cw == 0;
        const bool west = x > 0 && x % m_cw == 0;
        const bool south = y + 1 < m_y && (y + 1) % m_ch == 0;
        const bool north = y > 0 && y % m_ch == 0;
        m_linkClass[size_t(outLink(t, East))] = east;
        m_linkClass[size_t(outLink(t, West))] = west;
        m_linkClass[size_t(outLink(t, South))] = south;
        m_linkClass[size_t(outLink(t, North))] = north;
    }
}

Mesh::LinkInfo Mesh::linkInfo(int link) const {
    const bool fromDram = link >= tiles() * 4;
    const int l = fromDram ? link - tiles() * 4 : link;
    return {l / 4, Dir(l % 4), fromDram};
}

double Mesh::linkCapacity(int link) const {
    if (!isPortLink(link)) return crossesChiplet(link) ? m_interBytesPerCycle : m_nocBytesPerCycle;
    const Dir side = linkInfo(link).dir;
    const int portTiles = (side == West || side == East) ? m_y : m_x;
    const int sides = std::max<int>(1, int(m_sides.size()));
    return m_dramBytesPerCycle / sides / std::max(1, portTiles);
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
    case West:
        edge = tileId(0, y);
        break;
    case East:
        edge = tileId(m_x - 1, y);
        break;
    case North:
        edge = tileId(x, 0);
        break;
    default:
        edge = tileId(x, m_y - 1);
        break;
    }
    return {best, edge};
}

std::vector<Dir> Mesh::dramSidesOf(const std::vector<int>& tiles) const {
    std::vector<Dir> sides;
    if (interleaved()) return tiles.empty() ? sides : m_sidesSorted;
    for (int t : tiles)
        sides.push_back(nearestPort(t).first);
    std::sort(sides.begin(), sides.end());
    sides.erase(std::unique(sides.begin(), sides.end()), sides.end());
    return sides;
}

void Mesh::routeFromDram(int tile, std::vector<int>& out) const {
    for (const auto& [side, edge] : m_ports) {
        out.push_back(portInLink(edge, side));
        route(edge, tile, out);
    }
    if (interleaved()) return;
    auto [side, edge] = nearestPort(tile);
    out.push_back(portInLink(edge, side));
    route(edge, tile, out);
}

void Mesh::routeToDram(int tile, std::vector<int>& out) const {
    for (const auto& [side, edge] : m_ports) {
        route(tile, edge, out);
        out.push_back(outLink(edge, side));
    }
    if (interleaved()) return;
    auto [side, edge] = nearestPort(tile);
    route(tile, edge, out);
    out.push_back(outLink(edge, side));
}

void Mesh::dramLinkShares(std::span<const int> route,
                          std::vector<std::pair<int, double>>& out) const {
    thread_local std::vector<int> sorted;
    sorted.assign(route.begin(), route.end());
    std::sort(sorted.begin(), sorted.end());
    out.clear();
    const double share = dramShare();
    for (size_t i = 0; i < sorted.size();) {
        size_t j = i;
        while (j < sorted.size() && sorted[j] == sorted[i])
            ++j;
        out.emplace_back(sorted[i], interleaved() ? double(j - i) * share : 1.0);
        i = j;
    }
}

std::span<const std::pair<int, double>> Mesh::storeShares(int tile, double& slowness) const {
    if (!m_storeAt.empty()) {
        slowness = m_storeSlowness[size_t(tile)];
        return {m_storeShares.data() + m_storeAt[size_t(tile)],
                m_storeAt[size_t(tile) + 1] - m_storeAt[size_t(tile)]};
    }
    thread_local std::vector<int> r;
    thread_local std::vector<std::pair<int, double>> shares;
    r.clear();
    routeToDram(tile, r);
    dramLinkShares(r, shares);
    slowness = slownessOf(shares);
    return shares;
}

double Mesh::slownessOf(std::span<const std::pair<int, double>> shares) const {
    double s = 0.0;
    for (const auto& [l, share] : shares)
        s = std::max(s, share * linkSlowness(l));
    return s;
}

double Mesh::dramSlowness(std::span<const int> route) const {
    if (!interleaved()) return routeSlowness(route);
    thread_local std::vector<std::pair<int, double>> shares;
    dramLinkShares(route, shares);
    return slownessOf(shares);
}

namespace {
// Appends `count` links from `first`, `step` apart: a straight run of an X-then-Y route
// (outLink numbers a row's links 4 apart and a column's 4 x width apart).
void appendRun(std::vector<int>& out, int first, int step, int count) {
    if (count <= 0) return;
    const size_t at = out.size();
    out.resize(at + size_t(count));
    int* o = out.data() + at;
    for (int i = 0; i < count; ++i, first += step)
        o[i] = first;
}
} // namespace

void Mesh::multicastRoute(int a, const std::vector<int>& dsts, std::vector<int>& out) const {
    if (dsts.empty()) return;
    const int sx = tileX(a), sy = tileY(a);
    const int row = 4, column = 4 * m_x; // outLink steps along a row and down a column
    if (dsts.size() == 1) {              // one destination: the X-then-Y route, in the same order
        const int dx = tileX(dsts[0]), dy = tileY(dsts[0]);
        appendRun(out, outLink(a, East), row, dx - sx);
        appendRun(out, outLink(a, West), -row, sx - dx);
        appendRun(out, outLink(tileId(dx, sy), South), column, dy - sy);
        appendRun(out, outLink(tileId(dx, sy), North), -column, sy - dy);
        return;
    }
    // Along the source row to the westmost and eastmost destination column, then down
    // and up each destination column from the source row.
    int minX = sx, maxX = sx;
    // Per column: min y, max y (from the source row), and whether a destination lies there
    // (scratch: this runs once per transfer while the evaluator costs a placement; `used`
    // is all zero between calls, the columns' spans set as a column is first met).
    thread_local std::vector<std::pair<int, int>> col;
    thread_local std::vector<char> used;
    if (used.size() < size_t(m_x)) col.resize(size_t(m_x)), used.resize(size_t(m_x), 0);
    for (int d : dsts) {
        const int x = tileX(d), y = tileY(d);
        minX = std::min(minX, x), maxX = std::max(maxX, x);
        auto& c = col[size_t(x)];
        if (!used[size_t(x)]) c = {sy, sy}, used[size_t(x)] = 1;
        c.first = std::min(c.first, y), c.second = std::max(c.second, y);
    }
    appendRun(out, outLink(a, East), row, maxX - sx);
    appendRun(out, outLink(a, West), -row, sx - minX);
    for (int x = minX; x <= maxX; ++x) {
        if (!used[size_t(x)]) continue;
        used[size_t(x)] = 0;
        const int t = tileId(x, sy);
        appendRun(out, outLink(t, South), column, col[size_t(x)].second - sy);
        appendRun(out, outLink(t, North), -column, sy - col[size_t(x)].first);
    }
}

void Mesh::multicastFromDram(const std::vector<int>& dsts, std::vector<int>& out) const {
    if (interleaved()) { // one tree from every port, each carrying its share
        if (dsts.empty()) return;
        for (const auto& [side, edge] : m_ports) {
            out.push_back(portInLink(edge, side));
            multicastRoute(edge, dsts, out);
        }
        return;
    }
    // One tree per port the destinations enter by.
    thread_local std::vector<std::tuple<int, int, int>> byPort; // (edge tile, side, destination)
    thread_local std::vector<int> group;
    byPort.clear();
    for (int d : dsts) {
        auto [side, edge] = nearestPort(d);
        byPort.emplace_back(edge, int(side), d);
    }
    std::sort(byPort.begin(), byPort.end());
    for (size_t i = 0; i < byPort.size();) {
        const auto [edge, side, d0] = byPort[i];
        group.clear();
        for (;
             i < byPort.size() && std::get<0>(byPort[i]) == edge && std::get<1>(byPort[i]) == side;
             ++i)
            group.push_back(std::get<2>(byPort[i]));
        out.push_back(portInLink(edge, Dir(side)));
        multicastRoute(edge, group, out);
    }
}

} // namespace tilescope
