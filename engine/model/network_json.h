// The native JSON network format (docs/network-format.md): the importer's layer graph
// written out and read back losslessly.
#pragma once

#include "model/network.h"
#include "util/result.h"

#include <string>

namespace tilescope {

std::string networkToJson(const Network& net, int indent = 2);
Result<Network> parseNetworkJson(const std::string& text, const std::string& file);

} // namespace tilescope
