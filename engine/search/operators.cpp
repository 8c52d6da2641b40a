#include "search/operators.h"

#include <algorithm>

namespace tilescope {

const char* toString(Operator op) {
    switch (op) {
    case Operator::SwapLeaves:
        return "swap";
    case Operator::MoveLeaf:
        return "move";
    case Operator::Group:
        return "group";
    case Operator::Dissolve:
        return "dissolve";
    case Operator::IncreaseSubBatch:
        return "sub-batch+";
    case Operator::DecreaseSubBatch:
        return "sub-batch-";
    case Operator::Repartition:
        return "partition";
    }
    return "?";
}

namespace {
// f(d) for every divisor d of n > 0, ascending, without a list.
template <class F> void forEachDivisor(int n, F f) {
    int d = 1;
    for (; d * d <= n; ++d)
        if (n % d == 0) f(d);
    for (--d; d >= 1; --d)
        if (n % d == 0 && d != n / d) f(n / d);
}
} // namespace

std::vector<int> divisorsOf(int n) {
    std::vector<int> out;
    forEachDivisor(n, [&](int d) { out.push_back(d); });
    return out;
}

std::optional<Error> SpaceRule::check(const RATree& t) const {
    if (!depthOneCut || t.empty()) return std::nullopt;
    for (int c : t.node(t.root).children) {
        const RANode& n = t.node(c);
        if (n.isCut() && n.type != *depthOneCut)
            return Error{"node " + t.pathOf(c) + " is a depth-one " + toString(n.type) +
                         " cut; this space allows only " + toString(*depthOneCut) + " cuts there"};
    }
    if (maxDepth <= 0) return std::nullopt;
    std::vector<std::pair<int, int>> stack{{t.root, 0}}; // (node, depth)
    while (!stack.empty()) {
        const auto [id, depth] = stack.back();
        stack.pop_back();
        if (depth > maxDepth)
            return Error{"node " + t.pathOf(id) + " is at depth " + std::to_string(depth) +
                         "; this space goes " + std::to_string(maxDepth) +
                         " levels deep (a depth-one cut holds layers only)"};
        for (int c : t.node(id).children)
            stack.push_back({c, depth + 1});
    }
    return std::nullopt;
}

namespace {

template <class T> const T& pick(const std::vector<T>& v, Rng& rng) {
    return v[size_t(randBelow(rng, int(v.size())))];
}

Error nothing(const char* what) {
    return Error{std::string("no place to apply ") + what};
}

// Operator 1's places: a leaf whose next leaf in the whole leaf order (a sibling or across
// a cut boundary) may run before it: neither frozen, the later not needing the earlier.
std::vector<int> swapPlaces(const RATree& t, const OperatorContext& ctx) {
    std::vector<int> cand;
    const auto leaves = t.leafNodesInOrder(); // the whole leaf order, across cut boundaries
    for (size_t i = 0; i + 1 < leaves.size(); ++i) {
        const int a = leaves[i], b = leaves[i + 1];
        if (t.frozen(a) || t.frozen(b)) continue;
        if (ctx.deps[size_t(t.node(b).layer)][size_t(t.node(a).layer)]) continue;
        cand.push_back(a);
    }
    return cand;
}

Result<RATree> swapLeaves(const RATree& t, const OperatorContext& ctx, Rng& rng) {
    const auto cand = swapPlaces(t, ctx);
    if (cand.empty()) return nothing("a swap");
    return edit::swapWithNextLeaf(t, ctx.net, pick(cand, rng), ctx.deps);
}

// Operator 2's candidates: the leaves it may move.
std::vector<int> movableLeaves(const RATree& t) {
    std::vector<int> leaves;
    for (int id = 0; id < t.size(); ++id)
        if (!t.node(id).isCut() && t.node(id).parent >= 0 && !t.frozen(id)) leaves.push_back(id);
    return leaves;
}

// Operator 7's places: every leaf not frozen (a lone leaf at the root too).
std::vector<int> partitionableLeaves(const RATree& t) {
    std::vector<int> leaves;
    for (int id = 0; id < t.size(); ++id)
        if (!t.node(id).isCut() && !t.frozen(id)) leaves.push_back(id);
    return leaves;
}

// The partitions leaf x may change to: its alternatives but the one it runs (the mapper's
// choice where it names none of them); the mapper's choice is named by no factors.
void otherPartitions(const RATree& t, const OperatorContext& ctx, int x,
                     std::vector<PartitionFactors>& out) {
    out.clear();
    if (!ctx.partitionsOf) return;
    ctx.partitionsOf(x, out);
    if (out.empty()) return;
    const size_t runs =
        size_t(std::find(out.begin() + 1, out.end(), t.node(x).partition) - out.begin());
    out[0] = PartitionFactors{};
    out.erase(out.begin() + std::ptrdiff_t(runs < out.size() ? runs : 0));
}

// Operator 7: a random leaf takes another of its alternative partitions, any of the
// others alike.
Result<RATree> repartition(const RATree& t, const OperatorContext& ctx, Rng& rng) {
    if (!ctx.partitionsOf) return nothing("a partition change (partitions do not move)");
    const auto leaves = partitionableLeaves(t);
    if (leaves.empty()) return nothing("a partition change");
    const int x = pick(leaves, rng);
    thread_local std::vector<PartitionFactors> others;
    otherPartitions(t, ctx, x, others);
    if (others.empty()) return nothing("a partition change (the leaf has one partition)");
    return edit::setPartition(t, x, pick(others, rng));
}

// Where operator 2 may move leaf x: a cut at the position given, or, with `eitherSide`, at
// that position or the next (out to the grandparent from the middle of its parent).
struct MoveTarget {
    int cut, position;
    bool eitherSide = false;
};
std::vector<MoveTarget> moveTargets(const RATree& t, int x) {
    const int p = t.node(x).parent;
    const int xi = t.childIndex(x);
    std::vector<MoveTarget> targets;
    // A sibling cut: join at the end facing x, so the leaf order is unchanged when the
    // cut is adjacent (and only independent leaves are jumped over otherwise).
    const auto& sib = t.node(p).children;
    for (int i = 0; i < int(sib.size()); ++i) {
        const int c = sib[size_t(i)];
        if (c == x || !t.node(c).isCut() || t.frozen(c)) continue;
        targets.push_back({c, i > xi ? 0 : int(t.node(c).children.size())});
    }
    if (const int g = t.node(p).parent; g >= 0) {
        const int pi = t.childIndex(p);
        const auto& uncles = t.node(g).children;
        for (int i = 0; i < int(uncles.size()); ++i) {
            const int c = uncles[size_t(i)];
            if (c == p || !t.node(c).isCut() || t.frozen(c)) continue;
            targets.push_back({c, i > pi ? 0 : int(t.node(c).children.size())});
        }
        // Out to the grandparent, just before or after the parent: the first child
        // leaves to the front, the last to the back, a middle one either way.
        const int n = int(sib.size());
        if (xi == 0)
            targets.push_back({g, pi});
        else if (xi == n - 1)
            targets.push_back({g, pi + 1});
        else
            targets.push_back({g, pi, true});
    }
    return targets;
}

Result<RATree> moveLeaf(const RATree& t, const OperatorContext& ctx, Rng& rng) {
    const auto leaves = movableLeaves(t);
    if (leaves.empty()) return nothing("a move");
    const int x = pick(leaves, rng);
    const auto targets = moveTargets(t, x);
    if (targets.empty()) return nothing("a move");
    const MoveTarget tg = pick(targets, rng);
    return edit::move(t, ctx.net, x, tg.cut, tg.position + (tg.eitherSide ? randBelow(rng, 2) : 0));
}

// Operator 3's cuts: two or more children, and for a non-root cut more than two: wrapping
// all the children of a non-root cut only nests it, the dissolve of its parent's job.
std::vector<int> groupableCuts(const RATree& t) {
    std::vector<int> cuts;
    for (int id = 0; id < t.size(); ++id) {
        const RANode& n = t.node(id);
        if (!n.isCut() || n.children.size() < 2 || t.frozen(id)) continue;
        if (id != t.root && n.children.size() < 3) continue;
        cuts.push_back(id);
    }
    return cuts;
}

// Whether operator 3 may wrap `count` children of cut c (all of them only at the root).
bool groupableRun(const RATree& t, int c, int count) {
    return count >= 2 && (count < int(t.node(c).children.size()) || c == t.root);
}

// The types operator 3 may give a new cut under c: the space's at its root, else both.
std::vector<NodeType> groupTypes(const RATree& t, const OperatorContext& ctx, int c) {
    if (c == t.root && ctx.rule.depthOneCut) return {*ctx.rule.depthOneCut};
    return {NodeType::S, NodeType::T};
}

Result<RATree> group(const RATree& t, const OperatorContext& ctx, Rng& rng) {
    const auto cuts = groupableCuts(t);
    if (cuts.empty()) return nothing("a group");
    const int c = pick(cuts, rng);
    const RANode& cn = t.node(c);
    const int n = int(cn.children.size());
    int first, count;
    do {
        int a = randBelow(rng, n), b = randBelow(rng, n);
        if (a > b) std::swap(a, b);
        first = a;
        count = b - a + 1;
    } while (!groupableRun(t, c, count));
    NodeType type = randBelow(rng, 2) ? NodeType::S : NodeType::T;
    if (c == t.root && ctx.rule.depthOneCut) type = *ctx.rule.depthOneCut;
    const auto ds = divisorsOf(cn.batch / cn.subBatch);
    return edit::wrap(t, ctx.net, c, first, count, type, pick(ds, rng));
}

// Operator 4's cuts: every non-root cut not frozen.
std::vector<int> dissolvableCuts(const RATree& t) {
    std::vector<int> cuts;
    for (int id = 0; id < t.size(); ++id)
        if (t.node(id).isCut() && id != t.root && !t.frozen(id)) cuts.push_back(id);
    return cuts;
}

Result<RATree> dissolve(const RATree& t, const OperatorContext& ctx, Rng& rng) {
    const auto cuts = dissolvableCuts(t);
    if (cuts.empty()) return nothing("a dissolve");
    return edit::dissolve(t, ctx.net, pick(cuts, rng));
}

// The sub-batch counts node id can take, larger (dir > 0) or smaller than its own: the
// divisors of its batch beyond its own, ascending, each given to f(k, count) with k its
// index among them (none for a leaf, a batch of 1 or a frozen cut). Returns how many.
template <class F> int subBatchCounts(const RATree& t, int id, int dir, F f) {
    const RANode& n = t.node(id);
    if (!n.isCut() || n.batch < 2 || t.frozen(id)) return 0;
    int k = 0;
    forEachDivisor(n.batch, [&](int d) {
        if (dir > 0 ? d > n.subBatch : d < n.subBatch) f(k++, d);
    });
    return k;
}

// Operators 5 and 6's places: each cut that can take a larger (dir > 0) or smaller
// sub-batch count, with the counts it can take (subBatchCounts).
std::vector<std::pair<int, std::vector<int>>> subBatchPlaces(const RATree& t, int dir) {
    std::vector<std::pair<int, std::vector<int>>> cand;
    for (int id = 0; id < t.size(); ++id) {
        std::vector<int> counts;
        subBatchCounts(t, id, dir, [&](int, int d) { counts.push_back(d); });
        if (!counts.empty()) cand.emplace_back(id, std::move(counts));
    }
    return cand;
}

// A random cut, then a random larger (smaller) count: the method's operators 5 and 6 jump
// to any count, not only to the next divisor, so one step can go from 1 to the whole batch.
// The draws of a pick among subBatchPlaces, whose lists are not built (every move of the
// search proposes one): the places and how many counts each can take, in reused scratch.
Result<RATree> stepSubBatch(const RATree& t, const OperatorContext& ctx, Rng& rng, int dir) {
    thread_local std::vector<std::pair<int, int>> places; // (cut, counts it can take)
    places.clear();
    for (int id = 0; id < t.size(); ++id)
        if (const int k = subBatchCounts(t, id, dir, [](int, int) {})) places.emplace_back(id, k);
    if (places.empty()) return nothing(dir > 0 ? "a sub-batch increase" : "a sub-batch decrease");
    const auto [cut, counts] = pick(places, rng);
    const int which = randBelow(rng, counts);
    int count = 0;
    subBatchCounts(t, cut, dir, [&](int k, int d) {
        if (k == which) count = d;
    });
    return edit::setSubBatch(t, ctx.net, cut, count);
}

} // namespace

Result<RATree> applyOperator(const RATree& t, Operator op, const OperatorContext& ctx, Rng& rng) {
    Result<RATree> r = Error{"unknown operator"};
    switch (op) {
    case Operator::SwapLeaves:
        r = swapLeaves(t, ctx, rng);
        break;
    case Operator::MoveLeaf:
        r = moveLeaf(t, ctx, rng);
        break;
    case Operator::Group:
        r = group(t, ctx, rng);
        break;
    case Operator::Dissolve:
        r = dissolve(t, ctx, rng);
        break;
    case Operator::IncreaseSubBatch:
        r = stepSubBatch(t, ctx, rng, +1);
        break;
    case Operator::DecreaseSubBatch:
        r = stepSubBatch(t, ctx, rng, -1);
        break;
    case Operator::Repartition:
        r = repartition(t, ctx, rng);
        break;
    }
    if (r.ok())
        if (auto why = ctx.rule.check(*r)) return *why;
    return r;
}

std::vector<RATree> neighbours(const RATree& t, Operator op, const OperatorContext& ctx) {
    std::vector<RATree> out;
    auto keep = [&](Result<RATree> r) {
        if (r.ok() && !ctx.rule.check(*r)) out.push_back(std::move(r).value());
    };
    switch (op) {
    case Operator::SwapLeaves:
        for (int a : swapPlaces(t, ctx))
            keep(edit::swapWithNextLeaf(t, ctx.net, a, ctx.deps));
        break;
    case Operator::MoveLeaf:
        for (int x : movableLeaves(t))
            for (const MoveTarget& tg : moveTargets(t, x))
                for (int side = 0; side <= (tg.eitherSide ? 1 : 0); ++side)
                    keep(edit::move(t, ctx.net, x, tg.cut, tg.position + side));
        break;
    case Operator::Group:
        for (int c : groupableCuts(t)) {
            const RANode& cn = t.node(c);
            const int n = int(cn.children.size());
            for (int first = 0; first < n; ++first)
                for (int count = 2; first + count <= n; ++count) {
                    if (!groupableRun(t, c, count)) continue;
                    for (NodeType type : groupTypes(t, ctx, c))
                        for (int sb : divisorsOf(cn.batch / cn.subBatch))
                            keep(edit::wrap(t, ctx.net, c, first, count, type, sb));
                }
        }
        break;
    case Operator::Dissolve:
        for (int id : dissolvableCuts(t))
            keep(edit::dissolve(t, ctx.net, id));
        break;
    case Operator::IncreaseSubBatch:
    case Operator::DecreaseSubBatch:
        for (const auto& [cut, counts] :
             subBatchPlaces(t, op == Operator::IncreaseSubBatch ? +1 : -1))
            for (int sb : counts)
                keep(edit::setSubBatch(t, ctx.net, cut, sb));
        break;
    case Operator::Repartition: {
        std::vector<PartitionFactors> others;
        for (int x : partitionableLeaves(t)) {
            otherPartitions(t, ctx, x, others);
            for (const PartitionFactors& p : others)
                keep(edit::setPartition(t, x, p));
        }
        break;
    }
    }
    return out;
}

std::optional<RATree> proposeCandidate(const RATree& t, const OperatorContext& ctx, Rng& rng,
                                       Operator* used, int maxTries) {
    for (int i = 0; i < maxTries; ++i) {
        const auto op = Operator(randBelow(rng, ctx.operatorCount()));
        auto r = applyOperator(t, op, ctx, rng);
        if (!r.ok()) continue;
        if (used) *used = op;
        return std::move(r).value();
    }
    return std::nullopt;
}

} // namespace tilescope
