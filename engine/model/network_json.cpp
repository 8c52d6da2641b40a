#include "model/network_json.h"

#include "util/json.h"

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <queue>
#include <set>

namespace tilescope {

using nlohmann::json;

std::string networkToJson(const Network& net, int indent) {
    json layers = json::array();
    for (const auto& l : net.layers) {
        json ins = json::array();
        for (const auto& in : l.inputs) {
            if (in.producer >= 0)
                ins.push_back({{"layer", net.layers[size_t(in.producer)].name},
                               {"bytes", in.bytesPerSample}});
            else
                ins.push_back({{"input", in.networkInput}, {"bytes", in.bytesPerSample}});
        }
        layers.push_back({{"name", l.name},
                          {"kind", toString(l.kind)},
                          {"op", l.op},
                          {"in", {l.inC, l.inH, l.inW}},
                          {"out", {l.outC, l.outH, l.outW}},
                          {"kernel", {l.kernelH, l.kernelW}},
                          {"stride", {l.strideH, l.strideW}},
                          {"pad", {l.padH, l.padW}},
                          {"dilation", {l.dilationH, l.dilationW}},
                          {"groups", l.groups},
                          {"weight_bytes", l.weightBytes},
                          {"inputs", ins}});
    }
    json folded = json::array();
    for (const auto& f : net.folded)
        folded.push_back({{"node", f.node}, {"op", f.op}, {"into", f.into}});
    json j = {{"format", "tilescope-network"},
              {"version", 1},
              {"name", net.name},
              {"inputs", net.inputBytes},
              {"outputs", net.outputs},
              {"params", net.paramsCount},
              {"op_counts", net.opCounts},
              {"folded", folded},
              {"unsupported", net.unsupported},
              {"layers", layers}};
    return j.dump(indent);
}

namespace {

struct Parser {
    const std::string& file;
    std::string place;
    std::string reason;

    bool fail(std::string p, std::string r) {
        place = std::move(p);
        reason = std::move(r);
        return false;
    }
    bool intVec(const json& l, const std::string& where, const char* key, std::vector<int>& out,
                size_t n, int minValue, bool required) {
        if (!l.contains(key)) {
            if (required) return fail(where, std::string("missing \"") + key + "\"");
            return true;
        }
        const json& v = l[key];
        if (!v.is_array() || v.size() != n)
            return fail(where + "." + key, "expected a list of " + std::to_string(n) + " integers");
        out.clear();
        for (const auto& x : v) {
            if (!x.is_number_integer()) return fail(where + "." + key, "expected integers");
            const long long i = x.get<long long>();
            if (i < minValue || i > (1LL << 30))
                return fail(where + "." + key, "value " + std::to_string(i) +
                                                   " out of range (min " +
                                                   std::to_string(minValue) + ")");
            out.push_back(int(i));
        }
        return true;
    }
};

// A layer as read, before its references are resolved: (name, isLayer) per input.
struct RawLayer {
    Layer layer;
    std::vector<std::pair<std::string, bool>> refs;
};

// The document's header fields: name, inputs, outputs, op counts, unsupported ops, params
// and foldings.
std::optional<Error> readHeader(json& j, const std::string& file, Network& net) {
    Parser p{file, {}, {}};
    auto err = [&]() { return makeError(file, p.place, p.reason); };
    try {
        net.name = j.value("name", std::string());
        // Counts are read as checked integers: a float such as 3e113 converted to an
        // integer type is undefined behaviour, not an exception (found by fuzzing).
        auto count = [&](const json& v, const std::string& place, Count& out) {
            if (!v.is_number_integer() || v.get<long long>() < 0) {
                p.place = place;
                p.reason = "expected a non-negative integer";
                return false;
            }
            out = v.get<Count>();
            return true;
        };
        if (j.contains("inputs")) {
            if (!j["inputs"].is_object())
                return makeError(file, "inputs", "expected an object of byte counts");
            for (auto it = j["inputs"].begin(); it != j["inputs"].end(); ++it) {
                Count c = 0;
                if (!count(*it, "inputs." + it.key(), c)) return err();
                net.inputBytes[it.key()] = c;
            }
        }
        if (j.contains("outputs")) net.outputs = j["outputs"].get<std::vector<std::string>>();
        if (j.contains("op_counts")) {
            if (!j["op_counts"].is_object())
                return makeError(file, "op_counts", "expected an object of counts");
            for (auto it = j["op_counts"].begin(); it != j["op_counts"].end(); ++it) {
                Count c = 0;
                if (!count(*it, "op_counts." + it.key(), c) || c > (1 << 30)) {
                    if (p.reason.empty())
                        p.place = "op_counts." + it.key(), p.reason = "count out of range";
                    return err();
                }
                net.opCounts[it.key()] = int(c);
            }
        }
        if (j.contains("unsupported"))
            net.unsupported = j["unsupported"].get<std::vector<std::string>>();
        if (j.contains("params") && !count(j["params"], "params", net.paramsCount)) return err();
        if (j.contains("folded"))
            for (const auto& f : j["folded"])
                net.folded.push_back({f.at("node").get<std::string>(),
                                      f.at("op").get<std::string>(),
                                      f.value("into", std::string())});
    } catch (const json::exception& e) {
        return makeError(file, "header", std::string("malformed field: ") + e.what());
    }

    return std::nullopt;
}

// layers[i], checked; byName holds the names of the layers read before it.
Result<RawLayer> readLayer(const json& lj, size_t i, const std::map<std::string, int>& byName,
                           const std::string& file) {
    Parser p{file, {}, {}};
    auto err = [&]() { return makeError(file, p.place, p.reason); };
    RawLayer r;
    Layer& l = r.layer;
    std::string where = "layers[" + std::to_string(i) + "]";
    if (!lj.is_object()) return makeError(file, where, "expected an object");
    if (!lj.contains("name") || !lj["name"].is_string() || lj["name"].get<std::string>().empty())
        return makeError(file, where, "missing \"name\"");
    l.name = lj["name"].get<std::string>();
    if (l.name.find_first_of(" \t\n") != std::string::npos)
        return makeError(file, where, "layer name '" + l.name + "' contains white space");
    where = "layer '" + l.name + "'";
    if (byName.count(l.name)) return makeError(file, where, "duplicated layer name");
    if (!lj.contains("kind") || !lj["kind"].is_string() ||
        !parseLayerKind(lj["kind"].get<std::string>(), l.kind))
        return makeError(file, where + ".kind",
                         "expected one of conv, gemm, matmul, pool, eltwise, vector");
    if (lj.contains("op") && !lj["op"].is_string())
        return makeError(file, where + ".op", "expected a string");
    l.op = lj.value("op", std::string(toString(l.kind)));
    std::vector<int> v;
    if (!p.intVec(lj, where, "in", v, 3, 1, true)) return err();
    l.inC = v[0], l.inH = v[1], l.inW = v[2];
    if (!p.intVec(lj, where, "out", v, 3, 1, true)) return err();
    l.outC = v[0], l.outH = v[1], l.outW = v[2];
    v = {1, 1};
    if (!p.intVec(lj, where, "kernel", v, 2, 1, false)) return err();
    l.kernelH = v[0], l.kernelW = v[1];
    v = {1, 1};
    if (!p.intVec(lj, where, "stride", v, 2, 1, false)) return err();
    l.strideH = v[0], l.strideW = v[1];
    v = {0, 0};
    if (!p.intVec(lj, where, "pad", v, 2, 0, false)) return err();
    l.padH = v[0], l.padW = v[1];
    v = {1, 1};
    if (!p.intVec(lj, where, "dilation", v, 2, 1, false)) return err();
    l.dilationH = v[0], l.dilationW = v[1];
    if (lj.contains("groups")) {
        if (!lj["groups"].is_number_integer() || lj["groups"].get<long long>() < 1 ||
            lj["groups"].get<long long>() > (1LL << 30))
            return makeError(file, where + ".groups", "expected a positive integer");
        l.groups = lj["groups"].get<int>();
    }
    if (l.inC % l.groups != 0 || l.outC % l.groups != 0)
        return makeError(file, where + ".groups", "groups must divide in and out channels");
    if (lj.contains("weight_bytes")) {
        if (!lj["weight_bytes"].is_number_integer() || lj["weight_bytes"].get<long long>() < 0)
            return makeError(file, where + ".weight_bytes", "expected a non-negative integer");
        l.weightBytes = lj["weight_bytes"].get<Count>();
    }
    if (!lj.contains("inputs") || !lj["inputs"].is_array() || lj["inputs"].empty())
        return makeError(file, where + ".inputs", "expected a non-empty list");
    for (size_t k = 0; k < lj["inputs"].size(); ++k) {
        const json& in = lj["inputs"][k];
        const std::string iw = where + ".inputs[" + std::to_string(k) + "]";
        LayerInput li;
        if (!in.is_object()) return makeError(file, iw, "expected an object");
        if (in.contains("bytes")) {
            if (!in["bytes"].is_number_integer() || in["bytes"].get<long long>() <= 0)
                return makeError(file, iw + ".bytes", "expected a positive integer");
            li.bytesPerSample = in["bytes"].get<Count>();
        }
        if (in.contains("layer") && in["layer"].is_string()) {
            r.refs.emplace_back(in["layer"].get<std::string>(), true);
        } else if (in.contains("input") && in["input"].is_string()) {
            li.networkInput = in["input"].get<std::string>();
            if (li.bytesPerSample <= 0)
                return makeError(file, iw, "a network input needs \"bytes\"");
            r.refs.emplace_back(li.networkInput, false);
        } else {
            return makeError(file, iw,
                             "expected {\"layer\": NAME} or {\"input\": NAME, \"bytes\": N}");
        }
        l.inputs.push_back(li);
    }
    if (l.kind == LayerKind::MatMul && l.inputs.size() < 2)
        return makeError(file, where + ".inputs",
                         "a matmul (activation x activation) needs two inputs");
    return r;
}

// Resolves the references and appends the layers to net in a topological order (a file
// may list them in any order); a cycle is an error naming a layer on it.
std::optional<Error> linkLayers(std::vector<RawLayer>& raw,
                                const std::map<std::string, int>& byName, const std::string& file,
                                Network& net) {
    // Kahn. Input bytes default to the producer's output.
    const size_t n = raw.size();
    std::vector<std::vector<int>> preds(n);
    for (size_t i = 0; i < n; ++i)
        for (const auto& [name, isLayer] : raw[i].refs) {
            if (!isLayer) continue;
            auto it = byName.find(name);
            if (it == byName.end())
                return makeError(file, "layer '" + raw[i].layer.name + "'",
                                 "input names unknown layer '" + name + "'");
            if (it->second == int(i))
                return makeError(file, "layer '" + raw[i].layer.name + "'",
                                 "takes its own output as input (cycle)");
            preds[i].push_back(it->second);
        }
    std::vector<int> indeg(n, 0), order;
    std::vector<std::vector<int>> succ(n);
    for (size_t i = 0; i < n; ++i)
        for (int pr : preds[i]) {
            succ[size_t(pr)].push_back(int(i));
            indeg[i]++;
        }
    // Kahn's algorithm taking the lowest file index first: a file already in topological
    // order keeps its order exactly (round trips are byte-identical).
    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    for (size_t i = 0; i < n; ++i)
        if (!indeg[i]) ready.push(int(i));
    while (!ready.empty()) {
        const int v = ready.top();
        ready.pop();
        order.push_back(v);
        for (int s : succ[size_t(v)])
            if (--indeg[size_t(s)] == 0) ready.push(s);
    }
    if (order.size() != n) {
        std::string names;
        int shown = 0;
        for (size_t i = 0; i < n && shown < 4; ++i)
            if (indeg[i]) names += (shown++ ? ", " : "") + raw[i].layer.name;
        return makeError(file, "layers", "the graph has a cycle through " + names);
    }
    std::vector<int> newIndex(n);
    for (size_t k = 0; k < n; ++k)
        newIndex[size_t(order[k])] = int(k);
    for (size_t k = 0; k < n; ++k) {
        RawLayer& r = raw[size_t(order[k])];
        for (size_t q = 0; q < r.refs.size(); ++q) {
            LayerInput& li = r.layer.inputs[q];
            if (r.refs[q].second) {
                li.producer = newIndex[size_t(byName.at(r.refs[q].first))];
                if (li.bytesPerSample <= 0)
                    li.bytesPerSample =
                        raw[size_t(byName.at(r.refs[q].first))].layer.outputBytesPerSample();
            }
        }
        net.layers.push_back(r.layer);
    }
    return std::nullopt;
}

} // namespace

Result<Network> parseNetworkJson(const std::string& text, const std::string& file) {
    auto parsed = parseJson(text, file);
    if (!parsed) return parsed.error();
    json& j = *parsed;
    if (!j.is_object() || !j.contains("format") || j["format"] != "tilescope-network")
        return makeError(file, "",
                         "not a Tilescope network (missing \"format\": \"tilescope-network\")");
    if (!j.contains("layers") || !j["layers"].is_array() || j["layers"].empty())
        return makeError(file, "layers", "expected a non-empty list");

    Network net;
    net.sourcePath = file;
    if (auto e = readHeader(j, file, net)) return *e;
    std::vector<RawLayer> raw;
    std::map<std::string, int> byName;
    for (size_t i = 0; i < j["layers"].size(); ++i) {
        auto r = readLayer(j["layers"][i], i, byName, file);
        if (!r) return r.error();
        byName[r->layer.name] = int(raw.size());
        raw.push_back(std::move(r).value());
    }
    if (auto e = linkLayers(raw, byName, file, net)) return *e;
    if (net.outputs.empty()) {
        auto cons = net.consumers();
        for (size_t i = 0; i < net.layers.size(); ++i)
            if (cons[i].empty()) net.outputs.push_back(net.layers[i].name);
    }
    for (const auto& o : net.outputs)
        if (net.indexOf(o) < 0)
            return makeError(file, "outputs", "names unknown layer '" + o + "'");
    if (net.inputBytes.empty())
        for (const auto& l : net.layers)
            for (const auto& in : l.inputs)
                if (in.producer < 0) net.inputBytes[in.networkInput] = in.bytesPerSample;
    return net;
}

} // namespace tilescope
