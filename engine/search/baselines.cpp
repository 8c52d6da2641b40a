// Strategies other than full-space annealing: the LS / LP restricted spaces (annealing
// confined to a root T cut over layers and T / S cuts of layers), random search, and the
// starting trees.
#include "search/genetic.h"
#include "search/schedule.h"
#include "search/strategy.h"

#include <algorithm>

namespace tilescope {

Result<RATree> layerSequentialStart(EvalContext& ctx, int totalBatch, const EvalOptions& opt) {
    const Network& net = ctx.network();
    if (net.layers.empty()) return Error{"the network has no scheduled layers"};
    if (totalBatch < 1) return Error{"batch " + std::to_string(totalBatch) + " is not positive"};
    RATree t = RATree::layerSequential(net, totalBatch);
    std::string why;
    // The most samples per invocation whose slices fit the buffers; where every sub-batch
    // needs a blocked leaf (docs/cost-model.md §2b), the one the objective likes best.
    int blockedSb = 0;
    double blockedCost = 0;
    for (int sb : divisorsOf(totalBatch)) {
        t.node(t.root).subBatch = sb;
        t.propagateBatches();
        const Evaluation e = evaluate(ctx, t, totalBatch, opt);
        if (e.valid && e.blockedLeaves == 0) return t;
        if (e.valid && (blockedSb == 0 || e.cost < blockedCost))
            blockedSb = sb, blockedCost = e.cost;
        if (!e.valid) why = e.reason;
    }
    if (blockedSb > 0) {
        t.node(t.root).subBatch = blockedSb;
        t.propagateBatches();
        return t;
    }
    // One sample per invocation and still too large: a few consecutive layers under one T
    // cut may stream their blocks (docs/cost-model.md §2b, "Streaming chains"; attention's
    // scores in the flash order). Where the tree fails, the first group of two to four
    // layers holding that place that makes the tree valid or moves the failure past itself;
    // then the next failure (a decoder's next block), until the tree is valid.
    constexpr int kGroup = 4;
    t.node(t.root).subBatch = t.node(t.root).batch;
    t.propagateBatches();
    Evaluation e = evaluate(ctx, t, totalBatch, opt);
    // The root child holding node id (-1: none).
    auto rootChild = [](const RATree& tree, int id) {
        while (id >= 0 && tree.node(id).parent != tree.root)
            id = tree.node(id).parent;
        return id >= 0 ? tree.childIndex(id) : -1;
    };
    for (int at = rootChild(t, e.invalidNode); !e.valid && at >= 0;) {
        const int n = int(t.node(t.root).children.size());
        bool moved = false;
        for (int pos = std::max(0, at - kGroup + 1); pos <= at && !moved; ++pos)
            for (int len = std::max(2, at - pos + 1); len <= kGroup && pos + len <= n; ++len) {
                auto w = edit::wrap(t, net, t.root, pos, len, NodeType::T, 1);
                if (!w) continue;
                const Evaluation ew = evaluate(ctx, *w, totalBatch, opt);
                const int next = ew.valid ? n : rootChild(*w, ew.invalidNode);
                if (!ew.valid && next <= pos) continue;
                t = std::move(w).value();
                e = ew;
                at = next;
                moved = true;
                break;
            }
        if (!moved) break;
    }
    if (e.valid) return t;
    return Error{"no valid layer-sequential schedule, even one sample per invocation: " + why};
}

Result<RATree> layerPipelineStart(EvalContext& ctx, int totalBatch, const EvalOptions& opt,
                                  Deadline deadline) {
    auto start = layerSequentialStart(ctx, totalBatch, opt);
    if (!start) return start;
    const Network& net = ctx.network();
    RATree t = std::move(start).value();
    double cost = evaluate(ctx, t, totalBatch, opt).cost;
    const RANode& root = t.node(t.root);
    const int b = root.batch / root.subBatch;
    // Each pipeline stage needs at least one tile; a few invalid lengths in a row end the
    // segment (validity is not monotone in the length: allocations round differently).
    const int maxLen = ctx.hardware().tiles();
    constexpr int kInvalidRun = 3;
    for (int pos = 0; pos < int(t.node(t.root).children.size()) && !deadline.passed(); ++pos) {
        const int remaining = int(t.node(t.root).children.size()) - pos;
        std::optional<RATree> bestTree;
        double bestCost = cost;
        int invalid = 0;
        for (int len = 2; len <= std::min(remaining, maxLen) && invalid < kInvalidRun; ++len) {
            if (bestTree && deadline.passed()) break; // the longest segment tried so far
            auto w = edit::wrap(t, net, t.root, pos, len, NodeType::S, b);
            if (!w) break; // a structural refusal (pins) does not go away with length
            const Evaluation e = evaluate(ctx, *w, totalBatch, opt);
            if (!e.valid) {
                ++invalid;
                continue;
            }
            invalid = 0;
            if (e.cost < bestCost || !bestTree) {
                bestCost = e.cost;
                bestTree = std::move(w).value();
            }
        }
        // A segment that is worse than leaving the layers sequential is still taken: the
        // baseline is a pipeline, and annealing in the LP space may split it later.
        if (bestTree) {
            t = std::move(*bestTree);
            cost = bestCost;
        }
    }
    return t;
}

namespace {

class Annealing : public Strategy {
  public:
    Annealing(SearchMode m, SpaceRule r) : m_mode(m), m_rule(r) {}
    SearchMode mode() const override { return m_mode; }
    SpaceRule space() const override { return m_rule; }
    bool accept(double current, double candidate, double temp, Rng& rng) const override {
        // Draw only for a worse candidate, as the reference does: fewer draws, same law.
        if (!(candidate > current)) return true;
        return sa::metropolisAccept(current, candidate, temp, randUnit(rng));
    }
    bool returnsToBest() const override { return true; }
    Result<RATree> initialTree(EvalContext& ctx, int totalBatch, const EvalOptions& opt,
                               Deadline deadline) const override {
        if (m_mode == SearchMode::LP) return layerPipelineStart(ctx, totalBatch, opt, deadline);
        return layerSequentialStart(ctx, totalBatch, opt);
    }

  private:
    SearchMode m_mode;
    SpaceRule m_rule;
};

// A random walk over the operators: every valid candidate becomes the current tree;
// the best one seen is the result. The baseline that shows what the schedule buys.
class RandomSearch : public Strategy {
  public:
    SearchMode mode() const override { return SearchMode::Random; }
    SpaceRule space() const override { return {}; }
    bool accept(double, double, double, Rng&) const override { return true; }
    bool returnsToBest() const override { return false; }
    Result<RATree> initialTree(EvalContext& ctx, int totalBatch, const EvalOptions& opt,
                               Deadline) const override {
        return layerSequentialStart(ctx, totalBatch, opt);
    }
};

} // namespace

std::unique_ptr<Strategy> makeStrategy(SearchMode mode) {
    switch (mode) {
    case SearchMode::Set:
        return std::make_unique<Annealing>(mode, SpaceRule{});
    // The restricted spaces of the method's reference: a root T cut whose children are
    // layers or cuts of one type over layers (docs/search.md "Spaces").
    case SearchMode::LS:
        return std::make_unique<Annealing>(mode, SpaceRule{NodeType::T, 2});
    case SearchMode::LP:
        return std::make_unique<Annealing>(mode, SpaceRule{NodeType::S, 2});
    case SearchMode::Random:
        return std::make_unique<RandomSearch>();
    case SearchMode::Genetic:
        return makeGeneticStrategy();
    // dp-lp is a construction, not a chain (runSearch builds it); its trees live in the
    // LP space, which is what a chain continuing from one must stay in.
    case SearchMode::DpLp:
        return std::make_unique<Annealing>(SearchMode::LP, SpaceRule{NodeType::S, 2});
    // The chiplet baseline's trees (a root S cut over T-cut regions) are in the full space.
    case SearchMode::Chiplet:
        return std::make_unique<Annealing>(SearchMode::Set, SpaceRule{});
    }
    return nullptr;
}

} // namespace tilescope
