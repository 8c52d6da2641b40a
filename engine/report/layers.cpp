#include "report/layers.h"

#include "mapping/iobound.h"

#include <algorithm>
#include <map>

namespace tilescope {

namespace {

bool disjoint(const NodeFigures& a, const NodeFigures& b) {
    return a.tileBegin + a.tileCount <= b.tileBegin || b.tileBegin + b.tileCount <= a.tileBegin;
}

} // namespace

std::vector<LayerFigures> layerFigures(const Evaluation& e, const RATree& tree, const Network& net,
                                       const Hardware& hw) {
    std::vector<LayerFigures> out;
    if (tree.empty() || !e.valid || e.nodes.size() != size_t(tree.size())) return out;
    const int total = tree.node(tree.root).batch;
    const double db = hw.dataBits / 8.0;
    std::vector<int> leafOf(net.layers.size(), -1);
    for (int id = 0; id < tree.size(); ++id)
        if (tree.node(id).type == NodeType::Leaf && tree.node(id).layer >= 0)
            leafOf[size_t(tree.node(id).layer)] = id;
    const auto consumers = net.consumers();
    for (int layer : tree.leavesInOrder()) {
        const int id = leafOf[size_t(layer)];
        if (id < 0) continue;
        const RANode& n = tree.node(id);
        const NodeFigures& f = e.nodes[size_t(id)];
        const Layer& l = net.layers[size_t(n.layer)];
        LayerFigures r;
        r.node = id;
        r.layer = n.layer;
        r.name = l.name;
        r.tiles = f.tileCount;
        r.batch = n.batch;
        r.invocations = n.batch > 0 ? std::max(1, total / n.batch) : 1;
        r.time = f.time * r.invocations;
        r.energy = f.energy;
        r.dramBytes = f.runDramBytes;
        r.nocBytesIn = f.runNocInBytes;
        r.nocBytesOut = f.runNocOutBytes;
        r.nocBytesInside = f.runNocInsideBytes;
        r.movedBytes = r.dramBytes + r.nocBytesIn + r.nocBytesOut;
        // Compulsory (docs/cost-model.md §2a): weights once; an input's needed elements
        // once unless the schedule hands it over on chip (over the NoC from a producer
        // sharing tiles with the group, which may keep it in place); the output once when
        // the schedule stores it to DRAM or a consumer on disjoint tiles receives it.
        double c = double(l.weightBytes);
        for (size_t k = 0; k < l.inputs.size(); ++k) {
            const int p = l.inputs[k].producer;
            const bool viaDram = k >= f.inputViaDram.size() || f.inputViaDram[k];
            if (p < 0 || viaDram || leafOf[size_t(p)] < 0 ||
                disjoint(e.nodes[size_t(leafOf[size_t(p)])], f))
                c += neededInputElements(l, k) * total;
        }
        double outNeed = 0;
        if (f.writesDram || consumers[size_t(n.layer)].empty())
            outNeed = double(l.outputBytesPerSample());
        for (int q : consumers[size_t(n.layer)]) {
            if (leafOf[size_t(q)] < 0 || !disjoint(e.nodes[size_t(leafOf[size_t(q)])], f)) continue;
            const Layer& ql = net.layers[size_t(q)];
            for (size_t k = 0; k < ql.inputs.size(); ++k)
                if (ql.inputs[k].producer == n.layer)
                    outNeed = std::max(outNeed, std::min(double(l.outputBytesPerSample()),
                                                         neededInputElements(ql, k)));
        }
        c += outNeed * total;
        r.compulsoryBytes = c * db;
        r.pebbleBoundBytes = layerPebbleBound(l, total, groupMemory(hw, f.tileCount));
        r.ioLowerBoundBytes = std::max(r.compulsoryBytes, r.pebbleBoundBytes);
        r.ratio = r.ioLowerBoundBytes > 0 ? r.movedBytes / r.ioLowerBoundBytes : 0.0;
        out.push_back(std::move(r));
    }
    return out;
}

Bytes compulsoryDramBytes(const Network& net, const Hardware& hw, int totalBatch) {
    double c = 0;
    std::map<std::string, double> inputs; // network input -> most elements one layer needs
    const auto consumers = net.consumers();
    for (size_t i = 0; i < net.layers.size(); ++i) {
        const Layer& l = net.layers[i];
        c += double(l.weightBytes);
        for (size_t k = 0; k < l.inputs.size(); ++k)
            if (l.inputs[k].producer < 0) {
                double& v = inputs[l.inputs[k].networkInput];
                v = std::max(v, neededInputElements(l, k));
            }
        if (net.isOutput(int(i)) || consumers[i].empty())
            c += double(l.outputBytesPerSample()) * totalBatch;
    }
    for (const auto& [name, v] : inputs)
        c += v * totalBatch;
    return c * hw.dataBits / 8.0;
}

} // namespace tilescope
