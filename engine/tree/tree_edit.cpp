// The edit operations shared by the search and the GUI, and the pinning rules they keep
// (docs/tree-format.md, "Edit operations").
#include "tree/ratree.h"

#include <algorithm>

namespace tilescope {

namespace edit {
namespace {

std::optional<Error> checkNode(const RATree& t, int id) {
    if (!t.attached(id)) return Error{"no node with id " + std::to_string(id) + " in the tree"};
    return std::nullopt;
}

Error pinnedError(const RATree& t, int pinned) {
    if (!t.node(pinned).pinned)
        return Error{"node " + t.pathOf(pinned) +
                     " repeats the first block (edit that block: its copies follow it)"};
    return Error{"node " + t.pathOf(pinned) + " is pinned"};
}

// First pinned node in id's subtree (pre-order), -1 if none.
int firstPinnedIn(const RATree& t, int id) {
    thread_local std::vector<int> stack; // scratch: the search checks every move
    stack.assign(1, id);
    while (!stack.empty()) {
        const int x = stack.back();
        stack.pop_back();
        if (t.node(x).pinned) return x;
        for (int c : t.node(x).children)
            stack.push_back(c);
    }
    return -1;
}

// A pinned node keeps its batch too: refuse when the subtree at id would get a new batch.
std::optional<Error> checkBatchChange(const RATree& t, int id, int newBatch) {
    if (t.node(id).batch == newBatch) return std::nullopt;
    const int p = firstPinnedIn(t, id);
    if (p < 0) return std::nullopt;
    return Error{"node " + t.pathOf(p) + " is pinned (its batch would change from " +
                 std::to_string(t.node(p).batch) + ")"};
}

int childBatch(const RANode& n) {
    return n.subBatch > 0 ? n.batch / n.subBatch : n.batch;
}

Result<RATree> finish(RATree w, const Network& net, int totalBatch) {
    w.compact();
    w.propagateBatches();
    if (auto e = validateStructure(w, net, totalBatch)) return *e;
    return w;
}

// After a child left cut x: remove x if it is empty (and repeat upwards), dissolve it if it
// holds a single child. The root is kept whatever its child count. `orig` names nodes.
std::optional<Error> tidyAfterRemoval(RATree& w, const RATree& orig, int x) {
    while (x != w.root) {
        auto& kids = w.node(x).children;
        const int g = w.node(x).parent;
        auto& gk = w.node(g).children;
        const auto at = std::find(gk.begin(), gk.end(), x);
        if (kids.empty()) {
            gk.erase(at);
            x = g;
            continue;
        }
        if (kids.size() == 1) {
            const int r = kids[0];
            if (auto e = checkBatchChange(orig, r, childBatch(orig.node(g)))) return e;
            *at = r;
            w.node(r).parent = g;
        }
        break;
    }
    return std::nullopt;
}

std::string layerName(const Network& net, int l) {
    return "'" + net.layers[size_t(l)].name + "'";
}

} // namespace

Result<RATree> swapWithNext(const RATree& t, const Network& net, int node) {
    return swapWithNext(t, net, node, net.transitiveDeps());
}

Result<RATree> swapWithNext(const RATree& t, const Network& net, int node,
                            const std::vector<std::vector<bool>>& deps) {
    if (auto e = checkNode(t, node)) return *e;
    if (node == t.root) return Error{"the root has no siblings"};
    const int parent = t.node(node).parent;
    const auto& kids = t.node(parent).children;
    const int idx = t.childIndex(node);
    if (idx + 1 >= int(kids.size()))
        return Error{"node " + t.pathOf(node) + " has no next sibling"};
    const int next = kids[size_t(idx) + 1];
    if (const int p = t.pinnedAncestor(node); p >= 0) return pinnedError(t, p);
    if (const int p = t.pinnedAncestor(next); p >= 0) return pinnedError(t, p);
    if (deps.size() != net.layers.size())
        return Error{"dependency matrix has " + std::to_string(deps.size()) +
                     " rows but the network has " + std::to_string(net.layers.size()) + " layers"};

    // The later subtree moves first: none of its layers may need one of the earlier's.
    const auto before = t.layersUnder(node);
    const auto after = t.layersUnder(next);
    for (int a : after)
        for (int b : before)
            if (deps[size_t(a)][size_t(b)])
                return Error{"cannot swap " + t.pathOf(node) + " and " + t.pathOf(next) +
                             ": layer " + layerName(net, a) + " depends on layer " +
                             layerName(net, b)};

    RATree w = t;
    std::swap(w.node(parent).children[size_t(idx)], w.node(parent).children[size_t(idx) + 1]);
    return finish(std::move(w), net, t.node(t.root).batch);
}

Result<RATree> swapWithNextLeaf(const RATree& t, const Network& net, int leaf,
                                const std::vector<std::vector<bool>>& deps) {
    if (auto e = checkNode(t, leaf)) return *e;
    if (t.node(leaf).isCut()) return Error{"node " + t.pathOf(leaf) + " is a cut, not a leaf"};
    if (deps.size() != net.layers.size())
        return Error{"dependency matrix has " + std::to_string(deps.size()) +
                     " rows but the network has " + std::to_string(net.layers.size()) + " layers"};
    const auto order = t.leafNodesInOrder();
    const auto at = std::find(order.begin(), order.end(), leaf);
    if (at == order.end() || at + 1 == order.end())
        return Error{"leaf " + t.pathOf(leaf) + " is the last leaf"};
    const int next = *(at + 1);
    if (const int p = t.pinnedAncestor(leaf); p >= 0) return pinnedError(t, p);
    if (const int p = t.pinnedAncestor(next); p >= 0) return pinnedError(t, p);
    const int a = t.node(leaf).layer, b = t.node(next).layer;
    if (deps[size_t(b)][size_t(a)])
        return Error{"cannot swap " + t.pathOf(leaf) + " and " + t.pathOf(next) + ": layer " +
                     layerName(net, b) + " depends on layer " + layerName(net, a)};
    RATree w = t;
    std::swap(w.node(leaf).layer, w.node(next).layer);
    return finish(std::move(w), net, t.node(t.root).batch);
}

Result<RATree> move(const RATree& t, const Network& net, int node, int newParent, int position) {
    if (auto e = checkNode(t, node)) return *e;
    if (auto e = checkNode(t, newParent)) return *e;
    if (node == t.root) return Error{"the root cannot be moved"};
    const RANode& np = t.node(newParent);
    if (!np.isCut())
        return Error{"node " + t.pathOf(newParent) + " is a leaf; only cuts take children"};
    if (t.contains(node, newParent))
        return Error{"cannot move " + t.pathOf(node) + " into its own subtree " +
                     t.pathOf(newParent)};
    if (position < 0 || position > int(np.children.size()))
        return Error{"position " + std::to_string(position) + " is outside 0.." +
                     std::to_string(np.children.size()) + " for " + t.pathOf(newParent)};
    if (const int p = t.pinnedAncestor(node); p >= 0) return pinnedError(t, p);
    if (const int p = t.pinnedAncestor(newParent); p >= 0) return pinnedError(t, p);
    if (auto e = checkBatchChange(t, node, childBatch(np))) return *e;

    RATree w = t;
    const int oldParent = t.node(node).parent;
    const int idx = t.childIndex(node);
    auto& oldKids = w.node(oldParent).children;
    oldKids.erase(oldKids.begin() + idx);
    if (oldParent == newParent && position > idx) --position;
    auto& newKids = w.node(newParent).children;
    newKids.insert(newKids.begin() + position, node);
    w.node(node).parent = newParent;
    if (oldParent != newParent)
        if (auto e = tidyAfterRemoval(w, t, oldParent)) return *e;
    return finish(std::move(w), net, t.node(t.root).batch);
}

Result<RATree> wrap(const RATree& t, const Network& net, int parent, int first, int count,
                    NodeType type, int subBatch) {
    if (auto e = checkNode(t, parent)) return *e;
    const RANode& p = t.node(parent);
    if (!p.isCut())
        return Error{"node " + t.pathOf(parent) + " is a leaf; it has no children to group"};
    if (type == NodeType::Leaf) return Error{"a new cut must be of type S or T"};
    if (count < 1 || first < 0 || first + count > int(p.children.size()))
        return Error{"children [" + std::to_string(first) + ", " + std::to_string(first + count) +
                     ") are not a non-empty range of the " + std::to_string(p.children.size()) +
                     " children of " + t.pathOf(parent)};
    if (const int pa = t.pinnedAncestor(parent); pa >= 0) return pinnedError(t, pa);
    const int batch = childBatch(p);
    if (subBatch < 1 || batch % subBatch != 0)
        return Error{"sub-batch count " + std::to_string(subBatch) + " does not divide the batch " +
                     std::to_string(batch) + " of the new cut"};
    for (int i = first; i < first + count; ++i) {
        const int c = p.children[size_t(i)];
        if (t.node(c).held()) return pinnedError(t, c);
        if (auto e = checkBatchChange(t, c, batch / subBatch)) return *e;
    }

    RATree w = t;
    RANode cut;
    cut.type = type;
    cut.batch = batch;
    cut.subBatch = subBatch;
    cut.parent = parent;
    auto& kids = w.node(parent).children;
    cut.children.assign(kids.begin() + first, kids.begin() + first + count);
    const int id = w.size();
    for (int c : cut.children)
        w.node(c).parent = id;
    kids.erase(kids.begin() + first + 1, kids.begin() + first + count);
    kids[size_t(first)] = id;
    w.nodes.push_back(std::move(cut));
    return finish(std::move(w), net, t.node(t.root).batch);
}

Result<RATree> dissolve(const RATree& t, const Network& net, int cut) {
    if (auto e = checkNode(t, cut)) return *e;
    const RANode& c = t.node(cut);
    if (!c.isCut())
        return Error{"node " + t.pathOf(cut) + " is a leaf; only cuts can be dissolved"};
    if (cut == t.root) return Error{"the root cannot be dissolved"};
    if (const int p = t.pinnedAncestor(cut); p >= 0) return pinnedError(t, p);
    const int parent = c.parent;
    for (int k : c.children) {
        if (t.node(k).held()) return pinnedError(t, k);
        if (auto e = checkBatchChange(t, k, childBatch(t.node(parent)))) return *e;
    }

    RATree w = t;
    auto& pk = w.node(parent).children;
    const auto at = pk.begin() + t.childIndex(cut);
    const auto moved = w.node(cut).children;
    for (int k : moved)
        w.node(k).parent = parent;
    const auto pos = pk.erase(at);
    pk.insert(pos, moved.begin(), moved.end());
    w.node(cut).children.clear(); // unreachable now; compact() drops it
    return finish(std::move(w), net, t.node(t.root).batch);
}

Result<RATree> flip(const RATree& t, const Network& net, int cut) {
    if (auto e = checkNode(t, cut)) return *e;
    if (!t.node(cut).isCut())
        return Error{"node " + t.pathOf(cut) + " is a leaf; only cuts can be flipped"};
    if (const int p = t.pinnedAncestor(cut); p >= 0) return pinnedError(t, p);
    RATree w = t;
    w.node(cut).type = t.node(cut).type == NodeType::S ? NodeType::T : NodeType::S;
    return finish(std::move(w), net, t.node(t.root).batch);
}

Result<RATree> setSubBatch(const RATree& t, const Network& net, int cut, int subBatch) {
    if (auto e = checkNode(t, cut)) return *e;
    const RANode& c = t.node(cut);
    if (!c.isCut())
        return Error{"node " + t.pathOf(cut) + " is a leaf; leaves have sub-batch count 1"};
    if (const int p = t.pinnedAncestor(cut); p >= 0) return pinnedError(t, p);
    if (subBatch < 1 || c.batch % subBatch != 0)
        return Error{"sub-batch count " + std::to_string(subBatch) + " does not divide the batch " +
                     std::to_string(c.batch) + " of " + t.pathOf(cut)};
    for (int k : c.children)
        if (auto e = checkBatchChange(t, k, c.batch / subBatch)) return *e;
    RATree w = t;
    w.node(cut).subBatch = subBatch;
    // A descendant whose sb no longer divides its smaller batch is reported by validation,
    // naming that descendant.
    return finish(std::move(w), net, t.node(t.root).batch);
}

Result<RATree> setPinned(const RATree& t, int node, bool pinned) {
    if (auto e = checkNode(t, node)) return *e;
    RATree w = t;
    w.node(node).pinned = pinned;
    w.compact();
    return w;
}

Result<RATree> setTiles(const RATree& t, int node, int tiles) {
    if (auto e = checkNode(t, node)) return *e;
    const int parent = t.node(node).parent;
    if (parent < 0 || t.node(parent).type != NodeType::S)
        return Error{"node " + t.pathOf(node) +
                     " is not a child of an S cut: only those have a tile count of their own"};
    if (tiles < 0) return Error{"tile count " + std::to_string(tiles) + " is negative"};
    if (const int p = t.pinnedAncestor(node); p >= 0) return pinnedError(t, p);
    RATree w = t;
    w.node(node).tiles = tiles;
    w.compact();
    return w;
}

Result<RATree> setPartition(const RATree& t, int node, const PartitionFactors& p) {
    if (auto e = checkNode(t, node)) return *e;
    if (t.node(node).isCut())
        return Error{"node " + t.pathOf(node) + " is a cut: only a leaf has a partition"};
    const bool none = p == PartitionFactors{};
    if (!none && std::any_of(p.begin(), p.end(), [](int f) { return f <= 0; }))
        return Error{"partition factors must all be positive (or all 0 for the mapper's choice)"};
    if (const int a = t.pinnedAncestor(node); a >= 0) return pinnedError(t, a);
    RATree w = t;
    w.node(node).partition = p;
    w.compact();
    return w;
}

} // namespace edit

} // namespace tilescope
