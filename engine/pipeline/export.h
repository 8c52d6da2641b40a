// Writes a generated program as the folder the test-chip tools read: program.bin and
// hw.json always, program.txt, program.json and ir.json when asked, replaced atomically as
// a whole (docs/isa.md, docs/cli.md "--formats").
#pragma once

#include "codegen/codegen.h"
#include "hw/hardware.h"
#include "model/network.h"
#include "sim/fidelity.h"
#include "util/fileio.h"
#include "util/result.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tilescope {

// Which encodings of the program a folder gets. hw.json is always written (simulate reads
// it beside a program without an embedded template); the default is program.bin alone,
// which is all `simulate DIR` and the GUI need.
struct ProgramFormats {
    bool bin = true;   // program.bin (docs/isa.md "Binary encoding")
    bool txt = false;  // program.txt, the readable listing
    bool json = false; // program.json
    bool ir = false;   // ir.json, the workloads
    bool operator==(const ProgramFormats&) const = default;
    bool any() const { return bin || txt || json || ir; }
};
// "bin,txt,json,ir" (any non-empty subset, any order, "all" for every one). An unknown or
// empty item is an Error naming it.
Result<ProgramFormats> parseProgramFormats(const std::string& list);
std::string formatsToString(const ProgramFormats& f); // "bin,txt": the inverse

// (file name, writer) of every file of a program folder; the writers refer to r, net and hw.
std::vector<std::pair<std::string, StreamWriter>> programFiles(const CodegenResult& r,
                                                               const Network& net,
                                                               const Hardware& hw,
                                                               const ProgramFormats& formats = {});
// Validates the program (a failure is a generator bug, reported as such) and writes the
// folder atomically: dir ends up with the old complete folder or the new one. Each file is
// streamed to disk as it is encoded (no file is ever held in memory whole).
std::optional<Error> exportProgram(const std::string& dir, const CodegenResult& r,
                                   const Network& net, const Hardware& hw,
                                   const ProgramFormats& formats = {});

// A schedule's program generated from its tree, written to `dir` as exportProgram writes it
// and replayed: the figures a user checks the estimate by (`generate --export`; the
// commands export-instructions and simulate do the same in two steps).
struct ProgramCheck {
    std::size_t instructions = 0;
    Cycles estimated = 0, simulated = 0; // the evaluator's delay, the replay's
    ModelAgreement agreement;            // simulated / estimated (sim/fidelity.h)
    bool deadlockFree = false;
    Bytes scheduleDramBytes = 0;  // the evaluation's DRAM bytes
    Bytes programDramBytes = 0;   // the program's LOAD(dram) + STORE bytes
    Bytes simulatedDramBytes = 0; // what the replay moved
};
// `model` is recorded in the program as the model it was built from. Errors: generation,
// validation (a generator bug) or writing the folder, naming `dir`.
Result<ProgramCheck> exportAndReplay(EvalContext& ctx, const RATree& tree, int totalBatch,
                                     const EvalOptions& evalOpt, const std::string& model,
                                     const std::string& dir, const ProgramFormats& formats = {});

} // namespace tilescope
