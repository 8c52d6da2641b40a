// What crosses from the search worker to the GUI: immutable values behind
// std::shared_ptr<const ...>, each tagged with the run's generation id so the GUI drops
// anything from a run it no longer shows.
#pragma once

#include "eval/evaluation.h"
#include "hw/hardware.h"
#include "model/network.h"
#include "search/search.h"
#include "tree/ratree.h"

#include <QMetaType>
#include <QString>
#include <memory>
#include <vector>

namespace tilescope::ui {

// A run to start: the inputs are shared read-only with the worker.
struct RunRequest {
    quint64 generation = 0;
    std::shared_ptr<const Network> net;
    std::shared_ptr<const Hardware> hw;
    SearchConfig config; // initialTree = the document's tree (pins included)
};

struct SearchSnapshot {
    quint64 generation = 0;
    long long iteration = 0, total = 0; // over all chains and all segments of the run
    int segment = 0;                    // increments when an edit restarts the engine search
    double temperature = 0;
    double currentCost = 0, energy = 0, delay = 0;
    double bestCost = 0, bestEnergy = 0, bestDelay = 0;
    // The tree behind bestCost (the run's best over all segments): the same pointer until
    // the best improves; null when the engine sent none. The live-best preview shows it.
    std::shared_ptr<const RATree> bestTree;
    double acceptanceRate = 0;
    double activeSeconds = 0; // elapsed minus time spent paused
    double etaSeconds = -1;   // -1 while unknown
    double secondsLeft = -1;  // time budget: seconds left of it; -1 for an iteration budget
    bool final = false;       // the run ended (finished, stopped or failed)
    // What the engine is doing (Progress::phase: "start tree", "baselines: dp-lp",
    // "annealing", ...); a snapshot as a phase begins has no chain figures (iteration 0 of
    // the segment, currentCost 0).
    QString phase;
};

enum class RunState { Idle, Running, Paused, Finished, Stopped, Failed };

// The best of a segment: sent when a segment ends (run end, restart after an edit, or an
// "adopt best" request, which the worker honours by continuing from that best tree).
struct SearchOutcome {
    quint64 generation = 0;
    bool final = false; // no more segments follow
    bool adopt = false; // the user asked to adopt this best tree
    bool stopped = false;
    std::shared_ptr<const Network> net;
    SearchResult result; // this segment: config, seed, best tree and evaluation, chains, stats
    // The best over every segment of the run so far (what the readout shows and "Adopt
    // best" adopts): an edit or a pin restarts the engine from the edited tree, and the
    // best found before it is not lost. It may predate a pin set during
    // the run; result.bestTree respects every pin.
    RATree bestTree;
    Evaluation best;
};

struct CompareOutcome {
    quint64 generation = 0;
    struct Row {
        SearchMode mode = SearchMode::Set;
        bool ok = false;
        QString error;
        RATree best;
        Evaluation eval;
        double seconds = 0;
    };
    std::vector<Row> rows; // compareModes(): LS, LP, DP-LP, SA (set) in that order
    bool stopped = false;
};

using SnapshotPtr = std::shared_ptr<const SearchSnapshot>;
using OutcomePtr = std::shared_ptr<const SearchOutcome>;
using ComparePtr = std::shared_ptr<const CompareOutcome>;

} // namespace tilescope::ui

Q_DECLARE_METATYPE(tilescope::ui::SnapshotPtr)
Q_DECLARE_METATYPE(tilescope::ui::OutcomePtr)
Q_DECLARE_METATYPE(tilescope::ui::ComparePtr)
Q_DECLARE_METATYPE(tilescope::ui::RunState)
