// Each leaf's partition chosen by the whole tree's cost (partition_choice.h).
#include "search/partition_choice.h"

#include "mapping/mapper.h"

#include <algorithm>
#include <atomic>
#include <numeric>
#include <optional>
#include <thread>

namespace tilescope {

namespace {

// Whether node id lies in a tied copy of a repeated block (its copies follow the first
// block's leaves when the tree is tied again).
bool inTiedCopy(const RATree& t, int id) {
    for (; id >= 0; id = t.node(id).parent)
        if (t.node(id).tied) return true;
    return false;
}

} // namespace

PartitionChoiceStats choosePartitions(RATree& tree, Evaluation& eval, EvalContext& ctx,
                                      const PartitionChoiceInputs& in) {
    PartitionChoiceStats st;
    st.costBefore = eval.cost;
    if (!eval.valid || eval.tileCounts.size() != size_t(tree.size())) {
        st.complete = false;
        return st;
    }
    EvalOptions opt = in.opt;
    opt.structureChecked = true; // a partition does not change the tree's structure
    // The leaves that may change, the most work first: where the budget ends early, the
    // leaves that weigh most have had their turn.
    std::vector<int> leaves;
    for (int id = 0; id < tree.size(); ++id) {
        const RANode& n = tree.node(id);
        if (!n.isCut() && !tree.frozen(id) && !inTiedCopy(tree, id)) leaves.push_back(id);
    }
    auto work = [&](int id) {
        const RANode& n = tree.node(id);
        return double(in.net.layers[size_t(n.layer)].macsPerSample()) * n.batch;
    };
    std::stable_sort(leaves.begin(), leaves.end(), [&](int a, int b) { return work(a) > work(b); });
    const PartitionFactors start = {};
    std::vector<PartitionFactors> before(size_t(tree.size()), start);
    for (int id : leaves)
        before[size_t(id)] = tree.node(id).partition;
    auto outOfTime = [&] {
        return std::chrono::steady_clock::now() >= in.until || (in.stopped && in.stopped());
    };
    for (int pass = 0; pass < 3; ++pass) {
        bool changed = false;
        for (int id : leaves) {
            if (outOfTime()) {
                st.complete = false;
                break;
            }
            const RANode& n = tree.node(id);
            const std::vector<LeafMapping>& alts =
                ctx.alternatives(n.layer, eval.tileCounts[size_t(id)], n.batch);
            if (alts.size() < 2) {
                st.leaves += pass == 0;
                continue;
            }
            // What the leaf runs now: a named alternative, else the mapper's choice (index 0).
            const PartitionFactors now = tree.node(id).partition;
            const bool named =
                ctx.namedAlternative(n.layer, eval.tileCounts[size_t(id)], n.batch, now) != nullptr;
            // The alternatives to cost: every other partition the leaf may run.
            std::vector<PartitionFactors> others;
            for (size_t i = 0; i < alts.size(); ++i) {
                const PartitionFactors p = i == 0 ? start : Mapper::factorsOf(alts[i]);
                if (!(named ? p == now : i == 0)) others.push_back(p);
            }
            std::vector<std::optional<RATree>> cands(others.size());
            std::vector<std::optional<Evaluation>> evals(others.size());
            std::atomic<size_t> next{0};
            std::atomic<bool> late{false};
            auto costAlternatives = [&](EvalContext& c) {
                for (size_t i; (i = next.fetch_add(1)) < others.size();) {
                    if (outOfTime()) {
                        late = true;
                        return;
                    }
                    RATree cand = tree;
                    cand.node(id).partition = others[i];
                    if (in.rep.active()) {
                        auto tied = tieBlocks(cand, in.net, in.rep);
                        if (!tied) continue;
                        cand = std::move(tied).value();
                    }
                    evals[i] = evaluate(c, cand, in.totalBatch, opt);
                    cands[i] = std::move(cand);
                }
            };
            if (in.helper && others.size() > 1) {
                std::jthread second([&] { costAlternatives(*in.helper); });
                costAlternatives(ctx);
            } else {
                costAlternatives(ctx);
            }
            // In order, each kept where it is cheaper than the tree so far.
            for (size_t i = 0; i < others.size(); ++i) {
                if (!evals[i]) continue;
                ++st.evaluations;
                if (!evals[i]->valid || !(evals[i]->cost < eval.cost)) continue;
                tree = std::move(*cands[i]);
                eval = std::move(*evals[i]);
                changed = true;
            }
            if (late) {
                st.complete = false;
                break;
            }
            st.leaves += pass == 0;
        }
        if (!st.complete) break;
        if (!changed) {
            st.settled = true;
            break;
        }
    }
    for (int id : leaves)
        st.changed += tree.node(id).partition != before[size_t(id)];
    return st;
}

} // namespace tilescope
