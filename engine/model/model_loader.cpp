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

Result<std::map<std::string, std::int64_t>> dimsFromJson(const nlohmann::json& dims,
                                                         const std::string& where) {
    std::map<std::string, std::int64_t> out;
    if (dims.is_null()) return out;
    if (!dims.is_object()) return Error{where + ": \"dims\" is not an object of sizes"};
    for (auto it = dims.begin(); it != dims.end(); ++it) {
        const nlohmann::json& v = it.value();
        if (!v.is_number_integer() || v.get<long long>() < 1)
            return Error{where + ": dims." + it.key() + " is not a positive whole number"};
        out[it.key()] = v.get<std::int64_t>();
    }
    return out;
}

} // namespace tilescope
