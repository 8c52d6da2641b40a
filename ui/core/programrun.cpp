#include "core/programrun.h"

#include "pipeline/program_flow.h"

namespace tilescope::ui {

std::shared_ptr<const ProgramRun> ProgramRun::build(EvalContext& ctx, const RATree& tree, int batch,
                                                    const EvalOptions& eo, quint64 revision) {
    auto run = std::make_shared<ProgramRun>();
    run->revision = revision;
    CodegenOptions co;
    co.withIr = false; // the Instructions panel shows the program, not the IR
    auto gen = buildProgram(ctx, tree, batch, eo, std::nullopt, co);
    if (!gen) {
        run->error = QString::fromStdString(gen.error().message);
        return run;
    }
    auto cg = std::make_shared<CodegenResult>(std::move(gen).value());
    run->evaluatorDelay = cg->layout.evaluation.delay;
    run->scheduleDramBytes = cg->layout.evaluation.dramBytes;
    run->dramBytesPerCycle = ctx.hardware().dramBytesPerCycle;
    // A program the simulator would refuse is a generator bug; say so rather than replay it.
    auto replay = replayProgram(cg->program, ctx.hardware(), "program");
    if (!replay) {
        run->error = QString::fromStdString(replay.error().message);
        run->codegen = std::move(cg);
        return run;
    }
    run->fine = std::move(replay->fine);
    run->coarse = std::move(replay->coarse);
    run->codegen = std::move(cg);
    return run;
}

} // namespace tilescope::ui
