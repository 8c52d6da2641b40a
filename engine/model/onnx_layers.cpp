// Scheduled layers and folds of the ONNX importer: Conv, Pool, matrix products, vector /
// element-wise layers, pointwise and data-movement folds.
#include "model/onnx_importer.h"

#include <algorithm>
#include <optional>
#include <tuple>

namespace tilescope::onnximport {

Status Importer::addLayer(Layer layer, const ox::NodeProto& n, const Shape& outShape) {
    layer.name = layerName(n);
    layer.op = n.op_type();
    if (layer.outputBytesPerSample() <= 0) return fail("zero-sized output");
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
    return {};
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

namespace {

// Spatial geometry shared by Conv and Pool: output extent from input, kernel, stride,
// dilation and padding (explicit pads or auto_pad), floor or ceil.
struct Axis {
    std::int64_t in = 1, k = 1, s = 1, d = 1, pad = 0, out = 1;
};
Axis spatial(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t d, std::int64_t padBegin,
             std::int64_t padEnd, const std::string& autoPad, bool ceilMode) {
    constexpr std::int64_t kMax = std::int64_t(1) << 30;
    auto inRange = [&](std::int64_t v, std::int64_t lo) { return v >= lo && v <= kMax; };
    if (!inRange(in, 0) || !inRange(k, 1) || !inRange(s, 1) || !inRange(d, 1) ||
        !inRange(padBegin, -kMax) || !inRange(padEnd, -kMax))
        return Axis{in, k, s, d, 0, -1}; // out -1: out of range (found by structured fuzzing)
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

// Strides, dilations and pads of a 1-D or 2-D window (sd spatial dims).
struct Window {
    std::vector<std::int64_t> strides, dil, pads;
    std::string autoPad;
};
Result<Window> windowAttrs(const ox::NodeProto& n, size_t sd) {
    Window w;
    auto strides = intsOfLength(n, "strides", std::vector<std::int64_t>(sd, 1));
    if (!strides) return strides.error();
    auto dil = intsOfLength(n, "dilations", std::vector<std::int64_t>(sd, 1));
    if (!dil) return dil.error();
    auto pads = intsOfLength(n, "pads", std::vector<std::int64_t>(2 * sd, 0));
    if (!pads) return pads.error();
    w.strides = *strides, w.dil = *dil, w.pads = *pads;
    w.autoPad = attrString(n, "auto_pad", "NOTSET");
    return w;
}

// Sets l's geometry fields from per-axis values, each checked to fit an int.
Status setGeometry(Layer& l, std::int64_t inC, std::int64_t outC, const Axis& ah, const Axis& aw) {
    const std::pair<int*, std::pair<std::int64_t, const char*>> fields[] = {
        {&l.inC, {inC, "channels"}},        {&l.inH, {ah.in, "height"}},
        {&l.inW, {aw.in, "width"}},         {&l.outC, {outC, "output channels"}},
        {&l.outH, {ah.out, "height"}},      {&l.outW, {aw.out, "width"}},
        {&l.kernelH, {ah.k, "kernel"}},     {&l.kernelW, {aw.k, "kernel"}},
        {&l.strideH, {ah.s, "stride"}},     {&l.strideW, {aw.s, "stride"}},
        {&l.padH, {ah.pad, "padding"}},     {&l.padW, {aw.pad, "padding"}},
        {&l.dilationH, {ah.d, "dilation"}}, {&l.dilationW, {aw.d, "dilation"}},
    };
    for (const auto& [field, v] : fields) {
        auto r = narrow(v.first, v.second);
        if (!r) return fail(r);
        *field = *r;
    }
    return {};
}

} // namespace

namespace {

// Folds per-axis geometry into the Layer's two spatial axes: 1-D -> W, 2-D -> H x W, 3-D ->
// (D x H) x W: depth and height become one axis of D*H rows with a kd*kh kernel, so MACs,
// input and output sizes are exact; the halo of a row block is approximate (docs/import.md).
std::pair<Axis, Axis> foldAxes(const std::vector<Axis>& a) {
    if (a.size() == 1) return {Axis{}, a[0]};
    if (a.size() == 2) return {a[0], a[1]};
    Axis h;
    const auto big = [](std::int64_t x, std::int64_t y) { return __int128(x) * y > INT32_MAX; };
    if (big(a[0].in, a[1].in) || big(a[0].k, a[1].k) || big(a[0].out, a[1].out)) {
        h.out = -1; // rejected by setGeometry
        return {h, a[2]};
    }
    h.in = a[0].in * a[1].in;
    h.k = a[0].k * a[1].k;
    h.s = a[1].s;
    h.d = 1;
    h.out = a[0].out * a[1].out;
    h.pad = std::max<std::int64_t>(0, (h.out - 1) * h.s + h.k - h.in);
    return {h, a[2]};
}

// The Conv layer of a convolution or of a transposed one's decomposition: geometry, groups,
// the input's parts, and the constant weight and bias elements as its weights (a computed
// weight is one more input instead).
Status convLayer(Layer& l, const Value& xv, const Value& wv, const Value* bias, const Shape& ws,
                 std::int64_t inC, std::int64_t outC, std::int64_t g, const Axis& ah,
                 const Axis& aw) {
    l.kind = LayerKind::Conv;
    if (auto f = setGeometry(l, inC, outC, ah, aw)) return f;
    auto gi = narrow(g, "groups");
    if (!gi) return fail(gi);
    l.groups = *gi;
    l.inputs = xv.parts;
    if (wv.isConst)
        l.weightBytes = cappedElements(ws);
    else
        l.inputs.insert(l.inputs.end(), wv.parts.begin(), wv.parts.end());
    if (bias && bias->isConst && bias->shape) l.weightBytes += cappedElements(*bias->shape);
    return {};
}

} // namespace

Status Importer::convShapes(const ox::NodeProto& n, const std::string& kind, Shape& xs, Shape& ws) {
    const auto xr = needShape(n, 0, "input");
    if (!xr) return fail(xr);
    xs = *xr;
    if (xs.size() < 3 || xs.size() > 5)
        return fail("only 1-D, 2-D and 3-D " + kind + " are supported (input rank " +
                    std::to_string(xs.size()) + ")");
    const auto wr = needShape(n, 1, "weight");
    if (!wr) return fail(wr);
    ws = *wr;
    if (ws.size() != xs.size()) return fail("weight rank does not match the input");
    for (size_t i = 1; i < xs.size(); ++i)
        if (xs[i].n) return fail("the batch is not the leading dimension of the input");
    return {};
}

Status Importer::makeConv(const ox::NodeProto& n) {
    const Value& xv = in(n, 0);
    Shape xs, ws;
    if (Status st = convShapes(n, "convolutions", xs, ws)) return st;
    const std::int64_t c = xs[1].v, m = ws[0].v, cpg = ws[1].v;
    const std::int64_t g = attrInt(n, "group", 1);
    std::int64_t total = 0;
    if (g <= 0 || __builtin_mul_overflow(cpg, g, &total) || total != c)
        return fail("weight expects " + std::to_string(cpg) + " input channels per group x " +
                    std::to_string(g) + " groups, input has " + std::to_string(c));
    const size_t sd = xs.size() - 2;
    const auto win = windowAttrs(n, sd);
    if (!win) return fail(win);
    const auto& [strides, dil, pads, autoPad] = *win;
    std::vector<Axis> axes;
    Shape out{xs[0], Dim::of(m)};
    for (size_t a = 0; a < sd; ++a) {
        // A folded zero Pad in front is the conv's own padding (inception's avg-pool
        // pattern); it is recorded for the last two axes of a 2-D map.
        const std::int64_t p = sd != 2 ? 0 : (a == 0 ? xv.padH : xv.padW);
        axes.push_back(spatial(xs[2 + a].v - p, ws[2 + a].v, strides[a], dil[a], pads[a] + p,
                               pads[sd + a], autoPad, false));
        if (axes.back().out < 0) return fail("kernel, stride, dilation or padding out of range");
        if (axes.back().out == 0)
            return fail("zero-sized output (kernel larger than the padded input)");
        out.push_back(Dim::of(axes.back().out));
    }
    const auto [ah, aw] = foldAxes(axes);
    Layer l;
    if (auto f = convLayer(l, xv, in(n, 1), hasIn(n, 2) ? &in(n, 2) : nullptr, ws, c, m, g, ah, aw))
        return f;
    return addLayer(std::move(l), n, out);
}

namespace {

// Output extent of a transposed convolution along one axis (ONNX ConvTranspose).
std::int64_t transposedExtent(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t d,
                              std::int64_t padBegin, std::int64_t padEnd, std::int64_t outPad,
                              const std::string& autoPad) {
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") return in * s;
    return s * (in - 1) + outPad + (k - 1) * d + 1 - padBegin - padEnd;
}

} // namespace

// ConvTranspose as its sub-pixel (phase) decomposition: with stride s, output position
// o = s*q + r reads input q - j for the taps j of phase r, so the layer is s^2 ordinary
// stride-1 convolutions over the *input*, each with ceil(k/s) taps per axis, whose outputs
// interleave (a DepthToSpace, folded). Geometry: inC = Cin, outC = Cout * sH * sW,
// out = ceil(outExtent / s), kernel ceil(k / s). MACs are exactly input elements x
// Cout/groups x kernel area when s divides k and the output is s x the input (the usual
// k = 2s, pad (k - s)/2 and k = s upsamplings); otherwise the partial phases are rounded up,
// or, if that costs more than 0.5%, the layer takes the scatter form below.
Status Importer::makeConvTranspose(const ox::NodeProto& n) {
    const Value& xv = in(n, 0);
    Shape xs, ws;
    if (Status st = convShapes(n, "transposed convolutions", xs, ws)) return st;
    const std::int64_t c = xs[1].v, g = attrInt(n, "group", 1);
    if (g <= 0 || ws[0].v != c || c % g != 0)
        return fail("weight expects " + std::to_string(ws[0].v) + " input channels in " +
                    std::to_string(g) + " groups, input has " + std::to_string(c));
    std::int64_t m = 0; // output channels
    if (ws[1].v <= 0 || __builtin_mul_overflow(ws[1].v, g, &m) || m > INT32_MAX)
        return fail("output channels out of range");
    const size_t sd = xs.size() - 2;
    const auto win = windowAttrs(n, sd);
    if (!win) return fail(win);
    const auto& [strides, dil, pads, autoPad] = *win;
    auto outPad = intsOfLength(n, "output_padding", std::vector<std::int64_t>(sd, 0));
    if (!outPad) return fail(outPad);
    const auto outShape = attrInts(n, "output_shape");
    std::vector<Axis> axes;
    Shape out{xs[0], Dim::of(m)};
    std::int64_t phases = 1;
    for (size_t a = 0; a < sd; ++a) {
        const std::int64_t x = xs[2 + a].v, k = ws[2 + a].v, s = strides[a];
        constexpr std::int64_t kMax = std::int64_t(1) << 30;
        for (std::int64_t v : {x, k, s, dil[a], pads[a], pads[sd + a], (*outPad)[a]})
            if (v < 0 || v > kMax) return fail("kernel, stride, dilation or padding out of range");
        std::int64_t e =
            transposedExtent(x, k, s, dil[a], pads[a], pads[sd + a], (*outPad)[a], autoPad);
        if (outShape && outShape->size() >= sd) e = (*outShape)[outShape->size() - sd + a];
        if (e <= 0 || k <= 0 || s <= 0) return fail("zero-sized output");
        if (e > kMax || __builtin_mul_overflow(phases, s, &phases) || phases > INT32_MAX)
            return fail("output extent or stride out of range");
        if (dil[a] != 1 && s != 1)
            return fail("dilated strided transposed convolution is not supported; nearest "
                        "supported: Resize (nearest) followed by a dilated Conv");
        Axis ax;
        ax.in = x, ax.s = 1, ax.d = dil[a];
        ax.k = (k + s - 1) / s;
        ax.out = (e + s - 1) / s;
        ax.pad = std::max<std::int64_t>(0, ax.out - 1 + (ax.k - 1) * ax.d + 1 - x);
        axes.push_back(ax);
        out.push_back(Dim::of(e));
    }
    auto [ah, aw] = foldAxes(axes);
    std::int64_t outC = m * phases; // both <= INT32_MAX
    if (ah.out < 0) return fail("output extent out of range");
    // The sub-pixel form also multiplies the zero padding around a small input (DCGAN's
    // 1x1 -> 4x4 projection): when it would count more than 0.5% beyond the true MACs,
    // use the scatter form instead, a 1x1 convolution of each input pixel to its
    // Cout x kernel-area patch (exact MACs; overlapping patches are summed downstream).
    double inElems = 1, kArea = 1;
    for (size_t a = 0; a < sd; ++a)
        inElems *= double(xs[2 + a].v), kArea *= double(ws[2 + a].v);
    const double exact = double(c / g) * inElems * double(m) * kArea;
    const double subPixel = double(c / g) * double(outC) * double(ah.out) * double(aw.out) *
                            double(ah.k) * double(aw.k);
    if (subPixel > 1.005 * exact) {
        std::vector<Axis> flat;
        for (size_t a = 0; a < sd; ++a)
            flat.push_back(Axis{xs[2 + a].v, 1, 1, 1, 0, xs[2 + a].v});
        std::tie(ah, aw) = foldAxes(flat);
        if (double(m) * kArea > double(INT32_MAX)) return fail("output channels out of range");
        outC = m * std::int64_t(kArea);
    }
    Layer l;
    if (auto f =
            convLayer(l, xv, in(n, 1), hasIn(n, 2) ? &in(n, 2) : nullptr, ws, c, outC, g, ah, aw))
        return f;
    return addLayer(std::move(l), n, out);
}

Status Importer::makePool(const ox::NodeProto& n) {
    return makePoolLayer(n, false);
}
Status Importer::makeGlobalPool(const ox::NodeProto& n) {
    return makePoolLayer(n, true);
}

Status Importer::makePoolLayer(const ox::NodeProto& n, bool global) {
    const Value& xv = in(n, 0);
    const auto xr = needShape(n, 0, "input");
    if (!xr) return fail(xr);
    const Shape& xs = *xr;
    if (xs.size() < 3 || xs.size() > 5)
        return fail("only 1-D, 2-D and 3-D pooling is supported (input rank " +
                    std::to_string(xs.size()) + ")");
    for (size_t i = 1; i < xs.size(); ++i)
        if (xs[i].n) return fail("the batch is not the leading dimension of the input");
    const std::int64_t c = xs[1].v;
    const size_t sd = xs.size() - 2;
    std::vector<Axis> axes;
    Shape out{xs[0], Dim::of(c)};
    if (global) {
        for (size_t a = 0; a < sd; ++a) {
            axes.push_back(Axis{xs[2 + a].v, xs[2 + a].v, 1, 1, 0, 1});
            out.push_back(Dim::of(1));
        }
    } else {
        auto k = attrInts(n, "kernel_shape");
        if (!k || k->size() != sd) return fail("kernel_shape missing or of the wrong rank");
        const auto win = windowAttrs(n, sd);
        if (!win) return fail(win);
        const auto& [strides, dil, pads, autoPad] = *win;
        const bool ceilMode = attrInt(n, "ceil_mode", 0) != 0;
        for (size_t a = 0; a < sd; ++a) {
            const std::int64_t p = sd != 2 ? 0 : (a == 0 ? xv.padH : xv.padW);
            axes.push_back(spatial(xs[2 + a].v - p, (*k)[a], strides[a], dil[a], pads[a] + p,
                                   pads[sd + a], autoPad, ceilMode));
            out.push_back(Dim::of(axes.back().out));
        }
    }
    for (const Axis& a : axes)
        if (a.out < 0)
            return fail("kernel, stride, dilation or padding out of range");
        else if (a.out == 0)
            return fail("zero-sized output (window larger than the padded input)");
    const auto [ah, aw] = foldAxes(axes);
    Layer l;
    l.kind = LayerKind::Pool;
    if (auto f = setGeometry(l, c, c, ah, aw)) return f;
    l.groups = l.inC; // channel-wise: every channel has its own window
    l.inputs = xv.parts;
    // Global pooling written as ReduceMean(keepdims=0) drops the spatial axes.
    if (kReduce.count(n.op_type()) && attrInt(n, "keepdims", 1) == 0)
        out = Shape{xs[0], Dim::of(c)};
    return addLayer(std::move(l), n, out);
}

namespace {

// Matrix-product geometry (rows, reduction, columns, groups) checked to fit an int.
Status setMatrix(Layer& l, std::int64_t groups, std::int64_t rows, std::int64_t k,
                 std::int64_t cols) {
    auto g = narrow(groups, "groups");
    if (!g) return fail(g);
    auto r = narrow(rows, "rows");
    if (!r) return fail(r);
    auto kk = narrow(groups * k, "reduction");
    if (!kk) return fail(kk);
    auto c = narrow(groups * cols, "columns");
    if (!c) return fail(c);
    l.groups = *g;
    l.inH = l.outH = *r;
    l.inC = *kk;
    l.outC = *c;
    return {};
}

} // namespace

// Matrix products in conv geometry: rows M -> outH (outW = 1), reduction K -> inC/groups,
// columns -> outC/groups, broadcast batch dims (per sample) -> groups.
Status Importer::makeMatMul(const ox::NodeProto& n) {
    const bool gemm = n.op_type() == "Gemm";
    const auto ar = needShape(n, 0, "operand A");
    if (!ar) return fail(ar);
    const auto br = needShape(n, 1, "operand B");
    if (!br) return fail(br);
    Shape a = *ar, b = *br;
    if (a.empty() || b.empty()) return fail("scalar operand");
    if (gemm) {
        if (a.size() != 2 || b.size() != 2) return fail("Gemm operands must be 2-D");
        if (attrInt(n, "transA", 0)) std::swap(a[0], a[1]);
        if (attrInt(n, "transB", 0)) std::swap(b[0], b[1]);
    }
    const bool aVec = a.size() == 1, bVec = b.size() == 1;
    if (aVec) a.insert(a.begin(), Dim::of(1));
    if (bVec) b.push_back(Dim::of(1));
    return makeProduct(n, a, b, aVec, bVec, std::nullopt);
}

// a = [batch..., M, K] x b = [batch..., K, cols]; outShape overrides the natural output shape
// (Einsum's output order).
Status Importer::makeProduct(const ox::NodeProto& n, const Shape& a, const Shape& b, bool aVec,
                             bool bVec, const std::optional<Shape>& outShape) {
    const bool gemm = n.op_type() == "Gemm";
    const Dim m = a[a.size() - 2], k = a.back(), k2 = b[b.size() - 2], cols = b.back();
    if (!(k == k2)) return fail("reduction dims differ: " + toString(a) + " x " + toString(b));
    if (k.n || cols.n) return fail("the batch is in a reduction or column dimension");
    const Shape ab(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
    auto batch = broadcast(ab, bb);
    if (!batch) return fail("batch dims cannot be broadcast: " + toString(a) + " x " + toString(b));
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
            return fail("cannot split rows " + toString(a) + " into weight groups");
        l.kind = LayerKind::Gemm;
        if (auto f = setMatrix(l, g.v, rows.v, k.v, cols.v)) return f;
        l.weightBytes = cappedElements(*bv.shape);
        l.inputs = av.parts;
    } else if (av.isConst && !bv.isConst) {
        // Weights x activation (Y = W X): W's rows are the output channels, X's columns
        // (and batch dims) the positions.
        if (a.size() != 2) return fail("batched constant left operand is not supported");
        const Dim pos = mul(product(bb), cols);
        if (!pos.known) return fail("cannot resolve columns of " + toString(b));
        l.kind = LayerKind::Gemm;
        if (auto f = setMatrix(l, 1, pos.v, k.v, m.v)) return f;
        l.weightBytes = cappedElements(*av.shape);
        l.inputs = bv.parts;
    } else {
        // Activation x activation (attention): heads -> groups; the batch N divides out.
        const Dim g = product(*batch);
        if (!g.known || (g.n && m.n)) return fail("cannot resolve batch dims of " + toString(out));
        l.kind = LayerKind::MatMul;
        if (auto f = setMatrix(l, g.v, m.v, k.v, cols.v)) return f;
        l.inputs = av.parts;
        l.inputs.insert(l.inputs.end(), bv.parts.begin(), bv.parts.end());
    }
    if (gemm && hasIn(n, 2)) {
        const Value& cv = in(n, 2);
        if (cv.isConst && cv.shape)
            l.weightBytes += cappedElements(*cv.shape);
        else if (!cv.isConst)
            l.inputs.insert(l.inputs.end(), cv.parts.begin(), cv.parts.end());
    }
    if (l.outC <= 0 || l.outH <= 0 || l.inC <= 0)
        return fail("zero-sized operand " + toString(out));
    return addLayer(std::move(l), n, outShape ? *outShape : out);
}

// Einsum of two operands whose equation is a (batched) matrix product: letters in both
// operands and the output are batch dims, in both operands only the reduction, in one
// operand and the output its free dims (rows of A, columns of B). Anything else (a
// trace, a sum over one operand's own letter, more than two operands) is refused.
Status Importer::makeEinsum(const ox::NodeProto& n) {
    std::string eq;
    for (char c : attrString(n, "equation", ""))
        if (c != ' ') eq += c;
    const auto arrow = eq.find("->"), comma = eq.find(',');
    const std::string hint = "; nearest supported: MatMul / Transpose (export the product as "
                             "torch.matmul)";
    if (n.input_size() != 2 || arrow == std::string::npos || comma == std::string::npos ||
        comma > arrow || eq.find("...") != std::string::npos)
        return fail("Einsum '" + eq +
                    "' is not a two-operand matrix product with an explicit "
                    "output" +
                    hint);
    const std::string sa = eq.substr(0, comma), sb = eq.substr(comma + 1, arrow - comma - 1),
                      so = eq.substr(arrow + 2);
    const auto ar = needShape(n, 0, "operand A");
    if (!ar) return fail(ar);
    const auto br = needShape(n, 1, "operand B");
    if (!br) return fail(br);
    if (ar->size() != sa.size() || br->size() != sb.size())
        return fail("Einsum '" + eq + "' does not match the operand ranks");
    for (const std::string* s : {&sa, &sb, &so})
        if (std::set<char>(s->begin(), s->end()).size() != s->size())
            return fail("Einsum '" + eq + "' repeats a letter within a term (a diagonal)" + hint);
    std::map<char, Dim> dim;
    for (size_t i = 0; i < sa.size(); ++i)
        dim[sa[i]] = (*ar)[i];
    for (size_t i = 0; i < sb.size(); ++i) {
        if (dim.count(sb[i]) && !(dim[sb[i]] == (*br)[i]))
            return fail("Einsum '" + eq + "': dimension '" + std::string(1, sb[i]) + "' differs");
        dim[sb[i]] = (*br)[i];
    }
    Shape batch, out;
    Dim rows = Dim::of(1), k = Dim::of(1), cols = Dim::of(1);
    for (char c : so) {
        if (!dim.count(c)) return fail("Einsum '" + eq + "': output letter not in the inputs");
        out.push_back(dim[c]);
    }
    for (const auto& [c, d] : dim) {
        const bool inA = sa.find(c) != std::string::npos, inB = sb.find(c) != std::string::npos,
                   inO = so.find(c) != std::string::npos;
        if (inA && inB && inO)
            batch.push_back(d);
        else if (inA && inB)
            k = mul(k, d);
        else if (inA && inO)
            rows = mul(rows, d);
        else if (inB && inO)
            cols = mul(cols, d);
        else
            return fail("Einsum '" + eq + "' sums over a letter of one operand" + hint);
    }
    Shape a = batch, b = batch;
    a.insert(a.end(), {rows, k});
    b.insert(b.end(), {k, cols});
    return makeProduct(n, a, b, false, false, out);
}

namespace {

// Whether an activation of per-sample shape [a, b] is a 1-D convolution's [C, L] map rather
// than a [tokens, features] matrix: a layer that writes it has one row of L columns
// (a Conv1d, a 1-D pool, or a layer that took this geometry from one). Gemm and MatMul
// write a single column, so a transformer's matrices never match (outW == b > 1), nor a
// conv's output flattened to [C, H*W] (outH > 1).
bool holdsConvRows(const std::vector<Layer>& layers, const Value& v) {
    if (!v.shape) return false;
    const auto d = perSampleDims(*v.shape);
    if (!d || d->size() != 2) return false;
    for (const LayerInput& p : v.parts) {
        if (p.producer < 0) continue;
        const Layer& l = layers[size_t(p.producer)];
        if (l.outH == 1 && l.outW == (*d)[1] && ((*d)[1] > 1 || l.outC == (*d)[0])) return true;
    }
    return false;
}

// A matrix product's output [..., M, N] (heads G in front) as its producer wrote it: the
// product's geometry (C = G x N, H = M, W = 1), when v is that product's whole output in
// the same shape as `out` (a softmax over attention scores, a mask added to them). A layer
// taking it keeps the producer's slices, so attention scores split over tiles by query rows
// and heads, and the next product reads them as its operand A in place.
std::optional<Chw> productRows(const std::vector<Layer>& layers, const Value& v,
                               const std::vector<std::int64_t>& out) {
    if (!v.shape || v.parts.size() != 1 || v.parts[0].producer < 0 || out.size() < 3) return {};
    const auto d = perSampleDims(*v.shape);
    if (!d || *d != out) return {};
    const Layer& l = layers[size_t(v.parts[0].producer)];
    if (l.kind != LayerKind::MatMul && l.kind != LayerKind::Gemm) return {};
    std::int64_t g = 1;
    for (size_t i = 0; i + 2 < out.size(); ++i)
        g *= out[i];
    const std::int64_t m = out[out.size() - 2], n = out.back();
    if (l.outW != 1 || l.outH != m || std::int64_t(l.outC) != g * n) return {};
    Chw c;
    c.c = g * n, c.h = m, c.w = 1;
    return c;
}

} // namespace

// Vector, Eltwise and fallback layers: geometry is the output's per-sample shape, laid out
// as the convolutions lay out theirs (toChw), so that a layer reads its producers' outputs
// in the geometry they were written in and its input splits over tiles like theirs.
Status Importer::makeGeneric(const ox::NodeProto& n, LayerKind kind, const Value& outv,
                             Count weights, bool unsupported) {
    if (!outv.shape || !fullyKnown(*outv.shape)) {
        std::string r = "output shape unknown";
        if (!outv.why.empty()) r += " (" + outv.why + ")";
        return fail(r);
    }
    auto od = perSampleDims(*outv.shape);
    if (!od)
        return fail("output shape " + toString(*outv.shape) +
                    " mixes the batch into several dimensions");
    bool convRows = false; // a 1-D conv net's [C, L] maps: any operand's producer says so
    for (int k = 0; k < n.input_size(); ++k)
        if (hasIn(n, k) && !in(n, k).isConst)
            convRows = convRows || holdsConvRows(m_net.layers, in(n, k));
    std::optional<Chw> product; // attention scores and the like: a product's own geometry
    for (int k = 0; k < n.input_size() && !product; ++k)
        if (hasIn(n, k) && !in(n, k).isConst) product = productRows(m_net.layers, in(n, k), *od);
    Chw i = product ? *product : toChw(*od, convRows);
    const Chw o = i;
    for (int k = 0; k < n.input_size() && !product; ++k) {
        const Value& v = in(n, k);
        if (!hasIn(n, k) || v.isConst || !v.shape) continue;
        if (auto d = perSampleDims(*v.shape)) i = toChw(*d, convRows);
        break;
    }
    Layer l;
    l.kind = kind;
    const Axis ah{i.h, 1, 1, 1, 0, o.h}, aw{i.w, 1, 1, 1, 0, o.w};
    if (auto f = setGeometry(l, i.c, o.c, ah, aw)) return f;
    l.inputs = activationParts(n);
    l.weightBytes = weights;
    if (auto f = addLayer(std::move(l), n, *outv.shape)) return f;
    for (int k = 1; k < n.output_size(); ++k) {
        // keep the propagated shapes of secondary outputs where we have them
        if (auto s = onnxShape(n.output(k))) m_values[n.output(k)].shape = s;
    }
    if (unsupported)
        m_net.unsupported.push_back(m_net.layers.back().name + " (" + n.op_type() + ")");
    return {};
}

// A per-element function of one tensor: fold it into that tensor's producer. Its constant
// operands (bias, per-channel scale, BN's folded scale + shift) become producer weights.
Status Importer::foldPointwise(const ox::NodeProto& n) {
    Outs outs(size_t(std::max(1, n.output_size())));
    if (auto f = propagate(n, outs)) return f;
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
        return makeGeneric(n, LayerKind::Vector, outs[0], params);
    }
    if (producers.size() == 1 && params > 0)
        m_net.layers[size_t(*producers.begin())].weightBytes += params;
    recordFold(n, parts);
    for (int i = 0; i < n.output_size(); ++i) {
        Value v = std::move(outs[size_t(i)]);
        v.parts = parts;
        const auto e =
            v.shape ? std::min<Count>(perSampleElements(*v.shape), kMaxTensorElements) : -1;
        if (i == 0 && e >= 0) {
            // A pointwise op keeps the element count except when it broadcasts.
            Count before = 0;
            for (const auto& p : parts)
                before += p.bytesPerSample;
            if (before > 0 && e != before)
                for (auto& p : v.parts)
                    p.bytesPerSample = Count(__int128(p.bytesPerSample) * e / before);
        }
        setOutput(n, i, std::move(v));
    }
    return {};
}

// Data movement (Reshape, Concat, Slice, ...): consumers read the producers directly, each
// producer's bytes scaled by the fraction of the data that comes through.
Status Importer::foldMovement(const ox::NodeProto& n, Outs& outs) {
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
        const auto e =
            v.shape ? std::min<Count>(perSampleElements(*v.shape), kMaxTensorElements) : -1;
        // Only shrinking moves (Slice, Split, Gather) cut what is read from a producer;
        // Pad / Expand / Resize replicate at the consumer, the producer still sends its own.
        if (e >= 0 && inBytes > 0 && e < inBytes)
            for (auto& p : v.parts)
                p.bytesPerSample =
                    std::max<Count>(1, Count(__int128(p.bytesPerSample) * e / inBytes));
        // Reshapes of a recurrent layer's Y (same elements) keep its per-step producers.
        static const std::unordered_set<std::string> kKeepSteps = {
            "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten", "Identity"};
        if (e >= 0 && e == inBytes && kKeepSteps.count(n.op_type())) v.steps = in(n, 0).steps;
        setOutput(n, i, std::move(v));
    }
    return {};
}

} // namespace tilescope::onnximport
