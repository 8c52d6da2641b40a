// The generator's compute side of an invocation: each active tile's COMPUTE (after the
// PROGRAM that writes a compute-in-memory tile's crossbars), its dependencies on the data
// it reads, its STORE, and the buffer regions released after it.
#include "codegen/generator.h"
#include "mapping/cim.h"
#include "mapping/mapper.h"

#include <algorithm>
#include <cmath>

namespace tilescope {

// Compute, then store.
std::optional<Error> Generator::emitComputeAndStore(Step& cur) {
    std::vector<OutputSlice> slices;
    for (size_t a = 0; a < cur.act.size(); ++a) {
        auto ps = emitCompute(cur, a);
        if (!ps) return ps.error();
        slices.push_back(std::move(*ps));
    }
    if (cur.m.splitsChannels()) {
        std::vector<OutputSlice> roots;
        if (auto e = reducePartialSums(cur, slices, roots)) return e;
        slices = std::move(roots);
    }
    m_weightState[size_t(cur.v.layer)].fresh = false;
    InvocationOutput& me = m_outputs[size_t(cur.vi)];
    me.emitted = true;
    me.slices = std::move(slices);
    return std::nullopt;
}

Result<OutputSlice> Generator::emitCompute(Step& cur, size_t a) {
    const Invocation& v = cur.v;
    const LeafLayout& leaf = cur.leaf;
    const Layer& ly = cur.ly;
    const LeafMapping& m = cur.m;
    const std::int32_t layerIdx = cur.layerIdx;
    const auto& act = cur.act;
    const long long maxVol = cur.maxVol;
    const bool hasWeights = cur.hasWeights, loadsWeights = cur.loadsWeights;
    auto& inRegions = cur.inRegions;
    WeightState& ws = m_weightState[size_t(v.layer)];
    const Box& ob = act[a].box;
    const StageOrder order = m_geometry.computeOrder(v.layer, ob, loadsWeights);
    // Its stages: its output box's bytes at the data width (partial sums or not), which its
    // STORE shares.
    const int budget = m_geometry.stagesOf(ob);
    std::vector<Box> st = splitBox(ob, order, budget);
    // Input-channel blocks add to partial sums the tile keeps from the first block of an
    // output box to the last, at the accumulator width (docs/cost-model.md §2b).
    PartialSums* psums = m.reduces() ? &m_partialSums[{v.layer, act[a].tile}] : nullptr;
    const bool firstBlock = !psums || v.block % m.bc == 0;
    // Input-channel parts: every member computes its partial sums; the root's region holds
    // its own and the other members' (reducePartialSums).
    const bool parts = m.splitsChannels();
    const std::uint64_t psumBytes = psumBytesOf(ob);
    Region out;
    if (firstBlock) {
        std::uint64_t bytes = psums || parts ? psumBytes : bytesOf(ob.volume());
        if (parts && TransferGeometry::holdsOutput(m, act[a].slot)) bytes *= std::uint64_t(m.pc);
        auto r =
            allocate(act[a].tile, bytes, false,
                     std::string(psums || parts ? "partial sums of " : "output of ") + ly.name);
        if (!r) return r.error();
        out = *r;
    } else {
        out = psums->region;
    }
    // Compute-in-memory: the crossbars are written (PROGRAM) before the compute, at the
    // first invocation of a segment invocation when they keep the weights, else every time.
    // An input-channel block writes its channels' share of the weights (the mapper's cut).
    const CimTileWork work =
        m.cim.used ? cimBoxWork(m.reduces() ? reductionCut(ly, m.bc) : ly, m_hw, ob.lo[1], ob.hi[1],
                                ob.hi[0] - ob.lo[0], ob.hi[2] - ob.lo[2], ob.hi[3] - ob.lo[3])
                   : CimTileWork{};
    PartialSums* stats = nullptr;
    if (m.statsPerTile > 0) {
        auto s = statistics(cur, a);
        if (!s) return s.error();
        stats = *s;
    }
    Instruction c;
    c.op = Op::Compute;
    c.tile = act[a].tile;
    c.layer = layerIdx;
    c.bytes = parts ? psumBytes : out.bytes;
    c.src = c.dst = act[a].tile;
    // Crossbar writes are the PROGRAM's; a blocked leaf's time is its blocks' (one a step);
    // a root's add of its members' partial sums is its own COMPUTE.
    const double busy = (m.cycles - m.cim.exposedWrite - m.reduceCycles) * m.blockShare;
    c.cycles = std::uint64_t(std::max(1.0, std::ceil(busy * double(ob.volume()) / double(maxVol))));
    c.lo = ob.lo;
    c.hi = ob.hi;
    for (const auto& ir : inRegions[a])
        regionRefs(c.buffers, ir, false);
    if (a < cur.kept.size())
        c.buffers.insert(c.buffers.end(), cur.kept[a].begin(), cur.kept[a].end());
    for (const auto& lr : cur.local[a]) {
        const Region& pr = m_outputs[size_t(lr.prodInv)].slices[lr.slice].region;
        regionRefs(c.buffers, pr, false);
    }
    if (hasWeights) {
        Region& wr = ws.region[act[a].tile];
        regionRefs(c.buffers, wr, false);
    }
    if (!firstBlock) regionRefs(c.buffers, out, false); // adds to the sums so far
    if (parts)
        slotRefs(c.buffers, out, 0, psumBytes, true);
    else
        regionRefs(c.buffers, out, true);
    if (stats && !m.firstKeyBlock(v.block)) regionRefs(c.buffers, stats->region, false);
    if (stats) regionRefs(c.buffers, stats->region, true);
    // Output-channel binding: every core runs its own PROGRAM and COMPUTE; core 0's COMPUTE
    // stands for the tile's (what the invocation's readers wait for), each of its stages
    // after the same stage of the other cores.
    const std::vector<std::uint32_t> others =
        work.cores.size() > 1 ? emitOtherCores(cur, a, work, c, st, order, budget)
                              : std::vector<std::uint32_t>{};
    if (!work.cores.empty()) {
        c.core = 0;
        const double share = double(work.cores[0].colBlocks) / double(work.blocks.colBlocks);
        c.bytes = out.bytes - std::uint64_t(std::llround(double(out.bytes) * (1 - share)));
    }
    const std::uint32_t programId = emitProgram(cur, a, work, c.core);
    const std::uint32_t cid = emit(c, st, order, budget);
    if (programId) fullDep(programId, cid);
    if (!firstBlock) fullDep(psums->lastCompute, cid);
    if (stats) statisticsWritten(cur, a, cid);
    IrWorkload& wl = irOf(act[a].workload);
    wl.cycles = c.cycles;
    wl.computeId = cid;
    guard(out, {cid});
    addRegion(act[a].workload, out, "ofmap", cid);
    if (hasWeights && !ws.kept && ws.region[act[a].tile].workload < 0)
        addRegion(act[a].workload, ws.region[act[a].tile], "weights", ws.load[act[a].tile]);
    // Dependencies on the data it reads, at the stage it first needs; the other cores read
    // the same data.
    addComputeDeps(cur, a, st, cid, wl);
    for (std::uint32_t oc : others) {
        for (const Dep& d : std::vector<Dep>(at(cid).deps))
            if (d.id != programId) addDep(d.id, oc, d.stage);
        addDep(oc, cid, 1);
    }
    for (auto& ir : inRegions[a]) {
        ir.readers.push_back(cid);
        if (!keepsQuery(cur, a, ir, cid)) release(ir);
    }
    OutputSlice ps;
    ps.tile = act[a].tile;
    ps.box = ob;
    ps.computeId = cid;
    ps.stages = st;
    ps.order = order;
    if (psums && !m.storesAfter(v.block)) {
        // Kept for the next block: released after the last one's STORE, not with this
        // invocation.
        psums->region = out;
        psums->lastCompute = cid;
        ps.region.tile = out.tile;
        return ps;
    }
    if (psums) m_partialSums.erase({v.layer, act[a].tile});
    ps.region = out;
    if (leaf.writesDram && !parts) emitStore(cur, a, st, order, cid, ps);
    return ps;
}

// Each row's running maximum and sum (docs/cost-model.md §2b, "Key blocks"), at the
// accumulator width: the first key block's COMPUTE writes them, every later one reads and
// updates them after the one before; freed once the last has.
Result<PartialSums*> Generator::statistics(const Step& cur, size_t a) {
    const Box& ob = cur.act[a].box;
    PartialSums& s = m_statistics[{cur.v.layer, cur.act[a].tile}];
    if (!cur.m.firstKeyBlock(cur.v.block)) return &s;
    const std::uint64_t rows =
        std::uint64_t(ob.hi[0] - ob.lo[0]) * (ob.hi[2] - ob.lo[2]) * (ob.hi[3] - ob.lo[3]);
    auto r = allocate(cur.act[a].tile, rows * 2 * std::uint64_t(psumBits(m_hw.dataBits)) / 8, false,
                      "statistics of " + cur.ly.name);
    if (!r) return r.error();
    s.region = *r;
    s.lastCompute = 0;
    return &s;
}

void Generator::statisticsWritten(const Step& cur, size_t a, std::uint32_t computeId) {
    const auto key = std::pair(cur.v.layer, cur.act[a].tile);
    PartialSums& s = m_statistics[key];
    if (!cur.m.firstKeyBlock(cur.v.block)) fullDep(s.lastCompute, computeId);
    guard(s.region, {computeId});
    s.lastCompute = computeId;
    if (!cur.m.lastKeyBlock(cur.v.block)) return;
    s.region.readers.push_back(computeId);
    release(s.region);
    m_statistics.erase(key);
}

// A kept Q region collects the computes of its head's key blocks of a query block as readers
// and is released with the last.
bool Generator::keepsQuery(const Step& cur, size_t a, const Region& ir, std::uint32_t computeId) {
    if (!cur.m.keepsQuery) return false;
    const auto key = std::pair(cur.v.layer, cur.act[a].tile);
    const auto it = m_keptQuery.find(key);
    if (it == m_keptQuery.end() || it->second.region.offset != ir.offset ||
        it->second.region.tile != ir.tile)
        return false;
    it->second.region.readers.push_back(computeId);
    if (cur.m.lastKeyBlock(cur.v.block)) {
        release(it->second.region);
        m_keptQuery.erase(it);
    }
    return true;
}

// The PROGRAM that writes act[a]'s crossbars, when this invocation writes them (0 when it
// does not): its bytes are the weights written (the tile's programmings x one crossbar's
// weights, counted on its own box as the mapper counts it), its cycles the write time the
// tile waits for. Static weights are written as their LOAD delivers them, at the first
// invocation of a segment invocation when the leaf keeps them, else every time; a MatMul's
// operand B every time, once it has arrived. A blocked leaf writes them per block, or, when
// its row / column blocks keep them (CimLeafMapping::keptAcrossBlocks), in its first block.
std::uint32_t Generator::emitProgram(const Step& cur, size_t a, const CimTileWork& work, int core) {
    const LeafMapping& m = cur.m;
    const bool operandB = cur.ly.kind == LayerKind::MatMul;
    if (!m.cim.used || !(cur.hasWeights || operandB) || (cur.leaf.cimPinned && !cur.loadsWeights) ||
        (m.cim.keptAcrossBlocks && cur.v.block > 0))
        return 0;
    const Box& ob = cur.act[a].box;
    const Count programmings =
        core >= 0 ? work.cores[size_t(core)].programmings : work.best.programmings;
    Instruction p;
    p.op = Op::Program;
    p.tile = cur.act[a].tile;
    p.core = core;
    p.layer = cur.layerIdx;
    p.bytes = std::uint64_t(std::llround(double(programmings) * cimCrossbarWeightBytes(m_hw)));
    p.src = p.dst = p.tile;
    p.cycles = std::uint64_t(
        std::ceil(core >= 0 ? work.cores[size_t(core)].exposedWrite : work.exposedWrite));
    if (operandB) {
        p.lo = ob.lo;
        p.hi = ob.hi;
        const int budget = m_geometry.stagesOf(ob);
        const std::uint32_t id = emit(p, splitBox(ob, kActOrder, budget), kActOrder, budget);
        for (const auto& wr : cur.writers[a][1])
            fullDep(wr.id, id);
        for (const auto& lr : cur.local[a])
            if (lr.input == 1)
                fullDep(m_outputs[size_t(lr.prodInv)].slices[lr.slice].computeId, id);
        return id;
    }
    WeightState& ws = m_weightState[size_t(cur.v.layer)];
    const Box wb = weightBoxOf(cur.v.layer, ob.lo[1], ob.hi[1], cur.weightChannels);
    p.lo = wb.lo;
    p.hi = wb.hi;
    regionRefs(p.buffers, ws.region[p.tile], false);
    // Staged as the weight LOAD of the same output channels (its weights' bytes).
    const int budget = m_geometry.stagesOf(
        bytesOf(weightElemsOf(cur.v.layer, ob.lo[1], ob.hi[1], cur.weightChannels)));
    const std::vector<Box> stages = splitBox(wb, kWeightOrder, budget);
    const std::uint32_t id = emit(p, stages, kWeightOrder, budget);
    // Crossbars are written as their weights arrive: stage j waits for the LOAD stages
    // that carry its output channels.
    const std::uint32_t lid = ws.load[p.tile];
    addDep(lid, id, lagStage(stageBoxesOf(lid), stages));
    ws.region[p.tile].readers.push_back(id);
    return id;
}

std::vector<std::uint32_t> Generator::emitOtherCores(const Step& cur, size_t a,
                                                     const CimTileWork& work, const Instruction& c,
                                                     const std::vector<Box>& st,
                                                     const StageOrder& order, int budget) {
    std::vector<std::uint32_t> ids;
    const double busiest = std::max(1.0, work.cores[0].computeCycles);
    for (size_t j = 1; j < work.cores.size(); ++j) {
        const CimCoreWork& cw = work.cores[j];
        const std::uint32_t pid = emitProgram(cur, a, work, int(j));
        Instruction cj = c;
        cj.core = int(j);
        cj.bytes = std::uint64_t(
            std::llround(double(c.bytes) * double(cw.colBlocks) / double(work.blocks.colBlocks)));
        cj.cycles =
            std::uint64_t(std::max(1.0, std::ceil(double(c.cycles) * cw.computeCycles / busiest)));
        const std::uint32_t id = emit(std::move(cj), st, order, budget);
        if (pid) fullDep(pid, id);
        ids.push_back(id);
    }
    return ids;
}

// Dependencies of act[a]'s compute cid on the data it reads, at the stage it first needs.
void Generator::addComputeDeps(Step& cur, size_t a, const std::vector<Box>& st, std::uint32_t cid,
                               IrWorkload& wl) {
    const Invocation& v = cur.v;
    const Layer& ly = cur.ly;
    const auto& act = cur.act;
    const bool hasWeights = cur.hasWeights, loadsWeights = cur.loadsWeights;
    WeightState& ws = m_weightState[size_t(v.layer)];
    const auto channels = weightChannelsOf(cur, a);
    auto weightBox = [&](int k0, int k1) { return weightBoxOf(v.layer, k0, k1, channels); };
    auto weightElems = [&](int k0, int k1) { return weightElemsOf(v.layer, k0, k1, channels); };
    const Box& ob = act[a].box;
    for (size_t k = 0; k < ly.inputs.size(); ++k) {
        std::vector<Box> req;
        for (const auto& sb : st)
            req.push_back(m_geometry.tileWindow(v.layer, k, cur.m, act[a].slot, v.block, sb));
        for (const auto& wr : cur.writers[a][k]) {
            if (wr.sameCoords)
                addDep(wr.id, cid, lagStage(stageBoxesOf(wr.id), req));
            else
                fullDep(wr.id, cid);
        }
    }
    for (const auto& lr : cur.local[a]) {
        OutputSlice& ps = m_outputs[size_t(lr.prodInv)].slices[lr.slice];
        if (m_geometry.input(v.layer, lr.input).sameAsProducer) {
            std::vector<Box> req;
            for (const auto& sb : st)
                req.push_back(window(v.layer, lr.input, sb));
            addDep(ps.computeId, cid, lagStage(ps.stages, req));
        } else {
            fullDep(ps.computeId, cid);
        }
        ps.region.readers.push_back(cid);
        addDestination(ps.region.workload, act[a].tile);
    }
    if (hasWeights) {
        const Box full = weightBox(ob.lo[1], ob.hi[1]);
        std::vector<Box> req;
        for (const auto& sb : st)
            req.push_back(weightBox(sb.lo[1], sb.hi[1]).intersect(full));
        if (!ws.kept) { // kept weights were there before the run
            const std::uint32_t lid = ws.load[act[a].tile];
            addDep(lid, cid, lagStage(stageBoxesOf(lid), req));
        }
        ws.region[act[a].tile].readers.push_back(cid);
        wl.weights = full;
        wl.weightBytes = bytesOf(weightElems(ob.lo[1], ob.hi[1]));
        wl.weightsLoaded = loadsWeights;
    }
}

// Each member after the first of a slot SENDs its partial sums into its part of the root's
// region, stage by stage as its compute writes them; the root's add (a vector COMPUTE of
// the mapper's reduceCycles, on the tile's share of the slowest slot's volume) reads the pc
// parts once each has arrived and leaves the slot's output in the region, which the root
// stores and its consumers read (partial sums leave at the data width).
std::optional<Error> Generator::reducePartialSums(Step& cur, std::vector<OutputSlice>& computed,
                                                  std::vector<OutputSlice>& slices) {
    const LeafMapping& m = cur.m;
    const auto& act = cur.act;
    std::map<int, size_t> bySlot;
    for (size_t a = 0; a < act.size(); ++a)
        bySlot[act[a].slot] = a;
    for (size_t a = 0; a < act.size(); ++a) {
        if (!TransferGeometry::holdsOutput(m, act[a].slot)) continue;
        OutputSlice& root = computed[a];
        const Box& ob = act[a].box;
        const std::uint64_t psumBytes = psumBytesOf(ob);
        const int budget = m_geometry.stagesOf(ob);
        const std::uint32_t lag = lagStage(root.stages, root.stages);
        std::vector<std::uint32_t> sends;
        for (int ic = 1; ic < m.pc; ++ic) {
            const auto it = bySlot.find(act[a].slot + ic);
            if (it == bySlot.end())
                return Error{"internal: " + cur.ly.name + ": a split slot's member has no work"};
            OutputSlice& mem = computed[it->second];
            Instruction send = sendOf(mem.tile, root.tile, cur.layerIdx, psumBytes, ob);
            regionRefs(send.buffers, mem.region, false);
            slotRefs(send.buffers, root.region, std::uint64_t(ic) * psumBytes, psumBytes, true);
            const std::uint32_t sid = emit(send, mem.stages, mem.order, budget);
            addDep(mem.computeId, sid, lag);
            mem.region.readers.push_back(sid);
            release(mem.region);
            addDestination(act[it->second].workload, root.tile);
            sends.push_back(sid);
        }
        guard(root.region, sends);
        Instruction add;
        add.op = Op::Compute;
        add.tile = root.tile;
        add.layer = cur.layerIdx;
        add.bytes = bytesOf(ob.volume());
        add.src = add.dst = root.tile;
        add.cycles = std::uint64_t(
            std::max(1.0, std::ceil(m.reduceCycles * double(ob.volume()) / double(cur.maxVol))));
        add.lo = ob.lo;
        add.hi = ob.hi;
        regionRefs(add.buffers, root.region, false);
        regionRefs(add.buffers, root.region, true);
        const std::uint32_t aid = emit(add, root.stages, root.order, budget);
        addDep(root.computeId, aid, lag);
        for (std::uint32_t sid : sends)
            addDep(sid, aid, lag);
        root.region.readers.push_back(aid);
        IrWorkload& wl = irOf(act[a].workload);
        wl.cycles += add.cycles;
        wl.computeId = aid;
        root.computeId = aid;
        if (cur.leaf.writesDram) emitStore(cur, a, root.stages, root.order, aid, root);
        slices.push_back(std::move(root));
    }
    return std::nullopt;
}

std::optional<std::pair<int, int>> Generator::weightChannelsOf(const Step& cur, size_t a) const {
    if (cur.m.splitsChannels())
        return m_geometry.memberChannels(cur.v.layer, cur.m, cur.act[a].slot);
    return cur.weightChannels;
}

void Generator::emitStore(const Step& cur, size_t a, const std::vector<Box>& st,
                          const StageOrder& order, std::uint32_t cid, OutputSlice& ps) {
    const auto& act = cur.act;
    const Box& ob = act[a].box;
    const Region& out = ps.region;
    Instruction s;
    s.op = Op::Store;
    s.tile = act[a].tile;
    s.layer = cur.layerIdx;
    s.bytes = bytesOf(ob.volume()); // partial sums leave at the data width
    s.src = act[a].tile;
    s.dst = kDram;
    s.lo = ob.lo;
    s.hi = ob.hi;
    const Layer& ly = m_net.layers[size_t(cur.v.layer)];
    describeDram(s, outputLayout(cur.v.layer), {m_totalBatch, ly.outC, ly.outH, ly.outW});
    regionRefs(s.buffers, out, false);
    const std::uint32_t sid = emit(s, st, order, m_geometry.stagesOf(ob));
    addDep(cid, sid, 1);
    ps.region.readers.push_back(sid);
    m_stores[size_t(cur.v.layer)].push_back({ob, sid});
    addDestination(act[a].workload, kDram);
}

// Regions whose last reader the invocation was: its own outputs nobody reads over the NoC,
// its producers' outputs, and its weights after the segment invocation's last use.
void Generator::releaseAfter(const Step& cur) {
    InvocationOutput& me = m_outputs[size_t(cur.vi)];
    if (me.pending == 0)
        for (auto& ps : me.slices) {
            if (ps.region.readers.empty()) ps.region.readers.push_back(ps.computeId);
            release(ps.region);
        }
    for (int pi : cur.usedProducers)
        if (--m_outputs[size_t(pi)].pending == 0)
            for (auto& ps : m_outputs[size_t(pi)].slices)
                release(ps.region);
    WeightState& ws = m_weightState[size_t(cur.v.layer)];
    if (cur.hasWeights && !ws.kept && --ws.remaining == 0)
        for (auto& [t, r] : ws.region)
            release(r);
}

} // namespace tilescope
