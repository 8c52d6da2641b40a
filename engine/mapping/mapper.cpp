#include "mapping/mapper.h"

#include "mapping/cim.h"
#include "mapping/iobound.h"
#include "mapping/storage_levels.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>

namespace tilescope {

namespace {

inline Count ceilDiv(Count a, Count b) {
    return (a + b - 1) / b;
}

// Whether partition f (pk, pb, ph, pw) leaves whole tiles idle along a dimension of l.
bool overSplits(const Layer& l, int batch, const std::array<int, 4>& f) {
    return f[1] > batch || f[2] > l.outH || f[3] > l.outW || f[0] > l.outC;
}

constexpr double kLocalBytes = kArrayLocalBytes; // iobound.h
constexpr double kPsumBytes = kPartialSumBytes;

std::uint64_t key(int layer, int tiles, int batch) {
    return (std::uint64_t(unsigned(layer)) << 40) | (std::uint64_t(unsigned(tiles)) << 24) |
           std::uint64_t(unsigned(batch));
}

// All ordered factorisations of n into four factors.
const std::vector<std::array<int, 4>>& factorisations(int n) {
    thread_local std::unordered_map<int, std::vector<std::array<int, 4>>> memo;
    auto it = memo.find(n);
    if (it != memo.end()) return it->second;
    std::vector<std::array<int, 4>> out;
    for (int a = 1; a <= n; ++a) {
        if (n % a) continue;
        for (int b = 1; b <= n / a; ++b) {
            if ((n / a) % b) continue;
            for (int c = 1; c <= n / a / b; ++c) {
                if ((n / a / b) % c) continue;
                out.push_back({a, b, c, n / a / b / c});
            }
        }
    }
    return memo.emplace(n, std::move(out)).first->second;
}

// One tile's block of a MAC layer (Mapper::evaluatePartition), shared by the loop-order
// candidates below.
struct MacBlock {
    Count kT, bT, hT, wT, spatialT; // output channels, samples, rows, columns; positions
    Count inRows, inCols, cInT;     // the input window and its channels
    Count cBlocks, kBlocks;         // array passes over input / output channels
    int groups;
    Count kg, cg; // output / input channels per group (at least 1)
    double db;    // bytes per element
    int cLanes, kLanes;
    double I, W, O; // the tile's input, weight (or operand B) and output bytes
};

// The cheapest per-tile loop order found so far: buffer traffic in bytes and its name.
struct LoopChoice {
    double bytes = std::numeric_limits<double>::max();
    std::string desc;
    // label() names the order; it is built only for a candidate that is better.
    template <class Label> void offer(double acc, Label&& label) {
        if (acc < bytes) bytes = acc, desc = label();
    }
};

// Weight-, output- and input-stationary orders; the search over block sizes stops once a
// candidate reaches `reached` (the lower bound).
void tryStationaryOrders(const Layer& l, const MacBlock& b, double reached, LoopChoice& best) {
    const double kb = double(b.kBlocks), cb = double(b.cBlocks) * l.kernelH * l.kernelW;
    const double W = b.W, I = b.I, O = b.O, db = b.db;
    const std::string k = std::to_string(b.kLanes), c = std::to_string(b.cLanes);
    // Weight-stationary: each weight block loaded once, inputs re-read per k block,
    // partial sums spilled per c block.
    best.offer(W + I * kb + O * (cb > 1 ? (2 * cb - 1) * kPsumBytes / db : 1),
               [&] { return "WS k" + k + " c" + c; });
    // Output-stationary with a spatial block of s positions in the accumulators:
    // weights re-read once per spatial block.
    for (double s = 16; s <= double(b.spatialT) * 2 && best.bytes > reached; s *= 2) {
        if (s * b.kLanes * kPsumBytes > kLocalBytes) break;
        best.offer(W * std::ceil(double(b.spatialT) / s) + I * kb + O,
                   [&] { return "OS k" + k + " s" + std::to_string(int(s)); });
    }
    // Input-stationary: an input block of s positions held; weights streamed per block.
    for (double s = 16; s <= double(b.spatialT) * 2 && best.bytes > reached; s *= 2) {
        if (s * b.cLanes * db * l.kernelH * l.kernelW > kLocalBytes) break;
        best.offer(I + W * std::ceil(double(b.spatialT) / s) +
                       O * (cb > 1 ? (2 * cb - 1) * kPsumBytes / db : 1),
                   [&] { return "IS c" + c + " s" + std::to_string(int(s)); });
    }
}

// Least buffer<->array bytes of one tile (LeafMapping::ioLowerBound, docs/cost-model.md
// §2a): every operand once, or the pebble bound of the tile's share of the layer on the
// array's local storage when larger. The input counts only the rows and columns the tile's
// windows touch: with a stride above the kernel (a 1x1 stride-2 conv) fewer than its
// window holds, and every order below reads no fewer.
double tileIoLowerBound(const Layer& l, const MacBlock& b, int batch, int n) {
    const double touched =
        double(touchedRows(int(b.hT), int(b.inRows), l.strideH, 0, l.dilationH, l.kernelH)) *
        double(touchedRows(int(b.wT), int(b.inCols), l.strideW, 0, l.dilationW, l.kernelW)) /
        double(std::max<Count>(1, b.inRows * b.inCols));
    const FastMemory local{kLocalBytes, b.db, kPsumBytes};
    return std::max(b.I * std::min(1.0, touched) + b.W + b.O,
                    pebbleBoundBytes(realMacs(l, batch) / n,
                                     double(l.outputBytesPerSample()) * batch / n, reuseBound(l),
                                     local));
}

// v, then halved (rounding up) down to 1.
std::vector<Count> halvings(Count v) {
    std::vector<Count> out;
    for (Count x = v; x >= 1; x = x > 1 ? (x + 1) / 2 : 0) {
        out.push_back(x);
        if (x == 1) break;
    }
    return out;
}

// Output-block (the bound's dataflow, docs/cost-model.md §2a): an x-row by y-column block
// of z output channels accumulates in local storage while the input channels stream past;
// z's weights stay resident when they fit (then loaded once), and a line buffer holding the
// block's whole input patch lets the next row block reuse the rows they share (then every
// input row is loaded once per channel block).
void tryOutputBlocks(const Layer& l, const MacBlock& b, LoopChoice& best) {
    if (b.hT <= 0 || b.wT <= 0 || b.kT <= 0) return;
    const double kg = double(b.kg), cg = double(b.cg), db = b.db;
    const auto xs = halvings(b.hT), ys = halvings(b.wT);
    for (Count z : halvings(b.kT)) {
        const double nK = std::ceil(double(b.kT) / double(z));
        const double cz = b.groups == 1 ? double(b.cInT)
                                        : std::min(double(b.cInT), std::ceil(double(z) / kg) * cg);
        const double wz = b.W * double(z) / double(b.kT);
        const bool resident = wz + double(z) * kPsumBytes <= kLocalBytes;
        const double slab = double(z) * std::min<double>(b.cLanes, cz) * l.kernelH * l.kernelW * db;
        for (Count x : xs) {
            const double pr = double(
                std::min<Count>(b.inRows, (x - 1) * l.strideH + (l.kernelH - 1) * l.dilationH + 1));
            const double nR = std::ceil(double(b.hT) / double(x));
            for (Count y : ys) {
                const double psum = double(x * y * z) * kPsumBytes;
                if (psum > kLocalBytes) continue;
                const double pc = double(std::min<Count>(
                    b.inCols, (y - 1) * l.strideW + (l.kernelW - 1) * l.dilationW + 1));
                const double nC = std::ceil(double(b.wT) / double(y));
                const double weights = resident ? b.W : b.W * nR * nC * double(b.bT);
                const double wStore = resident ? wz : slab;
                for (int line = 0; line < 2; ++line) {
                    const double stage =
                        pr * pc * db * (line ? cz : std::min<double>(b.cLanes, cz));
                    if (psum + wStore + stage > kLocalBytes) continue;
                    const double share = b.I * cz / double(b.cInT) * nK;
                    const double inputs =
                        line ? share * pc * nC / double(b.inCols)
                             : share * pr * pc * nR * nC / double(b.inRows * b.inCols);
                    const double acc = inputs + weights + b.O;
                    best.offer(acc, [&] {
                        return "OB z" + std::to_string(z) + " x" + std::to_string(x) + " y" +
                               std::to_string(y) + (resident ? " Wres" : "") +
                               (line ? " line" : "");
                    });
                }
            }
        }
    }
}
// The in-tile levels' reads and writes of a leaf whose n tiles each run `nest`.
void recordLevels(const std::vector<StorageLevel>& levels, const TileNest& nest, int n,
                  LeafMapping& m) {
    const LevelAccesses acc = countLevelAccesses(levels, nest);
    for (size_t i = 0; i < acc.reads.size(); ++i) {
        m.levelReads[i] = acc.reads[i] * n;
        m.levelWrites[i] = acc.writes[i] * n;
    }
}
} // namespace

Mapper::Mapper(const Network& net, const Hardware& hw)
    : m_net(net), m_hw(hw), m_channelSplit(hw.channelSplit) {
    // Square-ish array: input-channel lanes x output-channel lanes (32 x 32 for 1024 MACs).
    m_cLanes = 1;
    while (m_cLanes * m_cLanes * 4 <= hw.macsPerTile)
        m_cLanes *= 2;
    m_kLanes = std::max(1, hw.macsPerTile / m_cLanes);
    m_npt.assign(net.layers.size(), -1.0);
    m_class = net.mappingClasses();
    setObjective(1, 1);
    // Same rule as the generator's input geometry: an input is read as [C, H, W] windows
    // when its size is whole planes of the layer's input rows x columns and, if a layer
    // produced it, that layer's output has exactly that shape.
    m_wholeInput.resize(net.layers.size());
    for (size_t l = 0; l < net.layers.size(); ++l) {
        const Layer& ly = net.layers[l];
        const Count plane = Count(ly.inH) * ly.inW;
        for (size_t k = 0; k < ly.inputs.size(); ++k) {
            const LayerInput& in = ly.inputs[k];
            bool whole = false;
            if (!(ly.kind == LayerKind::MatMul && k == 1)) {
                const bool spatial =
                    plane > 0 && in.bytesPerSample > 0 && in.bytesPerSample % plane == 0;
                if (!spatial) {
                    whole = true;
                } else if (in.producer >= 0) {
                    const Layer& p = net.layers[size_t(in.producer)];
                    whole = !(p.outC == in.bytesPerSample / plane && p.outH == ly.inH &&
                              p.outW == ly.inW);
                }
            }
            m_wholeInput[l].push_back(whole);
        }
    }
}

double Mapper::npt(int layer) {
    double& v = m_npt[size_t(layer)];
    if (v < 0) {
        // The work of the layer, not of its blocking: a layer that needs blocks on one tile
        // weighs in the tile allocation as its unblocked slice would.
        const LeafMapping& m = map(layer, 1, 1);
        v = m.blocked() ? compute(layer, 1, 1, false).cycles : m.cycles;
    }
    return v;
}

const LeafMapping& Mapper::map(int layer, int tiles, int batch) {
    ++m_calls;
    // Copies of a layer share its entry: their mappings are the same.
    const auto k = key(m_class[size_t(layer)], tiles, batch);
    auto it = m_cache->find(k);
    if (it != m_cache->end()) {
        ++m_hits;
        return it->second;
    }
    return m_cache->emplace(k, compute(layer, tiles, batch)).first->second;
}

void Mapper::setObjective(double n, double m) {
    if (m_cache && n == m_energyExp && m == m_delayExp) return;
    m_energyExp = n, m_delayExp = m;
    for (auto& [objective, cache] : m_caches)
        if (objective == std::pair(n, m)) {
            m_cache = cache.get();
            return;
        }
    m_caches.emplace_back(std::pair(n, m),
                          std::make_unique<std::unordered_map<std::uint64_t, LeafMapping>>());
    m_cache = m_caches.back().second.get();
}

// The bytes of a MatMul's operand B one sample puts on a tile with kT of the output
// channels. Operand B is produced per sample; heads/columns split over the output channels,
// shared by rows: the tile receives its share, rounded out to whole elements at both ends
// (the instruction generator's window). Inputs after operand B (the parts of a Concat
// folded in front of it, as a KV cache's past and the step's keys) reach every tile whole,
// as the transfer geometry sends them (TransferGeometry::producerWants).
static Count operandBBytes(const Layer& l, Count kT) {
    const Count bBytes = l.inputs.size() > 1 ? l.inputs[1].bytesPerSample : 0;
    const Count outC = std::max(1, l.outC);
    const Count share = ceilDiv(kT * bBytes, outC) + (bBytes % outC ? 1 : 0);
    Count rest = 0;
    for (size_t k = 2; k < l.inputs.size(); ++k)
        rest += l.inputs[k].bytesPerSample;
    return std::min(share, bBytes) + rest;
}

LeafMapping Mapper::evaluatePartition(const Layer& l, int batch, int pk, int pb, int ph, int pw,
                                      bool withTiling, bool withCim) const {
    LeafMapping m;
    m.pk = pk, m.pb = pb, m.ph = ph, m.pw = pw;
    const int n = pk * pb * ph * pw;
    const double db = m_hw.dataBits / 8.0;
    const Count kT = ceilDiv(l.outC, pk), bT = ceilDiv(batch, pb);
    const Count hT = ceilDiv(l.outH, ph), wT = ceilDiv(l.outW, pw);
    // Input rows/columns a tile's output block needs (the halo of the kernel window).
    // On compute-in-memory tiles the window also counts the stride's gap after its last
    // row / column: the generator delivers the rows no window needs (and trailing rows) with
    // their neighbour's, so a tile holding every output row holds every input row.
    const Count gap = m_hw.arch == TileArch::Cim ? 1 : 0;
    const Count inRows = std::min<Count>(l.inH, (hT - 1 + gap) * l.strideH +
                                                    (l.kernelH - 1) * l.dilationH + 1 - gap);
    const Count inCols = std::min<Count>(l.inW, (wT - 1 + gap) * l.strideW +
                                                    (l.kernelW - 1) * l.dilationW + 1 - gap);
    m.ofmapPerTile = double(kT * hT * wT * bT) * db;
    const Count spatialT = bT * hT * wT;

    switch (l.kind) {
    case LayerKind::Conv:
    case LayerKind::Gemm:
    case LayerKind::MatMul: {
        const int g = std::max(1, l.groups);
        const Count cg = l.inC / g, kg = l.outC / g;
        const Count cg_ = std::max<Count>(1, cg), kg_ = std::max<Count>(1, kg);
        Count groupsT, kgT;
        if (pk <= g) {
            groupsT = ceilDiv(g, pk);
            kgT = kg;
        } else {
            groupsT = 1;
            kgT = ceilDiv(kg, pk / g);
        }
        const Count cBlocks = ceilDiv(cg, m_cLanes);
        const Count kBlocks = ceilDiv(groupsT * kgT, m_kLanes);
        m.cycles = double(spatialT * l.kernelH * l.kernelW * cBlocks * kBlocks);
        const Count cInT = g == 1 ? l.inC : groupsT * cg;
        m.inputMulticast = g == 1 ? pk : std::max(1, pk / g);
        m.ifmapPerTile = double(cInT * inRows * inCols * bT) * db;
        if (l.kind == LayerKind::MatMul) {
            m.operandBPerTile = double(operandBBytes(l, kT) * bT) * db;
            m.weightMulticast = ph * pw;
        } else {
            m.weightPerTile = double(ceilDiv(l.weightBytes, pk)) * db;
            m.weightMulticast = pb * ph * pw;
        }
        m.macs = l.macsPerSample() * batch;
        m.inputDmaRuns =
            n * contiguousRuns({bT, cInT, inRows, inCols}, {batch, l.inC, l.inH, l.inW});
        if (m_hw.arch == TileArch::Cim && withCim) m.cim = cimMapping(l, batch, kT, bT, hT, wT);
        if (m.cim.used) m.cycles = m.cim.computeCycles + m.cim.exposedWrite;

        // Per-tile loop order and blocking: choose the order / block size with the least
        // buffer traffic. I, W, O: the tile's input, weight (or operand B) and output bytes.
        if (!withTiling) break;
        const double I = m.ifmapPerTile, W = m.weightPerTile + m.operandBPerTile,
                     O = m.ofmapPerTile;
        const MacBlock blk{kT, bT,  hT,  wT, spatialT, inRows,   inCols, cInT, cBlocks, kBlocks,
                           g,  kg_, cg_, db, m_cLanes, m_kLanes, I,      W,    O};
        // Once a candidate reaches the bound, the search stops.
        m.ioLowerBound = tileIoLowerBound(l, blk, batch, n);
        if (m.cim.used) {
            // Crossbars: each pass over the positions reads the inputs once, every
            // programming reads its crossbar's weights from the buffer, the bias (the
            // weights beyond the matrix, its output channels' share) is read once, outputs
            // are written once.
            const double passes = double(m.cim.passes);
            const Count matrix = Count(l.outC) * cg * l.kernelH * l.kernelW;
            const double bias = double(ceilDiv(std::max<Count>(0, l.weightBytes - matrix), pk));
            m.bufferAccessBytes = (I * passes + bias * db + O) * n +
                                  double(m.cim.programmings) * cimCrossbarWeightBytes(m_hw);
            m.bufferWriteBytes = O * n;
            m.tiling = "CIM " + m.cim.order + ", " + std::to_string(m.cim.blocksPerTile) +
                       " blocks / " + std::to_string(m.cim.crossbars) + " crossbars";
            break;
        }
        LoopChoice best;
        const double reached = m.ioLowerBound * (1 + 1e-9);
        tryStationaryOrders(l, blk, reached, best);
        if (best.bytes > reached) tryOutputBlocks(l, blk, best);
        m.bufferAccessBytes = best.bytes * n;
        m.bufferWriteBytes = O * n;
        m.tiling = best.desc;
        if (!m_hw.levels.empty())
            recordLevels(m_hw.levels,
                         {double(m.macs) / n, I, W, O, double(g == 1 ? kT : std::min(kT, kgT)),
                          double(spatialT), double(cg_ * l.kernelH * l.kernelW), db},
                         n, m);
        break;
    }
    case LayerKind::Pool:
    case LayerKind::Eltwise:
    case LayerKind::Vector: {
        const Count outs = kT * spatialT;
        Count perOut = 1;
        if (l.kind == LayerKind::Pool)
            perOut = Count(l.kernelH) * l.kernelW;
        else if (l.kind == LayerKind::Eltwise)
            perOut = std::max<Count>(1, Count(l.inputs.size()) - 1);
        else
            perOut = 4;
        m.cycles = double(ceilDiv(outs * perOut, m_hw.vectorLanes));
        const double inputs =
            l.kind == LayerKind::Eltwise ? double(std::max<size_t>(1, l.inputs.size())) : 1.0;
        const Count cIn = ceilDiv(l.inC, pk);
        m.ifmapPerTile = double(cIn * inRows * inCols * bT) * db * inputs;
        m.inputDmaRuns = n * Count(inputs) *
                         contiguousRuns({bT, cIn, inRows, inCols}, {batch, l.inC, l.inH, l.inW});
        m.inputMulticast = 1;
        // A vector layer's weights (LayerNorm's scale and bias: its output channels' share,
        // as the transfers deliver them) pass through the vector unit too.
        const double w = double(ceilDiv(l.weightBytes, pk)) * db;
        m.bufferAccessBytes = (m.ifmapPerTile + w + m.ofmapPerTile) * n;
        m.bufferWriteBytes = m.ofmapPerTile * n;
        m.ioLowerBound = m.ifmapPerTile + w + m.ofmapPerTile; // each operand once
        m.tiling = "vector x" + std::to_string(m_hw.vectorLanes);
        m.vectorOps = Count(double(l.opsPerSample()) * batch);
        break;
    }
    }
    // Inputs delivered whole per sample (see m_wholeInput) replace their share of the
    // windowed input slice.
    // (An input-channel block's cut layer is not among the network's: blockedMapping()
    // offers those blocks only for layers without whole inputs.)
    if (&l >= m_net.layers.data() && &l < m_net.layers.data() + m_net.layers.size()) {
        double whole = 0, total = 0;
        for (size_t k = 0; k < l.inputs.size(); ++k) {
            if (l.kind == LayerKind::MatMul && k == 1) continue;
            total += double(l.inputs[k].bytesPerSample);
            if (m_wholeInput[size_t(&l - m_net.layers.data())][k])
                whole += double(l.inputs[k].bytesPerSample);
        }
        if (whole > 0 && total > 0)
            m.ifmapPerTile = m.ifmapPerTile * (1.0 - whole / total) + whole * double(bT) * db;
    }
    const double peak = double(m_hw.macsPerTile) * n * std::max(1.0, m.cycles);
    m.peUtilisation =
        m.macs > 0 ? double(m.macs) / peak
                   : double(m.vectorOps) / (double(m_hw.vectorLanes) * n * std::max(1.0, m.cycles));
    return m;
}

// The partition's tiles on compute-in-memory crossbars: every tile's own box (the
// generator's ceil-sized chunks: full ones and one remainder per dimension, the rest empty),
// its programmings summed over the tiles, the slowest tile's time.
CimLeafMapping Mapper::cimMapping(const Layer& l, int batch, Count kT, Count bT, Count hT,
                                  Count wT) const {
    CimLeafMapping c;
    c.used = true;
    // (size, tiles of that size) along one dimension of extent d cut in chunks of t.
    auto sizes = [](Count d, Count t) {
        std::vector<std::pair<Count, Count>> out{{t, d / t}};
        if (d % t) out.push_back({d % t, 1});
        if (out.front().second == 0) out.erase(out.begin());
        return out;
    };
    const auto bs = sizes(batch, bT), hs = sizes(l.outH, hT), ws = sizes(l.outW, wT);
    // Channel slices alike in their crossbar blocks: same length and, with groups, the same
    // offset into a group.
    const Count kg = std::max<Count>(1, l.outC / std::max(1, l.groups));
    std::map<std::pair<Count, Count>, std::pair<Count, Count>> slices; // key -> (k0, count)
    for (Count k0 = 0; k0 < l.outC; k0 += kT) {
        const Count len = std::min<Count>(l.outC, k0 + kT) - k0;
        auto& e = slices[{l.groups > 1 ? k0 % kg : 0, len}];
        if (e.second++ == 0) e.first = k0;
    }
    Cycles slowest = -1;
    for (const auto& [key, slice] : slices)
        for (const auto& [b, nb] : bs)
            for (const auto& [h, nh] : hs)
                for (const auto& [w, nw] : ws) {
                    const auto [k0, nk] = slice;
                    const CimTileWork cw = cimBoxWork(l, m_hw, k0, k0 + key.second, b, h, w);
                    const Count tiles = nk * nb * nh * nw;
                    c.programmings += cw.best.programmings * tiles;
                    c.programmingsDefault += cw.defaultProgrammings * tiles;
                    c.inputReads += cw.best.inputReads * double(tiles);
                    c.blocksPerTile = std::max(c.blocksPerTile, cw.blocks.blocks());
                    c.footprint = std::max(c.footprint, cw.footprint);
                    c.passes = std::max(c.passes, cw.passes);
                    if (cw.computeCycles + cw.exposedWrite > slowest) {
                        slowest = cw.computeCycles + cw.exposedWrite;
                        c.crossbars = cw.blocks.crossbars;
                        c.computeCycles = cw.computeCycles;
                        c.writeCycles = cw.writeCycles;
                        c.exposedWrite = cw.exposedWrite;
                        c.psumBytes = cw.best.psumBytes;
                        c.order = cw.best.order.text();
                        c.defaultOrder = cw.defaultOrder.text();
                    }
                }
    return c;
}

// A partition's score: compute time plus the time each tile needs to receive its data over
// one link (favours partitions that replicate less).
double Mapper::partitionScore(const LeafMapping& m) const {
    return m.cycles +
           (m.ifmapPerTile + m.weightPerTile + m.operandBPerTile) / m_hw.nocBytesPerCycle;
}

std::vector<std::pair<std::array<int, 4>, int>>
Mapper::candidatePartitions(int layer, int tiles, int batch, bool channels) const {
    const Layer& l = m_net.layers[size_t(layer)];
    std::vector<std::pair<std::array<int, 4>, int>> out;
    for (const auto& f : factorisations(tiles))
        // Prune partitions that leave whole tiles idle along a dimension.
        if (!overSplits(l, batch, f)) out.emplace_back(f, 1);
    // Input-channel parts, where the reduction can be cut (as for input-channel blocks: no
    // whole inputs, no crossbars).
    const bool whole = std::any_of(m_wholeInput[size_t(layer)].begin(),
                                   m_wholeInput[size_t(layer)].end(), [](char w) { return w; });
    if (channels && reducible(l) && !whole && m_hw.arch != TileArch::Cim)
        for (int pc = 2; pc <= std::min(tiles, l.inC); ++pc) {
            // Every member some channels (ceil-sized chunks).
            if (tiles % pc || ceilDiv(l.inC, pc) * (pc - 1) >= l.inC) continue;
            for (const auto& f : factorisations(tiles / pc))
                if (!overSplits(l, batch, f)) out.emplace_back(f, pc);
        }
    return out;
}

LeafMapping Mapper::compute(int layer, int tiles, int batch, bool mayBlock) const {
    const Layer& l = m_net.layers[size_t(layer)];
    LeafMapping best;
    double bestScore = std::numeric_limits<double>::max();
    bool bestFits = false;
    auto offer = [&](LeafMapping&& m, double extra) {
        const double buffer = m.ifmapPerTile + m.weightPerTile + m.operandBPerTile + m.ofmapPerTile;
        const bool fits = buffer <= m_hw.bufferBytes;
        const double score = partitionScore(m) + extra;
        if ((fits && !bestFits) || (fits == bestFits && score < bestScore)) {
            best = std::move(m);
            bestScore = score;
            bestFits = fits;
        }
    };
    for (const auto& [f, pc] : candidatePartitions(layer, tiles, batch, m_channelSplit)) {
        if (pc == 1) {
            offer(evaluatePartition(l, batch, f[0], f[1], f[2], f[3], false), 0.0);
            continue;
        }
        // Input-channel parts: the root's received partial sums count as delivery.
        LeafMapping m = evaluateChannelSplit(l, batch, f, pc, false);
        const double received = m.ofmapPerTile * (pc - 1) / pc;
        offer(std::move(m), received / m_hw.nocBytesPerCycle);
    }
    if (bestScore == std::numeric_limits<double>::max()) {
        // Every factorisation over-splits some dimension (tiny layer on many tiles): fall
        // back to the least over-split one, idle tiles and all.
        for (const auto& f : factorisations(tiles)) {
            LeafMapping m = evaluatePartition(l, batch, f[0], f[1], f[2], f[3], false);
            if (m.cycles < bestScore) {
                bestScore = m.cycles;
                best = std::move(m);
            }
        }
    }
    // A slice that fits nowhere is blocked in time, when some blocking fits.
    LeafMapping blocked;
    if (!bestFits && mayBlock && blockedMapping(l, batch, tiles, blocked)) return blocked;
    // The per-tile loop order and blocking only for the partition chosen (it does not
    // depend on them).
    return evaluateCandidate(l, batch, {best.pk, best.pb, best.ph, best.pw}, best.pc, true);
}

Mapper::OwnEnergy Mapper::ownEnergy(const LeafMapping& m) const {
    OwnEnergy e;
    e.mac = double(m.macs) * macPjOf(m_hw) + double(m.vectorOps) * m_hw.energy.vectorPjPerOp;
    e.buffer = (m.bufferAccessBytes - m.bufferWriteBytes) * bufferReadPj(m_hw) +
               m.bufferWriteBytes * bufferWritePj(m_hw);
    for (size_t i = 0; i < m_hw.levels.size() && i < e.levels.size(); ++i)
        e.levels[i] = m.levelReads[i] * m_hw.levels[i].readPjPerByte +
                      m.levelWrites[i] * m_hw.levels[i].writePjPerByte;
    return e;
}

Mapper::LeafCost Mapper::leafCost(const LeafMapping& m) const {
    // What each tile receives into its buffer: its input window, weights and operand B, and
    // a slot root the partial sums of its members.
    const double perTile = m.ifmapPerTile + m.weightPerTile + m.operandBPerTile;
    const double psums = m.splitsChannels() ? m.ofmapPerTile * double(m.pc - 1) / m.pc : 0.0;
    const double received = (perTile + psums) * m.groupSize();
    const OwnEnergy own = ownEnergy(m);
    LeafCost c;
    c.energyPj =
        own.mac + own.buffer + received * (bufferWritePj(m_hw) + 8 * m_hw.energy.nocPjPerBitHop);
    for (double l : own.levels)
        c.energyPj += l;
    c.cycles = m.cycles + (perTile + psums) / m_hw.nocBytesPerCycle;
    c.cost = std::pow(std::max(c.energyPj, 1e-30), m_energyExp) *
             std::pow(std::max(c.cycles, 1e-30), m_delayExp);
    return c;
}

const std::vector<LeafMapping>& Mapper::alternatives(int layer, int tiles, int batch) {
    const auto k = std::tuple(key(m_class[size_t(layer)], tiles, batch), m_energyExp, m_delayExp);
    auto it = m_alternatives.find(k);
    if (it != m_alternatives.end()) return it->second;
    const LeafMapping& chosen = map(layer, tiles, batch);
    std::vector<LeafMapping> out{chosen};
    if (!chosen.blocked() && m_hw.arch != TileArch::Cim) {
        const Layer& l = m_net.layers[size_t(layer)];
        std::vector<std::pair<double, LeafMapping>> ranked;
        // Input-channel parts are among them whatever the template's channel_split: that
        // key lets the mapper's own choice split the reduction; here the tree's cost decides.
        for (const auto& [f, pc] : candidatePartitions(layer, tiles, batch, true)) {
            if (factorsOf(chosen) == std::array{f[0], f[1], f[2], f[3], pc}) continue;
            const LeafMapping rough = evaluateCandidate(l, batch, f, pc, false);
            if (rough.ifmapPerTile + rough.weightPerTile + rough.operandBPerTile +
                    rough.ofmapPerTile >
                m_hw.bufferBytes)
                continue;
            LeafMapping m = evaluateCandidate(l, batch, f, pc, true);
            const double cost = leafCost(m).cost;
            ranked.emplace_back(cost, std::move(m));
        }
        // Ties keep compute()'s order (stable).
        std::stable_sort(ranked.begin(), ranked.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        for (auto& [cost, m] : ranked) {
            if (out.size() >= size_t(kAlternatives)) break;
            out.push_back(std::move(m));
        }
    }
    return m_alternatives.emplace(k, std::move(out)).first->second;
}

const LeafMapping* Mapper::namedAlternative(int layer, int tiles, int batch,
                                            const std::array<int, 5>& p) {
    if (p[0] <= 0) return nullptr;
    // The first is map()'s own (a copy): named or not, the leaf runs map()'s.
    const std::vector<LeafMapping>& alts = alternatives(layer, tiles, batch);
    for (size_t i = 1; i < alts.size(); ++i)
        if (factorsOf(alts[i]) == p) return &alts[i];
    return nullptr;
}

// ---- Temporal blocking (docs/cost-model.md §2b).

double dramGapShare(const Layer& l, TileArch arch, int ph, int pw) {
    if (l.kind != LayerKind::Conv || l.inputs.size() != 1 || arch == TileArch::Cim) return 1.0;
    auto share = [](int out, int parts, int stride, int kernel, int dilation) {
        const int n = (out + std::max(1, parts) - 1) / std::max(1, parts);
        const int span = (kernel - 1) * dilation + 1;
        if (stride <= span || n < 1) return 1.0;
        return double(n * stride) / double((n - 1) * stride + span);
    };
    return share(l.outH, ph, l.strideH, l.kernelH, l.dilationH) *
           share(l.outW, pw, l.strideW, l.kernelW, l.dilationW);
}

std::string LeafMapping::blockLabel() const {
    if (!blocked()) return "";
    if (flash && heads > 1)
        return std::to_string(bh) + " query x " + std::to_string(heads) + " heads x " +
               std::to_string(std::max(bk, bc) / heads) + " key blocks (flash order)";
    if (flash)
        return std::to_string(bh) + " query x " + std::to_string(std::max(bk, bc)) +
               " key blocks (flash order)";
    std::string counts, names;
    for (const auto& [n, what] :
         {std::pair(bk, "channel"), {bh, "row"}, {bw, "column"}, {bc, "input-channel"}})
        if (n > 1) {
            if (!counts.empty()) counts += " x ", names += " x ";
            counts += std::to_string(n);
            names += what;
        }
    return counts + ' ' + names + " blocks";
}

namespace {

// The fewest blocks n in [2, room] for which fits(n) holds (more blocks fit better): block
// counts doubling, then the gap between the last two halved; 0 when none fits.
template <class Fits> int fewestFitting(int room, Fits fits) {
    int lo = 1, hi = 0;
    for (int n = 2; n <= room; n = std::min(room, n * 2)) {
        if (fits(n)) {
            hi = n;
            break;
        }
        lo = n;
        if (n == room) break;
    }
    if (hi == 0) return 0;
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        (fits(mid) ? hi : lo) = mid;
    }
    return hi;
}

// Slot 0's n blocks along an axis of extent `ext` in p parts, in full blocks: they are the
// largest (block j of part 0 is chunk j x p), full ones but the last, which may be short. A
// block's time goes with its volume.
double slotBlocks(Count ext, int p, int n) {
    const Count c = ceilDiv(ext, Count(p) * n);
    double sum = 0;
    for (int j = 0; j < n; ++j)
        sum += double(std::clamp<Count>(ext - Count(j) * p * c, 0, c)) / double(c);
    return sum;
}

} // namespace

// Tile partition `part` (pk, pb, ph, pw) with `blocks` (bk, bh, bw) per tile: the figures of
// one block are those of the finer partition whose slots are the blocks (the same
// ceil-sized chunks TransferGeometry::blockBox cuts); a tile computes its blocks in turn.
LeafMapping Mapper::evaluateBlocked(const Layer& l, int batch, const std::array<int, 4>& part,
                                    const std::array<int, 4>& blocks, bool withTiling,
                                    bool withCim) const {
    if (blocks[3] > 1) return evaluateReduction(l, batch, part, blocks, withTiling, withCim);
    LeafMapping m = evaluatePartition(l, batch, part[0] * blocks[0], part[1], part[2] * blocks[1],
                                      part[3] * blocks[2], withTiling, withCim);
    m.pk = part[0], m.pb = part[1], m.ph = part[2], m.pw = part[3];
    m.bk = blocks[0], m.bh = blocks[1], m.bw = blocks[2];
    // Streamed weights come in whole output channels: a block holds its largest chunk's.
    if (m.streamsWeights() && l.outC > 0)
        m.weightPerTile =
            double(ceilDiv(l.outC, Count(part[0]) * blocks[0]) * ceilDiv(l.weightBytes, l.outC)) *
            m_hw.dataBits / 8.0;
    const double share = slotBlocks(l.outC, part[0], blocks[0]) *
                         slotBlocks(l.outH, part[2], blocks[1]) *
                         slotBlocks(l.outW, part[3], blocks[2]);
    m.blockShare = 1.0 / share;
    m.cycles *= share;
    m.ioLowerBound *= share;
    if (m.cim.used) cimBlocks(l, batch, part, share, withTiling, m);
    const int n = part[0] * part[1] * part[2] * part[3];
    const double peak = double(m_hw.macsPerTile) * n * std::max(1.0, m.cycles);
    m.peUtilisation =
        m.macs > 0 ? double(m.macs) / peak
                   : double(m.vectorOps) / (double(m_hw.vectorLanes) * n * std::max(1.0, m.cycles));
    return m;
}

// Compute-in-memory figures of a blocked mapping (docs/cost-model.md §8, "Blocked leaves"):
// `m` holds one block of the finer partition, its programmings summed over every block of
// every tile, its times slot 0's block's. Row and column blocks whose crossbar blocks fit
// the crossbars write them once per invocation, in each tile's first block: the
// programmings are then the unblocked partition's (every block once) and the write is one
// block's; otherwise every block writes its own, `share` blocks of them on the slowest tile.
void Mapper::cimBlocks(const Layer& l, int batch, const std::array<int, 4>& part, double share,
                       bool withTiling, LeafMapping& m) const {
    m.cim.computeCycles *= share;
    const bool keep =
        m.bk == 1 && l.kind != LayerKind::MatMul && m.cim.footprint <= m.cim.crossbars;
    if (!keep) {
        m.cim.writeCycles *= share;
        m.cim.exposedWrite *= share;
        return;
    }
    const CimLeafMapping whole =
        cimMapping(l, batch, ceilDiv(l.outC, part[0]), ceilDiv(batch, part[1]),
                   ceilDiv(l.outH, part[2]), ceilDiv(l.outW, part[3]));
    if (withTiling)
        m.bufferAccessBytes -=
            double(m.cim.programmings - whole.programmings) * cimCrossbarWeightBytes(m_hw);
    m.cim.programmings = whole.programmings;
    m.cim.programmingsDefault = whole.programmingsDefault;
    m.cim.keptAcrossBlocks = true;
    m.cycles = m.cim.computeCycles + m.cim.exposedWrite;
}

Layer reductionCut(const Layer& l, int bc) {
    const Count cc = ceilDiv(Count(l.inC), Count(bc));
    Layer cut = l;
    cut.inC = int(cc);
    cut.weightBytes = ceilDiv(l.weightBytes * cc, Count(l.inC));
    return cut;
}

bool reducible(const Layer& l) {
    return ((l.kind == LayerKind::Conv && std::max(1, l.groups) == 1) ||
            l.kind == LayerKind::Gemm) &&
           l.weightBytes > 0 && l.inputs.size() == 1 && l.inC > 1;
}

// Every block computes the tile's whole output (or, with row blocks, one row block of it)
// over ceil(C / bc) input channels (a short last block takes a full block's time, as the
// generator gives it); the figures of one block are those of the layer cut to that many
// channels and their share of the weights (of operand B for a matrix product), the MACs the
// layer's. The partial sums stay at the accumulator width.
LeafMapping Mapper::evaluateReduction(const Layer& l, int batch, const std::array<int, 4>& part,
                                      const std::array<int, 4>& blocks, bool withTiling,
                                      bool withCim) const {
    const int bc = blocks[3], bh = blocks[1];
    // With groups (attention's heads in the flash order: bc a multiple of them), a block's
    // channels lie in one group and add to that group's outputs only: the block is the
    // group's product cut to its channels, and the partial sums kept are every group's.
    const int g = std::max(1, l.groups);
    Layer cut = reductionCut(l, bc);
    if (g > 1) cut.groups = 1, cut.outC = l.outC / g;
    if (l.kind == LayerKind::MatMul && l.inputs.size() > 1)
        cut.inputs[1].bytesPerSample =
            ceilDiv(l.inputs[1].bytesPerSample * Count(cut.inC), Count(l.inC));
    LeafMapping m =
        evaluatePartition(cut, batch, part[0], part[1], part[2] * bh, part[3], withTiling, withCim);
    m.ph = part[2];
    m.bh = bh;
    m.bc = bc;
    const double rowShare = slotBlocks(l.outH, part[2], bh);
    m.macs = l.macsPerSample() * batch;
    m.cycles *= bc * rowShare;
    m.blockShare = 1.0 / (bc * rowShare);
    m.ioLowerBound *= bc * rowShare;
    // Each block's accesses as the cut layer's; between two blocks of a group the partial
    // sums are written out and read back at the accumulator width.
    const int n = part[0] * part[1] * part[2] * part[3];
    const double psumRatio = double(psumBits(m_hw.dataBits)) / m_hw.dataBits;
    const double spills = double(bc - g) * m.ofmapPerTile * psumRatio * n * bh;
    m.bufferAccessBytes = m.bufferAccessBytes * bc + 2 * spills;
    m.bufferWriteBytes = m.bufferWriteBytes * bc + spills;
    for (size_t i = 0; i < m.levelReads.size(); ++i)
        m.levelReads[i] *= bc, m.levelWrites[i] *= bc;
    m.inputDmaRuns *= bc;
    m.ofmapPerTile *= psumRatio * g;
    // Compute-in-memory: every block writes its channels' crossbar blocks (§8).
    if (m.cim.used) {
        m.cim.programmings *= bc;
        m.cim.programmingsDefault *= bc;
        m.cim.computeCycles *= bc;
        m.cim.writeCycles *= bc;
        m.cim.exposedWrite *= bc;
        m.cim.inputReads *= bc;
    }
    m.peUtilisation = double(m.macs) / (double(m_hw.macsPerTile) * n * std::max(1.0, m.cycles));
    return m;
}

// Each member computes its slot's output over ceil(C / pc) input channels, as an
// input-channel block does (the layer cut to them, reductionCut), into partial sums at the
// accumulator width; the root receives the other members' pc - 1 boxes over the NoC into
// its buffer (it holds all pc), adds them in its vector unit after its own and writes the
// slot's output, which leaves the root as any tile's output leaves its tile.
LeafMapping Mapper::evaluateChannelSplit(const Layer& l, int batch, const std::array<int, 4>& part,
                                         int pc, bool withTiling) const {
    const Layer cut = reductionCut(l, pc);
    LeafMapping m =
        evaluatePartition(cut, batch, part[0], part[1], part[2], part[3], withTiling, false);
    m.pc = pc;
    const int slots = part[0] * part[1] * part[2] * part[3];
    const int n = slots * pc;
    const double db = m_hw.dataBits / 8.0;
    const double psumRatio = double(psumBits(m_hw.dataBits)) / m_hw.dataBits;
    const double out = m.ofmapPerTile; // one slot's output at the data width
    const Count adds = Count(out / db) * Count(pc - 1);
    m.macs = l.macsPerSample() * batch;
    m.vectorOps = adds * slots;
    m.reduceCycles = double(ceilDiv(adds, m_hw.vectorLanes));
    m.cycles += m.reduceCycles;
    // Every member's accesses are the cut layer's with its output written as partial sums;
    // the root reads the pc boxes and writes the output.
    m.bufferAccessBytes = (m.bufferAccessBytes / slots + (psumRatio - 1) * out) * n +
                          (pc * psumRatio + 1) * out * slots;
    m.bufferWriteBytes = out * psumRatio * n + out * slots;
    for (size_t i = 0; i < m.levelReads.size(); ++i)
        m.levelReads[i] *= pc, m.levelWrites[i] *= pc;
    m.inputDmaRuns *= pc;
    m.ofmapPerTile = out * psumRatio * pc;
    const double peak = double(m_hw.macsPerTile) * n * std::max(1.0, m.cycles);
    m.peUtilisation = m.macs > 0 ? double(m.macs) / peak : 0.0;
    return m;
}

// The objective's cost of a blocked mapping, the leaf on its own: its DRAM bytes (each
// block's input windows once per block over the tiles that share them, operand B once per
// block and channel slice, the output once, the weights once) and its time (compute and
// DRAM overlapped block by block, one block of the shorter exposed).
double Mapper::blockedCost(const Layer& l, int batch, const LeafMapping& m) const {
    const double db = m_hw.dataBits / 8.0;
    const double slots = double(m.pk) * m.pb * m.ph * m.pw * m.blocks();
    // Tiles sharing an input window read it once; blocks, one after another, each read theirs.
    // A kept Q is read once per query block and head, not per key block.
    const double in = m.ifmapPerTile * slots / std::max(1, m.inputMulticast / m.bk) /
                      (m.keepsQuery ? m.bk / m.heads : 1);
    const double opB = m.operandBPerTile * double(m.pk * m.bk) * m.pb * m.bh * m.bw * m.bc;
    const double out = double(l.outputBytesPerSample()) * batch * db;
    const double bytes = in + opB + out + double(l.weightBytes) * db;
    const double dram = bytes / std::max(1e-9, m_hw.dramBytesPerCycle);
    const double delay = std::max(m.cycles, dram) + std::min(m.cycles, dram) * m.blockShare;
    const double energy = bytes * 8 * m_hw.energy.dramPjPerBit + double(m.macs) * macPjOf(m_hw) +
                          m.bufferAccessBytes * m_hw.energy.sramPjPerByte(m_hw.bufferBytes) +
                          double(m.cim.programmings) * (m.cim.used ? cimWritePj(m_hw) : 0.0);
    return m_energyExp * std::log(std::max(1e-9, energy)) +
           m_delayExp * std::log(std::max(1e-9, delay));
}

// The tile partitions of `layers` on `tiles` tiles that over-split none of them, ranked by
// their summed score (compute() above), the best few: bounded, so a memo miss of a blocked
// leaf or chain stays cheap beside the search.
std::vector<std::array<int, 4>> Mapper::bestPartitions(const std::vector<const Layer*>& layers,
                                                       int tiles, int batch) const {
    constexpr size_t kPartitions = 6;
    std::vector<std::pair<double, std::array<int, 4>>> parts;
    for (const auto& f : factorisations(tiles)) {
        double score = 0;
        bool ok = true;
        for (const Layer* l : layers) {
            if ((ok = !overSplits(*l, batch, f)) == false) break;
            score += partitionScore(evaluatePartition(*l, batch, f[0], f[1], f[2], f[3], false));
        }
        if (ok) parts.push_back({score, f});
    }
    std::sort(parts.begin(), parts.end());
    if (parts.size() > kPartitions) parts.resize(kPartitions);
    std::vector<std::array<int, 4>> out;
    for (const auto& [score, f] : parts)
        out.push_back(f);
    return out;
}

namespace {

// What a blocked leaf keeps in its tile's buffer (docs/cost-model.md §2b): its weights (a
// streamed block's twice, double-buffered with the block it belongs to), two blocks (one
// computing, one loading; inputs come from DRAM, so a strided window holds its gaps) and
// `extraOutputs` output blocks more.
double blockedNeed(const Layer& l, TileArch arch, const LeafMapping& m, double extraOutputs) {
    const double in = m.ifmapPerTile * dramGapShare(l, arch, m.ph * m.bh, m.pw * m.bw);
    const double w = m.streamsWeights() ? 2 * m.weightPerTile : m.weightPerTile;
    return w + 2 * (in + m.operandBPerTile + m.ofmapPerTile) + extraOutputs * m.ofmapPerTile;
}

} // namespace

// The best few tile partitions that do not over-split, each blocked along rows, columns,
// output channels (operand B splits with them; weights then stream, each block's own) or,
// for a reducible layer, input channels (partial sums kept; weights stream) in the
// fewest blocks that fit with two blocks resident (block counts doubling, then the least that
// fits between the last two): the one the objective likes best.
bool Mapper::blockedMapping(const Layer& l, int batch, int tiles, LeafMapping& out) const {
    auto fits = [&](const LeafMapping& m) {
        return blockedNeed(l, m_hw.arch, m, 0) <= m_hw.bufferBytes;
    };
    double bestCost = std::numeric_limits<double>::infinity();
    std::array<int, 4> bestPart{};
    std::array<int, 4> bestBlocks{};
    for (const auto& f : bestPartitions({&l}, tiles, batch)) {
        const int pk = f[0], ph = f[2], pw = f[3];
        for (int axis = 0; axis < 4; ++axis) {
            if (axis == 3 && (!reducible(l) || m_wholeInput[size_t(&l - m_net.layers.data())][0]))
                break;
            const int room = axis == 0   ? l.outC / pk
                             : axis == 1 ? l.outH / ph
                             : axis == 2 ? l.outW / pw
                                         : l.inC;
            auto blocksOf = [&](int n) {
                std::array<int, 4> b{1, 1, 1, 1};
                b[size_t(axis)] = n;
                return b;
            };
            // The fit test needs the buffer figures alone: no crossbar work on a
            // compute-in-memory tile (its order search dominates a blocked leaf's memo miss).
            const int hi = fewestFitting(room, [&](int n) {
                return fits(evaluateBlocked(l, batch, f, blocksOf(n), false, false));
            });
            if (hi == 0) continue;
            const double cost =
                blockedCost(l, batch, evaluateBlocked(l, batch, f, blocksOf(hi), false));
            if (cost < bestCost) bestCost = cost, bestPart = f, bestBlocks = blocksOf(hi);
        }
    }
    if (!std::isfinite(bestCost)) return false;
    out = evaluateBlocked(l, batch, bestPart, bestBlocks, true);
    return true;
}

namespace {

// Operand B of an attention product, whole or in parts (a KV cache's past and the step's,
// a Concat folded in front): every part holds the same key / value heads of d channels,
// `keys` a head in all, shared by the query heads in equal groups (grouped-query attention;
// as many key heads as query heads otherwise).
bool keyParts(const Layer& l, int keys, int d, int heads) {
    Count total = 0;
    for (size_t k = 1; k < l.inputs.size(); ++k)
        total += l.inputs[k].bytesPerSample;
    if (keys <= 0 || d <= 0 || total % keys != 0 || (total / keys) % d != 0) return false;
    const Count kvHeads = total / keys / d;
    if (kvHeads < 1 || heads % kvHeads != 0) return false;
    for (size_t k = 1; k < l.inputs.size(); ++k)
        if (l.inputs[k].bytesPerSample % (kvHeads * d) != 0) return false;
    return true;
}

// The product as its key blocks see it (TransferGeometry::keyBlockWindow): operand B as one
// input holding each query head's keys of its key / value head, d channels a key.
Layer keyBlockView(const Layer& l, int keys, int d, int heads) {
    Layer v = l;
    v.inputs.resize(2);
    v.inputs[1].bytesPerSample = Count(heads) * keys * d;
    return v;
}

} // namespace

// Attention's three layers in the flash order's chain: a product of two activations (its
// operand B, e.g. K, split with its output channels, the keys), a Softmax over those
// channels in the same shape, and a product reading the Softmax as its input (reduced over
// the keys) with an operand B (V), each input in its producer's own geometry.
bool Mapper::flashTriple(int q, int s, int a) const {
    const Layer& qk = m_net.layers[size_t(q)];
    const Layer& sm = m_net.layers[size_t(s)];
    const Layer& av = m_net.layers[size_t(a)];
    const bool kinds = qk.kind == LayerKind::MatMul && qk.inputs.size() >= 2 &&
                       sm.kind == LayerKind::Vector && sm.op == "Softmax" &&
                       sm.inputs.size() == 1 && av.kind == LayerKind::MatMul &&
                       av.inputs.size() >= 2;
    // Several heads in one product: QK^T and AV have one group per head, and the Softmax's
    // channels are the heads' keys, head-major.
    const int heads = std::max(1, av.groups);
    return kinds && std::max(1, qk.groups) == heads && qk.outC % heads == 0 &&
           keyParts(qk, qk.outC / heads, qk.inC / heads, heads) &&
           keyParts(av, av.inC / heads, av.outC / heads, heads) && sm.inputs[0].producer == q &&
           av.inputs[0].producer == s && !m_wholeInput[size_t(s)][0] &&
           !m_wholeInput[size_t(a)][0] && sm.outC == qk.outC && sm.outH == qk.outH &&
           sm.outW == qk.outW && av.inC == sm.outC && av.outH == sm.outH && av.outW == sm.outW;
}

// The Softmax keeps two running statistics per row (its maximum and the sum of the
// exponentials) at the accumulator width; each key block updates them (a few vector
// operations a row) and AV rescales its partial sums by the change of the maximum (one
// vector operation per output element a key block). With one key block: the row blocks.
std::vector<LeafMapping> Mapper::flashMembers(const std::vector<int>& layers, int batch,
                                              const std::array<int, 4>& f, int bq, int bkv,
                                              bool withTiling) const {
    std::vector<LeafMapping> ms;
    const Layer &qk = m_net.layers[size_t(layers[0])], &sm = m_net.layers[size_t(layers[1])],
                &av = m_net.layers[size_t(layers[2])];
    if (bkv == 1) {
        for (const Layer* l : {&qk, &sm, &av})
            ms.push_back(evaluateBlocked(*l, batch, f, {1, bq, 1, 1}, withTiling));
        return ms;
    }
    // QK^T and AV read their key blocks' keys of operand B (the geometry's keyBlockWindow).
    const int heads = std::max(1, av.groups);
    ms.push_back(evaluateBlocked(keyBlockView(qk, qk.outC / heads, qk.inC / heads, heads), batch, f,
                                 {bkv, bq, 1, 1}, withTiling));
    ms.push_back(evaluateBlocked(sm, batch, f, {bkv, bq, 1, 1}, withTiling));
    ms.push_back(evaluateBlocked(keyBlockView(av, av.inC / heads, av.outC / heads, heads), batch, f,
                                 {1, bq, 1, bkv}, withTiling));
    const double statBytes = 2.0 * psumBits(m_hw.dataBits) / 8.0;
    const Count rows =
        ceilDiv(Count(av.outH), Count(f[2]) * bq) * av.outW * ceilDiv(Count(batch), Count(f[1]));
    const Count outs = rows * ceilDiv(Count(av.outC), Count(f[0]));
    const double lanes = std::max(1, m_hw.vectorLanes);
    const int n = f[0] * f[1] * f[2] * f[3];
    // Per key block of slot 0's blocks (as many as its cycles count blocks).
    const double blocks = 1.0 / ms[2].blockShare;
    for (LeafMapping& m : ms)
        m.flash = true, m.heads = heads;
    ms[0].keepsQuery = true;
    // A head's blocks keep its rows' statistics and rescale its own outputs only.
    ms[1].statsPerTile = double(rows) * statBytes;
    ms[1].cycles += std::ceil(3.0 * double(rows) / lanes) * blocks;
    ms[1].vectorOps += Count(3 * rows * n * blocks);
    ms[2].cycles += std::ceil(double(outs / heads) / lanes) * blocks;
    ms[2].vectorOps += Count(double(outs / heads) * n * blocks);
    ms[1].peUtilisation = double(ms[1].vectorOps) / (lanes * n * std::max(1.0, ms[1].cycles));
    ms[2].peUtilisation =
        double(ms[2].macs) / (double(m_hw.macsPerTile) * n * std::max(1.0, ms[2].cycles));
    return ms;
}

// A chain streaming row blocks (Mapper::chainMapping): every tile partition that no member
// over-splits, ranked by the members' summed unblocked score (compute() above), the best few
// each with the fewest row blocks at which every member's two blocks and weights fit beside
// the previous member's output block (what the evaluator budgets); the least summed cost.
// Attention's three (flashTriple) also with key blocks, the flash order.
const std::vector<LeafMapping>& Mapper::chainMapping(const std::vector<int>& layers, int tiles,
                                                     int batch) {
    auto key = std::tuple(layers, tiles, batch, m_energyExp, m_delayExp);
    auto it = m_chains.find(key);
    if (it != m_chains.end()) return it->second;
    std::vector<LeafMapping>& out = m_chains[key];
    // Compute-in-memory tiles do not stream chains: members interleaving block by block on
    // the same tiles would write each other's crossbars at every block. Their blocked
    // members read and store through DRAM.
    if (m_hw.arch == TileArch::Cim) return out;
    int minH = std::numeric_limits<int>::max();
    std::vector<const Layer*> ls;
    for (int l : layers) {
        ls.push_back(&m_net.layers[size_t(l)]);
        minH = std::min(minH, ls.back()->outH);
    }
    auto members = [&](const std::array<int, 4>& f, int bh) {
        std::vector<LeafMapping> ms;
        for (int l : layers)
            ms.push_back(evaluateBlocked(m_net.layers[size_t(l)], batch, f, {1, bh, 1, 1}, false));
        return ms;
    };
    // Beside a member's blocks: the one before's output block (and, in the flash order, the
    // Softmax's statistics of two blocks).
    auto fits = [&](const std::vector<LeafMapping>& ms) {
        for (size_t i = 0; i < ms.size(); ++i) {
            const double before = i > 0 ? ms[i - 1].ofmapPerTile + 2 * ms[i - 1].statsPerTile : 0.0;
            if (ms[i].weightPerTile + ms[i].activationPerTile() + before > m_hw.bufferBytes)
                return false;
        }
        return true;
    };
    // The members' costs added up, each costed on its own.
    auto summedCost = [&](const std::vector<LeafMapping>& ms) {
        double cost = 0;
        for (size_t i = 0; i < ms.size(); ++i)
            cost += blockedCost(*ls[i], batch, ms[i]);
        return cost;
    };
    double bestCost = std::numeric_limits<double>::infinity();
    std::array<int, 4> bestPart{};
    int bestBh = 0, bestBkv = 0; // bestBkv: the flash order's key blocks, 0 for row blocks
    if (layers.size() == 3 && flashTriple(layers[0], layers[1], layers[2])) {
        // Attention: key blocks (doubling up to a tile's keys) beside the row blocks, each
        // with the fewest query blocks that fit; one key block is the row blocking below.
        // AV sums a query row over all its keys on one tile, so the keys are not split over
        // tiles: the partitions that keep them whole, and the one splitting queries alone.
        // With several heads the key blocks divide each head's keys, and the row blockings
        // below (which may split the heads over tiles) compete too.
        const int heads = std::max(1, ls[2]->groups);
        std::vector<std::array<int, 4>> parts;
        for (const auto& f : bestPartitions(ls, tiles, batch))
            if (f[0] == 1) parts.push_back(f);
        const std::array<int, 4> queriesOnly{1, 1, std::min(tiles, minH), 1};
        if (std::find(parts.begin(), parts.end(), queriesOnly) == parts.end())
            parts.push_back(queriesOnly);
        for (const auto& f : parts) {
            const int keys = ls[0]->outC / f[0] / heads, room = minH / f[2];
            // Blocks of c keys, c = ceil(keys / k) for k doubling, as few as hold a head's keys
            // (ceil(keys / c)), so no key block is empty: a tile's kept Q rows and the
            // Softmax's statistics end with the head's last key block.
            for (int k = 1, last = 0; k <= keys; k *= 2) {
                const int c = (keys + k - 1) / k, kb = (keys + c - 1) / c;
                if (kb == last) continue;
                last = kb;
                const int bkv = heads * kb;
                auto fitsAt = [&](int bq) {
                    return fits(flashMembers(layers, batch, f, bq, bkv, false));
                };
                const int bq = bkv > 1 && fitsAt(1) ? 1 : fewestFitting(room, fitsAt);
                if (bq == 0) continue;
                const std::vector<LeafMapping> ms = flashMembers(layers, batch, f, bq, bkv, false);
                const double cost = summedCost(ms);
                if (cost < bestCost) bestCost = cost, bestPart = f, bestBh = bq, bestBkv = bkv;
            }
        }
        if (heads == 1) {
            if (bestBh > 0) out = flashMembers(layers, batch, bestPart, bestBh, bestBkv, true);
            return out;
        }
    }
    for (const auto& f : bestPartitions(ls, tiles, batch)) {
        const int room = minH / f[2];
        const int hi = fewestFitting(room, [&](int n) { return fits(members(f, n)); });
        if (hi == 0) continue;
        const std::vector<LeafMapping> ms = members(f, hi);
        const double cost = summedCost(ms);
        if (cost < bestCost) bestCost = cost, bestPart = f, bestBh = hi, bestBkv = 0;
    }
    if (bestBh > 0 && bestBkv > 0)
        out = flashMembers(layers, batch, bestPart, bestBh, bestBkv, true);
    else if (bestBh > 0)
        for (int l : layers)
            out.push_back(
                evaluateBlocked(m_net.layers[size_t(l)], batch, bestPart, {1, bestBh, 1, 1}, true));
    return out;
}

// Two S-cut stages streaming row blocks (Mapper::stageMapping): every pair of the best few
// partitions of each on its own tiles, at the fewest common row blocks where both fit, the
// producer beside one more output block; the least summed cost that streams.
const std::vector<LeafMapping>&
Mapper::stageMapping(int prod, int prodTiles, int cons, int consTiles, int batch,
                     const std::function<bool(const LeafMapping&, const LeafMapping&)>& streams) {
    auto key = std::tuple(prod, prodTiles, cons, consTiles, batch, m_energyExp, m_delayExp);
    auto it = m_stages.find(key);
    if (it != m_stages.end()) return it->second;
    std::vector<LeafMapping>& out = m_stages[key];
    if (m_hw.arch == TileArch::Cim) return out; // as chains: crossbars written at every block
    const Layer& lp = m_net.layers[size_t(prod)];
    const Layer& lc = m_net.layers[size_t(cons)];
    auto fits = [&](const Layer& l, const LeafMapping& m, double extra) {
        return blockedNeed(l, m_hw.arch, m, extra) <= m_hw.bufferBytes;
    };
    struct Candidate {
        double cost;
        std::array<int, 4> fp, fc;
        int n;
    };
    std::vector<Candidate> cands;
    const auto partsC = bestPartitions({&lc}, consTiles, batch);
    for (const auto& fp : bestPartitions({&lp}, prodTiles, batch))
        for (const auto& fc : partsC) {
            const int room = std::min(lp.outH / fp[2], lc.outH / fc[2]);
            const int n = fewestFitting(room, [&](int b) {
                return fits(lp, evaluateBlocked(lp, batch, fp, {1, b, 1, 1}, false, false), 1) &&
                       fits(lc, evaluateBlocked(lc, batch, fc, {1, b, 1, 1}, false, false), 0);
            });
            if (n == 0) continue;
            const double cost =
                blockedCost(lp, batch, evaluateBlocked(lp, batch, fp, {1, n, 1, 1}, false)) +
                blockedCost(lc, batch, evaluateBlocked(lc, batch, fc, {1, n, 1, 1}, false));
            cands.push_back({cost, fp, fc, n});
        }
    std::stable_sort(cands.begin(), cands.end(),
                     [](const Candidate& a, const Candidate& b) { return a.cost < b.cost; });
    constexpr size_t kTried = 4; // the geometry check is the costly part
    for (size_t i = 0; i < cands.size() && i < kTried; ++i) {
        const Candidate& c = cands[i];
        LeafMapping mp = evaluateBlocked(lp, batch, c.fp, {1, c.n, 1, 1}, true);
        LeafMapping mc = evaluateBlocked(lc, batch, c.fc, {1, c.n, 1, 1}, true);
        if (!streams(mp, mc)) continue;
        out = {std::move(mp), std::move(mc)};
        break;
    }
    return out;
}

} // namespace tilescope
