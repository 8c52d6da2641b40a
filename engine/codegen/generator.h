// The instruction generator's working state, private to engine/codegen: the Generator class
// that generator.cpp (the schedule walk, emission primitives, the finished program),
// generator_weights.cpp, generator_inputs.cpp and generator_compute.cpp implement, and the
// records it keeps per invocation, buffer region and weight load.
#pragma once

#include "codegen/codegen.h"
#include "codegen/tile_buffer.h"
#include "hw/mesh.h"
#include "mapping/cim.h"

#include <array>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tilescope {

// A region of a tile buffer the generator placed: its extents and the instructions that
// read it (their last ones are what a later writer of the same bytes waits for).
struct Region {
    int tile = 0;
    std::string_view what;               // what it holds (a Generator::m_labels entry)
    std::uint64_t offset = 0, bytes = 0; // offset of the first extent; total bytes
    TileBuffer::Extents ext;
    std::vector<std::uint32_t> readers;
    int workload = -1;
    int regionIndex = -1; // index in the workload's buffers
};

// A producer tile's output slice of one invocation, alive until its consumers read it.
struct OutputSlice {
    int tile = 0;
    Box box;
    Region region;
    std::uint32_t computeId = 0;
    std::vector<Box> stages; // the compute's stage boxes (producer coordinates)
    StageOrder order{};
};

// What one invocation produced: its output slices, until its NoC consumers have read them.
struct InvocationOutput {
    bool emitted = false;
    int pending = 0; // NoC consumer invocations still to read it
    std::vector<OutputSlice> slices;
};

// One leaf invocation: samples [first, last] of a layer, on the evaluator's clock.
struct Invocation {
    int layer = -1, leaf = -1;
    int first = 0, last = 0;
    double start = 0, end = 0;
    int segInv = 0;
    int block = 0; // of a blocked leaf: the block its tiles work on (docs/cost-model.md §2b)
};

// Where an instruction sits: its tile's stream and its position in it.
struct InstructionPlace {
    std::int32_t tile;
    std::uint32_t pos;
};
// The stage orders an instruction may use; it keeps its index into these (one byte).
inline constexpr std::array<StageOrder, 3> kOrders{kActOrder, kChannelOrder, kWeightOrder};

// A layer's weights in the tile buffers for one segment invocation.
struct WeightState {
    int segInv = -1;
    int remaining = 0;
    bool fresh = false;                // no invocation has used them yet
    bool kept = false;                 // kept on chip (Layer::weightsResident): never loaded
    std::map<int, Region> region;      // tile -> region
    std::map<int, std::uint32_t> load; // tile -> LOAD that delivers its slice
};
// An input-channel block's output: the partial sums one tile keeps from a layer's first
// block of an output box to its last (LeafMapping::reduces), and the compute that last
// added to them.
struct PartialSums {
    Region region;
    std::uint32_t lastCompute = 0;
};
// A STORE of a layer's output, for the read-after-write dependencies of its DRAM readers.
struct StoreRec {
    Box box;
    std::uint32_t id;
};

// A tile with work in the invocation being emitted; `workload` indexes its IR entry, `slot`
// is its index in the leaf's group (TransferGeometry's partition slot, member included).
struct ActiveTile {
    int tile;
    Box box;
    int workload;
    int slot;
};
// A SEND of layer `layer`'s box b, `bytes` from tile `from` to tile `to` (its multicast
// destinations and buffer references to add).
inline Instruction sendOf(int from, int to, std::int32_t layer, std::uint64_t bytes, const Box& b) {
    Instruction send;
    send.op = Op::Send;
    send.tile = send.src = from;
    send.dst = to;
    send.layer = layer;
    send.bytes = bytes;
    send.lo = b.lo;
    send.hi = b.hi;
    return send;
}
// An instruction that writes a compute's input region (a LOAD or a SEND).
struct InputWriter {
    std::uint32_t id;
    bool sameCoords; // its stage boxes are in the input's coordinates
};
// QK^T's Q rows in the flash order (LeafMapping::keepsQuery): loaded with a head's first key
// block of a query block and read in place by its later ones; the LOADs that wrote them.
struct KeptQuery {
    Region region;
    std::vector<InputWriter> writers;
};
// A producer slice a compute reads in place on its own tile, for input `input`.
struct LocalRead {
    int prodInv;
    size_t slice;
    size_t input;
};
// Over the NoC: one producer slice's piece, sent to the active tiles in `to`.
struct NocGroup {
    int pinv;
    size_t slice;
    Box x;
    std::vector<size_t> to;
};

// One leaf invocation being emitted: its active tiles and what their computes read.
struct Step {
    int vi;
    const Invocation& v;
    const LeafLayout& leaf;
    const Layer& ly;
    const LeafMapping& m;
    int s0, s1;
    std::int32_t layerIdx;
    std::vector<ActiveTile> act{};
    long long maxVol = 1;
    bool hasWeights = false, loadsWeights = false;
    std::vector<std::vector<std::vector<InputWriter>>> writers{};
    std::vector<std::vector<LocalRead>> local{};
    std::vector<std::vector<Region>> inRegions{};
    // Per active tile, its windows of the inputs kept on chip (LayerInput::resident).
    std::vector<std::vector<BufferRef>> kept{};
    std::set<int> usedProducers{};
    // The input channels of an input-channel block's weights (none: all of them).
    std::optional<std::pair<int, int>> weightChannels{};
};

// The program generator: walks the schedule's leaf invocations in the evaluator's order and
// emits their LOAD/COMPUTE/SEND/STORE instructions into the per-tile streams.
class Generator {
  public:
    Generator(EvalContext& ctx, const RATree& tree, int totalBatch, const EvalOptions& evalOpt,
              const CodegenOptions& opt, bool prefetch)
        : m_ctx(ctx), m_tree(tree), m_totalBatch(totalBatch), m_evalOpt(evalOpt), m_opt(opt),
          m_prefetch(prefetch), m_net(ctx.network()), m_hw(ctx.hardware()), m_mesh(m_hw),
          m_layerCount(int(m_net.layers.size())),
          m_geometry(m_net, m_hw.dataBits, m_hw.loadOrder, std::uint64_t(m_hw.stageBytes)) {}

    Result<CodegenResult> run();

  private:
    // Schedule walk.
    void collectInvocations();
    // The invocations of `layer` over samples [s0, s1] (inclusive); of a blocked layer, those
    // of block `block`, and with `across` its neighbours too (a consumer streaming from the
    // stage before it in an S cut reads blocks block - 1 to block + 1).
    std::vector<int> overlapping(int layer, int s0, int s1, int block, bool across = false) const;
    // Whether the leaf's input k streams from the stage before it in an S cut.
    static bool across(const LeafLayout& leaf, size_t k) {
        return leaf.streamAcross && leaf.streamInput == int(k);
    }
    void countNocReaders();
    // Emission primitives.
    // Appends ins with the stage boxes `stages` (splitBox of its range in `order`, at most
    // `budget` of them: stageCount of its bytes, TransferGeometry::stagesOf).
    std::uint32_t emit(Instruction ins, const std::vector<Box>& stages, const StageOrder& order,
                       int budget);
    // A DRAM LOAD/STORE's descriptor: the runs of its box of a tensor of `shape` in
    // `layout` (kLayoutCount: weights, one run in their load order), as the evaluator charges
    // them (docs/cost-model.md §4b); nothing without a run model.
    void describeDram(Instruction& ins, int layout, const std::array<int, 4>& shape) const;
    int inputLayout(int layer, size_t k) const;
    int outputLayout(int layer) const;
    Instruction& at(std::uint32_t id) {
        const InstructionPlace place = m_where[size_t(id - 1)];
        return m_program.tiles[size_t(place.tile)].instructions[place.pos];
    }
    // Its stage boxes, splitBox of its range in its order (valid until the next call: a SEND
    // multicast to many consumers is asked once per consumer, so the last few thousand
    // instructions' boxes are kept).
    const std::vector<Box>& stageBoxesOf(std::uint32_t id);
    // Adds `on` to `who`'s dependencies, or raises the stage of the one there.
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
    // Weights of output channels [k0, k1), of input channels `channels` only when given
    // (an input-channel block's: TransferGeometry::blockChannels).
    Box weightBoxOf(int layer, int k0, int k1,
                    std::optional<std::pair<int, int>> channels = std::nullopt) const;
    long long weightElemsOf(int layer, int k0, int k1,
                            std::optional<std::pair<int, int>> channels = std::nullopt) const {
        if (channels)
            return m_geometry.weightElems(layer, k0, k1, channels->first, channels->second);
        return m_geometry.weightElems(layer, k0, k1);
    }
    // Weights (generator_weights.cpp).
    // block >= 0: the weights of that block only (LeafMapping::streamsWeights).
    std::optional<Error> loadWeights(int leafIdx, int segInv, int block = -1);
    std::optional<Error> prefetchWeights(const Step& cur);
    bool tilesBusy(int li, int vi, double until, int segInv) const;
    // Phases of one invocation.
    std::optional<Error> emitInvocation(int vi);
    std::optional<Error> activeTiles(Step& cur);
    // Its inputs (generator_inputs.cpp).
    Result<std::vector<Region>> allocateInputs(const Step& cur,
                                               const std::vector<std::uint64_t>& need,
                                               const std::string& what);
    std::optional<Error> emitInput(Step& cur, size_t k);
    std::optional<Error> reserveKeptInputs();
    std::optional<Error> reserveKeptWeights();
    void readKeptInput(Step& cur, size_t k, const std::vector<Box>& win);
    // A later key block's Q, read where its query block's first key block loaded it.
    void readKeptQuery(Step& cur, size_t k);
    std::optional<Error> emitDramInputs(Step& cur, size_t k, const std::vector<Box>& win,
                                        const std::string& from);
    std::optional<Error> emitNocInputs(Step& cur, size_t k, const std::vector<Box>& win,
                                       const std::string& from);
    // Its computes, crossbar writes and stores (generator_compute.cpp).
    std::optional<Error> emitComputeAndStore(Step& cur);
    Result<OutputSlice> emitCompute(Step& cur, size_t a);
    // The flash order's running statistics of act[a]'s rows (LeafMapping::statsPerTile):
    // allocated at a head's first key block of a query block, kept to its last.
    Result<PartialSums*> statistics(const Step& cur, size_t a);
    void statisticsWritten(const Step& cur, size_t a, std::uint32_t computeId);
    // Input region ir of act[a] read by computeId: true when it is a kept Q (then released
    // only after the head's last key block of the query block).
    bool keepsQuery(const Step& cur, size_t a, const Region& ir, std::uint32_t computeId);
    // The crossbar writes of act[a]'s tile (core -1), or of one of its cores.
    std::uint32_t emitProgram(const Step& cur, size_t a, const CimTileWork& work, int core);
    // Output-channel binding: each core's PROGRAM and COMPUTE but core 0's (which the caller
    // emits as the tile's COMPUTE), as copies of c; returns their COMPUTE ids.
    std::vector<std::uint32_t> emitOtherCores(const Step& cur, size_t a, const CimTileWork& work,
                                              const Instruction& c, const std::vector<Box>& st,
                                              const StageOrder& order, int budget);
    void addComputeDeps(Step& cur, size_t a, const std::vector<Box>& st, std::uint32_t cid,
                        IrWorkload& wl);
    void emitStore(const Step& cur, size_t a, const std::vector<Box>& st, const StageOrder& order,
                   std::uint32_t cid, OutputSlice& ps);
    // Input-channel parts (LeafMapping::pc): each member's SEND of its partial sums to its
    // slot's root and the root's add; the roots' slices into `slices`, stored when the leaf
    // writes DRAM.
    std::optional<Error> reducePartialSums(Step& cur, std::vector<OutputSlice>& computed,
                                           std::vector<OutputSlice>& slices);
    // The input channels of act[a]'s weights: an input-channel block's, a member's (none:
    // all of them).
    std::optional<std::pair<int, int>> weightChannelsOf(const Step& cur, size_t a) const;
    void releaseAfter(const Step& cur);
    // The finished streams.
    void finishProgram();
    void sendHeldInputsFirst();

    std::uint64_t bytesOf(long long elements) const { return m_geometry.bytesOf(elements); }
    std::uint64_t psumBytesOf(const Box& b) const { return m_geometry.psumBytesOf(b); }
    // A layer's weights in bytes, as the prefetch clock counts them.
    double layerWeightBytes(int layer) const {
        return double(m_net.layers[size_t(layer)].weightBytes) * m_hw.dataBits / 8.0;
    }
    Box window(int l, size_t k, const Box& o) const { return m_geometry.window(l, k, o); }
    Box tileBox(const LeafLayout& leaf, int t, int s0, int s1) const {
        return m_geometry.tileBox(leaf.layer, leaf.mapping, t, s0, s1);
    }

    // The workload act[a].workload names: its IR entry, or the sink.
    IrWorkload& irOf(int workload) {
        return m_opt.withIr ? m_workloads[size_t(workload)] : m_irSink;
    }

    EvalContext& m_ctx;
    const RATree& m_tree;
    const int m_totalBatch;
    const EvalOptions& m_evalOpt;
    const CodegenOptions& m_opt;
    const bool m_prefetch; // prefetch a segment's weights (else load them at first use)
    const Network& m_net;
    const Hardware& m_hw;
    const Mesh m_mesh;
    CodegenResult m_result;                             // what run() returns
    const ScheduleLayout& m_schedule = m_result.layout; // the evaluator's analysed schedule
    const int m_layerCount;
    const TransferGeometry m_geometry;

    // The schedule walk: leaf invocations in issue order, their indices per layer, and per
    // invocation what it produced.
    std::vector<Invocation> m_invocations;
    std::vector<std::vector<int>> m_invocationsOfLayer;
    std::vector<InvocationOutput> m_outputs;

    Program& m_program = m_result.program;
    // Per instruction (index id - 1): where it sits, the invocation that emitted it (index
    // in m_invocations), its stage order (index into kOrders) and its stage budget.
    std::vector<InstructionPlace> m_where;
    std::vector<int> m_invocationOf;
    std::vector<std::uint8_t> m_orderOf, m_budgetOf;
    std::unordered_map<std::uint32_t, std::vector<Box>> m_stageBoxes; // stageBoxesOf's
    // addDep's index of the dependencies of the instruction it last added to (m_depsOf):
    // per instruction id `on`, where it sits in that list (m_depAt) when m_depStamp[on] is
    // m_depsOf. A compute reading the SENDs of thousands of tiles gets thousands, one at a
    // time, and a scan of the list per dependency would make that quadratic.
    std::uint32_t m_depsOf = 0;
    std::vector<std::uint32_t> m_depStamp, m_depAt;
    int m_currentInvocation = -1;
    std::vector<std::uint64_t> m_loadBytes; // per tile: bytes its DRAM LOADs read so far
    std::set<std::string> m_labels;         // what buffer regions hold (TileBuffer's views of them)
    std::vector<TileBuffer> m_buffers;      // per tile
    std::vector<IrWorkload>& m_workloads = m_result.workloads; // empty unless m_opt.withIr
    IrWorkload m_irSink; // the current invocation's figures when the IR is not kept

    std::vector<WeightState> m_weightState;                   // per layer
    std::map<std::pair<int, int>, PartialSums> m_partialSums; // (layer, tile)
    std::map<std::pair<int, int>, PartialSums> m_statistics;  // (layer, tile)
    std::map<std::pair<int, int>, KeptQuery> m_keptQuery;     // (layer, tile)
    // Inputs kept on chip: (layer, tile) -> the region holding every invocation's windows,
    // reserved before anything else and never released.
    std::map<std::pair<int, int>, Region> m_kept;
    std::vector<std::vector<StoreRec>> m_stores; // per layer: its STOREs so far
    // Weight prefetch: per segment the segment invocation it was started for, per tile the
    // invocations using it (in order), the leaves (with their first starts) whose weights
    // are not issued yet, the buffer room kept for activations, when the DRAM is busy until
    // on the evaluator's clock, and the activation DRAM bytes of the invocations before each.
    std::vector<int> m_segmentStarted;
    std::vector<std::vector<int>> m_invocationsOfTile;
    std::vector<std::pair<int, double>> m_pendingWeights;
    double m_reserve = 0, m_dramClock = 0;
    std::vector<double> m_activationBytesBefore;
};

} // namespace tilescope
