// The instruction generator (docs/method.md §5): from an evaluated RA tree to the IR (per-tile
// workloads with data ranges, buffer allocations, sources and destinations, compute
// parameters) and to the per-tile LOAD / COMPUTE / STORE program with stage-granular
// dependencies. It follows the evaluator's decisions exactly (analyseSchedule) so the
// program moves the schedule's DRAM bytes and its replay can be compared with its delay.
#pragma once

#include "codegen/instruction_program.h"
#include "eval/evaluator.h"
#include "eval/schedule_layout.h"
#include "eval/transfers.h"
#include "tree/ratree.h"
#include "util/result.h"

#include <array>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tilescope {

struct CodegenOptions {
    // Load all weights of a segment at its start (when the buffers allow), not at each
    // leaf's first invocation.
    bool prefetchWeights = true;
    // Keep the IR (CodegenResult::workloads, what ir.json holds). Nothing else reads it;
    // without it a large program needs about a quarter less memory (docs/isa.md).
    bool withIr = true;
};

// A region of a tile's global buffer with its lifetime in instruction ids.
struct BufferRegion {
    std::string what; // "weights", "ifmap<k>", "ofmap"
    int tile = 0;
    std::uint64_t offset = 0, bytes = 0;
    // (offset, bytes) pieces: one unless the buffer was fragmented (scatter/gather DMA).
    std::vector<std::pair<std::uint64_t, std::uint64_t>> extents;
    std::uint32_t firstWriter = 0; // first instruction that writes it
    std::uint32_t lastReader = 0;  // last instruction that reads it (0: none)
};

struct IrInput {
    int index = 0;    // position in the layer's inputs
    std::string from; // producer layer name, or "input:<name>" for a network input
    bool viaDram = true;
    Box range;                         // the window this tile reads, in the input's own coordinates
    std::vector<std::int32_t> sources; // kDram or producer tile ids ("dram" / "tile:N" in ir.json)
    std::uint64_t bytes = 0;           // bytes delivered into this tile's buffer (0: all local)
};

// One leaf invocation on one tile.
struct IrWorkload {
    int tile = 0;
    int layer = -1;
    int node = -1;
    int segment = 0, segmentInvocation = 0;
    int firstSample = 0, lastSample = 0;
    Box ofmap;
    Box weights; // empty when the layer has no static weights
    std::uint64_t weightBytes = 0;
    bool weightsLoaded = false; // this invocation loads the weights (first of its segment run)
    std::vector<IrInput> inputs;
    std::vector<std::int32_t> destinations; // kDram and/or tile ids ("dram" / "tile:N" in ir.json)
    std::vector<BufferRegion> buffers;
    std::string partition, tiling;
    std::uint64_t cycles = 0;
    std::uint32_t computeId = 0;
};

struct CodegenResult {
    Program program;
    std::vector<IrWorkload> workloads; // in issue order; empty unless CodegenOptions::withIr
    std::size_t workloadCount = 0;     // leaf invocations on one tile, kept or not
    ScheduleLayout layout;
    std::uint64_t programDramBytes = 0;         // bytes the program's LOAD(dram) + STORE move
    std::vector<std::uint64_t> peakBufferBytes; // per tile id: largest live allocation sum
};

nlohmann::json irToJson(const CodegenResult& r, const Network& net);
// ir.json streamed: the same document as irToJson, one workload a line.
void writeIrJson(std::ostream& out, const CodegenResult& r, const Network& net);

// The tree must be valid for (network, hardware, batch); invalid trees, and schedules the
// generator cannot lay out in the buffers, return an Error with the reason.
Result<CodegenResult> generateProgram(EvalContext& ctx, const RATree& tree, int totalBatch,
                                      const EvalOptions& evalOpt, const CodegenOptions& opt = {});

} // namespace tilescope
