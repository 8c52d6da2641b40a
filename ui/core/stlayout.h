// The S-T graph's rectangles, laid out once per evaluation (off the GUI thread: tens of
// thousands of intervals). A group's tiles follow the snake order, so one busy interval
// on snake positions [b, b + n) becomes one rectangle per contiguous run of tile ids. A mesh
// of thousands of tiles has its rows in the snake order instead (StRowOrder): a tile group is
// then one run of rows and each interval one rectangle. Where rows would be too thin to read,
// a grouped layout draws consecutive rows (a compact part of the mesh) as one.
#pragma once

#include "eval/evaluation.h"
#include "hw/hardware.h"
#include "tree/ratree.h"

#include <QString>
#include <QStringList>
#include <memory>
#include <vector>

namespace tilescope::ui {

// Which tile each row of the S-T graph shows.
struct StRowOrder {
    // Row r shows tile tileOfRow[r]; empty: tile r (rows by tile id).
    std::vector<int> tileOfRow;
    // Rows group into runs of a divisor of this many or a power-of-two multiple of it (a mesh
    // row by tile id, a stripe of the snake order), so a group is a compact part of the mesh;
    // 0: the whole mesh.
    int period = 0;
    bool snake() const { return !tileOfRow.empty(); }
    // By tile id on meshes up to MeshRegions::kSmallMeshSide tiles a side, as always; on
    // larger ones the snake order (Mesh::snakeOrder), in which tile groups are contiguous.
    static StRowOrder forHardware(const Hardware& hw);
};

struct StRect {
    double start = 0, end = 0; // cycles
    int tile0 = 0, tile1 = 0;  // contiguous rows [tile0, tile1] (tile ids unless StRowOrder::snake)
    int layer = -1;
    int node = -1;           // leaf node id in the evaluated tree
    int interval = -1;       // index into Evaluation::intervals; -1 for a simulated one
    float y0 = 0, y1 = 1;    // the part of the rows' height it covers (thin transfer bars)
    quint32 instruction = 0; // simulated: the instruction id
    int covered = 0;         // grouped layouts: tiles of its rows it covers (0: not grouped)
};

class ProgramRun;

class StLayout {
  public:
    // Rectangles sorted by start; `shortNames` (per layer) feed the labels.
    static std::shared_ptr<const StLayout> build(std::shared_ptr<const Evaluation> eval, int tiles,
                                                 QStringList shortNames, StRowOrder rows = {});

    // The simulator's replay of a generated program on the same axes: COMPUTE as full
    // rows, LOAD as a thin bar at the top of the row and STORE / SEND at the bottom. Nodes
    // are the leaves of `tree` (the tree the program was generated from).
    static std::shared_ptr<const StLayout> fromSimulation(std::shared_ptr<const ProgramRun> run,
                                                          int tiles, QStringList shortNames,
                                                          const RATree& tree, StRowOrder rows = {});

    // Rows of `rowTiles` consecutive tile ids ([k x rowTiles, (k + 1) x rowTiles)): each
    // rectangle becomes one per row it touches (full rows in between as one), an evaluator
    // interval's pieces in one row become one that says how many of the row's tiles it
    // covers and is drawn that part of the row high (a quarter at least: one busy tile shows).
    std::shared_ptr<const StLayout> grouped(int rowTiles) const;
    // Tile ids per row: 1 unless grouped.
    int rowTiles() const { return m_rowTiles; }
    const StRowOrder& rowOrder() const { return m_order; }
    int tileOfRow(int row) const {
        return m_order.snake() && row >= 0 && row < int(m_order.tileOfRow.size())
                   ? m_order.tileOfRow[size_t(row)]
                   : row;
    }
    // A row is too thin below kThinRowPx pixels; grouped rows are then made at least
    // kGroupRowPx high.
    static constexpr double kThinRowPx = 2.0;
    static constexpr double kGroupRowPx = 6.0;
    // Tile ids per row at `pixelsPerTile`: 1 while a tile's row is at least kThinRowPx high,
    // else the smallest that reaches kGroupRowPx among the divisors of `period`
    // (StRowOrder::period) and its multiples by powers of two.
    static int rowGroupSize(double pixelsPerTile, int tiles, int period);

    const std::vector<StRect>& rects() const { return m_rects; }
    bool simulated() const { return m_run != nullptr; }
    const Evaluation& evaluation() const { return *m_eval; } // evaluator layouts only
    const ProgramRun* run() const { return m_run.get(); }    // simulated layouts only
    const QStringList& shortNames() const { return m_names; }
    int tiles() const { return m_tiles; }
    double endCycle() const { return m_end; }
    double longest() const { return m_longest; } // longest rectangle, bounds range queries
    // Index of the first rectangle that may overlap cycles >= c (binary search on start).
    size_t firstVisible(double c) const;
    // The topmost rectangle containing (cycle, tile), or -1.
    int hit(double cycle, int tile) const;
    // Blocks per tile of the rectangle's leaf (NodeFigures::blocks; docs/cost-model.md §2b):
    // above 1 its slice does not fit the buffer and the leaf works through it in blocks.
    // 1 for a simulated rectangle (one instruction).
    int blocksOf(const StRect& r) const;
    // Contiguous runs of tile ids of snake positions [begin, begin + count).
    static std::vector<std::pair<int, int>> tileRuns(const std::vector<int>& tileOrder, int begin,
                                                     int count);

  private:
    void finish(); // sorts by start, computes the end and the longest rectangle
    std::shared_ptr<const Evaluation> m_eval;
    std::shared_ptr<const ProgramRun> m_run;
    std::vector<StRect> m_rects;
    QStringList m_names;
    int m_tiles = 0;
    int m_rowTiles = 1;
    StRowOrder m_order;
    double m_end = 0, m_longest = 0;
};

} // namespace tilescope::ui
