#include "mapping/iobound.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <vector>

namespace tilescope {

namespace {

// Output positions along one axis whose window tap `tap` lands on a real input row
// (0 <= h s - pad_begin + tap d < in), pad_begin = pad / 2 as the transfers place it.
long long validPositions(int out, int in, int stride, int pad, int dil, int tap) {
    const long long off = (long long)tap * dil - pad / 2;
    long long n = 0;
    for (int h = 0; h < out; ++h) {
        const long long r = (long long)h * stride + off;
        n += r >= 0 && r < in;
    }
    return n;
}

bool hasMacs(const Layer& l) {
    return l.kind == LayerKind::Conv || l.kind == LayerKind::Gemm || l.kind == LayerKind::MatMul;
}

} // namespace

long long touchedRows(int out, int in, int stride, int pad, int dil, int kernel) {
    std::vector<char> hit(size_t(std::max(in, 0)), 0);
    for (int h = 0; h < out; ++h)
        for (int t = 0; t < kernel; ++t) {
            const long long r = (long long)h * stride + (long long)t * dil - pad / 2;
            if (r >= 0 && r < in) hit[size_t(r)] = 1;
        }
    return std::count(hit.begin(), hit.end(), 1);
}

FastMemory groupMemory(const Hardware& hw, int tiles) {
    return {double(tiles) * (double(hw.bufferBytes) + kArrayLocalBytes), hw.dataBits / 8.0,
            kPartialSumBytes};
}

double reuseBound(const Layer& l) {
    if (l.kind != LayerKind::Conv) return 1.0;
    auto axis = [](int k, int s, int d) {
        const int step = std::max(1, s / std::gcd(std::max(1, s), std::max(1, d)));
        return double((k + step - 1) / step);
    };
    return std::max(1.0, axis(l.kernelH, l.strideH, l.dilationH) *
                             axis(l.kernelW, l.strideW, l.dilationW));
}

double realMacs(const Layer& l, int batch) {
    if (!hasMacs(l)) return 0;
    if (l.kind != LayerKind::Conv) return double(l.macsPerSample()) * batch;
    long long rows = 0, cols = 0;
    for (int t = 0; t < l.kernelH; ++t)
        rows += validPositions(l.outH, l.inH, l.strideH, l.padH, l.dilationH, t);
    for (int t = 0; t < l.kernelW; ++t)
        cols += validPositions(l.outW, l.inW, l.strideW, l.padW, l.dilationW, t);
    const double cg = double(l.inC) / std::max(1, l.groups);
    return double(l.outC) * cg * double(rows) * double(cols) * batch;
}

double neededInputElements(const Layer& l, size_t k) {
    if (k >= l.inputs.size()) return 0;
    const double whole = double(l.inputs[k].bytesPerSample);
    const long long plane = (long long)l.inH * l.inW;
    const bool windowed = l.kind == LayerKind::Conv || l.kind == LayerKind::Pool;
    if (!windowed || plane <= 0 || l.inputs[k].bytesPerSample % plane) return whole;
    const double channels = double(l.inputs[k].bytesPerSample / plane);
    return channels *
           double(touchedRows(l.outH, l.inH, l.strideH, l.padH, l.dilationH, l.kernelH)) *
           double(touchedRows(l.outW, l.inW, l.strideW, l.padW, l.dilationW, l.kernelW));
}

namespace {

// The bound's grid (M = 2S x 2^(j/8), j = -40..40) and, per grid point, the outputs a phase
// first touches (xMax) and (z / 3)^1.5 at the four sizes z the bound takes: they depend on the
// memory alone, and the mapper asks for the bound of many leaves on one tile's memory, so each
// thread keeps the last memory's.
struct PebbleGrid {
    static constexpr int kSteps = 81;
    double bytes = -1, e = 0, p = 0;
    std::array<double, kSteps> M{}, xMax{}, powA{}, powB{}, chordA{}, chordB{};
};

const PebbleGrid& pebbleGrid(const FastMemory& m) {
    thread_local PebbleGrid grid;
    const double e = m.elementBytes, p = m.partialBytes;
    if (grid.bytes == m.bytes && grid.e == e && grid.p == p) return grid;
    const double big = std::max(e, p);
    auto pw = [](double z) { return std::pow(z / 3.0, 1.5); };
    for (int j = -40; j <= 40; ++j) {
        const size_t at = size_t(j + 40);
        const double M = 2.0 * m.bytes * std::pow(2.0, j / 8.0);
        const double Y = m.bytes + M + big; // start contents + the phase's transfers
        const double xMax = Y / e;
        grid.M[at] = M;
        grid.xMax[at] = xMax;
        grid.powA[at] = pw(Y);
        grid.powB[at] = pw(2 * Y);
        grid.chordA[at] = pw(Y + p * xMax);
        grid.chordB[at] = pw(2 * Y + p * xMax);
    }
    grid.bytes = m.bytes, grid.e = e, grid.p = p;
    return grid;
}

} // namespace

double pebbleBoundBytes(double macs, double outputs, double reuse, const FastMemory& m,
                        double processors) {
    if (macs <= 0 || m.bytes <= 0) return 0;
    const double e = m.elementBytes, p = m.partialBytes;
    const double scale = std::sqrt(reuse / (e * e * p));
    // g(z) = scale (z / 3)^1.5, its powers from the memory's grid.
    const PebbleGrid& grid = pebbleGrid(m);
    double best = 0;
    // M over a geometric grid around its optimum 2S (the bound is smooth in M). Two ways
    // to charge the outputs a phase touches first (docs/cost-model.md §2a), both valid:
    // (a) all of them on the chord, (b) the unfinished ones in the phase's budget and only
    // those finished within the phase on the chord.
    for (size_t at = 0; at < size_t(PebbleGrid::kSteps); ++at) {
        const double M = grid.M[at];
        const double xMax = grid.xMax[at]; // outputs first touched in one phase
        const double ga = scale * grid.powA[at], gb = scale * grid.powB[at];
        const double chordA = (scale * grid.chordA[at] - ga) / xMax;
        const double chordB = (scale * grid.chordB[at] - gb) / xMax;
        best = std::max(best, M * ((macs - chordA * outputs) / ga - processors));
        best = std::max(best, M * ((macs - chordB * outputs) / gb - processors));
    }
    return best;
}

double layerPebbleBound(const Layer& l, int batch, const FastMemory& m) {
    if (!hasMacs(l)) return 0;
    const double outputs = double(l.outputBytesPerSample()) * batch;
    return pebbleBoundBytes(realMacs(l, batch), outputs, reuseBound(l), m);
}

double arrayLowerBoundBytes(const Layer& l, int batch, int tiles, const Hardware& hw) {
    const double db = hw.dataBits / 8.0;
    double once = double(l.weightBytes) + double(l.outputBytesPerSample()) * batch;
    for (size_t k = 0; k < l.inputs.size(); ++k)
        once += neededInputElements(l, k) * batch;
    if (!hasMacs(l) || hw.arch == TileArch::Cim) return once * db;
    const FastMemory local{kArrayLocalBytes, db, kPartialSumBytes};
    const double pebble =
        pebbleBoundBytes(realMacs(l, batch), double(l.outputBytesPerSample()) * batch,
                         reuseBound(l), local, std::max(1, tiles));
    return std::max(once * db, pebble);
}

} // namespace tilescope
