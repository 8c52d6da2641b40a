// Shape and small-integer data propagation of the ONNX importer: one rule per op type
// (shapeRule), then libonnx's inferred shapes where a rule leaves a shape unknown.
#include "model/onnx_importer.h"

#include <algorithm>
#include <map>

namespace tilescope::onnximport {

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

void Importer::setWhy(const ox::NodeProto& n, Value& o, const std::string& reason) const {
    o.why = "node '" + nodeName(n) + "' (" + n.op_type() + "): " + reason;
}

std::optional<std::vector<Dim>> Importer::inputData(const ox::NodeProto& n, int i) const {
    return hasIn(n, i) ? in(n, i).data : std::nullopt;
}

void Importer::applyOnnxFallback(const ox::NodeProto& n, Outs& outs) {
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

Importer::ShapeRule Importer::shapeRule(const std::string& op) {
    static const std::unordered_map<std::string, ShapeRule> kRules = [] {
        std::unordered_map<std::string, ShapeRule> r = {
            {"Constant", &Importer::shapeConstant},
            {"Shape", &Importer::shapeShape},
            {"Size", &Importer::shapeSize},
            {"ConstantOfShape", &Importer::shapeConstantOfShape},
            {"ArgMax", &Importer::shapeArgMinMax},
            {"ArgMin", &Importer::shapeArgMinMax},
            {"TopK", &Importer::shapeTopK},
            {"GatherElements", &Importer::shapeGatherElements},
            {"Reshape", &Importer::shapeReshape},
            {"Flatten", &Importer::shapeFlatten},
            {"Transpose", &Importer::shapeTranspose},
            {"Squeeze", &Importer::shapeSqueeze},
            {"Unsqueeze", &Importer::shapeSqueeze},
            {"Concat", &Importer::shapeConcat},
            {"Split", &Importer::shapeSplit},
            {"Einsum", &Importer::shapeEinsum},
            {"Slice", &Importer::shapeSlice},
            {"Gather", &Importer::shapeGather},
            {"Expand", &Importer::shapeExpand},
            {"Tile", &Importer::shapeTile},
            {"Pad", &Importer::shapePad},
            {"Resize", &Importer::shapeResize},
            {"Upsample", &Importer::shapeResize},
            {"DepthToSpace", &Importer::shapeDepthToSpace},
            {"SpaceToDepth", &Importer::shapeDepthToSpace},
        };
        auto family = [&r](const std::unordered_set<std::string>& ops, ShapeRule f) {
            for (const auto& op : ops)
                r.emplace(op, f); // explicit rules above win
        };
        family(kPassThrough, &Importer::shapeUnary);
        family(kUnaryPointwise, &Importer::shapeUnary);
        family(kVector, &Importer::shapeUnary);
        family(kBinaryPointwise, &Importer::shapeBinary);
        family(kReduce, &Importer::shapeReduce);
        return r;
    }();
    auto it = kRules.find(op);
    return it == kRules.end() ? nullptr : it->second;
}

Status Importer::propagate(const ox::NodeProto& n, Outs& outs) {
    if (const ShapeRule rule = shapeRule(n.op_type()))
        if (Status f = (this->*rule)(n, outs)) return f;
    evaluate(n, outs);
    applyOnnxFallback(n, outs);
    return {};
}

// --- rules -------------------------------------------------------------------------------

Status Importer::shapeConstant(const ox::NodeProto& n, Outs& outs) {
    Value& o = outs[0];
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
    return {};
}

Status Importer::shapeShape(const ox::NodeProto& n, Outs& outs) {
    const std::optional<Shape>& xs = in(n, 0).shape;
    if (!xs) return {};
    Value& o = outs[0];
    const auto r = std::int64_t(xs->size());
    std::int64_t b = attrInt(n, "start", 0), e = attrInt(n, "end", r);
    b = std::clamp(b < 0 ? b + r : b, std::int64_t(0), r);
    e = std::clamp(e < 0 ? e + r : e, std::int64_t(0), r);
    o.data = std::vector<Dim>(xs->begin() + b, xs->begin() + std::max(b, e));
    o.shape = Shape{Dim::of(std::int64_t(o.data->size()))};
    return {};
}

Status Importer::shapeSize(const ox::NodeProto& n, Outs& outs) {
    outs[0].shape = Shape{};
    if (const auto& xs = in(n, 0).shape) outs[0].data = std::vector<Dim>{product(*xs)};
    return {};
}

Status Importer::shapeConstantOfShape(const ox::NodeProto& n, Outs& outs) {
    if (auto d = inputData(n, 0)) outs[0].shape = *d;
    return {};
}

Status Importer::shapeArgMinMax(const ox::NodeProto& n, Outs& outs) {
    const std::optional<Shape>& xs = in(n, 0).shape;
    if (xs) {
        Shape s = *xs;
        const auto ax = normAxis(attrInt(n, "axis", 0), s.size(), n.op_type());
        if (!ax) return fail(ax);
        if (attrInt(n, "keepdims", 1))
            s[size_t(*ax)] = Dim::of(1);
        else
            s.erase(s.begin() + *ax);
        outs[0].shape = s;
    }
    for (size_t i = 1; i < outs.size(); ++i)
        outs[i].shape = xs;
    return {};
}

// Values and indices alike: the input's shape with K (a constant input) on the axis.
Status Importer::shapeTopK(const ox::NodeProto& n, Outs& outs) {
    const std::optional<Shape>& xs = in(n, 0).shape;
    const std::optional<std::vector<std::int64_t>> k =
        hasIn(n, 1) ? concrete(in(n, 1).data) : std::nullopt;
    if (!xs || !k || k->size() != 1) return {}; // libonnx's inferred shape, if any
    Shape s = *xs;
    const auto ax = normAxis(attrInt(n, "axis", -1), s.size(), n.op_type());
    if (!ax) return fail(ax);
    s[size_t(*ax)] = Dim::of((*k)[0]);
    for (auto& o : outs)
        o.shape = s;
    return {};
}

// The output has the indices' shape (a mixture of experts' chosen experts per token).
Status Importer::shapeGatherElements(const ox::NodeProto& n, Outs& outs) {
    if (hasIn(n, 1)) outs[0].shape = in(n, 1).shape;
    return {};
}

// Shape-preserving ops: pass-through, pointwise functions, vector-unit ops.
Status Importer::shapeUnary(const ox::NodeProto& n, Outs& outs) {
    const std::string& op = n.op_type();
    const Value& x = in(n, 0);
    Value& o = outs[0];
    o.shape = x.shape;
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
    for (size_t i = 1; i < outs.size(); ++i)
        outs[i].shape = x.shape; // Dropout mask etc.
    return {};
}

Status Importer::shapeBinary(const ox::NodeProto& n, Outs& outs) {
    const std::string& op = n.op_type();
    Value& o = outs[0];
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
            setWhy(n, o, "shapes cannot be broadcast");
            break;
        }
    }
    o.shape = s;
    // Integer shape arithmetic: element-wise with scalar broadcasting.
    auto a = inputData(n, 0), b = inputData(n, 1);
    if (!a || !b || a->empty() || b->empty() ||
        !(a->size() == b->size() || a->size() == 1 || b->size() == 1))
        return {};
    if (op != "Add" && op != "Sub" && op != "Mul" && op != "Div" && op != "Max" && op != "Min")
        return {};
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
    return {};
}

Status Importer::shapeReshape(const ox::NodeProto& n, Outs& outs) {
    const Value& x = in(n, 0);
    const std::optional<Shape>& xs = x.shape;
    Value& o = outs[0];
    o.data = x.data;
    auto target = inputData(n, 1);
    if (!target) {
        setWhy(n, o, "target shape is not a constant");
        return {};
    }
    if (!xs) {
        o.why = x.why;
        return {};
    }
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
    if (!fullyKnown(s)) setWhy(n, o, "cannot resolve target shape " + toString(s));
    return {};
}

Status Importer::shapeFlatten(const ox::NodeProto& n, Outs& outs) {
    const Value& x = in(n, 0);
    if (!x.shape) {
        outs[0].why = x.why;
        return {};
    }
    const auto ax = attrInt(n, "axis", 1);
    const auto a = size_t(ax < 0 ? ax + std::int64_t(x.shape->size()) : ax);
    outs[0].shape = Shape{product(*x.shape, 0, a), product(*x.shape, a)};
    return {};
}

Status Importer::shapeTranspose(const ox::NodeProto& n, Outs& outs) {
    const Value& x = in(n, 0);
    if (!x.shape) {
        outs[0].why = x.why;
        return {};
    }
    const Shape& xs = *x.shape;
    std::vector<std::int64_t> perm;
    if (auto p = attrInts(n, "perm"))
        perm = *p;
    else
        for (std::int64_t i = std::int64_t(xs.size()) - 1; i >= 0; --i)
            perm.push_back(i);
    if (perm.size() != xs.size()) return fail("perm does not match the rank");
    Shape s;
    for (auto p : perm) {
        auto ax = normAxis(p, xs.size(), n.op_type());
        if (!ax) return fail(ax);
        s.push_back(xs[size_t(*ax)]);
    }
    outs[0].shape = s;
    return {};
}

Status Importer::shapeSqueeze(const ox::NodeProto& n, Outs& outs) {
    const std::string& op = n.op_type();
    const Value& x = in(n, 0);
    Value& o = outs[0];
    o.data = x.data;
    std::optional<std::vector<std::int64_t>> axes =
        m_opset >= 13 ? concrete(inputData(n, 1)) : attrInts(n, "axes");
    const bool haveAxesInput = m_opset >= 13 ? hasIn(n, 1) : bool(attr(n, "axes"));
    if (haveAxesInput && !axes) {
        setWhy(n, o, "axes are not a constant");
        return {};
    }
    if (!x.shape) {
        o.why = x.why;
        return {};
    }
    const Shape& s = *x.shape;
    if (op == "Squeeze") {
        std::set<std::int64_t> drop;
        if (axes)
            for (auto a : *axes) {
                auto ax = normAxis(a, s.size(), op);
                if (!ax) return fail(ax);
                drop.insert(*ax);
            }
        else
            for (size_t i = 0; i < s.size(); ++i)
                if (s[i].isConst(1)) drop.insert(std::int64_t(i));
        Shape r;
        for (size_t i = 0; i < s.size(); ++i)
            if (!drop.count(std::int64_t(i))) r.push_back(s[i]);
        o.shape = r;
    } else if (axes) {
        const size_t rank = s.size() + axes->size();
        std::set<std::int64_t> added;
        for (auto a : *axes) {
            auto ax = normAxis(a, rank, op);
            if (!ax) return fail(ax);
            added.insert(*ax);
        }
        Shape r;
        size_t k = 0;
        for (size_t i = 0; i < rank; ++i)
            r.push_back(added.count(std::int64_t(i)) || k >= s.size() ? Dim::of(1) : s[k++]);
        o.shape = r;
    }
    return {};
}

Status Importer::shapeConcat(const ox::NodeProto& n, Outs& outs) {
    Value& o = outs[0];
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
        const auto ax = normAxis(attrInt(n, "axis", 0), s->size(), n.op_type());
        if (!ax) return fail(ax);
        if (v.shape->size() != s->size()) return fail("inputs differ in rank");
        (*s)[size_t(*ax)] = add((*s)[size_t(*ax)], (*v.shape)[size_t(*ax)]);
    }
    o.shape = s;
    if (haveData) o.data = data;
    return {};
}

Status Importer::shapeSplit(const ox::NodeProto& n, Outs& outs) {
    const Value& x = in(n, 0);
    if (!x.shape) {
        for (auto& v : outs)
            v.why = x.why;
        return {};
    }
    const Shape& xs = *x.shape;
    const auto axr = normAxis(attrInt(n, "axis", 0), xs.size(), n.op_type());
    if (!axr) return fail(axr);
    const auto ax = size_t(*axr);
    std::optional<std::vector<std::int64_t>> sizes =
        m_opset >= 13 ? concrete(inputData(n, 1)) : attrInts(n, "split");
    const Dim total = xs[ax];
    const auto k = std::int64_t(n.output_size());
    if (!sizes && total.known && !total.n && k > 0) {
        const std::int64_t part = (total.v + k - 1) / k; // last part may be smaller
        sizes = std::vector<std::int64_t>();
        for (std::int64_t i = 0; i < k; ++i)
            sizes->push_back(std::min(part, total.v - i * part));
    }
    std::int64_t at = 0;
    for (int i = 0; i < n.output_size() && i < int(outs.size()); ++i) {
        Shape s = xs;
        s[ax] = sizes && size_t(i) < sizes->size() ? Dim::of((*sizes)[size_t(i)]) : Dim::unknown();
        outs[size_t(i)].shape = s;
        if (!fullyKnown(s))
            outs[size_t(i)].why = "node '" + nodeName(n) + "' (Split): split sizes unknown";
        // A shape vector split into its parts (torch's repeat_interleave computes the
        // expanded shape this way): the parts' contents.
        if (xs.size() == 1 && x.data && s[0].known && !s[0].n &&
            at + s[0].v <= std::int64_t(x.data->size())) {
            outs[size_t(i)].data =
                std::vector<Dim>(x.data->begin() + at, x.data->begin() + at + s[0].v);
            at += s[0].v;
        }
    }
    return {};
}

// Einsum (docs/import.md): the output's dims are its letters' dims in the operands.
Status Importer::shapeEinsum(const ox::NodeProto& n, Outs& outs) {
    std::string eq;
    for (char c : attrString(n, "equation", ""))
        if (c != ' ') eq += c;
    const auto arrow = eq.find("->");
    if (arrow == std::string::npos || eq.find("...") != std::string::npos) return {};
    std::map<char, Dim> dim;
    size_t term = 0, pos = 0;
    for (size_t i = 0; i <= arrow; ++i) {
        if (i == arrow || eq[i] == ',') {
            if (!hasIn(n, int(term)) || !in(n, int(term)).shape ||
                in(n, int(term)).shape->size() != pos)
                return {};
            ++term, pos = 0;
            continue;
        }
        dim[eq[i]] = (*in(n, int(term)).shape)[pos++];
    }
    Shape out;
    for (char c : eq.substr(arrow + 2)) {
        if (!dim.count(c)) return {};
        out.push_back(dim[c]);
    }
    outs[0].shape = out;
    return {};
}

Status Importer::shapeSlice(const ox::NodeProto& n, Outs& outs) {
    const Value& x = in(n, 0);
    Value& o = outs[0];
    std::optional<std::vector<std::int64_t>> starts, ends, axes, steps;
    if (m_opset >= 10) {
        starts = concrete(inputData(n, 1));
        ends = concrete(inputData(n, 2));
        if (hasIn(n, 3)) axes = concrete(inputData(n, 3));
        if (hasIn(n, 4)) steps = concrete(inputData(n, 4));
        if ((hasIn(n, 3) && !axes) || (hasIn(n, 4) && !steps)) starts.reset();
    } else {
        starts = attrInts(n, "starts");
        ends = attrInts(n, "ends");
        axes = attrInts(n, "axes");
    }
    if (!starts || !ends || starts->size() != ends->size()) {
        setWhy(n, o, "slice bounds are not constants");
        return {};
    }
    if (axes && axes->size() != starts->size())
        return fail("axes (" + std::to_string(axes->size()) + ") and starts (" +
                    std::to_string(starts->size()) + ") differ in length");
    if (!x.shape) {
        o.why = x.why;
        return {};
    }
    Shape s = *x.shape;
    std::optional<std::vector<Dim>> data = x.data;
    for (size_t i = 0; i < starts->size(); ++i) {
        const auto axr = normAxis(axes ? (*axes)[i] : std::int64_t(i), s.size(), n.op_type());
        if (!axr) return fail(axr);
        const auto ax = size_t(*axr);
        const std::int64_t step = steps && i < steps->size() ? (*steps)[i] : 1;
        const Dim d = s[ax];
        if (!d.known || d.n || step == 0) {
            // Slicing the batch (or an unknown dim) is only fine when it is a no-op.
            if ((*starts)[i] == 0 && (*ends)[i] >= INT32_MAX && step == 1) continue;
            setWhy(n, o, "slices an unknown or batch dimension");
            return {};
        }
        auto clampIdx = [&](std::int64_t v) {
            if (v < 0) v += d.v;
            return step > 0 ? std::clamp(v, std::int64_t(0), d.v)
                            : std::clamp(v, std::int64_t(-1), d.v - 1);
        };
        const std::int64_t b = clampIdx((*starts)[i]);
        const std::int64_t e = clampIdx((*ends)[i]);
        const std::int64_t len = step > 0
                                     ? std::max<std::int64_t>(0, (e - b + step - 1) / step)
                                     : std::max<std::int64_t>(0, (b - e + (-step) - 1) / (-step));
        s[ax] = Dim::of(len);
        if (data && s.size() == 1) {
            std::vector<Dim> nd;
            for (std::int64_t k = 0, p = b; k < len; ++k, p += step)
                if (p >= 0 && p < std::int64_t(data->size())) nd.push_back((*data)[size_t(p)]);
            data = nd;
        } else {
            data.reset();
        }
    }
    o.shape = s;
    o.data = data;
    return {};
}

Status Importer::shapeGather(const ox::NodeProto& n, Outs& outs) {
    const Value& x = in(n, 0);
    const Value& idx = in(n, 1);
    Value& o = outs[0];
    if (!x.shape || !idx.shape) {
        o.why = x.shape ? idx.why : x.why;
        return {};
    }
    const Shape& xs = *x.shape;
    const auto axr = normAxis(attrInt(n, "axis", 0), xs.size(), n.op_type());
    if (!axr) return fail(axr);
    const auto ax = std::ptrdiff_t(*axr);
    Shape s(xs.begin(), xs.begin() + ax);
    s.insert(s.end(), idx.shape->begin(), idx.shape->end());
    s.insert(s.end(), xs.begin() + ax + 1, xs.end());
    o.shape = s;
    auto ix = concrete(idx.data);
    if (x.data && ix && xs.size() == 1) {
        std::vector<Dim> d;
        for (auto i : *ix) {
            const auto k = i < 0 ? i + std::int64_t(x.data->size()) : i;
            d.push_back(k >= 0 && k < std::int64_t(x.data->size()) ? (*x.data)[size_t(k)]
                                                                   : Dim::unknown());
        }
        o.data = d;
    }
    return {};
}

Status Importer::shapeExpand(const ox::NodeProto& n, Outs& outs) {
    const std::optional<Shape>& xs = in(n, 0).shape;
    auto t = inputData(n, 1);
    if (xs && t)
        outs[0].shape = broadcast(*xs, Shape(t->begin(), t->end()));
    else
        setWhy(n, outs[0], "expand shape is not a constant");
    return {};
}

Status Importer::shapeTile(const ox::NodeProto& n, Outs& outs) {
    const std::optional<Shape>& xs = in(n, 0).shape;
    auto r = inputData(n, 1);
    if (xs && r && r->size() == xs->size()) {
        Shape s = *xs;
        for (size_t i = 0; i < s.size(); ++i)
            s[i] = mul(s[i], (*r)[i]);
        outs[0].shape = s;
    } else {
        setWhy(n, outs[0], "repeats are not a constant");
    }
    return {};
}

Status Importer::shapePad(const ox::NodeProto& n, Outs& outs) {
    const std::optional<Shape>& xs = in(n, 0).shape;
    Value& o = outs[0];
    auto pads = m_opset >= 11 ? concrete(inputData(n, 1)) : attrInts(n, "pads");
    if (!xs || !pads || pads->size() != 2 * xs->size()) {
        setWhy(n, o, "pads are not a constant");
        return {};
    }
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
    return {};
}

Status Importer::shapeResize(const ox::NodeProto& n, Outs& outs) {
    const std::string& op = n.op_type();
    const std::optional<Shape>& xs = in(n, 0).shape;
    const int scalesIdx = op == "Upsample" ? 1 : (m_opset >= 11 ? 2 : 1);
    auto sizes = op == "Resize" && m_opset >= 11 ? concrete(inputData(n, 3)) : std::nullopt;
    const std::optional<std::vector<double>>& scales = in(n, scalesIdx).fdata;
    if (xs && sizes && sizes->size() == xs->size()) {
        Shape s = *xs;
        for (size_t i = 1; i < s.size(); ++i)
            s[i] = Dim::of((*sizes)[i]);
        outs[0].shape = s;
    } else if (xs && scales && scales->size() == xs->size()) {
        Shape s = *xs;
        for (size_t i = 1; i < s.size(); ++i)
            s[i] = s[i].known && !s[i].n ? Dim::of(std::int64_t(double(s[i].v) * (*scales)[i]))
                                         : Dim::unknown();
        outs[0].shape = s;
    } else {
        setWhy(n, outs[0], "output size is not a constant");
    }
    return {};
}

Status Importer::shapeDepthToSpace(const ox::NodeProto& n, Outs& outs) {
    const auto b = attrInt(n, "blocksize", 1);
    const std::optional<Shape>& xs = in(n, 0).shape;
    if (!xs || xs->size() != 4) return {};
    Shape s = *xs;
    if (n.op_type() == "DepthToSpace") {
        s[1] = div(s[1], Dim::of(b * b));
        s[2] = mul(s[2], Dim::of(b));
        s[3] = mul(s[3], Dim::of(b));
    } else {
        s[1] = mul(s[1], Dim::of(b * b));
        s[2] = div(s[2], Dim::of(b));
        s[3] = div(s[3], Dim::of(b));
    }
    outs[0].shape = s;
    return {};
}

Status Importer::shapeReduce(const ox::NodeProto& n, Outs& outs) {
    const Value& x = in(n, 0);
    if (!x.shape) {
        outs[0].why = x.why;
        return {};
    }
    const Shape& xs = *x.shape;
    std::optional<std::vector<std::int64_t>> axes = attrInts(n, "axes");
    if (!axes && hasIn(n, 1)) axes = concrete(inputData(n, 1)); // ReduceSum 13, opset 18
    const bool keep = attrInt(n, "keepdims", 1) != 0;
    std::set<std::int64_t> red;
    if (axes) {
        for (auto a : *axes) {
            auto ax = normAxis(a, xs.size(), n.op_type());
            if (!ax) return fail(ax);
            red.insert(*ax);
        }
    } else {
        for (size_t i = 0; i < xs.size(); ++i)
            red.insert(std::int64_t(i));
    }
    Shape s;
    for (size_t i = 0; i < xs.size(); ++i) {
        if (!red.count(std::int64_t(i)))
            s.push_back(xs[i]);
        else if (keep)
            s.push_back(Dim::of(1));
    }
    outs[0].shape = s;
    return {};
}

} // namespace tilescope::onnximport
