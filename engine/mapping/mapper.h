// Intra-layer engine (docs/method.md §3): partitions a layer over a tile group (factors over output
// channels K, batch B, output rows H and columns W whose product is the group size) and,
// per tile, chooses the PE-array tiling and loop order that minimise buffer traffic.
// Results are memoised by (layer, group size, batch): the annealer revisits them constantly.
#pragma once

#include "hw/hardware.h"
#include "model/network.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace tilescope {

// A leaf's mapping onto compute-in-memory tiles (mapping/cim.h); `used` is false on a
// MAC-array tile and for layers without a weight matrix (pooling, vector ops).
struct CimLeafMapping {
    bool used = false;
    Count blocksPerTile = 0;         // crossbar blocks of one tile's weights
    int crossbars = 0;               // blocks a tile holds programmed at once
    Count footprint = 0;             // of those, what its blocks take (one tile, the most)
    Count passes = 0;                // crossbar passes of a tile (its busiest loop nest)
    Count programmings = 0;          // one invocation from empty crossbars, all tiles
    Count programmingsDefault = 0;   // the same under the default template's loop order
    Cycles computeCycles = 0;        // crossbar passes of the slowest tile
    Cycles writeCycles = 0;          // its programmings
    Cycles exposedWrite = 0;         // the part of LeafMapping::cycles spent waiting for writes
    Bytes psumBytes = 0;             // partial-sum buffer the chosen order needs
    Bytes inputReads = 0;            // its memory accesses, all tiles (cimInputReads)
    std::string order, defaultOrder; // loops outermost first, e.g. "c s784 r"
    // Row / column blocks whose crossbar blocks fit the crossbars: the weights stay written
    // from one block to the next, so only each tile's first block of an invocation programs
    // them (docs/cost-model.md §8, "Blocked leaves"). Other blocked leaves program per block.
    bool keptAcrossBlocks = false;
};

struct LeafMapping {
    int pk = 1, pb = 1, ph = 1, pw = 1; // partition factors; pk*pb*ph*pw*pc == group size
    // Input-channel parts (docs/cost-model.md §2): each output slot's reduction (a
    // convolution's or fully connected layer's input channels) split over pc tiles, the
    // slot's members, next to each other (slot-major, member innermost). Each member computes
    // the slot's output over its ceil(C / pc) channels into partial sums at the accumulator
    // width (kPsumBits); the members after the first send theirs to the first (the slot's
    // root) over the NoC, which adds them in its vector unit and holds the slot's output.
    int pc = 1;
    // Of those cycles, the root's add of the members' partial sums (0 without parts).
    double reduceCycles = 0;
    // Temporal blocking (docs/cost-model.md §2b): a tile whose slice does not fit its buffer
    // works through it in blocks, one after another: its output channels in bk blocks, its
    // rows in bh, its columns in bw (TransferGeometry::blockBox). Each block reads its
    // input window (halo included) and operand B from DRAM and stores its output there.
    // Row and column blocks keep the tile's weights resident; output-channel blocks of a
    // layer with weights stream them, each block loading its own channels' weights
    // (streamsWeights()). Input-channel blocks (bc, a convolution's or fully connected
    // layer's reduction) keep the tile's whole output as partial sums (ofmapPerTile is
    // then their bytes at the accumulator width, kPsumBits) while each block brings its
    // input channels and their weights; the output is stored after the last. All 1 when
    // the slice fits.
    int bk = 1, bh = 1, bw = 1, bc = 1;
    // Attention's flash order (docs/cost-model.md §2b, "Key blocks"): a streaming chain
    // QK^T -> Softmax -> AV cut into query blocks (bh) and key blocks (bk of QK^T and the
    // Softmax, bc of AV), the Softmax keeping each row's running statistics (statsPerTile,
    // one block's rows) and AV its output as partial sums over the key blocks.
    bool flash = false;
    Bytes statsPerTile = 0;
    // QK^T in the flash order: a query block's Q rows (input 0, from DRAM) are loaded with
    // its first key block and kept on the tile to its last.
    bool keepsQuery = false;
    // Multi-head attention in the flash order: the key blocks are cut within each head,
    // head by head (bk = heads x a head's key blocks, as bc of AV), so a head's Q rows, its
    // statistics and the partial sums it adds to stay within its own blocks.
    int heads = 1;
    // Of a flash member's blocks j (key blocks innermost): the first and the last key
    // block of a head within its query block.
    bool firstKeyBlock(int j) const { return j % (bk / heads) == 0; }
    bool lastKeyBlock(int j) const { return j % (bk / heads) == bk / heads - 1; }
    // Whether block j reads input k from DRAM: not the kept Q of a later key block.
    bool readsInput(size_t k, int j) const { return !(keepsQuery && k == 0 && !firstKeyBlock(j)); }
    double blockShare = 1;    // of `cycles`, a full block's share (1 when not blocked)
    Cycles cycles = 0;        // compute time of one invocation (slowest tile)
    double peUtilisation = 0; // useful MACs / (cycles x MACs of the group)
    Count macs = 0;           // MACs of one invocation (all tiles)
    Count vectorOps = 0;      // vector-unit element operations of one invocation
    // Per tile; of a blocked mapping, per block (what one block holds: a tile keeps two
    // blocks at once, one computing while the next loads and the last stores).
    Bytes ifmapPerTile = 0;      // input slice resident per tile (with halo)
    Bytes operandBPerTile = 0;   // MatMul: operand B slice per tile
    Bytes weightPerTile = 0;     // static weights resident per tile
    Bytes ofmapPerTile = 0;      // output slice per tile
    Bytes bufferAccessBytes = 0; // global-buffer reads + writes by the PE array, all tiles
    Bytes bufferWriteBytes = 0;  // of those, the writes (the outputs), all tiles
    // Bytes read from and written to each in-tile storage level (Hardware::levels, in its
    // order), one invocation, all tiles (docs/cost-model.md §2c); 0 without levels.
    std::array<double, kMaxStorageLevels> levelReads{}, levelWrites{};
    int inputMulticast = 1;  // tiles that need the same input slice
    int weightMulticast = 1; // tiles that need the same weight slice
    // Least buffer<->array traffic of one tile (each operand once, the input only where
    // its windows touch it, or the pebble bound on the array's local storage when larger:
    // docs/cost-model.md §2a); on MAC-array tiles bufferAccessBytes / n never falls below
    // it (compute-in-memory tiles charge only the tiles with work, and keep their weights
    // in the crossbars). The report's array level uses a partition-independent floor
    // instead (mapping/iobound.h arrayLowerBoundBytes).
    Bytes ioLowerBound = 0;
    std::string tiling; // human-readable: loop order and block sizes
    // Contiguous DRAM runs (DMAs) of the tiles' input windows, one invocation, all tiles:
    // a window row narrower than the tensor is one run per row segment (mapping/cim.h).
    Count inputDmaRuns = 0;
    CimLeafMapping cim;

    int groupSize() const { return pk * pb * ph * pw * pc; }
    bool splitsChannels() const { return pc > 1; }
    int blocks() const { return bk * bh * bw * bc; }
    bool blocked() const { return blocks() > 1; }
    // Input-channel blocks: block j adds its channels' share to partial sums kept on the
    // tile; only the last block of each output block (j % bc == bc - 1) stores.
    bool reduces() const { return bc > 1; }
    bool storesAfter(int block) const { return block % bc == bc - 1; }
    // Output- or input-channel blocks of a layer with weights: weightPerTile is one block's,
    // loaded with the block and double-buffered like its activations, not resident.
    bool streamsWeights() const { return (bk > 1 || bc > 1) && weightPerTile > 0; }
    // The weights a tile keeps resident for the whole leaf (none when they stream).
    Bytes residentWeightPerTile() const { return streamsWeights() ? 0.0 : weightPerTile; }
    // The per-tile working set the buffer holds besides resident weights: one slice, or two
    // blocks (with their streamed weights).
    Bytes activationPerTile() const {
        const Bytes streamed = streamsWeights() ? weightPerTile : 0.0;
        return (ifmapPerTile + operandBPerTile + ofmapPerTile + statsPerTile + streamed) *
               (blocked() ? 2.0 : 1.0);
    }
    // Everything a tile's buffer holds for the leaf: resident weights and the working set.
    Bytes bufferPerTile() const { return residentWeightPerTile() + activationPerTile(); }
    // What the blocks split, as the views and the report name it: "8 row blocks",
    // "4 x 2 row x column blocks"; "" when not blocked.
    std::string blockLabel() const;
    // The partition as the views, the report and the program show it: "K4 B1 H2 W2" (with
    // its blocks: "K4 B1 H2 W2, 8 row blocks").
    std::string partitionLabel() const {
        std::string s = "K" + std::to_string(pk) + " B" + std::to_string(pb) + " H" +
                        std::to_string(ph) + " W" + std::to_string(pw);
        if (pc > 1) s += " C" + std::to_string(pc);
        if (blocked()) {
            s += ", ";
            s += blockLabel();
        }
        return s;
    }
};

// A strided convolution reading its input from DRAM with its stride larger than its kernel:
// the rows and columns no window needs travel with their neighbour's window, so the whole
// tensor is read once (the generator's DRAM cells, docs/isa.md), and a tile holds n x s rows
// of input for n output rows, not (n - 1) x s + k. The factor on the ifmap per tile of a
// partition with `ph` x `pw` output parts (1 for other layers, and on compute-in-memory
// tiles, whose window already holds the gaps: evaluatePartition).
double dramGapShare(const Layer& l, TileArch arch, int ph, int pw);

// Partial sums of input-channel blocks are kept at the accumulator width (32 bits, or the
// data width when wider): what a tile's buffer holds of its output between the blocks.
inline constexpr int kPsumBits = 32;
// The bits of one partial sum on a template of `dataBits`.
inline int psumBits(int dataBits) {
    return dataBits > kPsumBits ? dataBits : kPsumBits;
}
// Whether a layer's reduction can be cut into input-channel blocks: a convolution without
// groups or a fully connected layer, with weights and one input.
bool reducible(const Layer& l);
// One input-channel block of `l` cut into `bc` of them: the layer over ceil(C / bc) input
// channels with that share of its weights (rounded up). The mapper costs a block as this
// layer and the generator writes a compute-in-memory tile's crossbars with it.
Layer reductionCut(const Layer& l, int bc);

class Mapper {
  public:
    Mapper(const Network& net, const Hardware& hw);

    // Best mapping of `layer` for `batch` samples on `tiles` tiles (memoised). A slice that
    // does not fit the buffer is blocked in time, the blocking chosen by the objective.
    const LeafMapping& map(int layer, int tiles, int batch);
    // The objective blocked mappings are chosen by (energy^n x delay^m; 1, 1 until set).
    // Mappings already handed out stay valid: each objective has its own memo.
    void setObjective(double n, double m);
    // Layers that run one after another on the same tiles, each reading the one before's
    // output (a T cut's consecutive leaves), streaming row blocks (docs/cost-model.md §2b):
    // one tile partition and one row blocking for all, each member's block fitting beside
    // the one before's output block; the pick by the objective. Empty when none fits.
    // Attention's QK^T -> Softmax -> AV also tries key blocks (the flash order).
    // Memoised; the mappings stay valid as those of map().
    const std::vector<LeafMapping>& chainMapping(const std::vector<int>& layers, int tiles,
                                                 int batch);
    // Two stages of an S cut on their own tiles, `cons` reading `prod`'s output, streaming row
    // blocks from one to the other (docs/cost-model.md §2b, "Streaming between the stages of
    // an S cut"): each its own tile partition (the best few), both the same number of row
    // blocks, the fewest at which each fits with two blocks resident and the producer with
    // one output block more (a block's output waits for the consumer's block after it); the
    // least summed cost among the candidates `streams` accepts (it checks the blocks'
    // geometry; at most a few are tried). Empty when none fits or streams. Memoised; the
    // mappings stay valid as those of map().
    const std::vector<LeafMapping>&
    stageMapping(int prod, int prodTiles, int cons, int consTiles, int batch,
                 const std::function<bool(const LeafMapping&, const LeafMapping&)>& streams);
    // A leaf's alternative partitions (docs/cost-model.md §2, "Alternative partitions"):
    // map()'s mapping first, then the other partitions whose slice fits the buffer unblocked
    // and splits no dimension past its size (input-channel parts where the template allows
    // them), each with its best loop order, the cheapest first by the leaf's own cost under
    // the objective (leafCost), kAlternatives at most in all. map()'s alone where it blocks
    // the slice or the tiles compute in memory. Memoised per objective; the mappings stay
    // valid as those of map().
    const std::vector<LeafMapping>& alternatives(int layer, int tiles, int batch);
    // The alternative after map()'s with factors p (K, B, H, W, input-channel parts;
    // RANode::partition), or null when p names none of them (all 0, map()'s own, or not an
    // alternative on these tiles).
    const LeafMapping* namedAlternative(int layer, int tiles, int batch,
                                        const std::array<int, 5>& p);
    // A mapping's factors as RANode::partition names them.
    static std::array<int, 5> factorsOf(const LeafMapping& m) {
        return {m.pk, m.pb, m.ph, m.pw, m.pc};
    }
    // What a mapping costs the leaf alone, one invocation: its MACs' and vector operations'
    // energy, its global-buffer and in-tile levels' accesses, and each tile's data (inputs,
    // weights, operand B; a member's partial sums) written into its buffer after one NoC hop;
    // its time is its compute plus that data over one link (the partition choice's
    // delivery). cost: energy^n x delay^m under the objective. Leaves the placement out:
    // which links and DRAM ports the data crosses is the tree's.
    struct LeafCost {
        double energyPj = 0, cycles = 0, cost = 0;
    };
    LeafCost leafCost(const LeafMapping& m) const;
    // A mapping's own energy, one invocation, all tiles (docs/cost-model.md §4): its MACs'
    // (crossbar reads on compute-in-memory tiles) and vector operations', the array's reads
    // and writes of the global buffer, and each in-tile level's accesses (§2c); none of the
    // traffic that depends on where the leaf's data comes from.
    struct OwnEnergy {
        double mac = 0, buffer = 0;
        std::array<double, kMaxStorageLevels> levels{}; // Hardware::levels, in order
    };
    OwnEnergy ownEnergy(const LeafMapping& m) const;
    static constexpr int kAlternatives = 8;
    // Whether layers qk, sm, av are attention's QK^T -> Softmax -> AV, each reading the one
    // before in its own geometry (the flash order's chain).
    bool flashTriple(int qk, int sm, int av) const;
    // The same slice unblocked, whether or not it fits (not memoised: for reports).
    LeafMapping unblocked(int layer, int tiles, int batch) const {
        return compute(layer, tiles, batch, false);
    }
    // Whether the partitions also split the reduction over tiles (LeafMapping::pc): the
    // template's tile.channel_split unless set. Mappings already handed out stay; set it
    // before the first map().
    void setChannelSplit(bool on) { m_channelSplit = on; }
    // Normalised processing time: one sample on one tile (docs/method.md §2 NPT of a leaf).
    double npt(int layer);

    long long calls() const { return m_calls; }
    long long hits() const { return m_hits; }
    size_t cacheSize() const { return m_cache->size(); }

  private:
    LeafMapping compute(int layer, int tiles, int batch, bool mayBlock = true) const;
    // The partitions compute() weighs, in its order: (K, B, H, W) factors and the
    // input-channel parts (1: none; only with `channels`), none splitting a dimension past
    // its size.
    std::vector<std::pair<std::array<int, 4>, int>>
    candidatePartitions(int layer, int tiles, int batch, bool channels) const;
    // A candidate with its loop order and blocking (withTiling) or without.
    LeafMapping evaluateCandidate(const Layer& l, int batch, const std::array<int, 4>& f, int pc,
                                  bool withTiling) const {
        return pc > 1 ? evaluateChannelSplit(l, batch, f, pc, withTiling)
                      : evaluatePartition(l, batch, f[0], f[1], f[2], f[3], withTiling);
    }
    // The blocked mapping of a slice that does not fit (docs/cost-model.md §2b), or nothing
    // when no blocking fits either.
    bool blockedMapping(const Layer& l, int batch, int tiles, LeafMapping& out) const;
    // blocks: (bk, bh, bw, bc). withCim false: the buffer figures alone on a
    // compute-in-memory tile (no crossbar work, its times as a MAC array's), for the fit test.
    LeafMapping evaluateBlocked(const Layer& l, int batch, const std::array<int, 4>& part,
                                const std::array<int, 4>& blocks, bool withTiling,
                                bool withCim = true) const;
    // Input-channel blocks (blocks[3] > 1): one block is the partition of the layer cut to
    // its share of the input channels and weights (and of operand B); the tile's output stays
    // whole, or its rows cut into blocks[1] row blocks (attention's flash order).
    LeafMapping evaluateReduction(const Layer& l, int batch, const std::array<int, 4>& part,
                                  const std::array<int, 4>& blocks, bool withTiling,
                                  bool withCim = true) const;
    // Partition `part` (K, B, H, W) with each slot's input channels split over pc members
    // (LeafMapping::pc): a member's figures are the layer cut to its channels
    // (reductionCut), its output as partial sums; the root adds the pc - 1 it receives.
    LeafMapping evaluateChannelSplit(const Layer& l, int batch, const std::array<int, 4>& part,
                                     int pc, bool withTiling) const;
    // Compute-in-memory figures of a blocked mapping (row, column, output-channel blocks).
    void cimBlocks(const Layer& l, int batch, const std::array<int, 4>& part, double share,
                   bool withTiling, LeafMapping& m) const;
    // The flash order's members with bq query and bkv key blocks on partition f: the
    // Softmax's running statistics and the rescale work counted (bkv = 1: the row blocks).
    std::vector<LeafMapping> flashMembers(const std::vector<int>& layers, int batch,
                                          const std::array<int, 4>& f, int bq, int bkv,
                                          bool withTiling) const;
    double blockedCost(const Layer& l, int batch, const LeafMapping& m) const;
    double partitionScore(const LeafMapping& m) const;
    std::vector<std::array<int, 4>> bestPartitions(const std::vector<const Layer*>& layers,
                                                   int tiles, int batch) const;
    // withTiling: also choose the per-tile loop order and blocking (bufferAccessBytes,
    // tiling, ioLowerBound), which the partition choice does not need. withCim: as for
    // evaluateBlocked.
    LeafMapping evaluatePartition(const Layer& l, int batch, int pk, int pb, int ph, int pw,
                                  bool withTiling, bool withCim = true) const;
    // Compute-in-memory tiles: the crossbar work of every tile of the partition (cim.h).
    CimLeafMapping cimMapping(const Layer& l, int batch, Count kT, Count bT, Count hT,
                              Count wT) const;

    const Network& m_net;
    const Hardware& m_hw;
    int m_cLanes, m_kLanes;
    // Per layer and input: the consumer sees the tensor in another geometry than its
    // producer wrote it (a folded reshape / transpose, e.g. attention scores -> Softmax),
    // so each tile receives the whole per-sample tensor, as the instruction generator
    // lays it out (engine/codegen, InputGeom::sameAsProducer).
    std::vector<std::vector<char>> m_wholeInput;
    // One memo per objective (blocked mappings depend on it); m_cache is the current one.
    std::vector<std::pair<std::pair<double, double>,
                          std::unique_ptr<std::unordered_map<std::uint64_t, LeafMapping>>>>
        m_caches;
    std::unordered_map<std::uint64_t, LeafMapping>* m_cache = nullptr;
    double m_energyExp = 1, m_delayExp = 1;
    bool m_channelSplit = false;
    std::map<std::tuple<std::vector<int>, int, int, double, double>, std::vector<LeafMapping>>
        m_chains;
    std::map<std::tuple<int, int, int, int, int, double, double>, std::vector<LeafMapping>>
        m_stages;
    std::map<std::tuple<std::uint64_t, double, double>, std::vector<LeafMapping>> m_alternatives;
    std::vector<double> m_npt;
    std::vector<int> m_class; // Network::mappingClasses(): the memo key of each layer
    long long m_calls = 0, m_hits = 0;
};

} // namespace tilescope
