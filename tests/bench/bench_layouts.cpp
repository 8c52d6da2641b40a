// DRAM layout planning (docs/cost-model.md §4b): how long one evaluation takes with the
// planner on a template with a run model, against the same template without one, and
// what the plan gains over each single layout. Prints figures; never timed by ctest.
//   bench_layouts [model] [batch] [burst] [overhead] [portBytesPerCycle]
//   (default resnet50 1 64 20 0: the edge preset with 64-byte bursts and 20 cycles a run;
//   a port bandwidth > 0 gives each DRAM side a controller, so the layouts interact and
//   the planner backtracks)
#include "eval/evaluator.h"
#include "model/model_loader.h"
#include "search/search.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace tilescope;

namespace {

double secondsOf(const Network& net, const Hardware& hw, const RATree& tree, int batch,
                 const EvalOptions& opt, int reps, Evaluation& out) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i)
        out = evaluate(net, hw, tree, batch, opt);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
}

} // namespace

int main(int argc, char** argv) {
    const std::string model = argc > 1 ? argv[1] : "resnet50";
    const int batch = argc > 2 ? std::atoi(argv[2]) : 1;
    auto net = loadModel(std::string(TILESCOPE_SAMPLES) + "/models/" + model + ".onnx");
    if (!net) {
        std::fprintf(stderr, "%s\n", net.error().message.c_str());
        return 1;
    }
    Hardware plain;
    presetHardware("edge", plain);
    Hardware runs = plain;
    runs.dramBurstBytes = argc > 3 ? std::atoi(argv[3]) : 64;
    runs.dramRunOverheadCycles = argc > 4 ? std::atof(argv[4]) : 20;
    runs.dramPortBytesPerCycle = argc > 5 ? std::atof(argv[5]) : 0;
    EvalOptions opt;
    opt.objective = defaultObjective(plain);
    for (SearchMode mode : {SearchMode::LS, SearchMode::LP}) {
        auto tree = defaultInitialTree(*net, plain, mode, batch, opt.objective);
        if (!tree) {
            std::fprintf(stderr, "%s\n", tree.error().message.c_str());
            return 1;
        }
        Evaluation a, b;
        const double tPlain = secondsOf(*net, plain, *tree, batch, opt, 5, a);
        const double tRuns = secondsOf(*net, runs, *tree, batch, opt, 5, b);
        EvalOptions detail = opt;
        detail.detail = true;
        detail.maxIntervals = 0;
        const Evaluation d = evaluate(*net, runs, *tree, batch, detail);
        std::printf("%s %s batch %d: evaluation %.1f ms without runs, %.1f ms with (plan: %lld "
                    "plans visited, %s)\n",
                    model.c_str(), toString(mode), batch, tPlain * 1e3, tRuns * 1e3,
                    d.layouts.planNodes, d.layouts.planExhaustive ? "exhaustive" : "node limit");
        std::printf("  DRAM cycles: plan %.0f", d.layouts.planCycles);
        for (DramLayout l : kLayouts)
            std::printf(", %s %.0f (x%.3f)", layoutName(l), d.layouts.fixedCycles[size_t(l)],
                        d.layouts.fixedCycles[size_t(l)] / d.layouts.planCycles);
        std::printf("\n  delay %.0f cycles without runs, %.0f with (x%.3f)\n", a.delay, b.delay,
                    b.delay / a.delay);
    }
    return 0;
}
