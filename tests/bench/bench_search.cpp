// Search throughput: SA iterations per second per core, evaluations per second, memo hit
// rates and peak RSS for ResNet-50 batch 8 on the edge (4x4) and cloud (12x12) presets,
// then a compare-like run (LS, LP, SA; 4 chains each, beta 10) with its wall time and the
// SA/LS, SA/LP cost ratios. A program that prints figures; nothing here is gated.
//
// usage: bench_search [MODEL.onnx] [--beta B] [--threads T]
#include "model/model_loader.h"
#include "search/search.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

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

} // namespace

int main(int argc, char** argv) {
    std::string model = std::string(TILESCOPE_SAMPLES) + "/models/resnet50.onnx";
    double beta = 20;
    int threads = int(std::max(1u, std::thread::hardware_concurrency()));
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--beta") && i + 1 < argc) beta = std::atof(argv[++i]);
        else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[++i]);
        else model = argv[i];
    }
    auto net = loadModel(model);
    if (!net) {
        std::fprintf(stderr, "%s\n", net.error().message.c_str());
        return 1;
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
        run((std::string("SA 1 chain, ") + preset).c_str(), *net, hw, c);
        c.chains = threads;
        c.threads = threads;
        run((std::string("SA ") + std::to_string(threads) + " chains, " + preset).c_str(), *net, hw, c);
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
    c.mode = SearchMode::LS;
    const Figures ls = run("compare LS (4 chains)", *net, edge, c);
    c.mode = SearchMode::LP;
    const Figures lp = run("compare LP (4 chains)", *net, edge, c);
    c.mode = SearchMode::Set;
    const Figures sa = run("compare SA (4 chains)", *net, edge, c);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("compare wall time %.2f s; EDP SA/LS %.4f  SA/LP %.4f; peak RSS %.0f MiB\n", wall,
                ls.cost > 0 ? sa.cost / ls.cost : 0.0, lp.cost > 0 ? sa.cost / lp.cost : 0.0,
                peakRssMiB());
    return 0;
}
