// ONNX import: libonnx parses the protobuf and runs shape inference (data propagation
// on); shapes it leaves unknown are propagated here, and shape sub-graphs are evaluated on
// known dimensions. Nodes become scheduled layers or are folded (docs/import.md,
// docs/method.md §1), every folding recorded in Network::folded.
#pragma once

#include "model/network.h"
#include "util/result.h"

#include <string>

namespace tilescope {

struct ImportOptions {
    // What to do with an op the importer does not know: "" = error naming the node and op;
    // "vector" / "eltwise" = schedule it as that kind; "fold" = fold it into its producer.
    std::string unknownOpFallback;
};

Result<Network> importOnnx(const std::string& path, const ImportOptions& opts = {});
// Same, from the serialized ModelProto; `file` is used in messages and as sourcePath.
Result<Network> importOnnxBytes(const std::string& bytes, const std::string& file,
                                const ImportOptions& opts = {});

} // namespace tilescope
