#include "codegen/codegen.h"

#include "hw/mesh.h"
#include "mapping/cim.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

namespace tilescope {

namespace {

// One tile's global buffer: a ring allocator for activations (so the next invocation's
// data lands beside, not on top of, the current one: double buffering when space allows),
// weights packed from the top, and the history of released regions whose last readers a
// new writer must wait for (write-after-read hazards become explicit dependencies).
class TileBuffer {
  public:
    explicit TileBuffer(std::uint64_t cap = 0) : m_cap(cap) {}

    using Extents = std::vector<std::pair<std::uint64_t, std::uint64_t>>; // (offset, bytes)

    // One contiguous extent when a gap fits; otherwise, when enough is free in total, the
    // lowest gaps gathered (the DMA engines scatter/gather, so a fragmented buffer still
    // holds what the evaluator's per-tile budget says fits).
    std::optional<Extents> alloc(std::uint64_t bytes, bool top, std::string_view what) {
        if (bytes == 0) return Extents{};
        std::vector<std::pair<std::uint64_t, std::uint64_t>> gaps; // [lo, hi)
        std::uint64_t at = 0;
        for (const auto& [off, len] : m_live) {
            if (off > at) gaps.push_back({at, off});
            at = std::max(at, off + len);
        }
        if (at < m_cap) gaps.push_back({at, m_cap});
        std::optional<std::uint64_t> pick;
        if (top) {
            // Of the places that fit (each gap's top and bottom end), the one whose newest
            // earlier reader is oldest, highest first on a tie: a weight load then waits for
            // no more of the recent work than the buffer forces (write-after-read).
            std::uint32_t best = 0;
            for (auto it = gaps.rbegin(); it != gaps.rend(); ++it) {
                if (it->second - it->first < bytes) continue;
                for (std::uint64_t place : {it->second - bytes, it->first}) {
                    const std::uint32_t newest = newestReader(place, bytes);
                    if (!pick || newest < best) pick = place, best = newest;
                    if (best == 0) break;
                }
                if (pick && best == 0) break;
            }
        } else {
            for (int pass = 0; pass < 2 && !pick; ++pass)
                for (const auto& [lo, hi] : gaps) {
                    const std::uint64_t start = pass == 0 ? std::max(lo, m_cursor) : lo;
                    if (pass == 0 && hi <= m_cursor) continue;
                    if (start < hi && hi - start >= bytes) {
                        pick = start;
                        break;
                    }
                }
        }
        Extents ext;
        if (pick) {
            ext.push_back({*pick, bytes});
            if (!top) m_cursor = *pick + bytes;
        } else {
            if (m_cap - m_used < bytes) return std::nullopt;
            std::uint64_t left = bytes;
            for (const auto& [lo, hi] : gaps) {
                if (!left) break;
                const std::uint64_t take = std::min(left, hi - lo);
                ext.push_back({lo, take});
                left -= take;
            }
        }
        for (const auto& [off, len] : ext)
            m_live[off] = len;
        m_used += bytes;
        m_held[what] += bytes;
        m_peak = std::max(m_peak, m_used);
        return ext;
    }
    void release(const Extents& ext, const std::vector<std::uint32_t>& readers,
                 std::string_view what) {
        for (const auto& [off, len] : ext) {
            m_live.erase(off);
            m_used -= len;
            m_freed.push_back({off, len, readers});
            const auto it = m_held.find(what);
            if (it != m_held.end() && (it->second -= len) == 0) m_held.erase(it);
        }
    }
    // What the buffer holds, the largest first: "weights of conv1 400000 B, ..." (at most
    // `count` of them).
    std::string held(size_t count) const {
        std::vector<std::pair<std::uint64_t, std::string_view>> by;
        for (const auto& [what, bytes] : m_held)
            by.push_back({bytes, what});
        std::sort(by.begin(), by.end(), [](const auto& a, const auto& b) {
            return a.first != b.first ? a.first > b.first : a.second < b.second;
        });
        std::string out;
        for (size_t i = 0; i < by.size() && i < count; ++i)
            out += (i ? ", " : "") + std::string(by[i].second) + " " + std::to_string(by[i].first) +
                   " B";
        if (by.size() > count) out += ", ...";
        return out;
    }
    // Readers of released regions overlapping [off, off+bytes); those parts are forgotten
    // (the new writer now orders every later reuse).
    std::vector<std::uint32_t> hazards(std::uint64_t off, std::uint64_t bytes) {
        std::vector<std::uint32_t> out;
        if (bytes == 0) return out;
        std::vector<Freed> keep;
        for (auto& f : m_freed) {
            const std::uint64_t lo = std::max(f.off, off),
                                hi = std::min(f.off + f.bytes, off + bytes);
            if (lo >= hi) {
                keep.push_back(std::move(f));
                continue;
            }
            out.insert(out.end(), f.readers.begin(), f.readers.end());
            if (f.off < lo) keep.push_back({f.off, lo - f.off, f.readers});
            if (hi < f.off + f.bytes) keep.push_back({hi, f.off + f.bytes - hi, f.readers});
        }
        m_freed = std::move(keep);
        return out;
    }
    // The newest reader (largest id) of the released regions overlapping [off, off+bytes);
    // 0 when none.
    std::uint32_t newestReader(std::uint64_t off, std::uint64_t bytes) const {
        std::uint32_t newest = 0;
        for (const auto& f : m_freed)
            if (std::max(f.off, off) < std::min(f.off + f.bytes, off + bytes))
                for (std::uint32_t r : f.readers)
                    newest = std::max(newest, r);
        return newest;
    }
    std::uint64_t free() const { return m_cap - m_used; }
    std::uint64_t peak() const { return m_peak; }

  private:
    struct Freed {
        std::uint64_t off, bytes;
        std::vector<std::uint32_t> readers;
    };
    std::uint64_t m_cap;
    std::map<std::uint64_t, std::uint64_t> m_live;
    // Live bytes by what they hold (views of Generator::labels, which outlive the buffer).
    std::map<std::string_view, std::uint64_t> m_held;
    std::vector<Freed> m_freed;
    std::uint64_t m_cursor = 0, m_used = 0, m_peak = 0;
};

struct Region {
    int tile = 0;
    std::string_view what;               // what it holds (a Generator::labels entry)
    std::uint64_t offset = 0, bytes = 0; // offset of the first extent; total bytes
    TileBuffer::Extents ext;
    std::vector<std::uint32_t> readers;
    int workload = -1;
    int regionIndex = -1; // index in the workload's buffers
};

// A producer tile's output slice of one invocation, alive until its consumers read it.
struct ProdSlice {
    int tile = 0;
    Box box;
    Region region;
    std::uint32_t computeId = 0;
    std::vector<Box> stages; // the compute's stage boxes (producer coordinates)
    StageOrder order{};
};

struct ProdInv {
    bool emitted = false;
    int pending = 0; // NoC consumer invocations still to read it
    std::vector<ProdSlice> slices;
};

struct Inv {
    int layer = -1, leaf = -1;
    int first = 0, last = 0;
    double start = 0, end = 0;
    int segInv = 0;
};

nlohmann::json endpointsJson(const std::vector<std::int32_t>& list) {
    nlohmann::json j = nlohmann::json::array();
    for (auto e : list)
        j.push_back(endpointName(e));
    return j;
}

nlohmann::json boxJson(const Box& b) {
    return {{"lo", b.lo}, {"hi", b.hi}};
}

} // namespace

namespace {

nlohmann::json workloadJson(const IrWorkload& w, const Network& net) {
    using nlohmann::json;
    json ins = json::array();
    for (const auto& in : w.inputs)
        ins.push_back({{"input", in.index},
                       {"from", in.from},
                       {"via", in.viaDram ? "dram" : "noc"},
                       {"range", boxJson(in.range)},
                       {"sources", endpointsJson(in.sources)},
                       {"bytes", in.bytes}});
    json bufs = json::array();
    for (const auto& b : w.buffers)
        bufs.push_back({{"what", b.what},
                        {"offset", b.offset},
                        {"bytes", b.bytes},
                        {"extents", b.extents},
                        {"first_writer", b.firstWriter},
                        {"last_reader", b.lastReader}});
    const Layer& L = net.layers[size_t(w.layer)];
    json j = {{"tile", w.tile},
              {"layer", L.name},
              {"kind", toString(L.kind)},
              {"segment", w.segment},
              {"segment_invocation", w.segmentInvocation},
              {"samples", {w.firstSample, w.lastSample}},
              {"ofmap", boxJson(w.ofmap)},
              {"inputs", ins},
              {"destinations", endpointsJson(w.destinations)},
              {"buffers", bufs},
              {"compute",
               {{"partition", w.partition},
                {"tiling", w.tiling},
                {"cycles", w.cycles},
                {"instruction", w.computeId}}}};
    if (!w.weights.empty())
        j["weights"] = {{"range", boxJson(w.weights)},
                        {"bytes", w.weightBytes},
                        {"source", "dram"},
                        {"loaded_here", w.weightsLoaded}};
    return j;
}

// Everything of ir.json but the workloads.
nlohmann::json irHeader(const CodegenResult& r) {
    using nlohmann::json;
    json peaks = json::object();
    for (size_t t = 0; t < r.peakBufferBytes.size(); ++t)
        peaks[std::to_string(t)] = r.peakBufferBytes[t];
    return {{"format", "tilescope-ir"},
            {"version", 1},
            {"axes", {{"activations", "b,c,h,w"}, {"weights", "k,c,r,s"}}},
            {"segments", r.layout.segments.size()},
            {"segment_batch", r.layout.segBatch},
            {"segment_invocations", r.layout.segInvocations},
            {"peak_buffer_bytes", peaks}};
}

} // namespace

nlohmann::json irToJson(const CodegenResult& r, const Network& net) {
    nlohmann::json j = irHeader(r);
    nlohmann::json list = nlohmann::json::array();
    for (const auto& w : r.workloads)
        list.push_back(workloadJson(w, net));
    j["workloads"] = std::move(list);
    return j;
}

void writeIrJson(std::ostream& o, const CodegenResult& r, const Network& net) {
    const std::string head = irHeader(r).dump(1);
    o << head.substr(0, head.size() - 2) << ",\n \"workloads\": [";
    for (size_t k = 0; k < r.workloads.size(); ++k)
        o << (k ? ",\n  " : "\n  ") << workloadJson(r.workloads[k], net).dump();
    o << (r.workloads.empty() ? "]\n}\n" : "\n ]\n}\n");
}

namespace {

struct Where {
    std::int32_t tile;
    std::uint32_t pos;
};
constexpr std::array<StageOrder, 3> kOrders{kActOrder, kChannelOrder, kWeightOrder};

struct WeightState {
    int segInv = -1;
    int remaining = 0;
    bool fresh = false;                // no invocation has used them yet
    std::map<int, Region> region;      // tile -> region
    std::map<int, std::uint32_t> load; // tile -> LOAD that delivers its slice
};
struct StoreRec {
    Box box;
    std::uint32_t id;
};

struct Active {
    int tile;
    Box box;
    int workload;
};
struct Writer {
    std::uint32_t id;
    bool sameCoords; // its stage boxes are in the input's coordinates
};
struct LocalRead {
    int prodInv;
    size_t slice;
    size_t input;
};
// Over the NoC: one producer slice's piece, sent to the active tiles in `to`.
struct Group {
    int pinv;
    size_t slice;
    Box x;
    std::vector<size_t> to;
};

// One leaf invocation being emitted: its active tiles and what their computes read.
struct Step {
    int vi;
    const Inv& v;
    const LeafLayout& leaf;
    const Layer& ly;
    const LeafMapping& m;
    int s0, s1;
    std::int32_t layerIdx;
    std::vector<Active> act{};
    long long maxVol = 1;
    bool hasWeights = false, loadsWeights = false;
    std::vector<std::vector<std::vector<Writer>>> writers{};
    std::vector<std::vector<LocalRead>> local{};
    std::vector<std::vector<Region>> inRegions{};
    std::set<int> usedProducers{};
};

// The program generator: walks the schedule's leaf invocations in the evaluator's order and
// emits their LOAD/COMPUTE/SEND/STORE instructions into the per-tile streams.
class Generator {
  public:
    Generator(EvalContext& ctx, const RATree& tree, int totalBatch, const EvalOptions& evalOpt,
              const CodegenOptions& opt, bool prefetch)
        : m_ctx(ctx), m_tree(tree), m_totalBatch(totalBatch), m_evalOpt(evalOpt), m_opt(opt),
          prefetch(prefetch), net(ctx.network()), hw(ctx.hardware()), mesh(hw),
          L(int(net.layers.size())), geo(net, hw.dataBits) {}

    Result<CodegenResult> run();

  private:
    // Schedule walk.
    void collectInvocations();
    std::vector<int> overlapping(int layer, int s0, int s1) const;
    void countNocReaders();
    // Emission primitives.
    std::uint32_t emit(Instruction ins, const std::vector<Box>& stages, const StageOrder& order);
    Instruction& at(std::uint32_t id);
    std::vector<Box> stageBoxesOf(std::uint32_t id);
    void addDep(std::uint32_t on, std::uint32_t who, std::uint32_t stage);
    void fullDep(std::uint32_t on, std::uint32_t who) { addDep(on, who, at(on).stages); }
    Result<Region> allocate(int tile, std::uint64_t bytes, bool top, const std::string& what);
    std::vector<std::uint32_t> lastPerQueue(const std::vector<std::uint32_t>& ids);
    void guard(const Region& r, const std::vector<std::uint32_t>& writers);
    void addRegion(int workload, Region& r, const std::string& what, std::uint32_t firstWriter);
    void addDestination(int workload, std::int32_t to);
    void release(Region& r);
    static void regionRefs(std::vector<BufferRef>& out, const Region& r, bool write);
    static void slotRefs(std::vector<BufferRef>& out, const Region& r, std::uint64_t from,
                         std::uint64_t len, bool write);
    Box weightBoxOf(int layer, int k0, int k1) const;
    long long weightElemsOf(int layer, int k0, int k1) const {
        return geo.weightElems(layer, k0, k1);
    }
    std::optional<Error> loadWeights(int leafIdx, int segInv);
    // Phases of one invocation.
    std::optional<Error> emitInvocation(int vi);
    std::optional<Error> activeTiles(Step& cur);
    Result<std::vector<Region>> allocateInputs(const Step& cur,
                                               const std::vector<std::uint64_t>& need,
                                               const std::string& what);
    std::optional<Error> emitInput(Step& cur, size_t k);
    std::optional<Error> emitDramInputs(Step& cur, size_t k, const std::vector<Box>& win,
                                        const std::string& from);
    std::optional<Error> emitNocInputs(Step& cur, size_t k, const std::vector<Box>& win,
                                       const std::string& from);
    std::optional<Error> prefetchWeights(const Step& cur);
    std::optional<Error> emitComputeAndStore(Step& cur);
    Result<ProdSlice> emitCompute(Step& cur, size_t a);
    std::uint32_t emitProgram(const Step& cur, size_t a);
    void addComputeDeps(Step& cur, size_t a, const std::vector<Box>& st, std::uint32_t cid,
                        IrWorkload& wl);
    void emitStore(const Step& cur, size_t a, const std::vector<Box>& st, const StageOrder& order,
                   std::uint32_t cid, ProdSlice& ps);
    void releaseAfter(const Step& cur);
    void finishProgram();
    void sendHeldInputsFirst();

    std::uint64_t bytesOf(long long elements) const { return geo.bytesOf(elements); }
    // A layer's weights in bytes, as the prefetch clock counts them.
    double layerWeightBytes(int layer) const {
        return double(net.layers[size_t(layer)].weightBytes) * hw.dataBits / 8.0;
    }
    Box window(int l, size_t k, const Box& o) const { return geo.window(l, k, o); }
    Box tileBox(const LeafLayout& leaf, int t, int s0, int s1) const {
        return geo.tileBox(leaf.layer, leaf.mapping, t, s0, s1);
    }

    EvalContext& m_ctx;
    const RATree& m_tree;
    const int m_totalBatch;
    const EvalOptions& m_evalOpt;
    const CodegenOptions& m_opt;
    const bool prefetch;
    const Network& net;
    const Hardware& hw;
    const Mesh mesh;
    CodegenResult R;
    const ScheduleLayout& S = R.layout;
    int maxStages = 1;
    const int L;
    const TransferGeometry geo;

    std::vector<Inv> invs;
    std::vector<std::vector<int>> invsOfLayer;
    std::vector<ProdInv> prod;

    Program& P = R.program;
    std::vector<Where> where; // per instruction (index id - 1)
    std::vector<int> invOf;   // per instruction: the invocation that emitted it (index in invs)
    int curInv = -1;
    std::vector<std::uint8_t> orderOf; // per instruction: index into kOrders
    std::vector<std::uint64_t> loadBytes;
    std::set<std::string> labels; // what buffer regions hold (TileBuffer's views of them)
    std::vector<TileBuffer> buf;
    std::vector<IrWorkload>& W = R.workloads; // empty unless m_opt.withIr
    IrWorkload sink; // the current invocation's figures when the IR is not kept
    // The workload act[a].workload names: its IR entry, or the sink.
    IrWorkload& irOf(int workload) { return m_opt.withIr ? W[size_t(workload)] : sink; }

    std::vector<WeightState> wstate;
    std::vector<std::vector<StoreRec>> stores;
    std::vector<int> segStarted;
    std::vector<std::vector<int>> invsOfTile; // per tile: the invocations using it, in order
    bool tilesBusy(int li, int vi, double until, int segInv) const;
    std::vector<std::pair<int, double>>
        pending; // (leaf, first start) whose weights are not issued yet
    double reserve = 0, dramClock = 0;
    std::vector<double> actBefore; // activation DRAM bytes of the invocations before each
};

Result<CodegenResult> Generator::run() {
    R.layout = analyseSchedule(m_ctx, m_tree, m_totalBatch, m_evalOpt);
    if (!S.valid) return Error{"invalid schedule: " + S.reason};
    maxStages = std::clamp(m_opt.maxStages, 1, 64);

    collectInvocations();
    countNocReaders();

    // ---- Emission, straight into the per-tile streams (issue order is emission order).
    // An instruction's stage boxes are splitBox(its range, its order): only the order is
    // kept (a byte), so millions of instructions cost no more than their own fields.
    for (int t = 0; t < mesh.tiles(); ++t)
        P.tiles.push_back({t, mesh.tileX(t), mesh.tileY(t), {}});
    loadBytes.assign(size_t(mesh.tiles()), 0);
    buf.assign(size_t(mesh.tiles()), TileBuffer(std::uint64_t(hw.bufferBytes)));
    wstate.resize(static_cast<size_t>(L));
    stores.resize(static_cast<size_t>(L));
    segStarted.assign(S.segments.size(), -1);

    for (int vi = 0; vi < int(invs.size()); ++vi)
        if (auto e = emitInvocation(vi)) return *e;

    finishProgram();
    return std::move(R);
}

// ---- Leaf invocations in the evaluator's S-T order.
void Generator::collectInvocations() {
    for (const auto& b : S.evaluation.intervals) {
        Inv v;
        v.layer = b.layer;
        v.leaf = S.leafOfLayer[size_t(b.layer)];
        v.first = b.firstSample;
        v.last = b.lastSample;
        v.start = b.start;
        v.end = b.end;
        v.segInv = b.firstSample / std::max(1, S.segBatch);
        invs.push_back(v);
    }
    std::stable_sort(invs.begin(), invs.end(), [](const Inv& a, const Inv& b) {
        if (a.start != b.start) return a.start < b.start;
        if (a.leaf != b.leaf) return a.leaf < b.leaf;
        return a.first < b.first;
    });
    invsOfLayer.resize(static_cast<size_t>(L));
    for (int i = 0; i < int(invs.size()); ++i)
        invsOfLayer[size_t(invs[size_t(i)].layer)].push_back(i);
    actBefore.assign(invs.size() + 1, 0.0);
    for (size_t i = 0; i < invs.size(); ++i) {
        const Inv& v = invs[i];
        const NodeFigures& f = S.evaluation.nodes[size_t(S.leaves[size_t(v.leaf)].node)];
        const double weights = layerWeightBytes(v.layer) * S.segInvocations;
        actBefore[i + 1] = actBefore[i] + std::max(0.0, f.runDramBytes - weights) /
                                              double(invsOfLayer[size_t(v.layer)].size());
    }
    invsOfTile.assign(size_t(mesh.tiles()), {});
    for (int i = 0; i < int(invs.size()); ++i)
        for (int t : S.leaves[size_t(invs[size_t(i)].leaf)].tiles)
            invsOfTile[size_t(t)].push_back(i);
}

// Whether a tile of leaf `li` has work of another segment invocation left between
// invocation vi and `until` (segments overlap: docs/cost-model.md §5): its weights
// must not take that work's buffer room.
bool Generator::tilesBusy(int li, int vi, double until, int segInv) const {
    const LeafLayout& o = S.leaves[size_t(li)];
    for (int t : o.tiles) {
        const auto& list = invsOfTile[size_t(t)];
        for (auto it = std::upper_bound(list.begin(), list.end(), vi); it != list.end(); ++it) {
            const Inv& u = invs[size_t(*it)];
            if (u.start >= until) break;
            if (S.leaves[size_t(u.leaf)].segment != o.segment || u.segInv != segInv) return true;
        }
    }
    return false;
}

std::vector<int> Generator::overlapping(int layer, int s0, int s1) const { // [s0, s1] inclusive
    std::vector<int> out;
    for (int i : invsOfLayer[size_t(layer)])
        if (invs[size_t(i)].first <= s1 && invs[size_t(i)].last >= s0) out.push_back(i);
    return out;
}

// Expected NoC readers of each producer invocation.
void Generator::countNocReaders() {
    prod.resize(invs.size());
    for (int c = 0; c < int(invs.size()); ++c) {
        const Inv& v = invs[size_t(c)];
        const LeafLayout& leaf = S.leaves[size_t(v.leaf)];
        std::set<int> seen;
        const auto& ins = net.layers[size_t(v.layer)].inputs;
        for (size_t k = 0; k < ins.size(); ++k)
            if (ins[k].producer >= 0 && !leaf.inputViaDram[k])
                for (int p : overlapping(ins[k].producer, v.first, v.last))
                    if (seen.insert(p).second) ++prod[size_t(p)].pending;
    }
}

std::uint32_t Generator::emit(Instruction ins, const std::vector<Box>& stages,
                              const StageOrder& order) {
    ins.id = std::uint32_t(where.size() + 1);
    ins.stages = std::uint32_t(stages.size());
    auto& list = P.tiles[size_t(ins.tile)].instructions;
    where.push_back({ins.tile, std::uint32_t(list.size())});
    invOf.push_back(curInv);
    orderOf.push_back(
        std::uint8_t(std::find(kOrders.begin(), kOrders.end(), order) - kOrders.begin()));
    list.push_back(std::move(ins));
    return list.back().id;
}

Instruction& Generator::at(std::uint32_t id) {
    const Where w = where[size_t(id - 1)];
    return P.tiles[size_t(w.tile)].instructions[w.pos];
}

std::vector<Box> Generator::stageBoxesOf(std::uint32_t id) {
    const Instruction& i = at(id);
    Box b;
    b.lo = i.lo;
    b.hi = i.hi;
    return splitBox(b, kOrders[orderOf[size_t(id - 1)]], maxStages);
}

void Generator::addDep(std::uint32_t on, std::uint32_t who, std::uint32_t stage) {
    Instruction& i = at(who);
    for (auto& d : i.deps)
        if (d.id == on) {
            d.stage = std::max(d.stage, stage);
            return;
        }
    i.deps.push_back({on, stage});
}

Result<Region> Generator::allocate(int tile, std::uint64_t bytes, bool top,
                                   const std::string& what) {
    Region r;
    r.tile = tile;
    r.bytes = bytes;
    r.what = *labels.insert(what).first;
    auto off = buf[size_t(tile)].alloc(bytes, top, r.what);
    if (!off)
        return Error{"tile " + std::to_string(tile) + ": no room for " + what + " (" +
                     std::to_string(bytes) + " bytes, " + std::to_string(buf[size_t(tile)].free()) +
                     " free of " + std::to_string(std::uint64_t(hw.bufferBytes)) +
                     "; held: " + buf[size_t(tile)].held(4) + ")"};
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
        auto h = buf[size_t(r.tile)].hazards(off, len);
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
    BufferRegion br;
    br.what = what;
    br.tile = r.tile;
    br.offset = r.offset;
    br.bytes = r.bytes;
    br.extents = r.ext;
    br.firstWriter = firstWriter;
    r.regionIndex = int(W[size_t(workload)].buffers.size());
    W[size_t(workload)].buffers.push_back(br);
}

void Generator::addDestination(int workload, std::int32_t to) {
    if (!m_opt.withIr) return;
    auto& d = W[size_t(workload)].destinations;
    if (std::find(d.begin(), d.end(), to) == d.end()) d.push_back(to);
}

void Generator::release(Region& r) {
    std::uint32_t last = 0;
    for (auto x : r.readers)
        last = std::max(last, x);
    if (m_opt.withIr && r.workload >= 0)
        W[size_t(r.workload)].buffers[size_t(r.regionIndex)].lastReader = last;
    buf[size_t(r.tile)].release(r.ext, lastPerQueue(r.readers), r.what);
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

Box Generator::weightBoxOf(int layer, int k0, int k1) const {
    const Layer& ly = net.layers[size_t(layer)];
    const int cg = (ly.kind == LayerKind::Conv || ly.kind == LayerKind::Gemm)
                       ? std::max(1, ly.inC / std::max(1, ly.groups))
                       : 1;
    Box b;
    b.lo = {k0, 0, 0, 0};
    b.hi = {k1, cg, std::max(1, ly.kernelH), std::max(1, ly.kernelW)};
    if (ly.kind != LayerKind::Conv) b.hi[2] = b.hi[3] = 1;
    return b;
}

// Loads a leaf's weights for one segment invocation: one DRAM read per output-channel
// slice, multicast to every tile of the group that holds that slice.
std::optional<Error> Generator::loadWeights(int leafIdx, int segInv) {
    const LeafLayout& leaf = S.leaves[size_t(leafIdx)];
    const Layer& ly = net.layers[size_t(leaf.layer)];
    WeightState& ws = wstate[size_t(leaf.layer)];
    ws.segInv = segInv;
    ws.fresh = true;
    ws.remaining = std::max(1, S.segBatch / std::max(1, leaf.batch));
    ws.region.clear();
    ws.load.clear();
    std::map<std::pair<int, int>, std::vector<int>> byK; // k-range -> tiles
    for (int t = 0; t < leaf.tileCount; ++t) {
        const Box b = tileBox(leaf, t, 0, leaf.batch);
        if (!b.empty()) byK[{b.lo[1], b.hi[1]}].push_back(leaf.tiles[size_t(t)]);
    }
    for (const auto& [kr, members] : byK) {
        const std::uint64_t bytes = bytesOf(weightElemsOf(leaf.layer, kr.first, kr.second));
        std::vector<Region> regs;
        for (int tile : members) {
            auto r = allocate(tile, bytes, true, "weights of " + ly.name);
            if (!r) return r.error();
            regs.push_back(*r);
        }
        // The least-loaded destination issues the read (spreads DRAM requests).
        int leader = members.front();
        for (int tile : members)
            if (loadBytes[size_t(tile)] < loadBytes[size_t(leader)]) leader = tile;
        Instruction ins;
        ins.op = Op::Load;
        ins.tile = leader;
        ins.layer = leaf.layer;
        ins.bytes = bytes;
        ins.src = kDram;
        ins.dst = leader;
        for (int tile : members)
            if (tile != leader) ins.mcast.push_back(tile);
        const Box wb = weightBoxOf(leaf.layer, kr.first, kr.second);
        ins.lo = wb.lo;
        ins.hi = wb.hi;
        for (const auto& r : regs)
            regionRefs(ins.buffers, r, true);
        const std::uint32_t id = emit(ins, splitBox(wb, kWeightOrder, maxStages), kWeightOrder);
        loadBytes[size_t(leader)] += bytes;
        for (size_t q = 0; q < members.size(); ++q) {
            guard(regs[q], {id});
            ws.region[members[q]] = regs[q];
            ws.load[members[q]] = id;
        }
    }
    return std::nullopt;
}

// One leaf invocation: its workloads, weights, inputs, weight prefetch, computes and stores.
std::optional<Error> Generator::emitInvocation(int vi) {
    const Inv& v = invs[size_t(vi)];
    const LeafLayout& leaf = S.leaves[size_t(v.leaf)];
    const Layer& ly = net.layers[size_t(v.layer)];
    Step cur{vi, v, leaf, ly, leaf.mapping, v.first, v.last + 1, v.layer};
    curInv = vi;
    if (auto e = activeTiles(cur)) return e;

    // Weights: loaded once per segment invocation (normally prefetched at its start).
    WeightState& ws = wstate[size_t(v.layer)];
    cur.hasWeights = ly.weightBytes > 0;
    if (cur.hasWeights && ws.segInv != v.segInv)
        if (auto e = loadWeights(v.leaf, v.segInv)) return *e;
    cur.loadsWeights = cur.hasWeights && ws.fresh;

    // Inputs.
    const auto& act = cur.act;
    cur.writers.assign(act.size(), std::vector<std::vector<Writer>>(ly.inputs.size()));
    cur.local.resize(act.size());
    cur.inRegions.resize(act.size());
    for (size_t k = 0; k < ly.inputs.size(); ++k)
        if (auto e = emitInput(cur, k)) return e;

    if (prefetch)
        if (auto e = prefetchWeights(cur)) return e;

    if (auto e = emitComputeAndStore(cur)) return e;
    releaseAfter(cur);
    return std::nullopt;
}

// The invocation's workload on each tile that has work.
std::optional<Error> Generator::activeTiles(Step& cur) {
    const Inv& v = cur.v;
    const LeafLayout& leaf = cur.leaf;
    const LeafMapping& m = cur.m;
    const int s0 = cur.s0, s1 = cur.s1;
    auto& act = cur.act;
    long long& maxVol = cur.maxVol;
    const std::string partition = m.partitionLabel();
    for (int t = 0; t < leaf.tileCount; ++t) {
        const Box b = tileBox(leaf, t, s0, s1);
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
        if (m_opt.withIr) W.push_back(std::move(wl));
        act.push_back({leaf.tiles[size_t(t)], b, int(R.workloadCount++)});
    }
    if (act.empty())
        return Error{"layer " + cur.ly.name + ": no tile has work (over-split partition)"};
    return std::nullopt;
}

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

std::optional<Error> Generator::emitInput(Step& cur, size_t k) {
    const Inv& v = cur.v;
    const LeafLayout& leaf = cur.leaf;
    const auto& act = cur.act;
    const LayerInput& in = cur.ly.inputs[k];
    std::vector<Box> win(act.size());
    for (size_t a = 0; a < act.size(); ++a)
        win[a] = window(v.layer, k, act[a].box);
    const std::string from =
        in.producer >= 0 ? net.layers[size_t(in.producer)].name : "input:" + in.networkInput;
    for (size_t a = 0; a < act.size(); ++a) {
        IrInput ii;
        ii.index = int(k);
        ii.from = from;
        ii.viaDram = leaf.inputViaDram[k];
        ii.range = win[a];
        if (m_opt.withIr) W[size_t(act[a].workload)].inputs.push_back(ii);
    }
    if (leaf.inputViaDram[k]) return emitDramInputs(cur, k, win, from);
    return emitNocInputs(cur, k, win, from);
}

std::optional<Error> Generator::emitDramInputs(Step& cur, size_t k, const std::vector<Box>& win,
                                               const std::string& from) {
    const Inv& v = cur.v;
    const Layer& ly = cur.ly;
    const int s0 = cur.s0, s1 = cur.s1;
    const std::int32_t layerIdx = cur.layerIdx;
    const auto& act = cur.act;
    auto& writers = cur.writers;
    auto& inRegions = cur.inRegions;
    const LayerInput& in = ly.inputs[k];
    const InputGeom& g = geo.input(v.layer, k);
    // Cut the input into cells along every window edge; each cell is read from
    // DRAM once and multicast to every tile whose window holds it. Parts no
    // window needs (stride > kernel) travel with their neighbour, so the whole
    // tensor is read exactly once, as the evaluator counts it.
    Box ext;
    ext.lo = {s0, 0, 0, 0};
    ext.hi = {s1, g.C, g.H, g.W};
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
            if (loadBytes[size_t(act[a].tile)] < loadBytes[size_t(act[leader].tile)]) leader = a;
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
        for (size_t a : c.to) {
            slotRefs(ins.buffers, regs[a], fill[a], bytes, true);
            fill[a] += bytes;
        }
        const std::uint32_t id = emit(ins, splitBox(c.box, kActOrder, maxStages), kActOrder);
        loadBytes[size_t(ins.tile)] += bytes;
        // Read after write through DRAM: the producer's stores of this data.
        if (in.producer >= 0)
            for (const auto& st : stores[size_t(in.producer)]) {
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
        if (!m_opt.withIr) continue;
        auto& ii = W[size_t(act[a].workload)].inputs.back();
        ii.sources = {kDram};
        ii.bytes = regs[a].bytes;
    }
    return std::nullopt;
}

// Over the NoC from the producer's tiles.
std::optional<Error> Generator::emitNocInputs(Step& cur, size_t k, const std::vector<Box>& win,
                                              const std::string& from) {
    const Inv& v = cur.v;
    const Layer& ly = cur.ly;
    const auto& act = cur.act;
    auto& writers = cur.writers;
    auto& local = cur.local;
    auto& inRegions = cur.inRegions;
    const LayerInput& in = ly.inputs[k];
    const InputGeom& g = geo.input(v.layer, k);
    std::vector<Group> groups;
    std::vector<std::uint64_t> need(act.size(), 0);
    std::vector<std::vector<Box>> wants(act.size());
    std::vector<int> actTiles;
    for (size_t a = 0; a < act.size(); ++a) {
        wants[a] =
            g.sameAsProducer ? std::vector<Box>{win[a]} : geo.producerWants(v.layer, k, act[a].box);
        actTiles.push_back(act[a].tile);
    }
    for (int pi : overlapping(in.producer, v.first, v.last)) {
        ProdInv& P = prod[size_t(pi)];
        if (!P.emitted)
            return Error{"internal: " + ly.name + " is scheduled before its producer " + from};
        cur.usedProducers.insert(pi);
        std::vector<SliceRef> refs;
        for (const ProdSlice& ps : P.slices)
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
    std::vector<std::set<std::int32_t>> sources(act.size());
    for (const auto& gr : groups) {
        ProdSlice& ps = prod[size_t(gr.pinv)].slices[gr.slice];
        const std::uint64_t bytes = bytesOf(gr.x.volume());
        Instruction send;
        send.op = Op::Send;
        send.tile = ps.tile;
        send.layer = in.producer;
        send.bytes = bytes;
        send.src = ps.tile;
        send.dst = act[gr.to.front()].tile;
        for (size_t q = 1; q < gr.to.size(); ++q)
            send.mcast.push_back(act[gr.to[q]].tile);
        send.lo = gr.x.lo;
        send.hi = gr.x.hi;
        regionRefs(send.buffers, ps.region, false);
        // The SEND writes straight into each consumer's input region (the
        // destination's buffer is in its buffer references); the consumer's compute
        // depends on it, stage by stage (docs/isa.md: "a SEND is matched by its
        // consumer's dependency"). No receiving instruction is needed.
        for (size_t a : gr.to) {
            slotRefs(send.buffers, regs[a], fill[a], bytes, true);
            fill[a] += bytes;
        }
        const std::vector<Box> st = splitBox(gr.x, ps.order, maxStages);
        const std::uint32_t sid = emit(send, st, ps.order);
        addDep(ps.computeId, sid, lagStage(ps.stages, st));
        ps.region.readers.push_back(sid);
        for (auto t : send.destinations())
            addDestination(ps.region.workload, t);
        for (size_t a : gr.to) {
            regWriters[a].push_back(sid);
            writers[a][k].push_back({sid, g.sameAsProducer});
            sources[a].insert(ps.tile);
        }
    }
    for (size_t a = 0; a < act.size(); ++a) {
        if (m_opt.withIr) {
            auto& ii = W[size_t(act[a].workload)].inputs.back();
            for (const auto& lr : local[a])
                if (lr.input == k) sources[a].insert(act[a].tile);
            ii.sources.assign(sources[a].begin(), sources[a].end());
            ii.bytes = regs[a].bytes;
        }
        if (regs[a].bytes == 0) continue;
        guard(regs[a], regWriters[a]);
        addRegion(act[a].workload, regs[a], "ifmap" + std::to_string(k), regWriters[a].front());
        inRegions[a].push_back(regs[a]);
    }
    return std::nullopt;
}

// Weight prefetch, just in time on the evaluator's clock. The evaluator budgets every
// weight of a segment as resident and overlaps the segment's DRAM traffic with its
// compute. Loading them all at the segment's start would queue them on the tiles'
// in-order LOAD engines in front of the receiving LOADs of the next leaves, which
// then wait for the whole segment's weights. So the pending leaves' weights (in the
// order of the leaves' first starts) are issued at the last invocation before some of
// them would arrive late: with DRAM busy until dramClock, they wait for the next
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
    const Inv& v = cur.v;
    const LeafLayout& leaf = cur.leaf;
    if (segStarted[size_t(leaf.segment)] != v.segInv) {
        segStarted[size_t(leaf.segment)] = v.segInv;
        pending.clear();
        for (int j = vi; j < int(invs.size()); ++j) {
            const Inv& u = invs[size_t(j)];
            const LeafLayout& o = S.leaves[size_t(u.leaf)];
            if (o.segment != leaf.segment || u.segInv != v.segInv) continue;
            if (net.layers[size_t(o.layer)].weightBytes <= 0 ||
                wstate[size_t(o.layer)].segInv == v.segInv)
                continue;
            if (std::find_if(pending.begin(), pending.end(),
                             [&](const auto& p) { return p.first == u.leaf; }) == pending.end())
                pending.push_back({u.leaf, u.start});
        }
        reserve = 0;
        for (const LeafLayout& o : S.leaves)
            if (o.segment == leaf.segment)
                reserve =
                    std::max(reserve, 2 * (o.mapping.ifmapPerTile + o.mapping.operandBPerTile +
                                           o.mapping.ofmapPerTile));
        dramClock = v.start;
    }
    const double tNext = vi + 1 < int(invs.size()) ? invs[size_t(vi) + 1].start : v.start;
    const double dramBw = std::max(1e-9, hw.dramBytesPerCycle);
    auto weightBytes = [&](int li) {
        const int layer = S.leaves[size_t(li)].layer;
        return wstate[size_t(layer)].segInv == v.segInv // already loaded on demand
                   ? 0.0
                   : layerWeightBytes(layer);
    };
    // Activation DRAM bytes of the invocations after this one that start before t: the
    // DRAM serves them before weights needed at t.
    auto demandBefore = [&](double t) {
        const auto at = std::lower_bound(invs.begin() + vi, invs.end(), t,
                                         [](const Inv& u, double x) { return u.start < x; });
        return std::max(0.0, actBefore[size_t(at - invs.begin())] - actBefore[size_t(vi) + 1]);
    };
    // Waiting for the next invocation is late if any pending leaf's weights, behind those
    // of the pending leaves before it and the demand traffic before its first start,
    // would then arrive after that start: the first such leaf's place in `pending`, -1 if
    // none.
    auto firstLate = [&] {
        double bytes = 0;
        for (size_t j = 0; j < pending.size(); ++j) {
            const auto& [lj, tj] = pending[j];
            bytes += weightBytes(lj);
            if (std::max(dramClock, tNext) + (bytes + demandBefore(tj)) / dramBw > tj)
                return int(j);
        }
        return -1;
    };
    bool issued = false;
    while (!pending.empty()) {
        const auto [li, tStart] = pending.front();
        const LeafLayout& o = S.leaves[size_t(li)];
        const double wbytes = weightBytes(li);
        if (wbytes <= 0) {
            pending.erase(pending.begin());
            continue;
        }
        const int lateAt = firstLate();
        if (lateAt < 0) break; // can wait
        // Some leaf is late: issue the weights in order, but no more than keep the DRAM
        // busy until the next invocation (the first of them even so when it is late
        // itself). Issued all at once they would queue on the tiles' in-order LOAD engines
        // in front of the demand loads, which then wait, with the tile's LOADs in flight
        // taken, until the DRAM reaches the last of them in need order.
        if ((lateAt > 0 || issued) && dramClock >= tNext) break;
        if (tilesBusy(li, vi, tStart, v.segInv)) break; // another segment comes first there
        pending.erase(pending.begin());
        bool room = true;
        for (int t : o.tiles)
            room = room && double(buf[size_t(t)].free()) - o.mapping.weightPerTile >= reserve;
        if (!room) continue;
        if (auto e = loadWeights(li, v.segInv)) return *e;
        issued = true;
        dramClock = std::max(dramClock, v.start) + wbytes / dramBw;
    }
    return std::nullopt;
}

// Compute, then store.
std::optional<Error> Generator::emitComputeAndStore(Step& cur) {
    std::vector<ProdSlice> slices;
    for (size_t a = 0; a < cur.act.size(); ++a) {
        auto ps = emitCompute(cur, a);
        if (!ps) return ps.error();
        slices.push_back(std::move(*ps));
    }
    wstate[size_t(cur.v.layer)].fresh = false;
    ProdInv& me = prod[size_t(cur.vi)];
    me.emitted = true;
    me.slices = std::move(slices);
    return std::nullopt;
}

Result<ProdSlice> Generator::emitCompute(Step& cur, size_t a) {
    const Inv& v = cur.v;
    const LeafLayout& leaf = cur.leaf;
    const Layer& ly = cur.ly;
    const LeafMapping& m = cur.m;
    const std::int32_t layerIdx = cur.layerIdx;
    const auto& act = cur.act;
    const long long maxVol = cur.maxVol;
    const bool hasWeights = cur.hasWeights, loadsWeights = cur.loadsWeights;
    auto& inRegions = cur.inRegions;
    WeightState& ws = wstate[size_t(v.layer)];
    const Box& ob = act[a].box;
    const StageOrder order = geo.computeOrder(v.layer, ob, loadsWeights);
    std::vector<Box> st = splitBox(ob, order, maxStages);
    auto r = allocate(act[a].tile, bytesOf(ob.volume()), false, "output of " + ly.name);
    if (!r) return r.error();
    Region out = *r;
    // Compute-in-memory: the crossbars are written (PROGRAM) before the compute, at the
    // first invocation of a segment invocation when they keep the weights, else every time.
    const std::uint32_t programId = emitProgram(cur, a);
    Instruction c;
    c.op = Op::Compute;
    c.tile = act[a].tile;
    c.layer = layerIdx;
    c.bytes = out.bytes;
    c.src = c.dst = act[a].tile;
    const double busy = m.cycles - m.cim.exposedWrite; // crossbar writes are the PROGRAM's
    c.cycles = std::uint64_t(std::max(1.0, std::ceil(busy * double(ob.volume()) / double(maxVol))));
    c.lo = ob.lo;
    c.hi = ob.hi;
    for (const auto& ir : inRegions[a])
        regionRefs(c.buffers, ir, false);
    for (const auto& lr : cur.local[a]) {
        const Region& pr = prod[size_t(lr.prodInv)].slices[lr.slice].region;
        regionRefs(c.buffers, pr, false);
    }
    if (hasWeights) {
        Region& wr = ws.region[act[a].tile];
        regionRefs(c.buffers, wr, false);
    }
    regionRefs(c.buffers, out, true);
    const std::uint32_t cid = emit(c, st, order);
    if (programId) fullDep(programId, cid);
    IrWorkload& wl = irOf(act[a].workload);
    wl.cycles = c.cycles;
    wl.computeId = cid;
    guard(out, {cid});
    addRegion(act[a].workload, out, "ofmap", cid);
    if (hasWeights && ws.region[act[a].tile].workload < 0)
        addRegion(act[a].workload, ws.region[act[a].tile], "weights", ws.load[act[a].tile]);
    // Dependencies on the data it reads, at the stage it first needs.
    addComputeDeps(cur, a, st, cid, wl);
    for (auto& ir : inRegions[a]) {
        ir.readers.push_back(cid);
        release(ir);
    }
    ProdSlice ps;
    ps.tile = act[a].tile;
    ps.box = ob;
    ps.region = out;
    ps.computeId = cid;
    ps.stages = st;
    ps.order = order;
    if (leaf.writesDram) emitStore(cur, a, st, order, cid, ps);
    return ps;
}

// The PROGRAM that writes act[a]'s crossbars, when this invocation writes them (0 when it
// does not): its bytes are the weights written (the tile's programmings x one crossbar's
// weights, counted on its own box as the mapper counts it), its cycles the write time the
// tile waits for. Static weights are written as their LOAD delivers them, at the first
// invocation of a segment invocation when the leaf keeps them, else every time; a MatMul's
// operand B every time, once it has arrived.
std::uint32_t Generator::emitProgram(const Step& cur, size_t a) {
    const LeafMapping& m = cur.m;
    const bool operandB = cur.ly.kind == LayerKind::MatMul;
    if (!m.cim.used || !(cur.hasWeights || operandB) || (cur.leaf.cimPinned && !cur.loadsWeights))
        return 0;
    const Box& ob = cur.act[a].box;
    const CimTileWork work = cimBoxWork(cur.ly, hw, ob.lo[1], ob.hi[1], ob.hi[0] - ob.lo[0],
                                        ob.hi[2] - ob.lo[2], ob.hi[3] - ob.lo[3]);
    Instruction p;
    p.op = Op::Program;
    p.tile = cur.act[a].tile;
    p.layer = cur.layerIdx;
    p.bytes =
        std::uint64_t(std::llround(double(work.best.programmings) * cimCrossbarWeightBytes(hw)));
    p.src = p.dst = p.tile;
    p.cycles = std::uint64_t(std::ceil(work.exposedWrite));
    if (operandB) {
        p.lo = ob.lo;
        p.hi = ob.hi;
        const std::uint32_t id = emit(p, splitBox(ob, kActOrder, maxStages), kActOrder);
        for (const auto& wr : cur.writers[a][1])
            fullDep(wr.id, id);
        for (const auto& lr : cur.local[a])
            if (lr.input == 1) fullDep(prod[size_t(lr.prodInv)].slices[lr.slice].computeId, id);
        return id;
    }
    WeightState& ws = wstate[size_t(cur.v.layer)];
    const Box wb = weightBoxOf(cur.v.layer, ob.lo[1], ob.hi[1]);
    p.lo = wb.lo;
    p.hi = wb.hi;
    regionRefs(p.buffers, ws.region[p.tile], false);
    const std::vector<Box> stages = splitBox(wb, kWeightOrder, maxStages);
    const std::uint32_t id = emit(p, stages, kWeightOrder);
    // Crossbars are written as their weights arrive: stage j waits for the LOAD stages
    // that carry its output channels.
    const std::uint32_t lid = ws.load[p.tile];
    addDep(lid, id, lagStage(stageBoxesOf(lid), stages));
    ws.region[p.tile].readers.push_back(id);
    return id;
}

// Dependencies of act[a]'s compute cid on the data it reads, at the stage it first needs.
void Generator::addComputeDeps(Step& cur, size_t a, const std::vector<Box>& st, std::uint32_t cid,
                               IrWorkload& wl) {
    const Inv& v = cur.v;
    const Layer& ly = cur.ly;
    const auto& act = cur.act;
    const bool hasWeights = cur.hasWeights, loadsWeights = cur.loadsWeights;
    WeightState& ws = wstate[size_t(v.layer)];
    auto weightBox = [&](int k0, int k1) { return weightBoxOf(v.layer, k0, k1); };
    auto weightElems = [&](int k0, int k1) { return weightElemsOf(v.layer, k0, k1); };
    const Box& ob = act[a].box;
    for (size_t k = 0; k < ly.inputs.size(); ++k) {
        std::vector<Box> req;
        for (const auto& sb : st)
            req.push_back(window(v.layer, k, sb));
        for (const auto& wr : cur.writers[a][k]) {
            if (wr.sameCoords)
                addDep(wr.id, cid, lagStage(stageBoxesOf(wr.id), req));
            else
                fullDep(wr.id, cid);
        }
    }
    for (const auto& lr : cur.local[a]) {
        ProdSlice& ps = prod[size_t(lr.prodInv)].slices[lr.slice];
        if (geo.input(v.layer, lr.input).sameAsProducer) {
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
        const std::uint32_t lid = ws.load[act[a].tile];
        addDep(lid, cid, lagStage(stageBoxesOf(lid), req));
        ws.region[act[a].tile].readers.push_back(cid);
        wl.weights = full;
        wl.weightBytes = bytesOf(weightElems(ob.lo[1], ob.hi[1]));
        wl.weightsLoaded = loadsWeights;
    }
}

void Generator::emitStore(const Step& cur, size_t a, const std::vector<Box>& st,
                          const StageOrder& order, std::uint32_t cid, ProdSlice& ps) {
    const auto& act = cur.act;
    const Box& ob = act[a].box;
    const Region& out = ps.region;
    Instruction s;
    s.op = Op::Store;
    s.tile = act[a].tile;
    s.layer = cur.layerIdx;
    s.bytes = out.bytes;
    s.src = act[a].tile;
    s.dst = kDram;
    s.lo = ob.lo;
    s.hi = ob.hi;
    regionRefs(s.buffers, out, false);
    const std::uint32_t sid = emit(s, st, order);
    addDep(cid, sid, 1);
    ps.region.readers.push_back(sid);
    stores[size_t(cur.v.layer)].push_back({ob, sid});
    addDestination(act[a].workload, kDram);
}

// Regions whose last reader the invocation was: its own outputs nobody reads over the NoC,
// its producers' outputs, and its weights after the segment invocation's last use.
void Generator::releaseAfter(const Step& cur) {
    ProdInv& me = prod[size_t(cur.vi)];
    if (me.pending == 0)
        for (auto& ps : me.slices) {
            if (ps.region.readers.empty()) ps.region.readers.push_back(ps.computeId);
            release(ps.region);
        }
    for (int pi : cur.usedProducers)
        if (--prod[size_t(pi)].pending == 0)
            for (auto& ps : prod[size_t(pi)].slices)
                release(ps.region);
    WeightState& ws = wstate[size_t(cur.v.layer)];
    if (cur.hasWeights && --ws.remaining == 0)
        for (auto& [t, r] : ws.region)
            release(r);
}

// ---- Program: the per-tile streams are complete.
void Generator::finishProgram() {
    sendHeldInputsFirst();
    P.hardwareJson = hardwareToJson(hw).dump();
    for (const auto& l : net.layers)
        P.layers.push_back(l.name);
    for (auto& tp : P.tiles) {
        tp.instructions.shrink_to_fit();
        for (const auto& ins : tp.instructions)
            if (ins.op == Op::Load || ins.op == Op::Store)
                if (ins.src == kDram || ins.dst == kDram) R.programDramBytes += ins.bytes;
    }
    for (int t = 0; t < mesh.tiles(); ++t)
        R.peakBufferBytes.push_back(buf[size_t(t)].peak());
    const Evaluation& ev = S.evaluation;
    P.schedule = {{"delay_cycles", ev.delay},       {"dram_bytes", ev.dramBytes},
                  {"energy_pj", ev.energy.total()}, {"noc_hop_bytes", ev.nocHopBytes},
                  {"batch", m_totalBatch},          {"tree", treeToText(m_tree, net)},
                  {"model", net.sourcePath}};
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
    const size_t n = where.size();
    // The evaluator's interval of the invocation that emitted instruction `id`.
    auto span = [&](std::uint32_t id) -> const Inv& { return invs[size_t(invOf[id - 1])]; };
    std::vector<float> ready(n + 1, 0.f); // when its data is all there (its producers' ends)
    std::vector<double> rank(n + 1, 0.0);
    std::vector<std::vector<std::uint32_t>> queue(P.tiles.size()); // STORE/SEND ids, in order
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
    for (size_t t = 0; t < P.tiles.size(); ++t) {
        auto& list = P.tiles[t].instructions;
        places.clear();
        inOrder.clear();
        for (size_t k = 0; k < list.size(); ++k)
            if (list[k].engine() == Engine::Store) places.push_back(k);
        for (std::uint32_t id : queue[t])
            inOrder.push_back(std::move(list[where[id - 1].pos]));
        for (size_t k = 0; k < places.size(); ++k)
            list[places[k]] = std::move(inOrder[k]);
    }
}

} // namespace

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

} // namespace tilescope
