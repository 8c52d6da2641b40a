// Evaluation of a schedule (docs/method.md §3): validity + reason, energy with its breakdown,
// delay, objective E^n D^m, DRAM and NoC figures, per-tile busy intervals (the S-T graph), per-link
// bytes (the NoC heatmap) and per-node figures. Infeasible trees are normal results (valid = false
// with a reason naming the node), never exceptions.
#pragma once

#include "eval/layout_plan.h"
#include "hw/hardware.h"
#include "util/units.h"

#include <array>
#include <string>
#include <vector>

namespace tilescope {

struct Objective {
    double n = 1.0; // energy exponent
    double m = 1.0; // delay exponent
};

struct EnergyBreakdown {
    PicoJoules dram = 0, noc = 0, mac = 0, buffer = 0; // buffer: the global buffer
    PicoJoules weightWrite = 0; // compute-in-memory crossbar programming (0 on MAC arrays)
    // The in-tile storage levels (Hardware::levels, in its order; 0 past the last).
    std::array<PicoJoules, kMaxStorageLevels> levels{};
    PicoJoules inTile() const {
        PicoJoules s = 0;
        for (PicoJoules e : levels)
            s += e;
        return s;
    }
    PicoJoules total() const { return dram + noc + mac + buffer + weightWrite + inTile(); }
};

enum class Bound { Compute, Dram, Noc };
const char* toString(Bound b);

// One rectangle of the S-T graph: a leaf running samples [firstSample, lastSample] on a
// contiguous range of its tile group (tiles listed explicitly: groups follow the snake).
struct BusyInterval {
    int node = -1; // leaf node id in the evaluated tree
    int layer = -1;
    int firstSample = 0, lastSample = 0;
    Cycles start = 0, end = 0;
    int tileBegin = 0, tileCount = 0; // range in snake order; tileOrder maps to tile ids
    PicoJoules energy = 0;
};

struct NodeFigures {
    double npt = 0;    // normalised processing time (cycles per sample on one tile)
    int tileBegin = 0; // tile group: [tileBegin, tileBegin + tileCount) in snake order
    int tileCount = 0;
    int stage = 0;                // pipeline stage within a parent S cut (0 otherwise)
    Cycles time = 0;              // time of one invocation of this node (its batch b_i)
    PicoJoules energy = 0;        // energy of the whole run (all its invocations)
    PicoJoules inTileEnergy = 0;  // of it, the in-tile storage levels' (Hardware::levels)
    Bytes bufferPerTile = 0;      // peak per-tile buffer use (weights + activations)
    Bytes dramBytes = 0;          // DRAM traffic of one invocation
    double utilisation = 1.0;     // S cut: allocation utilisation; leaf: PE-array utilisation
    Bound bound = Bound::Compute; // segments: the bound that dominates
    // Segments: their weights' busiest link (all weight trees added up) / link bandwidth,
    // the W of docs/cost-model.md §5 "Weights in the background".
    Cycles weightLinkCycles = 0;
    // Leaves, over the whole run: DRAM bytes (inputs read, outputs stored, weights); bytes of
    // the NoC pieces it receives from tiles outside its group and of the pieces of its
    // output that reach tiles outside its group (each piece once, whatever its multicast
    // fan-out): what crosses the group's boundary; and the pieces it receives from its own
    // group's tiles (docs/cost-model.md §2a, §4).
    Bytes runDramBytes = 0, runNocInBytes = 0, runNocOutBytes = 0, runNocInsideBytes = 0;
    // Leaves, over the whole run: bytes between its tiles' global buffers and their PE
    // arrays / vector units (LeafMapping::bufferAccessBytes x invocations), the bytes its
    // buffer energy is charged for (docs/cost-model.md §2a "Two levels").
    Bytes runArrayBytes = 0;
    std::vector<char>
        inputViaDram;        // leaves, per layer input: read through DRAM (docs/cost-model.md §3)
    bool writesDram = false; // leaves: its output is stored to DRAM
    std::string partition;   // leaves: the chosen partition, e.g. "K4 B1 H2 W2"
    std::array<int, 4> partitionFactors{1, 1, 1, 1}; // leaves: the same as pk, pb, ph, pw
    // Leaves: it runs the alternative partition it names (RANode::partition), not the
    // mapper's own choice.
    bool namedPartition = false;
    std::string mapping; // leaves: intra-tile tiling and loop order
    // Leaves on compute-in-memory tiles: crossbar programmings over the whole run (and under
    // the default template's loop order), their energy, and the write cycles one
    // invocation's time holds on average.
    Count weightProgrammings = 0, weightProgrammingsDefault = 0;
    PicoJoules weightWriteEnergy = 0;
    Cycles writeCycles = 0;
    // Leaves whose slice does not fit their tiles' buffers work through it in blocks
    // (docs/cost-model.md §2b): blocks per tile and invocation (1: the slice fits), what
    // they split ("8 row blocks"), why (which data did not fit, and what was done instead),
    // and the DRAM bytes of the whole run the blocking adds: what its inputs and output move
    // beyond each input read once and the output stored once (halo rows and operand B read
    // again per block).
    int blocks = 1;
    std::string blocking, blockingReason;
    Bytes runBlockingDramBytes = 0;
    // A blocked leaf reading an input block by block on chip from the streaming chain's
    // member before it (§2b, "Streaming chains"), not from DRAM.
    bool streamedIn = false;
};

struct Evaluation {
    bool valid = false;
    std::string reason; // why invalid: names the rule and the node
    int invalidNode = -1;
    EnergyBreakdown energy;
    Cycles delay = 0;
    double cost = 0; // E^n * D^m (E in pJ, D in cycles)
    Objective objective;
    Bytes dramBytes = 0;
    Bytes nocHopBytes = 0;          // sum over links of bytes crossing it
    Bytes interChipletHopBytes = 0; // of which over inter-chiplet links (Mesh::crossesChiplet)
    double utilisation = 0;         // MAC-array busy fraction over all tiles for the whole run
    Count macs = 0;
    // Compute-in-memory: crossbar programmings of the whole run, and what the default
    // template's loop order would need under the same tree (docs/cost-model.md §8).
    Count weightProgrammings = 0, weightProgrammingsDefault = 0;
    // Leaves working in blocks, and the DRAM bytes blocking adds over the whole run (the sum
    // of NodeFigures::runBlockingDramBytes; counted without detail too).
    int blockedLeaves = 0;
    Bytes blockingDramBytes = 0;
    // DRAM layouts and runs (a template with a run model only: Hardware dram.burst_bytes /
    // run_overhead_cycles; docs/cost-model.md §4b). Per layer: the layout of its output
    // when stored to DRAM and of each input read from DRAM (-1: not in DRAM; else a
    // DramLayout), and its DRAM runs over the whole run. The plan's DRAM time (the sum over
    // segments of the slowest of the DRAM and its ports) and each single layout's for every
    // tensor, the plans the planner visited, and whether it searched them all.
    struct Layouts {
        bool active = false;
        LayoutChoice choice; // what was asked
        std::vector<int> output;
        std::vector<std::vector<int>> inputs;
        std::vector<double> runs;
        std::vector<double> extra; // what the runs cost beyond the bytes (runOverheadBytes)
        double planCycles = 0;
        std::array<double, 4> fixedCycles{};
        long long planNodes = 0;
        bool planExhaustive = true;
    } layouts;

    // Per tree node id, its tile group's size (every valid evaluation, detail or not: the
    // search's partition moves read a leaf's).
    std::vector<int> tileCounts;

    // Detail (filled when EvalOptions::detail is set).
    std::vector<NodeFigures> nodes; // indexed by tree node id
    std::vector<BusyInterval> intervals;
    // Per segment (the root's children when it is a T cut, else the root): when its first
    // invocation starts, and the part of the delay it adds (all invocations: what it runs
    // past every earlier segment invocation's end; where the DRAM floor makes the run
    // longer than the last end, that difference in proportion to the segments' DRAM time).
    // The shares add up to the delay; segments overlap (docs/cost-model.md §5).
    std::vector<Cycles> segmentStart, segmentShare;
    std::vector<int> tileOrder;       // snake position -> tile id (tile id = y * meshX + x)
    std::vector<Bytes> linkBytes;     // indexed by linkIndex() of hw/mesh.h
    std::vector<Bytes> tileDramBytes; // per tile
    bool intervalsTruncated = false;
};

} // namespace tilescope
