#include "model/model_loader.h"

#include "model/network_json.h"
#include "util/fileio.h"

#include <algorithm>
#include <filesystem>

namespace tilescope {

namespace {

Result<Network> readModel(const std::string& path, const ImportOptions& opts) {
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

} // namespace

Result<Network> loadModel(const std::string& path, const ImportOptions& opts) {
    auto net = readModel(path, opts);
    if (!net) return net;
    for (const std::string& name : opts.keptInputs)
        if (!net->inputBytes.count(name))
            return makeError(path, "kept on chip", "the network has no input named '" + name + "'");
    if (!opts.keptInputs.empty()) keepInputsOnChip(*net, opts.keptInputs);
    if (opts.keepWeights) keepWeightsOnChip(*net);
    return net;
}

nlohmann::json keptOnChipJson(const Network& net) {
    std::vector<std::string> inputs;
    bool weights = false;
    for (const Layer& l : net.layers) {
        weights = weights || l.weightsResident;
        for (const LayerInput& in : l.inputs)
            if (in.resident &&
                std::find(inputs.begin(), inputs.end(), in.networkInput) == inputs.end())
                inputs.push_back(in.networkInput);
    }
    if (inputs.empty() && !weights) return nullptr;
    return {{"inputs", inputs}, {"weights", weights}};
}

std::optional<Error> keptOnChipFromJson(const nlohmann::json& kept, const std::string& where,
                                        ImportOptions& opts) {
    if (kept.is_null()) return std::nullopt;
    if (!kept.is_object()) return Error{where + ": \"kept_on_chip\" is not an object"};
    const nlohmann::json inputs = kept.value("inputs", nlohmann::json::array());
    if (!inputs.is_array())
        return Error{where + ": kept_on_chip.inputs is not a list of input names"};
    for (const auto& n : inputs) {
        if (!n.is_string())
            return Error{where + ": kept_on_chip.inputs holds something that is not a name"};
        opts.keptInputs.push_back(n.get<std::string>());
    }
    const nlohmann::json weights = kept.value("weights", nlohmann::json(false));
    if (!weights.is_boolean()) return Error{where + ": kept_on_chip.weights is not true or false"};
    opts.keepWeights = weights.get<bool>();
    return std::nullopt;
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
