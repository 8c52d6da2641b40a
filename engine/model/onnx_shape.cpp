#include "model/onnx_shape.h"

#include <limits>

namespace tilescope::onnximport {

Dim mul(Dim a, Dim b) {
    if (!a.known || !b.known || (a.n && b.n)) return Dim::unknown();
    std::int64_t p = 0;
    if (__builtin_mul_overflow(a.v, b.v, &p)) return Dim::unknown(); // garbage dims
    return Dim::of(p, a.n || b.n);
}

Dim div(Dim a, Dim b) {
    if (!a.known || !b.known || b.v == 0) return Dim::unknown();
    if (b.v == -1 && a.v == std::numeric_limits<std::int64_t>::min()) return Dim::unknown();
    if (b.n) {
        if (!a.n) return Dim::unknown();
        return (a.v % b.v == 0) ? Dim::of(a.v / b.v) : Dim::unknown();
    }
    // v*N / b is only a multiple of N when b divides v; otherwise N's value matters.
    if (a.n && a.v % b.v != 0) return Dim::unknown();
    return Dim::of(a.v / b.v, a.n); // ONNX integer Div truncates
}

Dim add(Dim a, Dim b) {
    if (!a.known || !b.known) return Dim::unknown();
    std::int64_t s = 0;
    if (a.n == b.n) return __builtin_add_overflow(a.v, b.v, &s) ? Dim::unknown() : Dim::of(s, a.n);
    if (a.isConst(0)) return b;
    if (b.isConst(0)) return a;
    return Dim::unknown();
}

Dim sub(Dim a, Dim b) {
    if (!b.known || b.v == std::numeric_limits<std::int64_t>::min()) return Dim::unknown();
    return add(a, Dim::of(-b.v, b.n));
}

Dim product(const std::vector<Dim>& dims, size_t from, size_t to) {
    Dim p = Dim::of(1);
    for (size_t i = from; i < dims.size() && i < to; ++i)
        p = mul(p, dims[i]);
    return p;
}

bool fullyKnown(const Shape& s) {
    for (const Dim& d : s)
        if (!d.known) return false;
    return true;
}

std::string toString(const Shape& s) {
    std::string r = "[";
    for (size_t i = 0; i < s.size(); ++i) {
        if (i) r += ",";
        const Dim& d = s[i];
        if (!d.known)
            r += "?";
        else if (d.n)
            r += (d.v == 1 ? std::string() : std::to_string(d.v) + "*") + "N";
        else
            r += std::to_string(d.v);
    }
    return r + "]";
}

std::int64_t perSampleElements(const Shape& s) {
    const Dim p = product(s);
    return p.known ? p.v : -1;
}

std::optional<std::vector<std::int64_t>> perSampleDims(const Shape& s) {
    if (!fullyKnown(s)) return std::nullopt;
    int batchDims = 0;
    for (const Dim& d : s)
        batchDims += d.n ? 1 : 0;
    if (batchDims > 1) return std::nullopt;
    std::vector<std::int64_t> out;
    for (size_t i = 0; i < s.size(); ++i) {
        const Dim& d = s[i];
        if (d.n) {
            if (d.v != 1) out.push_back(d.v);
        } else if (!(batchDims == 0 && i == 0 && d.v == 1 && s.size() > 1)) {
            out.push_back(d.v);
        }
    }
    return out;
}

std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
    const size_t r = std::max(a.size(), b.size());
    Shape out(r);
    for (size_t i = 0; i < r; ++i) {
        const Dim da = i + a.size() >= r ? a[i + a.size() - r] : Dim::of(1);
        const Dim db = i + b.size() >= r ? b[i + b.size() - r] : Dim::of(1);
        if (da.isConst(1))
            out[i] = db;
        else if (db.isConst(1))
            out[i] = da;
        else if (!da.known)
            out[i] = db;
        else if (!db.known)
            out[i] = da;
        else if (da == db)
            out[i] = da;
        else
            return std::nullopt;
    }
    return out;
}

} // namespace tilescope::onnximport
