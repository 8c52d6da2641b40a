// What moves where when a leaf runs: the partition of its output over its tiles, the
// input window each output box needs, and the transfers that deliver them (DRAM cells
// read once and multicast; producer slices sent to the tiles whose windows meet them).
// The evaluator costs these transfers and the instruction generator emits them, so both
// count the same bytes on the same links (docs/cost-model.md §4, docs/isa.md).
#pragma once

#include "eval/dram_layout.h"
#include "mapping/mapper.h"
#include "model/network.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace tilescope {

// A box of a tensor: [lo, hi) per axis. Activations: [b, c, h, w] with b the absolute
// sample index; weights: [k, c, r, s].
struct Box {
    std::array<int, 4> lo{}, hi{};
    bool empty() const {
        for (size_t a = 0; a < 4; ++a)
            if (hi[a] <= lo[a]) return true;
        return false;
    }
    long long volume() const {
        if (empty()) return 0;
        long long v = 1;
        for (size_t a = 0; a < 4; ++a)
            v *= hi[a] - lo[a];
        return v;
    }
    Box intersect(const Box& o) const {
        Box r;
        for (size_t a = 0; a < 4; ++a) {
            r.lo[a] = std::max(lo[a], o.lo[a]);
            r.hi[a] = std::min(hi[a], o.hi[a]);
        }
        return r;
    }
    Box hull(const Box& o) const { // the smallest box holding both
        Box r;
        for (size_t a = 0; a < 4; ++a) {
            r.lo[a] = std::min(lo[a], o.lo[a]);
            r.hi[a] = std::max(hi[a], o.hi[a]);
        }
        return r;
    }
    bool contains(const Box& o) const { return o.intersect(*this) == o; }
    bool intersects(const Box& o) const {
        for (size_t a = 0; a < 4; ++a)
            if (std::min(hi[a], o.hi[a]) <= std::max(lo[a], o.lo[a])) return false;
        return true;
    }
    bool operator==(const Box&) const = default;
};

// Stages (docs/isa.md, "Dependencies at stage granularity"): a compute and its transfers
// complete in up to kMaxStages equal units, boxes cut along the axes of an order (outermost
// first). Activations go by samples, then rows, then columns, then channels, so a consumer
// can start on the first rows of the first sample; a compute whose weights dominate its
// traffic on an invocation that loads them goes by output channels, so it can start on the
// first weight slice; weights ([k, c, r, s]) by output channel.
using StageOrder = std::array<int, 4>;
inline constexpr int kMaxStages = 8;
// Stage granularity (docs/isa.md, "Stage granularity"): without a stage size (the template's
// tile.stage_bytes, 0 when absent) every instruction is cut into kMaxStages; with one, an
// instruction of `bytes` bytes (a transfer: its box's bytes; a COMPUTE: its output box's at
// the data width; a weight LOAD: its weights') into ceil(bytes / stageBytes) stages, at least
// 1 and at most kStageLimit. The generator cuts its instructions with it and the evaluator
// paces its bounds with it, so both count the same stages. splitBox may still cut fewer
// where the box has fewer elements along its axes.
inline constexpr int kStageLimit = 64;
int stageCount(std::uint64_t bytes, std::uint64_t stageBytes);
inline constexpr StageOrder kActOrder{0, 2, 3, 1};
inline constexpr StageOrder kChannelOrder{1, 0, 2, 3};
inline constexpr StageOrder kWeightOrder{0, 1, 2, 3};
// The stage boxes of b (into out, replacing it): at most maxStages, the outer axes cut first.
void splitBox(const Box& b, const StageOrder& order, int maxStages, std::vector<Box>& out);
std::vector<Box> splitBox(const Box& b, const StageOrder& order, int maxStages);
// The smallest lag k such that stage j (0-based) of a dependent, which needs the data in
// req[j], finds it delivered once producer stage k + j (1-based) is done; at most prod.size().
std::uint32_t lagStage(std::span<const Box> prod, std::span<const Box> req);

// How a consumer sees input k: its own shape [C, H, W], its channel offset in the layer's
// (concatenated) input, and whether that shape is the producer's output shape (then boxes
// map one to one; otherwise the consumer needs what producerWants() says).
struct InputGeom {
    int C = 1, H = 1, W = 1;
    int offC = 0;
    bool spatial = false;      // [C, H, W] with H, W the layer's input rows / columns
    bool proportional = false; // MatMul operand B: split with the output channels
    bool sameAsProducer = false;
};

// The geometry of every layer's inputs, and the boxes derived from a leaf's partition.
class TransferGeometry {
  public:
    TransferGeometry(const Network& net, int dataBits, LoadOrder loadOrder = LoadOrder::Auto,
                     std::uint64_t stageBytes = 0);

    const Network& network() const { return m_net; }
    int dataBits() const { return m_dataBits; }
    std::uint64_t stageBytes() const { return m_stageBytes; }
    // Stages of an instruction of `bytes` bytes, and of one moving or computing activation
    // box b (its bytes at the data width): stageCount() with the template's stage size.
    int stagesOf(std::uint64_t bytes) const { return stageCount(bytes, m_stageBytes); }
    int stagesOf(const Box& b) const { return stagesOf(bytesOf(b.volume())); }
    const InputGeom& input(int layer, size_t k) const { return m_geom[size_t(layer)][k]; }
    std::uint64_t bytesOf(long long elements) const {
        return std::uint64_t((elements * (long long)m_dataBits + 7) / 8);
    }
    // A box's partial sums, at the accumulator width (psumBits).
    std::uint64_t psumBytesOf(const Box& b) const {
        return std::uint64_t(b.volume()) * std::uint64_t(psumBits(m_dataBits)) / 8;
    }
    // Output box of partition slot t over samples [s0, s1): the mapper's ceil-sized chunks,
    // slot t = (((ib*ph + ih)*pw + iw)*pk + ik)*pc + ic (k innermost but for the members of
    // a slot whose input channels are split, LeafMapping::pc, so slots that share an input
    // are adjacent and a slot's members next to each other). Empty when the partition
    // over-splits a dimension. Every member of a slot computes its box; the root alone
    // holds it (holdsOutput).
    // A blocked mapping's tile box is the hull of its blocks.
    Box tileBox(int layer, const LeafMapping& m, int t, int s0, int s1) const;
    // Block j (0 <= j < m.blocks(), rows outermost, then columns, then channels) of slot t's
    // output over samples [s0, s1): a ceil-sized chunk of the finer partition, the tiles'
    // blocks j side by side in one band (docs/cost-model.md §2b). The tileBox when the
    // mapping is not blocked.
    // Input-channel blocks (LeafMapping::reduces) share their output box: block j's is
    // that of j / bc.
    Box blockBox(int layer, const LeafMapping& m, int t, int j, int s0, int s1) const;
    // The input channels [first, second) block j reads: a ceil-sized chunk of the layer's
    // input channels for input-channel blocks, all of them otherwise.
    std::pair<int, int> blockChannels(int layer, const LeafMapping& m, int j) const;
    // Of a mapping with input-channel parts (LeafMapping::pc): tile t's member index in its
    // slot (0: the root, which adds the others' partial sums and holds the output), and the
    // input channels [first, second) it reads (a ceil-sized chunk; all of them when pc is 1).
    static int memberOf(const LeafMapping& m, int t) { return t % m.pc; }
    static bool holdsOutput(const LeafMapping& m, int t) { return memberOf(m, t) == 0; }
    std::pair<int, int> memberChannels(int layer, const LeafMapping& m, int t) const;
    // The window of input k that tile t's output box o needs: window() cut to the tile's
    // member channels (memberChannels).
    Box memberWindow(int layer, size_t k, const LeafMapping& m, int t, const Box& o) const;
    // The window of input k that tile t's output box o needs in block j: a member's
    // (memberWindow) with input-channel parts, else the block's (blockWindow).
    Box tileWindow(int layer, size_t k, const LeafMapping& m, int t, int j, const Box& o) const {
        return m.pc > 1 ? memberWindow(layer, k, m, t, o) : blockWindow(layer, k, m, j, o);
    }
    // The window of input k that block j's output box o needs: window() cut to the block's
    // input channels; in the flash order, a MatMul's operand B (K or V) its key block's
    // keys (keyBlockWindow).
    Box blockWindow(int layer, size_t k, const LeafMapping& m, int j, const Box& o) const;
    // Attention in the flash order, operand B whole or in parts (a KV cache's past and the
    // step's keys or values, a Concat folded in front): the keys [k0, k1) of head `head`
    // (one query head; its key / value head under grouped-query attention) as part k holds
    // them, the parts' keys one after another, `keys` a head and d channels a head: rows of
    // a part in [C, H, W] (the channels of that head, the keys as rows), a flat range of a
    // flat part; empty where the part holds none of them.
    Box keyBlockWindow(int layer, size_t k, int head, int k0, int k1, int keys, int d,
                       const Box& o) const;
    // The window of input k that output box o needs, in the input's own coordinates.
    Box window(int layer, size_t k, const Box& o) const;
    // Bytes slot t of a leaf keeps of its inputs kept on chip (LayerInput::resident) for
    // every invocation over samples [0, totalBatch), b at a time: each invocation's window
    // of them, held for the whole run (docs/cost-model.md §6, "Kept on chip"). The
    // evaluator reserves them in the tile's buffer and the generator places them there.
    std::uint64_t residentBytes(int layer, const LeafMapping& m, int t, int b,
                                int totalBatch) const {
        return residentOffset(layer, m, t, b, totalBatch, totalBatch, 0);
    }
    // Of those, the bytes before input k's window of the invocation from sample s0: the
    // invocations in sample order, each one's kept inputs in input order (where the
    // generator places that window in the tile's kept region).
    std::uint64_t residentOffset(int layer, const LeafMapping& m, int t, int b, int totalBatch,
                                 int s0, size_t k) const;
    // Bytes of the layer's weights slot t of a leaf holds (its output channels' share, of
    // its member channels with input-channel parts):
    // what the tile keeps for the whole run when they are kept on chip
    // (Layer::weightsResident). The evaluator reserves them, the generator places them.
    std::uint64_t keptWeightBytes(int layer, const LeafMapping& m, int t, int b) const;
    // What output box o needs of a producer whose output is not in the input's own
    // coordinates, as boxes in the producer's [b, c, h, w] (see transfer_geometry.cpp).
    std::vector<Box> producerWants(int layer, size_t k, const Box& o) const;
    void producerWants(int layer, size_t k, const Box& o, std::vector<Box>& out) const; // appends
    // The order a compute of output box o cuts its stages in (kActOrder or kChannelOrder):
    // by channels when this invocation loads the layer's weights and, under the template's
    // load order (Hardware::loadOrder), they come after the input: always for InputsFirst,
    // never for WeightsFirst, for Auto when they outweigh its input windows. Weights kept on
    // chip are never loaded.
    StageOrder computeOrder(int layer, const Box& o, bool loadsWeights) const;
    // Weight elements of output channels [k0, k1): the layer's weights (bias included)
    // shared in proportion, so the slices add up to exactly Layer::weightBytes.
    long long weightElems(int layer, int k0, int k1) const;
    // Of those, input channels [c0, c1)'s share, so the pieces of a partition of the input
    // channels add up to weightElems(layer, k0, k1).
    long long weightElems(int layer, int k0, int k1, int c0, int c1) const;

  private:
    const Network& m_net;
    int m_dataBits;
    LoadOrder m_loadOrder;
    std::uint64_t m_stageBytes = 0;
    std::vector<std::vector<InputGeom>> m_geom;
};

// An input read from DRAM, cut along every edge of the tiles' windows: each cell is read
// once and multicast to every window (index into `windows`) that holds it. Parts no window
// needs (stride > kernel, trailing rows) travel with their neighbour cell, so the cells
// cover `ext` exactly once.
struct DramCell {
    Box box;
    std::vector<size_t> to;
};
std::vector<DramCell> dramCells(const Box& ext, const std::vector<Box>& windows);
// The same into cells[0, count), returning count: the vector and its cells' lists keep their
// capacity from call to call (cells past count are left as they are).
size_t dramCells(const Box& ext, const std::vector<Box>& windows, std::vector<DramCell>& cells);
// What an input read from DRAM for samples [s0, s1) covers: the whole tensor, or for a
// blocked leaf's block (docs/cost-model.md §2b) the hull of its windows (the rest is the
// other blocks' to read).
Box dramExtent(const InputGeom& g, int s0, int s1, const std::vector<Box>& windows, bool blocked);

// Producer output slices of one producer invocation met with the consumer tiles' wants:
// one piece per distinct (slice, intersection), sent to every consumer that wants it
// (a multicast). A slice on the consumer's own tile is read in place: it is listed in
// `local[a]` instead.
struct SliceRef {
    int tile = 0;
    Box box;
};
struct NocPiece {
    size_t slice = 0;
    Box box;
    std::vector<size_t> to; // consumer indices
};
void nocPieces(const std::vector<SliceRef>& slices, const std::vector<int>& consumerTiles,
               const std::vector<std::vector<Box>>& wants, std::vector<NocPiece>& pieces,
               std::vector<std::vector<size_t>>& local);
// The same pieces in the same order, handed to onPiece(slice, box, consumers) one at a time
// (the consumer list lives until the next call), and the in-place reads to
// onLocal(consumer, slice); allocates nothing once its per-thread scratch has grown (the
// evaluator costs pieces this way on every memo miss).
using NocPieceFn = std::function<void(size_t, const Box&, std::span<const size_t>)>;
using NocLocalFn = std::function<void(size_t, size_t)>;
void forEachNocPiece(const std::vector<SliceRef>& slices, const std::vector<int>& consumerTiles,
                     const std::vector<std::vector<Box>>& wants, const NocPieceFn& onPiece,
                     const NocLocalFn& onLocal);

} // namespace tilescope

namespace tilescope {

class Mesh;

// A leaf as placed by the evaluator: its layer, batch per invocation, tile group (a snake
// range) and the mapper's partition of it.
struct LeafPlacement {
    int layer = -1;
    int batch = 1;
    int tileBegin = 0, tileCount = 0;
    const LeafMapping* mapping = nullptr;
    bool named = false; // `mapping` is a named alternative partition (LeafWork::named)
};

// The traffic of one leaf over one segment invocation (segment batch samples, segment
// batch / batch leaf invocations), exactly as the instruction generator moves it: per-link bytes of
// its activation transfers (inputs read from DRAM or received over the NoC, outputs stored) and of
// its weights (read once per segment invocation), and the totals.
struct LeafTraffic {
    std::vector<std::pair<int, double>> actLinks, weightLinks; // (link, bytes)
    double actDram = 0;    // input bytes read from DRAM + output bytes stored
    double actDramOut = 0; // of which output bytes stored
    double weightDram = 0; // weight bytes read from DRAM
    double delivered = 0;  // bytes written into buffers by transfers (multicast copies counted)
    double weightDelivered = 0; // of which weights
    // The "max link" figures below are bytes at a NoC link's bandwidth: a link's bytes x
    // Mesh::linkSlowness (exactly its bytes but on inter-chiplet links), so / the NoC
    // bandwidth they are cycles.
    double actMaxLink = 0, weightMaxLink = 0; // busiest link of each part
    double maxLink = 0;                       // busiest link of both together
    // Busiest link of the inputs received over the NoC alone: re-partitioned ones (a
    // consumer waits for all of them) and ones in the producer's coordinates (streamed
    // stage by stage), separately.
    double nocInMaxLink = 0, nocSameMaxLink = 0;
    // Bytes the busiest tile sends for this leaf (its inputs to the consumer tiles, its
    // outputs to DRAM): a tile's STORE/SEND engine moves one transfer at a time, each at
    // most at its route's slowest link's bandwidth, so these serialise however many links
    // they use (each transfer's bytes x Mesh::routeSlowness).
    double maxEgress = 0;
    // The producer's side of the same engines: per input received over the NoC, the bytes
    // its busiest producer tile sends for this leaf, and the bytes this leaf's busiest tile
    // stores (both x Mesh::routeSlowness). A producer feeding several consumers (a residual
    // branch, an inception block's branches) sends to them one after another: the evaluator
    // sums its consumers' sentByInput with its own storedMax (docs/cost-model.md §5).
    std::vector<double> sentByInput;
    // The same at the crowded links' pace (each piece's time in nocPaced below, added per
    // producer tile): what a producer that sends ahead of its T cut waits for
    // (docs/cost-model.md §5, "Sends ahead at the links' pace").
    std::vector<double> pacedByInput;
    // Per input received over the NoC, the bytes its busiest receiving tile takes in from
    // all of the producer's tiles.
    std::vector<double> receivedByInput;
    double storedMax = 0;
    // The same for the inputs received over the NoC, each piece paced by the slowest link
    // of its route, where it shares the bandwidth with the other tiles' SENDs while they
    // have bytes left there; a tile's pieces one after another, held up by the others'
    // bytes on any one link once (docs/cost-model.md §5, "Held up once").
    double nocPaced = 0;
    // The busiest sending tile's time per piece (its pieces' mean, in bytes at a link's
    // full bandwidth; one piece, so not scaled with the invocations): the consumer fed
    // last receives its piece over that long, stage by stage (docs/cost-model.md §5).
    double nocPacedPiece = 0;
    // The work of costing the period: its NoC pieces and their routes' links (each
    // multicast tree's links once), what a new leaf's cost grows with on a large mesh.
    long long pieces = 0, pieceLinks = 0;
    // DRAM bytes per side (indexed by Dir), for templates that give each side its own
    // controller: a STORE on its tile's nearest side, a LOAD split evenly over the nearest
    // sides of its destinations, both over every side where memory is interleaved
    // (Mesh::dramSidesOf, as the simulator charges them).
    std::array<double, 4> actSide{}, weightSide{};
    double actHop = 0, weightHop = 0; // bytes x links of each part
    // Of which on inter-chiplet links (Mesh::crossesChiplet; 0 without chiplets).
    double actInterHop = 0, weightInterHop = 0;
    // Per input, bytes of the NoC pieces received (each once, whatever its fan-out): those
    // from tiles outside this leaf's group (they cross its boundary), those that leave the
    // producer's group (they cross the producer's), and those between tiles of this group.
    std::vector<double> nocInByInput, nocOutOfProducer, nocInsideGroup;
    // Input-channel parts (LeafMapping::pc): the partial sums the members send their roots.
    double partialSumBytes = 0;
    // Per input received over the NoC, how the leaf's first invocation keeps pace with its
    // producer's (the generator's stage dependencies, lagStage, on the same boxes): it can
    // start once `lead` of the producer's compute has run and ends no sooner than `tail` of
    // its own time after the producer's end. 1 and 1 wait for all of it (inputs read from
    // DRAM or re-partitioned: a window on the producer's channels, a folded reshape).
    struct Pace {
        float lead = 1, tail = 1;
    };
    std::vector<Pace> pace;
    int invocations = 1;
    // Stages (stageCount) of its largest weight LOAD (resident weights; 0 without any) and of
    // its largest SEND received: how finely its weights arrive and its exchange follows the
    // producers, in the evaluator's pacing bounds (docs/cost-model.md §5).
    int weightStages = 0;
    int sendStages = kMaxStages;
    // Its weight LOADs (resident weights, one per output-channel range) in the order the
    // program needs them: their bytes, their routes' slowness (Mesh::dramSlowness), stages
    // (stageCount), DRAM sides (Mesh::dramSidesOf) and links, [linkFrom, linkTo) of
    // weightLoadLinks, each link once. The replay's DRAM serves each at its route's
    // bandwidth, however many share a link there (docs/cost-model.md §5, "Weights queued on
    // shared links").
    struct WeightLoad {
        double bytes = 0, slowness = 1;
        int stages = 1, sides = 1;
        std::uint32_t linkFrom = 0, linkTo = 0;
    };
    std::vector<WeightLoad> weightLoads;
    std::vector<int> weightLoadLinks;
    // The share of its LOAD's bytes each of weightLoadLinks carries (Mesh::dramLinkShares:
    // 1 but where memory is interleaved over the DRAM ports).
    std::vector<double> weightLoadShares;
    // DRAM runs (docs/cost-model.md §4b), for a template with a run model only
    // (Hardware::hasDramRuns): per layout, the runs of each input read from DRAM and of the
    // outputs stored, and what they cost beyond their bytes (runOverheadBytes), in all and
    // per side; the weights' (one run per LOAD, laid out offline in load order) apart, those
    // streamed with blocks among the activations'.
    struct LayoutRuns {
        std::array<double, kLayoutCount> runs{}, extra{};
        std::array<std::array<double, 4>, kLayoutCount> side{};
    };
    std::vector<LayoutRuns> inRuns; // per input; all zero unless read from DRAM
    LayoutRuns outRuns;
    double weightRuns = 0, weightExtra = 0, streamedRuns = 0, streamedExtra = 0;
    std::array<double, 4> weightSideExtra{}, streamedSideExtra{};
    // Set on the evaluator's copy once the tensors' layouts are planned: actDram,
    // actDramOut, weightDram and the sides then include the runs' cost (the DRAM's time, in
    // bytes at its bandwidth), and these hold the bytes alone.
    bool runsCharged = false;
    double actDramBytes = 0, weightDramBytes = 0;
    double dramBytes() const {
        return runsCharged ? actDramBytes + weightDramBytes : actDram + weightDram;
    }
};

// producers[k]: the placement of input k's producer when it arrives over the NoC, null
// when it is read from DRAM (network inputs and DRAM-routed feature maps). Bit k of
// paceInputs asks for input k's LeafTraffic::pace (left at 1, 1 otherwise): the evaluator
// asks only where the leaf can keep pace with its producer (docs/cost-model.md §5).
// Built in two steps: the activation traffic repeats with a period of invocations (a NoC
// producer's invocations line up the same way again after lcm(b, its batch) samples), so
// one period is costed (invocations = the period) and scaled to a segment invocation.
// With a run model (Hardware::hasDramRuns) the runs are counted in every layout, the DRAM
// tensors holding totalBatch samples.
LeafTraffic leafTrafficPeriod(const TransferGeometry& geo, const Mesh& mesh,
                              const LeafPlacement& leaf,
                              const std::vector<const LeafPlacement*>& producers, bool writesDram,
                              std::uint32_t paceInputs = 0, int totalBatch = 0);
LeafTraffic scaleTraffic(const Mesh& mesh, const LeafTraffic& period, int invocations);
// The same in two steps, so that a placement costed once serves every writesDram and
// paceInputs the evaluator asks of it (figures identical to leafTrafficPeriod's): the base
// is the period without stores, paced for the inputs `paced` names, with each tile's
// STORE/SEND bytes before stores; finishPeriod probes the pace of inputs not yet paced (into
// the base) and adds the stores. Stores can be added after the fact only when they are the
// period's last transfers, one invocation of an unblocked leaf (storesComeLast); otherwise a
// leaf that writes DRAM takes leafTrafficPeriod.
struct LeafTrafficBase {
    LeafTraffic traffic;
    std::uint32_t paced = 0;
    // Each sending tile's STORE/SEND engine time (tile, bytes x slowness), the tiles that send.
    std::vector<std::pair<int, double>> egress;
};
bool storesComeLast(const LeafPlacement& leaf, const std::vector<const LeafPlacement*>& producers);
LeafTrafficBase leafTrafficBase(const TransferGeometry& geo, const Mesh& mesh,
                                const LeafPlacement& leaf,
                                const std::vector<const LeafPlacement*>& producers,
                                std::uint32_t paceInputs, int totalBatch);
LeafTraffic finishPeriod(const TransferGeometry& geo, const Mesh& mesh, const LeafPlacement& leaf,
                         const std::vector<const LeafPlacement*>& producers, LeafTrafficBase& base,
                         bool writesDram, std::uint32_t paceInputs, int totalBatch);

} // namespace tilescope
