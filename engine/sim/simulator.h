// The instruction-level simulator (docs/isa.md, "Simulator"): replays a program that
// validateProgram (validation.h, included here for the callers of both) accepted, with
// in-order LOAD, COMPUTE and STORE queues per tile, up to max_outstanding_loads LOADs in
// flight per tile, and the DRAM, its per-side controllers and every NoC link as
// independent first-come-first-served resources, honouring dependencies at stage
// granularity (or, for comparison, whole instructions).
#pragma once

#include "codegen/instruction_program.h"
#include "hw/hardware.h"
#include "sim/validation.h"
#include "util/result.h"

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tilescope {

struct SimOptions {
    bool fineGrained = true; // false: every dependency waits for its whole producer
    bool recordTimeline = true;
};

struct SimInterval {
    std::uint32_t id = 0;
    int tile = 0;
    Engine engine = Engine::Load;
    Op op = Op::Load;
    int layer = -1;
    Cycles start = 0, end = 0;
};

struct SimResult {
    bool deadlockFree = false; // every queue drained (validation proved the graph acyclic)
    std::string stuck;         // when not: the first blocked instruction and what it waits for
    Cycles delay = 0;
    size_t completed = 0, total = 0;
    // Per tile id: load, compute, store engine busy time (the load engine's overlapping
    // LOADs in flight count once: time with at least one of them under way).
    std::vector<std::array<Cycles, 3>> busy;
    std::vector<SimInterval> timeline; // one per instruction, by start time
    Bytes dramBytes = 0;               // moved by LOAD(dram) and STORE
    Bytes nocHopBytes = 0;             // bytes x mesh links crossed (multicast trees once)
    Cycles dramBusy = 0;               // time the DRAM interface was transferring
    // Bytes that crossed each link (Mesh link index, DRAM port links included); a multicast
    // counts once per link of its route union, a DRAM transfer on memory interleaved over the
    // ports its share on each. Whole instructions: the sum over the links that are not port
    // links (Mesh::isPortLink) is nocHopBytes.
    std::vector<Bytes> linkBytes;
    // DRAM bytes per side (by Dir) as Mesh::dramSidesOf charges them, whether or not the
    // template limits the sides.
    std::array<Bytes, 4> dramSideBytes{};
    // With the timeline: the DRAM bandwidth in use over time, piecewise constant: from
    // dramInUse[i].first on, dramInUse[i].second bytes/cycle (the last entry is 0).
    std::vector<std::pair<Cycles, double>> dramInUse;
};

// Replays a program that validateProgram accepted.
SimResult simulate(const Program& p, const Hardware& hw, const SimOptions& opt = {});

} // namespace tilescope
