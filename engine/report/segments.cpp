#include "report/segments.h"

#include <algorithm>

namespace tilescope {

std::vector<SegmentFigures> segmentFigures(const Evaluation& e, const RATree& tree,
                                           const Network& net) {
    std::vector<SegmentFigures> out;
    if (tree.empty() || e.nodes.size() != size_t(tree.size())) return out;
    const int total = tree.node(tree.root).batch;
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
        s.invocations = n.batch > 0 ? std::max(1, total / n.batch) : 1;
        s.timePerInvocation = f.time;
        s.time = f.time * s.invocations;
        s.energy = f.energy * s.invocations;
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
