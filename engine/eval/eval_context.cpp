// The evaluator's memo caches, one set per EvalContext (so per thread): each leaf's traffic
// by placement (two generations, bounded), the busiest link of a sum of leaves, and the
// weights' busiest link by start order.
#include "eval/eval_context.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tilescope {

EvalContext::Impl::Impl(const Network& n, const Hardware& h)
    : net(n), hw(h), mesh(h), mapper(n, h),
      geo(n, h.dataBits, h.loadOrder, std::uint64_t(h.stageBytes)) {
    // A generation's pairs: 2 M (a 12x12 leaf holds up to a few thousand), or room for
    // about a thousand leaves' worth of every link of a larger mesh, to 8 M. A leaf spread
    // over a 32x32 mesh holds tens of thousands, so 2 M would keep only the last hundred or
    // so of those and a chain would cost again the placements it keeps coming back to
    // (docs/search.md, "Speed and the evaluator's cost").
    memoPairs = std::clamp(size_t(mesh.linkCount()) * 1000, size_t(2'000'000), size_t(8'000'000));
    linkSums.resize(mesh.linkCount());
    weightSums.resize(mesh.linkCount());
    pipeLinkClock.resize(mesh.linkCount());
    producers.resize(net.layers.size());
    isOutput.assign(net.layers.size(), 0);
    residentInputs.assign(net.layers.size(), 0);
    auto cons = net.consumers();
    layerClass = net.layerClasses();
    if (mesh.dramRuns().active())
        for (size_t i = 0; i < layerClass.size(); ++i)
            layerClass[i] = int(i);
    for (size_t i = 0; i < net.layers.size(); ++i) {
        for (size_t k = 0; k < net.layers[i].inputs.size(); ++k)
            if (net.layers[i].inputs[k].producer >= 0)
                producers[i].push_back({net.layers[i].inputs[k].producer, int(k)});
            else if (net.layers[i].inputs[k].resident)
                residentInputs[i] = 1;
        isOutput[i] = net.isOutput(int(i)) || cons[i].empty();
        keepsOnChip = keepsOnChip || residentInputs[i] || net.layers[i].weightsResident;
    }
}

// The busiest link of the leaves at positions [lo, hi): their activation links
// scaled by `scale`, plus their weight links when withWeights (busiestMemo); in bytes
// at NoC bandwidth (Mesh::linkSlowness).
double EvalContext::Impl::busiestOf(const std::vector<NodeWork>& work,
                                    const std::vector<int>& leafNode,
                                    const std::vector<int>& posLayer, int lo, int hi, double scale,
                                    bool withWeights) {
    std::string& key = busiestKey;
    key.assign(reinterpret_cast<const char*>(&scale), sizeof scale);
    key.push_back(withWeights ? 'w' : 'a');
    sumLeaves.clear();
    for (int pos = lo; pos < hi; ++pos) {
        const LeafTraffic* t = work[size_t(leafNode[size_t(posLayer[size_t(pos)])])].leaf.traffic;
        key.append(reinterpret_cast<const char*>(&t), sizeof t);
        sumLeaves.push_back(t);
    }
    if (auto it = busiestMemo.find(key); it != busiestMemo.end()) return it->second;
    double busiest = 0;
    int exponent = 0;
    if (scale > 0 && std::frexp(scale, &exponent) == 0.5) {
        // A power of two: a running sum of the same kind and length, or the least used.
        RunningSum* r = nullptr;
        for (RunningSum& c : runningSums)
            if (c.valid && c.scale == scale && c.withWeights == withWeights &&
                c.leaves.size() == sumLeaves.size())
                r = &c;
        size_t differ = sumLeaves.size();
        if (r) {
            differ = 0;
            for (size_t i = 0; i < sumLeaves.size(); ++i)
                differ += sumLeaves[i] != r->leaves[i];
        } else {
            r = &*std::min_element(
                runningSums.begin(), runningSums.end(),
                [](const RunningSum& a, const RunningSum& b) { return a.used < b.used; });
            r->scale = scale, r->withWeights = withWeights, r->valid = false;
        }
        r->used = ++runningUses;
        busiest = runningBusiest(*r, 2 * differ > sumLeaves.size());
    } else {
        for (const LeafTraffic* t : sumLeaves) {
            for (const auto& [link, b] : t->actLinks)
                linkSums.add(link, b * scale);
            if (withWeights)
                for (const auto& [link, b] : t->weightLinks)
                    linkSums.add(link, b * scale);
        }
        linkSums.drain(
            [&](int l, double b) { busiest = std::max(busiest, b * mesh.linkSlowness(l)); });
    }
    chargeSegmentMemos(key.size() + 64); // the key and about a node's overhead
    busiestMemo.emplace(key, busiest);
    return busiest;
}

// The busiest link of running sum r once it holds sumLeaves: the leaves that differ taken
// out and put in, or (rebuild, or a term that is not a whole number of bytes) all added
// afresh in order, as busiestOf adds them. Whole numbers of bytes times a power of two add
// up exactly in any order, so taking a leaf out and putting another in gives the sums the
// leaves added in order give; a sum with another term is rebuilt every time.
double EvalContext::Impl::runningBusiest(RunningSum& r, bool rebuild) {
    const size_t links = size_t(mesh.linkCount());
    if (r.sums.size() < links) r.sums.resize(links, 0.0), r.seen.resize(links, 0);
    bool whole = true;
    auto put = [&](const LeafTraffic& t, double sign) {
        auto one = [&](const std::vector<std::pair<int, double>>& pairs) {
            for (const auto& [link, b] : pairs) {
                whole = whole && b == std::floor(b) && std::abs(b) < 0x1p36;
                r.sums[size_t(link)] += sign * (b * r.scale);
                if (!r.seen[size_t(link)]) r.seen[size_t(link)] = 1, r.touched.push_back(link);
            }
        };
        one(t.actLinks);
        if (r.withWeights) one(t.weightLinks);
    };
    if (!rebuild && r.valid) {
        for (size_t i = 0; i < sumLeaves.size(); ++i)
            if (sumLeaves[i] != r.leaves[i]) put(*r.leaves[i], -1.0), put(*sumLeaves[i], 1.0);
        rebuild = !whole;
    }
    if (rebuild || !r.valid) {
        for (int l : r.touched)
            r.sums[size_t(l)] = 0.0, r.seen[size_t(l)] = 0;
        r.touched.clear();
        whole = true;
        for (const LeafTraffic* t : sumLeaves)
            put(*t, 1.0);
    }
    r.leaves = sumLeaves;
    // Terms below 2^36 scale, two per leaf and link: the sums stay exact below 2^53 scale.
    r.valid = whole && sumLeaves.size() < (size_t(1) << 15);
    double busiest = 0;
    for (int l : r.touched)
        busiest = std::max(busiest, r.sums[size_t(l)] * mesh.linkSlowness(l));
    return busiest;
}

// busiestMemo and weightMaxMemo share one budget: under 32 MiB, else both start afresh.
void EvalContext::Impl::chargeSegmentMemos(std::size_t bytes) {
    busiestBytes += bytes;
    if (busiestBytes > (std::size_t(32) << 20)) clearSegmentMemos();
}
void EvalContext::Impl::clearSegmentMemos() {
    busiestMemo.clear();
    for (RunningSum& r : runningSums)
        r.valid = false, r.leaves.clear();
    weightMaxMemo.clear();
    busiestBytes = 0;
}

// The busiest link (bytes at NoC bandwidth) of the summed weight links of the first
// i + 1 of `leaves`, for every i.
const std::vector<double>&
EvalContext::Impl::weightMaxOf(const std::vector<std::pair<Cycles, const NodeWork*>>& leaves) {
    std::string& key = busiestKey;
    key.clear();
    for (const auto& [start, lw] : leaves) {
        const LeafTraffic* t = lw->leaf.traffic;
        key.append(reinterpret_cast<const char*>(&t), sizeof t);
    }
    if (auto it = weightMaxMemo.find(key); it != weightMaxMemo.end()) return it->second;
    std::vector<double> maxima;
    maxima.reserve(leaves.size());
    double linkMax = 0;
    for (const auto& [start, lw] : leaves) {
        for (const auto& [link, b] : lw->leaf.traffic->weightLinks)
            linkMax = std::max(linkMax, weightSums.add(link, b) * mesh.linkSlowness(link));
        maxima.push_back(linkMax);
    }
    weightSums.drain([](int, double) {});
    chargeSegmentMemos(key.size() + 8 * maxima.size() + 96);
    return weightMaxMemo.emplace(key, std::move(maxima)).first->second;
}

namespace {
// The (link, bytes) pairs a memo entry holds, for the memo's budget (a base's per-tile
// egress a pair per sending tile).
size_t linksHeld(const LeafTraffic& t) {
    return t.actLinks.size() + t.weightLinks.size() + t.weightLoadLinks.size();
}
size_t linksHeld(const LeafTrafficBase& b) {
    return linksHeld(b.traffic) + b.egress.size();
}
// A memo entry as a copy of what was built: every vector in it, at any depth, at its size
// (built by appending, each held up to twice that).
template <class T> T fitted(const T& built) {
    return T(built);
}
} // namespace

// The entry of `key` in the old generation moved to the current one (the same node, so
// at the same address), or cur.end().
template <class Map>
typename Map::iterator EvalContext::Impl::promote(Map& cur, Map& old, const std::string& key) {
    if (old.empty()) return cur.end();
    auto node = old.extract(key);
    if (node.empty()) return cur.end();
    storedLinks += linksHeld(node.mapped());
    return cur.insert(std::move(node)).position;
}
// Bound memory on long runs: about 16 bytes per stored (link, bytes) pair, and each
// generation turns over at memoPairs pairs (constructor), so both keep the memo near
// 64 MiB per context up to a 16x16 mesh and near 256 MiB on the largest. Entries of the
// dropped generation may still be named by the segment memos and the last-lookup cache:
// those start afresh.
void EvalContext::Impl::turnOver() {
    if (storedLinks <= memoPairs) return;
    oldTraffic = std::move(traffic);
    oldPeriods = std::move(periods);
    oldBases = std::move(bases);
    traffic.clear();
    periods.clear();
    bases.clear();
    storedLinks = 0;
    lastTraffic.assign(lastTraffic.size(), nullptr);
    clearSegmentMemos();
}

// The leaf's traffic per segment invocation (transfers.h), memoised by everything it
// depends on: the leaf's placement and batch, each NoC producer's, and the segment batch.
const LeafTraffic& EvalContext::Impl::trafficOf(const LeafPlacement& leaf,
                                                const std::vector<const LeafPlacement*>& prods,
                                                bool writesDram, std::uint32_t paceInputs,
                                                int segBatch) {
    ++stats.routeCalls;
    std::string& key = keyScratch;
    key.clear();
    auto put = [&](int v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
    put(layerClass[size_t(leaf.layer)]), put(leaf.batch), put(leaf.tileBegin), put(leaf.tileCount);
    const size_t flagsAt = key.size(); // writesDram and paceInputs, which a base leaves out
    put(writesDram), put(int(paceInputs));
    // Blocked mappings depend on the objective and on a streaming chain (mapper.h).
    auto putBlocks = [&](const LeafMapping* m) {
        if (!m || !m->blocked()) return;
        put(-m->bk), put(m->bh), put(m->bw), put(m->pk), put(m->pb), put(m->ph), put(m->pw);
    };
    // So does a named alternative partition (its factors, after a marker no other field
    // takes).
    auto putAlt = [&](const LeafPlacement& p) {
        if (!p.named) return;
        put(std::numeric_limits<int>::min());
        const LeafMapping& m = *p.mapping;
        put(m.pk), put(m.pb), put(m.ph), put(m.pw), put(m.pc);
    };
    putBlocks(leaf.mapping), putAlt(leaf);
    if (mesh.dramRuns().active()) put(totalBatch); // the DRAM tensors' shapes
    for (const LeafPlacement* p : prods) {
        if (!p)
            put(-1);
        else
            put(p->tileBegin), put(p->tileCount), put(p->batch), putBlocks(p->mapping), putAlt(*p);
    }
    const size_t placementKey = key.size();
    put(segBatch);
    if (lastKey.size() <= size_t(leaf.layer)) {
        lastKey.resize(net.layers.size());
        lastTraffic.assign(net.layers.size(), nullptr);
    }
    const LeafTraffic*& last = lastTraffic[size_t(leaf.layer)];
    if (last && lastKey[size_t(leaf.layer)] == key) {
        ++stats.routeHits;
        return *last;
    }
    lastKey[size_t(leaf.layer)] = key;
    auto it = traffic.find(key);
    if (it == traffic.end()) it = promote(traffic, oldTraffic, key);
    if (it != traffic.end()) {
        ++stats.routeHits;
        last = &it->second;
        return it->second;
    }
    // Another segment batch of the same placement: scale its period (cheap) rather
    // than cost the geometry again.
    const LeafTraffic& period =
        periodTraffic(leaf, prods, writesDram, paceInputs, key.substr(0, placementKey), flagsAt);
    const LeafTraffic& t =
        traffic
            .emplace(key,
                     scaleTraffic(mesh, period, std::max(1, segBatch / std::max(1, leaf.batch))))
            .first->second;
    storedLinks += linksHeld(t);
    last = &t;
    return t;
}

const LeafTraffic& EvalContext::Impl::periodTraffic(const LeafPlacement& leaf,
                                                    const std::vector<const LeafPlacement*>& prods,
                                                    bool writesDram, std::uint32_t paceInputs,
                                                    const std::string& pkey, size_t flagsAt) {
    if (writesDram && !storesComeLast(leaf, prods)) {
        auto pit = periods.find(pkey);
        if (pit == periods.end()) pit = promote(periods, oldPeriods, pkey);
        if (pit != periods.end()) {
            ++stats.routeHits;
            return pit->second;
        }
        pit = periods
                  .emplace(pkey, fitted(leafTrafficPeriod(geo, mesh, leaf, prods, writesDram,
                                                          paceInputs, totalBatch)))
                  .first;
        storedLinks += linksHeld(pit->second);
        countWork(pit->second);
        return pit->second;
    }
    std::string bkey = pkey;
    bkey.erase(flagsAt, 2 * sizeof(int)); // writesDram, paceInputs
    auto bit = bases.find(bkey);
    if (bit == bases.end()) bit = promote(bases, oldBases, bkey);
    if (bit == bases.end()) {
        bit = bases
                  .emplace(bkey,
                           fitted(leafTrafficBase(geo, mesh, leaf, prods, paceInputs, totalBatch)))
                  .first;
        storedLinks += linksHeld(bit->second);
        countWork(bit->second.traffic);
    } else {
        ++stats.routeHits;
    }
    finishedPeriod =
        finishPeriod(geo, mesh, leaf, prods, bit->second, writesDram, paceInputs, totalBatch);
    return finishedPeriod;
}

EvalContext::EvalContext(const Network& net, const Hardware& hw)
    : m_impl(std::make_unique<Impl>(net, hw)) {}
EvalContext::~EvalContext() = default;
const Network& EvalContext::network() const {
    return m_impl->net;
}
const Hardware& EvalContext::hardware() const {
    return m_impl->hw;
}
const std::vector<LeafMapping>& EvalContext::alternatives(int layer, int tiles, int batch) {
    return m_impl->mapper.alternatives(layer, tiles, batch);
}
const LeafMapping* EvalContext::namedAlternative(int layer, int tiles, int batch,
                                                 const PartitionFactors& p) {
    return m_impl->mapper.namedAlternative(layer, tiles, batch, p);
}
const EvalStats& EvalContext::stats() const {
    m_impl->stats.mapperCalls = m_impl->mapper.calls();
    m_impl->stats.mapperHits = m_impl->mapper.hits();
    return m_impl->stats;
}

} // namespace tilescope
