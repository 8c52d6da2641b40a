// The program generator (codegen.h): the walk over the schedule's leaf invocations, the
// emission primitives (instruction streams, dependencies, buffer regions) and the finished
// program with its held inputs sent first.
#include "codegen/generator.h"

#include <algorithm>
#include <map>

namespace tilescope {

Result<CodegenResult> Generator::run() {
    m_result.layout = analyseSchedule(m_ctx, m_tree, m_totalBatch, m_evalOpt);
    if (!m_schedule.valid) return Error{"invalid schedule: " + m_schedule.reason};

    collectInvocations();
    countNocReaders();

    // ---- Emission, straight into the per-tile streams (issue order is emission order).
    // An instruction's stage boxes are splitBox(its range, its order): only the order is
    // kept (a byte), so millions of instructions cost no more than their own fields.
    for (int t = 0; t < m_mesh.tiles(); ++t)
        m_program.tiles.push_back({t, m_mesh.tileX(t), m_mesh.tileY(t), {}});
    m_loadBytes.assign(size_t(m_mesh.tiles()), 0);
    m_buffers.assign(size_t(m_mesh.tiles()), TileBuffer(std::uint64_t(m_hw.bufferBytes)));
    if (auto e = reserveKeptInputs()) return *e;
    m_weightState.resize(static_cast<size_t>(m_layerCount));
    if (auto e = reserveKeptWeights()) return *e;
    m_stores.resize(static_cast<size_t>(m_layerCount));
    m_segmentStarted.assign(m_schedule.segments.size(), -1);

    for (int vi = 0; vi < int(m_invocations.size()); ++vi)
        if (auto e = emitInvocation(vi)) return *e;

    finishProgram();
    return std::move(m_result);
}

// ---- Leaf invocations in the evaluator's S-T order.
void Generator::collectInvocations() {
    const auto& leaves = m_schedule.leaves;
    auto leafOf = [&](int layer) -> const LeafLayout& {
        return leaves[size_t(m_schedule.leafOfLayer[size_t(layer)])];
    };
    auto push = [&](const BusyInterval& b, int block, double start, double end) {
        Invocation v;
        v.layer = b.layer;
        v.leaf = m_schedule.leafOfLayer[size_t(b.layer)];
        v.first = b.firstSample;
        v.last = b.lastSample;
        v.segInv = b.firstSample / std::max(1, m_schedule.segBatch);
        v.block = block;
        v.start = start;
        v.end = end;
        m_invocations.push_back(v);
    };
    // Streaming chains (docs/cost-model.md §2b): a leaf streaming its input from the leaf
    // before it takes its blocks in turn with it, block j of each member in chain order.
    std::vector<int> streamTo(size_t(m_layerCount), -1), streamFrom(size_t(m_layerCount), -1);
    for (const LeafLayout& l : leaves)
        if (l.streamInput >= 0) {
            const int p = m_net.layers[size_t(l.layer)].inputs[size_t(l.streamInput)].producer;
            streamFrom[size_t(l.layer)] = p;
            streamTo[size_t(p)] = l.layer;
        }
    std::map<std::pair<int, int>, const BusyInterval*> at; // (layer, first sample)
    for (const auto& b : m_schedule.evaluation.intervals)
        if (streamFrom[size_t(b.layer)] >= 0) at[{b.layer, b.firstSample}] = &b;
    for (const auto& b : m_schedule.evaluation.intervals) {
        if (streamFrom[size_t(b.layer)] >= 0) continue; // placed with its chain's first
        const int blocks = leafOf(b.layer).mapping.blocks();
        std::vector<const BusyInterval*> chain{&b};
        for (int l = streamTo[size_t(b.layer)]; l >= 0; l = streamTo[size_t(l)]) {
            auto it = at.find({l, b.firstSample});
            if (it == at.end()) break;
            chain.push_back(it->second);
        }
        // A blocked leaf's blocks one after another over its interval; a chain's rounds
        // over the chain's, each member's block in its share of a round. A member streaming
        // from the stage before it in an S cut reads that one's next block too: its block j
        // comes a round later, after the producer's block j + 1.
        const double span = chain.back()->end - b.start;
        double sum = 0;
        for (const BusyInterval* m : chain)
            sum += m->end - m->start;
        std::vector<int> lag(chain.size(), 0);
        for (size_t m = 1; m < chain.size(); ++m)
            lag[m] = lag[m - 1] + (leafOf(chain[m]->layer).streamAcross ? 1 : 0);
        const int rounds = blocks + lag.back();
        for (int r = 0; r < rounds; ++r) {
            double t = b.start + span * r / rounds;
            for (size_t m = 0; m < chain.size(); ++m) {
                const BusyInterval* mi = chain[m];
                const double len =
                    (sum > 0 ? (mi->end - mi->start) / sum : 1.0 / double(chain.size())) * span /
                    rounds;
                const int j = r - lag[m];
                if (j >= 0 && j < blocks)
                    push(*mi, j, t,
                         j + 1 == blocks && mi == chain.back() ? chain.back()->end : t + len);
                t += len;
            }
        }
    }
    std::stable_sort(m_invocations.begin(), m_invocations.end(),
                     [](const Invocation& a, const Invocation& b) {
                         if (a.start != b.start) return a.start < b.start;
                         if (a.leaf != b.leaf) return a.leaf < b.leaf;
                         return a.first < b.first;
                     });
    m_invocationsOfLayer.resize(static_cast<size_t>(m_layerCount));
    for (int i = 0; i < int(m_invocations.size()); ++i)
        m_invocationsOfLayer[size_t(m_invocations[size_t(i)].layer)].push_back(i);
    m_activationBytesBefore.assign(m_invocations.size() + 1, 0.0);
    for (size_t i = 0; i < m_invocations.size(); ++i) {
        const Invocation& v = m_invocations[i];
        const NodeFigures& f =
            m_schedule.evaluation.nodes[size_t(m_schedule.leaves[size_t(v.leaf)].node)];
        // Weights streamed with their blocks are demand like the blocks' activations.
        const double weights = m_schedule.leaves[size_t(v.leaf)].mapping.streamsWeights()
                                   ? 0.0
                                   : layerWeightBytes(v.layer) * m_schedule.segInvocations;
        // With a run model the DRAM is held longer than its bytes: what the runs add.
        const auto& extra = m_schedule.evaluation.layouts.extra;
        const double runs = size_t(v.layer) < extra.size() ? extra[size_t(v.layer)] : 0.0;
        m_activationBytesBefore[i + 1] =
            m_activationBytesBefore[i] + (std::max(0.0, f.runDramBytes - weights) + runs) /
                                             double(m_invocationsOfLayer[size_t(v.layer)].size());
    }
    m_invocationsOfTile.assign(size_t(m_mesh.tiles()), {});
    for (int i = 0; i < int(m_invocations.size()); ++i)
        for (int t : m_schedule.leaves[size_t(m_invocations[size_t(i)].leaf)].tiles)
            m_invocationsOfTile[size_t(t)].push_back(i);
}

// A streaming chain's block j feeds block j; across the stages of an S cut, blocks j - 1 to
// j + 1 feed block j (docs/cost-model.md §2b).
std::vector<int> Generator::overlapping(int layer, int s0, int s1, int block, bool across) const {
    std::vector<int> out;
    const bool blocked =
        m_schedule.leaves[size_t(m_schedule.leafOfLayer[size_t(layer)])].mapping.blocked();
    for (int i : m_invocationsOfLayer[size_t(layer)]) {
        const Invocation& v = m_invocations[size_t(i)];
        if (v.first <= s1 && v.last >= s0 &&
            (!blocked || v.block == block || (across && std::abs(v.block - block) == 1)))
            out.push_back(i);
    }
    return out;
}

// Expected NoC readers of each producer invocation.
void Generator::countNocReaders() {
    m_outputs.resize(m_invocations.size());
    for (int c = 0; c < int(m_invocations.size()); ++c) {
        const Invocation& v = m_invocations[size_t(c)];
        const LeafLayout& leaf = m_schedule.leaves[size_t(v.leaf)];
        std::set<int> seen;
        const auto& ins = m_net.layers[size_t(v.layer)].inputs;
        for (size_t k = 0; k < ins.size(); ++k)
            if (ins[k].producer >= 0 && !leaf.inputViaDram[k])
                for (int p :
                     overlapping(ins[k].producer, v.first, v.last, v.block, across(leaf, k)))
                    if (seen.insert(p).second) ++m_outputs[size_t(p)].pending;
    }
}

std::uint32_t Generator::emit(Instruction ins, const std::vector<Box>& stages,
                              const StageOrder& order, int budget) {
    ins.id = std::uint32_t(m_where.size() + 1);
    ins.stages = std::uint32_t(stages.size());
    auto& list = m_program.tiles[size_t(ins.tile)].instructions;
    m_where.push_back({ins.tile, std::uint32_t(list.size())});
    m_invocationOf.push_back(m_currentInvocation);
    m_orderOf.push_back(
        std::uint8_t(std::find(kOrders.begin(), kOrders.end(), order) - kOrders.begin()));
    m_budgetOf.push_back(std::uint8_t(budget));
    list.push_back(std::move(ins));
    return list.back().id;
}

const std::vector<Box>& Generator::stageBoxesOf(std::uint32_t id) {
    if (auto it = m_stageBoxes.find(id); it != m_stageBoxes.end()) return it->second;
    if (m_stageBoxes.size() >= 8192) m_stageBoxes.clear();
    const Instruction& i = at(id);
    Box b;
    b.lo = i.lo;
    b.hi = i.hi;
    return m_stageBoxes
        .emplace(id, splitBox(b, kOrders[m_orderOf[size_t(id - 1)]], m_budgetOf[size_t(id - 1)]))
        .first->second;
}

void Generator::addDep(std::uint32_t on, std::uint32_t who, std::uint32_t stage) {
    Instruction& i = at(who);
    if (m_depStamp.size() <= std::max(on, who)) {
        m_depStamp.resize(size_t(std::max(on, who)) * 2 + 1, 0);
        m_depAt.resize(m_depStamp.size(), 0);
    }
    if (m_depsOf != who) { // index who's list
        m_depsOf = who;
        for (size_t k = 0; k < i.deps.size(); ++k)
            m_depStamp[i.deps[k].id] = who, m_depAt[i.deps[k].id] = std::uint32_t(k);
    }
    if (m_depStamp[on] == who) {
        Dep& d = i.deps[m_depAt[on]];
        d.stage = std::max(d.stage, stage);
        return;
    }
    m_depStamp[on] = who, m_depAt[on] = std::uint32_t(i.deps.size());
    i.deps.push_back({on, stage});
}

Result<Region> Generator::allocate(int tile, std::uint64_t bytes, bool top,
                                   const std::string& what) {
    Region r;
    r.tile = tile;
    r.bytes = bytes;
    r.what = *m_labels.insert(what).first;
    auto off = m_buffers[size_t(tile)].alloc(bytes, top, r.what);
    if (!off)
        return Error{"tile " + std::to_string(tile) + ": no room for " + what + " (" +
                     std::to_string(bytes) + " bytes, " +
                     std::to_string(m_buffers[size_t(tile)].free()) + " free of " +
                     std::to_string(std::uint64_t(m_hw.bufferBytes)) +
                     "; held: " + m_buffers[size_t(tile)].held(4) + ")"};
    r.ext = *off;
    r.offset = r.ext.empty() ? 0 : r.ext.front().first;
    return r;
}

// Of several readers on one engine queue only the last matters: a queue completes its
// instructions in order, so waiting for the last waits for all (this keeps a writer's
// dependency list short when a region was read by many SENDs).
std::vector<std::uint32_t> Generator::lastPerQueue(const std::vector<std::uint32_t>& ids) {
    // A handful of queues at most: a sorted small vector, not a map (this runs for every
    // buffer region written).
    struct Last {
        std::int32_t tile;
        int engine;
        std::uint32_t id;
    };
    std::vector<Last> last;
    for (std::uint32_t h : ids) {
        const Instruction& i = at(h);
        const int e = int(i.engine());
        auto it = std::find_if(last.begin(), last.end(),
                               [&](const Last& l) { return l.tile == i.tile && l.engine == e; });
        if (it == last.end())
            last.push_back({i.tile, e, h});
        else
            it->id = std::max(it->id, h);
    }
    std::sort(last.begin(), last.end(), [](const Last& a, const Last& b) {
        return std::pair(a.tile, a.engine) < std::pair(b.tile, b.engine);
    });
    std::vector<std::uint32_t> out;
    out.reserve(last.size());
    for (const Last& l : last)
        out.push_back(l.id);
    return out;
}

// Write-after-read: a writer into a fresh region waits for the last readers of what was
// there before.
void Generator::guard(const Region& r, const std::vector<std::uint32_t>& writers) {
    std::vector<std::uint32_t> hz;
    for (const auto& [off, len] : r.ext) {
        auto h = m_buffers[size_t(r.tile)].hazards(off, len);
        hz.insert(hz.end(), h.begin(), h.end());
    }
    for (std::uint32_t h : lastPerQueue(hz))
        for (std::uint32_t w : writers)
            if (h != w) fullDep(h, w);
}

void Generator::addRegion(int workload, Region& r, const std::string& what,
                          std::uint32_t firstWriter) {
    r.workload = workload;
    if (!m_opt.withIr) return;
    auto& buffers = m_workloads[size_t(workload)].buffers;
    r.regionIndex = int(buffers.size());
    buffers.push_back({what, r.tile, r.offset, r.bytes, r.ext, firstWriter});
}

void Generator::addDestination(int workload, std::int32_t to) {
    if (!m_opt.withIr) return;
    auto& d = m_workloads[size_t(workload)].destinations;
    if (std::find(d.begin(), d.end(), to) == d.end()) d.push_back(to);
}

void Generator::release(Region& r) {
    std::uint32_t last = 0;
    for (auto x : r.readers)
        last = std::max(last, x);
    if (m_opt.withIr && r.workload >= 0)
        m_workloads[size_t(r.workload)].buffers[size_t(r.regionIndex)].lastReader = last;
    m_buffers[size_t(r.tile)].release(r.ext, lastPerQueue(r.readers), r.what);
}

// Buffer references of a whole region, and of bytes [from, from + len) of it.
void Generator::regionRefs(std::vector<BufferRef>& out, const Region& r, bool write) {
    for (const auto& [off, len] : r.ext)
        out.push_back({r.tile, off, len, write});
}

void Generator::slotRefs(std::vector<BufferRef>& out, const Region& r, std::uint64_t from,
                         std::uint64_t len, bool write) {
    std::uint64_t pos = 0;
    for (const auto& [off, n] : r.ext) {
        const std::uint64_t lo = std::max(pos, from), hi = std::min(pos + n, from + len);
        if (lo < hi) out.push_back({r.tile, off + (lo - pos), hi - lo, write});
        pos += n;
    }
}

Box Generator::weightBoxOf(int layer, int k0, int k1,
                           std::optional<std::pair<int, int>> channels) const {
    const Layer& ly = m_net.layers[size_t(layer)];
    const int cg = (ly.kind == LayerKind::Conv || ly.kind == LayerKind::Gemm)
                       ? std::max(1, ly.inC / std::max(1, ly.groups))
                       : 1;
    Box b;
    b.lo = {k0, 0, 0, 0};
    b.hi = {k1, cg, std::max(1, ly.kernelH), std::max(1, ly.kernelW)};
    if (ly.kind != LayerKind::Conv) b.hi[2] = b.hi[3] = 1;
    if (channels) b.lo[1] = channels->first, b.hi[1] = channels->second;
    return b;
}

// One leaf invocation: its workloads, weights, inputs, weight prefetch, computes and stores.
std::optional<Error> Generator::emitInvocation(int vi) {
    const Invocation& v = m_invocations[size_t(vi)];
    const LeafLayout& leaf = m_schedule.leaves[size_t(v.leaf)];
    const Layer& ly = m_net.layers[size_t(v.layer)];
    Step cur{vi, v, leaf, ly, leaf.mapping, v.first, v.last + 1, v.layer};
    if (leaf.mapping.reduces())
        cur.weightChannels = m_geometry.blockChannels(v.layer, leaf.mapping, v.block);
    m_currentInvocation = vi;
    if (auto e = activeTiles(cur)) return e;

    // Weights: loaded once per segment invocation (normally prefetched at its start), or
    // with each block when they stream with output-channel blocks; never when kept on chip.
    WeightState& ws = m_weightState[size_t(v.layer)];
    cur.hasWeights = ly.weightBytes > 0;
    if (cur.hasWeights && leaf.mapping.streamsWeights()) {
        if (auto e = loadWeights(v.leaf, v.segInv, v.block)) return *e;
    } else if (cur.hasWeights && !ws.kept && ws.segInv != v.segInv) {
        if (auto e = loadWeights(v.leaf, v.segInv)) return *e;
    }
    cur.loadsWeights = cur.hasWeights && ws.fresh;

    // Inputs.
    const auto& act = cur.act;
    cur.writers.assign(act.size(), std::vector<std::vector<InputWriter>>(ly.inputs.size()));
    cur.local.resize(act.size());
    cur.inRegions.resize(act.size());
    for (size_t k = 0; k < ly.inputs.size(); ++k)
        if (auto e = emitInput(cur, k)) return e;

    if (m_prefetch)
        if (auto e = prefetchWeights(cur)) return e;

    if (auto e = emitComputeAndStore(cur)) return e;
    releaseAfter(cur);
    return std::nullopt;
}

// The invocation's workload on each tile that has work.
std::optional<Error> Generator::activeTiles(Step& cur) {
    const Invocation& v = cur.v;
    const LeafLayout& leaf = cur.leaf;
    const LeafMapping& m = cur.m;
    const int s0 = cur.s0, s1 = cur.s1;
    auto& act = cur.act;
    long long& maxVol = cur.maxVol;
    const std::string partition = m.partitionLabel();
    for (int t = 0; t < leaf.tileCount; ++t) {
        const Box b = m_geometry.blockBox(leaf.layer, m, t, v.block, s0, s1);
        if (b.empty()) continue;
        maxVol = std::max(maxVol, b.volume());
        IrWorkload wl;
        wl.tile = leaf.tiles[size_t(t)];
        wl.layer = v.layer;
        wl.node = leaf.node;
        wl.segment = leaf.segment;
        wl.segmentInvocation = v.segInv;
        wl.firstSample = v.first;
        wl.lastSample = v.last;
        wl.ofmap = b;
        wl.partition = partition;
        wl.tiling = m.tiling;
        if (m_opt.withIr) m_workloads.push_back(std::move(wl));
        act.push_back({leaf.tiles[size_t(t)], b, int(m_result.workloadCount++), t});
    }
    if (act.empty())
        return Error{"layer " + cur.ly.name + ": no tile has work (over-split partition)"};
    // A blocked leaf's compute times go by a full block's volume (Mapper: a short last block
    // takes its share of a block's time).
    if (m.blocked())
        for (int t = 0; t < leaf.tileCount; ++t)
            maxVol = std::max(maxVol, m_geometry.blockBox(leaf.layer, m, t, 0, s0, s1).volume());
    return std::nullopt;
}

// ---- Program: the per-tile streams are complete.
void Generator::finishProgram() {
    sendHeldInputsFirst();
    m_program.hardwareJson = hardwareToJson(m_hw).dump();
    for (const auto& l : m_net.layers)
        m_program.layers.push_back(l.name);
    for (auto& tp : m_program.tiles) {
        tp.instructions.shrink_to_fit();
        for (const auto& ins : tp.instructions)
            if (ins.op == Op::Load || ins.op == Op::Store)
                if (ins.src == kDram || ins.dst == kDram) m_result.programDramBytes += ins.bytes;
    }
    for (int t = 0; t < m_mesh.tiles(); ++t)
        m_result.peakBufferBytes.push_back(m_buffers[size_t(t)].peak());
    const Evaluation& ev = m_schedule.evaluation;
    m_program.schedule = {{"delay_cycles", ev.delay},       {"dram_bytes", ev.dramBytes},
                          {"energy_pj", ev.energy.total()}, {"noc_hop_bytes", ev.nocHopBytes},
                          {"batch", m_totalBatch},          {"tree", treeToText(m_tree, m_net)},
                          {"model", m_net.sourcePath}};
}

// A SEND emitted for a consumer whose data was all there before the consumer started (an
// output held from an earlier part of the segment: a skip connection, the input of an S
// cut's first stage) would wait, on its tile's in-order STORE/SEND engine, behind the
// transfers emitted before it that stream with computes still running then: a later
// pipeline stage's STORE holds the engine until that stage's last output, and the next
// sub-batch of the first stage waits for it. So such a SEND goes ahead of those transfers
// (at most kLookBack of them), never ahead of an instruction it depends on through any
// chain: every instruction gets a rank, queues are in rank order and every dependency points
// to a lower rank, so the program stays deadlock-free (docs/isa.md, "What the generator
// follows", Held inputs). Times are the evaluator's clock.
void Generator::sendHeldInputsFirst() {
    constexpr int kLookBack = 32;
    const size_t n = m_where.size();
    // The evaluator's interval of the invocation that emitted instruction `id`.
    auto span = [&](std::uint32_t id) -> const Invocation& {
        return m_invocations[size_t(m_invocationOf[id - 1])];
    };
    std::vector<float> ready(n + 1, 0.f); // when its data is all there (its producers' ends)
    std::vector<double> rank(n + 1, 0.0);
    // Per tile: its STORE/SEND ids, in queue order.
    std::vector<std::vector<std::uint32_t>> queue(m_program.tiles.size());
    bool moved = false;
    for (std::uint32_t id = 1; id <= n; ++id) {
        const Instruction& i = at(id);
        double end = 0, after = 0; // its inputs' end; the highest rank it depends on
        for (const auto& d : i.deps) {
            end = std::max(end, double(ready[d.id]));
            after = std::max(after, rank[d.id]);
        }
        // A compute ends no earlier than its interval, nor than all of its inputs are in (the
        // evaluator's intervals let a consumer keeping pace end before its producer does).
        ready[id] = i.op == Op::Compute ? std::max(float(span(id).end), float(end)) : float(end);
        rank[id] = id;
        if (i.engine() != Engine::Store) continue;
        auto& q = queue[size_t(i.tile)];
        size_t k = q.size();
        const double need = float(span(id).start);
        if (i.op == Op::Send && end <= need) {
            for (int steps = 0;
                 k > 0 && steps < kLookBack && ready[q[k - 1]] > need && rank[q[k - 1]] > after;
                 ++steps)
                --k;
            if (k < q.size()) { // between q[k - 1] and q[k], above everything it depends on
                const double lo = std::max(k > 0 ? rank[q[k - 1]] : rank[q[k]] - 1, after);
                const double mid = lo + (rank[q[k]] - lo) / 2;
                if (mid > lo && mid < rank[q[k]])
                    rank[id] = mid, moved = true;
                else
                    k = q.size(); // no rank left between them: stays in place
            }
        }
        q.insert(q.begin() + std::ptrdiff_t(k), id);
    }
    if (!moved) return; // every queue is in issue order already
    // Each tile's STORE/SEND instructions take their places in its stream in queue order.
    std::vector<size_t> places;
    std::vector<Instruction> inOrder;
    for (size_t t = 0; t < m_program.tiles.size(); ++t) {
        auto& list = m_program.tiles[t].instructions;
        places.clear();
        inOrder.clear();
        for (size_t k = 0; k < list.size(); ++k)
            if (list[k].engine() == Engine::Store) places.push_back(k);
        for (std::uint32_t id : queue[t])
            inOrder.push_back(std::move(list[m_where[id - 1].pos]));
        for (size_t k = 0; k < places.size(); ++k)
            list[places[k]] = std::move(inOrder[k]);
    }
}

Result<CodegenResult> generateProgram(EvalContext& ctx, const RATree& tree, int totalBatch,
                                      const EvalOptions& evalOpt, const CodegenOptions& opt) {
    // Prefetching a segment's weights overlaps their DRAM traffic with compute, as the
    // evaluator assumes; if that leaves some buffer too full for an activation, lay the
    // program out again loading each leaf's weights at its first invocation.
    if (opt.prefetchWeights) {
        auto r = Generator(ctx, tree, totalBatch, evalOpt, opt, true).run();
        if (r) return r;
    }
    return Generator(ctx, tree, totalBatch, evalOpt, opt, false).run();
}

void Generator::describeDram(Instruction& ins, int layout, const std::array<int, 4>& shape) const {
    const DramRunModel& model = m_mesh.dramRuns();
    if (!model.active()) return;
    ins.layout = layout;
    DramRuns r;
    if (layout >= kLayoutCount || layout < 0)
        r = oneRun(ins.bytes, model.burstBytes);
    else
        r = dramRuns(model, DramLayout(layout), shape, ins.lo, ins.hi, m_hw.dataBits);
    ins.base = r.base;
    ins.runs = r.runs;
    ins.runBytes = r.runBytes;
    ins.burstBytes = r.burstBytes;
}

int Generator::inputLayout(int layer, size_t k) const {
    const auto& in = m_schedule.evaluation.layouts.inputs;
    return size_t(layer) < in.size() && k < in[size_t(layer)].size() ? in[size_t(layer)][k] : 0;
}

int Generator::outputLayout(int layer) const {
    const auto& out = m_schedule.evaluation.layouts.output;
    return size_t(layer) < out.size() ? out[size_t(layer)] : 0;
}

} // namespace tilescope
