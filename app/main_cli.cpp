// tilescope-cli: the headless face of the engine (CLI.md).
#include "cli_commands.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <iostream>
#include <set>

using namespace tilescope::cli;

namespace {

const char* kUsage = R"(usage:
  tilescope-cli inspect  MODEL [--json]
  tilescope-cli evaluate MODEL --hw HW --tree TREE [--batch B] [--objective n,m] [--json OUT]
  tilescope-cli anneal   MODEL --hw HW [--batch B] [--objective n,m] [--seed S]
                         [--time SECONDS | --beta N | --iterations N] [--t0 X] [--alpha A]
                         [--mode set|ls|lp|dp-lp|chiplet|random|ga] [--chains K] [--threads T]
                         [--pin PATH]... [--init TREE] [--json OUT] [--tree-out FILE] [--quiet]
  tilescope-cli compare  MODEL --hw HW [--batch B] [--objective n,m] [--seed S]
                         [--time SECONDS | --beta N | --iterations N] [--mode set|ga]
                         [--json OUT]
  tilescope-cli generate MODEL --hw HW --prompt P --tokens G [--batch B] [--points K]
                         [--seq-dim NAME] [--past-dim NAME] [--kv-cache dram|on-chip]
                         [--weights dram|on-chip] [anneal's search options]
                         [--export DIR [--formats bin,txt,json,ir]] [--json OUT] [--quiet]
  tilescope-cli generate --prefill A.onnx --decode B.onnx --hw HW --prompt P --tokens G ...
  tilescope-cli mapping  MODEL --hw HW --layer NAME [--tiles N] [--batch B] [--objective n,m] [--json]
  tilescope-cli export-instructions SESSION_OR_RESULT --out DIR [--formats bin,txt,json,ir]
  tilescope-cli simulate DIR_OR_PROGRAM [--json OUT] [--trace OUT.json]
  tilescope-cli sweep    SPEC.json --db OUT.sqlite [--jobs J] [--shard I/N] [--quiet]
  tilescope-cli sweep-merge OUT.sqlite SHARD.sqlite...
Every command that loads a model takes --dim NAME=VALUE (repeatable): the size of a free
dimension the export left symbolic (e.g. --dim seq=2048 --dim past=255); the batch axis is
--batch. Results record them, so export-instructions and the GUI load the model alike.
HW is a hardware-template .json or a preset: edge (4x4), cloud (12x12), testchip (2x2),
cim (4x4 compute-in-memory), chiplet (8x8: 2x2 chiplets of 4x4, slower inter-chiplet
links), wafer (32x32, DRAM on all four sides). mapping prints one layer's intra-layer mapping on N tiles
(default: the whole mesh) with B samples (default 1).
The budget is a time (4 s per annealing mode) unless --beta or --iterations (per chain)
gives an iteration count, which makes a run reproducible for a seed. The objective
defaults to the preset's: edge and testchip E^2 x D (2,1), cloud E x D^2 (1,2), else 1,1.
anneal, compare and generate take --repeat-blocks: where the model holds copies of one block
(a decoder's transformer blocks), every copy is scheduled as the first block is and the
search changes that block only (docs/search.md, "Repeated blocks").
anneal, compare and generate take --partitions: the search also moves each leaf among its
alternative partitions (mapping lists them) and keeps the one the whole tree costs least with.
anneal and compare also take --min-util X, --warmup SHARE, --no-portfolio,
--chiplet-cost method|whole-chiplet and --chiplet-chains in-out-1|single-link (the chiplet
baseline's region cost and chain reduction: the method's by default); compare
also takes --chains K, --threads T, --t0, --alpha and --quiet (docs/search.md).
evaluate, anneal and compare take --layouts auto|nchw|nhwc|chwn|nchwc (default auto: planned)
and --pin-layout TENSOR=LAYOUT (repeatable): the DRAM layout of every feature map where the
template has a run model (dram.burst_bytes, dram.run_overhead_cycles; docs/cost-model.md §4b).
evaluate, anneal, compare, generate and export-instructions take --stage-bytes N: the template's
tile.stage_bytes (an instruction of B bytes in ceil(B / N) stages, 1 to 64; 0: the template's).
mapping, evaluate, anneal, compare and export-instructions take --cim-records FILE on a
compute-in-memory template: the best crossbar schedule of each workload, read from FILE and
written back with what the run added (docs/cost-model.md §8, "Records").
generate schedules a decoder's prefill (seq P) and its decode step (seq 1) at K context
lengths from P to P+G-2 (default 4) and reports TTFT, TPOT, tokens/s, energy per token and
the KV cache size (docs/cli.md); the sequence and past axes are found from the graph.
--export DIR writes each phase's program to DIR/prefill, DIR/decode-pastN and replays it.
sweep runs every point of a design-space spec into SQLite, J at a time, skipping points
already there; under mpirun the ranks split the points (docs/sweep.md).
)";

struct Command {
    std::function<int(const Args&)> run;
    std::set<std::string> valued; // options that take a value
    std::set<std::string> flags;  // options without a value
};

} // namespace

int main(int argc, char** argv) {
    const std::map<std::string, Command> commands = {
        {"inspect", {runInspect, {"--fallback", "--dim"}, {"--json"}}},
        {"evaluate",
         {runEvaluate,
          {"--hw", "--tree", "--batch", "--objective", "--json", "--dim", "--layouts",
           "--pin-layout", "--stage-bytes", "--cim-records"},
          {}}},
        {"anneal",
         {runAnneal,
          {"--hw",         "--batch",        "--objective",
           "--seed",       "--beta",         "--t0",
           "--alpha",      "--mode",         "--chains",
           "--threads",    "--pin",          "--init",
           "--json",       "--tree-out",     "--iterations",
           "--min-util",   "--time",         "--warmup",
           "--dim",        "--chiplet-cost", "--chiplet-chains",
           "--layouts",    "--pin-layout",   "--stage-bytes",
           "--cim-records"},
          {"--quiet", "--no-portfolio", "--repeat-blocks", "--partitions", "--mapper-partitions"}}},
        {"compare",
         {runCompare,
          {"--hw",           "--batch",          "--objective", "--seed",       "--beta",
           "--json",         "--chains",         "--threads",   "--iterations", "--min-util",
           "--time",         "--warmup",         "--t0",        "--alpha",      "--dim",
           "--chiplet-cost", "--chiplet-chains", "--mode",      "--layouts",    "--pin-layout",
           "--stage-bytes",  "--cim-records"},
          {"--quiet", "--no-portfolio", "--repeat-blocks", "--partitions", "--mapper-partitions"}}},
        {"generate",
         {runGenerate,
          {"--hw",       "--batch",    "--objective", "--seed",       "--beta",    "--t0",
           "--alpha",    "--mode",     "--chains",    "--threads",    "--json",    "--iterations",
           "--min-util", "--time",     "--warmup",    "--dim",        "--prompt",  "--tokens",
           "--points",   "--kv-cache", "--seq-dim",   "--past-dim",   "--prefill", "--decode",
           "--export",   "--formats",  "--weights",   "--stage-bytes"},
          {"--quiet", "--no-portfolio", "--repeat-blocks", "--partitions", "--mapper-partitions"}}},
        {"mapping",
         {runMapping,
          {"--hw", "--layer", "--tiles", "--batch", "--dim", "--cim-records", "--objective"},
          {"--json"}}},
        {"export-instructions",
         {runExportInstructions, {"--out", "--formats", "--stage-bytes", "--cim-records"}, {}}},
        {"simulate", {runSimulate, {"--json", "--trace"}, {"--quiet"}}},
        {"sweep", {runSweep, {"--db", "--jobs", "--shard"}, {"--quiet"}}},
        {"sweep-merge", {runSweepMerge, {}, {}}},
    };
    if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
        std::fputs(kUsage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    Args args;
    args.command = argv[1];
    auto cmd = commands.find(args.command);
    if (cmd == commands.end()) {
        std::cerr << "tilescope-cli: unknown command '" << args.command << "'\n" << kUsage;
        return 2;
    }
    for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        if (a.rfind("--", 0) == 0 && a.size() > 2) {
            std::string value;
            bool hasInline = false;
            if (auto eq = a.find('='); eq != std::string::npos) {
                value = a.substr(eq + 1);
                a = a.substr(0, eq);
                hasInline = true;
            }
            if (cmd->second.flags.count(a)) {
                args.options.emplace(a, "");
            } else if (cmd->second.valued.count(a)) {
                if (!hasInline) {
                    if (i + 1 >= argc) {
                        std::cerr << "tilescope-cli " << args.command << ": option " << a
                                  << " needs a value\n";
                        return 2;
                    }
                    value = argv[++i];
                }
                args.options.emplace(a, value);
            } else {
                std::cerr << "tilescope-cli " << args.command << ": unknown option '" << a << "'\n"
                          << kUsage;
                return 2;
            }
        } else {
            args.positional.push_back(a);
        }
    }
    try {
        return cmd->second.run(args);
    } catch (const UsageError& e) {
        std::cerr << "tilescope-cli " << args.command << ": " << e.message << "\n";
        return 2;
    } catch (const std::exception& e) {
        // The engine reports errors as values; reaching here is a bug, but never crash.
        std::cerr << "tilescope-cli " << args.command << ": internal error: " << e.what() << "\n";
        return 1;
    }
}
