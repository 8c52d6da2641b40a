// Runs of a box of a feature map in each DRAM layout (dram_layout.h).
#include "eval/dram_layout.h"

#include <algorithm>

namespace tilescope {

namespace {

// Runs of a box in a row-major array of `dims` axes (outermost first): the innermost axes
// the box covers whole, with the first one it does not, make one run; every other
// combination of the outer axes starts another. Adds to out.
void rowMajorRuns(int dims, const long long* size, const long long* ext, long long elemBits,
                  int burstBytes, DramRuns& out) {
    long long volume = 1;
    for (int d = 0; d < dims; ++d) {
        if (ext[d] <= 0) return;
        volume *= ext[d];
    }
    long long run = 1;
    for (int d = dims - 1; d >= 0; --d) {
        run *= ext[d];
        if (ext[d] != size[d]) break;
    }
    const long long runs = volume / run;
    const std::uint64_t runBytes = std::uint64_t((run * elemBits + 7) / 8);
    const std::uint64_t burst = std::uint64_t(std::max(1, burstBytes));
    if (out.runs == 0) out.runBytes = runBytes;
    out.runs += std::uint64_t(runs);
    out.burstBytes += std::uint64_t(runs) * ((runBytes + burst - 1) / burst) * burst;
}

// The axis order of a plain layout, outermost first, as indices into [N, C, H, W].
std::array<int, 4> axesOf(DramLayout l) {
    switch (l) {
    case DramLayout::Nhwc:
        return {0, 2, 3, 1};
    case DramLayout::Chwn:
        return {1, 2, 3, 0};
    default:
        return {0, 1, 2, 3};
    }
}

} // namespace

const char* layoutName(DramLayout l) {
    switch (l) {
    case DramLayout::Nchw:
        return "nchw";
    case DramLayout::Nhwc:
        return "nhwc";
    case DramLayout::Chwn:
        return "chwn";
    case DramLayout::Nchwc:
        return "nchwc";
    }
    return "nchw";
}

std::optional<DramLayout> layoutFromName(std::string_view name) {
    for (DramLayout l : kLayouts)
        if (name == layoutName(l)) return l;
    return std::nullopt;
}

DramRuns dramRuns(DramLayout l, const std::array<int, 4>& shape, const std::array<int, 4>& lo,
                  const std::array<int, 4>& hi, int dataBits, int channelBlock, int burstBytes) {
    DramRuns out;
    if (l != DramLayout::Nchwc) {
        const std::array<int, 4> ax = axesOf(l);
        long long size[4], ext[4];
        for (int d = 0; d < 4; ++d) {
            size[d] = shape[size_t(ax[size_t(d)])];
            ext[d] = hi[size_t(ax[size_t(d)])] - lo[size_t(ax[size_t(d)])];
        }
        rowMajorRuns(4, size, ext, dataBits, burstBytes, out);
        for (int d = 0; d < 4; ++d)
            out.base = out.base * std::uint64_t(size[d]) + std::uint64_t(lo[size_t(ax[size_t(d)])]);
        return out;
    }
    // [N, C/c, H, W, c]: the box's channels as a first partial block, the whole blocks
    // between, and a last partial block, each a regular box of the five axes. A tensor whose
    // C is no multiple of c has its last block padded to c.
    const long long c = std::max(1, channelBlock);
    const long long blocks = (shape[1] + c - 1) / c;
    const long long size[5] = {shape[0], blocks, shape[2], shape[3], c};
    auto part = [&](long long a, long long b) {
        if (a >= b) return;
        const bool whole = a % c == 0 && b % c == 0;
        const long long ext[5] = {hi[0] - lo[0], whole ? (b - a) / c : 1, hi[2] - lo[2],
                                  hi[3] - lo[3], whole ? c : b - a};
        rowMajorRuns(5, size, ext, dataBits, burstBytes, out);
    };
    const std::uint64_t at[5] = {std::uint64_t(lo[0]), std::uint64_t(lo[1] / c),
                                 std::uint64_t(lo[2]), std::uint64_t(lo[3]),
                                 std::uint64_t(lo[1] % c)};
    for (int d = 0; d < 5; ++d)
        out.base = out.base * std::uint64_t(size[d]) + at[d];
    long long c0 = lo[1];
    const long long c1 = hi[1];
    if (c0 % c != 0) {
        const long long headEnd = std::min(c1, (c0 / c + 1) * c);
        part(c0, headEnd);
        c0 = headEnd;
    }
    const long long tail = std::max(c0, c1 / c * c);
    part(c0, tail);
    part(tail, c1);
    return out;
}

DramRuns oneRun(std::uint64_t bytes, int burstBytes) {
    const std::uint64_t burst = std::uint64_t(std::max(1, burstBytes));
    if (bytes == 0) return {};
    DramRuns r;
    r.runs = 1;
    r.runBytes = bytes;
    r.burstBytes = (bytes + burst - 1) / burst * burst;
    return r;
}

DramRuns dramRuns(const DramRunModel& m, DramLayout l, const std::array<int, 4>& shape,
                  const std::array<int, 4>& lo, const std::array<int, 4>& hi, int dataBits) {
    return dramRuns(l, shape, lo, hi, dataBits, m.channelBlock, m.burstBytes);
}

double runOverheadBytes(const DramRunModel& m, const DramRuns& r, double bytes) {
    return std::max(0.0, double(r.burstBytes) - bytes) +
           double(r.runs) * m.overheadCycles * m.portShare;
}

} // namespace tilescope
