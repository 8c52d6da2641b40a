// Instruction generation and replay on the samples: per model and chip, the program size,
// DRAM bytes against the schedule, simulated delay against the evaluator, the fine-grained
// speed-up and the time each step takes. Prints figures; never gates.
#include "codegen/codegen.h"
#include "model/model_loader.h"
#include "sim/simulator.h"

#include <chrono>
#include <cstdio>

using namespace tilescope;

int main(int argc, char** argv) {
    const int batch = argc > 1 ? std::atoi(argv[1]) : 2;
    std::printf("%-14s %-9s %8s %14s %14s %8s %12s %12s %7s %8s %8s %8s\n", "model", "hw", "instr", "dram_prog",
                "dram_sched", "diff%", "sim_delay", "eval_delay", "ratio", "speedup", "gen_s", "sim_s");
    for (const char* m : {"mobilenet_v2", "resnet50", "googlenet", "inception_v3", "transformer"}) {
        auto net = loadModel(std::string(TILESCOPE_SAMPLES) + "/models/" + m + ".onnx");
        if (!net) {
            std::printf("%s: %s\n", m, net.error().message.c_str());
            continue;
        }
        for (const char* h : {"testchip", "edge"}) {
            Hardware hw;
            presetHardware(h, hw);
            // Layer-sequential at the largest batch <= `batch` whose tree is valid.
            for (int b = batch; b >= 1; b /= 2) {
                const RATree t = RATree::layerSequential(*net, b);
                EvalContext ctx(*net, hw);
                const auto t0 = std::chrono::steady_clock::now();
                auto r = generateProgram(ctx, t, b, {});
                const auto t1 = std::chrono::steady_clock::now();
                if (!r) {
                    if (b == 1) std::printf("%-14s %-9s %s\n", m, h, r.error().message.c_str());
                    continue;
                }
                SimOptions coarse;
                coarse.fineGrained = false;
                const SimResult f = simulate(r->program, hw);
                const SimResult c = simulate(r->program, hw, coarse);
                const auto t2 = std::chrono::steady_clock::now();
                const Evaluation& ev = r->layout.evaluation;
                std::printf("%-14s %-9s %8zu %14.0f %14.0f %8.3f %12.0f %12.0f %7.3f %8.3f %8.2f %8.2f  (batch %d)\n", m, h,
                            r->program.instructionCount(), double(r->programDramBytes), ev.dramBytes,
                            100.0 * (double(r->programDramBytes) - ev.dramBytes) / ev.dramBytes, f.delay, ev.delay,
                            f.delay / ev.delay, c.delay / f.delay,
                            std::chrono::duration<double>(t1 - t0).count(),
                            std::chrono::duration<double>(t2 - t1).count(), b);
                break;
            }
        }
    }
    return 0;
}
