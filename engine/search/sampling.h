// Random valid trees for the DRAM boundary view (docs/gui.md): the random search's walk
// (every valid candidate an operator proposes becomes the current tree, engine/search
// baselines), each valid tree it visits a sample with the figures the view plots.
#pragma once

#include "eval/evaluator.h"
#include "hw/hardware.h"
#include "model/network.h"
#include "tree/ratree.h"

#include <cstdint>
#include <functional>
#include <stop_token>
#include <vector>

namespace tilescope {

struct TreeSample {
    RATree tree;
    PicoJoules energy = 0;
    Cycles delay = 0;
    Bytes dramBytes = 0;
    PicoJoules dramEnergy = 0; // the DRAM part of energy
    double dramTimeRatio = 0;  // dram bytes / DRAM bandwidth / delay (1: on the boundary)
    int depth = 0;             // deepest leaf below the root
};

struct SampleConfig {
    int count = 2000;
    int totalBatch = 1;
    std::uint64_t seed = 1;
    Objective objective;
    double minUtilisation = 0.75;
    LayoutChoice layouts; // DRAM layouts on a template with a run model
};

// Delay of the DRAM boundary for a tree moving `dramBytes`: the least time its DRAM
// traffic takes at the template's bandwidth.
Cycles dramBoundaryDelay(const Hardware& hw, Bytes dramBytes);

// Depth of the deepest leaf (the root is depth 0).
int treeDepth(const RATree& t);

// `count` valid trees from the layer-sequential start (that start is the first). progress
// receives (done, count); a stop request ends the walk early with what it has.
std::vector<TreeSample> sampleTrees(const Network& net, const Hardware& hw,
                                    const SampleConfig& config,
                                    const std::function<void(int, int)>& progress = {},
                                    std::stop_token stop = {});

} // namespace tilescope
