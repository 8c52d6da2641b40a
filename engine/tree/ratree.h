// The Resource Allocation tree (docs/method.md §2): leaves are layers, S cuts split their tile
// group among the children, T cuts run the children one after another on the whole group. A value
// type (an arena of nodes) so the search can copy and mutate candidates cheaply.
#pragma once

#include "model/network.h"
#include "util/result.h"

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

enum class NodeType { Leaf, S, T };

const char* toString(NodeType t); // "leaf", "S", "T"

// A partition's factors: output channels K, batch B, rows H, columns W, input-channel
// parts C (RANode::partition; all 0: none named).
using PartitionFactors = std::array<int, 5>;
// As the tree text writes it: "K4B1H2W2", "K2B1H2W2C2" (C only above 1).
std::string partitionToken(const PartitionFactors& p);
// Parses partitionToken's form; false when it is not one (each factor a positive integer).
bool parsePartitionToken(std::string_view s, PartitionFactors& out);

struct RANode {
    NodeType type = NodeType::Leaf;
    int layer = -1;      // leaf: index into Network::layers
    int batch = 1;       // b_i: samples per invocation of this node
    int subBatch = 1;    // sb_i: cuts split b_i into sb_i sub-batches; leaves keep 1
    bool pinned = false; // the search never changes a pinned node (nor its subtree)
    // The top node of a copy of a repeated block (tree/repetition.h): held like a pinned
    // node, it follows the first block's subtree whenever the blocks are tied again.
    bool tied = false;
    // A child of an S cut: its tile count, fixed (the chiplet baseline's regions on their
    // planned chiplets). Used when every child of the cut has one and they sum to the cut's
    // tiles; otherwise, and by default (0), the evaluator's min-max allocation.
    int tiles = 0;
    // A leaf: the partition it runs, named by its factors (K, B, H, W, input-channel parts)
    // when it is one of the leaf's alternatives on the tiles it gets (Mapper::alternatives;
    // docs/cost-model.md §2, "Alternative partitions"); all 0, or not among them: the
    // mapper's own choice.
    PartitionFactors partition{};
    int parent = -1;
    std::vector<int> children;

    bool isCut() const { return type != NodeType::Leaf; }
    bool held() const { return pinned || tied; } // no edit changes it or its subtree
};

class RATree {
  public:
    std::vector<RANode> nodes; // arena; after every edit nodes are in pre-order, root = 0
    int root = -1;

    const RANode& node(int id) const { return nodes[size_t(id)]; }
    RANode& node(int id) { return nodes[size_t(id)]; }
    int size() const { return int(nodes.size()); }
    bool empty() const { return root < 0; }

    // Root T cut over every layer in network order with the given batch, sub-batch 1.
    static RATree layerSequential(const Network& net, int batch);

    std::vector<int> leavesInOrder(int from = -1) const;    // layer ids, left to right
    std::vector<int> leafNodesInOrder(int from = -1) const; // their leaf node ids
    // The tile counts S cut `cut`'s children fix (RANode::tiles), in child order, when every
    // child has one and they add up to the cut's `tiles`; false otherwise (the evaluator's
    // min-max allocation applies).
    bool fixedTiles(int cut, int tiles, std::vector<int>& out) const;
    std::vector<int> layersUnder(int id) const; // layer ids, left to right
    int leafOf(int layer) const;                // node id of the leaf, -1 if none
    int depth(int id) const;
    // Child index path from the root, e.g. "/0/2"; the root is "/".
    std::string pathOf(int id) const;
    int nodeAtPath(const std::string& path) const; // -1 when no such node
    // Recompute batches top-down: child batch = parent batch / parent sub-batch count.
    void propagateBatches();
    // Renumber in pre-order (root = 0). Call after structural edits.
    void compact();
    // True if id is pinned or tied, or lies under a pinned or tied cut.
    bool frozen(int id) const;
    // The nearest pinned or tied node among id and its ancestors, -1 if none (names the
    // culprit when an edit is refused).
    int pinnedAncestor(int id) const;
    // Position of id among its parent's children; -1 for the root.
    int childIndex(int id) const;
    // True if id lies in the subtree of ancestor (a node contains itself).
    bool contains(int ancestor, int id) const;
    // True if id is a valid arena index reachable from the root through parent links.
    bool attached(int id) const;

    bool operator==(const RATree& o) const;
};

// Validity rules of docs/method.md §2 that need only the network (tile allocation and buffers are
// checked by the analyzer). Returns the broken rule naming the node, or nullopt.
std::optional<Error> validateStructure(const RATree& t, const Network& net, int totalBatch);

// Tree text format of the reference code: one node per line, tab-indented by depth;
// cuts "S b/sb" or "T b/sb", leaves "<layer name> b". Extra tokens after these (the
// reference code's print_struct dumps) are ignored. Blank lines and '#' comments skipped.
// A pinned node carries the token "pinned" after its batch (docs/tree-format.md).
std::string treeToText(const RATree& t, const Network& net);
// The same format for the subtree at id, its first line unindented (pinned-subtree
// comparisons, copy of a subtree in the GUI).
std::string subtreeToText(const RATree& t, const Network& net, int id);
Result<RATree> parseTreeText(const std::string& text, const Network& net, const std::string& file);

// Edit operations shared by the search and the GUI. Each returns the new (compacted,
// batch-propagated, structurally valid) tree or an Error whose message is the reason.
// Node ids refer to the input tree; the input is never changed.
// Pinning (docs/tree-format.md): an op is refused ("node /0/1 is pinned") when it would
// change a frozen node's type, sub-batch count, children or their order, move a pinned
// node to another parent or past a sibling, or change the batch of any pinned node.
// Single-child cuts are valid, but move() dissolves a cut it leaves with one child and
// removes one it leaves empty, so the search does not accumulate useless levels.
namespace edit {
Result<RATree> swapWithNext(const RATree& t, const Network& net, int node);
// The same with a precomputed Network::transitiveDeps() matrix (deps[i][j]: layer i
// depends on layer j), so the annealer does not rebuild it for every candidate.
Result<RATree> swapWithNext(const RATree& t, const Network& net, int node,
                            const std::vector<std::vector<bool>>& deps);
// Leaf `leaf` and the next leaf in the whole leaf order (left to right, across cut
// boundaries) trade layers; the tree's shape, types and sub-batches stay. Refused when
// `leaf` is the last leaf, either leaf is frozen, or the later layer depends on the earlier.
Result<RATree> swapWithNextLeaf(const RATree& t, const Network& net, int leaf,
                                const std::vector<std::vector<bool>>& deps);
// position: index in newParent's children of the input tree; node goes before the child
// now at that index (== size appends), the convention of QAbstractItemModel::moveRows.
Result<RATree> move(const RATree& t, const Network& net, int node, int newParent, int position);
// Groups children [first, first + count) of parent under a new cut whose batch is the
// parent's child batch; count may be 1 (sub-batching a single child is meaningful).
Result<RATree> wrap(const RATree& t, const Network& net, int parent, int first, int count,
                    NodeType type, int subBatch);
// Non-root cut only; its children take its place and its sub-batch count is lost.
Result<RATree> dissolve(const RATree& t, const Network& net, int cut);
Result<RATree> flip(const RATree& t, const Network& net, int cut);
Result<RATree> setSubBatch(const RATree& t, const Network& net, int cut, int subBatch);
// Never refused for a valid node: pinning is a note for the search, not a schedule change.
Result<RATree> setPinned(const RATree& t, int node, bool pinned);
// Fixes the tile count of a child of an S cut (RANode::tiles; 0 releases it to the
// allocation). Refused for any other node, a negative count or a pinned node.
Result<RATree> setTiles(const RATree& t, int node, int tiles);
// Names the partition a leaf runs (RANode::partition; all 0: the mapper's own choice).
// Refused for a cut, factors that are not all positive (or all 0), or a pinned node.
Result<RATree> setPartition(const RATree& t, int node, const PartitionFactors& p);
} // namespace edit

} // namespace tilescope
