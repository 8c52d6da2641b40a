// Repeated blocks (docs/search.md, "Repeated blocks"): a network whose layers [first,
// first + count x length) are `count` copies of one block of `length` layers (a decoder's
// transformer blocks), and trees that schedule every copy as the first block is scheduled.
// The tree stays a whole tree over every layer, so its cost is exact and it exports like any
// other; the copies are tied (RANode::tied): edits and the search change the first block, and
// tieBlocks() makes the copies follow.
#pragma once

#include "model/network.h"
#include "tree/ratree.h"

#include <optional>
#include <string>

namespace tilescope {

struct BlockRepetition {
    int first = 0;  // the first block's first layer
    int length = 0; // layers per block
    int count = 0;  // blocks (copies of the first, the first included)
    bool active() const { return count > 1 && length > 0; }
    // -1 before the blocks, count after them, else the block holding `layer`.
    int blockOf(int layer) const {
        if (layer < first) return -1;
        const int b = (layer - first) / std::max(1, length);
        return b < count ? b : count;
    }
    // The layers a search changes in a network of `layers`: all but the copies.
    int searchedLayers(int layers) const {
        return active() ? layers - (count - 1) * length : layers;
    }
    // "32 blocks of 17 layers (layers 0-543)".
    std::string describe() const;
};

// The longest run of consecutive identical blocks in the network (most layers covered, then
// the shortest block): layer j of block k is a copy of layer j of the first block
// (Network::layerClasses, inputs aside), and reads from the same layer of its own block or,
// where the first block reads from outside it, from outside its own. None (count 0) when no
// block repeats.
BlockRepetition findRepetition(const Network& net);

// The tree with its blocks tied: the root T cut's children are those over layers before the
// blocks, then the first block's, then copies of those for every other block (layers shifted
// by a block, RANode::tied set on each copy's top node), then those after the blocks. Copies
// already in `t` are replaced. An error says why it cannot be done: the root is not a T cut,
// or one of its children holds layers of two parts (the first block and another block, say).
Result<RATree> tieBlocks(const RATree& t, const Network& net, const BlockRepetition& rep);

// Whether some node of t is a tied copy (RANode::tied).
bool hasTiedBlocks(const RATree& t);

// Whether t is tied as tieBlocks() would make it (the copies equal to the first block's).
bool isTied(const RATree& t, const Network& net, const BlockRepetition& rep);

} // namespace tilescope
