// The DRAM layout planner (layout_plan.h).
#include "eval/layout_plan.h"

#include "util/json.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

namespace tilescope {

std::optional<LayoutChoice> layoutChoiceFromName(const std::string& name) {
    if (name == "auto") return LayoutChoice{};
    if (auto l = layoutFromName(name)) return LayoutChoice{false, *l, {}};
    return std::nullopt;
}

std::optional<std::string> unknownLayoutPin(const LayoutChoice& c, const Network& net) {
    for (const auto& [name, layout] : c.pins)
        if (net.indexOf(name) < 0 && !net.inputBytes.count(name))
            return "no layer or network input is named '" + name + "'";
    return std::nullopt;
}

std::string layoutChoiceName(const LayoutChoice& c) {
    return c.planned ? "auto" : layoutName(c.fixed);
}

std::optional<Error> readLayoutChoice(const nlohmann::json& j, const std::string& file,
                                      const std::string& where, const char* choiceKey,
                                      const char* pinsKey, LayoutChoice& out) {
    if (j.contains(choiceKey)) {
        const nlohmann::json& v = j[choiceKey];
        const auto c = v.is_string() ? layoutChoiceFromName(v.get<std::string>()) : std::nullopt;
        if (!c)
            return makeError(file, jsonPlace(where, choiceKey),
                             "unknown layout choice " + v.dump() +
                                 " (auto, nchw, nhwc, chwn or nchwc)");
        out.planned = c->planned;
        out.fixed = c->fixed;
    }
    if (!j.contains(pinsKey)) return std::nullopt;
    const nlohmann::json& pins = j[pinsKey];
    const std::string place = jsonPlace(where, pinsKey);
    if (!pins.is_object()) return makeError(file, place, "must be an object of tensor: layout");
    for (const auto& [name, v] : pins.items()) {
        const auto l = v.is_string() ? layoutFromName(v.get<std::string>()) : std::nullopt;
        if (!l)
            return makeError(file, place + "." + name,
                             "unknown layout " + v.dump() + " (nchw, nhwc, chwn or nchwc)");
        out.pins[name] = *l;
    }
    return std::nullopt;
}

nlohmann::json layoutPinsJson(const LayoutChoice& c) {
    nlohmann::json pins = nlohmann::json::object();
    for (const auto& [name, l] : c.pins)
        pins[name] = layoutName(l);
    return pins;
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
    std::vector<std::vector<size_t>> candidates; // per tensor: its undominated options

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
        for (size_t o : candidates[size_t(order[i])]) {
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

// The options of t no other option beats: another adds no more to any entry (the time only
// grows with an entry's bytes) is at least as good, so of equal options the first is kept.
std::vector<size_t> undominated(const LayoutProblem::Tensor& t) {
    std::vector<std::map<int, double>> dense(t.adds.size());
    for (size_t o = 0; o < t.adds.size(); ++o)
        for (const auto& [e, b] : t.adds[o])
            dense[o][e] += b;
    auto noWorse = [&](size_t a, size_t b) { // a adds no more than b anywhere
        for (const auto& [e, x] : dense[a]) {
            const auto it = dense[b].find(e);
            if (x > (it == dense[b].end() ? 0.0 : it->second)) return false;
        }
        return true;
    };
    std::vector<size_t> keep;
    for (size_t o = 0; o < t.adds.size(); ++o) {
        bool beaten = false;
        for (size_t q = 0; q < t.adds.size() && !beaten; ++q)
            beaten = q != o && noWorse(q, o) && (q < o || !noWorse(o, q));
        if (!beaten) keep.push_back(o);
    }
    return keep;
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
    Search s{p, {}, {}, p.base, {}, std::vector<int>(n, 0), {}, maxNodes, {}};
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
    for (const auto& t : p.tensors)
        s.candidates.push_back(undominated(t));
    s.best.nodes = 1;
    // One entry per group: the time is linear in every tensor's bytes, so each tensor's own
    // cheapest option is the best plan.
    if (p.entriesPerGroup == 1) return s.best;
    // Tensors in the order of the first group they touch (a segment's tensors decided
    // together close its group, whose cost is then exact in the bound), those whose choice
    // matters most first within a group.
    std::vector<int> firstGroup(n, 0);
    for (size_t t = 0; t < n; ++t) {
        int first = std::numeric_limits<int>::max();
        for (const auto& adds : p.tensors[t].adds)
            for (const auto& a : adds)
                first = std::min(first, a.first / std::max(1, p.entriesPerGroup));
        firstGroup[t] = first;
    }
    s.order.resize(n);
    std::iota(s.order.begin(), s.order.end(), 0);
    std::stable_sort(s.order.begin(), s.order.end(), [&](int a, int b) {
        if (firstGroup[size_t(a)] != firstGroup[size_t(b)])
            return firstGroup[size_t(a)] < firstGroup[size_t(b)];
        return spread[size_t(a)] > spread[size_t(b)];
    });
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
