// The generator's input emitters: the LOADs from DRAM and the SENDs over the NoC that fill
// the input regions of an invocation's active tiles before their computes read them.
#include "codegen/generator.h"

#include <algorithm>

namespace tilescope {

// One input region per active tile, need[a] bytes on act[a]'s tile.
Result<std::vector<Region>> Generator::allocateInputs(const Step& cur,
                                                      const std::vector<std::uint64_t>& need,
                                                      const std::string& what) {
    const auto& act = cur.act;
    std::vector<Region> regs(act.size());
    for (size_t a = 0; a < act.size(); ++a) {
        auto r = allocate(act[a].tile, need[a], false, what);
        if (!r) return r.error();
        regs[a] = *r;
    }
    return regs;
}

// Input k of the invocation: its window on each active tile (in the IR), then the
// instructions that deliver it, from DRAM or over the NoC as the schedule decided.
std::optional<Error> Generator::emitInput(Step& cur, size_t k) {
    const Invocation& v = cur.v;
    const LeafLayout& leaf = cur.leaf;
    const auto& act = cur.act;
    const LayerInput& in = cur.ly.inputs[k];
    std::vector<Box> win(act.size());
    for (size_t a = 0; a < act.size(); ++a)
        win[a] = m_geometry.tileWindow(v.layer, k, cur.m, act[a].slot, v.block, act[a].box);
    const std::string from =
        in.producer >= 0 ? m_net.layers[size_t(in.producer)].name : "input:" + in.networkInput;
    for (size_t a = 0; a < act.size(); ++a) {
        IrInput ii;
        ii.index = int(k);
        ii.from = from;
        ii.viaDram = leaf.inputViaDram[k] && !in.resident;
        ii.range = win[a];
        if (m_opt.withIr) m_workloads[size_t(act[a].workload)].inputs.push_back(ii);
    }
    if (in.resident) {
        readKeptInput(cur, k, win);
        return std::nullopt;
    }
    if (leaf.inputViaDram[k]) return emitDramInputs(cur, k, win, from);
    return emitNocInputs(cur, k, win, from);
}

// Inputs kept on chip (docs/cost-model.md §6, "Kept on chip"): each tile's windows of
// every invocation, as TransferGeometry::residentBytes counts them, in one region per
// (layer, tile) placed before anything else and held for the whole run. They arrive with
// the previous run, so nothing loads them.
std::optional<Error> Generator::reserveKeptInputs() {
    for (const LeafLayout& leaf : m_schedule.leaves) {
        const Layer& ly = m_net.layers[size_t(leaf.layer)];
        if (std::none_of(ly.inputs.begin(), ly.inputs.end(),
                         [](const LayerInput& in) { return in.resident; }))
            continue;
        for (int t = 0; t < leaf.tileCount; ++t) {
            const std::uint64_t bytes =
                m_geometry.residentBytes(leaf.layer, leaf.mapping, t, leaf.batch, m_totalBatch);
            if (bytes == 0) continue;
            auto r = allocate(leaf.tiles[size_t(t)], bytes, false, "kept on chip for " + ly.name);
            if (!r) return r.error();
            m_kept[{leaf.layer, leaf.tiles[size_t(t)]}] = *r;
        }
    }
    return std::nullopt;
}

// Weights kept on chip (the same section): each tile's slice, as
// TransferGeometry::keptWeightBytes counts it, in one region per (layer, tile) placed before
// anything else and held for the whole run. They arrive with the previous run, so nothing
// loads them; every compute of the layer on that tile reads them in place.
std::optional<Error> Generator::reserveKeptWeights() {
    for (const LeafLayout& leaf : m_schedule.leaves) {
        const Layer& ly = m_net.layers[size_t(leaf.layer)];
        if (!ly.weightsResident || ly.weightBytes <= 0) continue;
        WeightState& ws = m_weightState[size_t(leaf.layer)];
        ws.kept = true;
        for (int t = 0; t < leaf.tileCount; ++t) {
            const std::uint64_t bytes =
                m_geometry.keptWeightBytes(leaf.layer, leaf.mapping, t, leaf.batch);
            if (bytes == 0) continue;
            auto r = allocate(leaf.tiles[size_t(t)], bytes, true, "weights kept for " + ly.name);
            if (!r) return r.error();
            ws.region[leaf.tiles[size_t(t)]] = *r;
        }
    }
    return std::nullopt;
}

// The compute of each active tile reads its window of kept input k in place, where
// TransferGeometry::residentOffset places it in the (layer, tile) region.
void Generator::readKeptInput(Step& cur, size_t k, const std::vector<Box>& win) {
    cur.kept.resize(cur.act.size());
    for (size_t a = 0; a < cur.act.size(); ++a) {
        const auto it = m_kept.find({cur.v.layer, cur.act[a].tile});
        if (it == m_kept.end()) continue;
        const std::uint64_t from =
            m_geometry.residentOffset(cur.v.layer, cur.m, cur.act[a].slot,
                                      std::max(1, cur.leaf.batch), m_totalBatch, cur.s0, k);
        slotRefs(cur.kept[a], it->second, from, bytesOf(win[a].volume()), false);
    }
}

// A later key block of the flash order reads its query block's Q where the first one
// loaded it (docs/isa.md).
void Generator::readKeptQuery(Step& cur, size_t k) {
    for (size_t a = 0; a < cur.act.size(); ++a) {
        const auto it = m_keptQuery.find({cur.v.layer, cur.act[a].tile});
        if (it == m_keptQuery.end()) continue;
        cur.inRegions[a].push_back(it->second.region);
        cur.writers[a][k] = it->second.writers;
        if (m_opt.withIr) m_workloads[size_t(cur.act[a].workload)].inputs.back().viaDram = false;
    }
}

// From DRAM: LOADs, each multicast to every active tile that needs its cell.
std::optional<Error> Generator::emitDramInputs(Step& cur, size_t k, const std::vector<Box>& win,
                                               const std::string& from) {
    const Invocation& v = cur.v;
    const Layer& ly = cur.ly;
    const int s0 = cur.s0, s1 = cur.s1;
    const std::int32_t layerIdx = cur.layerIdx;
    const auto& act = cur.act;
    auto& writers = cur.writers;
    auto& inRegions = cur.inRegions;
    if (!cur.m.readsInput(k, v.block)) {
        readKeptQuery(cur, k);
        return std::nullopt;
    }
    const LayerInput& in = ly.inputs[k];
    const InputGeom& g = m_geometry.input(v.layer, k);
    // Cut the input into cells along every window edge; each cell is read from
    // DRAM once and multicast to every tile whose window holds it. Parts no
    // window needs (stride > kernel) travel with their neighbour, so the whole
    // tensor is read exactly once, as the evaluator counts it.
    const Box ext = dramExtent(g, s0, s1, win, cur.m.blocked());
    const std::vector<DramCell> cells = dramCells(ext, win);
    std::vector<std::uint64_t> need(act.size(), 0);
    for (const auto& c : cells)
        for (size_t a : c.to)
            need[a] += bytesOf(c.box.volume());
    auto allocated = allocateInputs(cur, need, "input " + from + " of " + ly.name);
    if (!allocated) return allocated.error();
    std::vector<Region>& regs = *allocated;
    std::vector<std::uint64_t> fill(act.size(), 0);
    std::vector<std::vector<std::uint32_t>> regWriters(act.size());
    for (const auto& c : cells) {
        const std::uint64_t bytes = bytesOf(c.box.volume());
        size_t leader = c.to.front();
        for (size_t a : c.to)
            if (m_loadBytes[size_t(act[a].tile)] < m_loadBytes[size_t(act[leader].tile)])
                leader = a;
        Instruction ins;
        ins.op = Op::Load;
        ins.tile = act[leader].tile;
        ins.layer = layerIdx;
        ins.bytes = bytes;
        ins.src = kDram;
        ins.dst = act[leader].tile;
        for (size_t a : c.to)
            if (a != leader) ins.mcast.push_back(act[a].tile);
        ins.lo = c.box.lo;
        ins.hi = c.box.hi;
        describeDram(ins, inputLayout(v.layer, k), {m_totalBatch, g.C, g.H, g.W});
        for (size_t a : c.to) {
            slotRefs(ins.buffers, regs[a], fill[a], bytes, true);
            fill[a] += bytes;
        }
        const int budget = m_geometry.stagesOf(bytes);
        const std::uint32_t id = emit(ins, splitBox(c.box, kActOrder, budget), kActOrder, budget);
        m_loadBytes[size_t(ins.tile)] += bytes;
        // Read after write through DRAM: the producer's stores of this data.
        if (in.producer >= 0)
            for (const auto& st : m_stores[size_t(in.producer)]) {
                bool hit;
                if (g.sameAsProducer)
                    hit = st.box.intersects(c.box);
                else
                    hit = st.box.lo[0] < c.box.hi[0] && c.box.lo[0] < st.box.hi[0];
                if (hit) fullDep(st.id, id);
            }
        for (size_t a : c.to) {
            regWriters[a].push_back(id);
            writers[a][k].push_back({id, true});
        }
    }
    for (size_t a = 0; a < act.size(); ++a) {
        if (regs[a].bytes == 0) continue;
        guard(regs[a], regWriters[a]);
        addRegion(act[a].workload, regs[a], "ifmap" + std::to_string(k), regWriters[a].front());
        inRegions[a].push_back(regs[a]);
        if (cur.m.keepsQuery && k == 0) {
            // The head's last key block before has freed it (no key block is empty:
            // Mapper::chainMapping); should one not have, it is freed here.
            KeptQuery& kq = m_keptQuery[{v.layer, act[a].tile}];
            if (kq.region.bytes > 0) release(kq.region);
            kq = {regs[a], writers[a][k]};
        }
        if (!m_opt.withIr) continue;
        auto& ii = m_workloads[size_t(act[a].workload)].inputs.back();
        ii.sources = {kDram};
        ii.bytes = regs[a].bytes;
    }
    return std::nullopt;
}

// Over the NoC from the producer's tiles: SENDs straight into the consumers' input regions,
// and the slices a consumer reads in place on its own tile.
std::optional<Error> Generator::emitNocInputs(Step& cur, size_t k, const std::vector<Box>& win,
                                              const std::string& from) {
    const Invocation& v = cur.v;
    const Layer& ly = cur.ly;
    const auto& act = cur.act;
    auto& writers = cur.writers;
    auto& local = cur.local;
    auto& inRegions = cur.inRegions;
    if (!cur.m.readsInput(k, v.block)) {
        readKeptQuery(cur, k);
        return std::nullopt;
    }
    const LayerInput& in = ly.inputs[k];
    const InputGeom& g = m_geometry.input(v.layer, k);
    std::vector<NocGroup> groups;
    std::vector<std::uint64_t> need(act.size(), 0);
    std::vector<std::vector<Box>> wants(act.size());
    std::vector<int> actTiles;
    for (size_t a = 0; a < act.size(); ++a) {
        wants[a] = g.sameAsProducer ? std::vector<Box>{win[a]}
                                    : m_geometry.producerWants(v.layer, k, act[a].box);
        actTiles.push_back(act[a].tile);
    }
    for (int pi : overlapping(in.producer, v.first, v.last, v.block, across(cur.leaf, k))) {
        InvocationOutput& producer = m_outputs[size_t(pi)];
        if (!producer.emitted)
            return Error{"internal: " + ly.name + " is scheduled before its producer " + from};
        cur.usedProducers.insert(pi);
        std::vector<SliceRef> refs;
        for (const OutputSlice& ps : producer.slices)
            refs.push_back({ps.tile, ps.box});
        std::vector<NocPiece> pieces;
        std::vector<std::vector<size_t>> localSlices;
        nocPieces(refs, actTiles, wants, pieces, localSlices);
        for (auto& pc : pieces) {
            for (size_t a : pc.to)
                need[a] += bytesOf(pc.box.volume());
            groups.push_back({pi, pc.slice, pc.box, std::move(pc.to)});
        }
        for (size_t a = 0; a < act.size(); ++a)
            for (size_t sl : localSlices[a])
                local[a].push_back({pi, sl, k});
    }
    auto allocated = allocateInputs(cur, need, "input " + from + " of " + ly.name);
    if (!allocated) return allocated.error();
    std::vector<Region>& regs = *allocated;
    std::vector<std::uint64_t> fill(act.size(), 0);
    std::vector<std::vector<std::uint32_t>> regWriters(act.size());
    // The tiles each consumer's input comes from, for the IR only (sorted and made unique
    // below; an all-to-all exchange on a 64x64 mesh gives every consumer thousands).
    std::vector<std::vector<std::int32_t>> sources(m_opt.withIr ? act.size() : 0);
    for (const auto& gr : groups) {
        OutputSlice& ps = m_outputs[size_t(gr.pinv)].slices[gr.slice];
        const std::uint64_t bytes = bytesOf(gr.x.volume());
        Instruction send = sendOf(ps.tile, act[gr.to.front()].tile, in.producer, bytes, gr.x);
        for (size_t q = 1; q < gr.to.size(); ++q)
            send.mcast.push_back(act[gr.to[q]].tile);
        regionRefs(send.buffers, ps.region, false);
        // The SEND writes straight into each consumer's input region (the
        // destination's buffer is in its buffer references); the consumer's compute
        // depends on it, stage by stage (docs/isa.md: "a SEND is matched by its
        // consumer's dependency"). No receiving instruction is needed.
        for (size_t a : gr.to) {
            slotRefs(send.buffers, regs[a], fill[a], bytes, true);
            fill[a] += bytes;
        }
        const int budget = m_geometry.stagesOf(bytes);
        const std::vector<Box> st = splitBox(gr.x, ps.order, budget);
        const std::uint32_t sid = emit(send, st, ps.order, budget);
        addDep(ps.computeId, sid, lagStage(ps.stages, st));
        ps.region.readers.push_back(sid);
        for (auto t : send.destinations())
            addDestination(ps.region.workload, t);
        for (size_t a : gr.to) {
            regWriters[a].push_back(sid);
            writers[a][k].push_back({sid, g.sameAsProducer});
            if (m_opt.withIr) sources[a].push_back(ps.tile);
        }
    }
    for (size_t a = 0; a < act.size(); ++a) {
        if (m_opt.withIr) {
            auto& ii = m_workloads[size_t(act[a].workload)].inputs.back();
            std::vector<std::int32_t>& from = sources[a];
            for (const auto& lr : local[a])
                if (lr.input == k) from.push_back(act[a].tile);
            std::sort(from.begin(), from.end());
            from.erase(std::unique(from.begin(), from.end()), from.end());
            ii.sources = std::move(from);
            ii.bytes = regs[a].bytes;
        }
        if (regs[a].bytes == 0) continue;
        guard(regs[a], regWriters[a]);
        addRegion(act[a].workload, regs[a], "ifmap" + std::to_string(k), regWriters[a].front());
        inRegions[a].push_back(regs[a]);
    }
    return std::nullopt;
}

} // namespace tilescope
