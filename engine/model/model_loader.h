// Loads a model by file name: ".onnx" through the ONNX importer, ".json" through the
// native network format.
#pragma once

#include "model/onnx_import.h"

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace tilescope {

Result<Network> loadModel(const std::string& path, const ImportOptions& opts = {});

// The free-dimension bindings a result, session or sweep row records as "dims" (an object
// of name -> size, docs/import.md "Free dimensions"); null is none. Errors name `where`
// and the key: not an object, a size that is not a positive whole number.
Result<std::map<std::string, std::int64_t>> dimsFromJson(const nlohmann::json& dims,
                                                         const std::string& where);

} // namespace tilescope
