// The program flow both front ends run: generate the instructions of a tree (tagged with
// the model they came from), check them and replay them on the instruction-level simulator
// at both dependency granularities. Writing the program folder is export.h.
#pragma once

#include "codegen/codegen.h"
#include "sim/simulator.h"
#include "util/result.h"

#include <optional>
#include <string>

namespace tilescope {

// generateProgram(), then `model` (when given) recorded in the program's schedule block as
// the model the program was built from. ctx must not be used by another thread meanwhile
// (its memo caches are not synchronised).
Result<CodegenResult> buildProgram(EvalContext& ctx, const RATree& tree, int totalBatch,
                                   const EvalOptions& evalOpt,
                                   const std::optional<std::string>& model = std::nullopt,
                                   const CodegenOptions& opt = {});

struct ProgramReplay {
    SimResult fine;   // stage-granular dependencies, with the timeline
    SimResult coarse; // whole-instruction dependencies, no timeline: the speed-up's base
    // fine vs coarse: how much the stage-granular dependencies buy (>= 1 normally)
    double speedUp() const { return fine.delay > 0 ? coarse.delay / fine.delay : 1.0; }
};

// validateProgram (errors name `file`), then the two replays.
Result<ProgramReplay> replayProgram(const Program& p, const Hardware& hw, const std::string& file);

} // namespace tilescope
