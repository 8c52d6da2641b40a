#include "tree/tree_json.h"

#include "tree/repetition.h"
#include "util/json.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_map>

namespace tilescope {

namespace {

// Templated so the string form keeps a readable key order (ordered_json) while the value
// form is the plain nlohmann::json the rest of the engine embeds in its documents.
template <class J> J nodeJson(const RATree& t, const Network& net, int id) {
    const RANode& n = t.node(id);
    J o = J::object();
    o["type"] = toString(n.type);
    if (!n.isCut())
        o["layer"] = n.layer >= 0 && n.layer < int(net.layers.size())
                         ? net.layers[size_t(n.layer)].name
                         : std::string();
    o["batch"] = n.batch;
    o["sub_batch"] = n.subBatch;
    o["pinned"] = n.pinned;
    if (n.tiles > 0) o["tiles"] = n.tiles;
    if (!n.isCut() && n.partition != PartitionFactors{}) // its named partition (K, B, H, W, C)
        o["partition"] = std::vector<int>(n.partition.begin(), n.partition.end());
    if (n.tied) o["tied"] = true; // a repeated block's copy (tree/repetition.h)
    if (n.isCut()) {
        J kids = J::array();
        for (int c : n.children)
            kids.push_back(nodeJson<J>(t, net, c));
        o["children"] = std::move(kids);
    }
    return o;
}

template <class J> J documentJson(const RATree& t, const Network& net) {
    J doc = J::object();
    doc["format"] = "tilescope-ratree";
    doc["version"] = 1;
    doc["network"] = net.name;
    doc["total_batch"] = t.empty() ? 0 : t.node(t.root).batch;
    doc["root"] = t.empty() ? J(nullptr) : nodeJson<J>(t, net, t.root);
    return doc;
}

using nlohmann::json;

struct Reader {
    const Network& net;
    std::unordered_map<std::string, int> byName;
    RATree tree;
    std::string place;
    std::string reason;

    bool fail(const std::string& path, std::string r) {
        place = "node " + path;
        reason = std::move(r);
        return false;
    }

    bool readInt(const json& o, const char* key, const std::string& path, int& out, bool required) {
        const auto it = o.find(key);
        if (it == o.end()) return !required || fail(path, std::string("missing \"") + key + "\"");
        if (!it->is_number_integer() || it->get<long long>() <= 0 ||
            it->get<long long>() > std::numeric_limits<int>::max())
            return fail(path, std::string("\"") + key + "\" must be a positive integer, got " +
                                  it->dump());
        out = int(it->get<long long>());
        return true;
    }

    // Recursion mirrors the document; JSON nesting depth is already bounded by the parser.
    bool readNode(const json& o, const std::string& path, int parent) {
        if (!o.is_object())
            return fail(path, "expected an object, got " + std::string(o.type_name()));
        RANode n;
        const auto ty = o.find("type");
        if (ty == o.end() || !ty->is_string()) return fail(path, "missing string \"type\"");
        const auto& ts = ty->get_ref<const std::string&>();
        if (ts == "leaf" || ts == "L")
            n.type = NodeType::Leaf;
        else if (ts == "S")
            n.type = NodeType::S;
        else if (ts == "T")
            n.type = NodeType::T;
        else
            return fail(path, "unknown type '" + ts + "' (expected leaf, S or T)");
        if (!readInt(o, "batch", path, n.batch, true)) return false;
        if (!readInt(o, "sub_batch", path, n.subBatch, false)) return false;
        if (const auto p = o.find("pinned"); p != o.end()) {
            if (!p->is_boolean()) return fail(path, "\"pinned\" must be true or false");
            n.pinned = p->get<bool>();
        }
        if (const auto p = o.find("tied"); p != o.end()) {
            if (!p->is_boolean()) return fail(path, "\"tied\" must be true or false");
            n.tied = p->get<bool>();
        }
        if (!readInt(o, "tiles", path, n.tiles, false)) return false;
        if (const auto p = o.find("partition"); p != o.end()) {
            if (n.type != NodeType::Leaf)
                return fail(path, "\"partition\" names a leaf's partition: a cut has none");
            const bool ok = p->is_array() && p->size() == 5 &&
                            std::all_of(p->begin(), p->end(), [](const json& f) {
                                return f.is_number_integer() && f.get<long long>() > 0 &&
                                       f.get<long long>() <= 1 << 20;
                            });
            if (!ok)
                return fail(path, "\"partition\" must be 5 positive integers (K, B, H, W, "
                                  "input-channel parts), got " +
                                      p->dump());
            for (size_t i = 0; i < 5; ++i)
                n.partition[i] = (*p)[i].get<int>();
        }
        const auto kids = o.find("children");
        if (n.type == NodeType::Leaf) {
            const auto l = o.find("layer");
            if (l == o.end() || !l->is_string())
                return fail(path, "a leaf needs a string \"layer\"");
            const auto it = byName.find(l->get<std::string>());
            if (it == byName.end())
                return fail(path, "unknown layer '" + l->get<std::string>() + "'");
            n.layer = it->second;
            if (kids != o.end() && !(kids->is_array() && kids->empty()))
                return fail(path, "leaf '" + l->get<std::string>() + "' has children");
        } else if (kids == o.end() || !kids->is_array()) {
            return fail(path, "a cut needs a \"children\" array");
        }
        const int id = tree.size();
        n.parent = parent;
        tree.nodes.push_back(n);
        if (parent >= 0)
            tree.node(parent).children.push_back(id);
        else
            tree.root = id;
        if (n.type != NodeType::Leaf) {
            const std::string prefix = path == "/" ? "" : path;
            for (size_t i = 0; i < kids->size(); ++i)
                if (!readNode((*kids)[i], prefix + "/" + std::to_string(i), id)) return false;
        }
        return true;
    }
};

} // namespace

std::string treeToJson(const RATree& t, const Network& net, int indent) {
    return documentJson<nlohmann::ordered_json>(t, net).dump(indent);
}

json treeToJsonValue(const RATree& t, const Network& net) {
    return documentJson<json>(t, net);
}

Result<RATree> parseTreeJsonValue(const json& j, const Network& net, const std::string& file) {
    if (!j.is_object()) return makeError(file, "", "expected a JSON object");
    const json* rootJson = &j;
    if (const auto r = j.find("root"); r != j.end()) {
        if (const auto f = j.find("format"); f != j.end() && *f != "tilescope-ratree")
            return makeError(file, "",
                             "format is " + f->dump() + ", expected \"tilescope-ratree\"");
        if (const auto v = j.find("version"); v != j.end() && *v != 1)
            return makeError(file, "",
                             "unsupported version " + v->dump() + " (this build reads 1)");
        rootJson = &*r;
    }
    Reader rd{net, {}, {}, {}, {}};
    for (size_t i = 0; i < net.layers.size(); ++i)
        rd.byName.emplace(net.layers[i].name, int(i));
    if (!rd.readNode(*rootJson, "/", -1)) return makeError(file, rd.place, rd.reason);
    int total = rd.tree.node(rd.tree.root).batch;
    if (const auto tb = j.find("total_batch"); tb != j.end() && rootJson != &j) {
        if (!tb->is_number_integer())
            return makeError(file, "", "\"total_batch\" must be an integer");
        total = tb->get<int>();
    }
    if (auto e = validateStructure(rd.tree, net, total)) return makeError(file, "", e->message);
    if (hasTiedBlocks(rd.tree) && !isTied(rd.tree, net, findRepetition(net)))
        return makeError(file, "",
                         "nodes marked \"tied\" are not the copies of the network's first "
                         "repeated block (docs/search.md, \"Repeated blocks\")");
    return std::move(rd.tree);
}

Result<RATree> parseTreeJson(const std::string& text, const Network& net, const std::string& file) {
    // The tree format's own words for a syntax error (the parser's message in full).
    auto parsed = parseJsonText(text);
    if (const auto* e = std::get_if<JsonSyntaxError>(&parsed))
        return makeError(file, "",
                         e->numberOutOfRange ? "invalid JSON (a number out of range)"
                                             : "not valid JSON: " + e->detail);
    return parseTreeJsonValue(std::get<json>(parsed), net, file);
}

} // namespace tilescope
