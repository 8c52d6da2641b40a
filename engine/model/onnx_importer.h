// Internal to the ONNX importer (onnx_import.cpp, onnx_propagate.cpp, onnx_layers.cpp): the
// per-tensor state, the Importer class and the attribute / tensor helpers. Every fallible
// step returns a Status or a Result (util/result.h); nothing here throws.
#pragma once

#include "model/network.h"
#include "model/onnx_import.h"
#include "model/onnx_shape.h"
#include "util/result.h"

#include <algorithm>
#include <map>
#include <onnx/onnx_pb.h>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tilescope::onnximport {

namespace ox = ONNX_NAMESPACE;

// An import failure: where (empty = the node being processed) and why.
struct Failure {
    std::string place;
    std::string reason;
};
using Status = std::optional<Failure>; // nullopt = success

inline Failure fail(std::string reason) {
    return Failure{"", std::move(reason)};
}
template <class T> Failure fail(const Result<T>& r) {
    return Failure{"", r.error().message};
}

// What the importer knows about one tensor name.
struct Value {
    std::optional<Shape> shape;               // rank known; dims may still be unknown
    std::string why;                          // why (part of) the shape is unknown
    bool isConst = false;                     // derived from initializers / Constants only
    std::optional<std::vector<Dim>> data;     // small integer contents (shape arithmetic)
    std::optional<std::vector<double>> fdata; // small float contents (Resize scales)
    std::vector<LayerInput> parts;            // scheduled producers of an activation
    int padH = 0, padW = 0; // spatial zero padding of a folded Pad, absorbed by Conv / Pool
    // A recurrent layer's Y: the producers of each time step, so that a stacked recurrent
    // layer's step t reads step t (kept through reshapes that move no data between steps).
    std::optional<std::vector<std::vector<LayerInput>>> steps;
};

// --- op families (onnx_import.cpp) -----------------------------------------------------

extern const std::unordered_set<std::string> kUnaryPointwise;
extern const std::unordered_set<std::string> kPassThrough; // pure data movement, no arithmetic
extern const std::unordered_set<std::string> kBinaryPointwise;
extern const std::unordered_set<std::string> kMovement;
extern const std::unordered_set<std::string> kPool;
extern const std::unordered_set<std::string> kGlobalPool;
extern const std::unordered_set<std::string> kReduce;
extern const std::unordered_set<std::string> kVector;

// --- attribute and tensor helpers (onnx_import.cpp) ------------------------------------

const ox::AttributeProto* attr(const ox::NodeProto& n, const char* name);
std::int64_t attrInt(const ox::NodeProto& n, const char* name, std::int64_t def);
std::optional<std::vector<std::int64_t>> attrInts(const ox::NodeProto& n, const char* name);
std::string attrString(const ox::NodeProto& n, const char* name, const std::string& def);
// An int-list attribute (strides, dilations, pads) or its default. A list of the wrong
// length (a malformed file, found by fuzzing) is an error, never an out-of-bounds read.
Result<std::vector<std::int64_t>> intsOfLength(const ox::NodeProto& n, const char* name,
                                               std::vector<std::int64_t> def);

Shape tensorShape(const ox::TensorProto& t);
std::optional<std::vector<Dim>> tensorInts(const ox::TensorProto& t);
std::optional<std::vector<double>> tensorFloats(const ox::TensorProto& t);

std::string sanitize(const std::string& s);
std::string lower(std::string s);
// Normalises a possibly negative axis; an error when out of range.
Result<std::int64_t> normAxis(std::int64_t a, size_t rank, const std::string& what);
// Concrete values of a data vector (no unknowns, no N).
std::optional<std::vector<std::int64_t>> concrete(const std::optional<std::vector<Dim>>& d);
// A non-negative int that fits the Layer geometry, or an error naming `what`.
Result<int> narrow(std::int64_t v, const std::string& what);

// Per-sample (C, H, W) of a feature map for the conv-shaped Layer geometry, the way the
// convolutions lay their outputs out: [C, H, W] keeps its axes, [C, D, H, W, ...] folds
// the middle axes into the rows (C, D*H, W), as 3-D convolutions do. A matrix [rows, cols]
// becomes C = cols, H = rows (as Gemm does), unless `convRows`: then it is a 1-D
// convolution's [C, L] map, C = C, H = 1, W = L.
struct Chw {
    std::int64_t c = 1, h = 1, w = 1;
};
Chw toChw(const std::vector<std::int64_t>& d, bool convRows = false);

// Elements per sample of any one tensor the importer accepts (2^40): byte sums stay far
// from overflowing.
constexpr std::int64_t kMaxTensorElements = std::int64_t(1) << 40;

// Elements of a shape, 0 when unknown, capped at kMaxTensorElements.
inline Count cappedElements(const Shape& s) {
    const auto e = perSampleElements(s);
    return e < 0 ? 0 : std::min<Count>(e, kMaxTensorElements);
}

// Weight elements of a constant operand (scalars such as epsilon or 1/sqrt(dk) are not).
Count constElements(const Value& v);

// --- the importer ----------------------------------------------------------------------

class Importer {
  public:
    Importer(ox::ModelProto& model, std::string file, const ImportOptions& opts)
        : m_model(model), m_graph(*model.mutable_graph()), m_file(std::move(file)), m_opts(opts) {}

    Result<Network> run();

  private:
    using Outs = std::vector<Value>;
    using ShapeRule = Status (Importer::*)(const ox::NodeProto&, Outs&);
    using NodeHandler = Status (Importer::*)(const ox::NodeProto&);

    // Pipeline (onnx_import.cpp).
    Result<Network> runSteps();
    Status checkVersions();
    void runOnnxShapeInference();
    Status readInitializersAndInputs();
    Status bindDimensions();
    Status readInput(const ox::ValueInfoProto& gi);
    Status topologicalOrder(std::vector<int>& order);
    void sortNodes(const std::vector<int>& order);
    Status processNode(int idx);
    static NodeHandler nodeHandler(const std::string& op);
    void finish();

    // Node handlers (onnx_import.cpp): build a layer, fold, or refuse.
    Status foldConstant(const ox::NodeProto& n);
    Status handleReduce(const ox::NodeProto& n);
    Status handleVector(const ox::NodeProto& n);
    Status handleBinary(const ox::NodeProto& n);
    Status handleMovement(const ox::NodeProto& n);
    Status handleUnknown(const ox::NodeProto& n);

    // Shape and data propagation for everything that is not a scheduled layer
    // (onnx_propagate.cpp): one rule per op, then libonnx's shapes where ours are unknown.
    Status propagate(const ox::NodeProto& n, Outs& outs);
    static ShapeRule shapeRule(const std::string& op);
    void applyOnnxFallback(const ox::NodeProto& n, Outs& outs);
    // The shape evaluator (onnx_evaluate.cpp): contents of small tensors computed from
    // known dimensions, whatever op sequence computes them.
    void evaluate(const ox::NodeProto& n, Outs& outs);
    std::optional<Shape> onnxShape(const std::string& name) const;
    void setWhy(const ox::NodeProto& n, Value& o, const std::string& reason) const;
    std::optional<std::vector<Dim>> inputData(const ox::NodeProto& n, int i) const;

    Status shapeConstant(const ox::NodeProto& n, Outs& outs);
    Status shapeShape(const ox::NodeProto& n, Outs& outs);
    Status shapeSize(const ox::NodeProto& n, Outs& outs);
    Status shapeConstantOfShape(const ox::NodeProto& n, Outs& outs);
    Status shapeArgMinMax(const ox::NodeProto& n, Outs& outs);
    Status shapeTopK(const ox::NodeProto& n, Outs& outs);
    Status shapeGatherElements(const ox::NodeProto& n, Outs& outs);
    Status shapeUnary(const ox::NodeProto& n, Outs& outs);
    Status shapeBinary(const ox::NodeProto& n, Outs& outs);
    Status shapeReshape(const ox::NodeProto& n, Outs& outs);
    Status shapeFlatten(const ox::NodeProto& n, Outs& outs);
    Status shapeTranspose(const ox::NodeProto& n, Outs& outs);
    Status shapeSqueeze(const ox::NodeProto& n, Outs& outs);
    Status shapeConcat(const ox::NodeProto& n, Outs& outs);
    Status shapeSplit(const ox::NodeProto& n, Outs& outs);
    Status shapeEinsum(const ox::NodeProto& n, Outs& outs);
    Status shapeSlice(const ox::NodeProto& n, Outs& outs);
    Status shapeGather(const ox::NodeProto& n, Outs& outs);
    Status shapeExpand(const ox::NodeProto& n, Outs& outs);
    Status shapeTile(const ox::NodeProto& n, Outs& outs);
    Status shapePad(const ox::NodeProto& n, Outs& outs);
    Status shapeResize(const ox::NodeProto& n, Outs& outs);
    Status shapeDepthToSpace(const ox::NodeProto& n, Outs& outs);
    Status shapeReduce(const ox::NodeProto& n, Outs& outs);

    // Scheduled layers and folds (onnx_layers.cpp).
    Status makeConv(const ox::NodeProto& n);
    Status makeConvTranspose(const ox::NodeProto& n);
    // The input and weight shapes of a convolution or transposed convolution (`kind`
    // names it in messages), checked alike: rank 3-5, equal ranks, batch leading.
    Status convShapes(const ox::NodeProto& n, const std::string& kind, Shape& xs, Shape& ws);
    Status makePool(const ox::NodeProto& n);
    Status makeGlobalPool(const ox::NodeProto& n);
    Status makePoolLayer(const ox::NodeProto& n, bool global);
    Status makeMatMul(const ox::NodeProto& n);
    Status makeProduct(const ox::NodeProto& n, const Shape& a, const Shape& b, bool aVec, bool bVec,
                       const std::optional<Shape>& outShape);
    Status makeEinsum(const ox::NodeProto& n);
    Status makeRecurrent(const ox::NodeProto& n); // onnx_recurrent.cpp
    Status makeGeneric(const ox::NodeProto& n, LayerKind kind, const Value& outShape, Count weights,
                       bool unsupported = false);
    Status foldPointwise(const ox::NodeProto& n);
    Status foldMovement(const ox::NodeProto& n, Outs& outs);

    Status addLayer(Layer layer, const ox::NodeProto& n, const Shape& outShape);
    void recordFold(const ox::NodeProto& n, const std::vector<LayerInput>& parts);
    std::string layerName(const ox::NodeProto& n);
    std::string nodeName(const ox::NodeProto& n) const;

    const Value& in(const ox::NodeProto& n, int i) const;
    bool hasIn(const ox::NodeProto& n, int i) const {
        return i < n.input_size() && !n.input(i).empty();
    }
    Result<Shape> needShape(const ox::NodeProto& n, int i, const std::string& role) const;
    std::vector<LayerInput> activationParts(const ox::NodeProto& n) const;
    void setOutput(const ox::NodeProto& n, int i, Value v);

    ox::ModelProto& m_model;
    ox::GraphProto& m_graph;
    std::string m_file;
    const ImportOptions& m_opts;
    std::int64_t m_opset = 0;

    std::unordered_map<std::string, Value> m_values;
    std::unordered_map<std::string, ox::TypeProto> m_onnxTypes;       // from shape inference
    std::unordered_map<std::string, ox::TensorShapeProto> m_onnxData; // data propagation
    std::set<std::string> m_batchParams;                              // dim_params naming the batch
    std::unordered_set<std::string> m_usedNames;
    int m_currentNode = -1;
    Count m_sharedWeightBytes = 0; // weights repeated by unrolled recurrent steps
    Network m_net;
};

} // namespace tilescope::onnximport
