#include "codegen/instruction_program.h"

#include "eval/dram_layout.h"

#include <cstdio>
#include <limits>
#include <map>
#include <sstream>

namespace tilescope {

using nlohmann::json;

const char* toString(Engine e) {
    switch (e) {
    case Engine::Load:
        return "load";
    case Engine::Compute:
        return "compute";
    case Engine::Store:
        return "store";
    }
    return "?";
}

const char* toString(Op o) {
    switch (o) {
    case Op::Load:
        return "LOAD";
    case Op::Compute:
        return "COMPUTE";
    case Op::Store:
        return "STORE";
    case Op::Send:
        return "SEND";
    case Op::Program:
        return "PROGRAM";
    }
    return "?";
}

Engine engineOf(Op o) {
    switch (o) {
    case Op::Load:
        return Engine::Load;
    case Op::Compute:
    case Op::Program:
        return Engine::Compute;
    case Op::Store:
    case Op::Send:
        return Engine::Store;
    }
    return Engine::Load;
}

std::string endpointName(std::int32_t e) {
    return e == kDram ? "dram" : "tile:" + std::to_string(e);
}

std::vector<std::int32_t> Instruction::destinations() const {
    std::vector<std::int32_t> d{dst};
    d.insert(d.end(), mcast.begin(), mcast.end());
    return d;
}

size_t Program::instructionCount() const {
    size_t n = 0;
    for (const auto& t : tiles)
        n += t.instructions.size();
    return n;
}

namespace {

bool parseEndpoint(const std::string& s, std::int32_t& out) {
    if (s == "dram") {
        out = kDram;
        return true;
    }
    if (s.rfind("tile:", 0) != 0 || s.size() == 5 || s.size() > 14) return false;
    long long v = 0;
    for (size_t i = 5; i < s.size(); ++i) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (s[i] - '0');
    }
    if (v > std::numeric_limits<std::int32_t>::max()) return false;
    out = std::int32_t(v);
    return true;
}

bool parseOp(const std::string& s, Op& out) {
    for (Op o : {Op::Load, Op::Compute, Op::Store, Op::Send, Op::Program})
        if (s == toString(o)) {
            out = o;
            return true;
        }
    return false;
}

} // namespace

namespace {

// A DRAM LOAD/STORE's descriptor (Instruction::layout and the rest; docs/isa.md).
json dramDescriptorJson(const Instruction& i) {
    return {{"layout", i.layout < kLayoutCount ? layoutName(DramLayout(i.layout)) : "load-order"},
            {"base", i.base},
            {"runs", i.runs},
            {"run_bytes", i.runBytes},
            {"burst_bytes", i.burstBytes}};
}

json instructionJson(const Program& p, const Instruction& i) {
    json deps = json::array();
    for (const auto& d : i.deps)
        deps.push_back({{"id", d.id}, {"stage", d.stage}});
    json bufs = json::array();
    for (const auto& b : i.buffers)
        bufs.push_back({{"tile", b.tile},
                        {"offset", b.offset},
                        {"bytes", b.bytes},
                        {"access", b.write ? "w" : "r"}});
    json j = {{"id", i.id},
              {"engine", toString(i.engine())},
              {"op", toString(i.op)},
              {"layer",
               i.layer >= 0 && size_t(i.layer) < p.layers.size() ? p.layers[size_t(i.layer)] : ""},
              {"bytes", i.bytes},
              {"src", endpointName(i.src)},
              {"dst", endpointName(i.dst)},
              {"stages", i.stages},
              {"cycles", i.cycles},
              {"range", {{"lo", i.lo}, {"hi", i.hi}}},
              {"deps", deps},
              {"buffers", bufs}};
    if (!i.mcast.empty()) j["mcast"] = i.mcast;
    if (i.layout >= 0) j["dram"] = dramDescriptorJson(i);
    if (i.core >= 0) j["core"] = i.core;
    return j;
}

json hardwareOf(const Program& p) {
    return json::parse(p.hardwareJson.empty() ? "null" : p.hardwareJson, nullptr, false);
}

} // namespace

json programToJson(const Program& p) {
    json tiles = json::array();
    for (const auto& t : p.tiles) {
        json ins = json::array();
        for (const auto& i : t.instructions)
            ins.push_back(instructionJson(p, i));
        tiles.push_back({{"id", t.id}, {"x", t.x}, {"y", t.y}, {"instructions", std::move(ins)}});
    }
    return {{"format", "tilescope-program"}, {"version", 1},
            {"hardware", hardwareOf(p)},     {"layers", p.layers},
            {"schedule", p.schedule},        {"tiles", std::move(tiles)}};
}

void writeProgramJson(std::ostream& o, const Program& p) {
    // Written by hand, not through a json value per instruction: millions of instructions
    // stream out in seconds. Only layer names need escaping; they are escaped once.
    std::vector<std::string> layerJson;
    for (const auto& l : p.layers)
        layerJson.push_back(json(l).dump());
    o << "{\n \"format\": \"tilescope-program\",\n \"version\": 1,\n \"hardware\": "
      << hardwareOf(p).dump() << ",\n \"layers\": " << json(p.layers).dump()
      << ",\n \"schedule\": " << p.schedule.dump() << ",\n \"tiles\": [";
    auto quad = [&](const std::array<std::int32_t, 4>& v) {
        o << '[' << v[0] << ',' << v[1] << ',' << v[2] << ',' << v[3] << ']';
    };
    for (size_t t = 0; t < p.tiles.size(); ++t) {
        const TileProgram& tp = p.tiles[t];
        o << (t ? ",\n" : "\n") << "  {\"id\": " << tp.id << ", \"x\": " << tp.x
          << ", \"y\": " << tp.y << ", \"instructions\": [";
        for (size_t k = 0; k < tp.instructions.size(); ++k) {
            const Instruction& i = tp.instructions[k];
            o << (k ? ",\n   " : "\n   ") << "{\"id\":" << i.id << ",\"engine\":\""
              << toString(i.engine()) << "\",\"op\":\"" << toString(i.op) << "\",\"layer\":"
              << (i.layer >= 0 && size_t(i.layer) < layerJson.size() ? layerJson[size_t(i.layer)]
                                                                     : "\"\"")
              << ",\"bytes\":" << i.bytes << ",\"src\":\"" << endpointName(i.src) << "\",\"dst\":\""
              << endpointName(i.dst) << "\",\"stages\":" << i.stages << ",\"cycles\":" << i.cycles
              << ",\"range\":{\"lo\":";
            quad(i.lo);
            o << ",\"hi\":";
            quad(i.hi);
            o << "},\"deps\":[";
            for (size_t d = 0; d < i.deps.size(); ++d)
                o << (d ? "," : "") << "{\"id\":" << i.deps[d].id
                  << ",\"stage\":" << i.deps[d].stage << '}';
            o << "],\"buffers\":[";
            for (size_t b = 0; b < i.buffers.size(); ++b) {
                const BufferRef& r = i.buffers[b];
                o << (b ? "," : "") << "{\"tile\":" << r.tile << ",\"offset\":" << r.offset
                  << ",\"bytes\":" << r.bytes << ",\"access\":\"" << (r.write ? 'w' : 'r') << "\"}";
            }
            o << ']';
            if (!i.mcast.empty()) {
                o << ",\"mcast\":[";
                for (size_t m = 0; m < i.mcast.size(); ++m)
                    o << (m ? "," : "") << i.mcast[m];
                o << ']';
            }
            if (i.layout >= 0) o << ",\"dram\":" << dramDescriptorJson(i).dump();
            if (i.core >= 0) o << ",\"core\":" << i.core;
            o << '}';
        }
        o << (tp.instructions.empty() ? "]}" : "\n  ]}");
    }
    o << "\n ]\n}\n";
}

Result<Program> programFromJson(const json& j, const std::string& file) {
    Program p;
    std::string place = "top level";
    try {
        if (!j.is_object()) return makeError(file, "", "not a program (expected a JSON object)");
        if (!j.contains("tiles") || !j["tiles"].is_array())
            return makeError(file, "", "not a program (no \"tiles\" array)");
        if (j.contains("hardware") && !j["hardware"].is_null())
            p.hardwareJson = j["hardware"].dump();
        if (j.contains("schedule")) p.schedule = j["schedule"];
        std::map<std::string, int> layerIndex;
        if (j.contains("layers"))
            for (const auto& l : j["layers"]) {
                layerIndex[l.get<std::string>()] = int(p.layers.size());
                p.layers.push_back(l.get<std::string>());
            }
        for (const auto& jt : j["tiles"]) {
            TileProgram t;
            place = "tile";
            t.id = jt.at("id").get<std::int32_t>();
            place = "tile " + std::to_string(t.id);
            t.x = jt.value("x", 0);
            t.y = jt.value("y", 0);
            for (const auto& ji : jt.at("instructions")) {
                Instruction i;
                place = "tile " + std::to_string(t.id) + " instruction";
                i.id = ji.at("id").get<std::uint32_t>();
                place = "instruction " + std::to_string(i.id);
                i.tile = t.id;
                if (!parseOp(ji.at("op").get<std::string>(), i.op))
                    return makeError(file, place,
                                     "unknown op '" + ji["op"].get<std::string>() + "'");
                if (ji.contains("engine") &&
                    ji["engine"].get<std::string>() != toString(i.engine()))
                    return makeError(file, place,
                                     "op " + std::string(toString(i.op)) +
                                         " does not run on engine '" +
                                         ji["engine"].get<std::string>() + "'");
                const std::string layer = ji.value("layer", std::string());
                if (!layer.empty()) {
                    auto it = layerIndex.find(layer);
                    if (it == layerIndex.end()) {
                        it = layerIndex.emplace(layer, int(p.layers.size())).first;
                        p.layers.push_back(layer);
                    }
                    i.layer = it->second;
                }
                i.bytes = ji.value("bytes", std::uint64_t(0));
                if (!parseEndpoint(ji.value("src", std::string("dram")), i.src))
                    return makeError(file, place, "bad src '" + ji["src"].get<std::string>() + "'");
                if (!parseEndpoint(ji.value("dst", std::string("dram")), i.dst))
                    return makeError(file, place, "bad dst '" + ji["dst"].get<std::string>() + "'");
                if (ji.contains("mcast")) i.mcast = ji["mcast"].get<std::vector<std::int32_t>>();
                i.stages = ji.value("stages", 1u);
                i.cycles = ji.value("cycles", std::uint64_t(0));
                if (ji.contains("range")) {
                    i.lo = ji["range"].at("lo").get<std::array<std::int32_t, 4>>();
                    i.hi = ji["range"].at("hi").get<std::array<std::int32_t, 4>>();
                }
                if (ji.contains("dram")) {
                    const json& d = ji["dram"];
                    const std::string name = d.value("layout", std::string("load-order"));
                    const auto l = layoutFromName(name);
                    if (!l && name != "load-order")
                        return makeError(file, place + ".dram.layout",
                                         "unknown layout '" + name + "'");
                    i.layout = l ? int(*l) : kLayoutCount;
                    i.base = d.value("base", std::uint64_t(0));
                    i.runs = d.value("runs", std::uint64_t(0));
                    i.runBytes = d.value("run_bytes", std::uint64_t(0));
                    i.burstBytes = d.value("burst_bytes", std::uint64_t(0));
                }
                if (ji.contains("core")) {
                    i.core = ji["core"].get<std::int32_t>();
                    if (i.core < 0)
                        return makeError(file, place + ".core",
                                         "must be a core index (got " + std::to_string(i.core) +
                                             ")");
                }
                if (ji.contains("deps"))
                    for (const auto& d : ji["deps"])
                        i.deps.push_back({d.at("id").get<std::uint32_t>(), d.value("stage", 1u)});
                if (ji.contains("buffers"))
                    for (const auto& b : ji["buffers"]) {
                        BufferRef r;
                        r.tile = b.value("tile", t.id);
                        r.offset = b.at("offset").get<std::uint64_t>();
                        r.bytes = b.at("bytes").get<std::uint64_t>();
                        r.write = b.value("access", std::string("r")) == "w";
                        i.buffers.push_back(r);
                    }
                t.instructions.push_back(std::move(i));
            }
            p.tiles.push_back(std::move(t));
        }
    } catch (const json::exception& e) {
        return makeError(file, place, std::string("malformed: ") + e.what());
    }
    return p;
}

std::string programToText(const Program& p) {
    std::ostringstream o;
    writeProgramText(o, p);
    return o.str();
}

void writeProgramText(std::ostream& o, const Program& p) {
    o << "# tilescope program: " << p.tiles.size() << " tiles, " << p.instructionCount()
      << " instructions\n# id engine op layer src -> dst bytes stages cycles range deps buffers\n";
    for (const auto& t : p.tiles) {
        o << "\ntile " << t.id << " (" << t.x << "," << t.y << "): " << t.instructions.size()
          << " instructions\n";
        for (const auto& i : t.instructions) {
            char head[160];
            std::snprintf(head, sizeof head, "  %6u %-7s %-7s %-20s ", i.id, toString(i.engine()),
                          toString(i.op),
                          i.layer >= 0 && size_t(i.layer) < p.layers.size()
                              ? p.layers[size_t(i.layer)].c_str()
                              : "-");
            o << head << endpointName(i.src) << " -> " << endpointName(i.dst);
            for (auto m : i.mcast)
                o << "," << m;
            o << "  " << i.bytes << " B  x" << i.stages;
            if (i.op == Op::Compute || i.op == Op::Program) o << "  " << i.cycles << " cyc";
            if (i.core >= 0) o << "  core " << i.core;
            o << "  [" << i.lo[0] << ":" << i.hi[0] << "," << i.lo[1] << ":" << i.hi[1] << ","
              << i.lo[2] << ":" << i.hi[2] << "," << i.lo[3] << ":" << i.hi[3] << "]";
            if (i.layout >= 0)
                o << "  dram "
                  << (i.layout < kLayoutCount ? layoutName(DramLayout(i.layout)) : "load-order")
                  << " @" << i.base << " " << i.runs << "x" << i.runBytes << " B (" << i.burstBytes
                  << " B in bursts)";
            if (!i.deps.empty()) {
                o << "  deps";
                for (const auto& d : i.deps)
                    o << " " << d.id << "@" << d.stage;
            }
            if (!i.buffers.empty()) {
                o << "  buf";
                for (const auto& b : i.buffers)
                    o << " t" << b.tile << ":" << b.offset << "+" << b.bytes
                      << (b.write ? "w" : "r");
            }
            o << "\n";
        }
    }
}

} // namespace tilescope
