// The genetic search: crossover of RA trees by subtree exchange over the same layers, the
// steady-state population of one chain, and the strategy runSearch drives it through.
#include "search/genetic.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace tilescope {

namespace {

// The layers under each node, sorted: the key a subtree of one tree is matched by in another.
std::vector<std::vector<int>> layerSets(const RATree& t) {
    std::vector<std::vector<int>> sets(size_t(t.size()));
    for (int id = 0; id < t.size(); ++id) {
        sets[size_t(id)] = t.layersUnder(id);
        std::sort(sets[size_t(id)].begin(), sets[size_t(id)].end());
    }
    return sets;
}

bool holdsPin(const RATree& t, int id) {
    if (t.node(id).pinned) return true;
    for (int c : t.node(id).children)
        if (holdsPin(t, c)) return true;
    return false;
}

// Appends a copy of b's subtree at `from` to `out` under `parent`; returns its new id.
int copySubtree(const RATree& b, int from, RATree& out, int parent) {
    const int id = out.size();
    out.nodes.push_back(b.node(from));
    out.node(id).parent = parent;
    out.node(id).children.clear();
    for (int c : b.node(from).children) {
        const int k = copySubtree(b, c, out, id);
        out.node(id).children.push_back(k);
    }
    return id;
}

// a with the subtree at `at` replaced by b's subtree at `from`.
RATree graft(const RATree& a, int at, const RATree& b, int from) {
    RATree w = a;
    const int parent = a.node(at).parent;
    const int k = copySubtree(b, from, w, parent);
    auto& kids = w.node(parent).children;
    *std::find(kids.begin(), kids.end(), at) = k;
    w.compact();
    return w;
}

// Batches top-down from the root's; a cut whose count no longer divides its batch takes
// the gcd of the two. Nodes are in pre-order (compact), so a parent comes before its children.
void repairBatches(RATree& t) {
    for (int id = 0; id < t.size(); ++id) {
        RANode& n = t.node(id);
        if (id != t.root) {
            const RANode& p = t.node(n.parent);
            n.batch = p.batch / p.subBatch;
        }
        if (n.isCut() && n.batch % n.subBatch != 0) n.subBatch = std::gcd(n.batch, n.subBatch);
    }
}

} // namespace

std::optional<RATree> crossover(const RATree& a, const RATree& b, const Network& net, Rng& rng) {
    const auto setsA = layerSets(a), setsB = layerSets(b);
    std::map<std::vector<int>, int> inB;
    for (int id = 0; id < b.size(); ++id)
        if (id != b.root && !holdsPin(b, id)) inB.emplace(setsB[size_t(id)], id);
    std::vector<std::pair<int, int>> pairs; // (node of a, node of b) over the same layers
    for (int id = 0; id < a.size(); ++id) {
        if (id == a.root || a.frozen(id) || holdsPin(a, id) || setsA[size_t(id)].size() < 2)
            continue;
        const auto it = inB.find(setsA[size_t(id)]);
        if (it == inB.end()) continue;
        if (subtreeToText(a, net, id) == subtreeToText(b, net, it->second)) continue;
        pairs.emplace_back(id, it->second);
    }
    if (pairs.empty()) return std::nullopt;
    const auto [at, from] = pairs[size_t(randBelow(rng, int(pairs.size())))];
    RATree child = graft(a, at, b, from);
    repairBatches(child);
    if (validateStructure(child, net, a.node(a.root).batch)) return std::nullopt;
    return child;
}

GeneticPopulation::GeneticPopulation(const Network& net, RATree start, Evaluation startEval)
    : m_net(net) {
    m_members.push_back({std::move(start), startEval.cost});
}

const RATree& GeneticPopulation::tournament(Rng& rng) const {
    const Member& x = m_members[size_t(randBelow(rng, size()))];
    const Member& y = m_members[size_t(randBelow(rng, size()))];
    return y.cost < x.cost ? y.tree : x.tree;
}

std::optional<RATree> GeneticPopulation::breed(const OperatorContext& ops, Rng& rng) {
    const RATree& first = tournament(rng);
    std::optional<RATree> child;
    if (size() >= 2 && randUnit(rng) < kCrossover) {
        const RATree& second = tournament(rng);
        child = crossover(first, second, m_net, rng);
        // Outside the space (a restricted rule): mutate the first parent instead.
        if (child && ops.rule.check(*child)) child.reset();
    }
    // Mutation: one operator on the child, so no child is a copy of a member.
    return proposeCandidate(child ? *child : first, ops, rng);
}

bool GeneticPopulation::offer(const RATree& tree, const Evaluation& eval) {
    for (const Member& m : m_members)
        if (m.tree == tree) return false;
    if (size() < kSize) {
        m_members.push_back({tree, eval.cost});
        return true;
    }
    auto worst = std::max_element(m_members.begin(), m_members.end(),
                                  [](const Member& x, const Member& y) { return x.cost < y.cost; });
    if (!(eval.cost < worst->cost)) return false;
    *worst = {tree, eval.cost};
    return true;
}

namespace {

class GeneticSearch : public Strategy {
  public:
    SearchMode mode() const override { return SearchMode::Genetic; }
    SpaceRule space() const override { return {}; }
    bool accept(double, double, double, Rng&) const override { return false; } // population
    bool returnsToBest() const override { return false; }
    Result<RATree> initialTree(EvalContext& ctx, int totalBatch, const EvalOptions& opt,
                               Deadline) const override {
        return layerSequentialStart(ctx, totalBatch, opt);
    }
    std::unique_ptr<Population> population(const Network& net, const RATree& start,
                                           const Evaluation& startEval) const override {
        return std::make_unique<GeneticPopulation>(net, start, startEval);
    }
};

} // namespace

std::unique_ptr<Strategy> makeGeneticStrategy() {
    return std::make_unique<GeneticSearch>();
}

} // namespace tilescope
