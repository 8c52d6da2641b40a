#include "pipeline/export.h"

#include "pipeline/program_flow.h"
#include "sim/simulator.h"
#include "util/fileio.h"

#include <ostream>

namespace tilescope {

Result<ProgramFormats> parseProgramFormats(const std::string& list) {
    ProgramFormats f;
    f.bin = false;
    size_t start = 0;
    while (true) {
        const size_t comma = list.find(',', start);
        const std::string item =
            list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (item == "bin")
            f.bin = true;
        else if (item == "txt")
            f.txt = true;
        else if (item == "json")
            f.json = true;
        else if (item == "ir")
            f.ir = true;
        else if (item == "all")
            f = {true, true, true, true};
        else
            return Error{
                (item.empty() ? std::string("empty format") : "unknown format '" + item + "'") +
                " in '" + list + "' (expected a list of bin, txt, json, ir or all)"};
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return f;
}

std::string formatsToString(const ProgramFormats& f) {
    std::string s;
    auto add = [&](bool on, const char* name) {
        if (!on) return;
        if (!s.empty()) s += ',';
        s += name;
    };
    add(f.bin, "bin");
    add(f.txt, "txt");
    add(f.json, "json");
    add(f.ir, "ir");
    return s;
}

std::vector<std::pair<std::string, StreamWriter>> programFiles(const CodegenResult& r,
                                                               const Network& net,
                                                               const Hardware& hw,
                                                               const ProgramFormats& formats) {
    std::vector<std::pair<std::string, StreamWriter>> files;
    if (formats.json)
        files.emplace_back("program.json",
                           [&](std::ostream& o) { writeProgramJson(o, r.program); });
    if (formats.bin)
        files.emplace_back("program.bin", [&](std::ostream& o) { writeProgramBin(o, r.program); });
    if (formats.txt)
        files.emplace_back("program.txt", [&](std::ostream& o) { writeProgramText(o, r.program); });
    if (formats.ir) files.emplace_back("ir.json", [&](std::ostream& o) { writeIrJson(o, r, net); });
    files.emplace_back("hw.json",
                       [&](std::ostream& o) { o << hardwareToJson(hw).dump(2) << "\n"; });
    return files;
}

std::optional<Error> exportProgram(const std::string& dir, const CodegenResult& r,
                                   const Network& net, const Hardware& hw,
                                   const ProgramFormats& formats) {
    if (!formats.any()) return Error{dir + ": no program format chosen"};
    if (auto err = validateProgram(r.program, hw, dir + "/program"))
        return Error{"generated program failed validation (a bug): " + err->message};
    return writeDirAtomic(dir, programFiles(r, net, hw, formats));
}

Result<ProgramCheck> exportAndReplay(EvalContext& ctx, const RATree& tree, int totalBatch,
                                     const EvalOptions& evalOpt, const std::string& model,
                                     const std::string& dir, const ProgramFormats& formats) {
    CodegenOptions co;
    co.withIr = formats.ir;
    auto gen = buildProgram(ctx, tree, totalBatch, evalOpt, model, co);
    if (!gen) return makeError(dir, "", gen.error().message);
    // exportProgram validates the program: the replay below may assume it valid.
    if (auto e = exportProgram(dir, *gen, ctx.network(), ctx.hardware(), formats)) return *e;
    // The stage-granular replay, as `simulate` reports it; no timeline is kept.
    const SimResult sim = simulate(gen->program, ctx.hardware(), SimOptions{true, false});
    ProgramCheck c;
    c.instructions = gen->program.instructionCount();
    c.estimated = gen->layout.evaluation.delay;
    c.simulated = sim.delay;
    c.agreement = modelAgreement(c.simulated, c.estimated);
    c.deadlockFree = sim.deadlockFree;
    c.scheduleDramBytes = gen->layout.evaluation.dramBytes;
    c.programDramBytes = Bytes(gen->programDramBytes);
    c.simulatedDramBytes = sim.dramBytes;
    return c;
}

} // namespace tilescope
