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
    }
    return "?";
}

std::vector<int> divisorsOf(int n) {
    std::vector<int> lo, hi;
    for (int d = 1; d * d <= n; ++d) {
        if (n % d) continue;
        lo.push_back(d);
        if (d != n / d) hi.push_back(n / d);
    }
    lo.insert(lo.end(), hi.rbegin(), hi.rend());
    return lo;
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

Result<RATree> swapLeaves(const RATree& t, const OperatorContext& ctx, Rng& rng) {
    std::vector<int> cand;
    for (int id = 0; id < t.size(); ++id) {
        const RANode& n = t.node(id);
        if (n.isCut() || n.parent < 0) continue;
        const auto& kids = t.node(n.parent).children;
        const int idx = t.childIndex(id);
        if (idx + 1 >= int(kids.size())) continue;
        const RANode& next = t.node(kids[size_t(idx) + 1]);
        if (next.isCut() || next.pinned || t.frozen(id)) continue;
        // The later leaf would run first: it must not need the earlier one.
        if (ctx.deps[size_t(next.layer)][size_t(n.layer)]) continue;
        cand.push_back(id);
    }
    if (cand.empty()) return nothing("a swap");
    return edit::swapWithNext(t, ctx.net, pick(cand, rng), ctx.deps);
}

Result<RATree> moveLeaf(const RATree& t, const OperatorContext& ctx, Rng& rng) {
    std::vector<int> leaves;
    for (int id = 0; id < t.size(); ++id)
        if (!t.node(id).isCut() && t.node(id).parent >= 0 && !t.frozen(id)) leaves.push_back(id);
    if (leaves.empty()) return nothing("a move");
    const int x = pick(leaves, rng);
    const int p = t.node(x).parent;
    const int xi = t.childIndex(x);
    struct Target {
        int cut, position;
    };
    std::vector<Target> targets;
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
            targets.push_back({g, pi + randBelow(rng, 2)});
    }
    if (targets.empty()) return nothing("a move");
    const Target tg = pick(targets, rng);
    return edit::move(t, ctx.net, x, tg.cut, tg.position);
}

Result<RATree> group(const RATree& t, const OperatorContext& ctx, Rng& rng) {
    std::vector<int> cuts;
    for (int id = 0; id < t.size(); ++id) {
        const RANode& n = t.node(id);
        // Two or more children, and for a non-root cut more than two: wrapping all the
        // children of a non-root cut only nests it, the dissolve of its parent's job.
        if (!n.isCut() || n.children.size() < 2 || t.frozen(id)) continue;
        if (id != t.root && n.children.size() < 3) continue;
        cuts.push_back(id);
    }
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
    } while (count < 2 || (count == n && c != t.root));
    NodeType type = randBelow(rng, 2) ? NodeType::S : NodeType::T;
    if (c == t.root && ctx.rule.depthOneCut) type = *ctx.rule.depthOneCut;
    const auto ds = divisorsOf(cn.batch / cn.subBatch);
    return edit::wrap(t, ctx.net, c, first, count, type, pick(ds, rng));
}

Result<RATree> dissolve(const RATree& t, const OperatorContext& ctx, Rng& rng) {
    std::vector<int> cuts;
    for (int id = 0; id < t.size(); ++id)
        if (t.node(id).isCut() && id != t.root && !t.frozen(id)) cuts.push_back(id);
    if (cuts.empty()) return nothing("a dissolve");
    return edit::dissolve(t, ctx.net, pick(cuts, rng));
}

Result<RATree> stepSubBatch(const RATree& t, const OperatorContext& ctx, Rng& rng, int dir) {
    std::vector<std::pair<int, int>> cand; // (cut, new sub-batch count)
    for (int id = 0; id < t.size(); ++id) {
        const RANode& n = t.node(id);
        if (!n.isCut() || n.batch < 2 || t.frozen(id)) continue;
        const auto ds = divisorsOf(n.batch);
        const int i = int(std::find(ds.begin(), ds.end(), n.subBatch) - ds.begin());
        const int j = i + dir;
        if (i >= int(ds.size()) || j < 0 || j >= int(ds.size())) continue;
        cand.emplace_back(id, ds[size_t(j)]);
    }
    if (cand.empty()) return nothing(dir > 0 ? "a sub-batch increase" : "a sub-batch decrease");
    const auto [cut, sb] = pick(cand, rng);
    return edit::setSubBatch(t, ctx.net, cut, sb);
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
    }
    if (r.ok())
        if (auto why = ctx.rule.check(*r)) return *why;
    return r;
}

std::optional<RATree> proposeCandidate(const RATree& t, const OperatorContext& ctx, Rng& rng,
                                       Operator* used, int maxTries) {
    for (int i = 0; i < maxTries; ++i) {
        const auto op = Operator(randBelow(rng, kOperatorCount));
        auto r = applyOperator(t, op, ctx, rng);
        if (!r.ok()) continue;
        if (used) *used = op;
        return std::move(r).value();
    }
    return std::nullopt;
}

} // namespace tilescope
