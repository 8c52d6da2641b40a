// Design-space sweeps (docs/sweep.md): a spec of models (x free-dimension bindings) x hardware x
// batches x objectives x seeds, expanded into points with stable keys, and one point run exactly as
// `anneal` runs it.
#pragma once

#include "eval/evaluation.h"
#include "hw/hardware.h"
#include "model/network.h"
#include "search/search.h"
#include "util/result.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace tilescope {

// One model of the grid at one binding of its free dimensions (the spec's `dims`): a model
// swept over seq = 512, 1024, 2048 is three entries of one file.
struct SweepModel {
    std::string path; // as resolved against the spec's folder, absolute
    std::string sha256;
    std::map<std::string, std::int64_t> dims; // the bindings it was imported with; {} when none
    std::shared_ptr<const Network> net;
};

// One hardware of the grid: a preset or file, with `set` applied and one combination of
// `vary`'s values. `json` is the template as hardwareToJson writes it.
struct SweepHardware {
    std::string name;
    std::string place; // "hardware[1]" (the spec entry it came from)
    nlohmann::json json;
    Hardware hw;
    // The base's defaultObjective: a variant of the edge preset keeps edge's E^2 x D even
    // though its name is no longer "edge".
    Objective objective;
};

struct SweepSpec {
    std::string file;
    std::vector<SweepModel> models;      // each file x each combination of its `dims` values
    std::vector<SweepHardware> hardware; // after expansion
    std::vector<int> batches = {1};
    std::vector<Objective> objectives; // empty: each hardware's defaultObjective
    std::vector<std::uint64_t> seeds = {1};
    // mode, budget, chains, threads, t0, alpha, minUtilisation, warmupShare, portfolio.
    // Default budget: beta 100 (an iteration budget, reproducible), one thread per point.
    SearchConfig search;
};

// Parses and checks a spec: every error is one line naming the file, the JSON place and the
// reason ("spec.json: hardware[1].vary.\"noc.link_bytes_per_cycle\": expected a non-empty
// list of values"). Loads the models (for their hash and layer count) and the hardware files,
// both relative to `dir` (the spec's folder).
Result<SweepSpec> parseSweepSpec(const std::string& text, const std::string& file,
                                 const std::string& dir);
Result<SweepSpec> loadSweepSpec(const std::string& path);

// Writes `value` at a dotted key ("noc.link_bytes_per_cycle") of a hardware JSON, creating
// missing objects. Error: a step of the path is present and not an object.
std::optional<Error> setDottedKey(nlohmann::json& j, const std::string& dottedKey,
                                  const nlohmann::json& value);
// The leaves of a JSON object as (dotted key, value): {"noc": {"link": 24}} -> noc.link 24.
std::vector<std::pair<std::string, nlohmann::json>> flattenJson(const nlohmann::json& j);

struct SweepPoint {
    std::size_t index = 0; // in the expanded list
    std::string key;       // stable: sha256 of what determines the result
    int model = 0, hardware = 0;
    int batch = 1;
    Objective objective;
    std::uint64_t seed = 1;
};

// The cross product models x hardware x batches x objectives x seeds in that nesting order
// (seeds innermost); a point whose key repeats an earlier one is dropped.
std::vector<SweepPoint> expandSweep(const SweepSpec& spec);

// The search settings that decide a result (not the thread count), as stored in the row's
// search_json and hashed into the key.
nlohmann::json sweepSearchJson(const SearchConfig& c);
// sha256 hex of {model_sha256, hw (without its "name"), batch, objective, seed, search}, and
// the model's dims when it has any (a model without free dimensions keeps the key it had
// before sweeps knew of them, so its stored points are not run again).
std::string sweepPointKey(const std::string& modelSha256, const nlohmann::json& hwJson, int batch,
                          const Objective& objective, std::uint64_t seed,
                          const nlohmann::json& searchJson,
                          const std::map<std::string, std::int64_t>& dims = {});
// The SearchConfig `anneal` would run for this point.
SearchConfig sweepPointConfig(const SweepSpec& spec, const SweepPoint& p);

// One row of the `runs` table. Figures are NaN when the point has no valid schedule.
struct SweepRow {
    std::string point, model, modelSha256, hwName, hwJson;
    int batch = 1;
    double objectiveN = 1, objectiveM = 1;
    std::uint64_t seed = 1;
    std::string mode;
    bool valid = false;
    std::string reason;
    double energyPj = 0, delayCycles = 0, cost = 0, dramBytes = 0, nocHopBytes = 0;
    double elapsedS = 0;      // the search's own time
    long long iterations = 0; // per chain, as run
    std::string treeJson;     // tree/tree_json.h document; empty when there is none
    std::string searchJson;   // sweepSearchJson of the config
    std::string createdAt;    // UTC, ISO 8601
    std::string dims;         // the model's free-dimension bindings as a JSON object; "" when none
};

nlohmann::json sweepRowToJson(const SweepRow& r);
// The row's free-dimension bindings (its `dims` text; none when empty). Errors name `where`:
// text that is not JSON, or not an object of positive whole sizes (dimsFromJson).
Result<std::map<std::string, std::int64_t>> sweepRowDims(const SweepRow& r,
                                                         const std::string& where);
Result<SweepRow> sweepRowFromJson(const nlohmann::json& j);

// Runs the point's search (runSearch with sweepPointConfig) and evaluates the best tree in
// detail as `anneal` does for its result JSON, so the row's cost is anneal's. A search that
// fails is a row with valid = false and the reason. `stopped` (optional) says the stop token
// cut the search short: such a row is not the point's result and must not be stored.
SweepRow runSweepPoint(const SweepSpec& spec, const SweepPoint& p, std::stop_token stop = {},
                       bool* stopped = nullptr);

} // namespace tilescope
