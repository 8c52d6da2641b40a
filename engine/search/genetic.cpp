// The genetic search: crossover of RA trees by subtree exchange over the same layers, the
// steady-state population of one chain, and the strategy runSearch drives it through.
#include "search/genetic.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace tilescope {

namespace {

// Per node: a hash of the set of layers under it (a sum of mixed layer ids, so the order
// does not count), how many there are, and whether a pinned node lies in its subtree.
// Children before parents (nodes are in pre-order after every edit). A match by hash is
// confirmed on the layers themselves.
struct NodeSets {
    std::vector<std::uint64_t> hash;
    std::vector<int> layers;
    std::vector<bool> pinned;
};
NodeSets nodeSets(const RATree& t) {
    const size_t n = size_t(t.size());
    NodeSets s{std::vector<std::uint64_t>(n), std::vector<int>(n), std::vector<bool>(n)};
    for (int id = t.size() - 1; id >= 0; --id) {
        const RANode& nd = t.node(id);
        const size_t i = size_t(id);
        s.pinned[i] = nd.pinned;
        if (!nd.isCut()) {
            std::uint64_t z = std::uint64_t(nd.layer) + 0x9e3779b97f4a7c15ULL; // splitmix64
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
            s.hash[i] = z ^ (z >> 31);
            s.layers[i] = 1;
        }
        for (int c : nd.children) {
            s.hash[i] += s.hash[size_t(c)];
            s.layers[i] += s.layers[size_t(c)];
            if (s.pinned[size_t(c)]) s.pinned[i] = true;
        }
    }
    return s;
}

bool sameLayers(const RATree& a, int x, const RATree& b, int y) {
    auto u = a.layersUnder(x), v = b.layersUnder(y);
    std::sort(u.begin(), u.end());
    std::sort(v.begin(), v.end());
    return u == v;
}

// The subtrees at x in a and y in b are the same (types, layers, batches, counts, order).
bool sameSubtree(const RATree& a, int x, const RATree& b, int y) {
    const RANode& m = a.node(x);
    const RANode& n = b.node(y);
    if (m.type != n.type || m.layer != n.layer || m.batch != n.batch || m.subBatch != n.subBatch ||
        m.children.size() != n.children.size())
        return false;
    for (size_t i = 0; i < m.children.size(); ++i)
        if (!sameSubtree(a, m.children[i], b, n.children[i])) return false;
    return true;
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
    const NodeSets sa = nodeSets(a), sb = nodeSets(b);
    std::vector<std::pair<std::uint64_t, int>> inB; // (layer-set hash, node of b), sorted
    for (int id = 0; id < b.size(); ++id)
        if (id != b.root && !sb.pinned[size_t(id)] && sb.layers[size_t(id)] >= 2)
            inB.emplace_back(sb.hash[size_t(id)], id);
    std::sort(inB.begin(), inB.end());
    std::vector<std::pair<int, int>> pairs; // (node of a, node of b) over the same layers
    for (int id = 0; id < a.size(); ++id) {
        if (id == a.root || a.frozen(id) || sa.pinned[size_t(id)] || sa.layers[size_t(id)] < 2)
            continue;
        const auto h = sa.hash[size_t(id)];
        auto it = std::lower_bound(inB.begin(), inB.end(), std::make_pair(h, -1));
        for (; it != inB.end() && it->first == h; ++it)
            if (sameLayers(a, id, b, it->second)) {
                if (!sameSubtree(a, id, b, it->second)) pairs.emplace_back(id, it->second);
                break; // in a tree no two nodes hold the same two or more layers
            }
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
