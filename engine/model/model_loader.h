// Loads a model by file name: ".onnx" through the ONNX importer, ".json" through the
// native network format.
#pragma once

#include "model/onnx_import.h"

namespace tilescope {

Result<Network> loadModel(const std::string& path, const ImportOptions& opts = {});

} // namespace tilescope
