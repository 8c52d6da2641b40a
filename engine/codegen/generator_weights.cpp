// The generator's weight loads: one multicast LOAD per output-channel slice of a leaf, and
// the just-in-time prefetch of a segment's weights on the evaluator's clock.
#include "codegen/generator.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace tilescope {

// Whether a tile of leaf `li` has work of another segment invocation left between
// invocation vi and `until` (segments overlap: docs/cost-model.md §5): its weights
// must not take that work's buffer room.
bool Generator::tilesBusy(int li, int vi, double until, int segInv) const {
    const LeafLayout& o = m_schedule.leaves[size_t(li)];
    for (int t : o.tiles) {
        const auto& list = m_invocationsOfTile[size_t(t)];
        for (auto it = std::upper_bound(list.begin(), list.end(), vi); it != list.end(); ++it) {
            const Invocation& u = m_invocations[size_t(*it)];
            if (u.start >= until) break;
            if (m_schedule.leaves[size_t(u.leaf)].segment != o.segment || u.segInv != segInv)
                return true;
        }
    }
    return false;
}

// Loads a leaf's weights for one segment invocation: one DRAM read per output-channel
// slice, multicast to every tile of the group that holds that slice. Weights that stream
// with output-channel blocks load per block (`block`), for that block alone.
std::optional<Error> Generator::loadWeights(int leafIdx, int segInv, int block) {
    const LeafLayout& leaf = m_schedule.leaves[size_t(leafIdx)];
    const Layer& ly = m_net.layers[size_t(leaf.layer)];
    WeightState& ws = m_weightState[size_t(leaf.layer)];
    ws.segInv = segInv;
    ws.fresh = true;
    ws.remaining = block >= 0 ? 1
                              : std::max(1, m_schedule.segBatch / std::max(1, leaf.batch)) *
                                    leaf.mapping.blocks();
    ws.region.clear();
    ws.load.clear();
    // (k-range, member of an input-channel part) -> tiles
    std::map<std::tuple<int, int, int>, std::vector<int>> byK;
    for (int t = 0; t < leaf.tileCount; ++t) {
        const Box b = block >= 0
                          ? m_geometry.blockBox(leaf.layer, leaf.mapping, t, block, 0, leaf.batch)
                          : tileBox(leaf, t, 0, leaf.batch);
        if (!b.empty())
            byK[{b.lo[1], b.hi[1], TransferGeometry::memberOf(leaf.mapping, t)}].push_back(
                leaf.tiles[size_t(t)]);
    }
    for (const auto& [key, members] : byK) {
        const std::pair<int, int> kr{std::get<0>(key), std::get<1>(key)};
        // An input-channel block brings its own channels' weights, a member its own.
        std::optional<std::pair<int, int>> channels;
        if (block >= 0 && leaf.mapping.reduces())
            channels = m_geometry.blockChannels(leaf.layer, leaf.mapping, block);
        else if (leaf.mapping.splitsChannels())
            channels = m_geometry.memberChannels(leaf.layer, leaf.mapping, std::get<2>(key));
        const std::uint64_t bytes =
            bytesOf(weightElemsOf(leaf.layer, kr.first, kr.second, channels));
        std::vector<Region> regs;
        for (int tile : members) {
            auto r = allocate(tile, bytes, true, "weights of " + ly.name);
            if (!r) return r.error();
            regs.push_back(*r);
        }
        // The least-loaded destination issues the read (spreads DRAM requests).
        int leader = members.front();
        for (int tile : members)
            if (m_loadBytes[size_t(tile)] < m_loadBytes[size_t(leader)]) leader = tile;
        Instruction ins;
        ins.op = Op::Load;
        ins.tile = leader;
        ins.layer = leaf.layer;
        ins.bytes = bytes;
        ins.src = kDram;
        ins.dst = leader;
        for (int tile : members)
            if (tile != leader) ins.mcast.push_back(tile);
        const Box wb = weightBoxOf(leaf.layer, kr.first, kr.second, channels);
        ins.lo = wb.lo;
        ins.hi = wb.hi;
        describeDram(ins, kLayoutCount, {});
        for (const auto& r : regs)
            regionRefs(ins.buffers, r, true);
        const int budget = m_geometry.stagesOf(bytes);
        const std::uint32_t id =
            emit(ins, splitBox(wb, kWeightOrder, budget), kWeightOrder, budget);
        m_loadBytes[size_t(leader)] += bytes;
        for (size_t q = 0; q < members.size(); ++q) {
            guard(regs[q], {id});
            ws.region[members[q]] = regs[q];
            ws.load[members[q]] = id;
        }
    }
    return std::nullopt;
}

// Weight prefetch, just in time on the evaluator's clock. The evaluator budgets every
// weight of a segment as resident and overlaps the segment's DRAM traffic with its
// compute. Loading them all at the segment's start would queue them on the tiles'
// in-order LOAD engines in front of the receiving LOADs of the next leaves, which
// then wait for the whole segment's weights. So the pending leaves' weights (in the
// order of the leaves' first starts) are issued at the last invocation before some of
// them would arrive late: with DRAM busy until m_dramClock, they wait for the next
// invocation only if every pending leaf j (first start t_j) would still have its
// bytes by t_j, behind those of the pending leaves before it and the activation
// traffic of the invocations before t_j (the DRAM serves that first: it serves in need
// order, docs/isa.md). Once late, they are issued no faster than the DRAM moves them.
// Only while every tile keeps room for twice the largest activation working set of the
// segment (a remote input coexists with its producer's output), and not while a tile
// of the leaf has another segment's work before the leaf starts (segments overlap); the
// rest load at their leaf's first invocation.
std::optional<Error> Generator::prefetchWeights(const Step& cur) {
    const int vi = cur.vi;
    const Invocation& v = cur.v;
    const LeafLayout& leaf = cur.leaf;
    if (m_segmentStarted[size_t(leaf.segment)] != v.segInv) {
        m_segmentStarted[size_t(leaf.segment)] = v.segInv;
        m_pendingWeights.clear();
        for (int j = vi; j < int(m_invocations.size()); ++j) {
            const Invocation& u = m_invocations[size_t(j)];
            const LeafLayout& o = m_schedule.leaves[size_t(u.leaf)];
            if (o.segment != leaf.segment || u.segInv != v.segInv) continue;
            if (m_net.layers[size_t(o.layer)].weightBytes <= 0 || o.mapping.streamsWeights() ||
                m_weightState[size_t(o.layer)].kept ||
                m_weightState[size_t(o.layer)].segInv == v.segInv)
                continue;
            if (std::find_if(m_pendingWeights.begin(), m_pendingWeights.end(), [&](const auto& p) {
                    return p.first == u.leaf;
                }) == m_pendingWeights.end())
                m_pendingWeights.push_back({u.leaf, u.start});
        }
        m_reserve = 0;
        for (const LeafLayout& o : m_schedule.leaves)
            if (o.segment == leaf.segment)
                m_reserve = std::max(
                    m_reserve, 2 * (o.mapping.ifmapPerTile + o.mapping.operandBPerTile +
                                    o.mapping.ofmapPerTile +
                                    (o.mapping.streamsWeights() ? o.mapping.weightPerTile : 0.0)));
        m_dramClock = v.start;
    }
    const double tNext =
        vi + 1 < int(m_invocations.size()) ? m_invocations[size_t(vi) + 1].start : v.start;
    const double dramBw = std::max(1e-9, m_hw.dramBytesPerCycle);
    auto weightBytes = [&](int li) {
        const int layer = m_schedule.leaves[size_t(li)].layer;
        return m_weightState[size_t(layer)].segInv == v.segInv // already loaded on demand
                   ? 0.0
                   : layerWeightBytes(layer);
    };
    // Activation DRAM bytes of the invocations after this one that start before t: the
    // DRAM serves them before weights needed at t.
    auto demandBefore = [&](double t) {
        const auto at = std::lower_bound(m_invocations.begin() + vi, m_invocations.end(), t,
                                         [](const Invocation& u, double x) { return u.start < x; });
        return std::max(0.0, m_activationBytesBefore[size_t(at - m_invocations.begin())] -
                                 m_activationBytesBefore[size_t(vi) + 1]);
    };
    // Waiting for the next invocation is late if any pending leaf's weights, behind those
    // of the pending leaves before it and the demand traffic before its first start,
    // would then arrive after that start: the first such leaf's place in
    // `m_pendingWeights`, -1 if none.
    auto firstLate = [&] {
        double bytes = 0;
        for (size_t j = 0; j < m_pendingWeights.size(); ++j) {
            const auto& [lj, tj] = m_pendingWeights[j];
            bytes += weightBytes(lj);
            if (std::max(m_dramClock, tNext) + (bytes + demandBefore(tj)) / dramBw > tj)
                return int(j);
        }
        return -1;
    };
    bool issued = false;
    while (!m_pendingWeights.empty()) {
        const auto [li, tStart] = m_pendingWeights.front();
        const LeafLayout& o = m_schedule.leaves[size_t(li)];
        const double wbytes = weightBytes(li);
        if (wbytes <= 0) {
            m_pendingWeights.erase(m_pendingWeights.begin());
            continue;
        }
        const int lateAt = firstLate();
        if (lateAt < 0) break; // can wait
        // Some leaf is late: issue the weights in order, but no more than keep the DRAM
        // busy until the next invocation (the first of them even so when it is late
        // itself). Issued all at once they would queue on the tiles' in-order LOAD engines
        // in front of the demand loads, which then wait, with the tile's LOADs in flight
        // taken, until the DRAM reaches the last of them in need order.
        if ((lateAt > 0 || issued) && m_dramClock >= tNext) break;
        // The first late one too waits while the DRAM is already a whole leaf's weights
        // behind: issued one per invocation regardless, a DRAM that cannot keep up would
        // find every remaining leaf's weights queued long before it reaches them.
        if (m_dramClock >= tNext && m_dramClock - v.start > wbytes / dramBw) break;
        if (tilesBusy(li, vi, tStart, v.segInv)) break; // another segment comes first there
        m_pendingWeights.erase(m_pendingWeights.begin());
        bool room = true;
        for (int t : o.tiles)
            room =
                room && double(m_buffers[size_t(t)].free()) - o.mapping.weightPerTile >= m_reserve;
        if (!room) continue;
        if (auto e = loadWeights(li, v.segInv)) return *e;
        issued = true;
        m_dramClock = std::max(m_dramClock, v.start) + wbytes / dramBw;
    }
    return std::nullopt;
}

} // namespace tilescope
