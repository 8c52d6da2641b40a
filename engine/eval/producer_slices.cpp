// Producer output slices met with the consumer tiles' wants: one NoC piece per distinct
// (slice, intersection), multicast to every consumer that wants it, and the slices read in
// place on a consumer's own tile (transfers.h).
#include "eval/transfers.h"

#include <algorithm>

namespace tilescope {

namespace {
// Box::operator== without a call to memcmp (the piece search compares boxes per hit).
bool sameBox(const Box& a, const Box& b) {
    return a.lo[0] == b.lo[0] && a.hi[0] == b.hi[0] && a.lo[1] == b.lo[1] && a.hi[1] == b.hi[1] &&
           a.lo[2] == b.lo[2] && a.hi[2] == b.hi[2] && a.lo[3] == b.lo[3] && a.hi[3] == b.hi[3];
}
// A slice meeting a run of consumers' want (the intersection itself is taken again per
// slice: a hit stays 12 bytes).
struct SliceHit {
    std::uint32_t slice, run, want;
};

// One slice's hits, in scan order (run, want), each standing for the run's consumers in
// turn: its distinct intersections in first-hit order, each sent once to every consumer
// that hit it (in hit order: consumer, then want); hits on the slice's own tile are read in
// place. runBegin[r] is run r's first consumer; the consumers of a run want the same
// boxes, so a hit's intersection and piece are found once for the whole run, and each
// piece's consumer list is counted and filled run by run without listing every
// (consumer, hit) first.
void slicePieces(const std::vector<SliceRef>& slices, std::span<const SliceHit> hits,
                 const std::vector<size_t>& runBegin, const std::vector<int>& consumerTiles,
                 const std::vector<std::vector<Box>>& wants, const NocPieceFn& onPiece,
                 const NocLocalFn& onLocal) {
    thread_local std::vector<Box> boxes;
    thread_local std::vector<size_t> to, firstTo, fillTo, hitPiece, groupEnd;
    const size_t sl = hits.front().slice;
    const int tile = slices[sl].tile;
    const size_t none = size_t(-1);
    boxes.clear();
    firstTo.assign(1, 0); // firstTo[p + 1]: piece p's consumers, counted here
    hitPiece.assign(hits.size(), none);
    groupEnd.clear();
    size_t last = none;                    // the piece found last: consumers next to each other (k
                                           // innermost) mostly hit the same box
    for (size_t g = 0; g < hits.size();) { // the hits of one run
        size_t gEnd = g;
        while (gEnd < hits.size() && hits[gEnd].run == hits[g].run)
            ++gEnd;
        groupEnd.push_back(gEnd);
        const size_t r = hits[g].run;
        size_t remote = 0;
        for (size_t consumer = runBegin[r]; consumer < runBegin[r + 1]; ++consumer)
            if (tile == consumerTiles[consumer])
                onLocal(consumer, sl);
            else
                ++remote;
        for (size_t h = g; h < gEnd && remote > 0; ++h) {
            const Box x = slices[sl].box.intersect(wants[runBegin[r]][hits[h].want]);
            size_t p = last == none ? 0 : last;
            if (p >= boxes.size() || !sameBox(boxes[p], x)) {
                p = 0;
                while (p < boxes.size() && !sameBox(boxes[p], x))
                    ++p;
                if (p == boxes.size()) boxes.push_back(x), firstTo.push_back(0);
            }
            hitPiece[h] = last = p;
            firstTo[p + 1] += remote;
        }
        g = gEnd;
    }
    // Each piece's consumers in hit order (consumer-major within a run): a counting sort.
    for (size_t p = 1; p <= boxes.size(); ++p)
        firstTo[p] += firstTo[p - 1];
    to.resize(firstTo[boxes.size()]);
    fillTo.assign(firstTo.begin(), firstTo.end() - 1);
    for (size_t g = 0, i = 0; g < hits.size(); g = groupEnd[i++]) {
        const size_t r = hits[g].run, gEnd = groupEnd[i];
        if (hitPiece[g] == none) continue; // every consumer of the run reads in place
        if (gEnd == g + 1) {               // one hit: the run's consumers one after another
            size_t at = fillTo[hitPiece[g]];
            for (size_t consumer = runBegin[r]; consumer < runBegin[r + 1]; ++consumer)
                if (tile != consumerTiles[consumer]) to[at++] = consumer;
            fillTo[hitPiece[g]] = at;
            continue;
        }
        for (size_t consumer = runBegin[r]; consumer < runBegin[r + 1]; ++consumer)
            if (tile != consumerTiles[consumer])
                for (size_t h = g; h < gEnd; ++h)
                    to[fillTo[hitPiece[h]]++] = consumer;
    }
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
    // Consumers next to each other that want the same boxes (the output-channel slots of
    // one input window, k innermost) form a run, met with the slices once.
    thread_local std::vector<size_t> runBegin;
    runBegin.clear();
    for (size_t a = 0; a < consumerTiles.size(); ++a)
        if (a == 0 || wants[a] != wants[a - 1]) runBegin.push_back(a);
    const size_t runs = runBegin.size();
    runBegin.push_back(consumerTiles.size());
    // Every (slice, run, want) that meets, bucketed by slice: the run-major scan fills each
    // bucket in (run, want) order, so reading the buckets in slice order, each run's
    // consumers in turn, gives the plain triple loop's order (slice, consumer, want) and
    // pieces come out as they always did.
    thread_local std::vector<SliceHit> found;
    thread_local std::vector<size_t> cand;
    found.clear();
    for (size_t run = 0; run < runs; ++run) {
        const size_t a = runBegin[run];
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
                    const auto& extents = ext[ax];
                    // from the first extent ending after want.lo to the first starting at or after
                    // want.hi
                    const size_t lo =
                        size_t(std::partition_point(
                                   extents.begin(), extents.end(),
                                   [&](const auto& p) { return p.second <= want.lo[ax]; }) -
                               extents.begin());
                    const size_t hi = size_t(
                        std::partition_point(extents.begin(), extents.end(),
                                             [&](const auto& p) { return p.first < want.hi[ax]; }) -
                        extents.begin());
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
                                        {std::uint32_t(sl), std::uint32_t(run), std::uint32_t(wi)});
                            }
            } else {
                for (size_t sl = 0; sl < slices.size(); ++sl)
                    cand.push_back(sl);
            }
            for (size_t sl : cand) {
                const Box x = slices[sl].box.intersect(want);
                if (!x.empty())
                    found.push_back({std::uint32_t(sl), std::uint32_t(run), std::uint32_t(wi)});
            }
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
        slicePieces(slices, std::span<const SliceHit>(found.data() + h, end - h), runBegin,
                    consumerTiles, wants, onPiece, onLocal);
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
