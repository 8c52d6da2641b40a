// The NoC heatmap's view of a large mesh as a value: a window of tiles (the whole mesh or the
// part zoomed into), cut into square regions when single tiles would be too small to read,
// with each region's load and the busiest link across each of its sides. Drawing, hover and
// the tests take their figures from here, so what is drawn is what is named.
#pragma once

#include "hw/mesh.h"

#include <functional>
#include <vector>

namespace tilescope::ui {

// A rectangle of tiles in mesh coordinates: columns [x0, x0 + w), rows [y0, y0 + h).
struct TileWindow {
    int x0 = 0, y0 = 0, w = 0, h = 0;
    bool contains(int x, int y) const { return x >= x0 && x < x0 + w && y >= y0 && y < y0 + h; }
    bool operator==(const TileWindow&) const = default;
};

// A region's load: the mean of its tiles' busy fractions (its share of tile time spent
// computing: the colour it is drawn in) and its busiest tile.
struct RegionLoad {
    int tiles = 0;
    double meanBusy = 0;
    double maxBusy = 0;
    int busiestTile = -1;
};

// The busiest link crossing one side of a region in one direction, and how many cross it.
struct BoundaryLink {
    int link = -1; // -1: no link crosses
    double value = 0;
    int links = 0;
};

class MeshRegions {
  public:
    // Meshes up to this many tiles a side always show single tiles, at any size.
    static constexpr int kSmallMeshSide = 16;
    // On a larger mesh a tile (or region) is drawn at no less than this pitch in pixels.
    static constexpr double kReadablePitch = 24;
    // The region side in tiles for a window on a `meshW` x `meshH` mesh drawn at `tilePitch`
    // pixels per tile: 1 on a small mesh or where tiles are readable, else the smallest power
    // of two whose regions reach kReadablePitch.
    static int regionSide(int meshW, int meshH, double tilePitch);

    MeshRegions() = default;
    // `window` cut into squares of `side` x `side` tiles from its top-left corner (those on
    // its right and bottom edges may be narrower).
    MeshRegions(int meshW, int meshH, TileWindow window, int side);

    int side() const { return m_side; }
    bool single() const { return m_side == 1; }
    const TileWindow& window() const { return m_window; }
    int columns() const { return m_cols; }
    int rows() const { return m_rows; }
    int count() const { return m_cols * m_rows; }
    // The region holding tile (x, y), or -1 outside the window.
    int regionAt(int x, int y) const;
    int regionOfTile(int tile) const { return regionAt(tile % m_meshW, tile / m_meshW); }
    TileWindow tilesOf(int region) const;
    // The neighbouring region across the side `dir`, or -1 at the window's edge.
    int neighbour(int region, Dir dir) const;

    // `busy` per tile id (Evaluation order: y x width + x).
    RegionLoad load(int region, const std::vector<double>& busy) const;
    // The links crossing the region's side `dir`: Out leaves its tiles towards dir (into
    // the neighbouring region, out of the window, or into DRAM through the port links at the
    // mesh's edge); In enters its tiles across that side from tiles beyond it (none at the
    // mesh's edge); FromDram enters them from DRAM (port links, only at the mesh's edge).
    enum class Crossing { Out, In, FromDram };
    BoundaryLink busiest(const Mesh& mesh, int region, Dir dir, Crossing crossing,
                         const std::function<double(int)>& value) const;

  private:
    // The region's tiles along its side `dir` (the ones whose links towards dir cross it).
    std::vector<int> edgeTiles(int region, Dir dir) const;

    int m_meshW = 0, m_meshH = 0;
    TileWindow m_window;
    int m_side = 1;
    int m_cols = 0, m_rows = 0;
};

} // namespace tilescope::ui
