// The DRAM layout planner (layout_plan.h).
#include "eval/layout_plan.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace tilescope {

std::optional<LayoutChoice> layoutChoiceFromName(const std::string& name) {
    if (name == "auto") return LayoutChoice{};
    if (auto l = layoutFromName(name)) return LayoutChoice{false, *l, {}};
    return std::nullopt;
}

std::string layoutChoiceName(const LayoutChoice& c) {
    return c.planned ? "auto" : layoutName(c.fixed);
}

namespace {

double cyclesOf(const LayoutProblem& p, const std::vector<double>& entries) {
    const size_t per = size_t(std::max(1, p.entriesPerGroup));
    double sum = 0;
    for (size_t g = 0; g + per <= entries.size(); g += per) {
        double slowest = 0;
        for (size_t e = 0; e < per; ++e)
            slowest = std::max(slowest, entries[g + e] * p.rate[e]);
        sum += slowest;
    }
    return sum * p.scale;
}

void add(std::vector<double>& entries, const std::vector<std::pair<int, double>>& adds,
         double sign) {
    for (const auto& [e, b] : adds)
        entries[size_t(e)] += sign * b;
}

// Depth-first over the tensors in `order`; `floor[i]` holds, per entry, the least the
// tensors order[i..] can add (each entry's minimum over a tensor's options), so the cost of
// entries + floor[i] bounds every completion from below.
struct Search {
    const LayoutProblem& p;
    std::vector<int> order;
    std::vector<std::vector<double>> floor;
    std::vector<double> entries, scratch;
    std::vector<int> option;
    LayoutPlan best;
    long long maxNodes;

    bool bounded(size_t i) {
        scratch = entries;
        for (size_t e = 0; e < scratch.size(); ++e)
            scratch[e] += floor[i][e];
        return cyclesOf(p, scratch) >= best.cycles * (1 - 1e-12);
    }

    void dfs(size_t i) {
        if (best.nodes >= maxNodes) {
            best.exhaustive = false;
            return;
        }
        ++best.nodes;
        if (i == order.size()) {
            const double c = cyclesOf(p, entries);
            if (c < best.cycles * (1 - 1e-12)) best.cycles = c, best.option = option;
            return;
        }
        if (bounded(i)) return;
        const LayoutProblem::Tensor& t = p.tensors[size_t(order[i])];
        for (size_t o = 0; o < t.options.size(); ++o) {
            add(entries, t.adds[o], 1);
            option[size_t(order[i])] = int(o);
            dfs(i + 1);
            add(entries, t.adds[o], -1);
        }
    }
};

// An option's bytes weighted by their entries' rates: alone, what it adds to the time.
double weightedOf(const LayoutProblem& p, const std::vector<std::pair<int, double>>& adds) {
    const size_t per = size_t(std::max(1, p.entriesPerGroup));
    double s = 0;
    for (const auto& [e, b] : adds)
        s += b * p.rate[size_t(e) % per];
    return s;
}

} // namespace

double planCycles(const LayoutProblem& p, const std::vector<int>& option) {
    std::vector<double> entries = p.base;
    for (size_t t = 0; t < p.tensors.size(); ++t)
        add(entries, p.tensors[t].adds[size_t(option[t])], 1);
    return cyclesOf(p, entries);
}

LayoutPlan planLayouts(const LayoutProblem& p, long long maxNodes) {
    const size_t n = p.tensors.size();
    Search s{p, {}, {}, p.base, {}, std::vector<int>(n, 0), {}, maxNodes};
    // The first plan to beat: every tensor at its own cheapest option.
    std::vector<double> spread(n, 0);
    for (size_t t = 0; t < n; ++t) {
        const auto& ts = p.tensors[t];
        double lo = std::numeric_limits<double>::infinity(), hi = 0;
        for (size_t o = 0; o < ts.options.size(); ++o) {
            const double total = weightedOf(p, ts.adds[o]);
            if (total < lo) lo = total, s.option[t] = int(o);
            hi = std::max(hi, total);
        }
        spread[t] = hi - lo;
    }
    s.best.option = s.option;
    s.best.cycles = planCycles(p, s.option);
    s.best.nodes = 1;
    // One entry per group: the time is linear in every tensor's bytes, so each tensor's own
    // cheapest option is the best plan.
    if (p.entriesPerGroup == 1) return s.best;
    // Tensors whose choice matters most first, so good plans come early and bound the rest.
    s.order.resize(n);
    std::iota(s.order.begin(), s.order.end(), 0);
    std::stable_sort(s.order.begin(), s.order.end(),
                     [&](int a, int b) { return spread[size_t(a)] > spread[size_t(b)]; });
    s.floor.assign(n + 1, std::vector<double>(p.base.size(), 0.0));
    for (size_t i = n; i-- > 0;) {
        s.floor[i] = s.floor[i + 1];
        const auto& ts = p.tensors[size_t(s.order[i])];
        std::vector<double> least(p.base.size(), std::numeric_limits<double>::infinity());
        for (size_t o = 0; o < ts.options.size(); ++o) {
            std::vector<double> mine(p.base.size(), 0.0);
            add(mine, ts.adds[o], 1);
            for (size_t e = 0; e < mine.size(); ++e)
                least[e] = std::min(least[e], mine[e]);
        }
        for (size_t e = 0; e < least.size(); ++e)
            s.floor[i][e] += std::isfinite(least[e]) ? least[e] : 0.0;
    }
    s.dfs(0);
    return s.best;
}

LayoutPlan planLayoutsBruteForce(const LayoutProblem& p) {
    const size_t n = p.tensors.size();
    std::vector<int> option(n, 0);
    LayoutPlan best;
    best.cycles = std::numeric_limits<double>::infinity();
    for (;;) {
        ++best.nodes;
        const double c = planCycles(p, option);
        if (c < best.cycles) best.cycles = c, best.option = option;
        size_t t = 0;
        for (; t < n; ++t) {
            if (++option[t] < int(p.tensors[t].options.size())) break;
            option[t] = 0;
        }
        if (t == n) break;
    }
    return best;
}

} // namespace tilescope
