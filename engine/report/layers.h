// Per-leaf traffic against its lower bounds (docs/cost-model.md §2a, §4): what each leaf
// moves across its tile group's boundary (DRAM bytes, NoC bytes in and out) next to the
// least any schedule could move for it, and at the array level what it moves between its
// tiles' buffers and their arrays next to the least any mapping could move there. The result JSON's
// "layers", the CLI and the GUI's Layers table read this one table.
#pragma once

#include "eval/evaluation.h"
#include "hw/hardware.h"
#include "model/network.h"
#include "tree/ratree.h"
#include "util/units.h"

#include <string>
#include <vector>

namespace tilescope {

struct LayerFigures {
    int node = -1, layer = -1;
    std::string name;
    int tiles = 0;               // the leaf's tile group
    std::string partition;       // its partition (LeafMapping::partitionLabel)
    bool namedPartition = false; // it runs the partition it names (NodeFigures)
    int batch = 0;               // samples per invocation
    int invocations = 0;         // B_tot / batch
    Cycles time = 0;             // all invocations: invocation time x invocations
    PicoJoules energy = 0;       // whole run
    // Whole run, as the evaluator counts them: DRAM bytes, NoC pieces received from outside
    // the group, pieces of its output that leave the group, pieces between its own tiles.
    Bytes dramBytes = 0, nocBytesIn = 0, nocBytesOut = 0, nocBytesInside = 0;
    Bytes movedBytes = 0;        // dramBytes + nocBytesIn + nocBytesOut: across the boundary
    Bytes compulsoryBytes = 0;   // what must cross the group's boundary at least once
    Bytes pebbleBoundBytes = 0;  // red-blue pebble bound for the group's buffers
    Bytes ioLowerBoundBytes = 0; // max(compulsory, pebble)
    double ratio = 0;            // moved / ioLowerBound (0 when the bound is 0)
    // The array level (docs/cost-model.md §2a "Two levels"), whole run: bytes between the
    // group's global buffers and its PE arrays / vector units (what its buffer energy is
    // charged for), the least any partition of its outputs over the group could move there
    // (mapping/iobound.h arrayLowerBoundBytes x invocations; positive for every leaf with
    // an input or an output), and their ratio.
    Bytes arrayBytes = 0;
    Bytes arrayLowerBoundBytes = 0;
    double arrayRatio = 0; // arrayBytes / arrayLowerBoundBytes (0 when the bound is 0)
    // Temporal blocking (docs/cost-model.md §2b; NodeFigures): blocks per tile and
    // invocation (1: the slice fits), what they split, why, and the DRAM bytes it adds.
    int blocks = 1;
    std::string blocking, blockingReason;
    Bytes blockingDramBytes = 0;
    // DRAM layouts and runs (a template with a run model; docs/cost-model.md §4b): the
    // layout of each input read from DRAM ("" for the others) and of the output when stored
    // there, its runs over the whole run, and its run efficiency (its DRAM bytes over what
    // the DRAM is held for; 1 without DRAM traffic).
    std::vector<std::string> inputLayouts;
    std::string outputLayout;
    double dramRuns = 0, runEfficiency = 1;
};

// One entry per leaf in tree order; empty when `e` carries no per-node figures for `tree`.
std::vector<LayerFigures> layerFigures(const Evaluation& e, const RATree& tree, const Network& net,
                                       const Hardware& hw);

// What any schedule of `totalBatch` samples reads from or writes to DRAM: every weight
// once, the elements of each network input some layer needs once, each network output
// once (layers without consumers included); nothing of what is kept on chip.
Bytes compulsoryDramBytes(const Network& net, const Hardware& hw, int totalBatch);
// The bytes of the weights the network keeps on chip (Layer::weightsResident): what
// compulsoryDramBytes leaves out for them.
Bytes keptWeightBytes(const Network& net, const Hardware& hw);

} // namespace tilescope
