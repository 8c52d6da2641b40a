// The result JSON of CLI.md (evaluate, anneal, compare) and the reverse direction: a tree
// read back from tree text, a tree JSON or a result JSON.
#pragma once

#include "eval/evaluation.h"
#include "hw/hardware.h"
#include "model/network.h"
#include "search/search.h"
#include "tree/ratree.h"
#include "util/result.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace tilescope {

// What a result records besides the evaluation: where it came from and how it was found.
struct ResultContext {
    std::string modelPath;
    std::string modelSha256;
    const Hardware* hw = nullptr;
    int batch = 1;
    std::optional<std::uint64_t> seed; // null for a plain evaluation
    long long iterations = 0;
    double elapsedSeconds = 0;
};

// The CLI.md fields: valid, reason, energy_pj, delay_cycles, objective, cost,
// breakdown_pj, dram_bytes, noc_hop_bytes, utilisation, tree, seed, iterations,
// elapsed_s, model, model_sha256, hw, batch. Extras: macs, tree_json, and "segments"
// (per depth-one node: time, energy, DRAM bytes, dominating bound) when `e` carries the
// detail figures.
nlohmann::json evaluationResultJson(const Evaluation& e, const RATree& tree, const Network& net,
                                    const ResultContext& ctx);

// evaluationResultJson of the best tree plus "mode", "config", "stopped", "initial"
// (cost of the start), "chains" (per-chain seed and best) and "stats".
nlohmann::json searchResultJson(const SearchResult& r, const Evaluation& bestDetail,
                                const Network& net, const ResultContext& ctx);

// TREE arguments: tree text, a tree JSON ("format": "tilescope-ratree" or a bare root
// node), a result JSON (its "tree_json", else its "tree" text) or a compare JSON (its "sa"
// result). `file` names the source in errors.
Result<RATree> parseTreeDocument(const std::string& text, const Network& net,
                                 const std::string& file);

} // namespace tilescope
