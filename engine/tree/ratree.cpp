// The RA tree value type: construction and queries. Validation, the text format and the
// edit operations live beside it, a file each (tree_validate.cpp, tree_text.cpp,
// tree_edit.cpp); tree_json.cpp is the JSON format.
#include "tree/ratree.h"

#include <algorithm>
#include <charconv>

namespace tilescope {

const char* toString(NodeType t) {
    switch (t) {
    case NodeType::Leaf:
        return "leaf";
    case NodeType::S:
        return "S";
    case NodeType::T:
        return "T";
    }
    return "?";
}

RATree RATree::layerSequential(const Network& net, int batch) {
    RATree t;
    t.nodes.reserve(net.layers.size() + 1);
    RANode r;
    r.type = NodeType::T;
    r.batch = batch;
    r.subBatch = 1;
    t.nodes.push_back(r);
    t.root = 0;
    for (size_t i = 0; i < net.layers.size(); ++i) {
        RANode l;
        l.type = NodeType::Leaf;
        l.layer = int(i);
        l.batch = batch;
        l.parent = 0;
        t.nodes.push_back(l);
        t.nodes[0].children.push_back(int(i) + 1);
    }
    return t;
}

std::vector<int> RATree::leavesInOrder(int from) const {
    std::vector<int> out = leafNodesInOrder(from);
    for (int& id : out)
        id = node(id).layer;
    return out;
}

std::vector<int> RATree::leafNodesInOrder(int from) const {
    std::vector<int> out;
    if (from < 0) from = root;
    if (from < 0 || from >= size()) return out;
    // Explicit stack, children pushed in reverse: a pre-order walk visits leaves left to
    // right without recursion (trees from hand-written files may be deep). Its scratch is
    // kept across calls.
    thread_local std::vector<int> stack;
    stack.assign(1, from);
    while (!stack.empty()) {
        const int id = stack.back();
        stack.pop_back();
        const RANode& n = node(id);
        if (!n.isCut()) {
            out.push_back(id);
            continue;
        }
        for (auto it = n.children.rbegin(); it != n.children.rend(); ++it)
            if (*it >= 0 && *it < size()) stack.push_back(*it);
    }
    return out;
}

bool RATree::fixedTiles(int cut, int tiles, std::vector<int>& out) const {
    int sum = 0;
    for (int c : node(cut).children) {
        const int n = node(c).tiles;
        if (n <= 0) return false;
        sum += n;
    }
    if (sum != tiles) return false;
    out.clear();
    for (int c : node(cut).children)
        out.push_back(node(c).tiles);
    return true;
}

std::vector<int> RATree::layersUnder(int id) const {
    return leavesInOrder(id);
}

int RATree::leafOf(int layer) const {
    for (int i = 0; i < size(); ++i)
        if (!nodes[size_t(i)].isCut() && nodes[size_t(i)].layer == layer && attached(i)) return i;
    return -1;
}

int RATree::depth(int id) const {
    int d = 0;
    for (int p = node(id).parent; p >= 0; p = node(p).parent)
        ++d;
    return d;
}

int RATree::childIndex(int id) const {
    const int p = node(id).parent;
    if (p < 0) return -1;
    const auto& c = node(p).children;
    const auto it = std::find(c.begin(), c.end(), id);
    return it == c.end() ? -1 : int(it - c.begin());
}

std::string RATree::pathOf(int id) const {
    if (id < 0 || id >= size()) return "?";
    if (id == root) return "/";
    std::vector<int> idx;
    for (int x = id; x != root; x = node(x).parent) {
        if (x < 0 || int(idx.size()) > size()) return "?"; // detached or a parent cycle
        idx.push_back(childIndex(x));
    }
    std::string s;
    for (auto it = idx.rbegin(); it != idx.rend(); ++it)
        s += '/' + std::to_string(*it);
    return s;
}

int RATree::nodeAtPath(const std::string& path) const {
    if (root < 0 || path.empty() || path[0] != '/') return -1;
    int id = root;
    size_t i = 1;
    while (i < path.size()) {
        const size_t end = std::min(path.find('/', i), path.size());
        int k = -1;
        const auto [ptr, ec] = std::from_chars(path.data() + i, path.data() + end, k);
        if (ec != std::errc() || ptr != path.data() + end || k < 0) return -1;
        const auto& c = node(id).children;
        if (k >= int(c.size())) return -1;
        id = c[size_t(k)];
        if (end + 1 == path.size()) return -1; // trailing '/' after a component
        i = end + 1;
    }
    return id;
}

void RATree::propagateBatches() {
    if (root < 0) return;
    thread_local std::vector<int> stack; // scratch: the search calls this for every move
    stack.assign(1, root);
    while (!stack.empty()) {
        const int id = stack.back();
        stack.pop_back();
        const RANode& n = node(id);
        // Leave the children alone when sb does not divide b: validateStructure then
        // reports the parent, which is the real culprit.
        const bool divides = n.subBatch > 0 && n.batch % n.subBatch == 0;
        for (int c : n.children) {
            if (c < 0 || c >= size()) continue;
            if (divides) nodes[size_t(c)].batch = n.batch / n.subBatch;
            stack.push_back(c);
        }
    }
}

void RATree::compact() {
    if (root < 0 || root >= size()) {
        nodes.clear();
        root = -1;
        return;
    }
    const int n = size();
    // Scratch kept across calls (the search compacts every move): its capacity stays.
    thread_local std::vector<int> newId, order, stack;
    thread_local std::vector<RANode> out;
    newId.assign(size_t(n), -1);
    order.clear();
    stack.assign(1, root);
    while (!stack.empty()) {
        const int id = stack.back();
        stack.pop_back();
        if (newId[size_t(id)] >= 0) continue; // malformed (shared child): keep first visit
        newId[size_t(id)] = int(order.size());
        order.push_back(id);
        const auto& c = nodes[size_t(id)].children;
        for (auto it = c.rbegin(); it != c.rend(); ++it)
            if (*it >= 0 && *it < n) stack.push_back(*it);
    }
    // Already in pre-order with every node reached (an edit that changed no structure): the
    // nodes stay where they are.
    bool inOrder = order.size() == size_t(n);
    for (size_t i = 0; inOrder && i < order.size(); ++i)
        inOrder = order[i] == int(i);
    if (!inOrder) {
        out.clear(); // the nodes moved out of last time
        out.reserve(order.size());
        for (int id : order)
            out.push_back(std::move(nodes[size_t(id)]));
        nodes.swap(out); // out keeps the old arena's capacity for the next call
    }
    for (auto& nd : nodes) {
        // Out-of-range children were never visited: drop them here so the arena stays
        // indexable; validateStructure then reports the layers they held as missing.
        size_t w = 0;
        for (size_t r = 0; r < nd.children.size(); ++r) {
            const int c = nd.children[r];
            if (c >= 0 && c < n && newId[size_t(c)] >= 0) nd.children[w++] = newId[size_t(c)];
        }
        nd.children.resize(w);
    }
    nodes[0].parent = -1;
    for (size_t i = 0; i < nodes.size(); ++i)
        for (int c : nodes[i].children)
            if (c > int(i)) nodes[size_t(c)].parent = int(i); // c <= i only on a cycle
    root = 0;
}

int RATree::pinnedAncestor(int id) const {
    for (int x = id, guard = 0; x >= 0 && x < size() && guard <= size();
         x = node(x).parent, ++guard)
        if (node(x).held()) return x;
    return -1;
}

bool RATree::frozen(int id) const {
    return pinnedAncestor(id) >= 0;
}

bool RATree::contains(int ancestor, int id) const {
    for (int x = id, guard = 0; x >= 0 && x < size() && guard <= size();
         x = node(x).parent, ++guard)
        if (x == ancestor) return true;
    return false;
}

bool RATree::attached(int id) const {
    if (id < 0 || id >= size() || root < 0) return false;
    return contains(root, id);
}

bool RATree::operator==(const RATree& o) const {
    if (empty() || o.empty()) return empty() == o.empty();
    std::vector<std::pair<int, int>> stack{{root, o.root}};
    while (!stack.empty()) {
        const auto [a, b] = stack.back();
        stack.pop_back();
        const RANode& x = node(a);
        const RANode& y = o.node(b);
        if (x.type != y.type || x.batch != y.batch || x.subBatch != y.subBatch ||
            x.pinned != y.pinned || x.tiles != y.tiles || x.partition != y.partition ||
            x.children.size() != y.children.size())
            return false;
        if (!x.isCut() && x.layer != y.layer) return false;
        for (size_t i = 0; i < x.children.size(); ++i)
            stack.emplace_back(x.children[i], y.children[i]);
    }
    return true;
}

} // namespace tilescope
