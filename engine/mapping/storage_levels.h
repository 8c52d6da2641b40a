// Reads and writes of a MAC-array tile's storage levels (Hardware::levels) for one tile's
// loop nest (docs/cost-model.md §2c); the mapper records them per leaf, the evaluator
// charges them at each level's energies.
#pragma once

#include "hw/hardware.h"

#include <array>

namespace tilescope {

// One tile's share of a MAC layer as the level counts see it: a nest that keeps a block of
// weights resident in the weight levels while every output position streams past
// (output channels outermost), the inputs streamed once per such block.
struct TileNest {
    double macs = 0;                                         // MACs of the tile
    double inputBytes = 0, weightBytes = 0, outputBytes = 0; // the tile's I, W, O
    double outChannels = 1;                                  // K_t: what one input element feeds
    double positions = 1;                                    // B_t H_t W_t: what one weight feeds
    double reduction = 1;                                    // C_g R S: what one output sums
    double bytesPerElement = 1;
};

struct LevelAccesses {
    std::array<double, kMaxStorageLevels> reads{}, writes{}; // bytes, per level
};

// The first level holding an operand feeds the MACs: it is read once per fanout MACs (the
// fanout capped by the loop the operand is reused over) and written with what comes from
// outside (inputs once per resident weight block, weights once); an output level next to
// the MACs is written once per fanout MACs (a partial sum) and read as often plus once per
// finished output. Every further level holding the operand passes on what the one before
// it is written with: read and written that many bytes.
LevelAccesses countLevelAccesses(const std::vector<StorageLevel>& levels, const TileNest& t);

// The passes the inputs make through the tile: one per block of weights the weight levels
// hold at once (all of them together), at most one per fanout of output channels.
double inputPasses(const std::vector<StorageLevel>& levels, const TileNest& t);

} // namespace tilescope
