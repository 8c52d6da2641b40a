#include "tree/ratree.h"

#include <algorithm>
#include <charconv>
#include <unordered_map>

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

// ---------------------------------------------------------------------------------------
// Queries

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
    std::vector<int> out;
    if (from < 0) from = root;
    if (from < 0 || from >= size()) return out;
    // Explicit stack, children pushed in reverse: a pre-order walk visits leaves left to
    // right without recursion (trees from hand-written files may be deep).
    std::vector<int> stack{from};
    while (!stack.empty()) {
        const int id = stack.back();
        stack.pop_back();
        const RANode& n = node(id);
        if (!n.isCut()) {
            out.push_back(n.layer);
            continue;
        }
        for (auto it = n.children.rbegin(); it != n.children.rend(); ++it)
            if (*it >= 0 && *it < size()) stack.push_back(*it);
    }
    return out;
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
    std::vector<int> stack{root};
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
    std::vector<int> newId(size_t(n), -1);
    std::vector<int> order;
    order.reserve(size_t(n));
    std::vector<int> stack{root};
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
    std::vector<RANode> out;
    out.reserve(order.size());
    for (int id : order)
        out.push_back(std::move(nodes[size_t(id)]));
    for (auto& nd : out) {
        // Out-of-range children were never visited: drop them here so the arena stays
        // indexable; validateStructure then reports the layers they held as missing.
        size_t w = 0;
        for (size_t r = 0; r < nd.children.size(); ++r) {
            const int c = nd.children[r];
            if (c >= 0 && c < n && newId[size_t(c)] >= 0) nd.children[w++] = newId[size_t(c)];
        }
        nd.children.resize(w);
    }
    out[0].parent = -1;
    for (size_t i = 0; i < out.size(); ++i)
        for (int c : out[i].children)
            if (c > int(i)) out[size_t(c)].parent = int(i); // c <= i only on a cycle
    nodes = std::move(out);
    root = 0;
}

int RATree::pinnedAncestor(int id) const {
    for (int x = id, guard = 0; x >= 0 && x < size() && guard <= size();
         x = node(x).parent, ++guard)
        if (node(x).pinned) return x;
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
            x.pinned != y.pinned || x.children.size() != y.children.size())
            return false;
        if (!x.isCut() && x.layer != y.layer) return false;
        for (size_t i = 0; i < x.children.size(); ++i)
            stack.emplace_back(x.children[i], y.children[i]);
    }
    return true;
}

// ---------------------------------------------------------------------------------------
// Validation

namespace {

// The first broken rule, in the words validateStructure reports.
std::optional<std::string> structureProblem(const RATree& t, const Network& net, int totalBatch) {
    const int n = t.size();
    const int numLayers = int(net.layers.size());
    if (t.root < 0 || t.root >= n) return std::string("root: the tree has no root node");

    // via[x]: the node x was reached from (-1 for the root, -2 unvisited). Paths in messages
    // are rebuilt from it rather than from stored parent links, which may be the fault.
    std::vector<int> via(size_t(n), -2);
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

    std::vector<int> leafOfLayer(size_t(numLayers), -1);
    std::vector<int> order; // layer ids, left to right
    order.reserve(size_t(numLayers));

    std::vector<int> stack{t.root};
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
    std::vector<int> pos(size_t(numLayers), 0);
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

// ---------------------------------------------------------------------------------------
// Text format

namespace {

void writeSubtree(const RATree& t, const Network& net, int id, int depth, std::string& out) {
    // Explicit stack of (node, depth) in pre-order: output order is the leaf order.
    std::vector<std::pair<int, int>> stack{{id, depth}};
    while (!stack.empty()) {
        const auto [x, d] = stack.back();
        stack.pop_back();
        const RANode& n = t.node(x);
        out.append(size_t(d), '\t');
        if (n.isCut()) {
            out += n.type == NodeType::S ? 'S' : 'T';
            out += ' ';
            out += std::to_string(n.batch);
            out += '/';
            out += std::to_string(n.subBatch);
        } else {
            out += n.layer >= 0 && n.layer < int(net.layers.size())
                       ? net.layers[size_t(n.layer)].name
                       : "?layer" + std::to_string(n.layer);
            out += ' ';
            out += std::to_string(n.batch);
        }
        if (n.pinned) out += " pinned";
        out += '\n';
        for (auto it = n.children.rbegin(); it != n.children.rend(); ++it)
            if (*it >= 0 && *it < t.size()) stack.emplace_back(*it, d + 1);
    }
}

bool parsePositive(std::string_view s, int& out) {
    if (s.empty()) return false;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && ptr == s.data() + s.size() && out > 0;
}

std::vector<std::string_view> splitWs(std::string_view s) {
    std::vector<std::string_view> out;
    size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t'))
            ++i;
        const size_t b = i;
        while (i < s.size() && s[i] != ' ' && s[i] != '\t')
            ++i;
        if (i > b) out.push_back(s.substr(b, i - b));
    }
    return out;
}

} // namespace

std::string treeToText(const RATree& t, const Network& net) {
    std::string out;
    if (!t.empty()) writeSubtree(t, net, t.root, 0, out);
    return out;
}

std::string subtreeToText(const RATree& t, const Network& net, int id) {
    std::string out;
    if (id >= 0 && id < t.size()) writeSubtree(t, net, id, 0, out);
    return out;
}

Result<RATree> parseTreeText(const std::string& text, const Network& net, const std::string& file) {
    std::unordered_map<std::string_view, int> byName;
    byName.reserve(net.layers.size() * 2);
    for (size_t i = 0; i < net.layers.size(); ++i)
        byName.emplace(net.layers[i].name, int(i));

    RATree t;
    std::vector<int> open; // open[d]: the node last seen at depth d
    std::vector<int> leafLine(net.layers.size(), 0);
    std::vector<int> nodeLine; // nodeLine[id]: source line, for "indented under" errors
    auto fail = [&](int line, const std::string& reason) {
        return makeError(file, "line " + std::to_string(line), reason);
    };

    const std::string_view all(text);
    size_t start = 0;
    int lineNo = 0;
    while (start <= all.size()) {
        size_t end = all.find('\n', start);
        if (end == std::string_view::npos) end = all.size();
        std::string_view line = all.substr(start, end - start);
        start = end + 1;
        ++lineNo;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1); // CRLF files

        size_t depth = 0;
        while (depth < line.size() && line[depth] == '\t')
            ++depth;
        const std::string_view body = line.substr(depth);
        const size_t firstNonBlank = body.find_first_not_of(" \t");
        if (firstNonBlank == std::string_view::npos) continue;
        if (body[firstNonBlank] == '#') continue;
        if (firstNonBlank != 0)
            return fail(lineNo, "indentation uses spaces; the tree text format indents with tabs");

        const auto tok = splitWs(body);
        if (tok.size() < 2)
            return fail(lineNo, "expected 'S b/sb', 'T b/sb' or '<layer> b', got '" +
                                    std::string(body) + "'");

        if (t.empty()) {
            if (depth != 0) return fail(lineNo, "the first node (the root) must not be indented");
        } else {
            if (depth == 0)
                return fail(lineNo, "a second root: only the first node may be unindented");
            if (depth > open.size())
                return fail(lineNo, "indentation jumps from depth " +
                                        std::to_string(open.size() - 1) + " to " +
                                        std::to_string(depth));
            const int parent = open[depth - 1];
            if (!t.node(parent).isCut())
                return fail(lineNo, "indented under the leaf '" +
                                        net.layers[size_t(t.node(parent).layer)].name +
                                        "' at line " + std::to_string(nodeLine[size_t(parent)]));
        }

        RANode nd;
        // A layer may be called "S" or "T": a cut's second token is "b/sb", a leaf's is a
        // plain number, so the '/' decides.
        const bool isCut =
            (tok[0] == "S" || tok[0] == "T") && tok[1].find('/') != std::string_view::npos;
        size_t next = 2; // first token after the node's own ones
        if (isCut) {
            nd.type = tok[0] == "S" ? NodeType::S : NodeType::T;
            const size_t slash = tok[1].find('/');
            if (!parsePositive(tok[1].substr(0, slash), nd.batch))
                return fail(lineNo, "batch '" + std::string(tok[1].substr(0, slash)) +
                                        "' is not a positive integer");
            if (!parsePositive(tok[1].substr(slash + 1), nd.subBatch))
                return fail(lineNo, "sub-batch count '" + std::string(tok[1].substr(slash + 1)) +
                                        "' is not a positive integer");
            if (nd.batch % nd.subBatch != 0)
                return fail(lineNo, "sub-batch count " + std::to_string(nd.subBatch) +
                                        " does not divide batch " + std::to_string(nd.batch));
        } else {
            nd.type = NodeType::Leaf;
            auto it = byName.find(tok[0]);
            std::string name(tok[0]);
            size_t k = 1; // index of the batch token
            if (it == byName.end()) {
                // Names with blanks (rare in ONNX exports) are written verbatim: rejoin
                // tokens until a known name is followed by a number.
                std::string joined(tok[0]);
                int dummy = 0;
                for (size_t j = 1; j + 1 < tok.size(); ++j) {
                    joined += ' ';
                    joined += tok[j];
                    const auto hit = byName.find(joined);
                    if (hit != byName.end() && parsePositive(tok[j + 1], dummy)) {
                        it = hit;
                        name = joined;
                        k = j + 1;
                        break;
                    }
                }
            }
            if (it == byName.end())
                return fail(lineNo, "unknown layer '" + name + "'" +
                                        (name == "S" || name == "T"
                                             ? " (a cut is written '" + name + " b/sb')"
                                             : ""));
            const std::string& joined = name;
            nd.layer = it->second;
            if (!parsePositive(tok[k], nd.batch))
                return fail(lineNo, "batch '" + std::string(tok[k]) + "' of layer '" + joined +
                                        "' is not a positive integer");
            int& seen = leafLine[size_t(nd.layer)];
            if (seen > 0)
                return fail(lineNo, "duplicated layer '" + joined + "' (already at line " +
                                        std::to_string(seen) + ")");
            seen = lineNo;
            next = k + 1;
        }
        // Our own marker; anything else after the node's tokens is the reference code's
        // print_struct annotation and is ignored.
        nd.pinned = next < tok.size() && tok[next] == "pinned";

        const int id = t.size();
        if (t.empty()) {
            t.root = id;
        } else {
            nd.parent = open[depth - 1];
            t.node(nd.parent).children.push_back(id);
        }
        t.nodes.push_back(std::move(nd));
        nodeLine.push_back(lineNo);
        open.resize(depth + 1);
        open[depth] = id;
    }

    if (t.empty()) return makeError(file, "", "no tree: the text holds no node");
    if (auto e = validateStructure(t, net, t.node(t.root).batch))
        return makeError(file, "", e->message);
    return t;
}

// ---------------------------------------------------------------------------------------
// Edit operations

namespace edit {
namespace {

std::optional<Error> checkNode(const RATree& t, int id) {
    if (!t.attached(id)) return Error{"no node with id " + std::to_string(id) + " in the tree"};
    return std::nullopt;
}

Error pinnedError(const RATree& t, int pinned) {
    return Error{"node " + t.pathOf(pinned) + " is pinned"};
}

// First pinned node in id's subtree (pre-order), -1 if none.
int firstPinnedIn(const RATree& t, int id) {
    std::vector<int> stack{id};
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
        if (t.node(c).pinned) return pinnedError(t, c);
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
        if (t.node(k).pinned) return pinnedError(t, k);
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

} // namespace edit

} // namespace tilescope
