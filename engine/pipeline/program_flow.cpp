#include "pipeline/program_flow.h"

namespace tilescope {

Result<CodegenResult> buildProgram(EvalContext& ctx, const RATree& tree, int totalBatch,
                                   const EvalOptions& evalOpt,
                                   const std::optional<std::string>& model,
                                   const CodegenOptions& opt) {
    auto gen = generateProgram(ctx, tree, totalBatch, evalOpt, opt);
    if (gen && model) gen->program.schedule["model"] = *model;
    return gen;
}

Result<ProgramReplay> replayProgram(const Program& p, const Hardware& hw, const std::string& file) {
    if (auto err = validateProgram(p, hw, file)) return *err;
    ProgramReplay r;
    r.fine = simulate(p, hw, SimOptions{true, true});
    r.coarse = simulate(p, hw, SimOptions{false, false});
    return r;
}

} // namespace tilescope
