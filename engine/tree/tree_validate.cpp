// validateStructure: the validity rules of docs/method.md §2 that need only the network
// (docs/tree-format.md lists them; allocation and buffers are the evaluator's).
#include "tree/ratree.h"

#include <algorithm>

namespace tilescope {

namespace {

// The first broken rule, in the words validateStructure reports.
std::optional<std::string> structureProblem(const RATree& t, const Network& net, int totalBatch) {
    const int n = t.size();
    const int numLayers = int(net.layers.size());
    if (t.root < 0 || t.root >= n) return std::string("root: the tree has no root node");

    // via[x]: the node x was reached from (-1 for the root, -2 unvisited). Paths in messages
    // are rebuilt from it rather than from stored parent links, which may be the fault.
    // Scratch kept across calls: the search checks every candidate.
    thread_local std::vector<int> via, leafOfLayer, order, stack, pos;
    via.assign(size_t(n), -2);
    auto path = [&](int id) {
        if (id == t.root) return std::string("/");
        std::vector<int> idx;
        for (int x = id; x != t.root && x >= 0 && int(idx.size()) < n; x = via[size_t(x)]) {
            const auto& c = t.node(via[size_t(x)]).children;
            idx.push_back(int(std::find(c.begin(), c.end(), x) - c.begin()));
        }
        std::string s;
        for (auto it = idx.rbegin(); it != idx.rend(); ++it)
            s += '/' + std::to_string(*it);
        return s;
    };
    auto layerName = [&](int l) { return "'" + net.layers[size_t(l)].name + "'"; };

    leafOfLayer.assign(size_t(numLayers), -1);
    order.clear(); // layer ids, left to right
    stack.assign(1, t.root);
    via[size_t(t.root)] = -1;
    if (t.node(t.root).parent != -1) return "tree shape: the root / has a parent link";
    while (!stack.empty()) {
        const int id = stack.back();
        stack.pop_back();
        const RANode& nd = t.node(id);

        if (nd.batch <= 0)
            return "batch: node " + path(id) + " has batch " + std::to_string(nd.batch) +
                   "; batches are positive";
        if (id == t.root) {
            if (nd.batch != totalBatch)
                return "root batch: the root / has batch " + std::to_string(nd.batch) +
                       " but the total batch is " + std::to_string(totalBatch);
        } else {
            const RANode& p = t.node(via[size_t(id)]);
            // The parent was checked first (pre-order), so its sb divides its batch here.
            const int expected = p.batch / p.subBatch;
            if (nd.batch != expected)
                return "child batch: node " + path(id) + " has batch " + std::to_string(nd.batch) +
                       " but its parent " + path(via[size_t(id)]) + " gives each child " +
                       std::to_string(p.batch) + "/" + std::to_string(p.subBatch) + " = " +
                       std::to_string(expected);
        }

        if (!nd.isCut()) {
            if (nd.layer < 0 || nd.layer >= numLayers)
                return "leaf: leaf " + path(id) + " has no valid layer (index " +
                       std::to_string(nd.layer) + ")";
            if (!nd.children.empty())
                return "leaf: leaf " + path(id) + " (" + layerName(nd.layer) + ") has children";
            if (nd.subBatch != 1)
                return "leaf sub-batch: leaf " + path(id) + " (" + layerName(nd.layer) +
                       ") has sub-batch count " + std::to_string(nd.subBatch) + "; leaves have 1";
            int& seen = leafOfLayer[size_t(nd.layer)];
            if (seen >= 0)
                return "duplicated layer: layer " + layerName(nd.layer) + " appears at " +
                       path(seen) + " and at " + path(id);
            seen = id;
            order.push_back(nd.layer);
            continue;
        }

        if (nd.children.empty()) return "empty cut: cut " + path(id) + " has no children";
        if (nd.subBatch <= 0 || nd.batch % nd.subBatch != 0)
            return "sub-batch: cut " + path(id) + " has sub-batch count " +
                   std::to_string(nd.subBatch) + ", which does not divide its batch " +
                   std::to_string(nd.batch);
        for (auto it = nd.children.rbegin(); it != nd.children.rend(); ++it) {
            const int c = *it;
            if (c < 0 || c >= n)
                return "tree shape: cut " + path(id) + " has a child id " + std::to_string(c) +
                       " outside the arena";
            if (via[size_t(c)] != -2)
                return "tree shape: node " + path(c) + " is also a child of " + path(id) +
                       " (a shared child or a cycle)";
            via[size_t(c)] = id;
            if (t.node(c).parent != id)
                return "tree shape: node " + path(c) + " does not link back to its parent " +
                       path(id);
            stack.push_back(c);
        }
    }

    for (int l = 0; l < numLayers; ++l)
        if (leafOfLayer[size_t(l)] < 0)
            return "missing layer: layer " + layerName(l) + " is in no leaf";

    // Direct producers suffice: if every edge points left to right, so do the transitive
    // ones. O(leaves + edges), which keeps the annealer's per-candidate check linear.
    pos.assign(size_t(numLayers), 0);
    for (size_t i = 0; i < order.size(); ++i)
        pos[size_t(order[i])] = int(i);
    for (int l : order)
        for (const auto& in : net.layers[size_t(l)].inputs) {
            const int p = in.producer;
            if (p >= 0 && p < numLayers && pos[size_t(p)] > pos[size_t(l)])
                return "topological order: layer " + layerName(l) + " at " +
                       path(leafOfLayer[size_t(l)]) + " comes before its producer " + layerName(p) +
                       " at " + path(leafOfLayer[size_t(p)]);
        }
    return std::nullopt;
}

} // namespace

std::optional<Error> validateStructure(const RATree& t, const Network& net, int totalBatch) {
    if (auto why = structureProblem(t, net, totalBatch)) return Error{std::move(*why)};
    return std::nullopt;
}

} // namespace tilescope
