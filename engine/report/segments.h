// Per-segment figures (the depth-one nodes of the RA tree) as every view shows them: the
// metrics panel, the HTML report, the result JSON and the CLI tables read this one table,
// so a segment's time is the same figure everywhere.
#pragma once

#include "eval/evaluation.h"
#include "model/network.h"
#include "tree/ratree.h"
#include "util/units.h"

#include <string>
#include <vector>

namespace tilescope {

struct SegmentFigures {
    int node = -1;
    std::string path; // "0", "1", ... (RATree::pathOf)
    NodeType type = NodeType::Leaf;
    std::string firstLayer, lastLayer; // full layer names
    size_t layers = 0;
    // The root T cut runs each segment once per root sub-batch: B_tot / b_i invocations.
    int invocations = 1;
    Cycles timePerInvocation = 0;
    Cycles time = 0; // all invocations
    // When its first invocation starts, and what it adds to the delay over all its
    // invocations (Evaluation::segmentShare): segments overlap, so their times add up to
    // more than the delay and their shares to the delay (docs/cost-model.md §5).
    Cycles start = 0, share = 0;
    PicoJoules energy = 0; // all invocations
    Bytes dramBytes = 0;   // all invocations
    Bound bound = Bound::Compute;
};

// Empty when `e` carries no per-node figures for `tree`.
std::vector<SegmentFigures> segmentFigures(const Evaluation& e, const RATree& tree,
                                           const Network& net);

} // namespace tilescope
