// A saved tree for the benchmarks: a file `anneal --json`, `scripts/fidelity_sets.py
// --save-trees` or `bench_codegen --save-trees` wrote (or any TREE argument of CLI.md).
#pragma once

#include "model/model_loader.h"
#include "report/result_json.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>

namespace tilescope {

// The tree (parseTreeDocument) and the batch the file records, else `batch`.
inline Result<std::pair<RATree, int>> readSavedTree(const std::string& path, const Network& net,
                                                    int batch) {
    std::ifstream in(path);
    if (!in) return makeError(path, "", "cannot open the file");
    std::stringstream text;
    text << in.rdbuf();
    auto t = parseTreeDocument(text.str(), net, path);
    if (!t) return t.error();
    const auto j = nlohmann::json::parse(text.str(), nullptr, false);
    if (j.is_object() && j.contains("batch") && j["batch"].is_number_integer())
        batch = j["batch"].get<int>();
    return std::pair<RATree, int>{std::move(*t), batch};
}

// The free-dimension sizes and what the network keeps on chip, as the saved result records
// them ("dims", "kept_on_chip": a phase of `generate --json`), so the model loads as it was
// costed; none for a file without them or no file. A malformed record is left out.
inline ImportOptions savedImportOptions(const std::string& path) {
    ImportOptions o;
    if (path.empty()) return o;
    std::ifstream in(path);
    const auto j = nlohmann::json::parse(in, nullptr, false);
    if (!j.is_object()) return o;
    if (j.contains("dims"))
        if (auto dims = dimsFromJson(j["dims"], path)) o.dims = std::move(dims).value();
    if (j.contains("kept_on_chip")) (void)keptOnChipFromJson(j["kept_on_chip"], path, o);
    return o;
}

} // namespace tilescope
