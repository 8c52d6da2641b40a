#include "mapping/cim.h"

#include "mapping/cim_records.h"

#include <algorithm>
#include <numeric>

namespace tilescope {

namespace {

Count ceilDiv(Count a, Count b) {
    return (a + b - 1) / b;
}

// Programmings of n blocks with ids a, a + step, ..., visited in that order `passes` times
// over X direct-mapped crossbars (id mod X). The ids fall on T = X / gcd(step, X) crossbars,
// n / T or n / T + 1 on each; a crossbar holding one block keeps it after its first pass,
// one holding m > 1 blocks rewrites each on every pass (m x passes).
Count cyclicProgrammings(Count n, Count step, Count X, Count passes) {
    const Count g = std::gcd(step % X, X); // gcd(0, X) == X: every id on one crossbar
    const Count T = X / g;
    const Count q = n / T, rem = n % T;
    auto perCrossbar = [&](Count m) { return m <= 1 ? m : m * passes; };
    return rem * perCrossbar(q + 1) + (T - rem) * perCrossbar(q);
}

int indexOf(const CimOrder& o, CimLoop l) {
    return int(std::find(o.loops.begin(), o.loops.end(), l) - o.loops.begin());
}

} // namespace

std::string CimOrder::text() const {
    std::string s;
    for (CimLoop l : loops) {
        if (!s.empty()) s += ' ';
        s += char(l);
        if (l != CimLoop::Space) continue;
        s += boxed() ? std::to_string(box[0]) + "x" + std::to_string(box[1]) + "x" +
                           std::to_string(box[2])
                     : std::to_string(chunk);
    }
    return s;
}

Count CimOrder::chunks(const CimBlocks& k) const {
    if (boxed() && k.boxed())
        return ceilDiv(k.space.samples, box[0]) * ceilDiv(k.space.rows, box[1]) *
               ceilDiv(k.space.cols, box[2]);
    return (k.positions + chunk - 1) / chunk;
}

Bytes cimInputReads(const CimBlocks& k, const CimOrder& o) {
    const CimSpace& sp = k.space;
    if (!k.boxed()) return double(k.colBlocks) * double(k.positions) * sp.pixelBytes;
    auto rowsOf = [&](Count h) { return double((h - 1) * sp.strideH + sp.spanH); };
    auto colsOf = [&](Count w) { return double((w - 1) * sp.strideW + sp.spanW); };
    // Sum over the boxes of one axis of a per-length window: full boxes and the remainder.
    auto axis = [](Count extent, Count len, auto window) {
        return double(extent / len) * window(len) + (extent % len ? window(extent % len) : 0.0);
    };
    double pixels = 0;
    if (o.boxed()) {
        pixels = axis(sp.samples, o.box[0], [](Count n) { return double(n); }) *
                 axis(sp.rows, o.box[1], rowsOf) * axis(sp.cols, o.box[2], colsOf);
    } else if (o.chunk < sp.cols) {
        // Chunks shorter than a row lie in one row or straddle two: per output row, the
        // chunks that start in it.
        const Count s = o.chunk, P = k.positions, W = sp.cols;
        for (Count g = 0; g < sp.samples * sp.rows; ++g) {
            const Count p = g * W, end = p + W; // the row's positions [p, end)
            const Count b0 = ceilDiv(p, s) * s; // the first chunk starting in the row
            if (b0 >= end) continue;
            const Count inside = (end - b0) / s; // chunks ending in the row
            pixels += double(inside) * rowsOf(1) * colsOf(s);
            const Count b1 = b0 + inside * s; // a chunk starting here and running on
            if (b1 >= end) continue;
            if (end >= P) // the last row: the data ends with the row
                pixels += rowsOf(1) * colsOf(P - b1);
            else if ((g + 1) % sp.rows != 0) // into the next row of the same sample
                pixels += rowsOf(2) * colsOf(W);
            else // into the next sample: both planes whole
                pixels += 2.0 * rowsOf(sp.rows) * colsOf(W);
        }
    } else {
        // Consecutive positions: a chunk within one row reads its columns' window, one
        // spanning rows of a sample reads those rows whole, one spanning samples reads the
        // whole planes it touches.
        const Count plane = sp.rows * sp.cols;
        for (Count p0 = 0; p0 < k.positions; p0 += o.chunk) {
            const Count p1 = std::min(k.positions, p0 + o.chunk) - 1;
            const Count n0 = p0 / plane, n1 = p1 / plane;
            const Count h0 = p0 % plane / sp.cols, h1 = p1 % plane / sp.cols;
            if (n0 != n1)
                pixels += double(n1 - n0 + 1) * rowsOf(sp.rows) * colsOf(sp.cols);
            else if (h0 != h1)
                pixels += rowsOf(h1 - h0 + 1) * colsOf(sp.cols);
            else
                pixels += rowsOf(1) * colsOf(p1 % sp.cols - p0 % sp.cols + 1);
        }
    }
    return double(k.colBlocks) * pixels * sp.pixelBytes;
}

Count cimProgrammings(const CimBlocks& k, const CimOrder& o) {
    const Count nR = k.rowBlocks, nC = k.colBlocks, X = std::max(1, k.crossbars);
    const Count passes = o.chunks(k);
    const int s = indexOf(o, CimLoop::Space), c = indexOf(o, CimLoop::Col),
              r = indexOf(o, CimLoop::Row);
    if (s == 2) return nR * nC; // every block stays for all chunks in a row: written once
    if (s == 0)                 // each chunk visits every block once, in some order
        return cyclicProgrammings(nR * nC, 1, X, passes);
    if (c < r) // c s r: per column, its nR consecutive blocks, chunk by chunk
        return nC * cyclicProgrammings(nR, 1, X, passes);
    return nR * cyclicProgrammings(nC, nR, X, passes); // r s c: per row block, stride nR
}

Bytes cimPsumBytes(const CimBlocks& k, const CimOrder& o) {
    // One row block: every sum is complete after its pass, nothing stays open.
    if (k.rowBlocks <= 1) return double(o.chunk) * k.weightColumns * 4.0;
    const int r = indexOf(o, CimLoop::Row);
    const bool spaceInside = indexOf(o, CimLoop::Space) > r;
    const bool colsInside = indexOf(o, CimLoop::Col) > r;
    const double positions = spaceInside ? double(o.chunks(k) * o.chunk) : double(o.chunk);
    const double columns = double(k.weightColumns) * (colsInside ? double(k.colBlocks) : 1.0);
    return positions * columns * 4.0;
}

CimOrder cimDefaultOrder(const CimBlocks& k, Bytes psumBuffer) {
    CimOrder o;
    const Count fit = Count(std::clamp(psumBuffer / (4.0 * k.weightColumns), 1.0,
                                       double(std::max<Count>(1, k.positions))));
    o.chunk = std::max<Count>(1, std::min({k.rowPositions, k.positions, fit}));
    return o;
}

CimChoice cimOrderCost(const CimNests& nests, const CimOrder& o, bool reads) {
    CimChoice c{o, 0, 0, 0};
    for (const auto& [b, n] : nests) {
        c.programmings += cimProgrammings(b, o) * n;
        c.psumBytes += cimPsumBytes(b, o) * double(n);
        if (reads) c.inputReads += cimInputReads(b, o) * double(n);
    }
    return c;
}

namespace {

// The order (every permutation x the candidate chunks) with the fewest programmings summed
// over `cores` (blocks, how many cores have them) whose partial sums, summed alike, fit.
CimChoice bestOrderOver(const CimNests& cores, Bytes psumBuffer) {
    const CimBlocks& k = cores.front().first;
    std::vector<Count> chunks;
    for (Count x = k.positions; x >= 1; x = x > 1 ? ceilDiv(x, 2) : 0) {
        chunks.push_back(x);
        if (x == 1) break;
    }
    chunks.push_back(std::max<Count>(1, std::min(k.rowPositions, k.positions)));
    // Programmings only grow with the chunk count and the partial sums with the chunk, so
    // the largest chunk whose sums fit is the best of an order with the spatial loop
    // outside the row-block loop (one column block or all of them open on every core); an
    // order with it inside needs every position's sums anyway and is best with one chunk (P).
    double one = 0, all = 0;
    for (const auto& [b, n] : cores) {
        one += double(b.weightColumns) * double(n);
        all += double(b.weightColumns) * double(b.colBlocks) * double(n);
    }
    for (double columns : {one, all})
        chunks.push_back(Count(std::clamp(psumBuffer / (4.0 * columns), 1.0,
                                          double(std::max<Count>(1, k.positions)))));
    std::vector<CimOrder> spaces;
    for (Count chunk : chunks)
        spaces.push_back(CimOrder{{}, chunk});
    if (k.boxed()) { // the method's split loops: halvings of each axis
        auto halvings = [](Count x) {
            std::vector<Count> out;
            for (; x > 1; x = ceilDiv(x, 2))
                out.push_back(x);
            out.push_back(1);
            return out;
        };
        for (Count n : halvings(k.space.samples))
            for (Count h : halvings(k.space.rows))
                for (Count w : halvings(k.space.cols))
                    spaces.push_back(CimOrder{{}, n * h * w, {n, h, w}});
    }
    constexpr CimLoop S = CimLoop::Space, C = CimLoop::Col, R = CimLoop::Row;
    const std::array<std::array<CimLoop, 3>, 6> perms{
        {{C, S, R}, {C, R, S}, {R, C, S}, {R, S, C}, {S, C, R}, {S, R, C}}};
    // The fewest programmings first; the memory accesses (independent of the loop order)
    // only for the chunkings that reach them.
    std::vector<std::pair<CimChoice, size_t>> fit; // with its chunking's index in spaces
    for (size_t i = 0; i < spaces.size(); ++i) {
        // No order holds fewer sums than one chunk of one column block per nest.
        if (double(spaces[i].chunk) * one * 4.0 > psumBuffer) continue;
        for (const auto& loops : perms) {
            CimOrder o = spaces[i];
            o.loops = loops;
            const CimChoice c = cimOrderCost(cores, o, false);
            if (c.psumBytes <= psumBuffer) fit.push_back({c, i});
        }
    }
    // Only when not even one chunk of one column block per core fits: the smallest need.
    if (fit.empty()) return cimOrderCost(cores, CimOrder{{C, S, R}, 1}, true);
    Count least = fit.front().first.programmings;
    for (const auto& [c, i] : fit)
        least = std::min(least, c.programmings);
    std::vector<double> reads(spaces.size(), -1.0); // a chunking's reads, whatever the order
    CimChoice best;
    bool have = false;
    for (auto& [c, i] : fit) {
        if (c.programmings != least) continue;
        if (reads[i] < 0) reads[i] = cimOrderCost(cores, spaces[i], true).inputReads;
        c.inputReads = reads[i];
        if (!have || c.inputReads < best.inputReads ||
            (c.inputReads == best.inputReads && c.psumBytes < best.psumBytes)) {
            best = c;
            have = true;
        }
    }
    return best;
}

} // namespace

CimChoice cimBestOrder(const CimBlocks& k, Bytes psumBuffer) {
    return bestOrderOver({{k, 1}}, psumBuffer);
}

CimChoice cimBestOrder(const CimNests& nests, Bytes psumBuffer, CimRecordBook* records) {
    if (!records) return bestOrderOver(nests, psumBuffer);
    const nlohmann::json workload = cimWorkloadJson(nests, psumBuffer);
    const std::string key = workload.dump();
    if (auto c = records->find(key)) return *c;
    const CimChoice best = bestOrderOver(nests, psumBuffer);
    records->add(key, workload, best);
    return best;
}

Count contiguousRuns(const std::array<Count, 4>& window, const std::array<Count, 4>& tensor) {
    Count runs = 1;
    int d = 3;
    // Innermost dimensions covered whole merge with the next one out.
    while (d > 0 && window[size_t(d)] >= tensor[size_t(d)])
        --d;
    for (int i = 0; i < d; ++i)
        runs *= std::max<Count>(1, window[size_t(i)]);
    return runs;
}

CimTileWork cimTileWork(const Layer& l, const Hardware& hw, Count groupsT, Count kgT, Count cg,
                        Count samples, Count outRows, Count outCols) {
    const CimParams& c = hw.cim;
    CimTileWork w;
    CimBlocks& k = w.blocks;
    k.weightColumns = std::max(1, c.weightColumns(hw.dataBits));
    k.crossbars = c.doubleBufferedCrossbars ? std::max(1, c.crossbars() / 2) : c.crossbars();
    const bool conv = l.kind == LayerKind::Conv;
    const Count rg = std::max<Count>(1, cg) * (conv ? std::max(1, l.kernelH) : 1) *
                     (conv ? std::max(1, l.kernelW) : 1);
    const Count wc = k.weightColumns;
    groupsT = std::max<Count>(1, groupsT);
    kgT = std::max<Count>(1, kgT);
    if (groupsT > 1 && rg <= c.rows && kgT <= wc) {
        const Count perCrossbar = std::min<Count>(c.rows / rg, wc / kgT);
        k.rowBlocks = 1;
        k.colBlocks = ceilDiv(groupsT, perCrossbar);
    } else {
        k.rowBlocks = ceilDiv(rg, c.rows);
        k.colBlocks = groupsT * ceilDiv(kgT, wc);
    }
    // A MatMul's operand B is new for every sample: its blocks are written per sample.
    const bool perSample = l.kind == LayerKind::MatMul;
    const Count perInvocation = perSample ? std::max<Count>(1, samples) : 1;
    k.positions = std::max<Count>(1, (perSample ? 1 : samples) * outRows * outCols);
    k.rowPositions = std::max<Count>(1, outCols);
    k.space.samples = std::max<Count>(1, perSample ? 1 : samples);
    k.space.rows = std::max<Count>(1, outRows);
    k.space.cols = std::max<Count>(1, outCols);
    if (conv) {
        k.space.strideH = std::max(1, l.strideH);
        k.space.strideW = std::max(1, l.strideW);
        k.space.spanH = (std::max(1, l.kernelH) - 1) * std::max(1, l.dilationH) + 1;
        k.space.spanW = (std::max(1, l.kernelW) - 1) * std::max(1, l.dilationW) + 1;
    }
    k.space.pixelBytes = double(std::max<Count>(1, cg) * groupsT) * hw.dataBits / 8.0;
    // The loop nests that run: one over the tile's crossbars, or one per core over its own
    // (column blocks dealt to the cores in turn: q or q + 1 each).
    CimNests nests{{k, 1}};
    if (c.binding == CimBinding::OutputChannels) {
        CimBlocks per = k;
        per.crossbars =
            c.doubleBufferedCrossbars ? std::max(1, c.crossbarsPerCore / 2) : c.crossbarsPerCore;
        const Count q = k.colBlocks / c.cores, rem = k.colBlocks % c.cores;
        nests.clear();
        if (rem > 0) nests.push_back({per, rem}), nests.back().first.colBlocks = q + 1;
        if (q > 0) nests.push_back({per, c.cores - rem}), nests.back().first.colBlocks = q;
    }
    const CimBlocks& busiest = nests.front().first; // the most column blocks
    w.best = cimBestOrder(nests, c.psumBufferBytes, c.records.get());
    w.best.programmings *= perInvocation;
    // The default template's cores each fill their share of the partial-sum buffer.
    Count active = 0;
    for (const auto& [b, n] : nests)
        active += n;
    const CimOrder dflt = cimDefaultOrder(k, c.psumBufferBytes / double(active));
    w.defaultProgrammings = 0;
    for (const auto& [b, n] : nests)
        w.defaultProgrammings += cimProgrammings(b, dflt) * n;
    w.defaultProgrammings *= perInvocation;
    w.defaultOrder = dflt;
    w.passes = ceilDiv(busiest.blocks(), busiest.crossbars);
    w.footprint = busiest.blocks() * (c.binding == CimBinding::OutputChannels ? c.cores : 1);
    w.computeCycles = double(w.passes * k.positions * perInvocation) * c.mvmCycles;
    // A core writes one row of one (physical) crossbar at a time, the cores in parallel.
    const double rowWrite = double(c.rows) * c.writeCyclesPerRow * c.slices(hw.dataBits);
    // The first crossbars must be written before anything computes; with double buffering
    // the rest are written into the idle half while the other half computes.
    auto exposed = [&](Cycles write, Cycles compute, Count first) {
        if (!c.doubleBufferedCrossbars) return write;
        const double f = double(first) * rowWrite;
        return std::min(write, f + std::max(0.0, write - f - compute));
    };
    if (c.binding != CimBinding::OutputChannels) {
        w.writeCycles = double(ceilDiv(w.best.programmings, c.cores)) * rowWrite;
        w.exposedWrite = exposed(w.writeCycles, w.computeCycles,
                                 ceilDiv(std::min<Count>(k.blocks(), k.crossbars), c.cores));
        return w;
    }
    // Per core binding: each kind of nest's own figures, the busiest core's writes the tile's.
    std::vector<CimCoreWork> kinds;
    Count busiestWrites = 0;
    for (const auto& [b, n] : nests) {
        CimCoreWork cw;
        cw.colBlocks = b.colBlocks;
        cw.programmings = cimProgrammings(b, w.best.order) * perInvocation;
        cw.computeCycles =
            double(ceilDiv(b.blocks(), b.crossbars) * k.positions * perInvocation) * c.mvmCycles;
        cw.writeCycles = double(cw.programmings) * rowWrite;
        cw.exposedWrite =
            exposed(cw.writeCycles, cw.computeCycles, std::min<Count>(b.blocks(), b.crossbars));
        busiestWrites = std::max(busiestWrites, cw.programmings);
        kinds.push_back(cw);
    }
    w.writeCycles = double(busiestWrites) * rowWrite;
    w.exposedWrite = exposed(w.writeCycles, w.computeCycles,
                             std::min<Count>(busiest.blocks(), busiest.crossbars));
    // Core j has the first kind's share when j < colBlocks mod cores, else the last's.
    for (Count j = 0; j < std::min<Count>(c.cores, k.colBlocks); ++j)
        w.cores.push_back(j < k.colBlocks % c.cores ? kinds.front() : kinds.back());
    return w;
}

CimTileWork cimBoxWork(const Layer& l, const Hardware& hw, Count k0, Count k1, Count samples,
                       Count outRows, Count outCols) {
    const Count g = std::max(1, l.groups);
    const Count kg = std::max<Count>(1, l.outC / g), cg = std::max<Count>(1, l.inC / g);
    const Count len = std::max<Count>(1, k1 - k0);
    const Count groupsT = g == 1 ? 1 : ceilDiv(k1, kg) - k0 / kg;
    const Count kgT = g == 1 ? len : std::min(kg, len);
    return cimTileWork(l, hw, groupsT, kgT, cg, samples, outRows, outCols);
}

PicoJoules cimWritePj(const Hardware& hw) {
    return double(hw.cim.rows) * hw.cim.cols * hw.cim.slices(hw.dataBits) * hw.cim.bitsPerCell *
           hw.cim.writePjPerBit;
}

Bytes cimCrossbarWeightBytes(const Hardware& hw) {
    return double(hw.cim.rows) * hw.cim.weightColumns(hw.dataBits) * hw.dataBits / 8.0;
}

double macPjOf(const Hardware& hw) {
    return hw.arch == TileArch::Cim ? hw.cim.readPjPerOp : hw.energy.macPj;
}

} // namespace tilescope
