// What differs between two RA trees of one network and batch (the current tree and a
// search's best, or two saved schedules): nodes are the same when they have the same kind
// and the same layers under them, so ids and paths may differ. Cuts only in the second tree
// are "added", only in the first "removed"; a node whose parent is a different node is
// "moved"; a cut with another sub-batch count or batch is "changed". With the evaluations'
// per-node figures each row carries the energy and time change of that node (b - a).
#pragma once

#include "eval/evaluation.h"
#include "model/network.h"
#include "tree/ratree.h"

#include <QString>
#include <vector>

namespace tilescope::ui {

struct TreeDiffRow {
    enum Kind { Added, Removed, Moved, Changed };
    Kind kind = Changed;
    int nodeA = -1, nodeB = -1; // ids in the first / second tree (-1: not there)
    QString what;               // "S cut over conv1 .. layer1.0/conv3", "layer2.0/conv1"
    QString detail;             // "sub-batches 2 -> 4", "from /3 to /2/0"
    bool hasFigures = false;
    double energyDelta = 0; // pJ, one invocation of the node
    double timeDelta = 0;   // cycles, one invocation of the node
};

struct TreeDiff {
    std::vector<TreeDiffRow> rows;
    int added = 0, removed = 0, moved = 0, changed = 0;
    bool identical() const { return rows.empty(); }
    QString summary() const; // "2 added, 1 removed, 3 moved, 0 changed"
};

// ea / eb may be null or carry no per-node figures: the rows then have no deltas.
TreeDiff diffTrees(const RATree& a, const Evaluation* ea, const RATree& b, const Evaluation* eb,
                   const Network& net);

const char* toString(TreeDiffRow::Kind k);

} // namespace tilescope::ui
