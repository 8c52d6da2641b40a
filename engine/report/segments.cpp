#include "report/segments.h"

#include "report/node_scope.h"

namespace tilescope {

std::vector<SegmentFigures> segmentFigures(const Evaluation& e, const RATree& tree,
                                           const Network& net) {
    std::vector<SegmentFigures> out;
    if (tree.empty() || e.nodes.size() != size_t(tree.size())) return out;
    // The root's children are the evaluator's segments when it is a T cut.
    const bool chained = tree.node(tree.root).type == NodeType::T &&
                         e.segmentShare.size() == tree.node(tree.root).children.size();
    for (int c : tree.node(tree.root).children) {
        const RANode& n = tree.node(c);
        const NodeFigures& f = e.nodes[size_t(c)];
        const auto layers = tree.layersUnder(c);
        SegmentFigures s;
        s.node = c;
        s.path = tree.pathOf(c);
        s.type = n.type;
        if (!layers.empty()) {
            s.firstLayer = net.layers[size_t(layers.front())].name;
            s.lastLayer = net.layers[size_t(layers.back())].name;
        }
        s.layers = layers.size();
        // The node's figures in their scopes (report/node_scope.h): Evaluation::nodes holds
        // the energy of the whole run already, the time and DRAM bytes of one invocation.
        s.invocations = invocationsOf(tree, c);
        s.timePerInvocation = invocationTimeOf(e, c);
        s.time = runTimeOf(e, tree, c);
        s.energy = runEnergyOf(e, c);
        s.dramBytes = f.dramBytes * s.invocations;
        s.bound = f.bound;
        const size_t i = out.size();
        s.start = chained ? e.segmentStart[i] : 0.0;
        s.share = chained ? e.segmentShare[i] : s.time;
        out.push_back(std::move(s));
    }
    return out;
}

} // namespace tilescope
