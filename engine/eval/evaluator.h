// The evaluator: a pure function of (network, hardware, tree, batch, objective) to an
// Evaluation. An EvalContext holds the memo caches (intra-layer mappings, NoC route
// patterns) that make repeated evaluation cheap; one context per thread.
#pragma once

#include "eval/evaluation.h"
#include "eval/layout_plan.h"
#include "hw/hardware.h"
#include "mapping/mapper.h"
#include "model/network.h"
#include "tree/ratree.h"

#include <memory>
#include <vector>

namespace tilescope {

struct EvalOptions {
    Objective objective;
    double minUtilisation = 0.75; // S-cut allocations below this are invalid (docs/method.md §2)
    bool detail = false;          // per-node figures, intervals, per-link bytes
    size_t maxIntervals = 250000; // S-T rectangles kept in detail mode
    // Intervals on the program's clock (analyseSchedule(), for the instruction generator):
    // an S cut held up by the DRAM's order keeps its children at stage offset + sub-batch x
    // slot, the order its DRAM-ordered time assumes, instead of being drawn stretched to
    // that time (docs/cost-model.md §5, "DRAM-ordered pipeline").
    bool programClock = false;
    // DRAM layouts, for a template with a run model (docs/cost-model.md §4b): planned or all
    // in one, with pins.
    LayoutChoice layouts;
    // The caller has checked the tree with validateStructure for its own root batch (the
    // search's edits check every candidate they return): evaluate() then checks only that
    // the root batch is the total batch, not the whole structure again.
    bool structureChecked = false;
};

struct EvalStats {
    long long evaluations = 0;
    long long mapperCalls = 0, mapperHits = 0;
    long long routeCalls = 0, routeHits = 0; // leaf traffic memo (transfers.h): lookups, hits
    // Of the periods costed anew (memo misses): how many, and their NoC pieces and route
    // links in all (LeafTraffic::pieces, pieceLinks).
    long long periodsCosted = 0, pieces = 0, pieceLinks = 0;

    // Every count of `o` added or taken out: a context's stats over some stretch are its
    // stats at the end less those at the start; a run's, its chains' added up.
    EvalStats& operator+=(const EvalStats& o) { return combine(o, 1); }
    EvalStats& operator-=(const EvalStats& o) { return combine(o, -1); }

  private:
    EvalStats& combine(const EvalStats& o, long long sign) {
        evaluations += sign * o.evaluations;
        mapperCalls += sign * o.mapperCalls;
        mapperHits += sign * o.mapperHits;
        routeCalls += sign * o.routeCalls;
        routeHits += sign * o.routeHits;
        periodsCosted += sign * o.periodsCosted;
        pieces += sign * o.pieces;
        pieceLinks += sign * o.pieceLinks;
        return *this;
    }
};

class EvalContext {
  public:
    EvalContext(const Network& net, const Hardware& hw);
    ~EvalContext();
    EvalContext(const EvalContext&) = delete;
    EvalContext& operator=(const EvalContext&) = delete;

    const Network& network() const;
    const Hardware& hardware() const;
    const EvalStats& stats() const;
    // A leaf's alternative partitions under the objective of the last evaluation
    // (Mapper::alternatives).
    const std::vector<LeafMapping>& alternatives(int layer, int tiles, int batch);
    // The alternative a leaf's factors name on these tiles, or null (Mapper::namedAlternative).
    const LeafMapping* namedAlternative(int layer, int tiles, int batch, const PartitionFactors& p);
    struct Impl;
    Impl& impl() { return *m_impl; }

  private:
    std::unique_ptr<Impl> m_impl;
};

Evaluation evaluate(EvalContext& ctx, const RATree& tree, int totalBatch, const EvalOptions& opt);
// Convenience: a fresh context for a one-off evaluation.
Evaluation evaluate(const Network& net, const Hardware& hw, const RATree& tree, int totalBatch,
                    const EvalOptions& opt);

double objectiveCost(PicoJoules energy, Cycles delay, const Objective& o);

// Exact min-max tile allocation at an S cut (docs/method.md §2): n_i >= 1, sum n_i = N (`tiles`),
// minimising max_i a_i / n_i, where a_i is child i's NPT. Requires tiles >= a.size().
void allocateTiles(const std::vector<double>& a, int tiles, std::vector<int>& out);

} // namespace tilescope
