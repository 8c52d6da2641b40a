#include "model/network.h"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace tilescope {

const char* toString(LayerKind k) {
    switch (k) {
    case LayerKind::Conv:
        return "conv";
    case LayerKind::Gemm:
        return "gemm";
    case LayerKind::MatMul:
        return "matmul";
    case LayerKind::Pool:
        return "pool";
    case LayerKind::Eltwise:
        return "eltwise";
    case LayerKind::Vector:
        return "vector";
    }
    return "?";
}

bool parseLayerKind(const std::string& s, LayerKind& out) {
    for (LayerKind k : {LayerKind::Conv, LayerKind::Gemm, LayerKind::MatMul, LayerKind::Pool,
                        LayerKind::Eltwise, LayerKind::Vector}) {
        if (s == toString(k)) {
            out = k;
            return true;
        }
    }
    return false;
}

Count Layer::macsPerSample() const {
    switch (kind) {
    case LayerKind::Conv:
    case LayerKind::Gemm:
    case LayerKind::MatMul:
        // out elements x reduction length per output (inC / groups x kernel window)
        return Count(outC) * outH * outW * (Count(inC) / std::max(1, groups)) * kernelH * kernelW;
    default:
        return 0;
    }
}

Count Layer::opsPerSample() const {
    switch (kind) {
    case LayerKind::Pool:
        return outputBytesPerSample() * kernelH * kernelW;
    case LayerKind::Eltwise:
        return outputBytesPerSample() * std::max<Count>(1, Count(inputs.size()) - 1);
    case LayerKind::Vector:
        return outputBytesPerSample() * 4; // e.g. softmax: max, sub, exp, div
    default:
        return 0;
    }
}

Count Layer::inputBytesPerSample() const {
    Count s = 0;
    for (const auto& in : inputs)
        s += in.bytesPerSample;
    return s;
}

int Network::indexOf(const std::string& layerName) const {
    for (size_t i = 0; i < layers.size(); ++i)
        if (layers[i].name == layerName) return int(i);
    return -1;
}

std::vector<std::vector<int>> Network::consumers() const {
    std::vector<std::vector<int>> c(layers.size());
    for (size_t i = 0; i < layers.size(); ++i)
        for (const auto& in : layers[i].inputs)
            if (in.producer >= 0) {
                auto& v = c[size_t(in.producer)];
                if (std::find(v.begin(), v.end(), int(i)) == v.end()) v.push_back(int(i));
            }
    return c;
}

Count Network::totalMacsPerSample() const {
    Count s = 0;
    for (const auto& l : layers)
        s += l.macsPerSample();
    return s;
}

Count Network::totalWeightBytes() const {
    Count s = 0;
    for (const auto& l : layers)
        s += l.weightBytes;
    return s;
}

bool Network::isOutput(int layer) const {
    return std::find(outputs.begin(), outputs.end(), layers[size_t(layer)].name) != outputs.end();
}

namespace {

// Per layer, the first layer whose key is the same.
template <class Key> std::vector<int> firstOfEach(size_t n, Key keyOf) {
    std::vector<int> out(n);
    std::unordered_map<std::string, int> seen;
    for (size_t i = 0; i < n; ++i)
        out[i] = seen.emplace(keyOf(i), int(i)).first->second;
    return out;
}

void putInt(std::string& key, long long v) {
    key.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// A layer's own fields: kind, op, shapes, weights, flags, output role and its inputs' sizes.
std::vector<int> ownClasses(const Network& net) {
    const auto cons = net.consumers();
    return firstOfEach(net.layers.size(), [&](size_t i) {
        const Layer& l = net.layers[i];
        std::string key = l.op;
        key.push_back('\0');
        for (long long v :
             {(long long)l.kind,          (long long)l.inC,
              (long long)l.inH,           (long long)l.inW,
              (long long)l.outC,          (long long)l.outH,
              (long long)l.outW,          (long long)l.kernelH,
              (long long)l.kernelW,       (long long)l.strideH,
              (long long)l.strideW,       (long long)l.padH,
              (long long)l.padW,          (long long)l.dilationH,
              (long long)l.dilationW,     (long long)l.groups,
              (long long)l.weightBytes,   (long long)l.weightsResident,
              (long long)l.inputs.size(), (long long)(net.isOutput(int(i)) || cons[i].empty())})
            putInt(key, v);
        for (const LayerInput& in : l.inputs) {
            putInt(key, in.bytesPerSample);
            putInt(key, in.resident);
            putInt(key, in.producer >= 0);
        }
        return key;
    });
}

// The layer's class in `inner` and, per input, its producer's class in `outer` (-1 for a
// network input).
std::vector<int> withProducers(const Network& net, const std::vector<int>& inner,
                               const std::vector<int>& outer) {
    return firstOfEach(net.layers.size(), [&](size_t i) {
        std::string key;
        putInt(key, inner[i]);
        for (const LayerInput& in : net.layers[i].inputs)
            putInt(key, in.producer >= 0 ? outer[size_t(in.producer)] : -1);
        return key;
    });
}

} // namespace

std::vector<int> Network::mappingClasses() const {
    const std::vector<int> own = ownClasses(*this);
    return withProducers(*this, own, own);
}

std::vector<int> Network::layerClasses() const {
    const std::vector<int> mapping = mappingClasses();
    return withProducers(*this, mapping, mapping);
}

std::vector<std::vector<bool>> Network::transitiveDeps() const {
    const size_t n = layers.size();
    std::vector<std::vector<bool>> d(n, std::vector<bool>(n, false));
    for (size_t i = 0; i < n; ++i)
        for (const auto& in : layers[i].inputs)
            if (in.producer >= 0) {
                const auto p = size_t(in.producer);
                d[i][p] = true;
                for (size_t k = 0; k < n; ++k)
                    if (d[p][k]) d[i][k] = true;
            }
    return d;
}

int keepInputsOnChip(Network& net, const std::vector<std::string>& names) {
    int marked = 0;
    for (Layer& l : net.layers)
        for (size_t k = 0; k < l.inputs.size(); ++k) {
            LayerInput& in = l.inputs[k];
            if (in.producer >= 0 ||
                std::find(names.begin(), names.end(), in.networkInput) == names.end())
                continue;
            in.resident = true;
            ++marked;
            if (k + 1 < l.inputs.size() && l.inputs[k + 1].producer >= 0) {
                const std::string& joins = net.layers[size_t(l.inputs[k + 1].producer)].name;
                std::erase(net.outputs, joins);
            }
        }
    return marked;
}

int keepWeightsOnChip(Network& net) {
    int marked = 0;
    for (Layer& l : net.layers)
        if (l.weightBytes > 0) {
            l.weightsResident = true;
            ++marked;
        }
    return marked;
}

} // namespace tilescope
