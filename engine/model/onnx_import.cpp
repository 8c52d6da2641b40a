#include "model/onnx_import.h"

#include "model/onnx_shape.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <memory>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <optional>
#include <queue>
#include <set>
#include <unistd.h>
#include <unordered_map>
#include <unordered_set>

namespace tilescope {
namespace {

using namespace onnximport;
namespace ox = ONNX_NAMESPACE;

constexpr std::int64_t kMaxOpset = 17;
// Integer tensors up to this size are read for shape arithmetic; weights never are.
constexpr std::int64_t kMaxDataElements = 64;

// Thrown inside the importer only; run() turns it into an Error naming file and place.
struct Fail {
    std::string place;
    std::string reason;
};

// What the importer knows about one tensor name.
struct Value {
    std::optional<Shape> shape;               // rank known; dims may still be unknown
    std::string why;                          // why (part of) the shape is unknown
    bool isConst = false;                     // derived from initializers / Constants only
    std::optional<std::vector<Dim>> data;     // small integer contents (shape arithmetic)
    std::optional<std::vector<double>> fdata; // small float contents (Resize scales)
    std::vector<LayerInput> parts;            // scheduled producers of an activation
    int padH = 0, padW = 0; // spatial zero padding of a folded Pad, absorbed by Conv / Pool
};

// --- op families -----------------------------------------------------------------------

const std::unordered_set<std::string> kUnaryPointwise = {"Relu",
                                                         "LeakyRelu",
                                                         "Elu",
                                                         "Selu",
                                                         "Celu",
                                                         "Sigmoid",
                                                         "HardSigmoid",
                                                         "HardSwish",
                                                         "Tanh",
                                                         "Softplus",
                                                         "Softsign",
                                                         "Clip",
                                                         "Erf",
                                                         "Gelu",
                                                         "Mish",
                                                         "ThresholdedRelu",
                                                         "Exp",
                                                         "Log",
                                                         "Sqrt",
                                                         "Reciprocal",
                                                         "Neg",
                                                         "Abs",
                                                         "Floor",
                                                         "Ceil",
                                                         "Round",
                                                         "Sign",
                                                         "Sin",
                                                         "Cos",
                                                         "Not",
                                                         "IsNaN",
                                                         "IsInf",
                                                         "BatchNormalization",
                                                         "QuantizeLinear",
                                                         "DequantizeLinear",
                                                         "Shrink",
                                                         "Bernoulli"};
// Pure data movement: no arithmetic, so these fold even across several producers.
const std::unordered_set<std::string> kPassThrough = {"Identity", "Dropout", "Cast", "CastLike"};
const std::unordered_set<std::string> kBinaryPointwise = {
    "Add",  "Sub", "Mul",   "Div",   "Pow",     "Max",         "Min",     "Sum",
    "Mean", "Mod", "PRelu", "Equal", "Less",    "LessOrEqual", "Greater", "GreaterOrEqual",
    "And",  "Or",  "Xor",   "Where", "BitShift"};
const std::unordered_set<std::string> kMovement = {
    "Reshape", "Flatten",  "Transpose",    "Squeeze",     "Unsqueeze", "Concat",
    "Split",   "Slice",    "Gather",       "Expand",      "Tile",      "Pad",
    "Resize",  "Upsample", "DepthToSpace", "SpaceToDepth"};
const std::unordered_set<std::string> kPool = {"MaxPool", "AveragePool", "LpPool"};
const std::unordered_set<std::string> kGlobalPool = {"GlobalAveragePool", "GlobalMaxPool",
                                                     "GlobalLpPool"};
const std::unordered_set<std::string> kReduce = {
    "ReduceMean", "ReduceMax", "ReduceMin",    "ReduceSum",       "ReduceProd",
    "ReduceL1",   "ReduceL2",  "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"};
const std::unordered_set<std::string> kVector = {"Softmax",
                                                 "LogSoftmax",
                                                 "Hardmax",
                                                 "LayerNormalization",
                                                 "InstanceNormalization",
                                                 "GroupNormalization",
                                                 "LpNormalization",
                                                 "MeanVarianceNormalization",
                                                 "ArgMax",
                                                 "ArgMin",
                                                 "CumSum",
                                                 "LRN"};

// --- attribute and tensor helpers ------------------------------------------------------

const ox::AttributeProto* attr(const ox::NodeProto& n, const char* name) {
    for (const auto& a : n.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}
std::int64_t attrInt(const ox::NodeProto& n, const char* name, std::int64_t def) {
    const auto* a = attr(n, name);
    return a ? a->i() : def;
}
std::optional<std::vector<std::int64_t>> attrInts(const ox::NodeProto& n, const char* name) {
    const auto* a = attr(n, name);
    if (!a) return std::nullopt;
    return std::vector<std::int64_t>(a->ints().begin(), a->ints().end());
}

// An int-list attribute (strides, dilations, pads) or its default. A list of the wrong
// length (a malformed file, found by fuzzing) is an error, never an out-of-bounds read.
std::vector<std::int64_t> intsOfLength(const ox::NodeProto& n, const char* name,
                                       std::vector<std::int64_t> def) {
    auto v = attrInts(n, name);
    if (!v || v->empty()) return def;
    if (v->size() != def.size())
        throw Fail{"", std::string(name) + " has " + std::to_string(v->size()) +
                           " values, expected " + std::to_string(def.size())};
    return *v;
}
std::string attrString(const ox::NodeProto& n, const char* name, const std::string& def) {
    const auto* a = attr(n, name);
    return a ? a->s() : def;
}

Shape tensorShape(const ox::TensorProto& t) {
    Shape s;
    for (auto d : t.dims())
        s.push_back(Dim::of(d));
    return s;
}

// Element count of a tensor; a negative dimension or a product that overflows int64
// (a malformed file, found by fuzzing) gives -1, which callers treat as "not usable".
std::int64_t tensorElements(const ox::TensorProto& t) {
    std::int64_t e = 1;
    for (auto d : t.dims()) {
        if (d < 0 || __builtin_mul_overflow(e, d, &e)) return -1;
    }
    return e;
}

template <class T> std::vector<T> rawAs(const std::string& raw) {
    std::vector<T> v(raw.size() / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), raw.data(), v.size() * sizeof(T));
    return v;
}

// Small integer contents of a tensor, for shape arithmetic. Never touches external data.
std::optional<std::vector<Dim>> tensorInts(const ox::TensorProto& t) {
    const std::int64_t n = tensorElements(t);
    if (n < 0 || n > kMaxDataElements || t.data_location() == ox::TensorProto::EXTERNAL)
        return std::nullopt;
    std::vector<std::int64_t> v;
    const bool raw = t.has_raw_data();
    switch (t.data_type()) {
    case ox::TensorProto::INT64:
        if (raw)
            v = rawAs<std::int64_t>(t.raw_data());
        else
            v.assign(t.int64_data().begin(), t.int64_data().end());
        break;
    case ox::TensorProto::INT32:
        if (raw)
            for (auto x : rawAs<std::int32_t>(t.raw_data()))
                v.push_back(x);
        else
            v.assign(t.int32_data().begin(), t.int32_data().end());
        break;
    case ox::TensorProto::UINT8:
    case ox::TensorProto::INT8:
    case ox::TensorProto::BOOL:
        if (raw)
            for (unsigned char c : t.raw_data())
                v.push_back(c);
        else
            v.assign(t.int32_data().begin(), t.int32_data().end());
        break;
    default:
        return std::nullopt;
    }
    if (std::int64_t(v.size()) != n) return std::nullopt;
    std::vector<Dim> out;
    for (auto x : v)
        out.push_back(Dim::of(x));
    return out;
}

std::optional<std::vector<double>> tensorFloats(const ox::TensorProto& t) {
    const std::int64_t n = tensorElements(t);
    if (n < 0 || n > kMaxDataElements || t.data_location() == ox::TensorProto::EXTERNAL)
        return std::nullopt;
    std::vector<double> v;
    const bool raw = t.has_raw_data();
    if (t.data_type() == ox::TensorProto::FLOAT) {
        if (raw)
            for (float x : rawAs<float>(t.raw_data()))
                v.push_back(x);
        else
            v.assign(t.float_data().begin(), t.float_data().end());
    } else if (t.data_type() == ox::TensorProto::DOUBLE) {
        if (raw)
            v = rawAs<double>(t.raw_data());
        else
            v.assign(t.double_data().begin(), t.double_data().end());
    } else {
        return std::nullopt;
    }
    if (std::int64_t(v.size()) != n) return std::nullopt;
    return v;
}

std::string sanitize(const std::string& s) {
    std::string r = s;
    for (char& c : r)
        if (std::isspace(static_cast<unsigned char>(c))) c = '_';
    return r;
}

std::string lower(std::string s) {
    for (char& c : s)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// Normalises a possibly negative axis; throws on out-of-range.
std::int64_t normAxis(std::int64_t a, size_t rank, const std::string& what) {
    const std::int64_t r = std::int64_t(rank);
    if (a < -r || a >= r)
        throw Fail{"", what + " axis " + std::to_string(a) + " out of range for rank " +
                           std::to_string(r)};
    return a < 0 ? a + r : a;
}

// Concrete values of a data vector (no unknowns, no N).
std::optional<std::vector<std::int64_t>> concrete(const std::optional<std::vector<Dim>>& d) {
    if (!d) return std::nullopt;
    std::vector<std::int64_t> v;
    for (const Dim& x : *d) {
        if (!x.known || x.n) return std::nullopt;
        v.push_back(x.v);
    }
    return v;
}

// Per-sample (C, H, W) of a feature map for the conv-shaped Layer geometry: NCHW-like
// tensors keep their axes, matrices [rows, cols] become C = cols, H = rows (as Gemm does).
struct Chw {
    std::int64_t c = 1, h = 1, w = 1;
};
Chw toChw(const std::vector<std::int64_t>& d) {
    Chw r;
    switch (d.size()) {
    case 0:
        break;
    case 1:
        r.c = d[0];
        break;
    case 2:
        r.c = d[1], r.h = d[0];
        break;
    default:
        r.c = d[0], r.h = d[1];
        r.w = 1;
        for (size_t i = 2; i < d.size(); ++i)
            r.w *= d[i];
    }
    return r;
}

int narrow(std::int64_t v, const std::string& what) {
    if (v < 0 || v > std::int64_t(INT32_MAX)) throw Fail{"", what + " out of range"};
    return int(v);
}

// --- the importer ----------------------------------------------------------------------

class Importer {
  public:
    Importer(ox::ModelProto& model, std::string file, const ImportOptions& opts)
        : m_model(model), m_graph(*model.mutable_graph()), m_file(std::move(file)), m_opts(opts) {}

    Result<Network> run();

  private:
    void checkVersions();
    void runOnnxShapeInference();
    void readInitializersAndInputs();
    std::vector<int> topologicalOrder();
    void sortNodes(const std::vector<int>& order);
    void processNode(int idx);

    // Shape and data propagation for everything that is not a scheduled layer.
    void propagate(const ox::NodeProto& n, std::vector<Value>& outs);
    void applyOnnxFallback(const ox::NodeProto& n, std::vector<Value>& outs);
    std::optional<Shape> onnxShape(const std::string& name) const;

    // Scheduled layers.
    void makeConv(const ox::NodeProto& n);
    void makePool(const ox::NodeProto& n, bool global);
    void makeMatMul(const ox::NodeProto& n);
    void makeGeneric(const ox::NodeProto& n, LayerKind kind, const Value& outShape, Count weights,
                     bool unsupported = false);
    void foldPointwise(const ox::NodeProto& n);
    void foldMovement(const ox::NodeProto& n, std::vector<Value>& outs);

    int addLayer(Layer layer, const ox::NodeProto& n, const Shape& outShape);
    void recordFold(const ox::NodeProto& n, const std::vector<LayerInput>& parts);
    std::string layerName(const ox::NodeProto& n);
    std::string nodeName(const ox::NodeProto& n) const;

    const Value& in(const ox::NodeProto& n, int i) const;
    bool hasIn(const ox::NodeProto& n, int i) const {
        return i < n.input_size() && !n.input(i).empty();
    }
    Shape needShape(const ox::NodeProto& n, int i, const std::string& role) const;
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
    Network m_net;
};

std::string Importer::nodeName(const ox::NodeProto& n) const {
    if (!n.name().empty()) return sanitize(n.name());
    return lower(n.op_type()) + "_" + std::to_string(m_currentNode);
}

std::string Importer::layerName(const ox::NodeProto& n) {
    std::string base = sanitize(n.name());
    if (base.empty() || m_usedNames.count(base))
        base = lower(n.op_type()) + "_" + std::to_string(m_currentNode);
    std::string name = base;
    for (int k = 2; m_usedNames.count(name); ++k)
        name = base + "_" + std::to_string(k);
    m_usedNames.insert(name);
    return name;
}

const Value& Importer::in(const ox::NodeProto& n, int i) const {
    static const Value kEmpty{};
    if (!hasIn(n, i)) return kEmpty;
    auto it = m_values.find(n.input(i));
    return it == m_values.end() ? kEmpty : it->second;
}

Shape Importer::needShape(const ox::NodeProto& n, int i, const std::string& role) const {
    const Value& v = in(n, i);
    if (!hasIn(n, i)) throw Fail{"", "missing " + role};
    if (!v.shape || !fullyKnown(*v.shape)) {
        std::string r = role + " '" + n.input(i) + "' has unknown shape";
        if (v.shape) r += " " + toString(*v.shape);
        if (!v.why.empty()) r += " (" + v.why + ")";
        throw Fail{"", r};
    }
    return *v.shape;
}

std::vector<LayerInput> Importer::activationParts(const ox::NodeProto& n) const {
    std::vector<LayerInput> parts;
    for (int i = 0; i < n.input_size(); ++i) {
        const Value& v = in(n, i);
        if (hasIn(n, i) && !v.isConst) parts.insert(parts.end(), v.parts.begin(), v.parts.end());
    }
    return parts;
}

void Importer::setOutput(const ox::NodeProto& n, int i, Value v) {
    if (i < n.output_size() && !n.output(i).empty()) m_values[n.output(i)] = std::move(v);
}

std::optional<Shape> Importer::onnxShape(const std::string& name) const {
    auto it = m_onnxTypes.find(name);
    if (it == m_onnxTypes.end() || !it->second.has_tensor_type() ||
        !it->second.tensor_type().has_shape())
        return std::nullopt;
    Shape s;
    for (const auto& d : it->second.tensor_type().shape().dim()) {
        if (d.has_dim_value() && d.dim_value() >= 0)
            s.push_back(Dim::of(d.dim_value()));
        else if (d.has_dim_param() && m_batchParams.count(d.dim_param()))
            s.push_back(Dim::of(1, true));
        else
            s.push_back(Dim::unknown());
    }
    return s;
}

// --- versions, ONNX shape inference, inputs -------------------------------------------

void Importer::checkVersions() {
    if (!m_model.has_graph() || m_model.ir_version() <= 0)
        throw Fail{"", "not a valid ONNX model (no graph or ir_version)"};
    if (m_model.ir_version() < 3)
        throw Fail{"", "ir_version " + std::to_string(m_model.ir_version()) +
                           " predates opset imports (need 3 or later)"};
    if (m_model.ir_version() > ox::Version::IR_VERSION)
        throw Fail{"", "ir_version " + std::to_string(m_model.ir_version()) +
                           " is newer than supported (" +
                           std::to_string(int(ox::Version::IR_VERSION)) + ")"};
    for (const auto& o : m_model.opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx") m_opset = o.version();
    if (m_opset <= 0) throw Fail{"", "no opset import for the default ONNX domain"};
    if (m_opset > kMaxOpset)
        throw Fail{"", "opset " + std::to_string(m_opset) + " is newer than supported (" +
                           std::to_string(kMaxOpset) + ")"};
}

// True when every node, subgraphs included, has a schema for the model's opset imports.
bool allOpsKnown(const ox::ModelProto& model) {
    std::unordered_map<std::string, int> versions;
    for (const auto& o : model.opset_import())
        versions[o.domain() == "ai.onnx" ? std::string() : o.domain()] = int(o.version());
    const std::function<bool(const ox::GraphProto&)> known = [&](const ox::GraphProto& g) {
        for (const auto& n : g.node()) {
            const std::string domain = n.domain() == "ai.onnx" ? std::string() : n.domain();
            const auto v = versions.find(domain);
            if (v == versions.end() ||
                !ox::OpSchemaRegistry::Schema(n.op_type(), v->second, domain))
                return false;
            for (const auto& a : n.attribute()) {
                if (a.has_g() && !known(a.g())) return false;
                for (const auto& sub : a.graphs())
                    if (!known(sub)) return false;
            }
        }
        return true;
    };
    return known(model.graph());
}

// The ONNX schemas, except that a data propagator runs only when every required input
// of its node has a type. libonnx 1.12's propagators read ctx.getInputType(i) without a
// null check (Shape-15's segfaults, found by fuzz_onnx), and the type is null whenever
// the input has none: a name nothing produces, a graph input without a type, or the
// output of a node whose own inference failed, which non-strict inference skips
// silently (a Reshape fed a scalar shape, then a Transpose whose perm no longer fits,
// leaves everything downstream untyped). Such a value has no shape to propagate, so
// skipping the propagator loses nothing; propagate() reports the node if it matters.
// Each import has its own registry: the schema copies are made on first use, unshared.
class GuardedSchemaRegistry final : public ox::ISchemaRegistry {
  public:
    const ox::OpSchema* GetSchema(const std::string& key, const int maxInclusiveVersion,
                                  const std::string& domain) const override {
        const ox::OpSchema* schema =
            ox::OpSchemaRegistry::Instance()->GetSchema(key, maxInclusiveVersion, domain);
        if (!schema || !schema->has_data_propagation_function()) return schema;
        auto it = m_guarded.find(schema);
        if (it == m_guarded.end()) {
            auto copy = std::make_unique<ox::OpSchema>(*schema);
            copy->PartialDataPropagationFunction(guarded(*schema));
            it = m_guarded.emplace(schema, std::move(copy)).first;
        }
        return it->second.get();
    }

  private:
    static ox::DataPropagationFunction guarded(const ox::OpSchema& schema) {
        // required[i]: formal input i is not optional; inputs past the last formal one
        // belong to it (a variadic tail).
        std::vector<bool> required;
        for (const auto& formal : schema.inputs())
            required.push_back(formal.GetOption() != ox::OpSchema::Optional);
        return [propagate = schema.GetDataPropagationFunction(),
                required](ox::DataPropagationContext& ctx) {
            for (std::size_t i = 0; i < ctx.getNumInputs() && !required.empty(); ++i)
                if (required[std::min(i, required.size() - 1)] && !ctx.getInputType(i)) return;
            propagate(ctx);
        };
    }

    mutable std::unordered_map<const ox::OpSchema*, std::unique_ptr<ox::OpSchema>> m_guarded;
};

void Importer::runOnnxShapeInference() {
    // Data propagation resolves Shape -> Gather -> Concat -> Reshape chains with concrete
    // dims; whatever it cannot resolve (or if it throws) is left to propagate().
    // libonnx 1.12 dereferences a null schema when data propagation meets a node whose
    // op it does not know (found by fuzz_onnx): with such a node anywhere, run without it.
    // Its propagators dereference null input types too: GuardedSchemaRegistry.
    ox::ShapeInferenceOptions options{/*check_type=*/false, /*error_mode=*/0,
                                      /*enable_data_propagation=*/allOpsKnown(m_model)};
    const GuardedSchemaRegistry schemas;
    try {
        ox::shape_inference::InferShapes(m_model, &schemas, options, &m_onnxData);
    } catch (const std::exception&) {
        // Keep whatever was inferred before the failure; propagate() does the rest.
    }
    for (const auto& vi : m_graph.value_info())
        m_onnxTypes[vi.name()] = vi.type();
    for (const auto& vi : m_graph.output())
        m_onnxTypes[vi.name()] = vi.type();
}

void Importer::readInitializersAndInputs() {
    for (const auto& t : m_graph.initializer()) {
        Value v;
        v.isConst = true;
        v.shape = tensorShape(t);
        v.data = tensorInts(t);
        v.fdata = tensorFloats(t);
        m_values[t.name()] = std::move(v);
    }
    // First pass: the batch symbols (dim 0 of every graph input), so ONNX-inferred shapes
    // can map them back to N.
    for (const auto& gi : m_graph.input()) {
        if (m_values.count(gi.name())) continue; // an initializer listed as input (IR < 4)
        const auto& tt = gi.type().tensor_type();
        if (tt.has_shape() && tt.shape().dim_size() > 0 && tt.shape().dim(0).has_dim_param())
            m_batchParams.insert(tt.shape().dim(0).dim_param());
    }
    for (const auto& gi : m_graph.input()) {
        if (m_values.count(gi.name())) continue;
        const std::string place = "input '" + gi.name() + "'";
        Value v;
        const auto& tt = gi.type().tensor_type();
        if (!gi.type().has_tensor_type() || !tt.has_shape()) {
            v.why = place + " has no shape";
        } else {
            Shape s;
            const auto& dims = tt.shape().dim();
            for (int i = 0; i < dims.size(); ++i) {
                const auto& d = dims[i];
                if (i == 0 && dims.size() == 1 && d.has_dim_value() && d.dim_value() > 0) {
                    s.push_back(Dim::of(d.dim_value())); // a fixed vector, not a batch
                } else if (i == 0 && d.has_dim_value() && d.dim_value() > 1) {
                    // A fixed batch > 1 is baked into every Reshape constant after it; we
                    // cannot tell it apart from the other dims, so refuse it plainly.
                    throw Fail{place, "fixed batch size " + std::to_string(d.dim_value()) +
                                          "; export with batch 1 or a dynamic batch dim"};
                } else if (i == 0 && d.has_dim_value() && d.dim_value() == 1) {
                    // A batch-1 export: constants after it say 1 where the batch is, so
                    // the batch stays a plain 1 and per-sample shapes drop it.
                    s.push_back(Dim::of(1));
                } else if (i == 0) {
                    // Symbolic, -1, 0 or missing: the batch N, tracked through every shape.
                    s.push_back(Dim::of(1, true));
                } else if (d.has_dim_value() && d.dim_value() > 0) {
                    s.push_back(Dim::of(d.dim_value()));
                } else if (d.has_dim_value() && d.dim_value() == 0) {
                    throw Fail{place, "dimension " + std::to_string(i) + " is zero-sized"};
                } else {
                    s.push_back(Dim::unknown());
                    if (v.why.empty())
                        v.why = place + " dimension " + std::to_string(i) +
                                (d.has_dim_param() ? " is dynamic ('" + d.dim_param() + "')"
                                                   : " is unknown");
                }
            }
            v.shape = s;
        }
        const std::int64_t e = v.shape ? perSampleElements(*v.shape) : -1;
        v.parts = {LayerInput{-1, gi.name(), std::max<std::int64_t>(e, 0)}};
        if (e >= 0) m_net.inputBytes[gi.name()] = e;
        m_values[gi.name()] = std::move(v);
    }
}

std::vector<int> Importer::topologicalOrder() {
    const int count = m_graph.node_size();
    std::unordered_map<std::string, int> producer;
    for (int i = 0; i < count; ++i)
        for (const auto& o : m_graph.node(i).output())
            if (!o.empty()) producer[o] = i;
    std::vector<int> indeg(size_t(count), 0);
    std::vector<std::vector<int>> users(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) {
        const auto& n = m_graph.node(i);
        for (const auto& name : n.input()) {
            if (name.empty()) continue;
            auto p = producer.find(name);
            if (p != producer.end()) {
                users[size_t(p->second)].push_back(i);
                ++indeg[size_t(i)];
            } else if (!m_values.count(name)) {
                m_currentNode = i;
                throw Fail{"node '" + nodeName(n) + "' (" + n.op_type() + ")",
                           "input '" + name +
                               "' is produced by no node, initializer or graph input"};
            }
        }
    }
    // Kahn's algorithm, lowest node index first: keeps the file's order when it is sorted.
    std::priority_queue<int, std::vector<int>, std::greater<>> ready;
    for (int i = 0; i < count; ++i)
        if (indeg[size_t(i)] == 0) ready.push(i);
    std::vector<int> order;
    while (!ready.empty()) {
        const int i = ready.top();
        ready.pop();
        order.push_back(i);
        for (int u : users[size_t(i)])
            if (--indeg[size_t(u)] == 0) ready.push(u);
    }
    if (int(order.size()) != count) {
        for (int i = 0; i < count; ++i)
            if (indeg[size_t(i)] > 0) {
                m_currentNode = i;
                const auto& n = m_graph.node(i);
                throw Fail{"node '" + nodeName(n) + "' (" + n.op_type() + ")",
                           "the graph has a cycle through this node"};
            }
    }
    return order;
}

void Importer::sortNodes(const std::vector<int>& order) {
    auto* nodes = m_graph.mutable_node();
    bool sorted = true;
    for (size_t i = 0; i < order.size(); ++i)
        sorted = sorted && order[i] == int(i);
    if (sorted) return;
    google::protobuf::RepeatedPtrField<ox::NodeProto> out;
    out.Reserve(nodes->size());
    for (int idx : order)
        out.Add()->Swap(nodes->Mutable(idx)); // moves, no deep copy
    nodes->Swap(&out);
}

// --- propagation of shapes and small integer data ---------------------------------------

void Importer::applyOnnxFallback(const ox::NodeProto& n, std::vector<Value>& outs) {
    for (int i = 0; i < n.output_size() && i < int(outs.size()); ++i) {
        Value& v = outs[size_t(i)];
        const bool mineKnown = v.shape && fullyKnown(*v.shape);
        if (!mineKnown) {
            if (auto s = onnxShape(n.output(i)); s && (fullyKnown(*s) || !v.shape)) {
                v.shape = s;
                if (fullyKnown(*s)) v.why.clear();
            }
        }
        if (!v.data) {
            auto it = m_onnxData.find(n.output(i));
            if (it != m_onnxData.end()) {
                std::vector<Dim> d;
                for (const auto& x : it->second.dim()) {
                    if (x.has_dim_value())
                        d.push_back(Dim::of(x.dim_value()));
                    else if (x.has_dim_param() && m_batchParams.count(x.dim_param()))
                        d.push_back(Dim::of(1, true));
                    else
                        d.push_back(Dim::unknown());
                }
                v.data = d;
            }
        }
        if (v.why.empty() && (!v.shape || !fullyKnown(*v.shape)))
            v.why = "node '" + nodeName(n) + "' (" + n.op_type() + ") output shape unknown";
    }
}

void Importer::propagate(const ox::NodeProto& n, std::vector<Value>& outs) {
    const std::string& op = n.op_type();
    const Value& x = in(n, 0);
    const std::optional<Shape>& xs = x.shape;
    Value& o = outs[0];
    auto why = [&](const std::string& r) {
        o.why = "node '" + nodeName(n) + "' (" + op + "): " + r;
    };
    auto inputData = [&](int i) -> std::optional<std::vector<Dim>> {
        return hasIn(n, i) ? in(n, i).data : std::nullopt;
    };

    if (op == "Constant") {
        if (const auto* a = attr(n, "value")) {
            o.shape = tensorShape(a->t());
            o.data = tensorInts(a->t());
            o.fdata = tensorFloats(a->t());
        } else if (const auto* a = attr(n, "value_int")) {
            o.shape = Shape{};
            o.data = std::vector<Dim>{Dim::of(a->i())};
        } else if (const auto* a = attr(n, "value_ints")) {
            o.shape = Shape{Dim::of(a->ints_size())};
            std::vector<Dim> d;
            for (auto v : a->ints())
                d.push_back(Dim::of(v));
            o.data = d;
        } else if (const auto* a = attr(n, "value_float")) {
            o.shape = Shape{};
            o.fdata = std::vector<double>{a->f()};
        } else if (const auto* a = attr(n, "value_floats")) {
            o.shape = Shape{Dim::of(a->floats_size())};
            o.fdata = std::vector<double>(a->floats().begin(), a->floats().end());
        }
    } else if (op == "Shape") {
        if (xs) {
            const auto r = std::int64_t(xs->size());
            std::int64_t b = attrInt(n, "start", 0), e = attrInt(n, "end", r);
            b = std::clamp(b < 0 ? b + r : b, std::int64_t(0), r);
            e = std::clamp(e < 0 ? e + r : e, std::int64_t(0), r);
            o.data = std::vector<Dim>(xs->begin() + b, xs->begin() + std::max(b, e));
            o.shape = Shape{Dim::of(std::int64_t(o.data->size()))};
        }
    } else if (op == "Size") {
        o.shape = Shape{};
        if (xs) o.data = std::vector<Dim>{product(*xs)};
    } else if (op == "ConstantOfShape") {
        if (auto d = inputData(0)) o.shape = *d;
    } else if (kPassThrough.count(op) || kUnaryPointwise.count(op) || kVector.count(op)) {
        if (op == "ArgMax" || op == "ArgMin") {
            if (xs) {
                Shape s = *xs;
                const auto ax = normAxis(attrInt(n, "axis", 0), s.size(), op);
                if (attrInt(n, "keepdims", 1))
                    s[size_t(ax)] = Dim::of(1);
                else
                    s.erase(s.begin() + ax);
                o.shape = s;
            }
        } else {
            o.shape = xs;
            o.why = x.why;
            if (kPassThrough.count(op) || op == "Floor" || op == "Ceil" || op == "Round") {
                o.data = x.data;
                o.fdata = x.fdata;
            } else if (op == "Neg" && x.data) {
                std::vector<Dim> d;
                for (const Dim& v : *x.data)
                    d.push_back(sub(Dim::of(0), v));
                o.data = d;
            }
        }
        for (size_t i = 1; i < outs.size(); ++i)
            outs[i].shape = xs; // Dropout mask etc.
    } else if (kBinaryPointwise.count(op)) {
        std::optional<Shape> s;
        for (int i = 0; i < n.input_size(); ++i) {
            if (!hasIn(n, i)) continue;
            const Value& v = in(n, i);
            if (!v.shape) {
                s.reset();
                o.why = v.why;
                break;
            }
            s = s ? broadcast(*s, *v.shape) : v.shape;
            if (!s) {
                why("shapes cannot be broadcast");
                break;
            }
        }
        o.shape = s;
        // Integer shape arithmetic: element-wise with scalar broadcasting.
        auto a = inputData(0), b = inputData(1);
        if (a && b && (a->size() == b->size() || a->size() == 1 || b->size() == 1) &&
            (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Max" ||
             op == "Min")) {
            const size_t len = std::max(a->size(), b->size());
            std::vector<Dim> d;
            for (size_t i = 0; i < len; ++i) {
                const Dim p = (*a)[a->size() == 1 ? 0 : i], q = (*b)[b->size() == 1 ? 0 : i];
                if (op == "Add")
                    d.push_back(add(p, q));
                else if (op == "Sub")
                    d.push_back(sub(p, q));
                else if (op == "Mul")
                    d.push_back(mul(p, q));
                else if (op == "Div")
                    d.push_back(div(p, q));
                else if (p.known && q.known && !p.n && !q.n)
                    d.push_back(Dim::of(op == "Max" ? std::max(p.v, q.v) : std::min(p.v, q.v)));
                else
                    d.push_back(Dim::unknown());
            }
            o.data = d;
        }
    } else if (op == "Reshape") {
        auto target = inputData(1);
        if (!target) {
            why("target shape is not a constant");
        } else if (!xs) {
            o.why = x.why;
        } else {
            const bool allowZero = attrInt(n, "allowzero", 0) != 0;
            Shape s;
            int minus = -1;
            for (size_t i = 0; i < target->size(); ++i) {
                const Dim t = (*target)[i];
                if (t.isConst(-1)) {
                    minus = int(i);
                    s.push_back(Dim::unknown());
                } else if (t.isConst(0) && !allowZero) {
                    s.push_back(i < xs->size() ? (*xs)[i] : Dim::unknown());
                } else {
                    s.push_back(t);
                }
            }
            if (minus >= 0) {
                Dim known = Dim::of(1);
                for (size_t i = 0; i < s.size(); ++i)
                    if (int(i) != minus) known = mul(known, s[i]);
                s[size_t(minus)] = div(product(*xs), known);
            }
            o.shape = s;
            if (!fullyKnown(s)) why("cannot resolve target shape " + toString(s));
        }
        o.data = x.data;
    } else if (op == "Flatten") {
        if (xs) {
            const auto ax = attrInt(n, "axis", 1);
            const auto a = size_t(ax < 0 ? ax + std::int64_t(xs->size()) : ax);
            o.shape = Shape{product(*xs, 0, a), product(*xs, a)};
        } else {
            o.why = x.why;
        }
    } else if (op == "Transpose") {
        if (xs) {
            std::vector<std::int64_t> perm;
            if (auto p = attrInts(n, "perm"))
                perm = *p;
            else
                for (std::int64_t i = std::int64_t(xs->size()) - 1; i >= 0; --i)
                    perm.push_back(i);
            if (perm.size() != xs->size()) throw Fail{"", "perm does not match the rank"};
            Shape s;
            for (auto p : perm)
                s.push_back((*xs)[size_t(normAxis(p, xs->size(), op))]);
            o.shape = s;
        } else {
            o.why = x.why;
        }
    } else if (op == "Squeeze" || op == "Unsqueeze") {
        std::optional<std::vector<std::int64_t>> axes =
            m_opset >= 13 ? concrete(inputData(1)) : attrInts(n, "axes");
        const bool haveAxesInput = m_opset >= 13 ? hasIn(n, 1) : bool(attr(n, "axes"));
        if (haveAxesInput && !axes) {
            why("axes are not a constant");
        } else if (xs) {
            Shape s = *xs;
            if (op == "Squeeze") {
                std::set<std::int64_t> drop;
                if (axes)
                    for (auto a : *axes)
                        drop.insert(normAxis(a, s.size(), op));
                else
                    for (size_t i = 0; i < s.size(); ++i)
                        if (s[i].isConst(1)) drop.insert(std::int64_t(i));
                Shape r;
                for (size_t i = 0; i < s.size(); ++i)
                    if (!drop.count(std::int64_t(i))) r.push_back(s[i]);
                o.shape = r;
            } else if (axes) {
                const size_t rank = s.size() + axes->size();
                std::set<std::int64_t> add;
                for (auto a : *axes)
                    add.insert(normAxis(a, rank, op));
                Shape r;
                size_t k = 0;
                for (size_t i = 0; i < rank; ++i)
                    r.push_back(add.count(std::int64_t(i)) ? Dim::of(1) : s[k++]);
                o.shape = r;
            }
        } else {
            o.why = x.why;
        }
        o.data = x.data;
    } else if (op == "Concat") {
        std::optional<Shape> s;
        std::vector<Dim> data;
        bool haveData = true;
        for (int i = 0; i < n.input_size(); ++i) {
            if (!hasIn(n, i)) continue;
            const Value& v = in(n, i);
            if (v.data)
                data.insert(data.end(), v.data->begin(), v.data->end());
            else
                haveData = false;
            if (!v.shape) {
                o.why = v.why.empty() ? "node '" + nodeName(n) + "': input shape unknown" : v.why;
                s.reset();
                break;
            }
            if (!s) {
                s = v.shape;
                continue;
            }
            const auto ax = size_t(normAxis(attrInt(n, "axis", 0), s->size(), op));
            if (v.shape->size() != s->size()) throw Fail{"", "inputs differ in rank"};
            (*s)[ax] = add((*s)[ax], (*v.shape)[ax]);
        }
        o.shape = s;
        if (haveData) o.data = data;
    } else if (op == "Split") {
        if (xs) {
            const auto ax = size_t(normAxis(attrInt(n, "axis", 0), xs->size(), op));
            std::optional<std::vector<std::int64_t>> sizes =
                m_opset >= 13 ? concrete(inputData(1)) : attrInts(n, "split");
            const Dim total = (*xs)[ax];
            const auto k = std::int64_t(n.output_size());
            if (!sizes && total.known && !total.n && k > 0) {
                const std::int64_t part = (total.v + k - 1) / k; // last part may be smaller
                sizes = std::vector<std::int64_t>();
                for (std::int64_t i = 0; i < k; ++i)
                    sizes->push_back(std::min(part, total.v - i * part));
            }
            for (int i = 0; i < n.output_size() && i < int(outs.size()); ++i) {
                Shape s = *xs;
                s[ax] = sizes && size_t(i) < sizes->size() ? Dim::of((*sizes)[size_t(i)])
                                                           : Dim::unknown();
                outs[size_t(i)].shape = s;
                if (!fullyKnown(s))
                    outs[size_t(i)].why = "node '" + nodeName(n) + "' (Split): split sizes unknown";
            }
        } else {
            for (auto& v : outs)
                v.why = x.why;
        }
    } else if (op == "Slice") {
        std::optional<std::vector<std::int64_t>> starts, ends, axes, steps;
        if (m_opset >= 10) {
            starts = concrete(inputData(1));
            ends = concrete(inputData(2));
            if (hasIn(n, 3)) axes = concrete(inputData(3));
            if (hasIn(n, 4)) steps = concrete(inputData(4));
            if ((hasIn(n, 3) && !axes) || (hasIn(n, 4) && !steps)) starts.reset();
        } else {
            starts = attrInts(n, "starts");
            ends = attrInts(n, "ends");
            axes = attrInts(n, "axes");
        }
        if (!starts || !ends || starts->size() != ends->size()) {
            why("slice bounds are not constants");
        } else if (xs) {
            Shape s = *xs;
            std::optional<std::vector<Dim>> data = x.data;
            bool ok = true;
            for (size_t i = 0; i < starts->size(); ++i) {
                const auto ax = size_t(normAxis(axes ? (*axes)[i] : std::int64_t(i), s.size(), op));
                const std::int64_t step = steps ? (*steps)[i] : 1;
                const Dim d = s[ax];
                if (!d.known || d.n || step == 0) {
                    // Slicing the batch (or an unknown dim) is only fine when it is a no-op.
                    if ((*starts)[i] == 0 && (*ends)[i] >= INT32_MAX && step == 1) continue;
                    ok = false;
                    break;
                }
                auto clampIdx = [&](std::int64_t v, bool isEnd) {
                    if (v < 0) v += d.v;
                    return step > 0 ? std::clamp(v, std::int64_t(0), d.v)
                                    : std::clamp(v, std::int64_t(-1), d.v - 1 + (isEnd ? 0 : 0));
                };
                const std::int64_t b = clampIdx((*starts)[i], false);
                const std::int64_t e = clampIdx((*ends)[i], true);
                const std::int64_t len =
                    step > 0 ? std::max<std::int64_t>(0, (e - b + step - 1) / step)
                             : std::max<std::int64_t>(0, (b - e + (-step) - 1) / (-step));
                s[ax] = Dim::of(len);
                if (data && s.size() == 1) {
                    std::vector<Dim> nd;
                    for (std::int64_t k = 0, p = b; k < len; ++k, p += step)
                        if (p >= 0 && p < std::int64_t(data->size()))
                            nd.push_back((*data)[size_t(p)]);
                    data = nd;
                } else {
                    data.reset();
                }
            }
            if (ok) {
                o.shape = s;
                o.data = data;
            } else {
                why("slices an unknown or batch dimension");
            }
        } else {
            o.why = x.why;
        }
    } else if (op == "Gather") {
        const Value& idx = in(n, 1);
        if (xs && idx.shape) {
            const auto ax = size_t(normAxis(attrInt(n, "axis", 0), xs->size(), op));
            Shape s(xs->begin(), xs->begin() + std::ptrdiff_t(ax));
            s.insert(s.end(), idx.shape->begin(), idx.shape->end());
            s.insert(s.end(), xs->begin() + std::ptrdiff_t(ax) + 1, xs->end());
            o.shape = s;
            auto ix = concrete(idx.data);
            if (x.data && ix && xs->size() == 1) {
                std::vector<Dim> d;
                for (auto i : *ix) {
                    const auto k = i < 0 ? i + std::int64_t(x.data->size()) : i;
                    d.push_back(k >= 0 && k < std::int64_t(x.data->size()) ? (*x.data)[size_t(k)]
                                                                           : Dim::unknown());
                }
                o.data = d;
            }
        } else {
            o.why = xs ? idx.why : x.why;
        }
    } else if (op == "Expand") {
        auto t = inputData(1);
        if (xs && t) {
            Shape target;
            for (const Dim& d : *t)
                target.push_back(d);
            o.shape = broadcast(*xs, target);
        } else {
            why("expand shape is not a constant");
        }
    } else if (op == "Tile") {
        auto r = inputData(1);
        if (xs && r && r->size() == xs->size()) {
            Shape s = *xs;
            for (size_t i = 0; i < s.size(); ++i)
                s[i] = mul(s[i], (*r)[i]);
            o.shape = s;
        } else {
            why("repeats are not a constant");
        }
    } else if (op == "Pad") {
        auto pads = m_opset >= 11 ? concrete(inputData(1)) : attrInts(n, "pads");
        if (xs && pads && pads->size() == 2 * xs->size()) {
            Shape s = *xs;
            const size_t r = s.size();
            for (size_t i = 0; i < r; ++i)
                s[i] = add(s[i], Dim::of((*pads)[i] + (*pads)[i + r]));
            o.shape = s;
            bool onlySpatial = r == 4 && attrString(n, "mode", "constant") == "constant";
            for (size_t i = 0; i < 2 && onlySpatial; ++i)
                onlySpatial = (*pads)[i] == 0 && (*pads)[i + r] == 0;
            if (onlySpatial) {
                o.padH = int((*pads)[2] + (*pads)[2 + r]);
                o.padW = int((*pads)[3] + (*pads)[3 + r]);
            }
        } else {
            why("pads are not a constant");
        }
    } else if (op == "Resize" || op == "Upsample") {
        const int scalesIdx = op == "Upsample" ? 1 : (m_opset >= 11 ? 2 : 1);
        auto sizes = op == "Resize" && m_opset >= 11 ? concrete(inputData(3)) : std::nullopt;
        auto scales = hasIn(n, scalesIdx) ? in(n, scalesIdx).fdata : std::nullopt;
        if (xs && sizes && sizes->size() == xs->size()) {
            Shape s = *xs;
            for (size_t i = 1; i < s.size(); ++i)
                s[i] = Dim::of((*sizes)[i]);
            o.shape = s;
        } else if (xs && scales && scales->size() == xs->size()) {
            Shape s = *xs;
            for (size_t i = 1; i < s.size(); ++i)
                s[i] = s[i].known && !s[i].n ? Dim::of(std::int64_t(double(s[i].v) * (*scales)[i]))
                                             : Dim::unknown();
            o.shape = s;
        } else {
            why("output size is not a constant");
        }
    } else if (op == "DepthToSpace" || op == "SpaceToDepth") {
        const auto b = attrInt(n, "blocksize", 1);
        if (xs && xs->size() == 4) {
            Shape s = *xs;
            if (op == "DepthToSpace") {
                s[1] = div(s[1], Dim::of(b * b));
                s[2] = mul(s[2], Dim::of(b));
                s[3] = mul(s[3], Dim::of(b));
            } else {
                s[1] = mul(s[1], Dim::of(b * b));
                s[2] = div(s[2], Dim::of(b));
                s[3] = div(s[3], Dim::of(b));
            }
            o.shape = s;
        }
    } else if (kReduce.count(op)) {
        if (xs) {
            std::optional<std::vector<std::int64_t>> axes = attrInts(n, "axes");
            if (!axes && hasIn(n, 1)) axes = concrete(inputData(1)); // ReduceSum 13, opset 18
            const bool keep = attrInt(n, "keepdims", 1) != 0;
            std::set<std::int64_t> red;
            if (axes)
                for (auto a : *axes)
                    red.insert(normAxis(a, xs->size(), op));
            else
                for (size_t i = 0; i < xs->size(); ++i)
                    red.insert(std::int64_t(i));
            Shape s;
            for (size_t i = 0; i < xs->size(); ++i) {
                if (!red.count(std::int64_t(i)))
                    s.push_back((*xs)[i]);
                else if (keep)
                    s.push_back(Dim::of(1));
            }
            o.shape = s;
        } else {
            o.why = x.why;
        }
    }
    applyOnnxFallback(n, outs);
}

// --- layers ------------------------------------------------------------------------------

int Importer::addLayer(Layer layer, const ox::NodeProto& n, const Shape& outShape) {
    layer.name = layerName(n);
    layer.op = n.op_type();
    if (layer.outputBytesPerSample() <= 0) throw Fail{"", "zero-sized output"};
    const int idx = int(m_net.layers.size());
    Value out;
    out.shape = outShape;
    out.parts = {LayerInput{idx, "", layer.outputBytesPerSample()}};
    m_net.layers.push_back(std::move(layer));
    setOutput(n, 0, std::move(out));
    // Secondary outputs (MaxPool indices, LayerNorm mean / inv-std) come from the same layer.
    for (int i = 1; i < n.output_size(); ++i) {
        Value extra;
        extra.shape = onnxShape(n.output(i));
        extra.parts = {LayerInput{idx, "", m_net.layers.back().outputBytesPerSample()}};
        setOutput(n, i, std::move(extra));
    }
    return idx;
}

void Importer::recordFold(const ox::NodeProto& n, const std::vector<LayerInput>& parts) {
    std::string into;
    for (const auto& p : parts)
        if (p.producer >= 0) {
            into = m_net.layers[size_t(p.producer)].name;
            break;
        }
    m_net.folded.push_back(FoldRecord{nodeName(n), n.op_type(), into});
}

// Spatial geometry shared by Conv and Pool: output extent from input, kernel, stride,
// dilation and padding (explicit pads or auto_pad), floor or ceil.
struct Axis {
    std::int64_t in = 1, k = 1, s = 1, d = 1, pad = 0, out = 1;
};
Axis spatial(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t d, std::int64_t padBegin,
             std::int64_t padEnd, const std::string& autoPad, bool ceilMode) {
    Axis a{in, k, s, d, padBegin + padEnd, 0};
    const std::int64_t span = d * (k - 1) + 1;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
        a.out = (in + s - 1) / s;
        a.pad = std::max<std::int64_t>(0, (a.out - 1) * s + span - in);
        return a;
    }
    if (autoPad == "VALID") a.pad = 0;
    const std::int64_t room = in + a.pad - span;
    if (room < 0) {
        a.out = 0;
        return a;
    }
    a.out = (ceilMode ? (room + s - 1) / s : room / s) + 1;
    // With ceil_mode the last window must still start inside the (begin-padded) input.
    if (ceilMode && (a.out - 1) * s >= in + padBegin) --a.out;
    return a;
}

void Importer::makeConv(const ox::NodeProto& n) {
    const Value& xv = in(n, 0);
    const Shape xs = needShape(n, 0, "input");
    if (xs.size() != 4 && xs.size() != 3)
        throw Fail{"", "only 1-D and 2-D convolutions are supported (input rank " +
                           std::to_string(xs.size()) + ")"};
    const Shape ws = needShape(n, 1, "weight");
    if (ws.size() != xs.size()) throw Fail{"", "weight rank does not match the input"};
    for (size_t i = 1; i < xs.size(); ++i)
        if (xs[i].n) throw Fail{"", "the batch is not the leading dimension of the input"};
    const bool twoD = xs.size() == 4;
    const std::int64_t c = xs[1].v, h = twoD ? xs[2].v : 1, w = xs.back().v;
    const std::int64_t m = ws[0].v, cpg = ws[1].v;
    const std::int64_t kh = twoD ? ws[2].v : 1, kw = ws.back().v;
    const std::int64_t g = attrInt(n, "group", 1);
    if (g <= 0 || cpg * g != c)
        throw Fail{"", "weight expects " + std::to_string(cpg) + " input channels per group x " +
                           std::to_string(g) + " groups, input has " + std::to_string(c)};
    const size_t sd = twoD ? 2 : 1;
    auto strides = intsOfLength(n, "strides", std::vector<std::int64_t>(sd, 1));
    auto dil = intsOfLength(n, "dilations", std::vector<std::int64_t>(sd, 1));
    auto pads = intsOfLength(n, "pads", std::vector<std::int64_t>(2 * sd, 0));
    const std::string autoPad = attrString(n, "auto_pad", "NOTSET");
    // A folded zero Pad in front is the conv's own padding (inception's avg-pool pattern).
    const std::int64_t ph = xv.padH, pw = xv.padW;
    Axis ah = twoD ? spatial(h - ph, kh, strides[0], dil[0], pads[0] + ph, pads[2], autoPad, false)
                   : Axis{};
    Axis aw = spatial(w - pw, kw, strides[sd - 1], dil[sd - 1], pads[sd - 1] + pw, pads.back(),
                      autoPad, false);
    if (ah.out <= 0 || aw.out <= 0)
        throw Fail{"", "zero-sized output (kernel larger than the padded input)"};

    Layer l;
    l.kind = LayerKind::Conv;
    l.inC = narrow(c, "channels");
    l.inH = narrow(ah.in, "height");
    l.inW = narrow(aw.in, "width");
    l.outC = narrow(m, "output channels");
    l.outH = narrow(ah.out, "height");
    l.outW = narrow(aw.out, "width");
    l.kernelH = int(kh), l.kernelW = int(kw);
    l.strideH = int(ah.s), l.strideW = int(aw.s);
    l.padH = int(ah.pad), l.padW = int(aw.pad);
    l.dilationH = int(ah.d), l.dilationW = int(aw.d);
    l.groups = int(g);
    l.inputs = xv.parts;
    const Value& wv = in(n, 1);
    if (wv.isConst)
        l.weightBytes = perSampleElements(ws);
    else
        l.inputs.insert(l.inputs.end(), wv.parts.begin(), wv.parts.end());
    if (hasIn(n, 2) && in(n, 2).isConst && in(n, 2).shape)
        l.weightBytes += std::max<std::int64_t>(0, perSampleElements(*in(n, 2).shape));
    Shape out = twoD ? Shape{xs[0], Dim::of(m), Dim::of(ah.out), Dim::of(aw.out)}
                     : Shape{xs[0], Dim::of(m), Dim::of(aw.out)};
    addLayer(std::move(l), n, out);
}

void Importer::makePool(const ox::NodeProto& n, bool global) {
    const Value& xv = in(n, 0);
    const Shape xs = needShape(n, 0, "input");
    if (xs.size() != 4 && xs.size() != 3)
        throw Fail{"", "only 1-D and 2-D pooling is supported (input rank " +
                           std::to_string(xs.size()) + ")"};
    for (size_t i = 1; i < xs.size(); ++i)
        if (xs[i].n) throw Fail{"", "the batch is not the leading dimension of the input"};
    const bool twoD = xs.size() == 4;
    const std::int64_t c = xs[1].v, h = twoD ? xs[2].v : 1, w = xs.back().v;
    Axis ah{h, h, 1, 1, 0, 1}, aw{w, w, 1, 1, 0, 1};
    if (!global) {
        const size_t sd = twoD ? 2 : 1;
        auto k = attrInts(n, "kernel_shape");
        if (!k || k->size() != sd) throw Fail{"", "kernel_shape missing or of the wrong rank"};
        auto strides = intsOfLength(n, "strides", std::vector<std::int64_t>(sd, 1));
        auto dil = intsOfLength(n, "dilations", std::vector<std::int64_t>(sd, 1));
        auto pads = intsOfLength(n, "pads", std::vector<std::int64_t>(2 * sd, 0));
        const std::string autoPad = attrString(n, "auto_pad", "NOTSET");
        const bool ceilMode = attrInt(n, "ceil_mode", 0) != 0;
        const std::int64_t ph = xv.padH, pw = xv.padW;
        ah = twoD ? spatial(h - ph, (*k)[0], strides[0], dil[0], pads[0] + ph, pads[2], autoPad,
                            ceilMode)
                  : Axis{};
        aw = spatial(w - pw, k->back(), strides[sd - 1], dil[sd - 1], pads[sd - 1] + pw,
                     pads.back(), autoPad, ceilMode);
    }
    if (ah.out <= 0 || aw.out <= 0)
        throw Fail{"", "zero-sized output (window larger than the padded input)"};
    Layer l;
    l.kind = LayerKind::Pool;
    l.inC = l.outC = narrow(c, "channels");
    l.groups = l.inC; // channel-wise: every channel has its own window
    l.inH = narrow(ah.in, "height");
    l.inW = narrow(aw.in, "width");
    l.outH = narrow(ah.out, "height");
    l.outW = narrow(aw.out, "width");
    l.kernelH = int(ah.k), l.kernelW = int(aw.k);
    l.strideH = int(ah.s), l.strideW = int(aw.s);
    l.padH = int(ah.pad), l.padW = int(aw.pad);
    l.dilationH = int(ah.d), l.dilationW = int(aw.d);
    l.inputs = xv.parts;
    Shape out = twoD ? Shape{xs[0], Dim::of(c), Dim::of(ah.out), Dim::of(aw.out)}
                     : Shape{xs[0], Dim::of(c), Dim::of(aw.out)};
    // Global pooling written as ReduceMean(keepdims=0) drops the spatial axes.
    if (kReduce.count(n.op_type()) && attrInt(n, "keepdims", 1) == 0)
        out = Shape{xs[0], Dim::of(c)};
    addLayer(std::move(l), n, out);
}

// Matrix products in conv geometry: rows M -> outH (outW = 1), reduction K -> inC/groups,
// columns -> outC/groups, broadcast batch dims (per sample) -> groups.
void Importer::makeMatMul(const ox::NodeProto& n) {
    const bool gemm = n.op_type() == "Gemm";
    Shape a = needShape(n, 0, "operand A");
    Shape b = needShape(n, 1, "operand B");
    if (a.empty() || b.empty()) throw Fail{"", "scalar operand"};
    if (gemm) {
        if (a.size() != 2 || b.size() != 2) throw Fail{"", "Gemm operands must be 2-D"};
        if (attrInt(n, "transA", 0)) std::swap(a[0], a[1]);
        if (attrInt(n, "transB", 0)) std::swap(b[0], b[1]);
    }
    const bool aVec = a.size() == 1, bVec = b.size() == 1;
    if (aVec) a.insert(a.begin(), Dim::of(1));
    if (bVec) b.push_back(Dim::of(1));
    const Dim m = a[a.size() - 2], k = a.back(), k2 = b[b.size() - 2], cols = b.back();
    if (!(k == k2)) throw Fail{"", "reduction dims differ: " + toString(a) + " x " + toString(b)};
    if (k.n || cols.n) throw Fail{"", "the batch is in a reduction or column dimension"};
    const Shape ab(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
    auto batch = broadcast(ab, bb);
    if (!batch)
        throw Fail{"", "batch dims cannot be broadcast: " + toString(a) + " x " + toString(b)};
    const Value& av = in(n, 0);
    const Value& bv = in(n, 1);

    Layer l;
    Shape out = *batch;
    if (!aVec) out.push_back(m);
    if (!bVec) out.push_back(cols);
    if (bv.isConst && !av.isConst) {
        // Activation x weights: all leading dims of A are rows; batched weights are groups.
        const Dim g = product(bb);
        const Dim rows = div(product(a, 0, a.size() - 1), g);
        if (!rows.known || g.n)
            throw Fail{"", "cannot split rows " + toString(a) + " into weight groups"};
        l.kind = LayerKind::Gemm;
        l.groups = narrow(g.v, "groups");
        l.inH = l.outH = narrow(rows.v, "rows");
        l.inC = narrow(g.v * k.v, "reduction");
        l.outC = narrow(g.v * cols.v, "columns");
        l.weightBytes = perSampleElements(*bv.shape);
        l.inputs = av.parts;
    } else if (av.isConst && !bv.isConst) {
        // Weights x activation (Y = W X): W's rows are the output channels, X's columns
        // (and batch dims) the positions.
        if (a.size() != 2) throw Fail{"", "batched constant left operand is not supported"};
        const Dim pos = mul(product(bb), cols);
        if (!pos.known) throw Fail{"", "cannot resolve columns of " + toString(b)};
        l.kind = LayerKind::Gemm;
        l.inH = l.outH = narrow(pos.v, "columns");
        l.inC = narrow(k.v, "reduction");
        l.outC = narrow(m.v, "rows");
        l.weightBytes = perSampleElements(*av.shape);
        l.inputs = bv.parts;
    } else {
        // Activation x activation (attention): heads -> groups; the batch N divides out.
        const Dim g = product(*batch);
        if (!g.known || (g.n && m.n))
            throw Fail{"", "cannot resolve batch dims of " + toString(out)};
        l.kind = LayerKind::MatMul;
        l.groups = narrow(g.v, "groups");
        l.inH = l.outH = narrow(m.v, "rows");
        l.inC = narrow(g.v * k.v, "reduction");
        l.outC = narrow(g.v * cols.v, "columns");
        l.inputs = av.parts;
        l.inputs.insert(l.inputs.end(), bv.parts.begin(), bv.parts.end());
    }
    if (gemm && hasIn(n, 2)) {
        const Value& cv = in(n, 2);
        if (cv.isConst && cv.shape)
            l.weightBytes += std::max<std::int64_t>(0, perSampleElements(*cv.shape));
        else if (!cv.isConst)
            l.inputs.insert(l.inputs.end(), cv.parts.begin(), cv.parts.end());
    }
    if (l.outC <= 0 || l.outH <= 0 || l.inC <= 0)
        throw Fail{"", "zero-sized operand " + toString(out)};
    addLayer(std::move(l), n, out);
}

// Vector, Eltwise and fallback layers: geometry is the output's per-sample shape.
void Importer::makeGeneric(const ox::NodeProto& n, LayerKind kind, const Value& outv, Count weights,
                           bool unsupported) {
    if (!outv.shape || !fullyKnown(*outv.shape)) {
        std::string r = "output shape unknown";
        if (!outv.why.empty()) r += " (" + outv.why + ")";
        throw Fail{"", r};
    }
    auto od = perSampleDims(*outv.shape);
    if (!od)
        throw Fail{"", "output shape " + toString(*outv.shape) +
                           " mixes the batch into several dimensions"};
    Layer l;
    l.kind = kind;
    const Chw o = toChw(*od);
    l.outC = narrow(o.c, "channels"), l.outH = narrow(o.h, "height"), l.outW = narrow(o.w, "width");
    Chw i = o;
    for (int k = 0; k < n.input_size(); ++k) {
        const Value& v = in(n, k);
        if (!hasIn(n, k) || v.isConst || !v.shape) continue;
        if (auto d = perSampleDims(*v.shape)) i = toChw(*d);
        break;
    }
    l.inC = narrow(i.c, "channels"), l.inH = narrow(i.h, "height"), l.inW = narrow(i.w, "width");
    l.inputs = activationParts(n);
    l.weightBytes = weights;
    const int idx = addLayer(std::move(l), n, *outv.shape);
    (void)idx;
    for (int k = 1; k < n.output_size(); ++k) {
        // keep the propagated shapes of secondary outputs where we have them
        if (auto s = onnxShape(n.output(k))) m_values[n.output(k)].shape = s;
    }
    if (unsupported)
        m_net.unsupported.push_back(m_net.layers.back().name + " (" + n.op_type() + ")");
}

Count constElements(const Value& v) {
    if (!v.isConst || !v.shape) return 0;
    const auto e = perSampleElements(*v.shape);
    return e > 1 ? e : 0; // scalars (epsilon, 1/sqrt(dk)) are not parameters
}

// A per-element function of one tensor: fold it into that tensor's producer. Its constant
// operands (bias, per-channel scale, BN's folded scale + shift) become producer weights.
void Importer::foldPointwise(const ox::NodeProto& n) {
    std::vector<Value> outs(size_t(std::max(1, n.output_size())));
    propagate(n, outs);
    const std::string& op = n.op_type();
    int actIdx = -1;
    for (int i = 0; i < n.input_size(); ++i)
        if (hasIn(n, i) && !in(n, i).isConst) {
            actIdx = i;
            break;
        }
    std::vector<LayerInput> parts = in(n, actIdx).parts;
    Count params = 0;
    if (op == "BatchNormalization")
        params = 2 * std::max<Count>(0, constElements(in(n, 1)));
    else
        for (int i = 0; i < n.input_size(); ++i)
            if (hasIn(n, i) && in(n, i).isConst) params += constElements(in(n, i));

    std::set<int> producers;
    for (const auto& p : parts)
        if (p.producer >= 0) producers.insert(p.producer);
    if (producers.size() > 1 && !kPassThrough.count(op)) {
        // Several producers (a folded Concat in front): no single layer can absorb the
        // arithmetic, so it runs on its own on the vector unit (DenseNet's BN after concat).
        makeGeneric(n, LayerKind::Vector, outs[0], params);
        return;
    }
    if (producers.size() == 1 && params > 0)
        m_net.layers[size_t(*producers.begin())].weightBytes += params;
    recordFold(n, parts);
    for (int i = 0; i < n.output_size(); ++i) {
        Value v = std::move(outs[size_t(i)]);
        v.parts = parts;
        const auto e = v.shape ? perSampleElements(*v.shape) : -1;
        if (i == 0 && e >= 0) {
            // A pointwise op keeps the element count except when it broadcasts.
            Count before = 0;
            for (const auto& p : parts)
                before += p.bytesPerSample;
            if (before > 0 && e != before)
                for (auto& p : v.parts)
                    p.bytesPerSample = p.bytesPerSample * e / before;
        }
        setOutput(n, i, std::move(v));
    }
}

// Data movement (Reshape, Concat, Slice, ...): consumers read the producers directly, each
// producer's bytes scaled by the fraction of the data that comes through.
void Importer::foldMovement(const ox::NodeProto& n, std::vector<Value>& outs) {
    std::vector<LayerInput> parts = activationParts(n);
    Count inBytes = 0;
    for (const auto& p : parts)
        inBytes += p.bytesPerSample;
    // Merge repeated producers (Concat of two slices of one tensor).
    std::vector<LayerInput> merged;
    for (const auto& p : parts) {
        auto it = std::find_if(merged.begin(), merged.end(), [&](const LayerInput& q) {
            return q.producer == p.producer && q.networkInput == p.networkInput;
        });
        if (it == merged.end())
            merged.push_back(p);
        else
            it->bytesPerSample += p.bytesPerSample;
    }
    recordFold(n, merged);
    for (int i = 0; i < n.output_size() && i < int(outs.size()); ++i) {
        Value v = std::move(outs[size_t(i)]);
        v.parts = merged;
        const auto e = v.shape ? perSampleElements(*v.shape) : -1;
        // Only shrinking moves (Slice, Split, Gather) cut what is read from a producer;
        // Pad / Expand / Resize replicate at the consumer, the producer still sends its own.
        if (e >= 0 && inBytes > 0 && e < inBytes)
            for (auto& p : v.parts)
                p.bytesPerSample = std::max<Count>(1, p.bytesPerSample * e / inBytes);
        setOutput(n, i, std::move(v));
    }
}

void Importer::processNode(int idx) {
    m_currentNode = idx;
    const auto& n = m_graph.node(idx);
    const std::string& op = n.op_type();
    const bool defaultDomain = n.domain().empty() || n.domain() == "ai.onnx";

    bool anyActivation = false;
    for (int i = 0; i < n.input_size(); ++i)
        if (hasIn(n, i) && !in(n, i).isConst) anyActivation = true;

    std::vector<Value> outs(size_t(std::max(1, n.output_size())));
    // Constant subgraphs (weights, shape arithmetic) and Shape/Size of activations fold
    // away whatever their op: they are evaluated before the accelerator runs.
    if (op == "Constant" || op == "Shape" || op == "Size" || !anyActivation) {
        propagate(n, outs);
        for (int i = 0; i < n.output_size(); ++i) {
            outs[size_t(i)].isConst = true;
            setOutput(n, i, std::move(outs[size_t(i)]));
        }
        m_net.folded.push_back(FoldRecord{nodeName(n), op, ""});
        return;
    }
    if (!defaultDomain) {
        // Handled like an unknown op below.
    } else if (op == "Conv") {
        return makeConv(n);
    } else if (op == "Gemm" || op == "MatMul") {
        return makeMatMul(n);
    } else if (kPool.count(op)) {
        return makePool(n, false);
    } else if (kGlobalPool.count(op)) {
        return makePool(n, true);
    } else if (kReduce.count(op)) {
        propagate(n, outs);
        const Value& x = in(n, 0);
        // Mean / max over H and W of an NCHW map is global pooling (torchvision's
        // x.mean([2, 3])); any other reduction runs on the vector unit.
        if ((op == "ReduceMean" || op == "ReduceMax") && x.shape && x.shape->size() == 4) {
            std::optional<std::vector<std::int64_t>> axes = attrInts(n, "axes");
            if (!axes && hasIn(n, 1)) axes = concrete(in(n, 1).data);
            std::set<std::int64_t> red;
            if (axes)
                for (auto a : *axes)
                    red.insert(normAxis(a, 4, op));
            if (red == std::set<std::int64_t>{2, 3}) return makePool(n, true);
        }
        return makeGeneric(n, LayerKind::Vector, outs[0], 0);
    } else if (kVector.count(op)) {
        propagate(n, outs);
        Count w = 0;
        if (op == "LayerNormalization" || op == "InstanceNormalization" ||
            op == "GroupNormalization")
            for (int i = 1; i < n.input_size(); ++i)
                w += constElements(in(n, i));
        return makeGeneric(n, LayerKind::Vector, outs[0], w);
    } else if (kBinaryPointwise.count(op)) {
        // Two or more activation operands from different producers: an Eltwise layer.
        // If they all come from the same producers it is a function of one tensor
        // (x * sigmoid(x), GELU's x * erf(x)): fold it.
        std::vector<const std::vector<LayerInput>*> acts;
        for (int i = 0; i < n.input_size(); ++i)
            if (hasIn(n, i) && !in(n, i).isConst) acts.push_back(&in(n, i).parts);
        auto sameSources = [](const std::vector<LayerInput>& a, const std::vector<LayerInput>& b) {
            if (a.size() != b.size()) return false;
            for (size_t i = 0; i < a.size(); ++i)
                if (a[i].producer != b[i].producer || a[i].networkInput != b[i].networkInput)
                    return false;
            return true;
        };
        bool same = true;
        for (const auto* p : acts)
            same = same && sameSources(*p, *acts[0]);
        if (acts.size() >= 2 && !same) {
            propagate(n, outs);
            return makeGeneric(n, LayerKind::Eltwise, outs[0], 0);
        }
        return foldPointwise(n);
    } else if (kUnaryPointwise.count(op) || kPassThrough.count(op)) {
        return foldPointwise(n);
    } else if (kMovement.count(op)) {
        propagate(n, outs);
        return foldMovement(n, outs);
    }

    // Unknown operator.
    const std::string& fb = m_opts.unknownOpFallback;
    if (fb.empty())
        throw Fail{"", std::string("unsupported operator") +
                           (defaultDomain ? "" : " (domain '" + n.domain() + "')")};
    propagate(n, outs); // falls back to ONNX's inferred shapes
    const Value& x = in(n, 0);
    for (auto& v : outs)
        if (!v.shape || !fullyKnown(*v.shape)) {
            v.shape = x.shape; // assume shape-preserving, the common case for activations
            v.why = x.why;
        }
    if (fb == "fold") {
        m_net.unsupported.push_back(nodeName(n) + " (" + op + ")");
        return foldMovement(n, outs);
    }
    if (fb == "vector" || fb == "eltwise")
        return makeGeneric(n, fb == "vector" ? LayerKind::Vector : LayerKind::Eltwise, outs[0], 0,
                           true);
    throw Fail{"", "unsupported operator (and unknown fallback '" + fb +
                       "'; expected vector, eltwise or fold)"};
}

Result<Network> Importer::run() {
    try {
        checkVersions();
        // Our own inputs first: their dim_params name the batch for ONNX's shapes.
        readInitializersAndInputs();
        // libonnx's shape inference expects sorted nodes (it crashes on some unsorted
        // graphs), so the graph is put in topological order first.
        const std::vector<int> order = topologicalOrder();
        sortNodes(order);
        runOnnxShapeInference();
        for (const auto& n : m_graph.node())
            ++m_net.opCounts[n.op_type()];
        for (int idx = 0; idx < m_graph.node_size(); ++idx) {
            try {
                processNode(idx);
            } catch (Fail& f) {
                const auto& n = m_graph.node(idx);
                if (f.place.empty()) f.place = "node '" + nodeName(n) + "' (" + n.op_type() + ")";
                throw;
            }
        }
    } catch (const Fail& f) {
        return makeError(m_file, f.place, f.reason);
    } catch (const std::exception& e) {
        return makeError(m_file, "", std::string("import failed: ") + e.what());
    }
    std::set<std::string> seen;
    for (const auto& o : m_graph.output()) {
        auto it = m_values.find(o.name());
        if (it == m_values.end()) continue;
        for (const auto& p : it->second.parts)
            if (p.producer >= 0) {
                const std::string& name = m_net.layers[size_t(p.producer)].name;
                if (seen.insert(name).second) m_net.outputs.push_back(name);
            }
    }
    for (const auto& l : m_net.layers)
        m_net.paramsCount += l.weightBytes;
    m_net.sourcePath = m_file;
    m_net.name = std::filesystem::path(m_file).stem().string();
    if (m_net.name.empty()) m_net.name = m_graph.name();
    return std::move(m_net);
}

} // namespace

Result<Network> importOnnxBytes(const std::string& bytes, const std::string& file,
                                const ImportOptions& opts) {
    ox::ModelProto model;
    if (bytes.empty() || !model.ParseFromString(bytes))
        return makeError(file, "", "not a valid ONNX model (protobuf parse failed)");
    return Importer(model, file, opts).run();
}

Result<Network> importOnnx(const std::string& path, const ImportOptions& opts) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        return makeError(path, "", "is a directory, expected a file");
    // Parse straight from the file through a zero-copy stream: a 100 MB model with
    // weights is then read once, without an intermediate string (about 2x faster).
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return makeError(path, "", std::string("cannot open: ") + std::strerror(errno));
    ox::ModelProto model;
    bool parsed = false;
    {
        google::protobuf::io::FileInputStream in(fd, 1 << 20);
        parsed = model.ParseFromZeroCopyStream(&in) && in.GetErrno() == 0;
    }
    ::close(fd);
    if (!parsed || model.ByteSizeLong() == 0)
        return makeError(path, "", "not a valid ONNX model (protobuf parse failed)");
    return Importer(model, path, opts).run();
}

} // namespace tilescope
