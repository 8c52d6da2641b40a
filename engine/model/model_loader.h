// Loads a model by file name: ".onnx" through the ONNX importer, ".json" through the
// native network format.
#pragma once

#include "model/onnx_import.h"

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace tilescope {

// Applies opts.keptInputs and opts.keepWeights to the network it loads; a kept input the
// network does not have is an error naming it.
Result<Network> loadModel(const std::string& path, const ImportOptions& opts = {});

// The free-dimension bindings a result, session or sweep row records as "dims" (an object
// of name -> size, docs/import.md "Free dimensions"); null is none. Errors name `where`
// and the key: not an object, a size that is not a positive whole number.
Result<std::map<std::string, std::int64_t>> dimsFromJson(const nlohmann::json& dims,
                                                         const std::string& where);

// What a network keeps on chip, as a result or session records it beside "dims":
// {"inputs": [names], "weights": true|false}; null when it keeps nothing.
nlohmann::json keptOnChipJson(const Network& net);
// Reads that record into opts (keptInputs, keepWeights); null is nothing kept. Errors name
// `where` and the key.
std::optional<Error> keptOnChipFromJson(const nlohmann::json& kept, const std::string& where,
                                        ImportOptions& opts);

} // namespace tilescope
