// The chiplet pipeline-parallel baseline (docs/search.md, "The chiplet baseline"): the
// layer graph reduced to chains, split recursively into pipeline regions at its lightest
// cuts, each region run as pipeline groups (the nodes at one depth), the regions placed
// one after another along the mesh's serpentine order, each on its planned chiplets. It
// builds an RA tree the normal evaluator costs: a root S cut over the regions (their tile
// counts fixed to their chiplets'), each region a T cut over its groups.
#pragma once

#include "eval/evaluator.h"
#include "hw/hardware.h"
#include "model/network.h"
#include "search/strategy.h"
#include "tree/ratree.h"

#include <vector>

namespace tilescope {

// Cycles of an (m x k) * (k x n) product on a w x w systolic array: m k n / w^2 + 2 (w - 1)
// when m or n exceeds w (tiled passes plus one fill and drain), m + k + n - 1 when both fit
// (m, n <= w: one pass, its fill and drain). At m = n = w the two differ by one cycle; the
// array holds the whole product then, so the one-pass form applies.
double systolicCycles(double m, double k, double n, int w);

// A node of the reduced graph: a chain of layers, each but the first reading the previous
// one; each with in-degree and out-degree 1 (one producer layer, one consumer layer) under
// the method's rule.
struct ChipletNode {
    std::vector<int> layers; // in order
    int depth = 0;           // 1 + the deepest node it reads from (0: reads network inputs)
    double macs = 0;         // per sample, all layers (element operations where no MACs)
};

struct ChipletRegion {
    int first = 0, last = 0;              // node range [first, last) of ChipletPlan::nodes
    int chiplets = 1;                     // chiplets (tile groups) it gets
    std::vector<std::vector<int>> groups; // node indices per pipeline group, by depth
};

// One accepted split: cost of the region whole (t0), of its halves (t1, t2) and of the
// transfer between them (t3); a split is made only when t0 > t1 + t2 + t3.
struct ChipletSplit {
    int region = 0; // node index of the first node of the second half
    double t0 = 0, t1 = 0, t2 = 0, t3 = 0;
};

struct ChipletPlan {
    std::vector<ChipletNode> nodes; // ordered by (depth, first layer): a topological order
    std::vector<ChipletRegion> regions;
    std::vector<ChipletSplit> splits;
    int chiplets = 1;   // M
    int npus = 1;       // N: NPUs (tiles) per chiplet the cost counts (1 under WholeChiplet)
    int arrayWidth = 1; // w, of one NPU (of one chiplet under WholeChiplet)
};

// Merges runs of layers with in-degree = out-degree = 1 (counting producer and consumer
// layers) into chains (or, SingleLink, each layer with one producer layer that it alone
// reads into that producer's chain); nodes ordered by (depth, first layer).
std::vector<ChipletNode> reduceChains(const Network& net,
                                      ChipletChains rule = ChipletChains::InOutOne);

// Chiplets of a template: its chiplets (Hardware::chiplets) when it has several; a
// single-chip template is treated as tile groups of 4x4 (the chiplet preset's chiplet), at
// least one.
int chipletCount(const Hardware& hw);
// The bandwidth of the links between chiplets the cost's C term uses: the template's
// inter-chiplet links, or its NoC links on a single-chip template.
double chipletLinkBytesPerCycle(const Hardware& hw);

// The tiles of each of the plan's regions: its chiplets' tiles (on a single-chip template
// the tile groups split the tiles as evenly as they can, the first tiles % M one more).
std::vector<int> chipletRegionTiles(const ChipletPlan& plan, const Hardware& hw);

// The regions and groups for a total batch (deterministic).
ChipletPlan chipletPlan(const Network& net, const Hardware& hw, int totalBatch,
                        const ChipletOptions& options = {});

// The baseline's RA tree: the plan's regions as the children of a root S cut (a root T
// cut when there is one region), each region a T cut over its groups with its tile count
// fixed to its chiplets' (RANode::tiles), a group of several
// nodes an S cut over them, a chain of several layers a T cut. Among the root sub-batch
// counts and the group cut types (S, or T when an S group does not fit) the valid tree of
// lowest cost is kept; an error when none is valid. Past the deadline (a time budget) the
// variants not tried yet are skipped once one is valid.
Result<RATree> chipletBaseline(const Network& net, const Hardware& hw, int totalBatch,
                               const EvalOptions& opt, ChipletPlan* plan = nullptr,
                               Deadline deadline = {}, const ChipletOptions& options = {});

} // namespace tilescope
