// A saved tree for the benchmarks: a file `anneal --json`, `scripts/fidelity_sets.py
// --save-trees` or `bench_codegen --save-trees` wrote (or any TREE argument of CLI.md).
#pragma once

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

} // namespace tilescope
