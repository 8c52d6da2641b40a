#include "eval/transfers.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <numeric>
#include <tuple>

namespace tilescope {

bool Box::empty() const {
    for (int a = 0; a < 4; ++a)
        if (hi[size_t(a)] <= lo[size_t(a)]) return true;
    return false;
}

long long Box::volume() const {
    if (empty()) return 0;
    long long v = 1;
    for (int a = 0; a < 4; ++a)
        v *= hi[size_t(a)] - lo[size_t(a)];
    return v;
}

Box Box::intersect(const Box& o) const {
    Box r;
    for (size_t a = 0; a < 4; ++a) {
        r.lo[a] = std::max(lo[a], o.lo[a]);
        r.hi[a] = std::min(hi[a], o.hi[a]);
    }
    return r;
}

TransferGeometry::TransferGeometry(const Network& net, int dataBits)
    : m_net(net), m_dataBits(dataBits) {
    const int L = int(net.layers.size());
    m_geom.resize(size_t(L));
    for (int l = 0; l < L; ++l) {
        const Layer& ly = net.layers[size_t(l)];
        int off = 0;
        for (size_t k = 0; k < ly.inputs.size(); ++k) {
            const LayerInput& in = ly.inputs[k];
            InputGeom g;
            const long long plane = (long long)ly.inH * ly.inW;
            if (ly.kind == LayerKind::MatMul && k == 1) {
                g.C = int(std::max<Count>(1, in.bytesPerSample));
                g.proportional = true;
            } else if (plane > 0 && in.bytesPerSample % plane == 0 && in.bytesPerSample > 0) {
                g.C = int(in.bytesPerSample / plane);
                g.H = ly.inH;
                g.W = ly.inW;
                g.spatial = true;
                g.offC = ly.kind == LayerKind::Eltwise ? 0 : off;
                off += g.C;
            } else {
                g.C = int(std::max<Count>(1, in.bytesPerSample));
            }
            if (in.producer >= 0 && g.spatial) {
                const Layer& p = net.layers[size_t(in.producer)];
                g.sameAsProducer = p.outC == g.C && p.outH == g.H && p.outW == g.W;
            }
            m_geom[size_t(l)].push_back(g);
        }
    }
}

Box TransferGeometry::tileBox(int layer, const LeafMapping& m, int t, int s0, int s1) const {
    const Layer& ly = m_net.layers[size_t(layer)];
    const int ik = t % m.pk;
    int r = t / m.pk;
    const int iw = r % m.pw;
    r /= m.pw;
    const int ih = r % m.ph;
    const int ib = r / m.ph;
    auto part = [](int ext, int p, int i, int& lo, int& hi) {
        const int c = (ext + p - 1) / p;
        lo = std::min(ext, i * c);
        hi = std::min(ext, (i + 1) * c);
    };
    Box b;
    part(s1 - s0, m.pb, ib, b.lo[0], b.hi[0]);
    b.lo[0] += s0, b.hi[0] += s0;
    part(ly.outC, m.pk, ik, b.lo[1], b.hi[1]);
    part(ly.outH, m.ph, ih, b.lo[2], b.hi[2]);
    part(ly.outW, m.pw, iw, b.lo[3], b.hi[3]);
    return b;
}

Box TransferGeometry::window(int l, size_t k, const Box& o) const {
    const Layer& ly = m_net.layers[size_t(l)];
    const InputGeom& g = m_geom[size_t(l)][k];
    Box w;
    w.lo = {o.lo[0], 0, 0, 0};
    w.hi = {o.hi[0], g.C, g.H, g.W};
    if (g.proportional) {
        w.lo[1] = int((long long)o.lo[1] * g.C / std::max(1, ly.outC));
        w.hi[1] = int(((long long)o.hi[1] * g.C + ly.outC - 1) / std::max(1, ly.outC));
        return w;
    }
    if (!g.spatial) return w;
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
        if (g.C == ly.outC)
            c0 = o.lo[1], c1 = o.hi[1];
        else
            c0 = 0, c1 = g.C;
    } else if (ly.inC == ly.outC) {
        c0 = o.lo[1], c1 = o.hi[1];
    }
    w.lo[1] = std::max(0, c0 - g.offC);
    w.hi[1] = std::min(g.C, c1 - g.offC);
    if (g.H == ly.inH && ly.outH > 0) {
        const int pt = ly.padH / 2;
        w.lo[2] = std::max(0, o.lo[2] * ly.strideH - pt);
        w.hi[2] =
            std::min(g.H, (o.hi[2] - 1) * ly.strideH - pt + (ly.kernelH - 1) * ly.dilationH + 1);
    }
    if (g.W == ly.inW && ly.outW > 0) {
        const int pl = ly.padW / 2;
        w.lo[3] = std::max(0, o.lo[3] * ly.strideW - pl);
        w.hi[3] =
            std::min(g.W, (o.hi[3] - 1) * ly.strideW - pl + (ly.kernelW - 1) * ly.dilationW + 1);
    }
    return w;
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
    const Layer& p = m_net.layers[size_t(ly.inputs[k].producer)];
    const InputGeom& g = m_geom[size_t(l)][k];
    Box whole;
    whole.lo = {o.lo[0], 0, 0, 0};
    whole.hi = {o.hi[0], p.outC, p.outH, p.outW};
    const long long elems = (long long)p.outC * p.outH * p.outW;
    if (!g.proportional || elems != ly.inputs[k].bytesPerSample || ly.outC <= 0) {
        out.push_back(whole);
        return;
    }
    const int groups = std::max(1, ly.groups);
    const long long K = ly.inC / groups, cols = ly.outC / groups, rows = (long long)p.outH * p.outW;
    const bool transposedKeys =
        p.outC == groups * K && p.outW == 1 && p.outH == cols && !(p.outC == ly.outC && rows == K);
    if (transposedKeys) {
        // Output channels [c0, c1) are (head, key row) pairs, head-major.
        for (long long c = o.lo[1]; c < o.hi[1];) {
            const long long head = c / cols, r0 = c % cols;
            const long long r1 = std::min<long long>(cols, r0 + (o.hi[1] - c));
            Box b = whole;
            b.lo[1] = int(head * K), b.hi[1] = int((head + 1) * K);
            b.lo[2] = int(r0), b.hi[2] = int(r1);
            out.push_back(b);
            c += r1 - r0;
        }
        return;
    }
    // The flat range [f0, f1) of [C, H, W], cut into boxes along the axes.
    const long long f0 = (long long)o.lo[1] * elems / ly.outC;
    const long long f1 = ((long long)o.hi[1] * elems + ly.outC - 1) / ly.outC;
    const std::array<long long, 3> dim{p.outC, p.outH, p.outW};
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

StageOrder TransferGeometry::computeOrder(int layer, const Box& o, bool loadsWeights) const {
    const Layer& ly = m_net.layers[size_t(layer)];
    if (!loadsWeights || ly.weightBytes <= 0) return kActOrder;
    long long in = 0;
    for (size_t k = 0; k < ly.inputs.size(); ++k)
        in += window(layer, k, o).volume();
    return weightElems(layer, o.lo[1], o.hi[1]) > in ? kChannelOrder : kActOrder;
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
    long long k = 1;
    for (size_t j = 0; j < req.size(); ++j) {
        long long need = 0;
        for (size_t i = prod.size(); i-- > 0;)
            if (prod[i].intersects(req[j])) {
                need = (long long)i + 1;
                break;
            }
        k = std::max(k, need - (long long)j);
    }
    return std::uint32_t(std::min<long long>(k, (long long)prod.size()));
}

std::vector<DramCell> dramCells(const Box& ext, const std::vector<Box>& win) {
    const size_t n = win.size();
    thread_local std::array<std::vector<int>, 4> cuts;
    for (size_t ax = 0; ax < 4; ++ax) {
        std::vector<int>& c = cuts[ax];
        c.assign({ext.lo[ax], ext.hi[ax]});
        for (const auto& w : win)
            if (!w.empty()) {
                c.push_back(std::clamp(w.lo[ax], ext.lo[ax], ext.hi[ax]));
                c.push_back(std::clamp(w.hi[ax], ext.lo[ax], ext.hi[ax]));
            }
        std::sort(c.begin(), c.end());
        c.erase(std::unique(c.begin(), c.end()), c.end());
    }
    // cover[ax][seg]: the windows (ascending) that take segment seg of axis ax.
    std::array<std::vector<std::vector<size_t>>, 4> cover;
    for (size_t ax = 0; ax < 4; ++ax) {
        const size_t ns = cuts[ax].size() - 1;
        cover[ax].assign(ns, {});
        for (size_t sg = 0; sg < ns; ++sg)
            for (size_t a = 0; a < n; ++a)
                if (!win[a].empty() && win[a].lo[ax] <= cuts[ax][sg] &&
                    cuts[ax][sg + 1] <= win[a].hi[ax])
                    cover[ax][sg].push_back(a);
        // A gap no window needs travels with its neighbour (left first, then right).
        std::vector<char> gap(ns, 0);
        for (size_t sg = 0; sg < ns; ++sg)
            gap[sg] = cover[ax][sg].empty();
        for (size_t sg = 1; sg < ns; ++sg)
            if (gap[sg] && !gap[sg - 1]) cover[ax][sg] = cover[ax][sg - 1], gap[sg] = 0;
        for (size_t sg = ns; sg-- > 0;)
            if (gap[sg] && sg + 1 < ns && !gap[sg + 1])
                cover[ax][sg] = cover[ax][sg + 1], gap[sg] = 0;
    }
    std::vector<DramCell> cells;
    std::vector<size_t> ab, abc;
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
                    DramCell c;
                    for (size_t ax = 0; ax < 4; ++ax) {
                        c.box.lo[ax] = cuts[ax][si[ax]];
                        c.box.hi[ax] = cuts[ax][si[ax] + 1];
                    }
                    if (c.box.empty()) continue;
                    std::set_intersection(abc.begin(), abc.end(), cover[3][si[3]].begin(),
                                          cover[3][si[3]].end(), std::back_inserter(c.to));
                    if (c.to.empty()) c.to.push_back(0); // unreachable for grid partitions
                    cells.push_back(std::move(c));
                }
            }
        }
    return cells;
}

namespace {
// Box::operator== without a call to memcmp (the piece search compares boxes per hit).
bool sameBox(const Box& a, const Box& b) {
    return a.lo[0] == b.lo[0] && a.hi[0] == b.hi[0] && a.lo[1] == b.lo[1] && a.hi[1] == b.hi[1] &&
           a.lo[2] == b.lo[2] && a.hi[2] == b.hi[2] && a.lo[3] == b.lo[3] && a.hi[3] == b.hi[3];
}
// A slice meeting a consumer's want (the intersection itself is taken again per slice:
// a hit stays 12 bytes).
struct SliceHit {
    std::uint32_t slice, consumer, want;
};

// One slice's hits, in scan order (consumer, want): its distinct intersections in
// first-hit order, each sent once to every consumer that hit it (in hit order); hits on
// the slice's own tile are read in place.
void slicePieces(const std::vector<SliceRef>& slices, std::span<const SliceHit> hits,
                 const std::vector<int>& consumerTiles, const std::vector<std::vector<Box>>& wants,
                 const NocPieceFn& onPiece, const NocLocalFn& onLocal) {
    thread_local std::vector<Box> boxes;
    thread_local std::vector<size_t> pieceOf, to, firstTo, fillTo;
    const size_t sl = hits.front().slice;
    boxes.clear();
    pieceOf.clear();
    size_t lastLocal = consumerTiles.size();
    for (const SliceHit& hit : hits) {
        const size_t consumer = hit.consumer;
        if (slices[sl].tile == consumerTiles[consumer]) {
            if (lastLocal != consumer) onLocal(consumer, sl), lastLocal = consumer;
            pieceOf.push_back(size_t(-1));
            continue;
        }
        const Box x = slices[sl].box.intersect(wants[consumer][hit.want]);
        // Consumers next to each other (k innermost) mostly hit the same box: try the last
        // one first.
        size_t p = pieceOf.empty() || pieceOf.back() == size_t(-1) ? 0 : pieceOf.back();
        if (p >= boxes.size() || !sameBox(boxes[p], x)) {
            p = 0;
            while (p < boxes.size() && !sameBox(boxes[p], x))
                ++p;
            if (p == boxes.size()) boxes.push_back(x);
        }
        pieceOf.push_back(p);
    }
    // Each piece's consumers in hit order: a counting sort of the hits by piece.
    firstTo.assign(boxes.size() + 1, 0);
    for (size_t p : pieceOf)
        if (p != size_t(-1)) ++firstTo[p + 1];
    for (size_t p = 1; p <= boxes.size(); ++p)
        firstTo[p] += firstTo[p - 1];
    to.resize(firstTo[boxes.size()]);
    fillTo.assign(firstTo.begin(), firstTo.end() - 1);
    for (size_t i = 0; i < hits.size(); ++i)
        if (pieceOf[i] != size_t(-1)) to[fillTo[pieceOf[i]]++] = hits[i].consumer;
    for (size_t p = 0; p < boxes.size(); ++p)
        onPiece(sl, boxes[p],
                std::span<const size_t>(to.data() + firstTo[p], firstTo[p + 1] - firstTo[p]));
}
} // namespace

void forEachNocPiece(const std::vector<SliceRef>& slices, const std::vector<int>& consumerTiles,
                     const std::vector<std::vector<Box>>& wants, const NocPieceFn& onPiece,
                     const NocLocalFn& onLocal) {
    // Slices of a partition form a grid: index them by their distinct extent per axis, so
    // each want meets only the slices whose extents overlap it (a tile group of 144 has
    // 144 x 144 slice-consumer pairs, of which a handful meet).
    // Scratch kept per thread: this runs once per producer invocation while the evaluator
    // costs a placement.
    thread_local std::array<std::vector<std::pair<int, int>>, 4> ext;
    for (auto& e : ext)
        e.clear();
    for (const SliceRef& ps : slices)
        for (size_t ax = 0; ax < 4; ++ax) {
            const std::pair<int, int> x{ps.box.lo[ax], ps.box.hi[ax]};
            if (ext[ax].empty() || ext[ax].back() != x) ext[ax].push_back(x); // fewer to sort
        }
    for (auto& e : ext) {
        std::sort(e.begin(), e.end());
        e.erase(std::unique(e.begin(), e.end()), e.end());
    }
    // Extents along an axis must not overlap for the grid lookup; otherwise fall back to
    // testing every slice (never the case for tileBox partitions, kept for safety).
    bool grid = std::none_of(slices.begin(), slices.end(),
                             [](const SliceRef& ps) { return ps.box.empty(); });
    for (const auto& e : ext)
        for (size_t i = 1; i < e.size() && grid; ++i)
            grid = e[i - 1].second <= e[i].first;
    std::array<size_t, 4> n{};
    for (size_t ax = 0; ax < 4; ++ax)
        n[ax] = ext[ax].size();
    thread_local std::vector<int> cellSlice;
    auto indexOf = [&](size_t ax, const SliceRef& ps) {
        return size_t(std::lower_bound(ext[ax].begin(), ext[ax].end(),
                                       std::make_pair(ps.box.lo[ax], ps.box.hi[ax])) -
                      ext[ax].begin());
    };
    if (grid) {
        cellSlice.assign(n[0] * n[1] * n[2] * n[3], -1);
        for (size_t sl = 0; sl < slices.size(); ++sl) {
            const SliceRef& ps = slices[sl];
            const size_t c =
                ((indexOf(0, ps) * n[1] + indexOf(1, ps)) * n[2] + indexOf(2, ps)) * n[3] +
                indexOf(3, ps);
            if (cellSlice[c] >= 0) grid = false; // two slices with one extent: not a grid
            cellSlice[c] = int(sl);
        }
    }
    // Every (slice, consumer, want) that meets, bucketed by slice: the consumer-major scan
    // fills each bucket in (consumer, want) order, so reading the buckets in slice order
    // gives the plain triple loop's order and pieces come out as they always did.
    thread_local std::vector<SliceHit> found;
    thread_local std::vector<size_t> cand;
    found.clear();
    for (size_t a = 0; a < consumerTiles.size(); ++a)
        for (size_t wi = 0; wi < wants[a].size(); ++wi) {
            const Box& want = wants[a][wi];
            cand.clear();
            if (grid) {
                // Every slice the lookup finds overlaps a non-empty want on each axis (the
                // slices are non-empty), so each is a hit; an empty want meets none.
                if (want.empty()) continue;
                std::array<std::pair<size_t, size_t>, 4> r{};
                bool none = false;
                for (size_t ax = 0; ax < 4 && !none; ++ax) {
                    const auto& e = ext[ax];
                    // from the first extent ending after want.lo to the first starting at or after
                    // want.hi
                    const size_t lo =
                        size_t(std::partition_point(
                                   e.begin(), e.end(),
                                   [&](const auto& p) { return p.second <= want.lo[ax]; }) -
                               e.begin());
                    const size_t hi = size_t(
                        std::partition_point(e.begin(), e.end(),
                                             [&](const auto& p) { return p.first < want.hi[ax]; }) -
                        e.begin());
                    r[ax] = {lo, hi};
                    none = lo >= hi;
                }
                if (none) continue;
                for (size_t i0 = r[0].first; i0 < r[0].second; ++i0)
                    for (size_t i1 = r[1].first; i1 < r[1].second; ++i1)
                        for (size_t i2 = r[2].first; i2 < r[2].second; ++i2)
                            for (size_t i3 = r[3].first; i3 < r[3].second; ++i3) {
                                const int sl =
                                    cellSlice[((i0 * n[1] + i1) * n[2] + i2) * n[3] + i3];
                                if (sl >= 0)
                                    found.push_back(
                                        {std::uint32_t(sl), std::uint32_t(a), std::uint32_t(wi)});
                            }
            } else {
                for (size_t sl = 0; sl < slices.size(); ++sl)
                    cand.push_back(sl);
            }
            for (size_t sl : cand) {
                const Box x = slices[sl].box.intersect(want);
                if (!x.empty())
                    found.push_back({std::uint32_t(sl), std::uint32_t(a), std::uint32_t(wi)});
            }
        }
    // Bucketed by slice (a counting sort, stable): within a slice the scan order
    // (consumer, want) stays.
    thread_local std::vector<size_t> bucketAt;
    thread_local std::vector<SliceHit> sorted;
    bucketAt.assign(slices.size() + 1, 0);
    for (const SliceHit& f : found)
        ++bucketAt[f.slice + 1];
    for (size_t i = 1; i < bucketAt.size(); ++i)
        bucketAt[i] += bucketAt[i - 1];
    sorted.resize(found.size());
    for (const SliceHit& f : found)
        sorted[bucketAt[f.slice]++] = f;
    found.swap(sorted);
    for (size_t h = 0; h < found.size();) {
        size_t end = h;
        while (end < found.size() && found[end].slice == found[h].slice)
            ++end;
        slicePieces(slices, std::span<const SliceHit>(found.data() + h, end - h), consumerTiles,
                    wants, onPiece, onLocal);
        h = end;
    }
}

void nocPieces(const std::vector<SliceRef>& slices, const std::vector<int>& consumerTiles,
               const std::vector<std::vector<Box>>& wants, std::vector<NocPiece>& pieces,
               std::vector<std::vector<size_t>>& local) {
    local.resize(consumerTiles.size());
    forEachNocPiece(
        slices, consumerTiles, wants,
        [&](size_t sl, const Box& box, std::span<const size_t> consumers) {
            pieces.push_back({sl, box, std::vector<size_t>(consumers.begin(), consumers.end())});
        },
        [&](size_t consumer, size_t sl) { local[consumer].push_back(sl); });
}

} // namespace tilescope

#include "hw/mesh.h"

namespace tilescope {

namespace {

// Per-link bytes of a set of transfers; a multicast loads each link of the union of its
// routes once.
class LinkTally {
  public:
    // Sized for `links` (grows only; everything is zero between uses).
    void ensure(int links) {
        if (m_bytes.size() >= size_t(links)) return;
        m_bytes.resize(size_t(links), 0.0);
        m_mark.resize(size_t(links), 0);
        m_seen.resize(size_t(links), 0);
    }
    // A route without repeated links (a multicastRoute tree): no marking needed.
    void addUnique(std::span<const int> route, double bytes) {
        for (int l : route) {
            if (!m_seen[size_t(l)]) m_seen[size_t(l)] = 1, m_touched.push_back(l);
            m_bytes[size_t(l)] += bytes;
        }
    }
    void add(const std::vector<int>& route, double bytes) {
        for (int l : route) {
            if (m_mark[size_t(l)]) continue;
            m_mark[size_t(l)] = 1;
            if (!m_seen[size_t(l)]) m_seen[size_t(l)] = 1, m_touched.push_back(l);
            m_bytes[size_t(l)] += bytes;
        }
        for (int l : route)
            m_mark[size_t(l)] = 0;
    }
    // Moves the tally out as sparse (link, bytes) pairs sorted by link; returns the busiest
    // link's bytes at NoC bandwidth (bytes x Mesh::linkSlowness).
    double take(const Mesh& mesh, std::vector<std::pair<int, double>>& out) {
        if (m_touched.size() * 8 > m_seen.size()) { // many: a scan of the marks is cheaper
            m_touched.clear();
            for (size_t l = 0; l < m_seen.size(); ++l)
                if (m_seen[l]) m_touched.push_back(int(l));
        } else {
            std::sort(m_touched.begin(), m_touched.end());
        }
        double mx = 0;
        for (int l : m_touched) {
            out.emplace_back(l, m_bytes[size_t(l)]);
            mx = std::max(mx, m_bytes[size_t(l)] * mesh.linkSlowness(l));
            m_bytes[size_t(l)] = 0.0;
            m_seen[size_t(l)] = 0;
        }
        m_touched.clear();
        return mx;
    }
    // Clears the tally; returns its busiest link's bytes at NoC bandwidth.
    double takeMax(const Mesh& mesh) {
        double mx = 0;
        for (int l : m_touched) {
            mx = std::max(mx, m_bytes[size_t(l)] * mesh.linkSlowness(l));
            m_bytes[size_t(l)] = 0.0;
            m_seen[size_t(l)] = 0;
        }
        m_touched.clear();
        return mx;
    }

  private:
    std::vector<double> m_bytes;
    std::vector<char> m_mark, m_seen;
    std::vector<int> m_touched;
};

// The NoC input pieces of a leaf (sender tile, bytes, route) and how long they take on a
// crowded mesh (docs/cost-model.md §5): a tile's SEND engine sends its pieces one after
// another, and a piece on a link shared with other tiles' SENDs moves at an equal share
// while they have bytes left there: b + sum over the other senders s of min(W_s, b), for
// its own bytes b and W_s the bytes s sends over the link (fluid round-robin, as the
// replay's links). But a sender's SENDs follow one another, so its bytes on one link are
// spread over all its sending (T_s bytes in all): it keeps the link busy for the share
// rho_s = W_s / T_s of the time, and a piece that shares the link with senders whose
// shares add up to rho < 1 takes at most b / (1 - rho) (all at once, a 6x6 mobilenet_v2
// exchange was 5,899 cycles where the replay's busiest tile's SENDs spanned 2,392). A piece
// takes the longest of its route's links (an inter-chiplet link's time scaled by
// Mesh::linkSlowness); per tile, its pieces add up, but to no more than its own bytes plus
// the most bytes the other senders put on one link of its routes (the links drain at once:
// "Held up once").
class SendLog {
  public:
    void clear() {
        m_tile.clear();
        m_bytes.clear();
        m_route.clear();
        m_links.clear();
        m_input.clear();
    }
    void add(int tile, double bytes, const std::vector<int>& route, size_t input) {
        m_input.push_back(input);
        m_tile.push_back(tile);
        m_bytes.push_back(bytes);
        m_route.push_back(m_links.size());
        m_links.insert(m_links.end(), route.begin(), route.end());
    }
    // The busiest sending tile's time, in bytes at a link's full bandwidth (0: no pieces).
    // Linear in the pieces' route links: bucket the (piece, link) entries by link (counting
    // sort), merge each link's entries per sender (stamped slots), then answer each link's
    // entries together from its senders' bytes, and each piece takes its slowest link.
    // Every byte count is a whole number (exact in a double), so the sums do not depend on
    // the order they are taken in; the pieces' times are added per tile in piece order.
    double paced(const Mesh& mesh) {
        m_piece = 0;
        if (m_tile.empty()) return 0;
        const size_t links = size_t(mesh.linkCount());
        m_route.push_back(m_links.size());
        m_total.assign(size_t(mesh.tiles()), 0.0); // per tile, the bytes it sends in all
        for (size_t i = 0; i < m_tile.size(); ++i)
            m_total[size_t(m_tile[i])] += m_bytes[i];
        bucketByLink(links);
        mergeSenders(mesh, links);
        m_slowest.assign(m_bytes.begin(), m_bytes.end());
        m_own.assign(m_bytes.size(), 0.0);
        m_others.assign(size_t(mesh.tiles()), 0.0);
        for (size_t l = 0; l < links; ++l)
            if (m_firstOn[l] < m_firstOn[l + 1]) answerLink(mesh, l);
        m_paced.assign(size_t(mesh.tiles()), 0.0);
        m_pieces.assign(size_t(mesh.tiles()), 0);
        m_scale.assign(size_t(mesh.tiles()), 0.0); // here: each tile's own pieces, unshared
        for (size_t i = 0; i < m_tile.size(); ++i) {
            m_paced[size_t(m_tile[i])] += m_slowest[i];
            m_scale[size_t(m_tile[i])] += m_own[i];
            ++m_pieces[size_t(m_tile[i])];
        }
        // A tile's pieces are done no later than its own bytes plus what the other senders
        // put on the most loaded link of its routes: the links drain at once, so the
        // others' bytes hold it up once, not once per piece (docs/cost-model.md §5,
        // "Held up once").
        for (size_t t = 0; t < m_paced.size(); ++t) {
            const double cap = m_scale[t] + m_others[t];
            m_scale[t] = m_paced[t] > cap ? cap / m_paced[t] : 1.0;
            m_paced[t] = std::min(m_paced[t], cap);
        }
        const size_t busiest =
            size_t(std::max_element(m_paced.begin(), m_paced.end()) - m_paced.begin());
        m_piece = m_pieces[busiest] > 0 ? m_paced[busiest] / m_pieces[busiest] : 0.0;
        return m_paced[busiest];
    }
    // After paced(): the busiest tile's time per piece, its pieces' mean.
    double pieceTime() const { return m_piece; }
    // After paced(): per input, the most time one tile's pieces of it take (their paced
    // times added up, scaled down as the tile's whole sum was).
    void pacedByInput(const Mesh& mesh, std::vector<double>& out) {
        if (out.size() == 1) { // every piece is of that input: paced() has the sums
            out[0] = *std::max_element(m_paced.begin(), m_paced.end());
            return;
        }
        for (size_t k = 0; k < out.size(); ++k) {
            m_paced.assign(size_t(mesh.tiles()), 0.0);
            for (size_t i = 0; i < m_tile.size(); ++i)
                if (m_input[i] == k)
                    m_paced[size_t(m_tile[i])] += m_slowest[i] * m_scale[size_t(m_tile[i])];
            out[k] = *std::max_element(m_paced.begin(), m_paced.end());
        }
    }

  private:
    // m_onPiece[e]: the piece of entry e, entries grouped by link (m_firstOn[l] is link l's
    // first entry).
    void bucketByLink(size_t links) {
        m_firstOn.assign(links + 1, 0);
        for (int l : m_links)
            ++m_firstOn[size_t(l) + 1];
        for (size_t l = 1; l <= links; ++l)
            m_firstOn[l] += m_firstOn[l - 1];
        m_onPiece.resize(m_links.size());
        m_fill.assign(m_firstOn.begin(), m_firstOn.end() - 1);
        for (size_t i = 0; i < m_tile.size(); ++i)
            for (size_t r = m_route[i]; r < m_route[i + 1]; ++r)
                m_onPiece[m_fill[size_t(m_links[r])]++] = int(i);
    }
    // Per link, one slot per sender with the bytes it sends over the link (m_firstSlot[l]
    // is link l's first slot); m_slotOf[e]: the slot of entry e's sender.
    void mergeSenders(const Mesh& mesh, size_t links) {
        m_slotW.resize(m_onPiece.size());
        m_slotOf.resize(m_onPiece.size());
        m_firstSlot.resize(links + 1);
        m_stamp.assign(size_t(mesh.tiles()), 0);
        m_slot.resize(size_t(mesh.tiles()));
        // Each sender spreads its bytes on a link over all its sending: it keeps the link
        // busy for the share W / (its bytes in all) of the time; m_rho[l] adds them up.
        m_rho.assign(links, 0.0);
        size_t w = 0;
        for (size_t l = 0; l < links; ++l) {
            m_firstSlot[l] = w;
            for (size_t e = m_firstOn[l]; e < m_firstOn[l + 1]; ++e) {
                const size_t i = size_t(m_onPiece[e]);
                const size_t t = size_t(m_tile[i]);
                m_rho[l] += m_bytes[i] / m_total[t];
                if (m_stamp[t] == l + 1) {
                    m_slotW[m_slot[t]] += m_bytes[i];
                } else {
                    m_stamp[t] = l + 1;
                    m_slot[t] = w;
                    m_slotW[w++] = m_bytes[i];
                }
                m_slotOf[e] = m_slot[t];
            }
        }
        m_firstSlot[links] = w;
    }
    // A piece of b bytes on link l waits for min(W, b) of every other sender's W there:
    // b + sum over the link's senders of min(W, b) - min(own W, b); and no longer than
    // b / (1 - rho), rho the other senders' share of the link (m_rho, below 1). Also
    // notes, per piece, its own time on its slowest link (m_own) and, per sender, the
    // most bytes the others put on one of its links (m_others), both x the slowness.
    void answerLink(const Mesh& mesh, size_t l) {
        const size_t lo = m_firstSlot[l], n = m_firstSlot[l + 1] - lo;
        const double* W = m_slotW.data() + lo;
        const double slowness = mesh.linkSlowness(int(l));
        const double load = std::accumulate(W, W + n, 0.0);
        // Few senders: sum directly; many: their bytes sorted, with prefix sums.
        const bool sorted = n > 32;
        if (sorted) {
            m_sorted.assign(W, W + n);
            std::sort(m_sorted.begin(), m_sorted.end());
            m_prefix.resize(n + 1);
            m_prefix[0] = 0;
            for (size_t k = 0; k < n; ++k)
                m_prefix[k + 1] = m_prefix[k] + m_sorted[k];
        }
        double lastB = -1, lastAll = 0; // sum over all senders of min(W, b), for b = lastB
        for (size_t e = m_firstOn[l]; e < m_firstOn[l + 1]; ++e) {
            const size_t i = size_t(m_onPiece[e]);
            const double b = m_bytes[i];
            if (b != lastB) {
                lastB = b;
                if (sorted) {
                    const size_t k = size_t(std::upper_bound(m_sorted.begin(), m_sorted.end(), b) -
                                            m_sorted.begin());
                    lastAll = m_prefix[k] + b * double(n - k);
                } else {
                    lastAll = 0;
                    for (size_t k = 0; k < n; ++k)
                        lastAll += std::min(W[k], b);
                }
            }
            double time = b + (lastAll - std::min(m_slotW[m_slotOf[e]], b));
            const double rho = m_rho[l] - m_slotW[m_slotOf[e]] / m_total[size_t(m_tile[i])];
            if (rho < 1) time = std::min(time, b / (1 - rho));
            m_slowest[i] = std::max(m_slowest[i], time * slowness);
            m_own[i] = std::max(m_own[i], b * slowness);
            double& others = m_others[size_t(m_tile[i])];
            others = std::max(others, (load - m_slotW[m_slotOf[e]]) * slowness);
        }
    }

    double m_piece = 0;
    std::vector<int> m_tile, m_links, m_onPiece, m_pieces;
    std::vector<double> m_bytes, m_paced, m_sorted, m_prefix, m_slotW, m_slowest, m_total, m_rho;
    std::vector<double> m_own, m_others, m_scale;
    // m_route: each piece's first entry in m_links.
    std::vector<size_t> m_input, m_route, m_firstOn, m_fill, m_firstSlot, m_slotOf, m_stamp, m_slot;
};

// DRAM bytes per side of a transfer to (or from) `tiles`: split evenly among the sides
// Mesh::dramSidesOf names, as the simulator charges them.
void chargeSides(const Mesh& mesh, std::array<double, 4>& side, const std::vector<int>& tiles,
                 double bytes) {
    const std::vector<Dir> sides = mesh.dramSidesOf(tiles);
    for (Dir d : sides)
        side[size_t(d)] += bytes / double(sides.size());
}

// Weights: one DRAM read per output-channel slice, multicast to the tiles holding it.
void weightTraffic(const TransferGeometry& geo, const Mesh& mesh, const LeafPlacement& leaf,
                   LinkTally& wgt, std::vector<int>& route, LeafTraffic& T) {
    const int b = std::max(1, leaf.batch);
    std::map<std::pair<int, int>, std::vector<int>> byK;
    for (int t = 0; t < leaf.tileCount; ++t) {
        const Box box = geo.tileBox(leaf.layer, *leaf.mapping, t, 0, b);
        if (!box.empty()) byK[{box.lo[1], box.hi[1]}].push_back(mesh.tileAt(leaf.tileBegin + t));
    }
    for (const auto& [kr, members] : byK) {
        const double bytes = double(geo.bytesOf(geo.weightElems(leaf.layer, kr.first, kr.second)));
        route.clear();
        mesh.multicastFromDram(members, route);
        wgt.add(route, bytes);
        chargeSides(mesh, T.weightSide, members, bytes);
        T.weightDram += bytes;
        T.weightDelivered += bytes * double(members.size());
    }
}

// Invocations repeat with a period: the consumer's own partition is the same every
// invocation, and a NoC producer's invocations line up the same way again after
// lcm(b, producer batch) samples. One period is costed and scaled.
int periodOf(int b, const std::vector<const LeafPlacement*>& producers) {
    int period = 1;
    for (const LeafPlacement* p : producers)
        if (p) {
            const int pb = std::max(1, p->batch);
            period = std::lcm(period, std::lcm(b, pb) / b);
        }
    return period;
}

// An input read from DRAM for samples [s0, s1): each cell once, multicast to the tiles
// whose windows hold it. Returns the bytes delivered (multicast copies counted).
double dramInput(const TransferGeometry& geo, const Mesh& mesh, const InputGeom& g, int s0, int s1,
                 const std::vector<Box>& win, const std::vector<int>& actTiles, LinkTally& act,
                 LeafTraffic& T) {
    thread_local std::vector<int> dst, route;
    Box ext;
    ext.lo = {s0, 0, 0, 0};
    ext.hi = {s1, g.C, g.H, g.W};
    double delivered = 0;
    for (const DramCell& c : dramCells(ext, win)) {
        const double bytes = double(geo.bytesOf(c.box.volume()));
        dst.clear();
        for (size_t a : c.to)
            dst.push_back(actTiles[a]);
        route.clear();
        mesh.multicastFromDram(dst, route);
        act.add(route, bytes);
        chargeSides(mesh, T.actSide, dst, bytes);
        T.actDram += bytes;
        delivered += bytes * double(c.to.size());
    }
    return delivered;
}

// How a leaf's first invocation keeps pace with a producer (LeafTraffic::pace), from the
// stage boxes the generator cuts (docs/isa.md, "Dependencies at stage granularity"): each
// consumer tile's compute stages (the first invocation loads the weights), the windows
// they read of the input, each producer slice's stages and a piece's SEND stages (in the
// producer's order, as the generator's emitInput cuts them). A producer tile's STORE/SEND
// engine moves its pieces one after another in that order, so a piece's SEND starts no
// sooner than the one before it on the same tile has ended (docs/cost-model.md §5,
// "Pieces in turn"). From nothing upwards, the slowest piece decides; once it waits for
// all of its producer nothing can be slower.
class PaceProbe {
  public:
    void consumer(const TransferGeometry& geo, int layer, const std::vector<Box>& boxes) {
        m_cStages.resize(boxes.size());
        for (size_t a = 0; a < boxes.size(); ++a)
            splitBox(boxes[a], geo.computeOrder(layer, boxes[a], true), kMaxStages, m_cStages[a]);
    }
    void input(const TransferGeometry& geo, int layer, size_t k, LeafTraffic::Pace& pace) {
        m_pace = &pace;
        pace = {0, 0};
        m_req.resize(m_cStages.size());
        for (size_t a = 0; a < m_cStages.size(); ++a) {
            m_req[a].clear();
            for (const Box& st : m_cStages[a])
                m_req[a].push_back(geo.window(layer, k, st));
        }
    }
    void producer(const TransferGeometry& geo, int layer, const std::vector<SliceRef>& slices,
                  bool loadsWeights) {
        m_pStages.resize(slices.size());
        m_pOrder.resize(slices.size());
        m_sent.assign(slices.size(), 0);
        for (size_t sl = 0; sl < slices.size(); ++sl) {
            m_pOrder[sl] = geo.computeOrder(layer, slices[sl].box, loadsWeights);
            splitBox(slices[sl].box, m_pOrder[sl], kMaxStages, m_pStages[sl]);
        }
    }
    // Producer compute -> SEND -> consumer compute.
    void piece(size_t sl, const Box& box, std::span<const size_t> to) {
        if (saturated()) return;
        splitBox(box, m_pOrder[sl], kMaxStages, m_send);
        // In producer stages: when this piece's SEND can start (its first data there and
        // the engine done with the slice's earlier pieces), and when it is done (its last
        // stage follows the producer's, one stage after another).
        const std::uint32_t nP = std::uint32_t(m_pStages[sl].size());
        const std::uint32_t first = lagStage(m_pStages[sl], m_send);
        const std::uint32_t lag1 = std::max(first, m_sent[sl]);
        m_sent[sl] = std::min(nP, std::max(m_sent[sl], first + std::uint32_t(m_send.size()) - 1));
        for (size_t a : to)
            by(sl, a, std::min(nP, lag1 + lagStage(m_send, m_req[a]) - 1));
    }
    // A slice the consumer reads in place.
    void local(size_t a, size_t sl) {
        if (!saturated()) by(sl, a, lagStage(m_pStages[sl], m_req[a]));
    }

  private:
    bool saturated() const { return m_pace->lead >= 1 && m_pace->tail >= 1; }
    void by(size_t sl, size_t a, std::uint32_t lag) {
        const double nP = double(m_pStages[sl].size()), nC = double(m_req[a].size());
        m_pace->lead = std::max(m_pace->lead, float(std::min(1.0, lag / nP)));
        m_pace->tail = std::max(m_pace->tail, float(std::clamp(nC - nP + lag, 1.0, nC) / nC));
    }
    std::vector<std::vector<Box>> m_cStages, m_req, m_pStages;
    std::vector<StageOrder> m_pOrder;
    std::vector<std::uint32_t> m_sent; // per slice: the producer stage its engine is done at
    std::vector<Box> m_send;
    LeafTraffic::Pace* m_pace = nullptr;
};

// One invocation's outputs stored to DRAM from each tile (`boxes` on `tiles`): their links,
// DRAM sides and bytes, and each tile's STORE/SEND engine time (x the route's slowness).
void storeOutputs(const TransferGeometry& geo, const Mesh& mesh, const std::vector<Box>& boxes,
                  const std::vector<int>& tiles, LinkTally& act, std::vector<double>& egress,
                  std::vector<double>& stored, LeafTraffic& T) {
    thread_local std::vector<int> route;
    for (size_t a = 0; a < boxes.size(); ++a) {
        const double bytes = double(geo.bytesOf(boxes[a].volume()));
        route.clear();
        mesh.routeToDram(tiles[a], route);
        act.add(route, bytes);
        T.actSide[size_t(mesh.nearestPort(tiles[a]).first)] += bytes;
        T.actDram += bytes;
        T.actDramOut += bytes;
        egress[size_t(tiles[a])] += bytes * mesh.routeSlowness(route);
        stored[size_t(tiles[a])] += bytes * mesh.routeSlowness(route);
    }
}

} // namespace

LeafTraffic leafTrafficPeriod(const TransferGeometry& geo, const Mesh& mesh,
                              const LeafPlacement& leaf,
                              const std::vector<const LeafPlacement*>& producers, bool writesDram,
                              std::uint32_t paceInputs) {
    const Network& net = geo.network();
    const Layer& ly = net.layers[size_t(leaf.layer)];
    const LeafMapping& m = *leaf.mapping;
    LeafTraffic T;
    thread_local LinkTally act, wgt, noc, nocSame;
    act.ensure(mesh.linkCount());
    wgt.ensure(mesh.linkCount());
    noc.ensure(mesh.linkCount());
    nocSame.ensure(mesh.linkCount());
    thread_local std::vector<int> route;
    const int b = std::max(1, leaf.batch);

    if (ly.weightBytes > 0) weightTraffic(geo, mesh, leaf, wgt, route, T);

    const int period = T.invocations = periodOf(b, producers);
    T.nocInByInput.assign(ly.inputs.size(), 0.0);
    T.nocOutOfProducer.assign(ly.inputs.size(), 0.0);
    T.nocInsideGroup.assign(ly.inputs.size(), 0.0);
    // Which tiles belong to this leaf's group and to the current producer's (by tile id).
    thread_local std::vector<char> inLeaf, inProducer;
    inLeaf.assign(size_t(mesh.tiles()), 0);
    for (int t = 0; t < leaf.tileCount; ++t)
        inLeaf[size_t(mesh.tileAt(leaf.tileBegin + t))] = 1;
    thread_local std::vector<int> actTiles, dst;
    thread_local std::vector<Box> boxes, win;
    thread_local std::vector<std::vector<Box>> wants;
    thread_local std::vector<SliceRef> slices;
    thread_local std::vector<double> egress, stored;
    thread_local std::vector<std::vector<double>> sent; // per input, per producer tile
    thread_local std::vector<std::vector<double>> recv; // per input, per consumer tile
    egress.assign(size_t(mesh.tiles()), 0.0);
    stored.assign(size_t(mesh.tiles()), 0.0);
    if (sent.size() < ly.inputs.size()) sent.resize(ly.inputs.size());
    if (recv.size() < ly.inputs.size()) recv.resize(ly.inputs.size());
    for (size_t k = 0; k < ly.inputs.size(); ++k) {
        sent[k].assign(k < producers.size() && producers[k] ? size_t(mesh.tiles()) : 0, 0.0);
        recv[k].assign(sent[k].size(), 0.0);
    }
    thread_local SendLog sends;
    sends.clear();
    double actDelivered = 0;
    T.pace.assign(ly.inputs.size(), {});
    thread_local PaceProbe probe;
    for (int inv = 0; inv < period; ++inv) {
        const int s0 = inv * b, s1 = s0 + b;
        actTiles.clear();
        boxes.clear();
        for (int t = 0; t < leaf.tileCount; ++t) {
            const Box box = geo.tileBox(leaf.layer, m, t, s0, s1);
            if (box.empty()) continue;
            actTiles.push_back(mesh.tileAt(leaf.tileBegin + t));
            boxes.push_back(box);
        }
        if (inv == 0 && paceInputs) probe.consumer(geo, leaf.layer, boxes);
        for (size_t k = 0; k < ly.inputs.size(); ++k) {
            const InputGeom& g = geo.input(leaf.layer, k);
            win.clear();
            for (const Box& o : boxes)
                win.push_back(geo.window(leaf.layer, k, o));
            const LeafPlacement* p = k < producers.size() ? producers[k] : nullptr;
            if (!p) {
                actDelivered += dramInput(geo, mesh, g, s0, s1, win, actTiles, act, T);
                continue;
            }
            wants.resize(boxes.size()); // keeps each consumer's capacity
            for (size_t a = 0; a < boxes.size(); ++a) {
                wants[a].clear();
                if (g.sameAsProducer)
                    wants[a].push_back(win[a]);
                else
                    geo.producerWants(leaf.layer, k, boxes[a], wants[a]);
            }
            inProducer.assign(size_t(mesh.tiles()), 0);
            for (int t = 0; t < p->tileCount; ++t)
                inProducer[size_t(mesh.tileAt(p->tileBegin + t))] = 1;
            // The producer invocations whose samples overlap [s0, s1).
            const int pb = std::max(1, p->batch);
            // Paced when the first invocation reads one producer invocation in its own
            // coordinates; from nothing upwards, the slowest piece decides.
            const bool pacing =
                inv == 0 && k < 32 && (paceInputs >> k & 1u) && g.sameAsProducer && pb >= b;
            if (pacing) probe.input(geo, leaf.layer, k, T.pace[k]);
            for (int q0 = (s0 / pb) * pb; q0 < s1; q0 += pb) {
                slices.clear();
                for (int t = 0; t < p->tileCount; ++t) {
                    const Box box = geo.tileBox(p->layer, *p->mapping, t, q0, q0 + pb);
                    if (!box.empty()) slices.push_back({mesh.tileAt(p->tileBegin + t), box});
                }
                if (pacing) probe.producer(geo, p->layer, slices, q0 == 0);
                forEachNocPiece(
                    slices, actTiles, wants,
                    [&](size_t sl, const Box& box, std::span<const size_t> to) {
                        if (pacing) probe.piece(sl, box, to);
                        const double bytes = double(geo.bytesOf(box.volume()));
                        route.clear();
                        dst.clear();
                        bool leaves = false;
                        for (size_t a : to) {
                            recv[k][size_t(actTiles[a])] += bytes;
                            dst.push_back(actTiles[a]);
                            leaves |= !inProducer[size_t(actTiles[a])];
                        }
                        mesh.multicastRoute(slices[sl].tile, dst, route);
                        sends.add(slices[sl].tile, bytes, route, k);
                        act.addUnique(route, bytes);
                        (g.sameAsProducer ? nocSame : noc).addUnique(route, bytes);
                        if (inLeaf[size_t(slices[sl].tile)])
                            T.nocInsideGroup[k] += bytes;
                        else
                            T.nocInByInput[k] += bytes;
                        if (leaves) T.nocOutOfProducer[k] += bytes;
                        const double slow = bytes * mesh.routeSlowness(route);
                        egress[size_t(slices[sl].tile)] += slow;
                        sent[k][size_t(slices[sl].tile)] += slow;
                        actDelivered += bytes * double(to.size());
                    },
                    [&](size_t a, size_t sl) {
                        if (pacing) probe.local(a, sl);
                    });
            }
        }
        if (writesDram) storeOutputs(geo, mesh, boxes, actTiles, act, egress, stored, T);
    }
    T.sentByInput.assign(ly.inputs.size(), 0.0);
    T.receivedByInput.assign(ly.inputs.size(), 0.0);
    for (size_t k = 0; k < ly.inputs.size(); ++k)
        if (!sent[k].empty()) {
            T.sentByInput[k] = *std::max_element(sent[k].begin(), sent[k].end());
            T.receivedByInput[k] = *std::max_element(recv[k].begin(), recv[k].end());
        }
    T.storedMax = *std::max_element(stored.begin(), stored.end());
    T.nocPaced = sends.paced(mesh);
    T.nocPacedPiece = sends.pieceTime();
    T.pacedByInput.assign(ly.inputs.size(), 0.0);
    if (T.nocPaced > 0) sends.pacedByInput(mesh, T.pacedByInput);
    T.actMaxLink = act.take(mesh, T.actLinks);
    T.delivered = T.weightDelivered + actDelivered;
    T.maxEgress = *std::max_element(egress.begin(), egress.end());
    T.weightMaxLink = wgt.take(mesh, T.weightLinks);
    T.nocInMaxLink = noc.takeMax(mesh);
    T.nocSameMaxLink = nocSame.takeMax(mesh);
    return T;
}

LeafTraffic scaleTraffic(const Mesh& mesh, const LeafTraffic& period, int invocations) {
    LeafTraffic T = period;
    const double scale = double(invocations) / std::max(1, period.invocations);
    T.invocations = invocations;
    for (auto& [link, bytes] : T.actLinks)
        bytes *= scale;
    T.actMaxLink *= scale;
    T.nocInMaxLink *= scale;
    T.nocSameMaxLink *= scale;
    T.maxEgress *= scale;
    T.storedMax *= scale;
    for (auto* v : {&T.sentByInput, &T.pacedByInput, &T.receivedByInput})
        for (double& b : *v)
            b *= scale;
    T.nocPaced *= scale;
    for (double& b : T.actSide)
        b *= scale;
    T.actDram *= scale;
    T.actDramOut *= scale;
    for (auto* v : {&T.nocInByInput, &T.nocOutOfProducer, &T.nocInsideGroup})
        for (double& b : *v)
            b *= scale;
    T.delivered = period.weightDelivered + (period.delivered - period.weightDelivered) * scale;
    // Both parts together, for a leaf alone in its segment (links are sorted in each).
    T.maxLink = 0;
    T.actHop = T.weightHop = T.actInterHop = T.weightInterHop = 0;
    size_t j = 0;
    auto weightOnly = [&](size_t i) {
        const auto& [l, b] = T.weightLinks[i];
        T.maxLink = std::max(T.maxLink, b * mesh.linkSlowness(l));
    };
    for (const auto& [link, bytes] : T.actLinks) {
        T.actHop += bytes;
        if (mesh.crossesChiplet(link)) T.actInterHop += bytes;
        while (j < T.weightLinks.size() && T.weightLinks[j].first < link)
            weightOnly(j++);
        const double w = j < T.weightLinks.size() && T.weightLinks[j].first == link
                             ? T.weightLinks[j++].second
                             : 0.0;
        T.maxLink = std::max(T.maxLink, (bytes + w) * mesh.linkSlowness(link));
    }
    for (; j < T.weightLinks.size(); ++j)
        weightOnly(j);
    for (const auto& [link, bytes] : T.weightLinks) {
        T.weightHop += bytes;
        if (mesh.crossesChiplet(link)) T.weightInterHop += bytes;
    }
    return T;
}

} // namespace tilescope
