// Builds small networks in code for engine tests, independent of the importer.
#pragma once

#include "model/network.h"
#include "tree/ratree.h"

#include <QtGlobal>
#include <algorithm>
#include <vector>

namespace tilescope::test {

inline Layer conv(const std::string& name, int c, int k, int hw, int kernel, int producer,
                  Count inputBytes = 0) {
    Layer l;
    l.name = name;
    l.kind = LayerKind::Conv;
    l.op = "Conv";
    l.inC = c, l.inH = hw, l.inW = hw;
    l.outC = k, l.outH = hw, l.outW = hw;
    l.kernelH = l.kernelW = kernel;
    l.padH = l.padW = kernel - 1;
    l.weightBytes = Count(c) * k * kernel * kernel;
    LayerInput in;
    in.producer = producer;
    in.networkInput = producer < 0 ? "x" : "";
    in.bytesPerSample = inputBytes ? inputBytes : Count(c) * hw * hw;
    l.inputs.push_back(in);
    return l;
}

inline Layer add(const std::string& name, int c, int hw, int a, int b) {
    Layer l;
    l.name = name;
    l.kind = LayerKind::Eltwise;
    l.op = "Add";
    l.inC = l.outC = c;
    l.inH = l.inW = l.outH = l.outW = hw;
    for (int p : {a, b}) {
        LayerInput in;
        in.producer = p;
        in.bytesPerSample = Count(c) * hw * hw;
        l.inputs.push_back(in);
    }
    return l;
}

inline Network finish(Network n) {
    auto cons = n.consumers();
    n.outputs.clear();
    for (size_t i = 0; i < n.layers.size(); ++i)
        if (cons[i].empty()) n.outputs.push_back(n.layers[i].name);
    n.inputBytes["x"] = n.layers.front().inputs.front().bytesPerSample;
    n.paramsCount = n.totalWeightBytes();
    return n;
}

// A network of `layers` in order, finished.
inline Network network(const std::string& name, std::vector<Layer> layers) {
    Network n;
    n.name = name;
    n.layers = std::move(layers);
    return finish(std::move(n));
}

// Two identical 3x3 convolutions, 128 -> 128 channels on 28x28 (the hand-derived case).
inline Network twoConvs() {
    Network n;
    n.name = "two_convs";
    n.layers.push_back(conv("conv1", 128, 128, 28, 3, -1));
    n.layers.push_back(conv("conv2", 128, 128, 28, 3, 0));
    return finish(n);
}

// A residual chain: stem conv, then `blocks` blocks of conv-conv-add, 64 channels 28x28.
inline Network residual(int blocks) {
    Network n;
    n.name = "residual";
    n.layers.push_back(conv("stem", 64, 64, 28, 3, -1));
    int last = 0;
    for (int b = 0; b < blocks; ++b) {
        const std::string s = std::to_string(b);
        n.layers.push_back(conv("b" + s + "_c1", 64, 64, 28, 3, last));
        n.layers.push_back(conv("b" + s + "_c2", 64, 64, 28, 3, int(n.layers.size()) - 1));
        n.layers.push_back(add("b" + s + "_add", 64, 28, last, int(n.layers.size()) - 1));
        last = int(n.layers.size()) - 1;
    }
    return finish(n);
}

// Four convolutions reading the network input: every order is topological.
inline Network independent4() {
    Network n;
    n.name = "independent4";
    for (int i = 0; i < 4; ++i)
        n.layers.push_back(conv("i" + std::to_string(i), 16, 16, 8, 3, -1));
    return finish(n);
}

// Leaf orders a and b differ by exactly one transposition of neighbours.
inline bool adjacentTransposition(const std::vector<int>& a, const std::vector<int>& b) {
    if (a.size() != b.size()) return false;
    size_t i = 0;
    while (i < a.size() && a[i] == b[i])
        ++i;
    if (i + 1 >= a.size()) return false;
    if (a[i] != b[i + 1] || a[i + 1] != b[i]) return false;
    return std::equal(a.begin() + long(i) + 2, a.end(), b.begin() + long(i) + 2);
}

// Parses tree text that a test wrote by hand; a typo there is a broken test, not a case.
inline RATree parseTree(const std::string& text, const Network& net) {
    auto t = parseTreeText(text, net, "test");
    if (!t) qFatal("%s", t.error().message.c_str());
    return *t;
}

} // namespace tilescope::test
