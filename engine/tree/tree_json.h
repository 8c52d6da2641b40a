// JSON form of an RA tree (docs/tree-format.md): every node attribute (type, layer name,
// batch, sub_batch, pinned, children), for tools and for embedding in result files.
#pragma once

#include "tree/ratree.h"
#include "util/result.h"

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace tilescope {

// {"format": "tilescope-ratree", "version": 1, "network": ..., "total_batch": ..., "root": {...}}
std::string treeToJson(const RATree& t, const Network& net, int indent = 2);
nlohmann::json treeToJsonValue(const RATree& t, const Network& net);

// Accepts the document above or a bare root node object. Errors read
// "FILE: node /0/2: reason"; the parsed tree must pass validateStructure.
Result<RATree> parseTreeJson(const std::string& text, const Network& net, const std::string& file);
Result<RATree> parseTreeJsonValue(const nlohmann::json& j, const Network& net,
                                  const std::string& file);

} // namespace tilescope
