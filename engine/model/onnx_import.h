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
// "--dim NAME=VALUE" as the CLI and sweep specs write it: the name and a positive size.
Result<std::pair<std::string, std::int64_t>> parseDimBinding(const std::string& text);

Result<Network> importOnnx(const std::string& path, const ImportOptions& opts = {});
// Same, from the serialized ModelProto; `file` is used in messages and as sourcePath.
Result<Network> importOnnxBytes(const std::string& bytes, const std::string& file,
                                const ImportOptions& opts = {});

} // namespace tilescope
