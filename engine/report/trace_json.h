// The schedule as a Chrome trace-event JSON timeline (SPEC §5), which Perfetto and
// chrome://tracing open: one track per tile, one complete event per S-T rectangle.
#pragma once

#include "eval/evaluation.h"
#include "hw/hardware.h"
#include "model/network.h"
#include "tree/ratree.h"

#include <string>

namespace tilescope {

// Track = (pid 0, tid = tile id), named "tile N (x,y)". Events are "ph": "X" with ts and
// dur in microseconds: cycles / clockGHz gives nanoseconds, / 1000 microseconds. Needs an
// evaluation made with EvalOptions::detail (intervals and tileOrder).
std::string traceEventJson(const Evaluation& e, const Network& net, const Hardware& hw,
                           const RATree& tree, int indent = -1);

} // namespace tilescope
