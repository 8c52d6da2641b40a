#include "model/model_loader.h"

#include "model/network_json.h"
#include "util/fileio.h"

#include <algorithm>
#include <filesystem>

namespace tilescope {

Result<Network> loadModel(const std::string& path, const ImportOptions& opts) {
    std::string ext = std::filesystem::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    if (!std::filesystem::exists(path)) return makeError(path, "", "no such file");
    if (ext == ".onnx") return importOnnx(path, opts);
    if (ext == ".json") {
        auto text = readFile(path);
        if (!text) return text.error();
        return parseNetworkJson(*text, path);
    }
    return makeError(path, "", "unknown model format '" + ext + "' (expected .onnx or .json)");
}

} // namespace tilescope
