#include "cli_commands.h"

#include "model/model_loader.h"
#include "util/fileio.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace tilescope::cli {

using nlohmann::json;

std::vector<std::string> Args::all(const std::string& k) const {
    std::vector<std::string> v;
    auto [b, e] = options.equal_range(k);
    for (auto it = b; it != e; ++it)
        v.push_back(it->second);
    return v;
}

namespace {
std::atomic<bool> g_interrupted{false};
extern "C" void onInterrupt(int) {
    g_interrupted.store(true);
}
} // namespace

Interruptible::Interruptible() {
    g_interrupted.store(false);
    std::signal(SIGINT, onInterrupt);
}

Interruptible::~Interruptible() {
    std::signal(SIGINT, SIG_DFL);
}

bool Interruptible::poll() {
    if (g_interrupted.load()) source.request_stop();
    return source.stop_requested();
}

int userError(const std::string& message) {
    std::cerr << "tilescope-cli: " << message << "\n";
    return 1;
}

namespace {

std::string onePositional(const Args& a, const char* what) {
    if (a.positional.size() != 1)
        throw UsageError{std::string("expected exactly one ") + what + " argument"};
    return a.positional[0];
}

std::string human(double v) {
    const char* units[] = {"", "K", "M", "G", "T"};
    int u = 0;
    while (v >= 1000 && u < 4) {
        v /= 1000;
        ++u;
    }
    std::ostringstream s;
    s << std::fixed << std::setprecision(u ? 2 : 0) << v << units[u];
    return s.str();
}

} // namespace

ImportOptions importOptions(const Args& a) {
    ImportOptions o;
    o.unknownOpFallback = a.get("--fallback");
    if (!o.unknownOpFallback.empty() && o.unknownOpFallback != "vector" &&
        o.unknownOpFallback != "eltwise" && o.unknownOpFallback != "fold")
        throw UsageError{"--fallback takes vector, eltwise or fold"};
    for (const std::string& d : a.all("--dim")) {
        auto b = parseDimBinding(d);
        if (!b) throw UsageError{b.error().message};
        if (!o.dims.emplace(b->first, b->second).second)
            throw UsageError{"--dim " + b->first + " given twice"};
    }
    return o;
}

ImportOptions importOptionsOf(const nlohmann::json& doc, const std::string& path) {
    ImportOptions o;
    if (!doc.is_object()) return o;
    if (doc.contains("dims")) {
        auto dims = dimsFromJson(doc["dims"], path);
        if (!dims) throw UsageError{dims.error().message};
        o.dims = std::move(dims).value();
    }
    if (doc.contains("kept_on_chip"))
        if (auto e = keptOnChipFromJson(doc["kept_on_chip"], path, o)) throw UsageError{e->message};
    return o;
}

int runInspect(const Args& a) {
    const std::string path = onePositional(a, "MODEL");
    auto net = loadModel(path, importOptions(a));
    if (!net) return userError(net.error().message);
    const Network& n = *net;

    json ops = json::object();
    for (const auto& [op, count] : n.opCounts)
        ops[op] = count;
    json folded = json::array();
    for (const auto& f : n.folded)
        folded.push_back({{"node", f.node}, {"op", f.op}, {"into", f.into}});
    std::map<std::string, int> kinds;
    for (const auto& l : n.layers)
        kinds[toString(l.kind)]++;

    if (a.has("--json")) {
        json j = {{"model", path},
                  {"name", n.name},
                  {"layers", n.layers.size()},
                  {"macs", n.totalMacsPerSample()},
                  {"params", n.paramsCount},
                  {"weight_bytes", n.totalWeightBytes()},
                  {"ops", ops},
                  {"kinds", kinds},
                  {"folded", folded},
                  {"unsupported", n.unsupported},
                  {"inputs", n.inputBytes},
                  {"outputs", n.outputs}};
        json layers = json::array();
        for (const auto& l : n.layers) {
            json ins = json::array();
            for (const auto& in : l.inputs)
                ins.push_back(in.producer >= 0 ? n.layers[size_t(in.producer)].name
                                               : "input:" + in.networkInput);
            layers.push_back({{"name", l.name},
                              {"kind", toString(l.kind)},
                              {"op", l.op},
                              {"in", {l.inC, l.inH, l.inW}},
                              {"out", {l.outC, l.outH, l.outW}},
                              {"macs", l.macsPerSample()},
                              {"weight_bytes", l.weightBytes},
                              {"inputs", ins}});
        }
        j["layer_list"] = layers;
        std::cout << j.dump(2) << "\n";
        return 0;
    }

    std::printf("%s: %zu scheduled layers, %s MACs per sample, %s params\n", path.c_str(),
                n.layers.size(), human(double(n.totalMacsPerSample())).c_str(),
                human(double(n.paramsCount)).c_str());
    std::printf("%-32s %-8s %-14s %-14s %10s %10s  %s\n", "layer", "kind", "in CxHxW", "out CxHxW",
                "MACs", "weights", "inputs");
    for (const auto& l : n.layers) {
        auto dims = [](int c, int h, int w) {
            return std::to_string(c) + "x" + std::to_string(h) + "x" + std::to_string(w);
        };
        std::string ins;
        for (const auto& in : l.inputs) {
            if (!ins.empty()) ins += ",";
            ins +=
                in.producer >= 0 ? n.layers[size_t(in.producer)].name : "<" + in.networkInput + ">";
        }
        std::printf("%-32s %-8s %-14s %-14s %10s %10s  %s\n", l.name.c_str(), toString(l.kind),
                    dims(l.inC, l.inH, l.inW).c_str(), dims(l.outC, l.outH, l.outW).c_str(),
                    human(double(l.macsPerSample())).c_str(), human(double(l.weightBytes)).c_str(),
                    ins.c_str());
    }
    std::printf("\nop counts:");
    for (const auto& [op, c] : n.opCounts)
        std::printf(" %s=%d", op.c_str(), c);
    std::printf("\nfolded: %zu nodes", n.folded.size());
    if (!n.unsupported.empty()) {
        std::printf("\nunsupported (fallback applied):");
        for (const auto& u : n.unsupported)
            std::printf(" %s", u.c_str());
    }
    std::printf("\n");
    return 0;
}

} // namespace tilescope::cli
