// The strategy comparison both front ends run (`tilescope-cli compare`, the GUI's Compare):
// the restricted baselines LS, LP and DP-LP, then annealing over the full space seeded with
// their bests (compareModes(), compareConfig(), docs/search.md "the Set portfolio").
#pragma once

#include "search/search.h"

#include <cstddef>
#include <functional>
#include <optional>
#include <stop_token>
#include <vector>

namespace tilescope {

// One mode of a comparison: its search result, or the error that kept it from running.
struct CompareRun {
    SearchMode mode = SearchMode::Set;
    std::optional<SearchResult> result; // engaged when the search ran
    Error error;                        // why not, when result is empty
    double wallSeconds = 0;             // including the search's set-up
};

struct CompareOptions {
    // true (the CLI): a mode that fails ends the comparison; false (the GUI): it is
    // recorded and the later modes still run (SA without that baseline's seed).
    bool stopAtFirstError = true;
    // > 0: the searches' progress interval instead of the base configuration's.
    double progressInterval = 0;
};

struct CompareHooks {
    // Before mode `index` of `count`: the stop token that mode's search obeys, or nullopt
    // to end the comparison there. Unset: every mode runs, none can be stopped.
    std::function<std::optional<std::stop_token>(SearchMode mode, std::size_t index,
                                                 std::size_t count)>
        beforeMode;
    // Progress of the running mode's search.
    std::function<void(SearchMode mode, const Progress&)> progress;
};

// Runs compareModes() in order, each with compareConfig(base, mode, earlier bests): every
// mode from its own default start, without base's initial tree and pins; SA seeded with
// the bests of the baselines that ran. The runs come back in that order, one per mode that
// started.
std::vector<CompareRun> compareStrategies(const Network& net, const Hardware& hw,
                                          const SearchConfig& base, const CompareHooks& hooks = {},
                                          const CompareOptions& options = {});

} // namespace tilescope
