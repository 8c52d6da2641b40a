// Compute-in-memory mapping (docs/cost-model.md §8): one tile's share of a conv / matrix
// weight matrix cut into crossbar blocks, the weight programmings of a loop order over
// (spatial chunks, column blocks, row blocks), the order with the fewest programmings under
// the partial-sum buffer, and the contiguous DRAM runs (DMAs) of an input window.
#pragma once

#include "hw/hardware.h"
#include "model/network.h"
#include "util/units.h"

#include <array>
#include <string>
#include <vector>

namespace tilescope {

// The positions as a box (samples x output rows x output columns, positions = their product
// when known) and the input window one output box needs, for the memory accesses of a
// spatial chunk: (h - 1) x stride + span input rows for h output rows, alike for columns.
struct CimSpace {
    Count samples = 0, rows = 0, cols = 0; // 0: the positions are a plain count
    int strideH = 1, strideW = 1, spanH = 1, spanW = 1;
    double pixelBytes = 0; // one input pixel of the tile's input channels
};

// The weight matrix of one tile as crossbar blocks. Columns are output channels,
// weightColumns to a crossbar (then further crossbars, then further cores); rows are input
// channels x kernel, `rows` to a crossbar. Block b = c * nR + r (column c, row block r).
// With groups each group has its own blocks; groups small enough share a crossbar
// block-diagonally (then nR = 1 and a "column block" is a crossbar of packed groups).
struct CimBlocks {
    Count rowBlocks = 1;    // nR
    Count colBlocks = 1;    // nC
    Count positions = 1;    // P: input vectors per invocation (samples x output positions)
    Count rowPositions = 1; // positions of one output row: the default template's spatial tile
    int crossbars = 1;      // X: blocks the tile holds programmed at once
    int weightColumns = 1;  // wc: output channels of one crossbar
    CimSpace space;
    Count blocks() const { return rowBlocks * colBlocks; }
    bool boxed() const {
        return space.samples > 0 && space.samples * space.rows * space.cols == positions;
    }
};

enum class CimLoop : char { Space = 's', Col = 'c', Row = 'r' };

// A loop nest over spatial chunks of `chunk` positions, column blocks and row blocks,
// outermost first. At each iteration the block (r, c) must be programmed in crossbar
// b mod X (direct-mapped: programming it evicts whatever that crossbar held), then
// computes the chunk's positions. The spatial loop either runs over chunks of `chunk` consecutive
// positions (samples, then rows, then columns), or, with `box` set, over boxes of box[0] samples x
// box[1] output rows x box[2] output columns (the method's split loops N_o/N_i, H_o/H_i, W_o/W_i;
// chunk = their product, the last box of each axis shorter).
struct CimOrder {
    std::array<CimLoop, 3> loops{CimLoop::Space, CimLoop::Col, CimLoop::Row};
    Count chunk = 1;
    std::array<Count, 3> box{0, 0, 0};
    bool boxed() const { return box[0] > 0; }
    Count chunks(const CimBlocks& k) const;
    // "s16 c r": the loops outermost first, s with its chunk ("s1x4x28": a box, n x h x w)
    std::string text() const;
};

// Programmings (crossbar writes) of one invocation starting from empty crossbars, closed
// form (docs/cost-model.md §8 derives it).
Count cimProgrammings(const CimBlocks& k, const CimOrder& o);
// Peak partial-sum bytes (int32 accumulators): the positions and columns the loops inside
// the row-block loop cover stay open until the last row block.
Bytes cimPsumBytes(const CimBlocks& k, const CimOrder& o);
// The default template: spatial tiles of one output row outermost (fewer positions when a
// row's partial sums overflow the buffer), then column blocks, then row blocks.
CimOrder cimDefaultOrder(const CimBlocks& k, Bytes psumBuffer);

struct CimChoice {
    CimOrder order;
    Count programmings = 0;
    Bytes psumBytes = 0;
    Bytes inputReads = 0; // input window bytes the cores read from the buffer
};
// Memory accesses of a spatial chunking: every column block reads each chunk's input window
// (halo included) once, nC x the sum of the chunks' windows. Without a box geometry, the
// positions' count times one pixel each.
Bytes cimInputReads(const CimBlocks& k, const CimOrder& o);
// The loop nests of one tile's workload: per kind of nest, its blocks and how many cores
// run one (a single nest with count 1 under tile binding).
using CimNests = std::vector<std::pair<CimBlocks, Count>>;
// An order's cost on the nests: programmings and partial sums summed over them, and (with
// `reads`) the memory accesses.
CimChoice cimOrderCost(const CimNests& nests, const CimOrder& o, bool reads);

class CimRecordBook; // mapping/cim_records.h

// The order (six loop permutations x spatial chunks of P, P/2, ..., 1, one row and the
// largest chunks whose sums fit, and boxes of the halvings of the samples, rows and columns)
// with the fewest programmings whose partial sums fit; ties: the fewer memory accesses
// (cimInputReads), then the smaller partial-sum need.
CimChoice cimBestOrder(const CimBlocks& k, Bytes psumBuffer);
// The same over several nests (per-core binding), taken from `records` when it holds the
// workload and added to it otherwise.
CimChoice cimBestOrder(const CimNests& nests, Bytes psumBuffer, CimRecordBook* records);

// Contiguous runs of a window inside a tensor stored row-major with the last dimension
// innermost (both [b, c, h, w]): a window row narrower than the tensor's is one run per row
// segment; full rows merge into one run per plane, full planes into one per sample, and so on.
Count contiguousRuns(const std::array<Count, 4>& window, const std::array<Count, 4>& tensor);

// One core's share of a tile's work under output-channel binding: its column blocks (c mod
// cores == its index) and what its own loop nest costs, per invocation.
struct CimCoreWork {
    Count colBlocks = 0;
    Count programmings = 0;
    Cycles computeCycles = 0;
    Cycles writeCycles = 0;
    Cycles exposedWrite = 0;
};

// One tile's CIM work for an invocation (mapping/mapper.cpp fills LeafMapping::cim from it).
struct CimTileWork {
    CimBlocks blocks;
    CimChoice best; // programmings summed over the cores' loop nests
    Count defaultProgrammings = 0;
    CimOrder defaultOrder;
    Count passes = 1;         // crossbar passes of the busiest loop nest
    Count footprint = 1;      // crossbars the blocks need to stay programmed (of blocks.crossbars)
    Cycles computeCycles = 0; // crossbar passes x positions x mvm_cycles
    Cycles writeCycles = 0;   // the busiest core's programmings
    Cycles exposedWrite = 0;  // what the invocation waits for (all of it unless double-buffered)
    // Output-channel binding: every core with column blocks, core 0 first (the busiest: its
    // figures are the tile's), each running its own instruction stream (docs/isa.md).
    std::vector<CimCoreWork> cores;
};

// The tile's share: kT output channels in groupsT groups of kgT (groups == 1: groupsT = 1,
// kgT = kT), cg input channels per group, `samples` x outRows x outCols positions. A MatMul
// (operand B produced per sample) programs its B for every sample.
CimTileWork cimTileWork(const Layer& l, const Hardware& hw, Count groupsT, Count kgT, Count cg,
                        Count samples, Count outRows, Count outCols);
// The same for a tile's output box: channels [k0, k1) (the groups and channels per group it
// touches follow from the layer), `samples` x outRows x outCols positions. The mapper sums
// it over the partition's tiles and the generator writes each tile's crossbars with it, so
// both count the same programmings.
CimTileWork cimBoxWork(const Layer& l, const Hardware& hw, Count k0, Count k1, Count samples,
                       Count outRows, Count outCols);
// Energy of programming one crossbar (every cell written).
PicoJoules cimWritePj(const Hardware& hw);
// Weight bytes one crossbar holds.
Bytes cimCrossbarWeightBytes(const Hardware& hw);
// Energy per MAC of a tile (crossbar read on CIM, the MAC array's otherwise).
double macPjOf(const Hardware& hw);

} // namespace tilescope
