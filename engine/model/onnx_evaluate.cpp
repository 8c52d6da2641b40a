// The ONNX importer's shape evaluator: small integer (and float) tensors computed from known
// dimensions, so any Reshape / Expand / Tile / Pad / Slice argument that a model computes
// from shapes (Shape -> Gather -> arithmetic -> Concat, torch's reversed pad lists, window
// counts) resolves. Elements are Dims: a batch-carrying dimension stays v * N through the
// arithmetic that keeps it a multiple of N. Tensors above kMaxEvalElements are not evaluated.
#include "model/onnx_importer.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

namespace tilescope::onnximport {

namespace {

constexpr std::int64_t kMaxEvalElements = 4096;

// A small constant tensor: concrete dims, row-major elements, ints (Dims) or floats.
struct Small {
    std::vector<std::int64_t> dims;
    std::vector<Dim> i;    // integer elements (may carry N)
    std::vector<double> f; // float elements (never carry N)
    bool isFloat = false;
    std::int64_t size() const { return isFloat ? std::int64_t(f.size()) : std::int64_t(i.size()); }
};

std::int64_t count(const std::vector<std::int64_t>& dims) {
    std::int64_t c = 1;
    for (auto d : dims)
        if (d < 0 || __builtin_mul_overflow(c, d, &c)) return -1;
    return c;
}

std::optional<Small> fromValue(const Value& v) {
    if (!v.shape) return std::nullopt;
    Small s;
    for (const Dim& d : *v.shape) {
        if (!d.known || d.n) return std::nullopt;
        s.dims.push_back(d.v);
    }
    const std::int64_t c = count(s.dims);
    if (v.data && std::int64_t(v.data->size()) == c) {
        s.i = *v.data;
    } else if (v.fdata && std::int64_t(v.fdata->size()) == c) {
        s.f = *v.fdata;
        s.isFloat = true;
    } else {
        return std::nullopt;
    }
    return s;
}

void toValue(Small s, Value& v) {
    Shape sh;
    for (auto d : s.dims)
        sh.push_back(Dim::of(d));
    v.shape = sh;
    v.why.clear();
    if (s.isFloat) {
        v.fdata = std::move(s.f);
        v.data.reset();
    } else {
        v.data = std::move(s.i);
        v.fdata.reset();
    }
}

// Row-major strides and index helpers.
std::vector<std::int64_t> strides(const std::vector<std::int64_t>& dims) {
    std::vector<std::int64_t> st(dims.size(), 1);
    for (size_t k = dims.size(); k-- > 1;)
        st[k - 1] = st[k] * dims[k];
    return st;
}

// Elements gathered by a per-output-index function of the output coordinates; nothing
// when the result would be larger than the evaluator handles.
std::optional<Small>
build(const Small& like, std::vector<std::int64_t> dims,
      const std::function<std::int64_t(const std::vector<std::int64_t>&)>& source) {
    Small out;
    out.isFloat = like.isFloat;
    out.dims = std::move(dims);
    const std::int64_t c = count(out.dims);
    if (c < 0 || c > kMaxEvalElements) return std::nullopt;
    std::vector<std::int64_t> idx(out.dims.size(), 0);
    for (std::int64_t e = 0; e < c; ++e) {
        const std::int64_t k = source(idx);
        if (like.isFloat)
            out.f.push_back(k >= 0 && k < like.size() ? like.f[size_t(k)] : 0.0);
        else
            out.i.push_back(k >= 0 && k < like.size() ? like.i[size_t(k)] : Dim::unknown());
        for (size_t a = out.dims.size(); a-- > 0;) {
            if (++idx[a] < out.dims[a]) break;
            idx[a] = 0;
        }
    }
    return out;
}

std::optional<std::vector<std::int64_t>> ints(const std::optional<Small>& s) {
    if (!s || s->isFloat) return std::nullopt;
    std::vector<std::int64_t> v;
    for (const Dim& d : s->i) {
        if (!d.known || d.n) return std::nullopt;
        v.push_back(d.v);
    }
    return v;
}

using In = std::vector<std::optional<Small>>;
using Eval = std::function<std::optional<Small>(const ox::NodeProto&, const In&, std::int64_t)>;

std::optional<std::int64_t> axisOf(std::int64_t a, size_t rank) {
    const auto r = std::int64_t(rank);
    if (a < -r || a >= r) return std::nullopt;
    return a < 0 ? a + r : a;
}

// --- element-wise --------------------------------------------------------------------------

Dim mod(Dim a, Dim b, bool fmod) {
    if (!a.known || !b.known || b.n || b.v == 0) return Dim::unknown();
    if (b.v == -1) return Dim::of(0);
    if (a.n) return a.v % b.v == 0 ? Dim::of(0) : Dim::unknown();
    std::int64_t r = a.v % b.v;
    if (!fmod && r != 0 && ((r < 0) != (b.v < 0))) r += b.v;
    return Dim::of(r);
}

// Comparison of Dims: known only when both are plain or both the same multiple of N.
std::optional<int> compare(Dim a, Dim b) {
    if (!a.known || !b.known) return std::nullopt;
    if (a.n != b.n) return std::nullopt;
    if (a.n && a.v != b.v) return a.v < b.v ? -1 : 1; // N >= 1
    return a.v < b.v ? -1 : (a.v > b.v ? 1 : 0);
}

std::optional<double> asDouble(const Small& s, size_t k) {
    if (s.isFloat) return s.f[k];
    const Dim& d = s.i[k];
    if (!d.known || d.n) return std::nullopt;
    return double(d.v);
}

// Numpy broadcasting of inputs, calling f with each set of flat source indices.
std::optional<std::vector<std::int64_t>> broadcastDims(const In& in) {
    size_t rank = 0;
    for (const auto& s : in)
        rank = std::max(rank, s->dims.size());
    std::vector<std::int64_t> out(rank, 1);
    for (const auto& s : in)
        for (size_t k = 0; k < s->dims.size(); ++k) {
            const size_t a = rank - s->dims.size() + k;
            const auto d = s->dims[k];
            if (d == out[a] || d == 1) continue;
            if (out[a] != 1) return std::nullopt;
            out[a] = d;
        }
    return out;
}

std::int64_t sourceIndex(const Small& s, const std::vector<std::int64_t>& idx) {
    const auto st = strides(s.dims);
    std::int64_t k = 0;
    for (size_t a = 0; a < s.dims.size(); ++a) {
        const size_t o = idx.size() - s.dims.size() + a;
        k += (s.dims[a] == 1 ? 0 : idx[o]) * st[a];
    }
    return k;
}

double floatOp(const std::string& op, const std::vector<double>& v) {
    static const std::unordered_map<std::string, double (*)(const std::vector<double>&)> kOps = {
        {"Add", [](const std::vector<double>& v) { return v[0] + v[1]; }},
        {"Sub", [](const std::vector<double>& v) { return v[0] - v[1]; }},
        {"Mul", [](const std::vector<double>& v) { return v[0] * v[1]; }},
        {"Div", [](const std::vector<double>& v) { return v[1] != 0 ? v[0] / v[1] : 0.0; }},
        {"Max", [](const std::vector<double>& v) { return std::max(v[0], v[1]); }},
        {"Min", [](const std::vector<double>& v) { return std::min(v[0], v[1]); }},
        {"Mod", [](const std::vector<double>& v) { return std::fmod(v[0], v[1]); }},
        {"Pow", [](const std::vector<double>& v) { return std::pow(v[0], v[1]); }},
        {"Floor", [](const std::vector<double>& v) { return std::floor(v[0]); }},
        {"Ceil", [](const std::vector<double>& v) { return std::ceil(v[0]); }},
        {"Round", [](const std::vector<double>& v) { return std::nearbyint(v[0]); }},
        {"Neg", [](const std::vector<double>& v) { return -v[0]; }},
        {"Abs", [](const std::vector<double>& v) { return std::fabs(v[0]); }},
        {"Sqrt", [](const std::vector<double>& v) { return std::sqrt(v[0]); }},
        {"Reciprocal", [](const std::vector<double>& v) { return v[0] != 0 ? 1 / v[0] : 0.0; }},
        {"Sign", [](const std::vector<double>& v) { return double((v[0] > 0) - (v[0] < 0)); }},
    };
    auto it = kOps.find(op);
    return it == kOps.end() ? v[0] : it->second(v);
}

Dim intOp(const std::string& op, Dim a, Dim b, bool fmod) {
    if (op == "Add") return add(a, b);
    if (op == "Sub") return sub(a, b);
    if (op == "Mul") return mul(a, b);
    if (op == "Div") return div(a, b); // ONNX integer Div truncates
    if (op == "Mod") return mod(a, b, fmod);
    if (op == "Max" || op == "Min") {
        const auto c3 = compare(a, b);
        return !c3 ? Dim::unknown() : ((op == "Max") == (*c3 >= 0) ? a : b);
    }
    if (op == "Neg") return sub(Dim::of(0), a);
    if (op == "Abs") return a.known && a.v < 0 ? sub(Dim::of(0), a) : a;
    if (op == "Floor" || op == "Ceil" || op == "Round" || op == "Identity") return a;
    if (op == "Sign" && a.known) return Dim::of((a.v > 0) - (a.v < 0));
    return Dim::unknown();
}

// Comparisons and logic give 0 / 1 (unknown when N's value would decide).
std::optional<int> predicate(const std::string& op, const In& in, const std::vector<size_t>& k,
                             bool anyFloat) {
    if (op == "And" || op == "Or" || op == "Xor" || op == "Not") {
        auto a = asDouble(*in[0], k[0]);
        auto b = in.size() > 1 ? asDouble(*in[1], k[1]) : std::optional<double>(0.0);
        if (!a || !b) return std::nullopt;
        const bool x = *a != 0, y = *b != 0;
        return op == "And" ? (x && y) : op == "Or" ? (x || y) : op == "Xor" ? (x != y) : !x;
    }
    std::optional<int> c3;
    if (anyFloat) {
        auto a = asDouble(*in[0], k[0]), b = asDouble(*in[1], k[1]);
        if (a && b) c3 = *a < *b ? -1 : (*a > *b ? 1 : 0);
    } else {
        c3 = compare(in[0]->i[k[0]], in[1]->i[k[1]]);
    }
    if (!c3) return std::nullopt;
    return op == "Equal"         ? *c3 == 0
           : op == "Less"        ? *c3 < 0
           : op == "Greater"     ? *c3 > 0
           : op == "LessOrEqual" ? *c3 <= 0
                                 : *c3 >= 0;
}

// One output element of Where / arithmetic / a predicate from its source elements k.
bool elementOf(const ox::NodeProto& n, const In& in, const std::vector<size_t>& k, bool anyFloat,
               Small& out) {
    const std::string& op = n.op_type();
    if (op == "Where") {
        const auto cond = asDouble(*in[0], k[0]);
        const size_t pick = cond ? (*cond != 0 ? 1 : 2) : 0;
        if (!out.isFloat) {
            out.i.push_back(pick ? in[pick]->i[k[pick]] : Dim::unknown());
            return true;
        }
        const auto v = pick ? asDouble(*in[pick], k[pick]) : std::nullopt;
        if (v) out.f.push_back(*v);
        return v.has_value();
    }
    static const std::unordered_set<std::string> kPredicates = {
        "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Not"};
    if (kPredicates.count(op)) {
        const auto r = predicate(op, in, k, anyFloat);
        out.i.push_back(r ? Dim::of(*r) : Dim::unknown());
    } else if (out.isFloat) {
        std::vector<double> v;
        for (size_t a = 0; a < in.size(); ++a) {
            auto x = asDouble(*in[a], k[a]);
            if (!x) return false;
            v.push_back(*x);
        }
        out.f.push_back(floatOp(op, v));
    } else {
        const Dim b = in.size() > 1 ? in[1]->i[k[1]] : Dim::of(0);
        out.i.push_back(intOp(op, in[0]->i[k[0]], b, attrInt(n, "fmod", 0) != 0));
    }
    return true;
}

std::optional<Small> elementwise(const ox::NodeProto& n, const In& in, std::int64_t) {
    const std::string& op = n.op_type();
    for (const auto& s : in)
        if (!s) return std::nullopt;
    static const std::unordered_set<std::string> kUnary = {
        "Neg", "Abs", "Floor", "Ceil", "Round", "Sqrt", "Reciprocal", "Sign", "Not", "Identity"};
    const size_t arity = op == "Where" ? 3 : (kUnary.count(op) ? 1 : 2);
    if (in.size() != arity) return std::nullopt; // a malformed node: not evaluated
    auto dims = broadcastDims(in);
    if (!dims || count(*dims) < 0 || count(*dims) > kMaxEvalElements) return std::nullopt;
    bool anyFloat = false;
    for (const auto& s : in)
        anyFloat = anyFloat || s->isFloat;
    static const std::unordered_set<std::string> kIntResult = {
        "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Not"};
    Small out;
    out.dims = *dims;
    out.isFloat =
        op == "Where" ? in[1]->isFloat || in[2]->isFloat : anyFloat && !kIntResult.count(op);
    const std::int64_t c = count(out.dims);
    std::vector<std::int64_t> idx(out.dims.size(), 0);
    std::vector<size_t> k(in.size());
    for (std::int64_t e = 0; e < c; ++e) {
        for (size_t a = 0; a < in.size(); ++a)
            k[a] = size_t(sourceIndex(*in[a], idx));
        if (!elementOf(n, in, k, anyFloat, out)) return std::nullopt;
        for (size_t a = out.dims.size(); a-- > 0;) {
            if (++idx[a] < out.dims[a]) break;
            idx[a] = 0;
        }
    }
    return out;
}

// --- data movement ---------------------------------------------------------------------------

std::optional<Small> cast(const ox::NodeProto& n, const In& in, std::int64_t) {
    if (!in[0]) return std::nullopt;
    Small s = *in[0];
    const auto to = attrInt(n, "to", 0);
    const bool toFloat = to == ox::TensorProto::FLOAT || to == ox::TensorProto::DOUBLE ||
                         to == ox::TensorProto::FLOAT16 || to == ox::TensorProto::BFLOAT16;
    if (toFloat && !s.isFloat) {
        for (const Dim& d : s.i) {
            if (!d.known || d.n) return std::nullopt;
            s.f.push_back(double(d.v));
        }
        s.i.clear();
        s.isFloat = true;
    } else if (!toFloat && s.isFloat) {
        for (double x : s.f) {
            if (to == ox::TensorProto::BOOL)
                s.i.push_back(Dim::of(x != 0));
            else if (std::isfinite(x) && std::fabs(x) < 9e18)
                s.i.push_back(Dim::of(std::int64_t(std::trunc(x))));
            else
                s.i.push_back(Dim::unknown());
        }
        s.f.clear();
        s.isFloat = false;
    }
    return s;
}

// Reshape-like ops whose output shape the shape rule already found: same elements.
std::optional<Small> sameElements(const ox::NodeProto&, const In& in, std::int64_t) {
    return in[0];
}

std::optional<Small> transpose(const ox::NodeProto& n, const In& in, std::int64_t) {
    if (!in[0]) return std::nullopt;
    const Small& x = *in[0];
    std::vector<std::int64_t> perm;
    if (auto p = attrInts(n, "perm"))
        perm = *p;
    else
        for (std::int64_t a = std::int64_t(x.dims.size()) - 1; a >= 0; --a)
            perm.push_back(a);
    if (perm.size() != x.dims.size()) return std::nullopt;
    std::vector<std::int64_t> dims;
    for (auto p : perm) {
        if (p < 0 || p >= std::int64_t(x.dims.size())) return std::nullopt;
        dims.push_back(x.dims[size_t(p)]);
    }
    const auto st = strides(x.dims);
    return build(x, dims, [&](const std::vector<std::int64_t>& idx) {
        std::int64_t k = 0;
        for (size_t a = 0; a < idx.size(); ++a)
            k += idx[a] * st[size_t(perm[a])];
        return k;
    });
}

std::optional<Small> gather(const ox::NodeProto& n, const In& in, std::int64_t) {
    if (in.size() < 2) return std::nullopt; // a malformed node: not evaluated
    auto ix = ints(in[1]);
    if (!in[0] || !ix) return std::nullopt;
    const Small& x = *in[0];
    const auto ax = axisOf(attrInt(n, "axis", 0), x.dims.size());
    if (!ax) return std::nullopt;
    const size_t a = size_t(*ax);
    std::vector<std::int64_t> dims(x.dims.begin(), x.dims.begin() + std::ptrdiff_t(a));
    dims.insert(dims.end(), in[1]->dims.begin(), in[1]->dims.end());
    dims.insert(dims.end(), x.dims.begin() + std::ptrdiff_t(a) + 1, x.dims.end());
    const auto st = strides(x.dims);
    const size_t ir = in[1]->dims.size();
    const auto ist = strides(in[1]->dims);
    return build(x, dims, [&](const std::vector<std::int64_t>& idx) -> std::int64_t {
        std::int64_t k = 0, flat = 0;
        for (size_t q = 0; q < ir; ++q)
            flat += idx[a + q] * ist[q];
        std::int64_t j = (*ix)[size_t(flat)];
        if (j < 0) j += x.dims[a];
        if (j < 0 || j >= x.dims[a]) return -1;
        for (size_t p = 0; p < a; ++p)
            k += idx[p] * st[p];
        k += j * st[a];
        for (size_t p = a + 1; p < x.dims.size(); ++p)
            k += idx[p + ir - 1] * st[p];
        return k;
    });
}

std::optional<Small> slice(const ox::NodeProto& n, const In& in, std::int64_t opset) {
    if (!in[0]) return std::nullopt;
    const Small& x = *in[0];
    std::optional<std::vector<std::int64_t>> starts, ends, axes, steps;
    if (opset >= 10) {
        starts = ints(in.size() > 1 ? in[1] : std::nullopt);
        ends = ints(in.size() > 2 ? in[2] : std::nullopt);
        if (in.size() > 3 && in[3]) axes = ints(in[3]);
        if (in.size() > 4 && in[4]) steps = ints(in[4]);
    } else {
        starts = attrInts(n, "starts"), ends = attrInts(n, "ends"), axes = attrInts(n, "axes");
    }
    if (!starts || !ends || starts->size() != ends->size()) return std::nullopt;
    const size_t r = x.dims.size();
    std::vector<std::int64_t> b(r, 0), st(r, 1), dims = x.dims;
    for (size_t k = 0; k < starts->size(); ++k) {
        const auto ax = axisOf(axes && k < axes->size() ? (*axes)[k] : std::int64_t(k), r);
        std::int64_t step = steps && k < steps->size() ? (*steps)[k] : 1;
        if (!ax || step == 0) return std::nullopt;
        const std::int64_t d = x.dims[size_t(*ax)];
        // One step past the axis is as good as any larger one (and cannot overflow).
        step = std::clamp(step, -(d + 1), d + 1);
        auto clampIdx = [&](std::int64_t v) {
            if (v < 0) v += d;
            return step > 0 ? std::clamp(v, std::int64_t(0), d)
                            : std::clamp(v, std::int64_t(-1), d - 1);
        };
        const std::int64_t s0 = clampIdx((*starts)[k]), e0 = clampIdx((*ends)[k]);
        const std::int64_t len = step > 0 ? std::max<std::int64_t>(0, (e0 - s0 + step - 1) / step)
                                          : std::max<std::int64_t>(0, (s0 - e0 - step - 1) / -step);
        b[size_t(*ax)] = s0, st[size_t(*ax)] = step, dims[size_t(*ax)] = len;
    }
    const auto xs = strides(x.dims);
    return build(x, dims, [&](const std::vector<std::int64_t>& idx) {
        std::int64_t k = 0;
        for (size_t a = 0; a < r; ++a)
            k += (b[a] + idx[a] * st[a]) * xs[a];
        return k;
    });
}

std::optional<Small> concat(const ox::NodeProto& n, const In& in, std::int64_t) {
    std::vector<const Small*> parts;
    for (const auto& s : in) {
        if (!s) return std::nullopt;
        if (s->size() > 0 || !s->dims.empty()) parts.push_back(&*s);
    }
    if (parts.empty()) return std::nullopt;
    const Small& first = *parts[0];
    const auto ax = axisOf(attrInt(n, "axis", 0), first.dims.size());
    if (!ax) return std::nullopt;
    const size_t a = size_t(*ax);
    std::vector<std::int64_t> dims = first.dims;
    dims[a] = 0;
    bool anyFloat = false;
    for (const Small* p : parts) {
        if (p->dims.size() != dims.size()) return std::nullopt;
        dims[a] += p->dims[a];
        anyFloat = anyFloat || p->isFloat;
    }
    if (anyFloat)
        for (const Small* p : parts)
            if (!p->isFloat) return std::nullopt;
    const std::int64_t outer =
        count(std::vector<std::int64_t>(dims.begin(), dims.begin() + std::ptrdiff_t(a)));
    Small out;
    out.dims = dims;
    out.isFloat = anyFloat;
    for (std::int64_t o = 0; o < outer; ++o)
        for (const Small* p : parts) {
            const std::int64_t chunk = outer > 0 ? p->size() / outer : 0;
            for (std::int64_t k = o * chunk; k < (o + 1) * chunk; ++k) {
                if (anyFloat)
                    out.f.push_back(p->f[size_t(k)]);
                else
                    out.i.push_back(p->i[size_t(k)]);
            }
        }
    return out;
}

std::optional<Small> range(const ox::NodeProto&, const In& in, std::int64_t) {
    if (in.size() < 3 || !in[0] || !in[1] || !in[2]) return std::nullopt;
    auto st = asDouble(*in[0], 0), li = asDouble(*in[1], 0), de = asDouble(*in[2], 0);
    if (!st || !li || !de || *de == 0 || in[0]->size() != 1) return std::nullopt;
    const double steps = std::ceil((*li - *st) / *de);
    if (!std::isfinite(steps) || steps > double(kMaxEvalElements)) return std::nullopt;
    const auto len = std::int64_t(std::max(0.0, steps));
    Small s;
    s.dims = {len};
    s.isFloat = in[0]->isFloat;
    for (std::int64_t k = 0; k < len; ++k) {
        const double v = *st + double(k) * *de;
        if (s.isFloat)
            s.f.push_back(v);
        else
            s.i.push_back(Dim::of(std::int64_t(v)));
    }
    return s;
}

std::optional<Small> constantOfShape(const ox::NodeProto& n, const In& in, std::int64_t) {
    auto dims = ints(in[0]);
    if (!dims || count(*dims) < 0 || count(*dims) > kMaxEvalElements) return std::nullopt;
    Small s;
    s.dims = *dims;
    const std::int64_t c = count(*dims);
    const auto* a = attr(n, "value");
    if (a) {
        if (auto iv = tensorInts(a->t()); iv && !iv->empty()) {
            s.i.assign(size_t(c), (*iv)[0]);
            return s;
        }
        if (auto fv = tensorFloats(a->t()); fv && !fv->empty()) {
            s.isFloat = true;
            s.f.assign(size_t(c), (*fv)[0]);
            return s;
        }
        return std::nullopt;
    }
    s.isFloat = true; // default: float 0
    s.f.assign(size_t(c), 0.0);
    return s;
}

std::optional<Small> expand(const ox::NodeProto&, const In& in, std::int64_t) {
    auto target = ints(in.size() > 1 ? in[1] : std::nullopt);
    if (!in[0] || !target) return std::nullopt;
    const size_t r = std::max(in[0]->dims.size(), target->size());
    std::vector<std::int64_t> dims(r, 1);
    for (size_t k = 0; k < r; ++k) {
        const std::int64_t a =
            k + in[0]->dims.size() >= r ? in[0]->dims[k + in[0]->dims.size() - r] : 1;
        const std::int64_t b = k + target->size() >= r ? (*target)[k + target->size() - r] : 1;
        if (a != b && a != 1 && b != 1) return std::nullopt;
        dims[k] = a == 1 ? b : a;
    }
    const Small& x = *in[0];
    return build(x, dims,
                 [&](const std::vector<std::int64_t>& idx) { return sourceIndex(x, idx); });
}

std::optional<Small> reduce(const ox::NodeProto& n, const In& in, std::int64_t) {
    // Only full reductions of integer data (numel = ReduceProd(Shape(x))).
    if (!in[0] || in[0]->isFloat || attr(n, "axes") || (in.size() > 1 && in[1]))
        return std::nullopt;
    const std::string& op = n.op_type();
    Dim r = op == "ReduceProd" ? Dim::of(1) : Dim::of(0);
    for (size_t k = 0; k < in[0]->i.size(); ++k) {
        const Dim d = in[0]->i[k];
        if (op == "ReduceProd")
            r = mul(r, d);
        else if (op == "ReduceSum")
            r = add(r, d);
        else if (op == "ReduceMax" || op == "ReduceMin") {
            if (k == 0) {
                r = d;
                continue;
            }
            const auto c3 = compare(r, d);
            if (!c3) return std::nullopt;
            if ((op == "ReduceMax") == (*c3 < 0)) r = d;
        } else
            return std::nullopt;
    }
    Small s;
    if (attrInt(n, "keepdims", 1)) s.dims.assign(in[0]->dims.size(), 1);
    s.i = {r};
    return s;
}

const std::unordered_map<std::string, Eval>& evaluators() {
    static const std::unordered_map<std::string, Eval> kEval = [] {
        std::unordered_map<std::string, Eval> e;
        for (const char* op :
             {"Add",        "Sub",  "Mul",   "Div",   "Mod",     "Max",         "Min",
              "Pow",        "Neg",  "Abs",   "Floor", "Ceil",    "Round",       "Sqrt",
              "Reciprocal", "Sign", "Equal", "Less",  "Greater", "LessOrEqual", "GreaterOrEqual",
              "And",        "Or",   "Xor",   "Not",   "Where"})
            e.emplace(op, elementwise);
        for (const char* op : {"Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze"})
            e.emplace(op, sameElements);
        e.emplace("Cast", cast);
        e.emplace("Transpose", transpose);
        e.emplace("Gather", gather);
        e.emplace("Slice", slice);
        e.emplace("Concat", concat);
        e.emplace("Range", range);
        e.emplace("ConstantOfShape", constantOfShape);
        e.emplace("Expand", expand);
        for (const char* op : {"ReduceProd", "ReduceSum", "ReduceMax", "ReduceMin"})
            e.emplace(op, reduce);
        return e;
    }();
    return kEval;
}

} // namespace

// Called after the shape rule: when every present input is a small known tensor, computes
// the output's contents (and its shape, where the rule left it unknown).
void Importer::evaluate(const ox::NodeProto& n, Outs& outs) {
    const auto it = evaluators().find(n.op_type());
    if (it == evaluators().end() || outs.empty()) return;
    In inputs;
    bool any = false;
    for (int k = 0; k < n.input_size(); ++k) {
        if (!hasIn(n, k)) {
            inputs.emplace_back();
            continue;
        }
        auto s = fromValue(in(n, k));
        if (!s) return; // e.g. a Slice of an activation: only its shape matters
        any = true;
        inputs.push_back(std::move(s));
    }
    if (!any) return;
    auto out = it->second(n, inputs, m_opset);
    if (!out || out->size() > kMaxEvalElements) return;
    const std::optional<Shape>& ruled = outs[0].shape;
    if (ruled && fullyKnown(*ruled) && perSampleElements(*ruled) == out->size() &&
        n.op_type() != "Range" && n.op_type() != "ConstantOfShape") {
        // Keep the rule's shape (it may say where the batch is); take the contents.
        Small s = std::move(*out);
        if (s.isFloat)
            outs[0].fdata = std::move(s.f), outs[0].data.reset();
        else
            outs[0].data = std::move(s.i), outs[0].fdata.reset();
        return;
    }
    toValue(std::move(*out), outs[0]);
}

} // namespace tilescope::onnximport
