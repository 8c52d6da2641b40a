// Mesh geometry: the stripe-based snake numbering of tiles, directed link indices, and
// dimension-ordered (X then Y) routes, unicast and multicast, including the links that
// connect edge tiles to the DRAM ports.
#pragma once

#include "hw/hardware.h"

#include <algorithm>
#include <span>
#include <utility>
#include <vector>

namespace tilescope {

enum Dir { East = 0, West = 1, North = 2, South = 3 };

class Mesh {
  public:
    explicit Mesh(const Hardware& hw);

    int tiles() const { return m_x * m_y; }
    // The template's DRAM runs (inactive without a run model).
    const DramRunModel& dramRuns() const { return m_runs; }
    int width() const { return m_x; }
    int height() const { return m_y; }
    int tileId(int x, int y) const { return y * m_x + x; }
    int tileX(int id) const { return m_tileX[size_t(id)]; } // id % width()
    int tileY(int id) const { return m_tileY[size_t(id)]; } // id / width()

    // Snake order: stripes of `stripe` columns, left to right; within a stripe rows go
    // top to bottom in even stripes and bottom to top in odd ones (each row of a stripe
    // read left to right), so a range of consecutive positions forms a compact region.
    const std::vector<int>& snakeOrder() const { return m_order; }
    int tileAt(int snakePos) const { return m_order[size_t(snakePos)]; }

    // Directed links: out of tile t towards dir (edge links of tiles on a DRAM side are
    // the port links, tile -> DRAM), and port-in links DRAM -> tile on that side.
    int linkCount() const { return tiles() * 8; }
    int outLink(int tile, Dir d) const { return tile * 4 + d; }
    int portInLink(int tile, Dir side) const { return tiles() * 4 + tile * 4 + side; }
    // Decodes a link index: (tile, dir, fromDram).
    struct LinkInfo {
        int tile;
        Dir dir;
        bool fromDram;
    };
    LinkInfo linkInfo(int link) const;
    // A link between an edge tile and the DRAM (either way). It carries the DRAM's bytes
    // (the per-link figures, its share of the DRAM bandwidth) but is not a NoC hop: the
    // hop-bytes and the NoC energy count mesh links only, the DRAM interface's energy being
    // in the DRAM's per-bit figure (docs/cost-model.md §4).
    bool isPortLink(int link) const { return m_portLink[size_t(link)] != 0; }
    // Bytes per cycle the link carries at most: a mesh link the NoC link bandwidth (the
    // inter-chiplet bandwidth when it crossesChiplet); a port link (isPortLink) its share of
    // the DRAM bandwidth, which the DRAM sides split evenly and each side evenly again among
    // the edge tiles along it.
    double linkCapacity(int link) const;

    // Link classes (Hardware::chiplets): chiplets x chiplets of the mesh, each
    // chipletWidth() x chipletHeight() tiles. One chiplet: no link crosses, every figure
    // below is the NoC's.
    bool hasChiplets() const { return m_chiplets; }
    int chipletWidth() const { return m_cw; }
    int chipletHeight() const { return m_ch; }
    int chipletOf(int tile) const {
        return (tileY(tile) / m_ch) * (m_x / m_cw) + tileX(tile) / m_cw;
    }
    // A mesh link from one chiplet into another (never a port link).
    bool crossesChiplet(int link) const { return m_chiplets && m_linkClass[size_t(link)] != 0; }
    // Energy per bit of one hop over the link: the inter-chiplet figure when it crosses,
    // else the NoC's (port links too).
    double linkPjPerBit(int link) const { return crossesChiplet(link) ? m_interPj : m_nocPj; }
    // Time per byte on the link relative to a NoC link, for the evaluator's "bytes at a
    // link's bandwidth" figures: NoC bandwidth / linkCapacity for an inter-chiplet link,
    // exactly 1 for every other link (port links included: the DRAM bandwidth is a limit
    // of its own). A byte tally x slowness / NoC bandwidth is the link's time.
    double linkSlowness(int link) const { return crossesChiplet(link) ? m_interSlowness : 1.0; }
    // The largest linkSlowness over a route: a transfer moves at its slowest link's
    // bandwidth (1 on a template without chiplets, and for an empty route).
    double routeSlowness(std::span<const int> links) const {
        if (!m_chiplets || links.empty()) return 1.0;
        double s = 0.0;
        for (int l : links)
            s = std::max(s, linkSlowness(l));
        return s;
    }

    int hops(int a, int b) const;
    // Links of the X-then-Y route from tile a to tile b, appended to out.
    void route(int a, int b, std::vector<int>& out) const;
    // The DRAM side nearest to tile t (fewest hops), and the edge tile where it enters.
    std::pair<Dir, int> nearestPort(int tile) const;
    // Memory interleaved over every DRAM port (Hardware::dramInterleaved): a DRAM transfer
    // is split evenly over all the ports, one per edge tile of each DRAM side, and each
    // share takes its own route. The routes below then hold one route (or tree) per port,
    // one after another, so a link appears once per port whose route crosses it; each
    // appearance carries dramShare() of the transfer's bytes. Nearest-port routes carry all
    // of them (a link that two of a multicast's trees share carries them once).
    bool interleaved() const { return !m_ports.empty(); }
    double dramShare() const { return m_ports.empty() ? 1.0 : 1.0 / double(m_ports.size()); }
    // The share of a DRAM transfer's bytes each link of `route` (a routeFromDram,
    // routeToDram or multicastFromDram result) carries, with that link: (link, share),
    // sorted by link, each link once.
    void dramLinkShares(std::span<const int> route, std::vector<std::pair<int, double>>& out) const;
    // What a DRAM transfer's bytes take on its busiest link, relative to a NoC link:
    // routeSlowness() for a nearest-port route, max over its links of share x slowness
    // where interleaved.
    double dramSlowness(std::span<const int> route) const;
    // Where interleaved: a STORE from `tile`'s routes to every port as dramLinkShares gives
    // them, and their dramSlowness. Computed once per tile where tiles x ports is small
    // (every preset), else on each call into per-thread scratch (valid until the next).
    std::span<const std::pair<int, double>> storeShares(int tile, double& slowness) const;
    // The DRAM sides, distinct, sorted by Dir (dramSidesOf where interleaved).
    const std::vector<Dir>& dramSides() const { return m_sidesSorted; }
    // The DRAM sides a transfer is charged to when each side has its own controller
    // (Hardware::dramPortBytesPerCycle): the nearest side of each tile, distinct, sorted by
    // Dir; every DRAM side where interleaved. A STORE passes its own tile, a LOAD from DRAM its
    // destination tiles (it splits its bytes evenly among the sides returned). The evaluator uses
    // the same function.
    std::vector<Dir> dramSidesOf(const std::vector<int>& tiles) const;
    // Links of the path DRAM -> tile (port-in link then the mesh route) and back.
    void routeFromDram(int tile, std::vector<int>& out) const;
    void routeToDram(int tile, std::vector<int>& out) const;
    // Multicast trees: the union of route(a, d) over the tiles d of dsts, and of
    // routeFromDram(d), appended to out in O(dsts + mesh side) rather than one route per
    // destination. A link appears once per tree (the DRAM tree may repeat a link that
    // trees from two ports share; callers that count bytes per link mark them).
    void multicastRoute(int a, const std::vector<int>& dsts, std::vector<int>& out) const;
    void multicastFromDram(const std::vector<int>& dsts, std::vector<int>& out) const;

  private:
    void initChiplets(const ChipletLinks& c);
    // The largest share x linkSlowness over (link, share) pairs (dramSlowness).
    double slownessOf(std::span<const std::pair<int, double>> shares) const;

    int m_x, m_y;
    double m_nocBytesPerCycle, m_dramBytesPerCycle;
    DramRunModel m_runs;
    bool m_chiplets = false;
    int m_cw, m_ch; // chiplet size in tiles (the mesh when there is one chiplet)
    double m_interBytesPerCycle, m_nocPj, m_interPj, m_interSlowness = 1.0;
    std::vector<char> m_linkClass; // per link: 1 = crosses a chiplet boundary (chiplets only)
    std::vector<Dir> m_sides;
    std::vector<std::pair<Dir, int>> m_ports; // interleaved: every (side, edge tile)
    std::vector<Dir> m_sidesSorted;
    std::vector<std::pair<int, double>> m_storeShares; // interleaved: per tile, from m_storeAt
    std::vector<size_t> m_storeAt;
    std::vector<double> m_storeSlowness;
    static constexpr size_t kStoreTableEntries = 1 << 16; // tiles x ports
    std::vector<int> m_order;
    std::vector<int> m_tileX, m_tileY; // per tile id: its column and row (no division per lookup)
    std::vector<char> m_portLink;      // per link: isPortLink
};

} // namespace tilescope
