#include "report/node_scope.h"

#include <algorithm>

namespace tilescope {

int invocationsOf(const RATree& tree, int node) {
    const int total = tree.node(tree.root).batch;
    const int batch = tree.node(node).batch;
    return batch > 0 ? std::max(1, total / batch) : 1;
}

Cycles invocationTimeOf(const Evaluation& e, int node) {
    return e.nodes[size_t(node)].time;
}

PicoJoules invocationEnergyOf(const Evaluation& e, const RATree& tree, int node) {
    return e.nodes[size_t(node)].energy / invocationsOf(tree, node);
}

Cycles runTimeOf(const Evaluation& e, const RATree& tree, int node) {
    return e.nodes[size_t(node)].time * invocationsOf(tree, node);
}

PicoJoules runEnergyOf(const Evaluation& e, int node) {
    return e.nodes[size_t(node)].energy;
}

} // namespace tilescope
