// The tree text format of the reference code (docs/tree-format.md, "Text format").
#include "tree/ratree.h"

#include <charconv>
#include <string_view>
#include <unordered_map>

namespace tilescope {

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
        if (n.tiles > 0) out += " tiles=" + std::to_string(n.tiles);
        if (!n.isCut() && n.partition != PartitionFactors{})
            out += " part=" + partitionToken(n.partition);
        if (n.pinned) out += " pinned";
        out += '\n';
        for (auto it = n.children.rbegin(); it != n.children.rend(); ++it)
            if (*it >= 0 && *it < t.size()) stack.emplace_back(*it, d + 1);
    }
}

} // namespace

std::string partitionToken(const PartitionFactors& p) {
    std::string s = "K" + std::to_string(p[0]) + "B" + std::to_string(p[1]) + "H" +
                    std::to_string(p[2]) + "W" + std::to_string(p[3]);
    if (p[4] > 1) s += "C" + std::to_string(p[4]);
    return s;
}

bool parsePartitionToken(std::string_view s, PartitionFactors& out) {
    PartitionFactors p{0, 0, 0, 0, 1};
    const char letters[] = {'K', 'B', 'H', 'W', 'C'};
    size_t at = 0;
    for (size_t i = 0; i < 5; ++i) {
        if (at == s.size() && i == 4) break; // C is optional
        if (at >= s.size() || s[at] != letters[i]) return false;
        size_t end = ++at;
        while (end < s.size() && s[end] >= '0' && s[end] <= '9')
            ++end;
        const auto [ptr, ec] = std::from_chars(s.data() + at, s.data() + end, p[i]);
        if (ec != std::errc() || ptr != s.data() + end || p[i] <= 0) return false;
        at = end;
    }
    if (at != s.size()) return false;
    out = p;
    return true;
}

namespace {

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
        // Our own markers (a fixed tile count, a leaf's alternative partition, then the
        // pin); anything else after the node's tokens is the reference code's print_struct
        // annotation and is ignored.
        if (next < tok.size() && tok[next].substr(0, 6) == "tiles=") {
            if (!parsePositive(tok[next].substr(6), nd.tiles))
                return fail(lineNo, "tile count '" + std::string(tok[next].substr(6)) +
                                        "' is not a positive integer");
            ++next;
        }
        if (next < tok.size() && tok[next].substr(0, 5) == "part=") {
            if (nd.isCut()) return fail(lineNo, "'part=' names a leaf's partition: a cut has none");
            if (!parsePartitionToken(tok[next].substr(5), nd.partition))
                return fail(lineNo, "partition '" + std::string(tok[next].substr(5)) +
                                        "' is not of the form K4B1H2W2 (C2 after it for "
                                        "input-channel parts), each factor a positive integer");
            ++next;
        }
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

} // namespace tilescope
