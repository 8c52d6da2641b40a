// Search throughput: SA iterations per second per core, evaluations per second, memo hit
// rates and peak RSS for ResNet-50 batch 8 on the edge (4x4) and cloud (12x12) presets
// (plain chains from the layer-sequential start, comparable across versions; then the Set
// portfolio, whose warm-up and dp-lp trees change the mix of trees evaluated), dp-lp's
// time, then a compare-like run (LS, LP, dp-lp, SA seeded with their bests; 4 chains
// each, beta 10) with its wall time and the cost ratios. Prints figures; nothing is gated.
// --trees DIR instead evaluates the trees saved in DIR (as `scripts/fidelity_sets.py
// --save-trees` names them: model-hw-bB-sS.json) round after round, one context per model
// and mesh, and prints evaluations per second per mesh: the evaluator's own cost, which
// the chains' figures mix with the trees they happen to visit.
// --meshes A,B,... instead runs one plain chain (beta B, one thread) on each mesh in turn
// (a preset, "XxY" with the defaults for its size, variants as tst_fidelity names them, or
// a template .json) and prints each one's iterations per second per core and its ratio to
// the first mesh's: how the evaluator's cost grows with the mesh, measured side by side;
// and what makes it grow: the leaf periods costed anew per iteration (memo misses) and the
// NoC pieces and route links of each.
//
// usage: bench_search [MODEL.onnx] [--beta B] [--threads T]
//        bench_search [MODEL.onnx] --meshes cloud,wafer,64x64+4sides [--beta B]
//        bench_search --trees DIR [--rounds R]
#include "../engine/hwvariants.h"
#include "model/model_loader.h"
#include "saved_tree.h"
#include "search/search.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <vector>

using namespace tilescope;

namespace {

double peakRssMiB() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_maxrss) / 1024.0; // Linux reports KiB
}

struct Figures {
    double cost = 0, seconds = 0;
};

Figures run(const char* label, const Network& net, const Hardware& hw, SearchConfig cfg) {
    auto r = runSearch(net, hw, cfg);
    if (!r) {
        std::printf("%-28s error: %s\n", label, r.error().message.c_str());
        return {};
    }
    const auto& s = r->stats;
    std::printf("%-28s %9.0f it/s/core %9.0f eval/s  mapper hits %5.1f%%  route hits %5.1f%%  "
                "valid %4.1f%%  %6.2f s  cost %.4g (start %.4g)  RSS %.0f MiB\n",
                label, s.iterationsPerSecondPerCore, s.evaluationsPerSecond, 100 * s.mapperHitRate,
                100 * s.routeHitRate, 100 * s.validRate, r->elapsedSeconds, r->best.cost,
                r->initialEval.cost, peakRssMiB());
    return {r->best.cost, r->elapsedSeconds};
}

// Evaluations per second of the saved trees in `dir`, per model and mesh (each tree
// evaluated once per round, as the search evaluates a state: no detail).
int fixedTrees(const std::string& dir, int rounds) {
    struct Group {
        std::unique_ptr<Network> net;
        Hardware hw;
        std::vector<std::pair<RATree, int>> trees; // tree, batch
    };
    std::map<std::string, Group> groups; // "model hw"
    std::error_code ec;
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
        if (e.path().extension() == ".json") files.push_back(e.path());
    if (ec || files.empty()) {
        std::fprintf(stderr, "%s: no saved trees (*.json)\n", dir.c_str());
        return 1;
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
        const std::string name = f.stem().string();
        const auto dash = name.find('-'), dash2 = name.find('-', dash + 1);
        if (dash == std::string::npos || dash2 == std::string::npos) {
            std::fprintf(stderr, "%s: not named model-hw-bB-sS.json\n", f.c_str());
            return 1;
        }
        const std::string model = name.substr(0, dash),
                          hwName = name.substr(dash + 1, dash2 - dash - 1);
        Group& g = groups[model + " " + hwName];
        if (!g.net) {
            auto net = loadModel(std::string(TILESCOPE_SAMPLES) + "/models/" + model + ".onnx");
            if (!net || !test::hardwareVariant(hwName, g.hw)) {
                std::fprintf(stderr, "%s: no model %s or hardware %s\n", f.c_str(), model.c_str(),
                             hwName.c_str());
                return 1;
            }
            g.net = std::make_unique<Network>(std::move(*net));
        }
        auto t = readSavedTree(f.string(), *g.net, 8);
        if (!t) {
            std::fprintf(stderr, "%s\n", t.error().message.c_str());
            return 1;
        }
        g.trees.push_back(std::move(*t));
    }
    double allEvals = 0, allSeconds = 0;
    for (auto& [key, g] : groups) {
        EvalContext ctx(*g.net, g.hw);
        double checksum = 0;
        const auto t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < rounds; ++r)
            for (const auto& [tree, batch] : g.trees)
                checksum += evaluate(ctx, tree, batch, {}).delay;
        const double sec =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const double n = double(rounds) * double(g.trees.size());
        allEvals += n, allSeconds += sec;
        std::printf("%-28s %3zu trees %9.0f eval/s  (mean delay %.6g)\n", key.c_str(),
                    g.trees.size(), n / sec, checksum / n);
    }
    std::printf("all %zu trees, %d rounds: %.0f eval/s\n", files.size(), rounds,
                allEvals / allSeconds);
    return 0;
}

// One chain per mesh in `list` (comma-separated), each from the layer-sequential start with
// the same beta; iterations per second per core and the ratio to the first mesh's.
int meshesSideBySide(const Network& net, const std::string& list, double beta) {
    double first = 0;
    for (size_t at = 0; at <= list.size();) {
        const size_t comma = std::min(list.find(',', at), list.size());
        const std::string spec = list.substr(at, comma - at);
        at = comma + 1;
        Hardware hw;
        if (!test::hardwareVariant(spec, hw)) {
            auto loaded = loadHardware(spec);
            if (!loaded) {
                std::fprintf(stderr, "%s\n", loaded.error().message.c_str());
                return 1;
            }
            hw = std::move(*loaded);
        }
        SearchConfig c;
        c.totalBatch = 8;
        c.seed = 1;
        c.beta = beta;
        c.chains = 1;
        c.threads = 1;
        c.portfolio = false;
        // The chain's rate alone: the partition choice after it is not timed in it, and on a
        // large mesh it takes longer than the chain.
        c.choosePartitions = false;
        auto r = runSearch(net, hw, c);
        if (!r) {
            std::fprintf(stderr, "%s: %s\n", spec.c_str(), r.error().message.c_str());
            return 1;
        }
        const double rate = r->stats.iterationsPerSecondPerCore;
        if (first == 0) first = rate;
        const auto& s = r->stats;
        std::printf("SA 1 chain, %-16s %4dx%-4d %9.0f it/s/core  x%.3f of %s  route hits %5.1f%%  "
                    "%6.2f s  cost %.6g  RSS %.0f MiB\n",
                    spec.c_str(), hw.meshX, hw.meshY, rate, rate / first,
                    list.substr(0, list.find(',')).c_str(), 100 * s.routeHitRate, r->elapsedSeconds,
                    r->best.cost, peakRssMiB());
        // What the rate is made of: the leaf periods costed anew per iteration, and the work
        // of each (NoC pieces and their route links), which grows with the leaves' tiles.
        std::printf("    %-27s new periods %.2f/iteration  %8.0f pieces  %9.0f route links each\n",
                    "", double(s.periodsCosted) / double(std::max(1LL, r->iterationsRun)),
                    s.piecesPerNewPeriod, s.pieceLinksPerNewPeriod);
    }
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    std::string model = std::string(TILESCOPE_SAMPLES) + "/models/resnet50.onnx";
    double beta = 20;
    int threads = int(std::max(1u, std::thread::hardware_concurrency()));
    std::string treeDir, meshes;
    int rounds = 20;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--trees") && i + 1 < argc)
            treeDir = argv[++i];
        else if (!std::strcmp(argv[i], "--meshes") && i + 1 < argc)
            meshes = argv[++i];
        else if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = std::max(1, std::atoi(argv[++i]));
        else if (!std::strcmp(argv[i], "--beta") && i + 1 < argc)
            beta = std::atof(argv[++i]);
        else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = std::atoi(argv[++i]);
        else
            model = argv[i];
    }
    if (!treeDir.empty()) return fixedTrees(treeDir, rounds);
    auto net = loadModel(model);
    if (!net) {
        std::fprintf(stderr, "%s\n", net.error().message.c_str());
        return 1;
    }
    if (!meshes.empty()) {
        std::printf("%s: %zu layers, batch 8, beta %g, one chain per mesh\n", model.c_str(),
                    net->layers.size(), beta);
        return meshesSideBySide(*net, meshes, beta);
    }
    std::printf("%s: %zu layers, batch 8, objective EDP, beta %g, %d thread(s)\n", model.c_str(),
                net->layers.size(), beta, threads);

    for (const char* preset : {"edge", "cloud"}) {
        Hardware hw;
        presetHardware(preset, hw);
        SearchConfig c;
        c.totalBatch = 8;
        c.seed = 1;
        // The cloud mesh costs more per evaluation; a smaller budget keeps the run short.
        c.beta = std::string(preset) == "edge" ? beta : beta / 4;
        c.chains = 1;
        c.threads = 1;
        c.portfolio = false;
        run((std::string("SA 1 chain, ") + preset).c_str(), *net, hw, c);
        c.chains = threads;
        c.threads = threads;
        run((std::string("SA ") + std::to_string(threads) + " chains, " + preset).c_str(), *net, hw,
            c);
        c.portfolio = true;
        run((std::string("SA portfolio, ") + preset).c_str(), *net, hw, c);
        c.mode = SearchMode::DpLp;
        run((std::string("dp-lp, ") + preset).c_str(), *net, hw, c);
    }

    // compare: LS, LP and SA with one seed and budget, 4 chains each, beta 10.
    Hardware edge;
    presetHardware("edge", edge);
    SearchConfig c;
    c.totalBatch = 8;
    c.seed = 1;
    c.beta = 10;
    c.chains = 4;
    c.threads = threads;
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<SearchResult> done;
    std::vector<Figures> figs;
    for (SearchMode m : compareModes()) {
        std::vector<const SearchResult*> earlier;
        for (const auto& r : done)
            earlier.push_back(&r);
        const SearchConfig mc = compareConfig(c, m, earlier);
        const std::string label = std::string("compare ") + toString(m) + " (4 chains)";
        figs.push_back(run(label.c_str(), *net, edge, mc));
        auto r = runSearch(*net, edge, mc); // the result itself, to seed SA
        if (r) done.push_back(std::move(r).value());
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double sa = figs.back().cost;
    auto ratio = [&](size_t i) { return figs[i].cost > 0 ? sa / figs[i].cost : 0.0; };
    std::printf(
        "compare wall time %.2f s (each mode twice); EDP SA/LS %.4f  SA/LP %.4f  SA/DP-LP %.4f; "
        "peak RSS %.0f MiB\n",
        wall, ratio(0), ratio(1), ratio(2), peakRssMiB());
    return 0;
}
