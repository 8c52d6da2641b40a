#include "core/programrun.h"

namespace tilescope::ui {

std::shared_ptr<const ProgramRun> ProgramRun::build(EvalContext& ctx, const RATree& tree, int batch,
                                                    const Objective& objective, quint64 revision) {
    auto run = std::make_shared<ProgramRun>();
    run->revision = revision;
    EvalOptions eo;
    eo.objective = objective;
    auto gen = generateProgram(ctx, tree, batch, eo);
    if (!gen) {
        run->error = QString::fromStdString(gen.error().message);
        return run;
    }
    auto cg = std::make_shared<CodegenResult>(std::move(gen).value());
    run->evaluatorDelay = cg->layout.evaluation.delay;
    run->scheduleDramBytes = cg->layout.evaluation.dramBytes;
    // A program the simulator would refuse is a generator bug; say so rather than replay it.
    if (auto bad = validateProgram(cg->program, ctx.hardware(), "program")) {
        run->error = QString::fromStdString(bad->message);
        run->codegen = std::move(cg);
        return run;
    }
    run->fine = simulate(cg->program, ctx.hardware(), SimOptions{true, true});
    run->coarse = simulate(cg->program, ctx.hardware(), SimOptions{false, false});
    run->codegen = std::move(cg);
    return run;
}

} // namespace tilescope::ui
