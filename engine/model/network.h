// The layer graph the scheduler works on: scheduled layers in topological order, their
// per-sample shapes, producers, and the record of every ONNX node folded away.
#pragma once

#include "util/units.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tilescope {

// Scheduled layer kinds (docs/method.md §1). Everything else is folded into a neighbour.
enum class LayerKind {
    Conv,    // convolution incl. grouped / depthwise
    Gemm,    // FC / Gemm / MatMul with a static weight operand
    MatMul,  // activation x activation product (attention QK^T, AV): operand B is inputs[1]
    Pool,    // max / average pooling, incl. global
    Eltwise, // Add / Mul / Sub / ... with N inputs
    Vector,  // Softmax, LayerNorm, standalone activations: the tile's vector unit
};

const char* toString(LayerKind k);
bool parseLayerKind(const std::string& s, LayerKind& out);

// One feature-map input of a layer. producer == -1 means a network input.
struct LayerInput {
    int producer = -1;
    std::string networkInput; // name of the graph input when producer == -1
    Count bytesPerSample = 0; // bytes of this input per sample (8-bit data)
    // A network input kept in the consuming tiles' buffers across runs (a decoder's KV
    // cache with `--kv-cache on-chip`): never read from DRAM, its windows held for the
    // whole run (docs/cost-model.md §6, "Kept on chip").
    bool resident = false;
};

// Shapes are per sample: batch is a parameter of the schedule, never baked in.
// Matrix products map onto the conv geometry: rows M -> outH (outW = 1), reduction K ->
// inC / groups, columns N -> outC / groups, independent heads -> groups.
struct Layer {
    std::string name;
    LayerKind kind = LayerKind::Conv;
    std::string op; // the ONNX op type (or the JSON "op") it came from

    int inC = 1, inH = 1, inW = 1;
    int outC = 1, outH = 1, outW = 1;
    int kernelH = 1, kernelW = 1;
    int strideH = 1, strideW = 1;
    int padH = 0, padW = 0; // total padding (begin + end) along each axis
    int dilationH = 1, dilationW = 1;
    int groups = 1;

    std::vector<LayerInput> inputs; // in order; for MatMul, inputs[1] is operand B
    Count weightBytes = 0;          // static weights + bias (0 for MatMul act x act)
    // Weights kept in the leaf's tiles across runs (a decode step's with `--weights
    // on-chip`): never loaded from DRAM, each tile's slice held for the whole run
    // (docs/cost-model.md §6, "Kept on chip").
    bool weightsResident = false;

    Count macsPerSample() const; // multiply-accumulates for one sample
    Count outputBytesPerSample() const { return Count(outC) * outH * outW; }
    Count inputBytesPerSample() const; // sum over inputs
    Count opsPerSample() const;        // vector / pooling / eltwise element operations
};

struct FoldRecord {
    std::string node; // ONNX node name
    std::string op;   // its op type
    std::string into; // the layer it folded into ("" when it folded into a network input)
};

struct Network {
    std::string name;
    std::string sourcePath;
    std::vector<Layer> layers;                // topological order
    std::vector<FoldRecord> folded;           // every node that is not a scheduled layer
    std::vector<std::string> unsupported;     // "node (Op)" left out by a fallback
    std::map<std::string, int> opCounts;      // ONNX op type -> nodes in the source graph
    std::vector<std::string> outputs;         // names of layers whose output leaves the net
    std::map<std::string, Count> inputBytes;  // network input name -> bytes per sample
    Count paramsCount = 0;                    // weight elements (== weight bytes at 8 bit)
    std::map<std::string, std::int64_t> dims; // the free dimensions' sizes it was imported at

    int indexOf(const std::string& layerName) const; // -1 when absent
    std::vector<std::vector<int>> consumers() const; // per layer, consuming layers
    Count totalMacsPerSample() const;
    Count totalWeightBytes() const;
    bool isOutput(int layer) const;
    // dependsOn[i][j]: layer i (transitively) depends on layer j. Cheap for a few hundred.
    std::vector<std::vector<bool>> transitiveDeps() const;
    // Per layer, the first layer mapped as it is: the same kind, op, shapes, weights, flags,
    // output role and input sizes, and producers of the same shapes (the mapper's memo key,
    // docs/cost-model.md §2).
    std::vector<int> mappingClasses() const;
    // Per layer, the first layer routed as it is: the same mapping class, and producers of
    // the same mapping classes (the evaluator's traffic memo key, docs/cost-model.md §4). A
    // transformer's identical blocks share their classes: they are mapped and routed once.
    std::vector<int> layerClasses() const;
};

// Keeps the named network inputs on chip (LayerInput::resident): a decoder's KV cache held
// in the attention leaves' tiles across decode steps. The step's new keys or values, the
// input after the cache in the folded Concat, join it there, so the layer producing them no
// longer stores them as a network output. Returns how many inputs it marked.
int keepInputsOnChip(Network& net, const std::vector<std::string>& names);

// Keeps every layer's weights on chip (Layer::weightsResident): a decode step's weights held
// in their leaves' tiles across steps. Returns how many layers it marked (those with
// weights).
int keepWeightsOnChip(Network& net);

} // namespace tilescope
