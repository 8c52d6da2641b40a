#include "tree/repetition.h"

#include <algorithm>

namespace tilescope {

std::string BlockRepetition::describe() const {
    if (!active()) return "no repeated block";
    return std::to_string(count) + " blocks of " + std::to_string(length) + " layers (layers " +
           std::to_string(first) + "-" + std::to_string(first + count * length - 1) + ")";
}

namespace {

// Layer j of block k (at `base`) is a copy of layer j of the block at `first`: the same
// class of layer (inputs aside) and inputs read from the same place.
bool sameBlock(const Network& net, const std::vector<int>& shape, int first, int base, int length) {
    for (int j = 0; j < length; ++j) {
        const Layer& a = net.layers[size_t(first + j)];
        const Layer& b = net.layers[size_t(base + j)];
        if (shape[size_t(first + j)] != shape[size_t(base + j)]) return false; // inputs too
        for (size_t k = 0; k < a.inputs.size(); ++k) {
            const int pa = a.inputs[k].producer, pb = b.inputs[k].producer;
            const bool inA = pa >= first && pa < first + length;
            const bool inB = pb >= base && pb < base + length;
            if (inA != inB) return false;
            if (inA && pa - first != pb - base) return false;
        }
    }
    return true;
}

// Per layer, an id equal for layers of the same kind, shapes, weights and input sizes
// (Network::layerClasses without the inputs' producers).
std::vector<int> shapeIds(const Network& net) {
    Network bare;
    bare.layers = net.layers;
    bare.outputs = net.outputs;
    for (Layer& l : bare.layers)
        for (LayerInput& in : l.inputs)
            in.producer = -1;
    return bare.layerClasses();
}

} // namespace

BlockRepetition findRepetition(const Network& net) {
    const int n = int(net.layers.size());
    const std::vector<int> shape = shapeIds(net);
    BlockRepetition best;
    // For each block length, the longest run of layers equal to the layer a block later;
    // a run of r layers covers floor(r / L) + 1 blocks from its start.
    for (int length = 1; length * 2 <= n; ++length) {
        int run = 0;
        for (int i = n - length - 1; i >= -1; --i) {
            const bool eq = i >= 0 && shape[size_t(i)] == shape[size_t(i + length)];
            if (eq) {
                ++run;
                continue;
            }
            // The run starts at i + 1 and covers [i + 1, i + 1 + run + length).
            const int start = i + 1, count = run / length + 1;
            run = 0;
            if (count < 2 || count * length <= best.count * best.length) continue;
            int good = 1; // blocks that really repeat the first, inputs included
            while (good < count && sameBlock(net, shape, start, start + good * length, length))
                ++good;
            if (good >= 2 && good * length > best.count * best.length)
                best = BlockRepetition{start, length, good};
        }
    }
    return best;
}

namespace {

// Appends node `id` of `t` and its subtree to `out` (parent `parent`), the layers shifted by
// `shift`; returns its new id.
int copySubtree(const RATree& t, int id, int parent, int shift, bool copy, RATree& out) {
    RANode n = t.node(id);
    n.parent = parent;
    n.children.clear();
    if (!n.isCut()) n.layer += shift;
    n.tied = false; // only a copy's top node is tied (tieBlocks marks it)
    if (copy) n.pinned = false;
    const int at = out.size();
    out.nodes.push_back(n);
    for (int c : t.node(id).children) {
        const int k = copySubtree(t, c, at, shift, copy, out);
        out.nodes[size_t(at)].children.push_back(k);
    }
    return at;
}

} // namespace

Result<RATree> tieBlocks(const RATree& t, const Network& net, const BlockRepetition& rep) {
    if (!rep.active()) return t;
    if (t.empty() || t.node(t.root).type != NodeType::T)
        return Error{"repeated blocks need a root T cut"};
    const auto& kids = t.node(t.root).children;
    // The part of each root child: before the blocks (-1), a block, or after them (count).
    std::vector<int> part(kids.size());
    for (size_t i = 0; i < kids.size(); ++i) {
        const std::vector<int> layers = t.layersUnder(kids[i]);
        part[i] = rep.blockOf(layers.front());
        for (int l : layers)
            if (rep.blockOf(l) != part[i])
                return Error{"node " + t.pathOf(kids[i]) +
                             " holds layers of two blocks (or of a block and the layers "
                             "around the blocks)"};
    }
    // Rebuilt in the order: before, the first block, its copies, after. Layers are in
    // topological order, so no part depends on a later one.
    RATree out;
    RANode root = t.node(t.root);
    root.children.clear();
    root.parent = -1;
    out.nodes.push_back(root);
    out.root = 0;
    auto add = [&](int id, int shift, bool copy) {
        const int k = copySubtree(t, id, 0, shift, copy, out);
        out.nodes[0].children.push_back(k);
        return k;
    };
    for (size_t i = 0; i < kids.size(); ++i)
        if (part[i] == -1) add(kids[i], 0, false);
    for (size_t i = 0; i < kids.size(); ++i)
        if (part[i] == 0) add(kids[i], 0, false);
    for (int b = 1; b < rep.count; ++b)
        for (size_t i = 0; i < kids.size(); ++i)
            if (part[i] == 0) out.nodes[size_t(add(kids[i], b * rep.length, true))].tied = true;
    for (size_t i = 0; i < kids.size(); ++i)
        if (part[i] == rep.count) add(kids[i], 0, false);
    out.compact();
    out.propagateBatches();
    if (auto e = validateStructure(out, net, out.node(out.root).batch)) return *e;
    return out;
}

bool hasTiedBlocks(const RATree& t) {
    for (const RANode& n : t.nodes)
        if (n.tied) return true;
    return false;
}

bool isTied(const RATree& t, const Network& net, const BlockRepetition& rep) {
    if (!rep.active()) return true;
    auto tied = tieBlocks(t, net, rep);
    if (!tied) return false;
    if (!(*tied == t)) return false;
    // The same shape and the copies held: compare the flags too.
    for (int id = 0; id < t.size(); ++id)
        if (t.node(id).tied != tied->node(id).tied) return false;
    return true;
}

} // namespace tilescope
