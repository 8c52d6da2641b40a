// Transfer geometry: boxes of a tensor, each layer's input shapes, a partition slot's output
// box and the input window it needs, what it needs of a producer in the producer's
// coordinates, stage boxes and the lag between them, and DRAM input cells (transfers.h).
#include "eval/transfers.h"

#include <algorithm>
#include <functional>
#include <iterator>

namespace tilescope {

TransferGeometry::TransferGeometry(const Network& net, int dataBits, LoadOrder loadOrder,
                                   std::uint64_t stageBytes)
    : m_net(net), m_dataBits(dataBits), m_loadOrder(loadOrder), m_stageBytes(stageBytes) {
    const int layerCount = int(net.layers.size());
    m_geom.resize(size_t(layerCount));
    for (int l = 0; l < layerCount; ++l) {
        const Layer& ly = net.layers[size_t(l)];
        int off = 0;
        for (size_t k = 0; k < ly.inputs.size(); ++k) {
            const LayerInput& in = ly.inputs[k];
            InputGeom geom;
            const long long plane = (long long)ly.inH * ly.inW;
            if (ly.kind == LayerKind::MatMul && k == 1) {
                geom.C = int(std::max<Count>(1, in.bytesPerSample));
                geom.proportional = true;
            } else if (plane > 0 && in.bytesPerSample % plane == 0 && in.bytesPerSample > 0) {
                geom.C = int(in.bytesPerSample / plane);
                geom.H = ly.inH;
                geom.W = ly.inW;
                geom.spatial = true;
                geom.offC = ly.kind == LayerKind::Eltwise ? 0 : off;
                off += geom.C;
            } else {
                geom.C = int(std::max<Count>(1, in.bytesPerSample));
            }
            if (in.producer >= 0 && geom.spatial) {
                const Layer& producer = net.layers[size_t(in.producer)];
                geom.sameAsProducer =
                    producer.outC == geom.C && producer.outH == geom.H && producer.outW == geom.W;
            }
            m_geom[size_t(l)].push_back(geom);
        }
    }
}

namespace {

// Partition slot of tile t = (((ib*ph + ih)*pw + iw)*pk + ik)*pc + ic of a mapping.
std::array<int, 4> slotOf(const LeafMapping& m, int t) {
    t /= m.pc;
    const int ik = t % m.pk;
    int r = t / m.pk;
    const int iw = r % m.pw;
    r /= m.pw;
    return {r / m.ph, ik, r % m.ph, iw}; // b, k, h, w
}

// Along one axis of extent ext cut into p parts of `blocks` ceil-sized chunks each, block
// major (block j of part i is chunk j x p + i, so the parts' blocks j form one band and a
// block's DRAM reads cover that band alone): the hull of part i's blocks [j0, j1).
void chunks(int ext, int p, int blocks, int i, int j0, int j1, int& lo, int& hi) {
    const int c = (ext + p * blocks - 1) / (p * blocks);
    lo = std::min(ext, (j0 * p + i) * c);
    hi = std::min(ext, ((j1 - 1) * p + i + 1) * c);
}

// Channel block j of `blocks` over `ext` channels of `heads` heads, head-major: with several
// heads, the blocks cut each head's channels alike (LeafMapping::heads), one head's after
// another's.
void headChunks(int ext, int heads, int blocks, int j, int& lo, int& hi) {
    if (heads <= 1) return chunks(ext, 1, blocks, 0, j, j + 1, lo, hi);
    const int each = ext / heads, per = blocks / heads;
    chunks(each, 1, per, 0, j % per, j % per + 1, lo, hi);
    lo += j / per * each, hi += j / per * each;
}

} // namespace

Box TransferGeometry::tileBox(int layer, const LeafMapping& m, int t, int s0, int s1) const {
    const Layer& ly = m_net.layers[size_t(layer)];
    const auto [ib, ik, ih, iw] = slotOf(m, t);
    Box b;
    chunks(s1 - s0, m.pb, 1, ib, 0, 1, b.lo[0], b.hi[0]);
    b.lo[0] += s0, b.hi[0] += s0;
    chunks(ly.outC, m.pk, m.bk, ik, 0, m.bk, b.lo[1], b.hi[1]);
    chunks(ly.outH, m.ph, m.bh, ih, 0, m.bh, b.lo[2], b.hi[2]);
    chunks(ly.outW, m.pw, m.bw, iw, 0, m.bw, b.lo[3], b.hi[3]);
    return b;
}

Box dramExtent(const InputGeom& g, int s0, int s1, const std::vector<Box>& windows, bool blocked) {
    Box ext;
    ext.lo = {s0, 0, 0, 0};
    ext.hi = {s1, g.C, g.H, g.W};
    if (!blocked || windows.empty()) return ext;
    Box hull = windows.front();
    for (const Box& w : windows)
        hull = hull.hull(w);
    return hull.intersect(ext);
}

Box TransferGeometry::blockBox(int layer, const LeafMapping& m, int t, int j, int s0,
                               int s1) const {
    const Layer& ly = m_net.layers[size_t(layer)];
    const auto [ib, ik, ih, iw] = slotOf(m, t);
    j /= m.bc;
    const int jk = j % m.bk, jw = (j / m.bk) % m.bw, jh = j / m.bk / m.bw;
    Box b;
    chunks(s1 - s0, m.pb, 1, ib, 0, 1, b.lo[0], b.hi[0]);
    b.lo[0] += s0, b.hi[0] += s0;
    if (m.heads > 1 && m.bk > 1)
        headChunks(ly.outC, m.heads, m.bk, jk, b.lo[1], b.hi[1]);
    else
        chunks(ly.outC, m.pk, m.bk, ik, jk, jk + 1, b.lo[1], b.hi[1]);
    chunks(ly.outH, m.ph, m.bh, ih, jh, jh + 1, b.lo[2], b.hi[2]);
    chunks(ly.outW, m.pw, m.bw, iw, jw, jw + 1, b.lo[3], b.hi[3]);
    return b;
}

std::pair<int, int> TransferGeometry::blockChannels(int layer, const LeafMapping& m, int j) const {
    const int inC = m_net.layers[size_t(layer)].inC;
    if (!m.reduces()) return {0, inC};
    int lo = 0, hi = 0;
    headChunks(inC, m.heads, m.bc, j % m.bc, lo, hi);
    return {lo, hi};
}

std::pair<int, int> TransferGeometry::memberChannels(int layer, const LeafMapping& m, int t) const {
    const int inC = m_net.layers[size_t(layer)].inC;
    int lo = 0, hi = inC;
    if (m.pc > 1) chunks(inC, m.pc, 1, memberOf(m, t), 0, 1, lo, hi);
    return {lo, hi};
}

Box TransferGeometry::memberWindow(int layer, size_t k, const LeafMapping& m, int t,
                                   const Box& o) const {
    Box win = window(layer, k, o);
    if (m.pc <= 1) return win;
    const auto [c0, c1] = memberChannels(layer, m, t);
    win.lo[1] = std::max(win.lo[1], c0);
    win.hi[1] = std::min(win.hi[1], c1);
    return win;
}

Box TransferGeometry::blockWindow(int layer, size_t k, const LeafMapping& m, int j,
                                  const Box& o) const {
    const Layer& ly = m_net.layers[size_t(layer)];
    if (m.flash && k > 0 && ly.kind == LayerKind::MatMul) {
        // QK^T's block is its output channels (one head's keys) over d input channels a
        // head; AV reduces over its input channels (the keys) into d output channels a head.
        const bool av = m.reduces();
        const int g = std::max(1, ly.groups);
        const auto [c0, c1] =
            av ? blockChannels(layer, m, j) : std::pair<int, int>{o.lo[1], o.hi[1]};
        const int keys = std::max(1, (av ? ly.inC : ly.outC) / g), d = (av ? ly.outC : ly.inC) / g;
        return keyBlockWindow(layer, k, c0 / keys, c0 % keys, c0 % keys + (c1 - c0), keys, d, o);
    }
    Box win = window(layer, k, o);
    if (!m.reduces()) return win;
    const auto [c0, c1] = blockChannels(layer, m, j);
    win.lo[1] = std::max(win.lo[1], c0);
    win.hi[1] = std::min(win.hi[1], c1);
    return win;
}

Box TransferGeometry::keyBlockWindow(int layer, size_t k, int head, int k0, int k1, int keys, int d,
                                     const Box& o) const {
    const Layer& ly = m_net.layers[size_t(layer)];
    const int groups = std::max(1, ly.groups);
    long long total = 0;
    for (size_t p = 1; p < ly.inputs.size(); ++p)
        total += ly.inputs[p].bytesPerSample;
    // The channels of all key / value heads (every part holds each head's keys, one part's
    // after another's), and which of them this query head reads.
    const long long kvC = std::max<long long>(d, total / std::max(1, keys));
    const long long kvHeads = std::max<long long>(1, kvC / std::max(1, d));
    const long long kv = head / std::max<long long>(1, groups / kvHeads);
    long long off = 0;
    for (size_t p = 1; p < k; ++p)
        off += ly.inputs[p].bytesPerSample / kvC;
    const long long n = ly.inputs[k].bytesPerSample / kvC; // the keys part k holds
    const long long a = std::clamp<long long>(k0 - off, 0, n);
    const long long b = std::clamp<long long>(k1 - off, 0, n);
    Box win;
    win.lo = {o.lo[0], 0, 0, 0};
    win.hi = {o.hi[0], 0, 0, 0};
    if (a >= b) return win;
    const InputGeom& g = m_geom[size_t(layer)][k];
    if (g.spatial) {
        win.lo = {o.lo[0], int(kv * d), int(a), 0};
        win.hi = {o.hi[0], int((kv + 1) * d), int(b), g.W};
    } else {
        win.lo = {o.lo[0], int((kv * n + a) * d), 0, 0};
        win.hi = {o.hi[0], int((kv * n + b) * d), 1, 1};
    }
    return win;
}

std::uint64_t TransferGeometry::residentOffset(int layer, const LeafMapping& m, int t, int b,
                                               int totalBatch, int s0, size_t k) const {
    const Layer& ly = m_net.layers[size_t(layer)];
    std::uint64_t bytes = 0;
    for (int s = 0; s <= s0 && s < totalBatch; s += b)
        for (size_t j = 0; j < ly.inputs.size() && (s < s0 || j < k); ++j) {
            if (!ly.inputs[j].resident) continue;
            const Box o = tileBox(layer, m, t, s, std::min(totalBatch, s + b));
            if (!o.empty()) bytes += bytesOf(memberWindow(layer, j, m, t, o).volume());
        }
    return bytes;
}

std::uint64_t TransferGeometry::keptWeightBytes(int layer, const LeafMapping& m, int t,
                                                int b) const {
    const Box o = tileBox(layer, m, t, 0, b);
    if (o.empty()) return 0;
    const auto [c0, c1] = memberChannels(layer, m, t);
    return bytesOf(weightElems(layer, o.lo[1], o.hi[1], c0, c1));
}

Box TransferGeometry::window(int l, size_t k, const Box& o) const {
    const Layer& ly = m_net.layers[size_t(l)];
    const InputGeom& geom = m_geom[size_t(l)][k];
    Box win;
    win.lo = {o.lo[0], 0, 0, 0};
    win.hi = {o.hi[0], geom.C, geom.H, geom.W};
    if (geom.proportional) {
        win.lo[1] = int((long long)o.lo[1] * geom.C / std::max(1, ly.outC));
        win.hi[1] = int(((long long)o.hi[1] * geom.C + ly.outC - 1) / std::max(1, ly.outC));
        return win;
    }
    if (!geom.spatial) return win;
    // Channels, in the layer's concatenated input coordinates.
    int c0 = 0, c1 = ly.inC;
    if (ly.kind == LayerKind::Conv || ly.kind == LayerKind::Gemm || ly.kind == LayerKind::MatMul) {
        const int groups = std::max(1, ly.groups);
        if (groups > 1) {
            const int kg = std::max(1, ly.outC / groups), cg = std::max(1, ly.inC / groups);
            c0 = (o.lo[1] / kg) * cg;
            c1 = ((o.hi[1] - 1) / kg + 1) * cg;
        }
    } else if (ly.kind == LayerKind::Eltwise) {
        if (geom.C == ly.outC)
            c0 = o.lo[1], c1 = o.hi[1];
        else
            c0 = 0, c1 = geom.C;
    } else if (ly.inC == ly.outC) {
        c0 = o.lo[1], c1 = o.hi[1];
    }
    win.lo[1] = std::max(0, c0 - geom.offC);
    win.hi[1] = std::min(geom.C, c1 - geom.offC);
    if (geom.H == ly.inH && ly.outH > 0) {
        const int pt = ly.padH / 2;
        win.lo[2] = std::max(0, o.lo[2] * ly.strideH - pt);
        win.hi[2] =
            std::min(geom.H, (o.hi[2] - 1) * ly.strideH - pt + (ly.kernelH - 1) * ly.dilationH + 1);
    }
    if (geom.W == ly.inW && ly.outW > 0) {
        const int pl = ly.padW / 2;
        win.lo[3] = std::max(0, o.lo[3] * ly.strideW - pl);
        win.hi[3] =
            std::min(geom.W, (o.hi[3] - 1) * ly.strideW - pl + (ly.kernelW - 1) * ly.dilationW + 1);
    }
    return win;
}

// MatMul operand B is split with the output channels (as the mapper budgets it): for
// attention's A x V, output channel j (head j / d, column j % d) reads the producer's
// channel j on every row; for Q x K^T, output channel j (head g, key position p) reads row
// p of head g's d_k channels of the key projection; otherwise the proportional range of
// the producer's output in [c, h, w] order. Any other input takes the producer's whole
// output of those samples.
std::vector<Box> TransferGeometry::producerWants(int l, size_t k, const Box& o) const {
    std::vector<Box> out;
    producerWants(l, k, o, out);
    return out;
}

void TransferGeometry::producerWants(int l, size_t k, const Box& o, std::vector<Box>& out) const {
    const Layer& ly = m_net.layers[size_t(l)];
    const Layer& producer = m_net.layers[size_t(ly.inputs[k].producer)];
    const InputGeom& geom = m_geom[size_t(l)][k];
    Box whole;
    whole.lo = {o.lo[0], 0, 0, 0};
    whole.hi = {o.hi[0], producer.outC, producer.outH, producer.outW};
    const long long elems = (long long)producer.outC * producer.outH * producer.outW;
    if (!geom.proportional || elems != ly.inputs[k].bytesPerSample || ly.outC <= 0) {
        out.push_back(whole);
        return;
    }
    const int groups = std::max(1, ly.groups);
    const long long inPerGroup = ly.inC / groups, cols = ly.outC / groups,
                    rows = (long long)producer.outH * producer.outW;
    const bool transposedKeys = producer.outC == groups * inPerGroup && producer.outW == 1 &&
                                producer.outH == cols &&
                                !(producer.outC == ly.outC && rows == inPerGroup);
    if (transposedKeys) {
        // Output channels [c0, c1) are (head, key row) pairs, head-major.
        for (long long c = o.lo[1]; c < o.hi[1];) {
            const long long head = c / cols, r0 = c % cols;
            const long long r1 = std::min<long long>(cols, r0 + (o.hi[1] - c));
            Box b = whole;
            b.lo[1] = int(head * inPerGroup), b.hi[1] = int((head + 1) * inPerGroup);
            b.lo[2] = int(r0), b.hi[2] = int(r1);
            out.push_back(b);
            c += r1 - r0;
        }
        return;
    }
    // The flat range [f0, f1) of [C, H, W], cut into boxes along the axes.
    const long long f0 = (long long)o.lo[1] * elems / ly.outC;
    const long long f1 = ((long long)o.hi[1] * elems + ly.outC - 1) / ly.outC;
    const std::array<long long, 3> dim{producer.outC, producer.outH, producer.outW};
    std::function<void(long long, long long, size_t, std::array<int, 3>)> cut =
        [&](long long lo, long long hi, size_t ax, std::array<int, 3> at) {
            if (lo >= hi) return;
            long long unit = 1;
            for (size_t a = ax + 1; a < 3; ++a)
                unit *= dim[a];
            auto box = [&](long long i0, long long i1) {
                Box b = whole;
                for (size_t a = 0; a < ax; ++a)
                    b.lo[a + 1] = at[a], b.hi[a + 1] = at[a] + 1;
                b.lo[ax + 1] = int(i0), b.hi[ax + 1] = int(i1);
                out.push_back(b);
            };
            if (ax == 2) return box(lo, hi);
            const long long a0 = (lo + unit - 1) / unit, a1 = hi / unit;
            if (a0 > a1) { // inside one slice of this axis
                at[ax] = int(lo / unit);
                return cut(lo % unit, lo % unit + (hi - lo), ax + 1, at);
            }
            if (lo < a0 * unit) {
                at[ax] = int(a0 - 1);
                cut(lo - (a0 - 1) * unit, unit, ax + 1, at);
            }
            if (a0 < a1) box(a0, a1);
            if (hi > a1 * unit) {
                at[ax] = int(a1);
                cut(0, hi - a1 * unit, ax + 1, at);
            }
        };
    cut(f0, std::min(f1, elems), 0, {0, 0, 0});
    return;
}

long long TransferGeometry::weightElems(int layer, int k0, int k1) const {
    const Layer& ly = m_net.layers[size_t(layer)];
    const long long wb = ly.weightBytes, oc = std::max(1, ly.outC);
    return wb * k1 / oc - wb * k0 / oc;
}

long long TransferGeometry::weightElems(int layer, int k0, int k1, int c0, int c1) const {
    const long long e = weightElems(layer, k0, k1);
    const long long c = std::max(1, m_net.layers[size_t(layer)].inC);
    return e * c1 / c - e * c0 / c;
}

StageOrder TransferGeometry::computeOrder(int layer, const Box& o, bool loadsWeights) const {
    const Layer& ly = m_net.layers[size_t(layer)];
    if (!loadsWeights || ly.weightBytes <= 0 || ly.weightsResident) return kActOrder;
    if (m_loadOrder != LoadOrder::Auto)
        return m_loadOrder == LoadOrder::InputsFirst ? kChannelOrder : kActOrder;
    long long in = 0;
    for (size_t k = 0; k < ly.inputs.size(); ++k)
        in += window(layer, k, o).volume();
    return weightElems(layer, o.lo[1], o.hi[1]) > in ? kChannelOrder : kActOrder;
}

int stageCount(std::uint64_t bytes, std::uint64_t stageBytes) {
    if (stageBytes == 0) return kMaxStages;
    const std::uint64_t n = bytes / stageBytes + (bytes % stageBytes != 0);
    return int(std::clamp<std::uint64_t>(n, 1, kStageLimit));
}

void splitBox(const Box& b, const StageOrder& order, int maxStages, std::vector<Box>& out) {
    out.clear();
    if (b.empty()) {
        out.push_back(b);
        return;
    }
    std::array<int, 4> n{1, 1, 1, 1};
    int budget = std::max(1, maxStages);
    for (int a : order) {
        const int ext = b.hi[size_t(a)] - b.lo[size_t(a)];
        const int k = std::max(1, std::min(ext, budget));
        n[size_t(a)] = k;
        budget = std::max(1, budget / k);
    }
    // Odometer over the cut counts, the first axis of the order outermost.
    std::array<int, 4> idx{};
    const size_t total = size_t(n[0]) * size_t(n[1]) * size_t(n[2]) * size_t(n[3]);
    for (size_t i = 0; i < total; ++i) {
        Box s = b;
        for (size_t a = 0; a < 4; ++a) {
            const long long ext = b.hi[a] - b.lo[a];
            s.lo[a] = b.lo[a] + int(ext * idx[a] / n[a]);
            s.hi[a] = b.lo[a] + int(ext * (idx[a] + 1) / n[a]);
        }
        out.push_back(s);
        for (int level = 3; level >= 0; --level) {
            const size_t a = size_t(order[size_t(level)]);
            if (++idx[a] < n[a]) break;
            idx[a] = 0;
        }
    }
}

std::vector<Box> splitBox(const Box& b, const StageOrder& order, int maxStages) {
    std::vector<Box> out;
    splitBox(b, order, maxStages, out);
    return out;
}

std::uint32_t lagStage(std::span<const Box> prod, std::span<const Box> req) {
    const long long n = (long long)prod.size();
    long long k = 1;
    // Requirement j raises k only through a producer stage i with i + 1 - j > k: the stages
    // below k + j are not looked at, and none is once k reaches n.
    for (size_t j = 0; j < req.size() && k < n; ++j)
        for (long long i = n - 1; i >= k + (long long)j; --i)
            if (prod[size_t(i)].intersects(req[j])) {
                k = i + 1 - (long long)j;
                break;
            }
    return std::uint32_t(std::min(k, n));
}

std::vector<DramCell> dramCells(const Box& ext, const std::vector<Box>& win) {
    std::vector<DramCell> cells;
    cells.resize(dramCells(ext, win, cells));
    return cells;
}

size_t dramCells(const Box& ext, const std::vector<Box>& win, std::vector<DramCell>& cells) {
    const size_t n = win.size();
    thread_local std::array<std::vector<int>, 4> cuts;
    for (size_t ax = 0; ax < 4; ++ax) {
        std::vector<int>& axisCuts = cuts[ax];
        axisCuts.assign({ext.lo[ax], ext.hi[ax]});
        for (const auto& w : win)
            if (!w.empty()) {
                axisCuts.push_back(std::clamp(w.lo[ax], ext.lo[ax], ext.hi[ax]));
                axisCuts.push_back(std::clamp(w.hi[ax], ext.lo[ax], ext.hi[ax]));
            }
        std::sort(axisCuts.begin(), axisCuts.end());
        axisCuts.erase(std::unique(axisCuts.begin(), axisCuts.end()), axisCuts.end());
    }
    // cover[ax][seg]: the windows (ascending) that take segment seg of axis ax. A window's
    // ends are cuts, so it takes a run of segments, found by bisection: a window list per
    // segment costs the windows' runs, not segments x windows (1,024 windows on a wafer).
    // (Scratch kept per thread, as the lists' capacity: this runs per DRAM input on every
    // memo miss.)
    thread_local std::array<std::vector<std::vector<size_t>>, 4> cover;
    thread_local std::vector<char> gap;
    for (size_t ax = 0; ax < 4; ++ax) {
        const std::vector<int>& c = cuts[ax];
        const size_t ns = c.size() - 1;
        if (cover[ax].size() < ns) cover[ax].resize(ns);
        for (size_t sg = 0; sg < ns; ++sg)
            cover[ax][sg].clear();
        for (size_t a = 0; a < n; ++a) {
            if (win[a].empty()) continue;
            // Segments sg with win.lo <= c[sg] and c[sg + 1] <= win.hi.
            const size_t first =
                size_t(std::lower_bound(c.begin(), c.end(), win[a].lo[ax]) - c.begin());
            const size_t ends =
                size_t(std::upper_bound(c.begin(), c.end(), win[a].hi[ax]) - c.begin());
            for (size_t sg = first; sg + 1 < ends && sg < ns; ++sg)
                cover[ax][sg].push_back(a);
        }
        // A gap no window needs travels with its neighbour (left first, then right).
        gap.assign(ns, 0);
        for (size_t sg = 0; sg < ns; ++sg)
            gap[sg] = cover[ax][sg].empty();
        for (size_t sg = 1; sg < ns; ++sg)
            if (gap[sg] && !gap[sg - 1]) cover[ax][sg] = cover[ax][sg - 1], gap[sg] = 0;
        for (size_t sg = ns; sg-- > 0;)
            if (gap[sg] && sg + 1 < ns && !gap[sg + 1])
                cover[ax][sg] = cover[ax][sg + 1], gap[sg] = 0;
    }
    size_t count = 0; // cells[count] is the next cell (its list's capacity kept)
    thread_local std::vector<size_t> ab, abc;
    std::array<size_t, 4> si{};
    for (si[0] = 0; si[0] + 1 < cuts[0].size(); ++si[0])
        for (si[1] = 0; si[1] + 1 < cuts[1].size(); ++si[1]) {
            ab.clear();
            std::set_intersection(cover[0][si[0]].begin(), cover[0][si[0]].end(),
                                  cover[1][si[1]].begin(), cover[1][si[1]].end(),
                                  std::back_inserter(ab));
            for (si[2] = 0; si[2] + 1 < cuts[2].size(); ++si[2]) {
                abc.clear();
                std::set_intersection(ab.begin(), ab.end(), cover[2][si[2]].begin(),
                                      cover[2][si[2]].end(), std::back_inserter(abc));
                for (si[3] = 0; si[3] + 1 < cuts[3].size(); ++si[3]) {
                    Box box;
                    for (size_t ax = 0; ax < 4; ++ax) {
                        box.lo[ax] = cuts[ax][si[ax]];
                        box.hi[ax] = cuts[ax][si[ax] + 1];
                    }
                    if (box.empty()) continue;
                    if (count == cells.size()) cells.emplace_back();
                    DramCell& cell = cells[count++];
                    cell.box = box;
                    cell.to.clear();
                    std::set_intersection(abc.begin(), abc.end(), cover[3][si[3]].begin(),
                                          cover[3][si[3]].end(), std::back_inserter(cell.to));
                    if (cell.to.empty()) cell.to.push_back(0); // unreachable for grid partitions
                }
            }
        }
    return count;
}

} // namespace tilescope
