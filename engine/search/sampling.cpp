#include "search/sampling.h"

#include "search/operators.h"
#include "search/strategy.h"

#include <algorithm>

namespace tilescope {

Cycles dramBoundaryDelay(const Hardware& hw, Bytes dramBytes) {
    return hw.dramBytesPerCycle > 0 ? dramBytes / hw.dramBytesPerCycle : 0.0;
}

int treeDepth(const RATree& t) {
    int d = 0;
    for (int id = 0; id < t.size(); ++id)
        if (t.node(id).type == NodeType::Leaf) d = std::max(d, t.depth(id));
    return d;
}

std::vector<TreeSample> sampleTrees(const Network& net, const Hardware& hw,
                                    const SampleConfig& config,
                                    const std::function<void(int, int)>& progress,
                                    std::stop_token stop) {
    std::vector<TreeSample> out;
    EvalContext ctx(net, hw);
    EvalOptions opt;
    opt.objective = config.objective;
    opt.minUtilisation = config.minUtilisation;
    opt.layouts = config.layouts;
    auto start = layerSequentialStart(ctx, config.totalBatch, opt);
    if (!start) return out;
    const auto deps = net.transitiveDeps();
    const OperatorContext octx{net, deps, {}};
    Rng rng(config.seed);
    RATree current = std::move(start).value();
    auto record = [&](const RATree& t, const Evaluation& e) {
        TreeSample s;
        s.tree = t;
        s.energy = e.energy.total();
        s.delay = e.delay;
        s.dramBytes = e.dramBytes;
        s.dramEnergy = e.energy.dram;
        s.dramTimeRatio = e.delay > 0 ? dramBoundaryDelay(hw, e.dramBytes) / e.delay : 0.0;
        s.depth = treeDepth(t);
        out.push_back(std::move(s));
        if (progress) progress(int(out.size()), config.count);
    };
    Evaluation first = evaluate(ctx, current, config.totalBatch, opt);
    if (!first.valid) return out;
    record(current, first);
    // Every valid candidate is a sample and the walk goes on from it; a walk stuck on
    // invalid candidates starts again from the first tree.
    int misses = 0;
    while (int(out.size()) < config.count && !stop.stop_requested()) {
        auto cand = proposeCandidate(current, octx, rng);
        if (cand) {
            Evaluation e = evaluate(ctx, *cand, config.totalBatch, opt);
            if (e.valid) {
                current = std::move(*cand);
                record(current, e);
                misses = 0;
                continue;
            }
        }
        if (++misses > 200) current = out.front().tree, misses = 0;
    }
    return out;
}

} // namespace tilescope
