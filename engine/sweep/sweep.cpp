#include "sweep/sweep.h"

#include "eval/evaluator.h"
#include "model/model_loader.h"
#include "tree/tree_json.h"
#include "util/fileio.h"
#include "util/json.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <functional>
#include <limits>
#include <set>

namespace tilescope {

using nlohmann::json;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string quoted(const std::string& key) {
    return "\"" + key + "\"";
}

// A non-empty list at j[key]; the error names the place.
bool nonEmptyList(const json& j, const char* key, std::string& error) {
    if (!j[key].is_array() || j[key].empty()) {
        error = std::string(key) + ": expected a non-empty list";
        return false;
    }
    return true;
}

bool wholeNumber(const json& v, double min, double max, double& out) {
    if (!v.is_number()) return false;
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || d < min || d > max) return false;
    out = d;
    return true;
}

std::string resolvePath(const std::string& dir, const std::string& p) {
    std::filesystem::path path(p);
    if (path.is_relative() && !dir.empty()) path = std::filesystem::path(dir) / path;
    std::error_code ec;
    auto abs = std::filesystem::absolute(path, ec);
    return (ec ? path : abs).lexically_normal().string();
}

// "12", "\"cim\"", "[\"west\"]": a value as a hardware name shows it.
std::string valueText(const json& v) {
    return v.is_string() ? v.get<std::string>() : v.dump();
}

struct HardwareBase {
    std::string name;
    json value;
    Objective objective; // defaultObjective of the base as it stands
};

Result<HardwareBase> hardwareBase(const std::string& ref, const std::string& file,
                                  const std::string& place, const std::string& dir) {
    const std::string path = resolvePath(dir, ref);
    std::error_code ec;
    Hardware preset;
    if (!std::filesystem::exists(path, ec)) {
        if (presetHardware(ref, preset))
            return HardwareBase{ref, hardwareToJson(preset), defaultObjective(preset)};
        return makeError(
            file, place,
            "'" + ref + "': no such file, and not a preset (edge, cloud, testchip, cim, chiplet)");
    }
    auto text = readFile(path);
    if (!text) return makeError(file, place, text.error().message);
    auto j = parseJson(*text, path);
    if (!j) return makeError(file, place, j.error().message);
    // The file must be a template by itself, before any `set`.
    auto hw = parseHardwareValue(*j, path);
    if (!hw) return makeError(file, place, hw.error().message);
    std::string name = j->contains("name") ? hw->name : std::filesystem::path(path).stem().string();
    return HardwareBase{name, std::move(j).value(), defaultObjective(*hw)};
}

std::optional<Error> parseHardwareEntry(const json& entry, const std::string& file,
                                        const std::string& place, const std::string& dir,
                                        std::vector<SweepHardware>& out) {
    if (entry.is_string()) {
        auto base = hardwareBase(entry.get<std::string>(), file, place, dir);
        if (!base) return base.error();
        auto hw = parseHardwareValue(base->value, file + ": " + place);
        if (!hw) return hw.error();
        hw->name = base->name;
        out.push_back({base->name, place, hardwareToJson(*hw), *hw, base->objective});
        return std::nullopt;
    }
    if (!entry.is_object())
        return makeError(file, place,
                         "expected a preset name, a file, or {\"base\": ..., \"set\" / \"vary\": "
                         "{...}}");
    JsonReader r;
    if (!r.checkKeys(entry, place, {"base", "set", "vary", "name", "comment"}))
        return makeError(file, "", r.error);
    if (!entry.contains("base") || !entry["base"].is_string())
        return makeError(file, place + ".base", "expected a preset name or a file");
    auto base = hardwareBase(entry["base"].get<std::string>(), file, place + ".base", dir);
    if (!base) return base.error();
    std::string name = base->name;
    if (entry.contains("name")) {
        if (!entry["name"].is_string() || entry["name"].get<std::string>().empty())
            return makeError(file, place + ".name", "expected a non-empty string");
        name = entry["name"].get<std::string>();
    }
    json j = base->value;
    if (entry.contains("set")) {
        const json& set = entry["set"];
        if (!set.is_object())
            return makeError(file, place + ".set", "expected an object of dotted keys");
        for (const auto& [k, v] : set.items()) {
            if (auto e = setDottedKey(j, k, v))
                return makeError(file, place + ".set." + quoted(k), e->message);
            if (!entry.contains("name")) name += " " + k + "=" + valueText(v);
        }
    }
    // vary: every combination, the last key varying fastest.
    std::vector<std::pair<std::string, std::vector<json>>> axes;
    if (entry.contains("vary")) {
        const json& vary = entry["vary"];
        if (!vary.is_object() || vary.empty())
            return makeError(file, place + ".vary",
                             "expected an object of dotted keys, each with a list of values");
        for (const auto& [k, v] : vary.items()) {
            if (!v.is_array() || v.empty())
                return makeError(file, place + ".vary." + quoted(k),
                                 "expected a non-empty list of values");
            json probe = j;
            if (auto e = setDottedKey(probe, k, v[0]))
                return makeError(file, place + ".vary." + quoted(k), e->message);
            axes.emplace_back(k, std::vector<json>(v.begin(), v.end()));
        }
    }
    std::vector<std::size_t> at(axes.size(), 0);
    while (true) {
        json variant = j;
        std::string variantName = name, which;
        for (std::size_t a = 0; a < axes.size(); ++a) {
            const json& v = axes[a].second[at[a]];
            setDottedKey(variant, axes[a].first, v); // checked on the probe above
            variantName += " " + axes[a].first + "=" + valueText(v);
            which += (which.empty() ? "" : ", ") + axes[a].first + "=" + valueText(v);
        }
        variant["name"] = variantName;
        const std::string where = which.empty() ? place : place + " (" + which + ")";
        auto hw = parseHardwareValue(variant, file + ": " + where);
        if (!hw) return hw.error();
        out.push_back({variantName, place, hardwareToJson(*hw), *hw, base->objective});
        bool more = false;
        for (std::size_t a = axes.size(); a > 0 && !more; --a) {
            if (++at[a - 1] < axes[a - 1].second.size())
                more = true;
            else
                at[a - 1] = 0;
        }
        if (!more) return std::nullopt;
    }
}

std::optional<Error> parseSearch(const json& s, const std::string& file, SearchConfig& c) {
    JsonReader r;
    if (!r.checkKeys(s, "search",
                     {"mode", "beta", "iterations", "time", "chains", "threads", "t0", "alpha",
                      "min_util", "warmup", "portfolio", "layouts", "comment"}))
        return makeError(file, "", r.error);
    const int budgets =
        int(s.contains("beta")) + int(s.contains("iterations")) + int(s.contains("time"));
    if (budgets > 1)
        return makeError(file, "search", "beta, iterations and time each set the budget; give one");
    if (s.contains("mode")) {
        if (!s["mode"].is_string() || !parseSearchMode(s["mode"].get<std::string>(), c.mode))
            return makeError(file, "search.mode", "expected set, ls, lp, dp-lp or random");
    }
    if (!r.num(s, "search", "beta", c.beta, true) || !r.num(s, "search", "t0", c.t0, false) ||
        !r.num(s, "search", "alpha", c.alpha, false) ||
        !r.num(s, "search", "time", c.seconds, true) ||
        !r.num(s, "search", "min_util", c.minUtilisation, false) ||
        !r.num(s, "search", "warmup", c.warmupShare, false))
        return makeError(file, "", r.error);
    if (c.minUtilisation > 1) return makeError(file, "search.min_util", "must be in [0, 1]");
    if (c.warmupShare >= 1) return makeError(file, "search.warmup", "must be in [0, 1)");
    if (c.seconds > maxSearchSeconds())
        return makeError(file, "search.time",
                         "at most " + std::to_string(long(maxSearchSeconds())) + " seconds");
    double d = 0;
    if (s.contains("iterations")) {
        if (!wholeNumber(s["iterations"], 1, double(maxIterationsPerChain()), d))
            return makeError(file, "search.iterations",
                             "expected a whole number from 1 to " +
                                 std::to_string(maxIterationsPerChain()));
        c.iterations = (long long)d;
    }
    if (s.contains("chains")) {
        if (!wholeNumber(s["chains"], 1, 4096, d))
            return makeError(file, "search.chains", "expected a whole number from 1 to 4096");
        c.chains = int(d);
    }
    if (s.contains("threads")) {
        if (!wholeNumber(s["threads"], 1, 4096, d))
            return makeError(file, "search.threads", "expected a whole number from 1 to 4096");
        c.threads = int(d);
    }
    if (s.contains("portfolio")) {
        if (!s["portfolio"].is_boolean())
            return makeError(file, "search.portfolio", "expected true or false");
        c.portfolio = s["portfolio"].get<bool>();
    }
    if (s.contains("layouts")) {
        const auto l = s["layouts"].is_string()
                           ? layoutChoiceFromName(s["layouts"].get<std::string>())
                           : std::nullopt;
        if (!l)
            return makeError(file, "search.layouts", "expected auto, nchw, nhwc, chwn or nchwc");
        c.layouts = *l;
    }
    return std::nullopt;
}

// One key of the spec's `dims`: a fixed size (one value) or a swept axis (several).
struct DimAxis {
    std::string name;
    std::vector<std::int64_t> values;
};

std::optional<Error> parseDims(const json& d, const std::string& file, std::vector<DimAxis>& out) {
    if (!d.is_object() || d.empty())
        return makeError(file, "dims",
                         "expected an object of free dimensions, each a size or a list of sizes "
                         "(e.g. {\"seq\": [512, 1024, 2048]})");
    const double max = double(1LL << 31);
    for (const auto& [name, v] : d.items()) {
        const std::string place = "dims." + quoted(name);
        DimAxis axis{name, {}};
        const json list = v.is_array() ? v : json::array({v});
        if (list.empty()) return makeError(file, place, "expected a size or a non-empty list");
        for (std::size_t i = 0; i < list.size(); ++i) {
            double x = 0;
            if (!wholeNumber(list[i], 1, max, x))
                return makeError(file, v.is_array() ? place + "[" + std::to_string(i) + "]" : place,
                                 "expected a whole number from 1 to 2^31 (got " + list[i].dump() +
                                     ")");
            axis.values.push_back(std::int64_t(x));
        }
        out.push_back(std::move(axis));
    }
    return std::nullopt;
}

// Every combination of the axes' values, the last axis varying fastest.
std::vector<std::map<std::string, std::int64_t>> dimCombinations(const std::vector<DimAxis>& axes) {
    std::vector<std::map<std::string, std::int64_t>> out{{}};
    for (const DimAxis& a : axes) {
        std::vector<std::map<std::string, std::int64_t>> next;
        for (const auto& c : out)
            for (std::int64_t v : a.values) {
                auto d = c;
                d[a.name] = v;
                next.push_back(std::move(d));
            }
        out = std::move(next);
    }
    return out;
}

// The model at models[i], once for each combination of the spec's dims that it has (a model
// without free dimensions once, as before sweeps knew of them). `used` collects the dims
// names some model has.
std::optional<Error> loadSweepModels(const json& m, const std::string& place,
                                     const std::string& file, const std::string& dir,
                                     const std::vector<DimAxis>& dimAxes,
                                     std::set<std::string>& used, SweepSpec& spec) {
    if (!m.is_string() || m.get<std::string>().empty())
        return makeError(file, place, "expected a model path");
    const std::string path = resolvePath(dir, m.get<std::string>());
    std::vector<DimAxis> own;
    if (!dimAxes.empty()) {
        auto free = freeDimensions(path);
        if (!free) return makeError(file, place, free.error().message);
        for (const DimAxis& a : dimAxes)
            if (std::any_of(free->begin(), free->end(),
                            [&](const FreeDimension& f) { return f.name == a.name; })) {
                own.push_back(a);
                used.insert(a.name);
            }
    }
    std::string sha;
    for (const auto& dims : dimCombinations(own)) {
        ImportOptions opts;
        opts.dims = dims;
        auto net = loadModel(path, opts);
        if (!net) return makeError(file, place, net.error().message);
        if (sha.empty()) {
            auto h = sha256File(path);
            if (!h) return makeError(file, place, h.error().message);
            sha = *h;
        }
        if (spec.search.seconds == 0) {
            if (auto n = iterationBudget(spec.search, net->layers.size()); !n)
                return makeError(file, spec.search.iterations ? "search.iterations" : "search.beta",
                                 place + " (" + std::to_string(net->layers.size()) +
                                     " layers): " + n.error().message);
        }
        spec.models.push_back(
            {path, sha, dims, std::make_shared<const Network>(std::move(net).value())});
    }
    return std::nullopt;
}

std::string utcNow() {
    const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

} // namespace

std::optional<Error> setDottedKey(json& j, const std::string& dottedKey, const json& value) {
    if (dottedKey.empty() || dottedKey.front() == '.' || dottedKey.back() == '.' ||
        dottedKey.find("..") != std::string::npos)
        return Error{"expected a dotted key such as noc.link_bytes_per_cycle"};
    json* at = &j;
    std::size_t from = 0;
    while (true) {
        const std::size_t dot = dottedKey.find('.', from);
        const std::string part = dottedKey.substr(from, dot - from);
        if (!at->is_object())
            return Error{"'" + dottedKey.substr(0, from - 1) + "' is not an object"};
        if (dot == std::string::npos) {
            (*at)[part] = value;
            return std::nullopt;
        }
        at = &(*at)[part];
        if (at->is_null()) *at = json::object();
        from = dot + 1;
    }
}

std::vector<std::pair<std::string, json>> flattenJson(const json& j) {
    std::vector<std::pair<std::string, json>> out;
    std::function<void(const json&, const std::string&)> walk = [&](const json& v,
                                                                    const std::string& prefix) {
        if (v.is_object() && !v.empty()) {
            for (const auto& [k, c] : v.items())
                walk(c, prefix.empty() ? k : prefix + "." + k);
        } else {
            out.emplace_back(prefix, v);
        }
    };
    walk(j, "");
    return out;
}

Result<SweepSpec> parseSweepSpec(const std::string& text, const std::string& file,
                                 const std::string& dir) {
    auto doc = parseJson(text, file);
    if (!doc) return doc.error();
    const json& j = *doc;
    if (!j.is_object()) return makeError(file, "", "expected a JSON object");
    JsonReader r;
    if (!r.checkKeys(
            j, "",
            {"models", "dims", "hardware", "batches", "objectives", "seeds", "search", "comment"}))
        return makeError(file, "", r.error);
    std::string err;
    for (const char* k : {"models", "hardware"})
        if (!j.contains(k) || !nonEmptyList(j, k, err))
            return makeError(file, k, "expected a non-empty list");

    SweepSpec spec;
    spec.file = file;
    spec.search.chains = defaultSearchChains();
    spec.search.threads = 1;
    spec.search.seconds = 0; // beta 100 unless the spec gives a budget
    if (j.contains("search")) {
        if (!j["search"].is_object()) return makeError(file, "search", "expected an object");
        if (auto e = parseSearch(j["search"], file, spec.search)) return *e;
    }

    std::vector<DimAxis> dimAxes;
    if (j.contains("dims"))
        if (auto e = parseDims(j["dims"], file, dimAxes)) return *e;
    std::set<std::string> dimsUsed;
    for (std::size_t i = 0; i < j["models"].size(); ++i)
        if (auto e = loadSweepModels(j["models"][i], "models[" + std::to_string(i) + "]", file, dir,
                                     dimAxes, dimsUsed, spec))
            return *e;
    for (const DimAxis& d : dimAxes)
        if (!dimsUsed.count(d.name))
            return makeError(file, "dims." + quoted(d.name),
                             "no model of the spec has a free dimension of that name");

    for (std::size_t i = 0; i < j["hardware"].size(); ++i)
        if (auto e = parseHardwareEntry(j["hardware"][i], file,
                                        "hardware[" + std::to_string(i) + "]", dir, spec.hardware))
            return *e;

    if (j.contains("batches")) {
        if (!nonEmptyList(j, "batches", err)) return makeError(file, "", err);
        spec.batches.clear();
        for (std::size_t i = 0; i < j["batches"].size(); ++i) {
            double d = 0;
            if (!wholeNumber(j["batches"][i], 1, 1 << 20, d))
                return makeError(file, "batches[" + std::to_string(i) + "]",
                                 "expected a whole number from 1 to " + std::to_string(1 << 20) +
                                     " (got " + j["batches"][i].dump() + ")");
            spec.batches.push_back(int(d));
        }
    }
    if (j.contains("objectives")) {
        if (!nonEmptyList(j, "objectives", err)) return makeError(file, "", err);
        for (std::size_t i = 0; i < j["objectives"].size(); ++i) {
            const json& o = j["objectives"][i];
            const bool pair = o.is_array() && o.size() == 2 && o[0].is_number() &&
                              o[1].is_number() && std::isfinite(o[0].get<double>()) &&
                              std::isfinite(o[1].get<double>());
            if (!pair || o[0].get<double>() < 0 || o[1].get<double>() < 0 ||
                (o[0].get<double>() == 0 && o[1].get<double>() == 0))
                return makeError(file, "objectives[" + std::to_string(i) + "]",
                                 "expected [n, m]: two non-negative numbers, not both 0 (got " +
                                     o.dump() + ")");
            spec.objectives.push_back({o[0].get<double>(), o[1].get<double>()});
        }
    }
    if (j.contains("seeds")) {
        if (!nonEmptyList(j, "seeds", err)) return makeError(file, "", err);
        spec.seeds.clear();
        for (std::size_t i = 0; i < j["seeds"].size(); ++i) {
            const json& s = j["seeds"][i];
            // JSON integers beyond 2^53 do not survive every reader: refuse them.
            if (!s.is_number_integer() || s.get<long long>() < 0 ||
                s.get<long long>() > (1LL << 53))
                return makeError(file, "seeds[" + std::to_string(i) + "]",
                                 "expected a whole number from 0 to 2^53 (got " + s.dump() + ")");
            spec.seeds.push_back(s.get<std::uint64_t>());
        }
    }
    return spec;
}

Result<SweepSpec> loadSweepSpec(const std::string& path) {
    auto text = readFile(path);
    if (!text) return text.error();
    return parseSweepSpec(*text, path, std::filesystem::path(path).parent_path().string());
}

json sweepSearchJson(const SearchConfig& c) {
    json j = {{"mode", toString(c.mode)}, {"chains", c.chains},           {"t0", c.t0},
              {"alpha", c.alpha},         {"min_util", c.minUtilisation}, {"warmup", c.warmupShare},
              {"portfolio", c.portfolio}};
    // Only when not planned, so the points of specs without it keep their keys.
    if (!c.layouts.planned) j["layouts"] = layoutChoiceName(c.layouts);
    if (c.seconds > 0)
        j["time"] = c.seconds;
    else if (c.iterations > 0)
        j["iterations"] = c.iterations;
    else
        j["beta"] = c.beta;
    return j;
}

std::string sweepPointKey(const std::string& modelSha256, const json& hwJson, int batch,
                          const Objective& objective, std::uint64_t seed, const json& searchJson,
                          const std::map<std::string, std::int64_t>& dims) {
    json hw = hwJson;
    hw.erase("name"); // a label: renaming a variant does not make its points new
    json k = {{"model_sha256", modelSha256},
              {"hw", hw},
              {"batch", batch},
              {"objective", {objective.n, objective.m}},
              {"seed", seed},
              {"search", searchJson}};
    if (!dims.empty()) k["dims"] = dims;
    return sha256Hex(k.dump()); // object keys sorted: the same point, the same text
}

std::vector<SweepPoint> expandSweep(const SweepSpec& spec) {
    std::vector<SweepPoint> out;
    std::set<std::string> seen;
    const json search = sweepSearchJson(spec.search);
    for (int m = 0; m < int(spec.models.size()); ++m)
        for (int h = 0; h < int(spec.hardware.size()); ++h) {
            const std::vector<Objective> objectives =
                spec.objectives.empty() ? std::vector<Objective>{spec.hardware[size_t(h)].objective}
                                        : spec.objectives;
            for (int b : spec.batches)
                for (const Objective& o : objectives)
                    for (std::uint64_t s : spec.seeds) {
                        const SweepModel& model = spec.models[size_t(m)];
                        std::string key = sweepPointKey(model.sha256, spec.hardware[size_t(h)].json,
                                                        b, o, s, search, model.dims);
                        if (!seen.insert(key).second) continue;
                        out.push_back(SweepPoint{out.size(), std::move(key), m, h, b, o, s});
                    }
        }
    return out;
}

SearchConfig sweepPointConfig(const SweepSpec& spec, const SweepPoint& p) {
    SearchConfig c = spec.search;
    c.seed = p.seed;
    c.objective = p.objective;
    c.totalBatch = p.batch;
    return c;
}

Result<std::map<std::string, std::int64_t>> sweepRowDims(const SweepRow& r,
                                                         const std::string& where) {
    if (r.dims.empty()) return std::map<std::string, std::int64_t>{};
    const json j = json::parse(r.dims, nullptr, false);
    if (j.is_discarded()) return Error{where + ": dims: not JSON"};
    return dimsFromJson(j, where);
}

json sweepRowToJson(const SweepRow& r) {
    auto num = [](double d) { return std::isfinite(d) ? json(d) : json(nullptr); };
    return {{"point", r.point},
            {"model", r.model},
            {"model_sha256", r.modelSha256},
            {"hw_name", r.hwName},
            {"hw_json", r.hwJson},
            {"batch", r.batch},
            {"objective_n", r.objectiveN},
            {"objective_m", r.objectiveM},
            {"seed", r.seed},
            {"mode", r.mode},
            {"valid", r.valid},
            {"reason", r.reason},
            {"energy_pj", num(r.energyPj)},
            {"delay_cycles", num(r.delayCycles)},
            {"cost", num(r.cost)},
            {"dram_bytes", num(r.dramBytes)},
            {"noc_hop_bytes", num(r.nocHopBytes)},
            {"elapsed_s", r.elapsedS},
            {"iterations", r.iterations},
            {"tree_json", r.treeJson},
            {"search_json", r.searchJson},
            {"created_at", r.createdAt},
            {"dims", r.dims}};
}

Result<SweepRow> sweepRowFromJson(const json& j) {
    if (!j.is_object()) return Error{"sweep row: expected an object"};
    auto num = [&](const char* k) {
        return j.contains(k) && j[k].is_number() ? j[k].get<double>() : kNaN;
    };
    auto str = [&](const char* k) {
        return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : std::string();
    };
    SweepRow r;
    r.point = str("point");
    if (r.point.empty()) return Error{"sweep row: no point key"};
    r.model = str("model");
    r.modelSha256 = str("model_sha256");
    r.hwName = str("hw_name");
    r.hwJson = str("hw_json");
    r.batch = int(num("batch"));
    r.objectiveN = num("objective_n");
    r.objectiveM = num("objective_m");
    r.seed = j.value("seed", std::uint64_t(0));
    r.mode = str("mode");
    r.valid = j.value("valid", false);
    r.reason = str("reason");
    r.energyPj = num("energy_pj");
    r.delayCycles = num("delay_cycles");
    r.cost = num("cost");
    r.dramBytes = num("dram_bytes");
    r.nocHopBytes = num("noc_hop_bytes");
    r.elapsedS = num("elapsed_s");
    r.iterations = j.value("iterations", 0LL);
    r.treeJson = str("tree_json");
    r.searchJson = str("search_json");
    r.createdAt = str("created_at");
    r.dims = str("dims");
    return r;
}

SweepRow runSweepPoint(const SweepSpec& spec, const SweepPoint& p, std::stop_token stop,
                       bool* stopped) {
    const SweepModel& m = spec.models[size_t(p.model)];
    const SweepHardware& h = spec.hardware[size_t(p.hardware)];
    const SearchConfig cfg = sweepPointConfig(spec, p);
    SweepRow row;
    row.point = p.key;
    row.model = m.path;
    row.modelSha256 = m.sha256;
    row.hwName = h.name;
    row.hwJson = h.json.dump();
    row.batch = p.batch;
    row.objectiveN = p.objective.n;
    row.objectiveM = p.objective.m;
    row.seed = p.seed;
    if (!m.dims.empty()) row.dims = json(m.dims).dump();
    row.mode = toString(cfg.mode);
    row.searchJson = sweepSearchJson(cfg).dump();
    row.energyPj = row.delayCycles = row.cost = row.dramBytes = row.nocHopBytes = kNaN;
    if (stopped) *stopped = false;

    auto res = runSearch(*m.net, h.hw, cfg, {}, stop);
    row.createdAt = utcNow();
    if (!res) {
        row.reason = res.error().message;
        if (stopped) *stopped = stop.stop_requested();
        return row;
    }
    if (stopped) *stopped = res->stopped;
    // anneal's result JSON: the best tree evaluated again with the detail figures.
    EvalOptions opt = evalOptionsOf(cfg);
    opt.detail = true;
    opt.maxIntervals = 0;
    const Evaluation e = evaluate(*m.net, h.hw, res->bestTree, cfg.totalBatch, opt);
    row.valid = e.valid;
    row.reason = e.reason;
    row.elapsedS = res->elapsedSeconds;
    row.iterations = res->iterations;
    row.treeJson = treeToJsonValue(res->bestTree, *m.net).dump();
    if (e.valid) {
        row.energyPj = e.energy.total();
        row.delayCycles = e.delay;
        row.cost = e.cost;
        row.dramBytes = e.dramBytes;
        row.nocHopBytes = e.nocHopBytes;
    }
    return row;
}

} // namespace tilescope
