#include "search/chiplet.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

namespace tilescope {

double systolicCycles(double m, double k, double n, int w) {
    const double W = std::max(1, w);
    if (m > W || n > W) return m * k * n / (W * W) + 2 * (W - 1);
    return m + k + n - 1;
}

std::vector<ChipletNode> reduceChains(const Network& net, ChipletChains rule) {
    const auto consumers = net.consumers();
    // In-degree: the distinct layers a layer reads (network inputs are no operators).
    auto inDegree = [&](int i) {
        std::vector<int> producers;
        for (const LayerInput& in : net.layers[size_t(i)].inputs)
            if (in.producer >= 0 &&
                std::find(producers.begin(), producers.end(), in.producer) == producers.end())
                producers.push_back(in.producer);
        return producers.size();
    };
    const bool method = rule == ChipletChains::InOutOne;
    // i may join its producer's chain (as its head), and its producer may take i (as the tail).
    auto joins = [&](int i) {
        const auto& in = net.layers[size_t(i)].inputs;
        return method ? inDegree(i) == 1 && consumers[size_t(i)].size() == 1
                      : in.size() == 1 && in[0].producer >= 0;
    };
    auto takes = [&](int p) {
        return consumers[size_t(p)].size() == 1 && (method ? inDegree(p) == 1 : !net.isOutput(p));
    };
    std::vector<ChipletNode> nodes;
    std::vector<int> nodeOf(net.layers.size(), -1);
    for (int i = 0; i < int(net.layers.size()); ++i) {
        const Layer& l = net.layers[size_t(i)];
        const double work = l.macsPerSample() > 0 ? double(l.macsPerSample())
                                                  : double(std::max<Count>(1, l.opsPerSample()));
        if (joins(i)) {
            int p = -1;
            for (const LayerInput& in : l.inputs)
                p = std::max(p, in.producer); // the one producer layer
            ChipletNode& pn = nodes[size_t(nodeOf[size_t(p)])];
            if (takes(p) && pn.layers.back() == p) {
                pn.layers.push_back(i);
                pn.macs += work;
                nodeOf[size_t(i)] = nodeOf[size_t(p)];
                continue;
            }
        }
        ChipletNode n;
        n.layers = {i};
        n.macs = work;
        for (const LayerInput& in : l.inputs)
            if (in.producer >= 0)
                n.depth = std::max(n.depth, nodes[size_t(nodeOf[size_t(in.producer)])].depth + 1);
        nodeOf[size_t(i)] = int(nodes.size());
        nodes.push_back(std::move(n));
    }
    std::stable_sort(nodes.begin(), nodes.end(), [](const ChipletNode& a, const ChipletNode& b) {
        return a.depth != b.depth ? a.depth < b.depth : a.layers.front() < b.layers.front();
    });
    return nodes;
}

int chipletCount(const Hardware& hw) {
    if (hw.chiplets.count() > 1) return hw.chiplets.count();
    return std::max(1, hw.tiles() / 16);
}

double chipletLinkBytesPerCycle(const Hardware& hw) {
    return hw.chiplets.count() > 1 ? hw.chiplets.linkBytesPerCycle : hw.nocBytesPerCycle;
}

namespace {

// Costs of node ranges [a, b) of the ordered reduced graph.
class RegionCoster {
  public:
    RegionCoster(const Network& net, const Hardware& hw, const std::vector<ChipletNode>& nodes,
                 int batch, int chiplets, ChipletCost model)
        : m_net(net), m_nodes(nodes), m_consumers(net.consumers()), m_batch(std::max(1, batch)),
          m_bw(std::max(1e-9, chipletLinkBytesPerCycle(hw))) {
        m_method = model == ChipletCost::Method;
        m_npus = m_method ? std::max(1, hw.tiles() / chiplets) : 1;
        const double arrayMacs =
            m_method ? double(hw.macsPerTile) : double(hw.macsPerTile) * hw.tiles() / chiplets;
        m_width = std::max(1, int(std::lround(std::sqrt(arrayMacs))));
        m_boundaryLinks = std::sqrt(double(m_npus));
        m_pos.assign(net.layers.size(), 0);
        for (int p = 0; p < int(nodes.size()); ++p)
            for (int l : nodes[size_t(p)].layers)
                m_pos[size_t(l)] = p;
    }
    int width() const { return m_width; }
    int npus() const { return m_npus; }

    // d_v of one layer on `npus` NPUs: rows = output pixels x batch, columns = output
    // channels, reduction = MACs per output (element operations for layers without MACs);
    // the rows are divided over the NPUs, and the columns too once each NPU has one row.
    double layerCycles(int layer, double npus) const {
        const Layer& l = m_net.layers[size_t(layer)];
        const double outElems = double(l.outC) * l.outH * l.outW;
        const double work = l.macsPerSample() > 0 ? double(l.macsPerSample())
                                                  : double(std::max<Count>(1, l.opsPerSample()));
        double m = double(l.outH) * l.outW * m_batch;
        double n = double(l.outC);
        const double k = std::max(1.0, work / std::max(1.0, outElems));
        if (m >= npus) {
            m /= npus;
        } else {
            n = std::max(1.0, n * m / npus);
            m = 1;
        }
        return systolicCycles(m, k, n, m_width);
    }

    // t = C + D on c chiplets. D: per pipeline group (the nodes of one depth side by side)
    // the slowest node, each node on its work's share of the group's c x N NPUs (one
    // chiplet-sized array each under WholeChiplet). C: the tensors passed inside the region
    // cross between its chiplets, on average meanHops(c) inter-chiplet hops each, over the
    // sqrt(N) links of a chiplet boundary.
    double cost(int a, int b, int c) const {
        double D = 0;
        for (int i = a; i < b;) {
            int end = i;
            double groupWork = 0;
            for (; end < b && m_nodes[size_t(end)].depth == m_nodes[size_t(i)].depth; ++end)
                groupWork += m_nodes[size_t(end)].macs;
            double slowest = 0;
            for (int j = i; j < end; ++j) {
                const double share = m_nodes[size_t(j)].macs / std::max(1e-9, groupWork);
                const double npus = m_method ? std::max(1.0, c * m_npus * share) : 1.0;
                double t = 0;
                for (int l : m_nodes[size_t(j)].layers)
                    t += layerCycles(l, npus);
                slowest = std::max(slowest, t);
            }
            D += slowest;
            i = end;
        }
        return crossing(a, b, b, a) * m_batch * meanHops(c) / (m_bw * m_boundaryLinks) + D;
    }

    // Mean Manhattan distance between two chiplets of a k x k block (k = sqrt(c)):
    // 2 (k^2 - 1) / (3 k); 0 for one chiplet.
    static double meanHops(int c) {
        const double k = std::sqrt(double(std::max(1, c)));
        return 2 * (k * k - 1) / (3 * k);
    }

    // Bytes per sample produced in [a, i) and read in [from, b) (each producer once);
    // crossing(a, b, b, a) is what the nodes of [a, b) pass among themselves.
    double crossing(int a, int i, int b, int from = -1) const {
        if (from < 0) from = i;
        double bytes = 0;
        for (int p = a; p < i; ++p)
            for (int l : m_nodes[size_t(p)].layers)
                for (int q : m_consumers[size_t(l)])
                    if (m_pos[size_t(q)] >= from && m_pos[size_t(q)] < b && m_pos[size_t(q)] != p) {
                        bytes += double(m_net.layers[size_t(l)].outputBytesPerSample());
                        break;
                    }
        return bytes;
    }
    double transfer(int a, int i, int b) const {
        return crossing(a, i, b) * m_batch / (m_bw * m_boundaryLinks);
    }

    double compute(int a, int b) const {
        double s = 0;
        for (int p = a; p < b; ++p)
            s += m_nodes[size_t(p)].macs;
        return s;
    }

  private:
    const Network& m_net;
    const std::vector<ChipletNode>& m_nodes;
    std::vector<std::vector<int>> m_consumers;
    std::vector<int> m_pos; // layer -> node position
    int m_batch;
    double m_bw;
    int m_width = 1;
    bool m_method = true; // ChipletCost::Method
    int m_npus = 1;
    double m_boundaryLinks = 1; // links across a chiplet's side: sqrt(N)
};

struct Splitter {
    const RegionCoster& cost;
    ChipletPlan& plan;
    double minCompute; // a cut leaving less on either side is skipped

    void split(int a, int b, int c) {
        if (c > 1 && b - a >= 2) {
            const double all = cost.compute(a, b);
            int best = -1;
            double bestBytes = 0, bestBalance = 0;
            for (int i = a + 1; i < b; ++i) {
                if (plan.nodes[size_t(i)].depth == plan.nodes[size_t(i - 1)].depth) continue;
                const double left = cost.compute(a, i);
                if (left < minCompute || all - left < minCompute) continue;
                const double bytes = cost.crossing(a, i, b);
                const double balance = std::abs(left / all - 0.5);
                if (best < 0 || bytes < bestBytes || (bytes == bestBytes && balance < bestBalance))
                    best = i, bestBytes = bytes, bestBalance = balance;
            }
            if (best >= 0) {
                const double share = cost.compute(a, best) / all;
                const int c1 = std::clamp(int(std::lround(c * share)), 1, c - 1);
                ChipletSplit s;
                s.region = best;
                s.t0 = cost.cost(a, b, c);
                s.t1 = cost.cost(a, best, c1);
                s.t2 = cost.cost(best, b, c - c1);
                s.t3 = cost.transfer(a, best, b);
                if (s.t0 > s.t1 + s.t2 + s.t3) {
                    plan.splits.push_back(s);
                    split(a, best, c1);
                    split(best, b, c - c1);
                    return;
                }
            }
        }
        ChipletRegion r;
        r.first = a;
        r.last = b;
        r.chiplets = c;
        for (int i = a; i < b; ++i) {
            if (i == a || plan.nodes[size_t(i)].depth != plan.nodes[size_t(i - 1)].depth)
                r.groups.emplace_back();
            r.groups.back().push_back(i);
        }
        plan.regions.push_back(std::move(r));
    }
};

std::string batchText(int b, int sb) {
    return std::to_string(b) + "/" + std::to_string(sb);
}

void nodeText(std::string& out, const Network& net, const ChipletNode& n, int b, int depth) {
    const std::string tabs(size_t(depth), '\t');
    if (n.layers.size() == 1) {
        out += tabs + net.layers[size_t(n.layers[0])].name + " " + std::to_string(b) + "\n";
        return;
    }
    out += tabs + "T " + batchText(b, 1) + "\n";
    for (int l : n.layers)
        out += tabs + "\t" + net.layers[size_t(l)].name + " " + std::to_string(b) + "\n";
}

void groupsText(std::string& out, const Network& net, const ChipletPlan& plan,
                const ChipletRegion& r, int b, int depth, bool groupS) {
    for (const auto& g : r.groups) {
        if (g.size() == 1) {
            nodeText(out, net, plan.nodes[size_t(g[0])], b, depth);
            continue;
        }
        out += std::string(size_t(depth), '\t') + (groupS ? "S " : "T ") + batchText(b, 1) + "\n";
        for (int v : g)
            nodeText(out, net, plan.nodes[size_t(v)], b, depth + 1);
    }
}

std::string treeText(const Network& net, const ChipletPlan& plan, const std::vector<int>& tiles,
                     int B, int sb, bool groupS) {
    std::string out;
    const int b = B / sb;
    if (plan.regions.size() == 1) {
        out = "T " + batchText(B, sb) + "\n";
        groupsText(out, net, plan, plan.regions[0], b, 1, groupS);
        return out;
    }
    out = "S " + batchText(B, sb) + "\n";
    for (size_t i = 0; i < plan.regions.size(); ++i) {
        out += "\tT " + batchText(b, 1) + " tiles=" + std::to_string(tiles[i]) + "\n";
        groupsText(out, net, plan, plan.regions[i], b, 2, groupS);
    }
    return out;
}

} // namespace

std::vector<int> chipletRegionTiles(const ChipletPlan& plan, const Hardware& hw) {
    const int M = std::max(1, plan.chiplets);
    std::vector<int> out;
    int chiplet = 0;
    for (const ChipletRegion& r : plan.regions) {
        int tiles = 0;
        for (int i = 0; i < r.chiplets; ++i, ++chiplet)
            tiles += hw.tiles() / M + (chiplet < hw.tiles() % M ? 1 : 0);
        out.push_back(tiles);
    }
    return out;
}

ChipletPlan chipletPlan(const Network& net, const Hardware& hw, int totalBatch,
                        const ChipletOptions& options) {
    ChipletPlan plan;
    plan.nodes = reduceChains(net, options.chains);
    plan.chiplets = chipletCount(hw);
    const RegionCoster cost(net, hw, plan.nodes, totalBatch, plan.chiplets, options.cost);
    plan.arrayWidth = cost.width();
    plan.npus = cost.npus();
    const int n = int(plan.nodes.size());
    Splitter s{cost, plan, cost.compute(0, n) / plan.chiplets};
    s.split(0, n, plan.chiplets);
    return plan;
}

Result<RATree> chipletBaseline(const Network& net, const Hardware& hw, int totalBatch,
                               const EvalOptions& opt, ChipletPlan* planOut, Deadline deadline,
                               const ChipletOptions& options) {
    if (net.layers.empty()) return Error{"chiplet: the network has no layers"};
    const int B = std::max(1, totalBatch);
    ChipletPlan plan = chipletPlan(net, hw, B, options);
    EvalContext ctx(net, hw);
    // Tries every root sub-batch count and both group cut types; keeps the cheapest valid
    // (past the deadline, the first valid one).
    auto cheapest = [&](const ChipletPlan& p) -> std::optional<RATree> {
        const std::vector<int> tiles = chipletRegionTiles(p, hw);
        std::optional<RATree> best;
        double bestCost = std::numeric_limits<double>::infinity();
        for (int sb = 1; sb <= B; ++sb) {
            if (B % sb) continue;
            for (bool groupS : {true, false}) {
                if (best && deadline.passed()) return best;
                auto t =
                    parseTreeText(treeText(net, p, tiles, B, sb, groupS), net, "chiplet baseline");
                if (!t) continue;
                const Evaluation e = evaluate(ctx, *t, B, opt);
                if (e.valid && e.cost < bestCost) bestCost = e.cost, best = std::move(t).value();
            }
        }
        return best;
    };
    auto tree = cheapest(plan);
    if (!tree && plan.regions.size() > 1) {
        // No pipeline of these regions fits: one region over every chiplet.
        ChipletRegion whole;
        whole.first = 0;
        whole.last = int(plan.nodes.size());
        whole.chiplets = plan.chiplets;
        for (const auto& r : plan.regions)
            for (const auto& g : r.groups)
                whole.groups.push_back(g);
        plan.regions = {whole};
        plan.splits.clear();
        tree = cheapest(plan);
    }
    if (!tree)
        return Error{"chiplet: no valid tree: no sub-batch count lets the regions fit the " +
                     std::to_string(hw.bufferBytes) + "-byte buffers"};
    if (planOut) *planOut = std::move(plan);
    return std::move(tree).value();
}

} // namespace tilescope
