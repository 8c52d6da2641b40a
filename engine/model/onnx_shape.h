// Shape values for the ONNX importer: dimensions that are a known multiple of the batch
// size N (dim = v, or v * N), so per-sample shapes survive Reshape chains such as
// torch's [S, N*heads, dk] attention layout, and small integer tensors for shape arithmetic.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tilescope::onnximport {

// One dimension (or one element of a shape tensor): v, or v * N when `n` is set.
// Unknown when !known. Data elements may be negative (Reshape's -1); dims never are.
struct Dim {
    std::int64_t v = 0;
    bool n = false;
    bool known = false;

    static Dim of(std::int64_t value, bool batch = false) { return Dim{value, batch, true}; }
    static Dim unknown() { return Dim{}; }
    bool isConst(std::int64_t value) const { return known && !n && v == value; }
    bool operator==(const Dim& o) const {
        return known == o.known && (!known || (v == o.v && n == o.n));
    }
};

Dim mul(Dim a, Dim b); // unknown when it would be N^2
Dim div(Dim a, Dim b); // exact division only when N is involved; integer division otherwise
Dim add(Dim a, Dim b); // only like terms (both constant or both multiples of N)
Dim sub(Dim a, Dim b);
Dim product(const std::vector<Dim>& dims, size_t from = 0, size_t to = SIZE_MAX);

using Shape = std::vector<Dim>;

bool fullyKnown(const Shape& s);
std::string toString(const Shape& s); // "[N,3,224,224]", "?" for unknown dims

// Elements per sample: the product with the batch factor N divided out. A product without
// N is taken as is (a fixed batch-1 export). -1 when unknown or when N appears twice.
std::int64_t perSampleElements(const Shape& s);
// Per-sample dims: the batch-carrying dim replaced by its coefficient (dropped when 1); with
// no batch-carrying dim a leading 1 is dropped (fixed batch-1 export). nullopt if unknown.
std::optional<std::vector<std::int64_t>> perSampleDims(const Shape& s);

// Numpy broadcasting of two shapes (unknown dims stay unknown).
std::optional<Shape> broadcast(const Shape& a, const Shape& b);

} // namespace tilescope::onnximport
