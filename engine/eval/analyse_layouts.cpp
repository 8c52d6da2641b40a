// The analyser's DRAM layout phase (docs/cost-model.md §4b): for a template with a run
// model, every feature map stored to or read from DRAM takes a layout (planned, one for all,
// or pinned), and each leaf's traffic is charged its runs' cost in that layout.
#include "eval/analyser.h"

#include <algorithm>

namespace tilescope {

namespace {

constexpr long long kPlanNodes = 20000;

// Tensor ids: a layer's output is its index, a network input comes after the layers in the
// order of Network::inputBytes.
int inputTensor(const Network& net, const LayerInput& in) {
    if (in.producer >= 0) return in.producer;
    const auto it = net.inputBytes.find(in.networkInput);
    return int(net.layers.size()) +
           (it == net.inputBytes.end() ? 0 : int(std::distance(net.inputBytes.begin(), it)));
}

// Each DRAM tensor leaf l reads (input k) or stores (k = -1) with the runs its traffic
// counted for it in every layout: f(tensor, k, runs).
template <class F>
void forEachDramTensor(const Network& net, const std::vector<char>& viaDram, bool stores, int l,
                       const LeafTraffic& t, F&& f) {
    const auto& ins = net.layers[size_t(l)].inputs;
    for (size_t k = 0; k < ins.size(); ++k)
        if (viaDram[k] && !ins[k].resident && k < t.inRuns.size())
            f(inputTensor(net, ins[k]), int(k), t.inRuns[k]);
    if (stores) f(l, -1, t.outRuns);
}

std::string tensorName(const Network& net, int t) {
    if (t < int(net.layers.size())) return net.layers[size_t(t)].name;
    auto it = net.inputBytes.begin();
    std::advance(it, t - int(net.layers.size()));
    return it->first;
}

} // namespace

void Analyser::dramLayouts() {
    ev.layouts = {};
    if (!mesh.dramRuns().active()) return;
    const int tensorCount = layerCount + int(net.inputBytes.size());
    const TransferGeometry& geo = ctx.geo;
    // A tensor may take any layout when every reader sees it in its producer's shape;
    // through a reshape its order is NCHW's by definition.
    std::vector<char> free(size_t(tensorCount), 1), used(size_t(tensorCount), 0);
    std::vector<std::vector<std::pair<int, double>>> add(size_t(tensorCount) * kLayoutCount);
    const size_t segCount = analysis.segments.size();
    // Per segment the DRAM's total, then where each side has a controller of its own the
    // four sides (otherwise the time is linear in each tensor's bytes).
    const bool sides = hw.dramPortBytesPerCycle > 0;
    const int kEntries = sides ? 5 : 1;
    LayoutProblem p;
    p.entriesPerGroup = kEntries;
    p.base.assign(segCount * size_t(kEntries), 0.0);
    p.rate.assign(size_t(kEntries), sides ? 1 / hw.dramPortBytesPerCycle : 0.0);
    p.rate[0] = 1 / hw.dramBytesPerCycle;
    p.scale = analysis.segInvocations;
    for (int l = 0; l < layerCount; ++l) {
        const LeafTraffic& t = *work[size_t(leafNode[size_t(l)])].leaf.traffic;
        const int seg = work[size_t(leafNode[size_t(l)])].segment;
        p.base[size_t(seg * kEntries)] +=
            t.actDram + t.weightDram + t.weightExtra + t.streamedExtra;
        for (int d = 0; sides && d < 4; ++d)
            p.base[size_t(seg * kEntries + 1 + d)] +=
                t.actSide[size_t(d)] + t.weightSide[size_t(d)] + t.weightSideExtra[size_t(d)] +
                t.streamedSideExtra[size_t(d)];
        const auto& ins = net.layers[size_t(l)].inputs;
        for (size_t k = 0; k < ins.size(); ++k)
            if (ins[k].producer >= 0 && !geo.input(l, k).sameAsProducer)
                free[size_t(ins[k].producer)] = 0;
        forEachDramTensor(
            net, inputViaDram[size_t(l)], writesDram[size_t(l)] != 0, l, t,
            [&](int tensor, int, const LeafTraffic::LayoutRuns& r) {
                used[size_t(tensor)] = 1;
                for (int o = 0; o < kLayoutCount; ++o) {
                    auto& a = add[size_t(tensor) * kLayoutCount + size_t(o)];
                    a.push_back({seg * kEntries, r.extra[size_t(o)]});
                    for (int d = 0; sides && d < 4; ++d)
                        a.push_back({seg * kEntries + 1 + d, r.side[size_t(o)][size_t(d)]});
                }
            });
    }
    // The tensors in DRAM and their options.
    std::vector<int> ids;
    for (int t = 0; t < tensorCount; ++t) {
        if (!used[size_t(t)]) continue;
        ids.push_back(t);
        LayoutProblem::Tensor ts;
        const auto pin = opt.layouts.pins.find(tensorName(net, t));
        if (!free[size_t(t)]) // read through a reshape: NCHW, pinned or not
            ts.options = {DramLayout::Nchw};
        else if (pin != opt.layouts.pins.end())
            ts.options = {pin->second};
        else if (!opt.layouts.planned)
            ts.options = {opt.layouts.fixed};
        else
            ts.options.assign(kLayouts.begin(), kLayouts.end());
        for (DramLayout o : ts.options)
            ts.adds.push_back(add[size_t(t) * kLayoutCount + size_t(o)]);
        p.tensors.push_back(std::move(ts));
    }
    // Bounded so an evaluation inside the search stays cheap; the best plan found is kept
    // (Evaluation::Layouts::planExhaustive says whether it is proven best).
    const LayoutPlan plan = planLayouts(p, kPlanNodes);
    std::vector<int> layoutOf(size_t(tensorCount), -1);
    for (size_t i = 0; i < ids.size(); ++i)
        layoutOf[size_t(ids[i])] = int(p.tensors[i].options[size_t(plan.option[i])]);
    ev.layouts.active = true;
    ev.layouts.choice = opt.layouts;
    ev.layouts.planCycles = plan.cycles;
    ev.layouts.planNodes = plan.nodes;
    ev.layouts.planExhaustive = plan.exhaustive;
    // Each single layout for every tensor that may take it (the rest as they must be); for
    // the report only.
    for (DramLayout l : kLayouts) {
        if (!opt.detail) break;
        LayoutProblem q = p;
        for (size_t i = 0; i < ids.size(); ++i) {
            const DramLayout own = free[size_t(ids[i])] ? l : p.tensors[i].options.front();
            q.tensors[i].options = {own};
            q.tensors[i].adds = {add[size_t(ids[i]) * kLayoutCount + size_t(own)]};
        }
        ev.layouts.fixedCycles[size_t(l)] = planCycles(q, std::vector<int>(ids.size(), 0));
    }
    // Each leaf's traffic with its tensors' runs charged.
    ctx.plannedTraffic.resize(size_t(layerCount));
    ev.layouts.output.assign(size_t(layerCount), -1);
    ev.layouts.inputs.assign(size_t(layerCount), {});
    ev.layouts.runs.assign(size_t(layerCount), 0.0);
    ev.layouts.extra.assign(size_t(layerCount), 0.0);
    for (int l = 0; l < layerCount; ++l) {
        LeafWork& leaf = work[size_t(leafNode[size_t(l)])].leaf;
        LeafTraffic& t = ctx.plannedTraffic[size_t(l)];
        t = *leaf.traffic;
        t.runsCharged = true;
        t.actDramBytes = t.actDram;
        t.weightDramBytes = t.weightDram;
        double runs = t.weightRuns + t.streamedRuns;
        ev.layouts.inputs[size_t(l)].assign(net.layers[size_t(l)].inputs.size(), -1);
        forEachDramTensor(net, inputViaDram[size_t(l)], writesDram[size_t(l)] != 0, l, t,
                          [&](int tensor, int k, const LeafTraffic::LayoutRuns& r) {
                              const int layout = layoutOf[size_t(tensor)];
                              (k < 0 ? ev.layouts.output[size_t(l)]
                                     : ev.layouts.inputs[size_t(l)][size_t(k)]) = layout;
                              t.actDram += r.extra[size_t(layout)];
                              if (k < 0) t.actDramOut += r.extra[size_t(layout)];
                              for (size_t d = 0; d < 4; ++d)
                                  t.actSide[d] += r.side[size_t(layout)][d];
                              runs += r.runs[size_t(layout)];
                          });
        t.actDram += t.streamedExtra;
        t.weightDram += t.weightExtra;
        for (size_t d = 0; d < 4; ++d) {
            t.actSide[d] += t.streamedSideExtra[d];
            t.weightSide[d] += t.weightSideExtra[d];
        }
        ev.layouts.runs[size_t(l)] = runs * analysis.segInvocations;
        ev.layouts.extra[size_t(l)] =
            (t.actDram + t.weightDram - t.actDramBytes - t.weightDramBytes) *
            analysis.segInvocations;
        leaf.traffic = &t;
    }
}

} // namespace tilescope
