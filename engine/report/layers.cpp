#include "report/layers.h"

#include "mapping/iobound.h"
#include "report/node_scope.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace tilescope {

namespace {

int sharedTiles(const NodeFigures& a, const NodeFigures& b) {
    return std::max(0, std::min(a.tileBegin + a.tileCount, b.tileBegin + b.tileCount) -
                           std::max(a.tileBegin, b.tileBegin));
}

// The largest share of its output one tile of a leaf holds: its partition cuts the output
// channels, samples (of `batch` per invocation), rows and columns into ceil-sized chunks.
double largestTileShare(const NodeFigures& f, const Layer& l, int batch) {
    const auto& p = f.partitionFactors;
    auto share = [](double n, int parts) {
        return n > 0 ? std::ceil(n / std::max(1, parts)) / n : 1.0;
    };
    return share(l.outC, p[0]) * share(batch, p[1]) * share(l.outH, p[2]) * share(l.outW, p[3]);
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
        r.partition = f.partition;
        r.namedPartition = f.namedPartition;
        r.batch = n.batch;
        r.invocations = invocationsOf(tree, id);
        r.time = runTimeOf(e, tree, id);
        r.energy = runEnergyOf(e, id);
        r.dramBytes = f.runDramBytes;
        r.nocBytesIn = f.runNocInBytes;
        r.nocBytesOut = f.runNocOutBytes;
        r.nocBytesInside = f.runNocInsideBytes;
        r.movedBytes = r.dramBytes + r.nocBytesIn + r.nocBytesOut;
        if (e.layouts.active && size_t(n.layer) < e.layouts.runs.size()) {
            const auto name = [](int l) {
                return l < 0 ? std::string() : layoutName(DramLayout(l));
            };
            for (int li : e.layouts.inputs[size_t(n.layer)])
                r.inputLayouts.push_back(name(li));
            r.outputLayout = name(e.layouts.output[size_t(n.layer)]);
            r.dramRuns = e.layouts.runs[size_t(n.layer)];
            const double extra = e.layouts.extra[size_t(n.layer)];
            r.runEfficiency = r.dramBytes > 0 ? r.dramBytes / (r.dramBytes + extra) : 1.0;
        }
        // Compulsory (docs/cost-model.md §2a): weights once; an input's needed elements
        // once, less what a producer sharing tiles with the group can already hold on the
        // shared tiles (at most its largest per-tile share each); the output once when
        // the schedule stores it to DRAM or a consumer on disjoint tiles receives it.
        double c = l.weightsResident ? 0.0 : double(l.weightBytes); // kept: never loaded
        for (size_t k = 0; k < l.inputs.size(); ++k) {
            const int p = l.inputs[k].producer;
            if (l.inputs[k].resident) continue; // kept on chip: it does not move
            const bool viaDram = k >= f.inputViaDram.size() || f.inputViaDram[k];
            const double needed = neededInputElements(l, k);
            if (p < 0 || viaDram || leafOf[size_t(p)] < 0) {
                c += needed * total;
                continue;
            }
            const int pid = leafOf[size_t(p)];
            const NodeFigures& pf = e.nodes[size_t(pid)];
            const Layer& pl = net.layers[size_t(p)];
            const double inside = double(sharedTiles(pf, f)) *
                                  largestTileShare(pf, pl, tree.node(pid).batch) *
                                  double(pl.outputBytesPerSample());
            c += std::max(0.0, needed - inside) * total;
        }
        double outNeed = 0;
        if (f.writesDram || consumers[size_t(n.layer)].empty())
            outNeed = double(l.outputBytesPerSample());
        for (int q : consumers[size_t(n.layer)]) {
            if (leafOf[size_t(q)] < 0) continue;
            const NodeFigures& qf = e.nodes[size_t(leafOf[size_t(q)])];
            const Layer& ql = net.layers[size_t(q)];
            // A dense Conv / Gemm split by output channels only: every one of its tiles
            // reads all of the input, so one of them outside the group receives it whole.
            // (Ceil-sized chunks may leave the last tiles without work: more than that many
            // of its tiles must be outside.)
            const auto& qp = qf.partitionFactors;
            const bool wholeToEachTile =
                (ql.kind == LayerKind::Conv || ql.kind == LayerKind::Gemm) && ql.groups <= 1 &&
                qp[1] == 1 && qp[2] == 1 && qp[3] == 1 && ql.outC > 0;
            const int chunk = wholeToEachTile ? (ql.outC + qp[0] - 1) / qp[0] : 1;
            const int idle = wholeToEachTile ? qp[0] - (ql.outC + chunk - 1) / chunk : 0;
            const int shared = sharedTiles(qf, f); // 0: disjoint tiles, it receives it all
            // An elementwise consumer of the same shape: each of its tiles reads the input
            // box of its own output box, so its tiles inside the group can read at most
            // `shared` such boxes in place; what the tiles outside need must leave.
            const bool sameBoxes = ql.kind == LayerKind::Eltwise;
            const double boxShare =
                sameBoxes ? largestTileShare(qf, ql, tree.node(leafOf[size_t(q)]).batch) : 1.0;
            for (size_t k = 0; k < ql.inputs.size(); ++k) {
                if (ql.inputs[k].producer != n.layer) continue;
                const double needed =
                    std::min(double(l.outputBytesPerSample()), neededInputElements(ql, k));
                if (shared == 0 || (wholeToEachTile && qf.tileCount - shared > idle))
                    outNeed = std::max(outNeed, needed);
                else if (sameBoxes && ql.inputs[k].bytesPerSample == ql.outputBytesPerSample())
                    outNeed = std::max(outNeed, needed - double(shared) * boxShare * needed);
            }
        }
        c += outNeed * total;
        r.compulsoryBytes = c * db;
        r.pebbleBoundBytes = layerPebbleBound(l, total, groupMemory(hw, f.tileCount));
        // A blocked leaf streaming its input on chip (a chain member after the first, as AV
        // in the flash order) never holds that input whole in its tiles: its layer's own
        // pebble game, every operand starting outside the group, does not bound it.
        r.ioLowerBoundBytes =
            f.streamedIn ? r.compulsoryBytes : std::max(r.compulsoryBytes, r.pebbleBoundBytes);
        r.ratio = r.ioLowerBoundBytes > 0 ? r.movedBytes / r.ioLowerBoundBytes : 0.0;
        r.arrayBytes = f.runArrayBytes;
        r.arrayLowerBoundBytes = arrayLowerBoundBytes(l, n.batch, f.tileCount, hw) *
                                 (n.batch > 0 ? double(total) / n.batch : 1.0);
        r.arrayRatio = r.arrayLowerBoundBytes > 0 ? r.arrayBytes / r.arrayLowerBoundBytes : 0.0;
        r.blocks = f.blocks;
        r.blocking = f.blocking;
        r.blockingReason = f.blockingReason;
        r.blockingDramBytes = f.runBlockingDramBytes;
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
        if (!l.weightsResident) c += double(l.weightBytes); // kept on chip: never loaded
        for (size_t k = 0; k < l.inputs.size(); ++k)
            if (l.inputs[k].producer < 0 && !l.inputs[k].resident) {
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

Bytes keptWeightBytes(const Network& net, const Hardware& hw) {
    double c = 0;
    for (const Layer& l : net.layers)
        if (l.weightsResident) c += double(l.weightBytes);
    return c * hw.dataBits / 8.0;
}

} // namespace tilescope
