// Communication lower bounds for one layer (docs/cost-model.md §2a): how many bytes must
// cross the boundary of a fast memory of S bytes for a layer to run on the processors
// behind it. Used at two levels: the PE array's local storage (the mapper's per-tile loop
// orders) and a leaf's tile group (its buffers, against the DRAM and NoC bytes the
// evaluator moves for it; engine/report/layers.h).
#pragma once

#include "hw/hardware.h"
#include "model/network.h"

namespace tilescope {

// Local storage next to each tile's PE array (weight registers + partial-sum accumulators)
// that the mapper's per-tile tiling blocks for; NVDLA-class arrays have a few tens of KiB.
constexpr double kArrayLocalBytes = 64 * 1024;
constexpr double kPartialSumBytes = 4; // 32-bit partial sums

// The fast memory a bound is taken for.
struct FastMemory {
    double bytes = 0;        // capacity S
    double elementBytes = 1; // an input, weight or finished output element (data width)
    double partialBytes = 4; // a partial sum held or moved before its output is finished
};

// A tile group's fast memory: its tiles' buffers and array local storage, elements at the
// template's data width, partial sums at 32 bits.
FastMemory groupMemory(const Hardware& hw, int tiles);

// Reuse bound R' of a layer: the most output positions one input element feeds per
// output channel, ceil(Kh / (s_h / gcd(s_h, d_h))) x the same along the columns (R =
// Kh Kw / s^2 when the stride divides the kernel). 1 for products and non-MAC layers.
double reuseBound(const Layer& l);

// MACs of `batch` samples whose input element is not padding: the MACs any schedule must
// perform (a padded tap multiplies a zero that is never loaded).
double realMacs(const Layer& l, int batch);

// Input rows (or columns) some window tap touches: `out` output rows of stride `stride`,
// dilation `dil` and `kernel` taps over `in` rows, pad / 2 of padding before the first.
long long touchedRows(int out, int in, int stride, int pad, int dil, int kernel);

// Elements of input k one sample needs at least once: the channels of that input times
// the input rows and columns some window touches (a 1x1 stride-2 conv needs a quarter of
// its input); inputs read whole (MatMul operand B, non-spatial inputs) count whole.
double neededInputElements(const Layer& l, size_t k);

// The red-blue pebble bound in bytes for `macs` MACs producing `outputs` output elements
// with reuse R' on a fast memory `m` (docs/cost-model.md §2a):
//   Q >= max over M > 0 of M ((macs - c(M) outputs) / g(M) - 1),
// g(M) = sqrt(R' / (e^2 p)) ((S + M + P) / 3)^1.5 the most MACs a phase of M bytes of
// transfers can perform (e, p: element and partial-sum bytes, P the larger), c(M) the
// chord slope for the outputs first touched in a phase.
// Its leading term is 2 macs e sqrt(p) / sqrt(R' S). 0 when the bound is not positive.
// With `processors` > 1 the MACs run on that many processors, each behind its own fast
// memory `m`, every output made on one of them: the per-processor bounds summed at each
// M, M ((macs - c(M) outputs) / g(M) - processors), whatever the split.
double pebbleBoundBytes(double macs, double outputs, double reuse, const FastMemory& m,
                        double processors = 1);

// pebbleBoundBytes for `batch` samples of layer `l`: its real MACs and outputs. 0 for
// layers without MACs (pooling, element-wise and vector layers reuse nothing).
double layerPebbleBound(const Layer& l, int batch, const FastMemory& m);

// The array level (docs/cost-model.md §2a "Two levels"): the least bytes any mapping of one
// invocation of `batch` samples of `l` on `tiles` tiles moves between the tiles' global
// buffers and their PE arrays / vector units, for any partition of the outputs over the
// tiles: every needed input element, weight and output once, or, when larger, the pebble
// bound of `tiles` arrays with kArrayLocalBytes of local storage each (MAC layers on
// compute-in-memory tiles, whose weights sit in the crossbars, only the former).
double arrayLowerBoundBytes(const Layer& l, int batch, int tiles, const Hardware& hw);

} // namespace tilescope
