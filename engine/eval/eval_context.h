// EvalContext's state (internal to engine/eval): the mesh, the mapper and the memo caches
// that make repeated evaluation cheap, and the scratch the evaluator's phases reuse across
// evaluations (eval_context.cpp).
#pragma once

#include "eval/dram_profile.h"
#include "eval/evaluator.h"
#include "eval/node_work.h"
#include "eval/transfers.h"
#include "hw/mesh.h"
#include "mapping/mapper.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tilescope {

// Per tile (in snake order) when it is free, for chainSegments() and overlapPass(): the max
// over a range and raising a range to at least a value, in blocks of 16 tiles with a
// block-wide floor, so a leaf on all 144 tiles of the cloud preset costs 9 steps, not 144.
class TileClock {
  public:
    void reset(int tiles) {
        tile_.assign(size_t(tiles), 0.0);
        floor_.assign(size_t((tiles + kBlock - 1) / kBlock), 0.0);
        max_.assign(floor_.size(), 0.0);
    }
    Cycles maxOver(int lo, int hi) const {
        Cycles m = 0;
        for (int t = lo; t < hi;) {
            const size_t b = size_t(t / kBlock);
            if (t % kBlock == 0 && t + kBlock <= hi) {
                m = std::max(m, max_[b]);
                t += kBlock;
            } else {
                m = std::max({m, tile_[size_t(t)], floor_[b]});
                ++t;
            }
        }
        return m;
    }
    void raise(int lo, int hi, Cycles v) {
        for (int t = lo; t < hi;) {
            const size_t b = size_t(t / kBlock);
            max_[b] = std::max(max_[b], v);
            if (t % kBlock == 0 && t + kBlock <= hi) {
                floor_[b] = std::max(floor_[b], v);
                t += kBlock;
            } else {
                tile_[size_t(t)] = std::max(tile_[size_t(t)], v);
                ++t;
            }
        }
    }

  private:
    static constexpr int kBlock = 16;
    std::vector<Cycles> tile_, floor_, max_;
};

// A leaf invocation in a T cut's pass (overlapPass()): its leaf position, its samples,
// its start and end. Ordered by position, then first sample.
struct PassInvocation {
    int pos = 0, first = 0, last = 0;
    Cycles start = 0, end = 0;
    bool operator<(const PassInvocation& o) const {
        return pos != o.pos ? pos < o.pos : first < o.first;
    }
};

// Bytes per link, summed over a few transfers at a time: the links touched are remembered,
// so reading the sums back and clearing them costs what was added, not the whole mesh.
class LinkSums {
  public:
    void resize(int links) { m_bytes.assign(size_t(links), 0.0); }
    // Adds `bytes` to `link`; returns the link's sum so far.
    double add(int link, double bytes) {
        double& sum = m_bytes[size_t(link)];
        if (sum == 0.0) m_touched.push_back(link);
        return sum += bytes;
    }
    // The link's sum read as a clock: from `from` or its clock, whichever is later, `add`
    // more; returns the new clock.
    double after(int link, double from, double add) {
        double& sum = m_bytes[size_t(link)];
        if (sum == 0.0) m_touched.push_back(link);
        return sum = std::max(sum, from) + add;
    }
    // after() on each of the n links of `route`, the i-th adding add(i); returns the
    // latest of `latest` and the new clocks.
    template <class Add>
    double afterEach(const int* route, std::size_t n, double from, Add add, double latest) {
        double* const sums = m_bytes.data();
        for (std::size_t i = 0; i < n; ++i) {
            const int link = route[i];
            double& sum = sums[size_t(link)];
            if (sum == 0.0) m_touched.push_back(link);
            sum = std::max(sum, from) + add(i);
            latest = std::max(latest, sum);
        }
        return latest;
    }
    // f(link, sum) for every link added to since the last clear; then all zero again.
    template <class F> void drain(F f) {
        for (int l : m_touched) {
            f(l, m_bytes[size_t(l)]);
            m_bytes[size_t(l)] = 0.0;
        }
        m_touched.clear();
    }

  private:
    std::vector<double> m_bytes; // all zero between uses
    std::vector<int> m_touched;
};

struct EvalContext::Impl {
    const Network& net;
    const Hardware& hw;
    Mesh mesh;
    Mapper mapper;
    EvalStats stats;
    std::vector<std::vector<std::pair<int, int>>> producers; // per layer: (producer, input idx)
    std::vector<char> isOutput;
    // Per layer, the layer whose traffic memo entries it shares (Network::layerClasses;
    // itself when the template has a DRAM run model, whose layouts are per tensor).
    std::vector<int> layerClass;
    std::vector<char> residentInputs; // per layer: some input is kept on chip
    bool keepsOnChip = false;         // some input or some layer's weights are kept on chip
    TransferGeometry geo;
    // Leaf traffic memo: annealing revisits the same placements constantly. Two
    // generations: entries found in the old one move to the current one (their addresses
    // stay), and when the current one is full the old one is dropped, so the placements
    // the search keeps using survive a turnover (a full clear cost 10% of a cloud anneal
    // in misses).
    std::unordered_map<std::string, LeafTraffic> traffic, oldTraffic;
    // By placement without its writesDram and paceInputs, one period's base each
    // (leafTrafficBase): every such variant is finished from it. A leaf whose stores are not
    // its period's last transfers (storesComeLast) keeps its periods by placement instead.
    std::unordered_map<std::string, LeafTrafficBase> bases, oldBases;
    std::unordered_map<std::string, LeafTraffic> periods, oldPeriods;
    std::string keyScratch;
    // Per layer, the last key looked up and its entry: a search move changes few leaves,
    // so most lookups repeat the previous evaluation's (cleared with the memos).
    std::vector<std::string> lastKey;
    std::vector<const LeafTraffic*> lastTraffic;
    // Busiest link of a sum of leaves' traffic, by the memo entries summed (their
    // addresses, stable until the memos are cleared) and a scale: segments and S-cut
    // slots a move left alone are not summed again. Cleared with the memos.
    std::unordered_map<std::string, double> busiestMemo;
    std::string busiestKey;
    // The last few sums busiestOf added up, per link, with the leaves they hold, for a sum
    // that differs from one in a few leaves: those are taken out and put in rather than
    // every leaf added again. Only where every term is a whole number times a power of two
    // (the sums are then exact in any order, so the same as added in order); cleared with
    // the memos (their leaves' addresses may then be reused).
    struct RunningSum {
        double scale = 0;
        bool withWeights = false, valid = false;
        std::uint64_t used = 0;                 // when it last served, for replacement
        std::vector<const LeafTraffic*> leaves; // what `sums` holds, in order
        std::vector<double> sums;               // per link
        std::vector<int> touched;               // the links with a term since the last reset
        std::vector<char> seen;                 // per link: in `touched`
    };
    std::array<RunningSum, 8> runningSums;
    std::uint64_t runningUses = 0;
    std::vector<const LeafTraffic*> sumLeaves; // busiestOf's leaves, scratch
    double runningBusiest(RunningSum& r, bool rebuild);
    std::size_t busiestBytes = 0; // held by busiestMemo and weightMaxMemo
    // The busiest link of the weights of a segment's first i leaves, for every i, by the
    // memo entries in start order (weightBoundOf); cleared with busiestMemo.
    std::unordered_map<std::string, std::vector<double>> weightMaxMemo;
    size_t storedLinks = 0; // (link, bytes) pairs held by the current generation
    size_t memoPairs = 0;   // the pairs at which a generation turns over (turnOver)
    // Whether a streaming chain's members stream (Analyser::streamChain), by the mapper's
    // chain mapping (Mapper::chainMapping's entries live as long as the mapper): checking
    // every block of every tile took most of an evaluation with attention in key blocks.
    std::unordered_map<const std::vector<LeafMapping>*, bool> chainStreams;
    // Scratch reused across evaluations.
    LinkSums linkSums, weightSums;
    std::vector<Cycles> stageScratch; // S-cut pipeline fill, per stage
    // dramOrderedPipeline(): (time without DRAM, child, sub-batch, start/end), per child
    // its DRAM bytes, per (child, sub-batch) its start
    std::vector<std::tuple<Cycles, int, int, int>> pipeItems;
    std::vector<double> pipeNeed;
    std::vector<double> pipeWeightStages; // per child: its weight LOADs' stages
    std::vector<Cycles> pipeStart;
    // cappedDramPipeline(): the DRAM's use over time, the leaves whose weights it books in
    // need order and per child the place of its last leaf among them, and per link the
    // weight LOADs crossing it, then when those booked so far have crossed it
    DramProfile pipeDram;
    std::vector<std::pair<Cycles, const NodeWork*>> pipeWeightLeaves;
    std::vector<size_t> pipeLastLeaf;
    LinkSums pipeLinkClock;
    std::vector<LeafPlacement> placeScratch;
    // overlapPass(): the cut's tiles, its children's leaf invocations, and per leaf
    // position the range of its own among them
    TileClock passClock;
    std::vector<PassInvocation> passInvs;
    std::vector<int> passRange;
    std::vector<const LeafPlacement*> prodScratch;
    int totalBatch = 0; // of the evaluation under way (the DRAM tensors' shapes)
    // Per layer: its traffic with the planned layouts' runs charged (Analyser::dramLayouts;
    // a template with a run model only).
    std::vector<LeafTraffic> plannedTraffic;

    Impl(const Network& n, const Hardware& h);

    // The leaf's traffic per segment invocation, memoised (eval_context.cpp).
    const LeafTraffic& trafficOf(const LeafPlacement& leaf,
                                 const std::vector<const LeafPlacement*>& prods, bool writesDram,
                                 std::uint32_t paceInputs, int segBatch);
    // The busiest link of the leaves at positions [lo, hi) (busiestMemo).
    double busiestOf(const std::vector<NodeWork>& work, const std::vector<int>& leafNode,
                     const std::vector<int>& posLayer, int lo, int hi, double scale,
                     bool withWeights);
    // The busiest link of the weights of the first i + 1 of `leaves`, for every i.
    const std::vector<double>&
    weightMaxOf(const std::vector<std::pair<Cycles, const NodeWork*>>& leaves);
    void chargeSegmentMemos(std::size_t bytes);
    void clearSegmentMemos();
    // One period of the leaf's traffic (leafTrafficBase, finishPeriod), memoised by pkey,
    // the placement's key (writesDram and paceInputs at bytes flagsAt on): a memo entry, or
    // finishedPeriod, valid until the next call.
    const LeafTraffic& periodTraffic(const LeafPlacement& leaf,
                                     const std::vector<const LeafPlacement*>& prods,
                                     bool writesDram, std::uint32_t paceInputs,
                                     const std::string& pkey, size_t flagsAt);
    LeafTraffic finishedPeriod; // periodTraffic's period finished from a base
    // A period just costed: its work into the stats (EvalStats::pieces).
    void countWork(const LeafTraffic& t) {
        ++stats.periodsCosted;
        stats.pieces += t.pieces;
        stats.pieceLinks += t.pieceLinks;
    }
    template <class Map> typename Map::iterator promote(Map& cur, Map& old, const std::string& key);
    void turnOver();
};

} // namespace tilescope
