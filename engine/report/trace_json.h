// Timelines as Chrome trace-event JSON (docs/method.md §5), which Perfetto and chrome://tracing
// open: a generic writer over a list of complete events, and the two timelines Tilescope has, the
// evaluator's S-T graph and the instruction-level simulator's per-engine replay.
#pragma once

#include "codegen/instruction_program.h"
#include "eval/evaluation.h"
#include "hw/hardware.h"
#include "model/network.h"
#include "sim/simulator.h"
#include "tree/ratree.h"
#include "util/units.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tilescope {

// One "ph": "X" event on the track (pid, tid). Process and track names come from the
// first event that names them; tracks sort by tid inside a process, processes by pid.
struct TraceEvent {
    int pid = 0;
    std::string process; // e.g. "tile 5 (1,1)"
    int tid = 0;
    std::string track;    // e.g. "compute"
    std::string label;    // the event's name
    std::string category; // "cat"; empty: none
    Cycles start = 0, end = 0;
    nlohmann::json args = nlohmann::json::object();
    bool counter = false; // a counter sample ("ph": "C") at start: args hold its values
};

// ts and dur in microseconds: cycles / clockGHz gives nanoseconds, / 1000 microseconds.
// otherData is copied into the document's "otherData" (clock_ghz is added).
std::string traceEventJson(const std::vector<TraceEvent>& events, double clockGHz,
                           const nlohmann::json& otherData = nlohmann::json::object(),
                           int indent = -1);

// The evaluator's S-T graph: pid 0, one track per tile (tid = tile id, "tile N (x,y)"), one
// event per rectangle and tile. Needs an evaluation made with EvalOptions::detail.
std::string traceEventJson(const Evaluation& e, const Network& net, const Hardware& hw,
                           const RATree& tree, int indent = -1);

// The simulator's replay: pid = tile id ("tile N (x,y)"), tid = engine (0 load, 1 compute,
// 2 store), one event per instruction from its first stage's start to its last's end.
// A LOAD that overlaps earlier ones still in flight goes to an extra load track,
// tid 2 + n ("load n+1", n = 1 .. max_outstanding_loads - 1).
std::vector<TraceEvent> simTraceEvents(const SimResult& r, const Program& p);

} // namespace tilescope
