#include "model/onnx_import.h"

#include "model/onnx_importer.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <map>
#include <memory>
#include <onnx/shape_inference/implementation.h>
#include <queue>
#include <set>
#include <unistd.h>

namespace tilescope {
namespace onnximport {

namespace {

// The names on graph inputs' first axis: the batch (inputs that are initializers, listed
// as inputs before IR 4, left out).
std::set<std::string> batchDimensionNames(const ox::GraphProto& g) {
    std::set<std::string> initializers, out;
    for (const auto& t : g.initializer())
        initializers.insert(t.name());
    for (const auto& gi : g.input()) {
        if (initializers.count(gi.name())) continue;
        const auto& tt = gi.type().tensor_type();
        if (tt.has_shape() && tt.shape().dim_size() > 0 && tt.shape().dim(0).has_dim_param())
            out.insert(tt.shape().dim(0).dim_param());
    }
    return out;
}

constexpr std::int64_t kMaxOpset = 17;
// Integer tensors up to this size are read for shape arithmetic; weights never are.
constexpr std::int64_t kMaxDataElements = 64;
} // namespace

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
    "Reshape", "Flatten",  "Transpose",    "Squeeze",      "Unsqueeze",     "Concat",
    "Split",   "Slice",    "Gather",       "Expand",       "Tile",          "Pad",
    "Resize",  "Upsample", "DepthToSpace", "SpaceToDepth", "GatherElements"};
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
                                                 "TopK",
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

Result<std::vector<std::int64_t>> intsOfLength(const ox::NodeProto& n, const char* name,
                                               std::vector<std::int64_t> def) {
    auto v = attrInts(n, name);
    if (!v || v->empty()) return def;
    if (v->size() != def.size())
        return Error{std::string(name) + " has " + std::to_string(v->size()) +
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

namespace {

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

} // namespace

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

Result<std::int64_t> normAxis(std::int64_t a, size_t rank, const std::string& what) {
    const std::int64_t r = std::int64_t(rank);
    if (a < -r || a >= r)
        return Error{what + " axis " + std::to_string(a) + " out of range for rank " +
                     std::to_string(r)};
    return a < 0 ? a + r : a;
}

std::optional<std::vector<std::int64_t>> concrete(const std::optional<std::vector<Dim>>& d) {
    if (!d) return std::nullopt;
    std::vector<std::int64_t> v;
    for (const Dim& x : *d) {
        if (!x.known || x.n) return std::nullopt;
        v.push_back(x.v);
    }
    return v;
}

Chw toChw(const std::vector<std::int64_t>& d, bool convRows) {
    Chw r;
    switch (d.size()) {
    case 0:
        break;
    case 1:
        r.c = d[0];
        break;
    case 2:
        if (convRows)
            r.c = d[0], r.w = d[1];
        else
            r.c = d[1], r.h = d[0];
        break;
    default:
        // The rows are the product of the middle axes, as foldAxes folds a 3-D conv's
        // depth into its height; capped so that an absurd product fails narrow(), never
        // overflows.
        r.c = d[0], r.w = d.back();
        for (size_t i = 1; i + 1 < d.size(); ++i)
            r.h = __int128(r.h) * d[i] > kMaxTensorElements ? kMaxTensorElements + 1 : r.h * d[i];
    }
    return r;
}

Result<int> narrow(std::int64_t v, const std::string& what) {
    if (v < 0 || v > std::int64_t(INT32_MAX)) return Error{what + " out of range"};
    return int(v);
}

Count constElements(const Value& v) {
    if (!v.isConst || !v.shape) return 0;
    const auto e = perSampleElements(*v.shape);
    // Scalars (epsilon, 1/sqrt(dk)) are not parameters; absurd dims of a malformed file are
    // capped so that sums of weights cannot overflow.
    return e > 1 ? std::min<Count>(e, kMaxTensorElements) : 0;
}

// --- names and values ------------------------------------------------------------------

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

Result<Shape> Importer::needShape(const ox::NodeProto& n, int i, const std::string& role) const {
    const Value& v = in(n, i);
    if (!hasIn(n, i)) return Error{"missing " + role};
    if (!v.shape || !fullyKnown(*v.shape)) {
        std::string r = role + " '" + n.input(i) + "' has unknown shape";
        if (v.shape) r += " " + toString(*v.shape);
        if (!v.why.empty()) r += " (" + v.why + ")";
        return Error{r};
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

// --- versions, ONNX shape inference, inputs -------------------------------------------

Status Importer::checkVersions() {
    if (!m_model.has_graph() || m_model.ir_version() <= 0)
        return fail("not a valid ONNX model (no graph or ir_version)");
    if (m_model.ir_version() < 3)
        return fail("ir_version " + std::to_string(m_model.ir_version()) +
                    " predates opset imports (need 3 or later)");
    if (m_model.ir_version() > ox::Version::IR_VERSION)
        return fail("ir_version " + std::to_string(m_model.ir_version()) +
                    " is newer than supported (" + std::to_string(int(ox::Version::IR_VERSION)) +
                    ")");
    for (const auto& o : m_model.opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx") m_opset = o.version();
    if (m_opset <= 0) return fail("no opset import for the default ONNX domain");
    if (m_opset > kMaxOpset)
        return fail("opset " + std::to_string(m_opset) + " is newer than supported (" +
                    std::to_string(kMaxOpset) + ")");
    return {};
}

namespace {

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
        static const std::unordered_set<std::string> kWindowOps = {
            "Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool"};
        const bool window = kWindowOps.count(key) && (domain.empty() || domain == "ai.onnx");
        if (!schema || (!schema->has_data_propagation_function() && !window)) return schema;
        auto it = m_guarded.find(schema);
        if (it == m_guarded.end()) {
            auto copy = std::make_unique<ox::OpSchema>(*schema);
            if (schema->has_data_propagation_function())
                copy->PartialDataPropagationFunction(guarded(*schema));
            if (window)
                copy->TypeAndShapeInferenceFunction(
                    guardedWindow(*schema, key == "Conv" || key == "ConvTranspose"));
            it = m_guarded.emplace(schema, std::move(copy)).first;
        }
        return it->second.get();
    }

  private:
    // libonnx 1.12's Conv / ConvTranspose / pooling inference reads its int-list attributes
    // without checking their lengths against the input rank (ConvTranspose: a SEGV) and
    // divides by the strides (a zero stride: SIGFPE), found by structured fuzzing: it runs
    // only when every list fits and every value is in range (strides, dilations and kernel
    // at least 1). The importer reports the node itself otherwise.
    static ox::InferenceFunction guardedWindow(const ox::OpSchema& schema, bool hasWeight) {
        return [infer = schema.GetTypeAndShapeInferenceFunction(),
                hasWeight](ox::InferenceContext& ctx) {
            for (std::size_t i = 0; i < (hasWeight ? 2u : 1u); ++i) {
                const ox::TypeProto* type = i < ctx.getNumInputs() ? ctx.getInputType(i) : nullptr;
                if (!type || !type->has_tensor_type() || !type->tensor_type().has_shape()) return;
            }
            const int rank = ctx.getInputType(0)->tensor_type().shape().dim_size();
            if (rank < 3 ||
                (hasWeight && ctx.getInputType(1)->tensor_type().shape().dim_size() != rank))
                return;
            const std::int64_t sd = rank - 2;
            const std::pair<const char*, std::int64_t> lists[] = {
                {"kernel_shape", sd}, {"strides", sd},        {"dilations", sd},
                {"pads", 2 * sd},     {"output_padding", sd}, {"output_shape", sd}};
            for (const auto& [name, length] : lists) {
                const ox::AttributeProto* a = ctx.getAttribute(name);
                if (!a) continue;
                if (a->ints_size() != length &&
                    !(std::string(name) == "output_shape" && a->ints_size() == length + 2))
                    return;
                const std::int64_t least = std::string(name) == "pads" ||
                                                   std::string(name) == "output_padding" ||
                                                   std::string(name) == "output_shape"
                                               ? 0
                                               : 1;
                for (auto v : a->ints())
                    if (v < least || v > (std::int64_t(1) << 30)) return;
            }
            const ox::AttributeProto* g = ctx.getAttribute("group");
            if (g && (g->i() < 1 || g->i() > (std::int64_t(1) << 30))) return;
            infer(ctx);
        };
    }

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

} // namespace

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

Status Importer::readInitializersAndInputs() {
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
    m_batchParams = batchDimensionNames(m_graph);
    for (const auto& gi : m_graph.input()) {
        if (m_values.count(gi.name())) continue;
        if (auto f = readInput(gi)) return f;
    }
    return {};
}

namespace {

// Parses a model straight from the file through a zero-copy stream: a 100 MB model with
// weights is then read once, without an intermediate string (about 2x faster).
std::optional<Error> parseModelFile(const std::string& path, ox::ModelProto& model) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        return makeError(path, "", "is a directory, expected a file");
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return makeError(path, "", std::string("cannot open: ") + std::strerror(errno));
    bool parsed = false;
    {
        google::protobuf::io::FileInputStream in(fd, 1 << 20);
        parsed = model.ParseFromZeroCopyStream(&in) && in.GetErrno() == 0;
    }
    ::close(fd);
    if (!parsed || model.ByteSizeLong() == 0)
        return makeError(path, "", "not a valid ONNX model (protobuf parse failed)");
    return std::nullopt;
}

// Each named dimension of a graph input after its first axis (the batch), once, in order; a
// name also used on a batch axis is the batch, not among them.
std::vector<FreeDimension> namedDimensions(const ox::GraphProto& g) {
    std::set<std::string> initializers;
    for (const auto& t : g.initializer())
        initializers.insert(t.name());
    std::vector<FreeDimension> out;
    std::set<std::string> seen = batchDimensionNames(g);
    for (const auto& gi : g.input()) {
        if (initializers.count(gi.name()) || !gi.type().has_tensor_type()) continue;
        const auto& tt = gi.type().tensor_type();
        if (!tt.has_shape()) continue;
        for (int i = 1; i < tt.shape().dim_size(); ++i) {
            const auto& d = tt.shape().dim(i);
            if (d.has_dim_param() && !d.dim_param().empty() && seen.insert(d.dim_param()).second)
                out.push_back({d.dim_param(), gi.name(), i});
        }
    }
    return out;
}

std::string listed(const std::vector<FreeDimension>& dims, bool where) {
    std::string s;
    for (const FreeDimension& d : dims)
        s += (s.empty() ? "" : ", ") + d.name +
             (where ? " (input '" + d.input + "' axis " + std::to_string(d.axis) + ")" : "");
    return s;
}

} // namespace

// The user's values for the model's free dimensions (ImportOptions::dims), written into the
// graph inputs before shape inference, so every shape after them is concrete; the batch
// axis stays symbolic (it is N throughout). Unknown names and unbound dimensions are errors
// that list the model's free dimensions.
Status Importer::bindDimensions() {
    const std::vector<FreeDimension> named = namedDimensions(m_graph);
    const std::set<std::string> batchNames = batchDimensionNames(m_graph);
    for (const auto& [name, value] : m_opts.dims) {
        if (batchNames.count(name))
            return Failure{"dimension '" + name + "'",
                           "is the batch axis: its size is the batch (--batch), not bound here"};
        const std::string& wanted = name; // a structured binding cannot be captured (C++20)
        const bool known = std::any_of(named.begin(), named.end(),
                                       [&](const FreeDimension& d) { return d.name == wanted; });
        if (!known)
            return Failure{"dimension '" + name + "'",
                           named.empty() ? "the model has no free dimension"
                                         : "the model has no free dimension of that name (its "
                                           "free dimensions: " +
                                               listed(named, false) + ")"};
        if (value < 1) return Failure{"dimension '" + name + "'", "must be at least 1"};
    }
    std::vector<FreeDimension> unbound;
    for (const FreeDimension& d : named)
        if (!m_opts.dims.count(d.name)) unbound.push_back(d);
    if (!unbound.empty())
        return Failure{"input '" + unbound.front().input + "' axis " +
                           std::to_string(unbound.front().axis),
                       "free dimension" + std::string(unbound.size() > 1 ? "s " : " ") +
                           listed(unbound, true) + " left unbound; give each a size with --dim " +
                           "NAME=VALUE"};
    for (auto& gi : *m_graph.mutable_input()) {
        if (!gi.type().has_tensor_type() || !gi.type().tensor_type().has_shape()) continue;
        auto* shape = gi.mutable_type()->mutable_tensor_type()->mutable_shape();
        for (int i = 1; i < shape->dim_size(); ++i) {
            auto* d = shape->mutable_dim(i);
            if (!d->has_dim_param()) continue;
            const auto it = m_opts.dims.find(d->dim_param());
            if (it != m_opts.dims.end()) d->set_dim_value(it->second);
        }
    }
    m_net.dims = m_opts.dims;
    return {};
}

Status Importer::readInput(const ox::ValueInfoProto& gi) {
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
                return Failure{place, "fixed batch size " + std::to_string(d.dim_value()) +
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
                return Failure{place, "dimension " + std::to_string(i) + " is zero-sized"};
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
    if (e > kMaxTensorElements)
        return Failure{place, std::to_string(e) + " elements per sample is more than supported (" +
                                  std::to_string(kMaxTensorElements) + ")"};
    v.parts = {LayerInput{-1, gi.name(), std::max<std::int64_t>(e, 0)}};
    if (e >= 0) m_net.inputBytes[gi.name()] = e;
    m_values[gi.name()] = std::move(v);
    return {};
}

Status Importer::topologicalOrder(std::vector<int>& order) {
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
                return Failure{"node '" + nodeName(n) + "' (" + n.op_type() + ")",
                               "input '" + name +
                                   "' is produced by no node, initializer or graph input"};
            }
        }
    }
    // Kahn's algorithm, lowest node index first: keeps the file's order when it is sorted.
    std::priority_queue<int, std::vector<int>, std::greater<>> ready;
    for (int i = 0; i < count; ++i)
        if (indeg[size_t(i)] == 0) ready.push(i);
    order.clear();
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
                return Failure{"node '" + nodeName(n) + "' (" + n.op_type() + ")",
                               "the graph has a cycle through this node"};
            }
    }
    return {};
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

// --- dispatch ----------------------------------------------------------------------------

// The handler of a node with at least one activation input, by op type; nullptr for an
// op the importer does not know (handleUnknown).
Importer::NodeHandler Importer::nodeHandler(const std::string& op) {
    static const std::unordered_map<std::string, NodeHandler> kHandlers = [] {
        std::unordered_map<std::string, NodeHandler> h = {
            {"Conv", &Importer::makeConv},     {"ConvTranspose", &Importer::makeConvTranspose},
            {"Gemm", &Importer::makeMatMul},   {"MatMul", &Importer::makeMatMul},
            {"Einsum", &Importer::makeEinsum}, {"LSTM", &Importer::makeRecurrent},
            {"GRU", &Importer::makeRecurrent}, {"RNN", &Importer::makeRecurrent},
        };
        auto family = [&h](const std::unordered_set<std::string>& ops, NodeHandler f) {
            for (const auto& op : ops)
                h.emplace(op, f);
        };
        family(kPool, &Importer::makePool);
        family(kGlobalPool, &Importer::makeGlobalPool);
        family(kReduce, &Importer::handleReduce);
        family(kVector, &Importer::handleVector);
        family(kBinaryPointwise, &Importer::handleBinary);
        family(kUnaryPointwise, &Importer::foldPointwise);
        family(kPassThrough, &Importer::foldPointwise);
        family(kMovement, &Importer::handleMovement);
        return h;
    }();
    auto it = kHandlers.find(op);
    return it == kHandlers.end() ? nullptr : it->second;
}

Status Importer::processNode(int idx) {
    m_currentNode = idx;
    const auto& n = m_graph.node(idx);
    const std::string& op = n.op_type();
    bool anyActivation = false;
    for (int i = 0; i < n.input_size(); ++i)
        if (hasIn(n, i) && !in(n, i).isConst) anyActivation = true;
    // Constant subgraphs (weights, shape arithmetic) and Shape/Size of activations fold
    // away whatever their op: they are evaluated before the accelerator runs.
    if (op == "Constant" || op == "Shape" || op == "Size" || !anyActivation) return foldConstant(n);
    const bool defaultDomain = n.domain().empty() || n.domain() == "ai.onnx";
    const NodeHandler h = defaultDomain ? nodeHandler(op) : nullptr;
    return h ? (this->*h)(n) : handleUnknown(n);
}

Status Importer::foldConstant(const ox::NodeProto& n) {
    Outs outs(size_t(std::max(1, n.output_size())));
    if (auto f = propagate(n, outs)) return f;
    for (int i = 0; i < n.output_size(); ++i) {
        outs[size_t(i)].isConst = true;
        setOutput(n, i, std::move(outs[size_t(i)]));
    }
    m_net.folded.push_back(FoldRecord{nodeName(n), n.op_type(), ""});
    return {};
}

Status Importer::handleReduce(const ox::NodeProto& n) {
    const std::string& op = n.op_type();
    Outs outs(size_t(std::max(1, n.output_size())));
    if (auto f = propagate(n, outs)) return f;
    const Value& x = in(n, 0);
    // Mean / max over H and W of an NCHW map is global pooling (torchvision's
    // x.mean([2, 3])); any other reduction runs on the vector unit.
    if ((op == "ReduceMean" || op == "ReduceMax") && x.shape && x.shape->size() == 4) {
        std::optional<std::vector<std::int64_t>> axes = attrInts(n, "axes");
        if (!axes && hasIn(n, 1)) axes = concrete(in(n, 1).data);
        std::set<std::int64_t> red;
        if (axes)
            for (auto a : *axes) {
                auto ax = normAxis(a, 4, op);
                if (!ax) return fail(ax);
                red.insert(*ax);
            }
        if (red == std::set<std::int64_t>{2, 3}) return makeGlobalPool(n);
    }
    return makeGeneric(n, LayerKind::Vector, outs[0], 0);
}

Status Importer::handleVector(const ox::NodeProto& n) {
    const std::string& op = n.op_type();
    Outs outs(size_t(std::max(1, n.output_size())));
    if (auto f = propagate(n, outs)) return f;
    Count w = 0;
    if (op == "LayerNormalization" || op == "InstanceNormalization" || op == "GroupNormalization")
        for (int i = 1; i < n.input_size(); ++i)
            w += constElements(in(n, i));
    return makeGeneric(n, LayerKind::Vector, outs[0], w);
}

// Two or more activation operands from different producers: an Eltwise layer. If they all
// come from the same producers it is a function of one tensor (x * sigmoid(x), GELU's
// x * erf(x)): fold it.
Status Importer::handleBinary(const ox::NodeProto& n) {
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
        Outs outs(size_t(std::max(1, n.output_size())));
        if (auto f = propagate(n, outs)) return f;
        return makeGeneric(n, LayerKind::Eltwise, outs[0], 0);
    }
    return foldPointwise(n);
}

Status Importer::handleMovement(const ox::NodeProto& n) {
    Outs outs(size_t(std::max(1, n.output_size())));
    if (auto f = propagate(n, outs)) return f;
    return foldMovement(n, outs);
}

namespace {

// What to use instead of an op the importer does not schedule (the refusal names it).
std::string nearestSupported(const std::string& op) {
    static const std::unordered_map<std::string, std::string> kNearest = {
        {"If", "export with the branch taken (torch.jit.trace) so the graph has no control flow"},
        {"Loop", "an unrolled export (fixed trip count, torch.jit.trace)"},
        {"Scan", "an unrolled export (fixed sequence length) or LSTM / GRU / RNN"},
        {"ConvInteger", "Conv (export the float model)"},
        {"QLinearConv", "Conv (export the float model)"},
        {"MatMulInteger", "MatMul (export the float model)"},
        {"QLinearMatMul", "MatMul (export the float model)"},
        {"DeformConv", "Conv"},
        {"GridSample", "Resize"},
        {"RoiAlign", "MaxPool / AveragePool"},
        {"MaxRoiPool", "MaxPool"},
        {"MaxUnpool", "Resize (nearest) or ConvTranspose"},
        {"NonMaxSuppression", "cut the graph before post-processing"},
        {"Unique", "cut the graph before post-processing"},
        {"NonZero", "cut the graph before post-processing"},
        {"ScatterND", "Concat / Slice (static indices)"},
        {"ScatterElements", "Concat / Slice (static indices)"},
        {"GatherND", "Gather"},
        {"Compress", "Slice"},
        {"ReverseSequence", "Slice with a negative step"},
        {"STFT", "Conv (1-D)"},
        {"DFT", "MatMul with a constant DFT matrix"},
    };
    auto it = kNearest.find(op);
    return it != kNearest.end() ? it->second : "the same computation with default-domain ops";
}

} // namespace

Status Importer::handleUnknown(const ox::NodeProto& n) {
    const std::string& op = n.op_type();
    const bool defaultDomain = n.domain().empty() || n.domain() == "ai.onnx";
    const std::string& fb = m_opts.unknownOpFallback;
    if (fb.empty())
        return fail(std::string("unsupported operator") +
                    (defaultDomain ? "" : " (domain '" + n.domain() + "')") +
                    "; nearest supported: " + nearestSupported(op) +
                    "; or import with the fallback 'vector' (inspect --fallback vector) to "
                    "schedule it as a vector op of its output size");
    Outs outs(size_t(std::max(1, n.output_size())));
    if (auto f = propagate(n, outs)) return f; // falls back to ONNX's inferred shapes
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
    return fail("unsupported operator (and unknown fallback '" + fb +
                "'; expected vector, eltwise or fold)");
}

// --- the pipeline --------------------------------------------------------------------------

Result<Network> Importer::run() {
    // Nothing in the importer throws; libonnx and protobuf may (bad_alloc, libonnx's own
    // checks), and the engine never lets an exception cross its API.
    try {
        return runSteps();
    } catch (const std::exception& e) {
        return makeError(m_file, "", std::string("import failed: ") + e.what());
    }
}

Result<Network> Importer::runSteps() {
    Status st = checkVersions();
    if (!st) st = bindDimensions();
    // Our own inputs first: their dim_params name the batch for ONNX's shapes.
    if (!st) st = readInitializersAndInputs();
    // libonnx's shape inference expects sorted nodes (it crashes on some unsorted graphs),
    // so the graph is put in topological order first.
    std::vector<int> order;
    if (!st) st = topologicalOrder(order);
    if (st) return makeError(m_file, st->place, st->reason);
    sortNodes(order);
    runOnnxShapeInference();
    for (const auto& n : m_graph.node())
        ++m_net.opCounts[n.op_type()];
    for (int idx = 0; idx < m_graph.node_size(); ++idx) {
        if (Status f = processNode(idx)) {
            const auto& n = m_graph.node(idx);
            if (f->place.empty()) f->place = "node '" + nodeName(n) + "' (" + n.op_type() + ")";
            return makeError(m_file, f->place, f->reason);
        }
    }
    finish();
    return std::move(m_net);
}

void Importer::finish() {
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
    m_net.paramsCount -= m_sharedWeightBytes;
    m_net.sourcePath = m_file;
    m_net.name = std::filesystem::path(m_file).stem().string();
    if (m_net.name.empty()) m_net.name = m_graph.name();
}

} // namespace onnximport

using onnximport::Importer;
namespace ox = ONNX_NAMESPACE;

Result<Network> importOnnxBytes(const std::string& bytes, const std::string& file,
                                const ImportOptions& opts) {
    ox::ModelProto model;
    if (bytes.empty() || !model.ParseFromString(bytes))
        return makeError(file, "", "not a valid ONNX model (protobuf parse failed)");
    return Importer(model, file, opts).run();
}

Result<Network> importOnnx(const std::string& path, const ImportOptions& opts) {
    ox::ModelProto model;
    if (auto e = onnximport::parseModelFile(path, model)) return *e;
    return Importer(model, path, opts).run();
}

namespace {

// The KV cache inputs of a parsed graph (kvCacheInputs).
std::vector<KvCacheInput> kvCacheInputsOf(const ox::GraphProto& g) {
    std::set<std::string> initializers, outputs;
    for (const auto& t : g.initializer())
        initializers.insert(t.name());
    for (const auto& o : g.output())
        outputs.insert(o.name());
    // A value's single pass-through consumer, followed to the graph output it becomes.
    std::map<std::string, std::string> passThrough;
    for (const auto& n : g.node())
        if ((n.op_type() == "Identity" || n.op_type() == "Cast") && n.input_size() == 1 &&
            n.output_size() == 1)
            passThrough[n.input(0)] = n.output(0);
    const auto graphOutput = [&](std::string v) {
        for (int hops = 0; hops < 4 && !outputs.count(v) && passThrough.count(v); ++hops)
            v = passThrough.at(v);
        return outputs.count(v) ? v : std::string();
    };
    std::vector<KvCacheInput> out;
    for (const auto& gi : g.input()) {
        if (initializers.count(gi.name()) || !gi.type().has_tensor_type() ||
            !gi.type().tensor_type().has_shape())
            continue;
        const auto& shape = gi.type().tensor_type().shape();
        for (const auto& n : g.node()) {
            if (n.op_type() != "Concat" || n.output_size() != 1) continue;
            if (std::find(n.input().begin(), n.input().end(), gi.name()) == n.input().end())
                continue;
            const std::string output = graphOutput(n.output(0));
            if (output.empty()) continue;
            std::int64_t axis = 0;
            for (const auto& a : n.attribute())
                if (a.name() == "axis") axis = a.i();
            if (axis < 0) axis += shape.dim_size();
            if (axis < 0 || axis >= shape.dim_size()) continue;
            const auto& d = shape.dim(int(axis));
            out.push_back({gi.name(), output, int(axis), d.has_dim_param() ? d.dim_param() : "",
                           d.has_dim_value() ? d.dim_value() : 0});
            break;
        }
    }
    return out;
}

} // namespace

Result<GraphInterface> graphInterface(const std::string& path) {
    std::string ext = std::filesystem::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    if (ext != ".onnx") return GraphInterface{};
    ox::ModelProto model;
    if (auto e = onnximport::parseModelFile(path, model)) return *e;
    return GraphInterface{onnximport::namedDimensions(model.graph()),
                          kvCacheInputsOf(model.graph())};
}

Result<std::vector<FreeDimension>> freeDimensions(const std::string& path) {
    auto g = graphInterface(path);
    if (!g) return g.error();
    return std::move(g->free);
}

Result<std::vector<KvCacheInput>> kvCacheInputs(const std::string& path) {
    auto g = graphInterface(path);
    if (!g) return g.error();
    return std::move(g->kvCache);
}

Result<std::pair<std::string, std::int64_t>> parseDimBinding(const std::string& text) {
    const auto eq = text.find('=');
    const std::string name = text.substr(0, eq);
    if (eq == std::string::npos || name.empty())
        return makeError("--dim", text, "expected NAME=VALUE, e.g. seq=2048");
    const std::string v = text.substr(eq + 1);
    char* end = nullptr;
    errno = 0;
    const long long value = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || errno != 0 || value < 1 || value > (1LL << 31))
        return makeError("--dim", text, "the value must be a whole number from 1 to 2^31");
    return std::pair(name, std::int64_t(value));
}

} // namespace tilescope
