#include "pipeline/compare.h"

#include <algorithm>
#include <chrono>

namespace tilescope {

namespace {

// A time budget of S seconds per annealing mode holds for the whole comparison on any mesh
// (docs/search.md "Budgets"): LS, LP and SA get S each, so SA anneals as long as a plain
// anneal would; the constructions are bounded beside them, dp-lp by a quarter of S and
// chiplet by a tenth, so the whole comparison takes at most about 3.35 S.
double modeSeconds(SearchMode mode, double perMode) {
    switch (mode) {
    case SearchMode::DpLp:
        return 0.25 * perMode;
    case SearchMode::Chiplet:
        return 0.1 * perMode;
    default:
        return perMode;
    }
}

} // namespace

std::vector<CompareRun> compareStrategies(const Network& net, const Hardware& hw,
                                          const SearchConfig& base, const CompareHooks& hooks,
                                          const CompareOptions& options) {
    const std::vector<SearchMode> modes = compareModes();
    std::vector<CompareRun> runs;
    runs.reserve(modes.size());
    for (std::size_t i = 0; i < modes.size(); ++i) {
        const SearchMode mode = modes[i];
        std::stop_token stop;
        if (hooks.beforeMode) {
            auto token = hooks.beforeMode(mode, i, modes.size());
            if (!token) break;
            stop = *token;
        }
        std::vector<const SearchResult*> earlier; // the baselines' bests seed SA
        for (const CompareRun& r : runs)
            if (r.result) earlier.push_back(&*r.result);
        SearchConfig cfg = compareConfig(base, mode, earlier);
        if (options.progressInterval > 0) cfg.progressInterval = options.progressInterval;
        if (base.seconds > 0) cfg.seconds = modeSeconds(mode, base.seconds);
        ProgressCallback progress;
        if (hooks.progress) progress = [&](const Progress& p) { hooks.progress(mode, p); };

        const auto t0 = std::chrono::steady_clock::now();
        auto res = runSearch(net, hw, cfg, progress, stop);
        CompareRun run;
        run.mode = mode;
        run.wallSeconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const bool failed = !res;
        if (failed)
            run.error = res.error();
        else
            run.result = std::move(res).value();
        runs.push_back(std::move(run));
        if (failed && options.stopAtFirstError) break;
    }
    return runs;
}

} // namespace tilescope
