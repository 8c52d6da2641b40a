// ONNX import: libonnx parses the protobuf and runs shape inference (data propagation
// on); shapes it leaves unknown are propagated here, and shape sub-graphs are evaluated on
// known dimensions. Nodes become scheduled layers or are folded (docs/import.md,
// docs/method.md §1), every folding recorded in Network::folded.
#pragma once

#include "model/network.h"
#include "util/result.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tilescope {

struct ImportOptions {
    // What to do with an op the importer does not know: "" = error naming the node and op;
    // "vector" / "eltwise" = schedule it as that kind; "fold" = fold it into its producer.
    std::string unknownOpFallback;
    // Values for the model's free (symbolic) dimensions by name, e.g. {"seq", 2048}: every
    // graph input axis after the first (the batch) named so takes that size. A free
    // dimension left unbound is an error that lists them all.
    std::map<std::string, std::int64_t> dims;
    // What the network keeps on chip across runs (docs/cost-model.md §6, "Kept on chip"),
    // applied by loadModel: these network inputs (keepInputsOnChip) and, with keepWeights,
    // every layer's weights (keepWeightsOnChip).
    std::vector<std::string> keptInputs;
    bool keepWeights = false;
};

// A named dimension of a graph input that the model leaves free (not the batch axis).
struct FreeDimension {
    std::string name;  // the export's dim_param, e.g. "seq"
    std::string input; // the first graph input that has it
    int axis = 0;      // and its axis there
};
// The free dimensions of an ONNX model, each name once, in input order (empty for a
// static model or a .json network).
Result<std::vector<FreeDimension>> freeDimensions(const std::string& path);
// A graph input that a Concat joins with the step's new keys or values into a graph output:
// the KV cache of a decoder export (past_k0 + k -> present_k0).
struct KvCacheInput {
    std::string input;       // "past_k0"
    std::string output;      // the graph output it is concatenated into, "present_k0"
    int axis = 0;            // the concatenation axis of the input (non-negative)
    std::string dimName;     // the input's named dimension on that axis ("past"); "" when fixed
    std::int64_t length = 0; // its fixed size there; 0 when named
};
// The KV cache inputs of an ONNX model, in graph input order (empty for a model without
// one or a .json network). The Concat's output may pass through Identity or Cast first.
Result<std::vector<KvCacheInput>> kvCacheInputs(const std::string& path);
// Both of the above from one parse of the file (a decoder's axes need both).
struct GraphInterface {
    std::vector<FreeDimension> free;
    std::vector<KvCacheInput> kvCache;
};
Result<GraphInterface> graphInterface(const std::string& path);
// "--dim NAME=VALUE" as the CLI and sweep specs write it: the name and a positive size.
Result<std::pair<std::string, std::int64_t>> parseDimBinding(const std::string& text);

Result<Network> importOnnx(const std::string& path, const ImportOptions& opts = {});
// Same, from the serialized ModelProto; `file` is used in messages and as sourcePath.
Result<Network> importOnnxBytes(const std::string& bytes, const std::string& file,
                                const ImportOptions& opts = {});

} // namespace tilescope
