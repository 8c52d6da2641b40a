#include "eval/evaluator.h"

#include "eval/schedule_layout.h"
#include "eval/transfers.h"
#include "hw/mesh.h"
#include "mapping/cim.h"
#include "mapping/mapper.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <queue>
#include <string>
#include <tuple>
#include <unordered_map>

namespace tilescope {

const char* toString(Bound b) {
    switch (b) {
    case Bound::Compute:
        return "compute";
    case Bound::Dram:
        return "DRAM";
    case Bound::Noc:
        return "NoC";
    }
    return "?";
}

double objectiveCost(PicoJoules energy, Cycles delay, const Objective& o) {
    return std::pow(energy, o.n) * std::pow(delay, o.m);
}

namespace {

std::string fmtBytes(double b) {
    char buf[64];
    if (b >= 1024.0 * 1024)
        std::snprintf(buf, sizeof buf, "%.2f MiB", b / 1024 / 1024);
    else if (b >= 1024)
        std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024);
    else
        std::snprintf(buf, sizeof buf, "%.0f B", b);
    return buf;
}

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
        double& x = m_bytes[size_t(link)];
        if (x == 0.0) m_touched.push_back(link);
        return x += bytes;
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

} // namespace

struct EvalContext::Impl {
    const Network& net;
    const Hardware& hw;
    Mesh mesh;
    Mapper mapper;
    EvalStats stats;
    std::vector<std::vector<std::pair<int, int>>> producers; // per layer: (producer, input idx)
    std::vector<char> isOutput;
    TransferGeometry geo;
    // Leaf traffic memo: annealing revisits the same placements constantly. Two
    // generations: entries found in the old one move to the current one (their addresses
    // stay), and when the current one is full the old one is dropped, so the placements
    // the search keeps using survive a turnover (a full clear cost 10% of a cloud anneal
    // in misses).
    std::unordered_map<std::string, LeafTraffic> traffic, oldTraffic;
    // By placement, one period each.
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
    std::size_t busiestBytes = 0; // held by busiestMemo and weightMaxMemo
    // The busiest link of the weights of a segment's first i leaves, for every i, by the
    // memo entries in start order (weightBoundOf); cleared with busiestMemo.
    std::unordered_map<std::string, std::vector<double>> weightMaxMemo;
    size_t storedLinks = 0; // (link, bytes) pairs held by the current generation
    // Scratch reused across evaluations.
    LinkSums linkSums, weightSums;
    std::vector<Cycles> stageScratch; // S-cut pipeline fill, per stage
    // dramOrderedPipeline(): (time without DRAM, child, sub-batch, start/end), per child
    // its DRAM bytes, per (child, sub-batch) its start
    std::vector<std::tuple<Cycles, int, int, int>> pipeItems;
    std::vector<double> pipeNeed;
    std::vector<Cycles> pipeStart;
    std::vector<LeafPlacement> placeScratch;
    // overlapPass(): the cut's tiles, its children's leaf invocations, and per leaf
    // position the range of its own among them
    TileClock passClock;
    std::vector<PassInvocation> passInvs;
    std::vector<int> passRange;
    std::vector<const LeafPlacement*> prodScratch;

    Impl(const Network& n, const Hardware& h)
        : net(n), hw(h), mesh(h), mapper(n, h), geo(n, h.dataBits) {
        linkSums.resize(mesh.linkCount());
        weightSums.resize(mesh.linkCount());
        producers.resize(net.layers.size());
        isOutput.assign(net.layers.size(), 0);
        auto cons = net.consumers();
        for (size_t i = 0; i < net.layers.size(); ++i) {
            for (size_t k = 0; k < net.layers[i].inputs.size(); ++k)
                if (net.layers[i].inputs[k].producer >= 0)
                    producers[i].push_back({net.layers[i].inputs[k].producer, int(k)});
            isOutput[i] = net.isOutput(int(i)) || cons[i].empty();
        }
    }

    // The leaf's traffic per segment invocation (transfers.h), memoised by everything it
    // depends on: the leaf's placement and batch, each NoC producer's, and the segment batch.
    // The busiest link of the leaves at positions [lo, hi): their activation links
    // scaled by `scale`, plus their weight links when withWeights (busiestMemo); in bytes
    // at NoC bandwidth (Mesh::linkSlowness).
    template <class Work>
    double busiestOf(const std::vector<Work>& w, const std::vector<int>& leafNode,
                     const std::vector<int>& posLayer, int lo, int hi, double scale,
                     bool withWeights) {
        std::string& key = busiestKey;
        key.assign(reinterpret_cast<const char*>(&scale), sizeof scale);
        key.push_back(withWeights ? 'w' : 'a');
        for (int pos = lo; pos < hi; ++pos) {
            const LeafTraffic* t = w[size_t(leafNode[size_t(posLayer[size_t(pos)])])].traffic;
            key.append(reinterpret_cast<const char*>(&t), sizeof t);
        }
        if (auto it = busiestMemo.find(key); it != busiestMemo.end()) return it->second;
        for (int pos = lo; pos < hi; ++pos) {
            const LeafTraffic& T = *w[size_t(leafNode[size_t(posLayer[size_t(pos)])])].traffic;
            for (const auto& [link, b] : T.actLinks)
                linkSums.add(link, b * scale);
            if (withWeights)
                for (const auto& [link, b] : T.weightLinks)
                    linkSums.add(link, b * scale);
        }
        double busiest = 0;
        linkSums.drain(
            [&](int l, double b) { busiest = std::max(busiest, b * mesh.linkSlowness(l)); });
        chargeSegmentMemos(key.size() + 64); // the key and about a node's overhead
        busiestMemo.emplace(key, busiest);
        return busiest;
    }

    // busiestMemo and weightMaxMemo share one budget: under 32 MiB, else both start afresh.
    void chargeSegmentMemos(std::size_t bytes) {
        busiestBytes += bytes;
        if (busiestBytes > (std::size_t(32) << 20)) clearSegmentMemos();
    }
    void clearSegmentMemos() {
        busiestMemo.clear();
        weightMaxMemo.clear();
        busiestBytes = 0;
    }

    // The busiest link (bytes at NoC bandwidth) of the summed weight links of the first
    // i + 1 of `leaves`, for every i.
    template <class Work>
    const std::vector<double>&
    weightMaxOf(const std::vector<std::pair<double, const Work*>>& leaves) {
        std::string& key = busiestKey;
        key.clear();
        for (const auto& [start, lw] : leaves) {
            const LeafTraffic* t = lw->traffic;
            key.append(reinterpret_cast<const char*>(&t), sizeof t);
        }
        if (auto it = weightMaxMemo.find(key); it != weightMaxMemo.end()) return it->second;
        std::vector<double> maxima;
        maxima.reserve(leaves.size());
        double linkMax = 0;
        for (const auto& [start, lw] : leaves) {
            for (const auto& [link, b] : lw->traffic->weightLinks)
                linkMax = std::max(linkMax, weightSums.add(link, b) * mesh.linkSlowness(link));
            maxima.push_back(linkMax);
        }
        weightSums.drain([](int, double) {});
        chargeSegmentMemos(key.size() + 8 * maxima.size() + 96);
        return weightMaxMemo.emplace(key, std::move(maxima)).first->second;
    }

    // The entry of `key` in the old generation moved to the current one (the same node, so
    // at the same address), or cur.end().
    using TrafficMap = std::unordered_map<std::string, LeafTraffic>;
    TrafficMap::iterator promote(TrafficMap& cur, TrafficMap& old, const std::string& key) {
        if (old.empty()) return cur.end();
        auto node = old.extract(key);
        if (node.empty()) return cur.end();
        storedLinks += node.mapped().actLinks.size() + node.mapped().weightLinks.size();
        return cur.insert(std::move(node)).position;
    }
    // Bound memory on long runs: about 16 bytes per stored (link, bytes) pair, and each
    // generation turns over at 2 M pairs, so both keep the memo near 64 MiB per context (a
    // 12x12 leaf holds up to a few thousand). Entries of the dropped generation may still
    // be named by the segment memos and the last-lookup cache: those start afresh.
    void turnOver() {
        if (storedLinks <= 2'000'000) return;
        oldTraffic = std::move(traffic);
        oldPeriods = std::move(periods);
        traffic.clear();
        periods.clear();
        storedLinks = 0;
        lastTraffic.assign(lastTraffic.size(), nullptr);
        clearSegmentMemos();
    }

    const LeafTraffic& trafficOf(const LeafPlacement& leaf,
                                 const std::vector<const LeafPlacement*>& prods, bool writesDram,
                                 std::uint32_t paceInputs, int segBatch) {
        ++stats.routeCalls;
        std::string& key = keyScratch;
        key.clear();
        auto put = [&](int v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
        put(leaf.layer), put(leaf.batch), put(leaf.tileBegin), put(leaf.tileCount), put(writesDram);
        put(int(paceInputs));
        for (const LeafPlacement* p : prods) {
            if (!p)
                put(-1);
            else
                put(p->tileBegin), put(p->tileCount), put(p->batch);
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
        const std::string pkey = key.substr(0, placementKey);
        auto pit = periods.find(pkey);
        if (pit == periods.end()) pit = promote(periods, oldPeriods, pkey);
        if (pit == periods.end()) {
            pit = periods
                      .emplace(pkey,
                               leafTrafficPeriod(geo, mesh, leaf, prods, writesDram, paceInputs))
                      .first;
            storedLinks += pit->second.actLinks.size() + pit->second.weightLinks.size();
        } else {
            ++stats.routeHits;
        }
        const LeafTraffic& t =
            traffic
                .emplace(key, scaleTraffic(mesh, pit->second,
                                           std::max(1, segBatch / std::max(1, leaf.batch))))
                .first->second;
        storedLinks += t.actLinks.size() + t.weightLinks.size();
        last = &t;
        return t;
    }
};

EvalContext::EvalContext(const Network& net, const Hardware& hw)
    : m_impl(std::make_unique<Impl>(net, hw)) {}
EvalContext::~EvalContext() = default;
const Network& EvalContext::network() const {
    return m_impl->net;
}
const Hardware& EvalContext::hardware() const {
    return m_impl->hw;
}
const EvalStats& EvalContext::stats() const {
    m_impl->stats.mapperCalls = m_impl->mapper.calls();
    m_impl->stats.mapperHits = m_impl->mapper.hits();
    return m_impl->stats;
}

// Exact min-max allocation: n_i >= 1, sum n_i = N, minimising max_i a_i / n_i. Starting
// from one tile each, giving the next tile to the child with the largest a_i / n_i is
// optimal (each step lowers the current maximum as far as any single tile can).
// Every child has one (a_i / n_i, i) in play and no two are equal, so the child chosen
// next is the same however the largest is found: by a scan when there are few children
// (no heap to allocate), else by a heap.
void allocateTiles(const std::vector<double>& a, int N, std::vector<int>& out) {
    const int k = int(a.size());
    out.assign(size_t(k), 1);
    using Item = std::pair<double, int>;
    if (k <= 16) {
        std::array<double, 16> r{};
        for (int i = 0; i < k; ++i)
            r[size_t(i)] = a[size_t(i)];
        for (int left = N - k; left > 0; --left) {
            Item best{r[0], 0};
            for (int i = 1; i < k; ++i)
                best = std::max(best, Item{r[size_t(i)], i});
            const int i = best.second;
            ++out[size_t(i)];
            r[size_t(i)] = a[size_t(i)] / out[size_t(i)];
        }
        return;
    }
    std::priority_queue<Item> heap;
    for (int i = 0; i < k; ++i)
        heap.push({a[size_t(i)], i});
    for (int left = N - k; left > 0; --left) {
        auto [r, i] = heap.top();
        heap.pop();
        ++out[size_t(i)];
        heap.push({a[size_t(i)] / out[size_t(i)], i});
    }
}

namespace {

// Stages the generator cuts a compute and its transfers into (kMaxStages, transfers.h;
// docs/isa.md). A weight-heavy compute streams by output channel in as many slices, so a
// leaf can start on its first weight slice.
constexpr double kStages = kMaxStages;
// The share of a segment's weight streaming, on its busiest link, that the leaves' own
// transfers lose to it: a link is shared per transfer and the weights come as many LOADs
// in flight at once, so a SEND meeting them there gets a small share, not half; measured
// on the 1,952 replayed trees with exchanges held up once (docs/cost-model.md §5,
// "Weights in the background"; 0.4 before session 27).
constexpr double kWeightShare = 0.7;
// The share of a consumer's intake from a stage's other tiles that the stage's busiest tile
// waits for while it sends to that consumer. In lock step (every tile sending to the same
// consumer at once) it would be all of it; the replay's tiles drift apart, and their SENDs
// to a shared consumer overlapped for about 60% of their time on the cloud preset and for
// all of it on a 12x16 mesh, where other transfers cross the same links (googlenet's
// maxpool2: docs/cost-model.md §5, "Consumers fed by several tiles").
constexpr double kSharedIngress = 0.75;

struct NodeWork {
    int lo = 0, hi = 0; // leaf positions covered
    int stage = 0;      // stage within a parent S cut
    int maxStage = 0;   // S cut: s, the highest child stage
    double npt = 0;
    int tileBegin = 0, tileCount = 0;
    double util = 1.0;
    Cycles compute = 0; // one invocation, compute only (docs/cost-model.md §5)
    Cycles time = 0;    // one invocation, with each leaf's own activation DRAM bound
    Cycles slot = 0;    // S cut: the pipeline slot, max(slowest child, shared DRAM); T cut: a
                        // pass over its children after the first (cutDelay())
    // Time but for the DRAM reads, which the LOAD engines start ahead (leaves; T cuts: all
    // passes; S cuts: their time).
    Cycles rest = 0;
    Cycles piped = 0; // S cut: slot x (sub-batches - 1) + the paced fill
    // S cut that is a segment: its time with its weights all loaded before it starts (the
    // DRAM-ordered pipeline serving only its activations; 0 elsewhere; costSegment()).
    Cycles preloaded = 0;
    Cycles stageOffset = 0; // S-cut child: start of its stage's first sub-batch in the cut
    Cycles passOffset = 0;  // T-cut child: its start in the cut's first pass (overlapPass())
    Bytes dram = 0;         // activation DRAM bytes of one invocation (weights excluded)
    Bytes wgt = 0, act = 0; // per-tile buffer use
    Bytes kept = 0;         // cuts: the part of act that is keptOut (leafBuffers())
    const LeafMapping* mapping = nullptr;
    const LeafTraffic* traffic = nullptr; // leaves: per segment invocation (transfers.h)
    // Start of the first and of the last invocation, from its segment's start.
    Cycles firstStart = 0, lastStart = 0;
    Cycles latency = 0; // leaves: the DRAM latency its time includes
    // Leaves fed from ahead: what their exchange adds to the first sub-batch, which has no
    // sample before it to receive behind (pacedFill()).
    Cycles aheadWait = 0;
    bool dramOrdered = false; // leaves under an S cut: dramOrderedPipeline() waits for its weights
    int dramCut = -1;         // ... and the node id of the outermost such S cut
    // Leaves: bytes its busiest tile's STORE/SEND engine moves per segment invocation (its
    // stores and its sends to every consumer over the NoC, x Mesh::routeSlowness).
    Bytes sentOut = 0;
    // Leaves of a T cut under an S cut: their NoC consumers outside that T cut, and the
    // most any one of them adds to sentOut at the links' pace (leafTraffic()).
    int sentAhead = 0;
    Bytes sentAheadPaced = 0;
    // Leaves that are stages of an S cut: their consumers, and what those consumers' busiest
    // tiles take in from this leaf's other tiles beyond its own busiest tile's sends, summed
    // over them (leafTraffic()).
    int stageConsumers = 0;
    Bytes sentShared = 0;
    int segment = -1;      // index of the segment this node lies in
    PicoJoules energy = 0; // whole-run energy attributed to this node
    Bytes runDram = 0, runNocIn = 0, runNocOut = 0, runNocInside = 0; // leaves, whole run (detail)
    Bytes runArray = 0; // leaves, whole run (detail): buffer <-> array bytes
    // Compute-in-memory leaves (cimWeights): weights kept programmed over the segment
    // invocation; programmings per segment invocation (optimised and default order); the
    // write cycles the mapping's time holds but a kept invocation does not spend.
    bool cimPinned = false;
    double cimPrograms = 0, cimProgramsDefault = 0;
    Cycles writeSaved = 0;
};

// A T cut's first pass over its children: the sum of their times (cutDelay(); each later
// pass lasts its slot).
Cycles firstPass(const std::vector<NodeWork>& w, const RANode& nd) {
    Cycles round = 0;
    for (int c : nd.children)
        round += w[size_t(c)].time;
    return round;
}

// An S-cut child's time per sub-batch once the pipeline runs: a T cut's later passes
// (docs/cost-model.md §5, "T-cut passes"); an S cut's slot a sub-batch of its own, as its
// stages take the next sub-batch while the later ones work ("Pipelines in a pipeline"); a
// leaf its time.
Cycles pipelinePeriod(const std::vector<NodeWork>& w, const RATree& tree, int c) {
    const RANode& cn = tree.node(c);
    return cn.type == NodeType::Leaf ? w[size_t(c)].time : w[size_t(c)].slot * cn.subBatch;
}

// Every leaf invocation below node `id` as the S-T graph places them, from t0 (`sample`
// the index of its first sample, `scale` its stretch): f(leaf, start, end, first sample)
// for each. Returns the node's end. A T cut with one pass has its children at their
// offsets in it (overlapPass()), with several its later passes drawn in proportion
// (cutDelay()); an S cut its children at their stage offsets, one slot per sub-batch.
template <class F>
Cycles placeInvocations(const RATree& tree, const std::vector<NodeWork>& w, bool programClock,
                        int id, Cycles t0, int sample, double scale, F& f) {
    const RANode& nd = tree.node(id);
    const NodeWork& nw = w[size_t(id)];
    if (nd.type == NodeType::Leaf) {
        f(id, t0, t0 + nw.time * scale, sample);
        return t0 + nw.time * scale;
    }
    const int cb = nd.batch / nd.subBatch;
    if (nd.type == NodeType::T && nd.subBatch == 1) {
        for (int c : nd.children)
            placeInvocations(tree, w, programClock, c, t0 + w[size_t(c)].passOffset * scale, sample,
                             scale, f);
        return t0 + nw.time * scale;
    }
    if (nd.type == NodeType::T) {
        Cycles t = t0;
        const Cycles round = firstPass(w, nd);
        const double later = round > 0 ? scale * nw.slot / round : scale;
        for (int j = 0; j < nd.subBatch; ++j)
            for (int c : nd.children)
                t = placeInvocations(tree, w, programClock, c, t, sample + j * cb,
                                     j == 0 ? scale : later, f);
        return t;
    }
    // An S cut held up by the DRAM's order (dramOrderedPipeline()) is drawn stretched to its
    // time, except on the program's clock.
    const double inner = nw.piped > 0 && !programClock ? scale * nw.time / nw.piped : scale;
    const Cycles slot = nw.slot * inner;
    for (int c : nd.children) {
        // A T child runs each sub-batch in its later passes' time (cutDelay()): drawn so, its
        // sub-batches one slot apart do not overlap on its tiles (the program's clock keeps
        // each pass whole).
        const NodeWork& cw = w[size_t(c)];
        const double drawn = cw.time > 0 && !programClock && tree.node(c).type == NodeType::T
                                 ? std::min(1.0, pipelinePeriod(w, tree, c) / cw.time)
                                 : 1.0;
        for (int j = 0; j < nd.subBatch; ++j)
            placeInvocations(tree, w, programClock, c, t0 + cw.stageOffset * inner + j * slot,
                             sample + j * cb, inner * drawn, f);
    }
    return t0 + nw.time * scale;
}

} // namespace

namespace {

// Everything evaluate() decides before costing traffic: leaf ranges, stages, NPT, tile
// groups, segments, mappings, buffer checks and the data-flow rule per input. Shared with
// analyseSchedule() so the instruction generator follows exactly the same decisions.
struct Analysis {
    std::vector<NodeWork> w;
    std::vector<int> pre, layerPos, leafNode, posLayer;
    bool rootIsT = false;
    std::vector<int> segments;
    int segBatch = 1, segInvocations = 1;
    std::vector<std::vector<char>> inputViaDram; // per layer, per input
    std::vector<char> writesDram;                // per layer
    // Per layer, the position of its first consumer over the NoC: its tiles' STORE/SEND
    // engines move their transfers in order, so only the first can keep pace with the compute.
    std::vector<int> firstSend;
    // Per layer, bit k: input k can keep pace with its producer in the paced fill (both
    // leaves of one S cut, over the NoC, the first transfer of a producer that stores nothing).
    std::vector<std::uint32_t> paceInputs;
    // dataFlow()'s working data (Analyser): kept here so a reused Analysis keeps capacity.
    std::vector<double> hold, keptOut;
    std::vector<std::vector<int>> sharedProducers;
    std::vector<std::uint64_t> held;
    std::vector<int> stack;   // orderNodes()
    std::vector<double> npts; // allocateTileGroups(): an S cut's children's NPT
    std::vector<int> alloc;   // ... and their tiles
};

// The working data of analyse(), shared by its phases (each fills part of A).
struct Analyser {
    EvalContext::Impl& C;
    const RATree& tree;
    const EvalOptions& opt;
    Analysis& A;
    Evaluation& ev;
    const Network& net;
    const Hardware& hw;
    const Mesh& mesh;
    const int n;
    const int L;
    std::vector<NodeWork>& w;
    std::vector<int>& pre;
    std::vector<int>& layerPos;
    std::vector<int>& leafNode;
    std::vector<int>& posLayer;
    std::vector<char>& writesDram;
    std::vector<std::vector<char>>& inputViaDram;
    std::vector<double>& hold; // per node: held input bytes per tile
    // Per leaf: outputs of its earlier invocations its tiles keep for a consumer taking more
    // samples at a time, per tile (dataFlow(); not in flight twice, leafBuffers()).
    std::vector<double>& keptOut;
    // Per consumer leaf: producers whose output it receives over the NoC from tiles it shares
    // (its LCA with the producer is a T cut, whose children share the group). The instruction
    // generator keeps a producer's output slice in its tile's buffer until every NoC consumer
    // has read it, and receives the consumer's remote input into a separate region, so while
    // the consumer runs a shared tile holds the producer's slice beside the consumer's input
    // and output (docs/cost-model.md §6, docs/isa.md).
    std::vector<std::vector<int>>& sharedProducers;
    std::vector<std::uint64_t>& held; // (producer, cut) pairs charged
    int consumerChild = -1;           // set by viaDram: the LCA's child holding the consumer
    bool lcaIsT = false; // set by viaDram: the LCA is a T cut (its children share tiles)
    double dramBw = 0, linkBw = 0, portBw = 0;

    Analyser(EvalContext::Impl& c, const RATree& t, const EvalOptions& o, Analysis& a,
             Evaluation& e)
        : C(c), tree(t), opt(o), A(a), ev(e), net(c.net), hw(c.hw), mesh(c.mesh), n(t.size()),
          L(int(c.net.layers.size())), w(a.w), pre(a.pre), layerPos(a.layerPos),
          leafNode(a.leafNode), posLayer(a.posLayer), writesDram(a.writesDram),
          inputViaDram(a.inputViaDram), hold(a.hold), keptOut(a.keptOut),
          sharedProducers(a.sharedProducers), held(a.held) {}

    bool invalid(int node, std::string reason);
    void orderNodes();
    int childContaining(const RANode& cut, int pos) const;
    void bottomUp();
    bool allocateTileGroups();
    void assignSegments();
    bool viaDram(int prod, int cons);
    void keepForLaterStage(int prod);
    bool keptOnce(int prod);
    double outputSlice(int leaf);
    double invocationsOver(int producerLeaf, int node) const;
    void dataFlow();
    void cimWeights();
    void leafBuffers();
    double dramGapShare(int layer, const LeafMapping& m) const;
    bool overflow(int id);
    bool checkBuffers();
    void leafTraffic();
    void leafDelay(NodeWork& nw, const RANode& nd, const std::vector<char>& readsDram);
    template <class F>
    void forEachSiblingInput(const RANode& nd, int lo, const NodeWork& cw, F&& f) const;
    Cycles computeFill(const RANode& nd, int maxStage);
    Cycles pacedFill(const RANode& nd, const NodeWork& nw);
    Cycles subBatchFeed(const RANode& nd, size_t i, size_t j) const;
    // Marks its leaves; `preloaded`: the cut's weights are in before it starts.
    Cycles dramOrderedPipeline(const RANode& nd, const NodeWork& nw, bool preloaded = false);
    int tcutUnderS(int leafId) const;
    bool fedFromAhead(const RANode& leaf) const;
    Cycles overlapPass(const RANode& nd, const NodeWork& nw);
    void cutDelay(NodeWork& nw, const RANode& nd);
    void delays();
    void firstStarts();
};

bool Analyser::invalid(int node, std::string reason) {
    ev.valid = false;
    ev.invalidNode = node;
    ev.reason = std::move(reason);
    return false;
}

void Analyser::orderNodes() {
    A.w.assign(static_cast<size_t>(n), NodeWork{});
    // Pre-order from the root (do not assume the arena is compacted).
    std::vector<int>& pre = A.pre;
    pre.clear();
    pre.reserve(size_t(n));
    {
        std::vector<int>& stack = A.stack;
        stack.assign(1, tree.root);
        while (!stack.empty()) {
            const int id = stack.back();
            stack.pop_back();
            pre.push_back(id);
            const auto& ch = tree.node(id).children;
            for (auto it = ch.rbegin(); it != ch.rend(); ++it)
                stack.push_back(*it);
        }
    }
    A.layerPos.assign(size_t(L), -1);
    A.leafNode.assign(size_t(L), -1);
    A.posLayer.clear();
    posLayer.reserve(size_t(L));
    for (int id : pre) {
        const RANode& nd = tree.node(id);
        if (nd.type == NodeType::Leaf) {
            const int pos = int(posLayer.size());
            layerPos[size_t(nd.layer)] = pos;
            leafNode[size_t(nd.layer)] = id;
            posLayer.push_back(nd.layer);
            w[size_t(id)].lo = pos;
            w[size_t(id)].hi = pos + 1;
        }
    }
}

// Index of the child of `cut` whose leaf range holds position pos (children are
// ordered by leaf range).
int Analyser::childContaining(const RANode& cut, int pos) const {
    const auto& ch = cut.children;
    size_t lo = 0, hi = ch.size();
    while (hi - lo > 1) {
        const size_t mid = (lo + hi) / 2;
        if (w[size_t(ch[mid])].lo <= pos)
            lo = mid;
        else
            hi = mid;
    }
    return int(lo);
}

// Every input of a layer under cut child cw whose producer lies in an earlier child of
// the cut nd (leaf positions from lo, nd's first): f(that child's index, layer, producer,
// input index).
template <class F>
void Analyser::forEachSiblingInput(const RANode& nd, int lo, const NodeWork& cw, F&& f) const {
    for (int pos = cw.lo; pos < cw.hi; ++pos) {
        const int l = posLayer[size_t(pos)];
        for (const auto& [prod, k] : C.producers[size_t(l)]) {
            const int pp = layerPos[size_t(prod)];
            if (pp >= lo && pp < cw.lo) f(size_t(childContaining(nd, pp)), l, prod, int(k));
        }
    }
}

// ---- Bottom-up: leaf ranges, pipeline stages, NPT (docs/cost-model.md §1).
void Analyser::bottomUp() {
    for (auto it = pre.rbegin(); it != pre.rend(); ++it) {
        const int id = *it;
        const RANode& nd = tree.node(id);
        NodeWork& nw = w[size_t(id)];
        if (nd.type == NodeType::Leaf) {
            nw.npt = C.mapper.npt(nd.layer);
            continue;
        }
        nw.lo = w[size_t(nd.children.front())].lo;
        nw.hi = w[size_t(nd.children.back())].hi;
        double sum = 0;
        for (int c : nd.children)
            sum += w[size_t(c)].npt;
        if (nd.type == NodeType::S) {
            // Stage of a child = 1 + highest stage of the earlier siblings it reads from.
            nw.maxStage = 0;
            for (size_t j = 0; j < nd.children.size(); ++j) {
                NodeWork& cw = w[size_t(nd.children[j])];
                cw.stage = 0;
                forEachSiblingInput(nd, nw.lo, cw, [&](size_t i, int, int, int) {
                    cw.stage = std::max(cw.stage, w[size_t(nd.children[i])].stage + 1);
                });
                nw.maxStage = std::max(nw.maxStage, cw.stage);
            }
            const double sb = nd.subBatch;
            nw.npt = sum * (sb + nw.maxStage) / sb; // divided by the ideal utilisation sb/(sb+s)
        } else {
            nw.npt = sum;
        }
    }
}

// ---- Top-down: tile allocation (exact min-max water-filling at S cuts).
bool Analyser::allocateTileGroups() {
    w[size_t(tree.root)].tileBegin = 0;
    w[size_t(tree.root)].tileCount = mesh.tiles();
    std::vector<int>& alloc = A.alloc;
    std::vector<double>& a = A.npts;
    for (int id : pre) {
        const RANode& nd = tree.node(id);
        const NodeWork& nw = w[size_t(id)];
        if (nd.type == NodeType::Leaf) continue;
        if (nd.type == NodeType::T) {
            for (int c : nd.children) {
                w[size_t(c)].tileBegin = nw.tileBegin;
                w[size_t(c)].tileCount = nw.tileCount;
            }
            continue;
        }
        const int k = int(nd.children.size());
        if (k > nw.tileCount)
            return invalid(id, "S cut " + tree.pathOf(id) + " has " + std::to_string(k) +
                                   " children but only " + std::to_string(nw.tileCount) + " tiles");
        a.resize(static_cast<size_t>(k));
        for (int j = 0; j < k; ++j)
            a[size_t(j)] = w[size_t(nd.children[size_t(j)])].npt;
        allocateTiles(a, nw.tileCount, alloc);
        double maxRatio = 0, sum = 0;
        for (int j = 0; j < k; ++j) {
            maxRatio = std::max(maxRatio, a[size_t(j)] / alloc[size_t(j)]);
            sum += a[size_t(j)];
        }
        const double util = maxRatio > 0 ? sum / (nw.tileCount * maxRatio) : 1.0;
        w[size_t(id)].util = util;
        if (util < opt.minUtilisation) {
            char buf[160];
            std::snprintf(buf, sizeof buf,
                          "S cut %s: tile allocation utilisation %.2f is below %.2f",
                          tree.pathOf(id).c_str(), util, opt.minUtilisation);
            return invalid(id, buf);
        }
        int begin = nw.tileBegin;
        for (int j = 0; j < k; ++j) {
            w[size_t(nd.children[size_t(j)])].tileBegin = begin;
            w[size_t(nd.children[size_t(j)])].tileCount = alloc[size_t(j)];
            begin += alloc[size_t(j)];
        }
    }
    return true;
}

// ---- Segments: children of a root T cut (or the root itself).
void Analyser::assignSegments() {
    const RANode& rootNode = tree.node(tree.root);
    const bool rootIsT = A.rootIsT = rootNode.type == NodeType::T;
    A.segments = rootIsT ? rootNode.children : std::vector<int>{tree.root};
    const std::vector<int>& segments = A.segments;
    A.segBatch = rootIsT ? rootNode.batch / rootNode.subBatch : rootNode.batch;
    A.segInvocations = rootIsT ? rootNode.subBatch : 1;
    for (size_t s = 0; s < segments.size(); ++s) {
        std::vector<int> stack{segments[s]};
        while (!stack.empty()) {
            const int id = stack.back();
            stack.pop_back();
            w[size_t(id)].segment = int(s);
            for (int c : tree.node(id).children)
                stack.push_back(c);
        }
    }
}

// Which leaves write their output to DRAM: network outputs and any producer with a
// consumer that reads it through DRAM.
bool Analyser::viaDram(int prod, int cons) {
    const int pp = layerPos[size_t(prod)];
    int id = leafNode[size_t(cons)];
    int child = id;
    id = tree.node(id).parent;
    while (!(w[size_t(id)].lo <= pp && pp < w[size_t(id)].hi)) {
        child = id;
        id = tree.node(id).parent;
    }
    const RANode& lca = tree.node(id);
    consumerChild = child; // the LCA's child holding the consumer
    lcaIsT = lca.type == NodeType::T;
    if (id == tree.root && lcaIsT) return true; // different segments
    const int pi = childContaining(lca, pp);
    if (lcaIsT) return childContaining(lca, w[size_t(child)].lo) != pi + 1; // not consumed next
    // An S cut: through DRAM when the consumer waits more than one stage.
    return w[size_t(child)].stage - w[size_t(lca.children[size_t(pi)])].stage > 1;
}

// A producer under a cut child of an S cut, read over the NoC by a later stage (after
// viaDram() found the LCA an S cut): the generator keeps the producer's outputs of the
// cut's invocation on its tiles until that stage has read them, while the rest of the cut
// runs there (docs/cost-model.md §6). One copy however many consumers read it.
void Analyser::keepForLaterStage(int prod) {
    const RANode& lca = tree.node(tree.node(consumerChild).parent);
    const int pc = lca.children[size_t(childContaining(lca, layerPos[size_t(prod)]))];
    const int pl = leafNode[size_t(prod)];
    if (pc == pl) return; // the stage is the producer itself: its own output buffer
    // (The top bit of the low word keeps these keys apart from dataFlow()'s (producer, cut).)
    const auto key = (std::uint64_t(unsigned(prod)) << 32) | 0x80000000u | unsigned(pc);
    if (std::find(held.begin(), held.end(), key) != held.end()) return;
    held.push_back(key);
    hold[size_t(pc)] += outputSlice(pl) * invocationsOver(pl, pc);
}

// A leaf's output slice per tile (its mapping's ofmap per tile): what its tiles hold of each
// invocation's output.
double Analyser::outputSlice(int leaf) {
    const RANode& ln = tree.node(leaf);
    return C.mapper.map(ln.layer, w[size_t(leaf)].tileCount, ln.batch).ofmapPerTile;
}

// The invocations of a producer leaf that one invocation of `node` spans (its batch over
// the producer's, rounded up).
double Analyser::invocationsOver(int producerLeaf, int node) const {
    return std::ceil(double(tree.node(node).batch) / std::max(1, tree.node(producerLeaf).batch));
}

// A producer whose earlier invocations' outputs its tiles keep for a consumer taking more
// samples at a time (dataFlow()): true the first time, so they are charged once however
// many consumers read them.
bool Analyser::keptOnce(int prod) {
    const auto key = (std::uint64_t(unsigned(prod)) << 32) | 0x40000000u;
    if (std::find(held.begin(), held.end(), key) != held.end()) return false;
    held.push_back(key);
    return true;
}

// ---- Data flow (docs/cost-model.md §3): which feature maps go through DRAM.
void Analyser::dataFlow() {
    const double db = hw.dataBits / 8.0;
    hold.assign(static_cast<size_t>(n), 0.0);
    keptOut.assign(static_cast<size_t>(n), 0.0);
    sharedProducers.resize(static_cast<size_t>(n)); // cleared, capacity kept
    for (auto& sp : sharedProducers)
        sp.clear();
    held.clear();
    A.writesDram.assign(size_t(L), 0);
    A.firstSend.assign(size_t(L), std::numeric_limits<int>::max());
    A.inputViaDram.resize(static_cast<size_t>(L)); // each row assigned below
    for (int l = 0; l < L; ++l) {
        const auto& ins = net.layers[size_t(l)].inputs;
        inputViaDram[size_t(l)].assign(ins.size(), 1);
        for (size_t k = 0; k < ins.size(); ++k)
            if (ins[k].producer >= 0) {
                const bool d = viaDram(ins[k].producer, l);
                inputViaDram[size_t(l)][k] = d;
                if (d)
                    writesDram[size_t(ins[k].producer)] = 1;
                else
                    A.firstSend[size_t(ins[k].producer)] =
                        std::min(A.firstSend[size_t(ins[k].producer)], layerPos[size_t(l)]);
                // Data kept on chip for a cut (not the consuming leaf itself) stays in the
                // buffers of that cut's tiles for the whole time the cut runs.
                // One tensor feeding several layers of the same cut is held once.
                const auto heldKey =
                    (std::uint64_t(unsigned(ins[k].producer)) << 32) | unsigned(consumerChild);
                // A leaf consumer next to its producer in a T cut: the producer's slice
                // stays beside the consumer's received input (a cut consumer is charged the
                // held input above instead, for the whole time the cut runs).
                if (!d && lcaIsT && !tree.node(consumerChild).isCut()) {
                    auto& sp = sharedProducers[size_t(consumerChild)];
                    const int pl = leafNode[size_t(ins[k].producer)];
                    if (std::find(sp.begin(), sp.end(), pl) == sp.end())
                        sp.push_back(pl); // one slice per producer
                    // A consumer taking more samples at a time than its producer: the
                    // producer's tiles keep the outputs of its earlier invocations beside its
                    // own work until the consumer has read them all (as for a cut below).
                    const double n = invocationsOver(pl, consumerChild);
                    if (n > 1 && keptOnce(ins[k].producer))
                        keptOut[size_t(pl)] += outputSlice(pl) * (n - 1);
                }
                if (!d && tree.node(consumerChild).isCut() &&
                    std::find(held.begin(), held.end(), heldKey) == held.end()) {
                    held.push_back(heldKey);
                    const NodeWork& cw = w[size_t(consumerChild)];
                    if (lcaIsT) {
                        // The next T child reads it: the producer's tiles keep every
                        // invocation's output of the round until the cut has read it, beside
                        // the producer's own work and then beside the cut's (the generator
                        // frees an output once its NoC readers have it).
                        const int pl = leafNode[size_t(ins[k].producer)];
                        const double slice = outputSlice(pl);
                        const double n = invocationsOver(pl, consumerChild);
                        hold[size_t(consumerChild)] += slice * n;
                        if (keptOnce(ins[k].producer)) hold[size_t(pl)] += slice * (n - 1);
                    } else {
                        hold[size_t(consumerChild)] += double(ins[k].bytesPerSample) *
                                                       tree.node(consumerChild).batch * db /
                                                       std::max(1, cw.tileCount);
                    }
                }
                if (!d && !lcaIsT) keepForLaterStage(ins[k].producer);
            }
        if (C.isOutput[size_t(l)]) writesDram[size_t(l)] = 1;
    }
    A.paceInputs.assign(size_t(L), 0);
    for (int l = 0; l < L; ++l) {
        const auto& ins = net.layers[size_t(l)].inputs;
        const RANode& me = tree.node(leafNode[size_t(l)]);
        if (me.parent < 0 || tree.node(me.parent).type != NodeType::S) continue;
        for (size_t k = 0; k < ins.size() && k < 32; ++k) {
            const int p = ins[k].producer;
            if (p >= 0 && !inputViaDram[size_t(l)][k] &&
                tree.node(leafNode[size_t(p)]).parent == me.parent && !writesDram[size_t(p)] &&
                A.firstSend[size_t(p)] == layerPos[size_t(l)])
                A.paceInputs[size_t(l)] |= 1u << k;
        }
    }
}

// ---- Compute-in-memory crossbars (docs/cost-model.md §8). A leaf keeps its weights
// programmed over its invocations in a segment invocation when, on every tile of its group,
// the crossbar blocks of all the segment's leaves placed there fit together (S-cut children
// own their tiles, T-cut children share them); otherwise each invocation writes them again.
// Segments follow one another, so each segment invocation writes its weights.
void Analyser::cimWeights() {
    if (hw.arch != TileArch::Cim) return;
    std::vector<Count> demand(size_t(mesh.tiles()), 0);
    for (int seg : A.segments) {
        const NodeWork& sw = w[size_t(seg)];
        std::fill(demand.begin(), demand.end(), 0);
        for (int pos = sw.lo; pos < sw.hi; ++pos) {
            const int id = leafNode[size_t(posLayer[size_t(pos)])];
            const NodeWork& lw = w[size_t(id)];
            const RANode& nd = tree.node(id);
            const LeafMapping& m = C.mapper.map(nd.layer, lw.tileCount, nd.batch);
            if (!m.cim.used) continue;
            for (int t = lw.tileBegin; t < lw.tileBegin + lw.tileCount; ++t)
                demand[size_t(t)] += m.cim.blocksPerTile;
        }
        for (int pos = sw.lo; pos < sw.hi; ++pos) {
            const int id = leafNode[size_t(posLayer[size_t(pos)])];
            NodeWork& lw = w[size_t(id)];
            const RANode& nd = tree.node(id);
            const LeafMapping& m = C.mapper.map(nd.layer, lw.tileCount, nd.batch);
            if (!m.cim.used) continue;
            bool fits = net.layers[size_t(nd.layer)].kind != LayerKind::MatMul &&
                        m.cim.blocksPerTile <= m.cim.crossbars;
            for (int t = lw.tileBegin; fits && t < lw.tileBegin + lw.tileCount; ++t)
                fits = demand[size_t(t)] <= m.cim.crossbars;
            const double inv = double(A.segBatch) / std::max(1, nd.batch);
            lw.cimPinned = fits;
            lw.cimPrograms = double(m.cim.programmings) * (fits ? 1.0 : inv);
            lw.cimProgramsDefault = double(m.cim.programmingsDefault) * (fits ? 1.0 : inv);
            lw.writeSaved = fits && inv > 1 ? m.cim.exposedWrite * (1.0 - 1.0 / inv) : 0.0;
        }
    }
}

// ---- Leaves: intra-layer mapping, buffers; bottom-up time and buffer use.
void Analyser::leafBuffers() {
    for (auto it = pre.rbegin(); it != pre.rend(); ++it) {
        const int id = *it;
        const RANode& nd = tree.node(id);
        NodeWork& nw = w[size_t(id)];
        if (nd.type == NodeType::Leaf) {
            const LeafMapping& m = C.mapper.map(nd.layer, nw.tileCount, nd.batch);
            nw.mapping = &m;
            nw.compute = m.cycles - nw.writeSaved;
            nw.wgt = m.weightPerTile;
            nw.act =
                m.ifmapPerTile * dramGapShare(nd.layer, m) + m.operandBPerTile + m.ofmapPerTile;
            for (int p : sharedProducers[size_t(id)]) {
                // The producer's slice per tile; a consumer invocation spanning several
                // producer invocations (larger batch) waits for all of them, all alive.
                nw.act += outputSlice(p) *
                          std::max(1.0, double(nd.batch) / std::max(1, tree.node(p).batch));
            }
            continue;
        }
        if (nd.type == NodeType::T) {
            Cycles t = 0;
            nw.wgt = 0;
            nw.act = 0;
            const bool isRoot = id == tree.root;
            for (int c : nd.children) {
                t += w[size_t(c)].compute;
                if (isRoot) {
                    // Segments run one after another and reload their weights.
                    nw.act = std::max(nw.act, w[size_t(c)].wgt + w[size_t(c)].act);
                } else {
                    nw.wgt += w[size_t(c)].wgt; // weights stay resident within a segment
                    const double a = w[size_t(c)].act + hold[size_t(c)] + keptOut[size_t(c)];
                    if (a > nw.act) nw.act = a, nw.kept = w[size_t(c)].kept + keptOut[size_t(c)];
                }
            }
            nw.compute = t * nd.subBatch;
        } else {
            Cycles slot = 0;
            for (int c : nd.children) {
                slot = std::max(slot, w[size_t(c)].compute);
                nw.wgt = std::max(nw.wgt, w[size_t(c)].wgt);
                // Pipelined sub-batches keep a second input slice in flight (not of the
                // outputs kept for a later consumer).
                const NodeWork& cw = w[size_t(c)];
                const double a = (cw.act - cw.kept) * (nd.subBatch > 1 ? 1.5 : 1.0) + cw.kept +
                                 hold[size_t(c)] + keptOut[size_t(c)];
                if (a > nw.act) nw.act = a, nw.kept = cw.kept + keptOut[size_t(c)];
            }
            nw.compute = slot * (nd.subBatch - 1) + computeFill(nd, nw.maxStage);
        }
    }
}

// A strided convolution reading its input from DRAM with its stride larger than its kernel:
// the rows and columns no window needs travel with their neighbour's window, so the whole
// tensor is read once (the generator's DRAM cells, docs/isa.md), and a tile holds n x s
// rows of input for n output rows, not (n - 1) x s + k. The factor on the mapper's ifmap
// per tile (1 elsewhere).
double Analyser::dramGapShare(int layer, const LeafMapping& m) const {
    const Layer& ly = net.layers[size_t(layer)];
    if (ly.kind != LayerKind::Conv || ly.inputs.size() != 1 || !inputViaDram[size_t(layer)][0])
        return 1.0;
    auto share = [](int out, int parts, int stride, int kernel, int dilation) {
        const int n = (out + std::max(1, parts) - 1) / std::max(1, parts);
        const int span = (kernel - 1) * dilation + 1;
        if (stride <= span || n < 1) return 1.0;
        return double(n * stride) / double((n - 1) * stride + span);
    };
    return share(ly.outH, m.ph, ly.strideH, ly.kernelH, ly.dilationH) *
           share(ly.outW, m.pw, ly.strideW, ly.kernelW, ly.dilationW);
}

// The compute-only fill of an S cut (its `compute`): the first sub-batch passes its stages
// one after another, each as long as its slowest child (the sum of those).
Cycles Analyser::computeFill(const RANode& nd, int maxStage) {
    std::vector<Cycles>& st = C.stageScratch;
    st.assign(size_t(maxStage) + 1, 0.0);
    for (int c : nd.children) {
        Cycles& len = st[size_t(w[size_t(c)].stage)];
        len = std::max(len, w[size_t(c)].compute);
    }
    Cycles fill = 0;
    for (Cycles t : st)
        fill += t;
    return fill;
}

// An S-cut child that is itself an S cut, read by a later child, also an S cut, that takes
// no more samples at a time: the reader's sub-batches follow the producer's as they come
// out, not its end (docs/cost-model.md §5, "Sub-batch by sub-batch"). The reader starts
// once the producer's first sub-batch has passed its fill, and late enough that each of
// its sub-batches starts after the producer's sub-batch holding its samples as the S-T
// walk places them (the producer's slots stretched to its time, the reader's not): the
// generator emits invocations in that order. Returns that start after the producer's, or
// -1 when the reader waits for the producer's end.
Cycles Analyser::subBatchFeed(const RANode& nd, size_t i, size_t j) const {
    const RANode& pn = tree.node(nd.children[i]);
    const RANode& cn = tree.node(nd.children[j]);
    if (pn.type != NodeType::S || cn.type != NodeType::S || pn.subBatch < 2 || pn.batch != cn.batch)
        return -1;
    const int gp = pn.batch / pn.subBatch, gc = cn.batch / cn.subBatch;
    if (gc > gp) return -1;
    const NodeWork& pw = w[size_t(nd.children[i])];
    const NodeWork& cw = w[size_t(nd.children[j])];
    const double stretch = pw.piped > 0 ? std::max(1.0, pw.time / pw.piped) : 1.0;
    const Cycles fill = (pw.piped - pw.slot * (pn.subBatch - 1)) * stretch;
    Cycles lag = 0;
    for (int s = 0; s < pn.batch; s += gc)
        lag = std::max(lag, (s / gp) * pw.slot * stretch - (s / gc) * cw.slot);
    return fill + lag;
}

// The first sub-batch's pass through an S cut, with each child's start (docs/cost-model.md
// §5, "Paced fill"): a child starts once the earlier children it reads from let it. A leaf
// reading a leaf sibling's output over the NoC keeps pace with it as the generator's stage
// dependencies let it (LeafTraffic::pace) when its transfer is the first on the producer's
// in-order STORE/SEND engines (the producer stores nothing and this is its first NoC
// consumer): it starts once `lead` of the producer's compute has run (the rest of the
// producer's time, waiting on its own inputs or traffic, comes first) and ends no sooner
// than `tail` of its own time after the producer's end. An S cut reading an S cut follows
// it sub-batch by sub-batch (subBatchFeed()); any other dependency waits for the producer's
// end.
Cycles Analyser::pacedFill(const RANode& nd, const NodeWork& nw) {
    std::vector<Cycles>& st = C.stageScratch; // per child: start, then end
    st.assign(2 * nd.children.size(), 0.0);
    Cycles fill = 0;
    for (size_t j = 0; j < nd.children.size(); ++j) {
        NodeWork& cw = w[size_t(nd.children[j])];
        Cycles start = 0, end = 0;
        forEachSiblingInput(nd, nw.lo, cw, [&](size_t i, int l, int, int k) {
            if (k < 32 && (A.paceInputs[size_t(l)] >> k & 1u)) {
                const LeafTraffic::Pace& p = cw.traffic->pace[size_t(k)];
                // Only the producer's compute is spread over its stages; what it waits
                // beyond that (its inputs, DRAM, links) comes first.
                const NodeWork& pw = w[size_t(nd.children[i])];
                const Cycles comp = std::min(pw.compute, pw.time);
                start = std::max(start, st[2 * i] + pw.time - (1 - p.lead) * comp);
                end = std::max(end, st[2 * i + 1] + p.tail * cw.time);
            } else {
                const Cycles fed = subBatchFeed(nd, i, j);
                start = std::max(start, fed >= 0 ? st[2 * i] + fed : st[2 * i + 1]);
            }
        });
        // A T child's first sub-batch waits for the exchange of its leaves fed from ahead
        // (docs/cost-model.md §5, "Inputs from ahead"; NodeWork::aheadWait): those it holds
        // directly under this cut, not those of an S cut nested in it, whose own fill counts
        // theirs.
        Cycles wait = 0;
        if (tree.node(nd.children[j]).type == NodeType::T)
            for (int pos = cw.lo; pos < cw.hi; ++pos) {
                const int leaf = leafNode[size_t(posLayer[size_t(pos)])];
                if (tcutUnderS(leaf) == nd.children[j]) wait += w[size_t(leaf)].aheadWait;
            }
        start += wait;
        st[2 * j] = cw.stageOffset = start;
        st[2 * j + 1] = std::max(start + cw.time, end);
        fill = std::max(fill, st[2 * j + 1]);
    }
    return fill;
}

// The S cut's sub-batches with the DRAM serving in program order (docs/cost-model.md §5,
// "DRAM-ordered pipeline"). Without DRAM, child j's sub-batch k starts at S(j,k) =
// stageOffset_j + k slot and spans what its first sub-batch spans in the paced fill. The
// replay's DRAM serves what the program needs first, and the program follows that clock:
// taken in that order, a (child, sub-batch) starts once the DRAM has moved everything
// needed before it (its own inputs stream in as it runs; a child's weights, all loaded
// once per segment invocation, come with its first sub-batch, which starts once their
// first slice is in; outputs are stored at its end), and no sooner than its previous
// sub-batch on the same tiles allows, nor earlier against its producers' same sub-batch
// than in the fill. The cut lasts until the last one ends: the drain that the DRAM bound
// max(pipeline, DRAM time) leaves out. Marks the cut's leaves dramOrdered. With `preloaded`
// the cut's weights count as served before it starts (a segment's weights loading ahead
// of it, chainSegments()).
Cycles Analyser::dramOrderedPipeline(const RANode& nd, const NodeWork& nw, bool preloaded) {
    const std::vector<Cycles>& st = C.stageScratch; // pacedFill(): per child start, end
    const size_t m = nd.children.size();
    const int n = nd.subBatch;
    const double perSeg = std::max(1.0, double(A.segBatch) / std::max(1, nd.batch));
    auto& need = C.pipeNeed; // per child: weights, inputs, outputs (DRAM bytes)
    need.assign(3 * m, 0.0);
    for (size_t j = 0; j < m; ++j) {
        const NodeWork& cw = w[size_t(nd.children[j])];
        double all = 0, out = 0;
        for (int pos = cw.lo; pos < cw.hi; ++pos) {
            NodeWork& lw = w[size_t(leafNode[size_t(posLayer[size_t(pos)])])];
            lw.dramOrdered = true;            // this cut's time holds the wait for its weights
            lw.dramCut = int(&nw - w.data()); // (the outer cut's call comes last)
            const LeafTraffic& T = *lw.traffic;
            need[3 * j] += T.weightDram / perSeg;
            all += T.actDram, out += T.actDramOut;
        }
        const double outShare = all > 0 ? out / all : 0.0;
        need[3 * j + 1] = cw.dram * (1 - outShare);
        need[3 * j + 2] = cw.dram * outShare;
    }
    auto& items = C.pipeItems; // (when, child, sub-batch, 0 start / 1 end) on that clock
    items.clear();
    for (size_t j = 0; j < m; ++j)
        for (int k = 0; k < n; ++k) {
            const Cycles s = st[2 * j] + k * nw.slot;
            items.push_back({s, int(j), k, 0});
            if (need[3 * j + 2] > 0) items.push_back({s + st[2 * j + 1] - st[2 * j], int(j), k, 1});
        }
    std::sort(items.begin(), items.end());
    auto& start = C.pipeStart; // [k * m + j]
    start.assign(m * size_t(n), 0.0);
    double served = 0;
    if (preloaded) // counted as served before the cut starts
        for (size_t j = 0; j < m; ++j)
            served -= need[3 * j];
    Cycles end = 0;
    for (const auto& item : items) {
        // (Named copies: a lambda below uses k, and clang 14 does not capture bindings.)
        const Cycles key = std::get<0>(item);
        const size_t j = size_t(std::get<1>(item));
        const int k = std::get<2>(item);
        if (std::get<3>(item)) { // its end: its outputs are stored
            served += need[3 * j + 2];
            continue;
        }
        const NodeWork& cw = w[size_t(nd.children[j])];
        const double weights = k == 0 ? need[3 * j] : 0.0;
        Cycles s = std::max(key, (served + weights / kStages) / dramBw);
        served += weights + need[3 * j + 1];
        // Sub-batches a child's time apart (an S child: its period, pipelinePeriod()).
        const Cycles apart = tree.node(nd.children[j]).type == NodeType::S
                                 ? pipelinePeriod(w, tree, nd.children[j])
                                 : cw.time;
        if (k > 0) s = std::max(s, start[size_t(k - 1) * m + j] + apart);
        forEachSiblingInput(nd, nw.lo, cw, [&](size_t i, int, int, int) {
            if (i < j) s = std::max(s, start[size_t(k) * m + i] + st[2 * j] - st[2 * i]);
        });
        start[size_t(k) * m + j] = s;
        end = std::max(end, s + st[2 * j + 1] - st[2 * j]);
    }
    return end;
}

bool Analyser::overflow(int id) {
    const double cap = hw.bufferBytes;
    const RANode& nd = tree.node(id);
    const NodeWork& nw = w[size_t(id)];
    const std::string what =
        nd.type == NodeType::Leaf
            ? tree.pathOf(id) + " (" + net.layers[size_t(nd.layer)].name + ")"
            : std::string(nd.type == NodeType::S ? "S" : "T") + " cut " + tree.pathOf(id);
    return invalid(id, "buffer overflow at " + what + ": needs " + fmtBytes(nw.wgt + nw.act) +
                           " per tile, " + fmtBytes(nw.wgt + nw.act - cap) + " over the " +
                           fmtBytes(cap) + " buffer");
}

// Report the leftmost leaf that overflows on its own, else the deepest cut.
bool Analyser::checkBuffers() {
    const double cap = hw.bufferBytes;
    for (int id : pre)
        if (tree.node(id).type == NodeType::Leaf && w[size_t(id)].wgt + w[size_t(id)].act > cap)
            return overflow(id);
    for (auto it = pre.rbegin(); it != pre.rend(); ++it)
        if (w[size_t(*it)].wgt + w[size_t(*it)].act > cap) return overflow(*it);
    return true;
}

// ---- Traffic per leaf: exactly the transfers the instruction generator emits
// (transfers.h), memoised per placement (EvalContext::Impl::trafficOf; memory bounded by
// turnOver).
void Analyser::leafTraffic() {
    C.turnOver();
    std::vector<LeafPlacement>& place = C.placeScratch;
    place.resize(static_cast<size_t>(L));
    for (int l = 0; l < L; ++l) {
        const int id = leafNode[size_t(l)];
        const NodeWork& lw = w[size_t(id)];
        place[size_t(l)] = {l, tree.node(id).batch, lw.tileBegin, lw.tileCount, lw.mapping};
    }
    std::vector<const LeafPlacement*>& prods = C.prodScratch;
    for (int l = 0; l < L; ++l) {
        const auto& ins = net.layers[size_t(l)].inputs;
        prods.assign(ins.size(), nullptr);
        for (size_t k = 0; k < ins.size(); ++k)
            if (!inputViaDram[size_t(l)][k]) prods[k] = &place[size_t(ins[k].producer)];
        w[size_t(leafNode[size_t(l)])].traffic =
            &C.trafficOf(place[size_t(l)], prods, writesDram[size_t(l)] != 0,
                         A.paceInputs[size_t(l)], A.segBatch);
    }
    // A producer's tiles send to its consumers one after another (docs/cost-model.md §5).
    for (int l = 0; l < L; ++l) {
        NodeWork& lw = w[size_t(leafNode[size_t(l)])];
        lw.sentOut += lw.traffic->storedMax;
        const auto& ins = net.layers[size_t(l)].inputs;
        for (size_t k = 0; k < ins.size(); ++k)
            if (!inputViaDram[size_t(l)][k]) {
                const int p = leafNode[size_t(ins[k].producer)];
                NodeWork& pw = w[size_t(p)];
                pw.sentOut += lw.traffic->sentByInput[k];
                const int tcut = tcutUnderS(p);
                if (tcut < 0) {
                    const int par = tree.node(p).parent;
                    if (par >= 0 && tree.node(par).type == NodeType::S) {
                        ++pw.stageConsumers;
                        pw.sentShared += std::max(0.0, lw.traffic->receivedByInput[k] -
                                                           lw.traffic->sentByInput[k]);
                    }
                    continue;
                }
                const int pos = layerPos[size_t(l)];
                if (pos >= w[size_t(tcut)].lo && pos < w[size_t(tcut)].hi) continue;
                ++pw.sentAhead;
                // At the links' pace, but no longer than the consumer's busiest input link
                // takes to carry all of the exchange (docs/cost-model.md §5, "Sends ahead
                // at the links' pace").
                const LeafTraffic& T = *lw.traffic;
                const double paced =
                    std::min(T.pacedByInput[k],
                             std::max({T.sentByInput[k], T.nocInMaxLink, T.nocSameMaxLink}));
                pw.sentAheadPaced = std::max(pw.sentAheadPaced, paced - T.sentByInput[k]);
            }
    }
    // A leaf of a T cut under an S cut that sends ahead, to several consumers of the S
    // cut's later stages (whether or not it also feeds a leaf of its own T cut): the T
    // cut's next pass on its tiles waits behind those sends, and the slowest of them moves
    // at the crowded links' pace (docs/cost-model.md §5, "Sends ahead at the links' pace").
    for (int l = 0; l < L; ++l) {
        NodeWork& lw = w[size_t(leafNode[size_t(l)])];
        if (lw.sentAhead > 1) lw.sentOut += lw.sentAheadPaced;
        // A stage sending to several consumers, each fed by more than one of its tiles at
        // once: those tiles share the consumer tile's links while they send to it
        // (docs/cost-model.md §5, "Consumers fed by several tiles").
        if (lw.stageConsumers > 1) lw.sentOut += kSharedIngress * lw.sentShared;
    }
}

void Analyser::leafDelay(NodeWork& nw, const RANode& nd, const std::vector<char>& readsDram) {
    const LeafTraffic& T = *nw.traffic;
    const double inv = T.invocations;
    nw.dram = T.actDram / inv;
    // A leaf reading an input from DRAM waits the DRAM latency for its first data
    // (its producer stored it; nothing earlier can fetch it).
    const Cycles latency = nw.latency = readsDram[size_t(nd.layer)] ? hw.dramLatencyCycles : 0.0;
    double sideTime = 0;
    if (portBw > 0)
        for (double b : T.actSide)
            sideTime = std::max(sideTime, b / inv / portBw);
    // Its inputs received over the NoC arrive between its producers' compute and
    // its own (docs/cost-model.md §5). The producer sends stage by stage as it
    // computes, so an exchange x overlaps the producer's span c_p (its compute, or its
    // STORE/SEND engine's time when that is longer: its sends run through it) but for
    // its last stage: what is left after the producer ends is max(x / S, x - c_p (S-1) / S).
    // Inputs in the producer's coordinates stream on into the consumer's stages
    // (one stage of lag); re-partitioned ones (a window on the producer's channels,
    // a folded reshape) are waited for whole.
    double producerCompute = std::numeric_limits<double>::infinity();
    for (const auto& [prod, k] : C.producers[size_t(nd.layer)])
        if (!inputViaDram[size_t(nd.layer)][size_t(k)]) {
            const NodeWork& pw = w[size_t(leafNode[size_t(prod)])];
            const double span = std::max(pw.compute, pw.sentOut / pw.traffic->invocations / linkBw);
            const double perConsumer =
                span * double(nd.batch) / std::max(1, tree.node(leafNode[size_t(prod)]).batch);
            producerCompute = std::min(producerCompute, perConsumer);
        }
    // On a crowded mesh the exchange is paced by the busiest tile's SENDs at their shared
    // links (LeafTraffic::nocPaced): what is left of it after the producer ends counts as
    // for a re-partitioned input.
    const double xFull = T.nocInMaxLink / inv / linkBw, xSame = T.nocSameMaxLink / inv / linkBw;
    const double xPaced = T.nocPaced / inv / linkBw;
    auto left = [&](double x) {
        return std::max(x / kStages, x - producerCompute * (1 - 1.0 / kStages));
    };
    double exposed = (xFull > 0 ? left(xFull) : 0.0) + xSame / kStages;
    if (xPaced > 0 && std::isfinite(producerCompute)) {
        // Inputs all in the producer's coordinates: the consumer tile the busiest sender
        // serves last receives its piece stage by stage, and computes on each stage as it
        // lands, so its compute overlaps that piece but for one stage (docs/cost-model.md
        // §5, "The last piece streamed").
        double paced = left(xPaced);
        if (xFull == 0)
            paced =
                std::max(xPaced / kStages, paced - std::min(nw.compute, T.nocPacedPiece / linkBw) *
                                                       (1 - 1.0 / kStages));
        exposed = std::max(exposed, paced);
    }
    // Its tiles' STORE/SEND engines move its stores and its sends to every consumer one
    // transfer at a time (sentOut; docs/cost-model.md §5, "One consumer at a time").
    // A leaf of a T cut whose NoC inputs all come from outside that cut, from an S-cut
    // sibling running ahead, receives them while the T cut works on the sample before
    // (docs/cost-model.md §5, "Inputs from ahead"): its link terms drop out.
    const Cycles sends = std::max(T.maxEgress, nw.sentOut) / inv / linkBw;
    const Cycles stores = T.actDramOut / inv / dramBw;
    const Cycles received = nw.compute + latency + std::min(nw.compute, exposed);
    nw.aheadWait = 0;
    if (fedFromAhead(nd)) {
        // The first sub-batch has no sample before it to receive behind: it waits for what
        // is left of its exchange after its producer (pacedFill(); "Inputs from ahead").
        nw.rest = std::max({nw.compute + latency, sends, stores});
        nw.aheadWait = std::max(0.0, received - nw.rest);
    } else {
        nw.rest = std::max({received, std::max(T.actMaxLink / inv / linkBw, sends), stores});
    }
    nw.time = std::max({nw.rest, nw.dram / dramBw + latency, sideTime});
}

// The T cut that holds leaf `leafId` directly under an S cut: the child of the leaf's
// nearest S ancestor, when that child is a T cut; -1 otherwise (the leaf is that child, or
// has no S ancestor).
int Analyser::tcutUnderS(int leafId) const {
    int id = leafId;
    for (int par = tree.node(id).parent; par >= 0; id = par, par = tree.node(id).parent)
        if (tree.node(par).type == NodeType::S) return tree.node(id).type == NodeType::T ? id : -1;
    return -1;
}

// Whether every NoC input of leaf nd comes from outside the T cut that holds it directly
// under an S cut: from another child of that S cut, or from before it on other tiles
// (leafDelay()). A producer before the S cut on the cut's tiles does not count: its slices
// wait there and go out on the SEND engines of the cut's stages, behind their own sends
// (docs/cost-model.md §5, "Inputs from ahead").
bool Analyser::fedFromAhead(const RANode& nd) const {
    const int tcut = tcutUnderS(leafNode[size_t(nd.layer)]);
    if (tcut < 0) return false;
    const NodeWork& tw = w[size_t(tcut)];
    const NodeWork& sw = w[size_t(tree.node(tcut).parent)];
    bool any = false;
    for (const auto& [prod, k] : C.producers[size_t(nd.layer)])
        if (!inputViaDram[size_t(nd.layer)][size_t(k)]) {
            const int pos = layerPos[size_t(prod)];
            if (pos >= tw.lo && pos < tw.hi) return false;
            const NodeWork& pw = w[size_t(leafNode[size_t(prod)])];
            if ((pos < sw.lo || pos >= sw.hi) && pw.tileBegin < sw.tileBegin + sw.tileCount &&
                sw.tileBegin < pw.tileBegin + pw.tileCount)
                return false; // from before the S cut, held on its tiles
            any = true;
        }
    return any;
}

void Analyser::cutDelay(NodeWork& nw, const RANode& nd) {
    double t = 0, bytes = 0;
    if (nd.type == NodeType::T) {
        // One pass over the children, then each further pass no longer than its DRAM
        // transfers or the rest: the LOAD engines read a child's inputs while the
        // children before it compute (docs/cost-model.md §5, "T-cut passes").
        double rest = 0;
        for (int c : nd.children) {
            NodeWork& cw = w[size_t(c)];
            cw.passOffset = t;
            t += cw.time;
            bytes += cw.dram;
            rest += cw.rest;
        }
        // One pass: the children overlap tile by tile, sharing the DRAM (a root cut's
        // children are segments, chained in chainSegments()).
        if (nd.subBatch == 1 && nd.children.size() > 1 && int(&nw - w.data()) != tree.root)
            t = std::max(overlapPass(nd, nw), bytes / dramBw);
        nw.slot = std::min(t, std::max(rest, bytes / dramBw));
        nw.rest = rest * nd.subBatch;
        nw.time = t + nw.slot * (nd.subBatch - 1);
    } else {
        // A T-cut child repeats pass after pass in the pipeline (cutDelay() above).
        for (int c : nd.children) {
            t = std::max(t, pipelinePeriod(w, tree, c));
            bytes += w[size_t(c)].dram;
        }
        // Every child moves one sub-batch per slot: add up the links of every leaf
        // below, scaled from a segment invocation to one child invocation.
        const double perSlot = double(nd.batch / nd.subBatch) / std::max(1, A.segBatch);
        const double busiest = C.busiestOf(w, leafNode, posLayer, nw.lo, nw.hi, perSlot, false);
        nw.slot = std::max({t, bytes / dramBw, busiest / linkBw});
        nw.time = nw.piped = nw.slot * (nd.subBatch - 1) + pacedFill(nd, nw);
        const Cycles ordered = dramOrderedPipeline(nd, nw);
        // A segment's own S cut held up by the DRAM's order: also its time were its weights
        // in before it starts (what is left once they load ahead of it; costSegment()).
        nw.preloaded = 0;
        if (ordered > nw.piped && A.segments[size_t(nw.segment)] == int(&nw - w.data()))
            nw.preloaded = std::max(nw.piped, dramOrderedPipeline(nd, nw, true));
        nw.time = std::max(nw.piped, ordered);
        nw.rest = nw.time;
    }
    nw.dram = bytes * nd.subBatch;
}

// ---- Delay per invocation, bottom-up (docs/cost-model.md §5). A leaf's activation
// traffic (inputs read through DRAM or received over the NoC, its output written) is
// on its own critical path: its consumers need its output, so no other leaf's compute
// can hide it. Weights are left to the segment level (loaded once per segment
// invocation, ahead of their leaf). S-cut children share DRAM and links, so a slot
// lasts at least their summed traffic over either.
void Analyser::delays() {
    dramBw = hw.dramBytesPerCycle, linkBw = hw.nocBytesPerCycle;
    portBw = hw.dramPortBytesPerCycle; // 0: no per-side limit
    std::vector<char> readsDram(static_cast<size_t>(L), 0);
    for (int l = 0; l < L; ++l)
        for (char d : inputViaDram[size_t(l)])
            readsDram[size_t(l)] |= d;
    for (auto it = pre.rbegin(); it != pre.rend(); ++it) {
        const int id = *it;
        const RANode& nd = tree.node(id);
        NodeWork& nw = w[size_t(id)];
        if (nd.type == NodeType::Leaf)
            leafDelay(nw, nd, readsDram);
        else
            cutDelay(nw, nd);
    }
}

// A T cut's one pass with its children overlapping tile by tile (docs/cost-model.md §5,
// "T-cut children overlap"): each tile runs its instructions in order with no barrier
// between the children, so a child starts once each of its leaves finds its tiles free of
// the children before it and each of its invocations finds the invocations of its producers
// there that hold its samples done (as chainSegments() chains segments, there by the first
// and last invocations). The invocations are placed as the S-T graph places them on the
// program's clock, the order the instruction generator emits them in; the children start
// in order. Sets each child's passOffset; returns the end of the last to finish.
Cycles Analyser::overlapPass(const RANode& nd, const NodeWork& nw) {
    TileClock& clock = C.passClock;
    clock.reset(nw.tileCount);
    std::vector<PassInvocation>& invs = C.passInvs;
    invs.clear();
    C.passRange.resize(2 * size_t(L)); // per leaf position: its invocations in invs
    Cycles prev = 0, end = 0;
    for (int c : nd.children) {
        NodeWork& cw = w[size_t(c)];
        const size_t from = invs.size();
        auto record = [&](int leaf, Cycles s, Cycles e, int sample) {
            const RANode& ln = tree.node(leaf);
            invs.push_back({layerPos[size_t(ln.layer)], sample, sample + ln.batch - 1, s, e});
        };
        placeInvocations(tree, w, true, c, 0, 0, 1.0, record);
        std::sort(invs.begin() + std::ptrdiff_t(from), invs.end());
        Cycles start = prev;
        for (size_t i = from; i < invs.size(); ++i) {
            const PassInvocation& v = invs[i];
            const int l = posLayer[size_t(v.pos)];
            const NodeWork& lw = w[size_t(leafNode[size_t(l)])];
            const int b = lw.tileBegin - nw.tileBegin;
            start = std::max(start, clock.maxOver(b, b + lw.tileCount) - v.start);
            for (const auto& [prod, k] : C.producers[size_t(l)]) {
                const size_t p = size_t(layerPos[size_t(prod)]);
                if (int(p) < nw.lo || int(p) >= cw.lo) continue; // not an earlier child's
                for (int u = C.passRange[2 * p]; u < C.passRange[2 * p + 1]; ++u)
                    if (invs[size_t(u)].first <= v.last && v.first <= invs[size_t(u)].last)
                        start = std::max(start, invs[size_t(u)].end - v.start);
            }
        }
        for (size_t i = from; i < invs.size(); ++i) {
            PassInvocation& v = invs[i];
            if (i == from || invs[i - 1].pos != v.pos) C.passRange[2 * size_t(v.pos)] = int(i);
            C.passRange[2 * size_t(v.pos) + 1] = int(i) + 1;
            v.start += start;
            v.end += start;
            const NodeWork& lw = w[size_t(leafNode[size_t(posLayer[size_t(v.pos)])])];
            const int b = lw.tileBegin - nw.tileBegin;
            clock.raise(b, b + lw.tileCount, v.end);
        }
        cw.passOffset = prev = start;
        end = std::max(end, start + cw.time);
    }
    return end;
}

// First and last start of every node within its segment: T-cut children at their offsets
// in the cut's first pass (overlapPass()), later passes each nw.slot long with the
// children's starts in proportion; S-cut children one slot per stage and per sub-batch (the
// same walk as the S-T graph).
void Analyser::firstStarts() {
    for (int id : pre) {
        const RANode& nd = tree.node(id);
        if (nd.type == NodeType::Leaf) continue;
        const NodeWork& nw = w[size_t(id)];
        const bool top = id == tree.root;
        Cycles first = top ? 0 : nw.firstStart, last = top ? 0 : nw.lastStart;
        const Cycles round = firstPass(w, nd);
        // Later passes: each nw.slot long, the children's starts in proportion.
        const double later = round > 0 ? nw.slot / round : 1.0;
        for (int c : nd.children) {
            NodeWork& cw = w[size_t(c)];
            if (top && A.rootIsT) {
                cw.firstStart = cw.lastStart = 0;
            } else if (nd.type == NodeType::T) {
                cw.firstStart = first + cw.passOffset;
                cw.lastStart = nd.subBatch > 1 ? last + round + (nd.subBatch - 2) * nw.slot +
                                                     cw.passOffset * later
                                               : last + cw.passOffset;
            } else {
                cw.firstStart = first + cw.stageOffset;
                cw.lastStart = last + cw.stageOffset + (nd.subBatch - 1) * nw.slot;
            }
        }
    }
}

// Fills A; on an invalid tree sets ev's validity fields and returns false.
bool analyse(EvalContext::Impl& C, const RATree& tree, int totalBatch, const EvalOptions& opt,
             Analysis& A, Evaluation& ev) {
    Analyser an(C, tree, opt, A, ev);
    if (auto err = validateStructure(tree, C.net, totalBatch)) return an.invalid(-1, err->message);
    an.orderNodes();
    an.bottomUp();
    if (!an.allocateTileGroups()) return false;
    an.assignSegments();
    an.dataFlow();
    an.cimWeights();
    an.leafBuffers();
    if (!an.checkBuffers()) return false;
    an.leafTraffic();
    an.delays();
    an.firstStarts();
    return true;
}

// The working data of evaluate() after analyse(): per-segment traffic, energy and bounds.
struct Coster {
    EvalContext::Impl& C;
    const RATree& tree;
    const int totalBatch;
    const EvalOptions& opt;
    Evaluation& ev;
    const Hardware& hw;
    const Mesh& mesh;
    const int n;
    std::vector<NodeWork>& w;
    const std::vector<int>& pre;
    const std::vector<int>& leafNode;
    const std::vector<int>& posLayer;
    const bool rootIsT;
    const std::vector<int>& segments;
    const int segBatch;
    const int segInvocations;
    const std::vector<std::vector<char>>& inputViaDram;
    const std::vector<char>& writesDram;
    std::vector<double> totalLinks;
    std::vector<double> tileDram;
    const double sramPj;
    double dramTotal = 0, hopBytesTotal = 0, interHopBytesTotal = 0, macTotal = 0;
    double programsTotal = 0, programsDefaultTotal = 0; // compute-in-memory crossbar writes
    EnergyBreakdown E;
    std::vector<double> segTime;
    std::vector<Bound> segBound, segOtherBound;
    std::vector<double> segDram, segWeightLink, segDramTime, segNocTime;
    // Of segTime: the part its DRAM traffic bounds (its DRAM time or its weights' arrival)
    // and the rest.
    std::vector<double> segDramPart, segOtherPart;
    // Start and length of segment s in root invocation j at [j x segments + s]
    // (chainSegments()).
    std::vector<Cycles> segStart, segLen;
    std::vector<std::pair<Cycles, Cycles>> early; // chainSegments(): (tiles free, weight time)
    TileClock tileFree;                           // chainSegments()' working data
    TileClock loadFree;                           // ... when the tiles' LOAD engines free up
    std::vector<Cycles> firstEnd, lastEnd;        // ... per leaf node
    Cycles dramFloor = 0; // every segment's DRAM time, one root invocation (chainSegments())
    const double dramBw, linkBw;
    std::vector<std::pair<Cycles, const NodeWork*>> byStart; // leaves with weights, by first start
    std::vector<std::pair<Cycles, double>> actByStart; // leaves with activation DRAM, likewise
    Cycles delay = 0;

    Coster(EvalContext::Impl& c, const RATree& t, int batch, const EvalOptions& o, Analysis& A,
           Evaluation& e)
        : C(c), tree(t), totalBatch(batch), opt(o), ev(e), hw(c.hw), mesh(c.mesh), n(t.size()),
          w(A.w), pre(A.pre), leafNode(A.leafNode), posLayer(A.posLayer), rootIsT(A.rootIsT),
          segments(A.segments), segBatch(A.segBatch), segInvocations(A.segInvocations),
          inputViaDram(A.inputViaDram), writesDram(A.writesDram),
          totalLinks(o.detail ? size_t(c.mesh.linkCount()) : 0, 0.0),
          tileDram(o.detail ? size_t(c.mesh.tiles()) : 0, 0.0),
          sramPj(c.hw.energy.sramPjPerByte(c.hw.bufferBytes)), segTime(A.segments.size(), 0.0),
          segBound(A.segments.size(), Bound::Compute),
          segOtherBound(A.segments.size(), Bound::Compute), segDram(A.segments.size(), 0.0),
          segWeightLink(A.segments.size(), 0.0), segDramTime(A.segments.size(), 0.0),
          segNocTime(A.segments.size(), 0.0), segDramPart(A.segments.size(), 0.0),
          segOtherPart(A.segments.size(), 0.0), dramBw(c.hw.dramBytesPerCycle),
          linkBw(c.hw.nocBytesPerCycle) {}

    // NoC energy of `hop` hop-bytes, `inter` of them over inter-chiplet links.
    double hopPj(double hop, double inter) const {
        if (inter <= 0) return hop * 8 * hw.energy.nocPjPerBitHop;
        return (hop - inter) * 8 * hw.energy.nocPjPerBitHop + inter * 8 * hw.chiplets.pjPerBitHop;
    }
    Cycles weightBoundOf(size_t s);
    void costSegment(size_t s);
    Cycles chainSegments();
    void segmentShares();
    void totals();
    void nodeFigures();
    void intervals();
};

// Weights arrive in the order their leaves first run, through the shared DRAM and
// the links they use; a leaf cannot start before its weights are in, and what
// follows it in the segment follows it (a flow shop: docs/cost-model.md §5).
// Also sets segWeightLink[s], the weights' busiest link / link bandwidth.
Cycles Coster::weightBoundOf(size_t s) {
    const NodeWork& sw = w[size_t(segments[s])];
    Cycles weightBound = 0;
    segWeightLink[s] = 0;
    if (!byStart.empty()) {
        std::stable_sort(byStart.begin(), byStart.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        double cumDram = 0;
        // The weights of every leaf so far cross the links together: the busiest link of
        // their sum bounds their arrival.
        const std::vector<double>& linkMaxAt = C.weightMaxOf(byStart);
        int cut = -1;
        // The DRAM serves in need order: the activation traffic of the leaves that start
        // before a leaf comes before its weights.
        std::sort(actByStart.begin(), actByStart.end());
        size_t a = 0;
        double actBefore = 0;
        for (size_t i = 0; i < byStart.size(); ++i) {
            const auto& [start, lw] = byStart[i];
            for (; a < actByStart.size() && actByStart[a].first < start; ++a)
                actBefore += actByStart[a].second;
            // An S cut's own pipeline counts the DRAM from the cut's start: the weights of
            // the leaves before it, still loading then, come first (docs/cost-model.md §5,
            // "Weight arrival", the backlog at an S cut).
            if (lw->dramOrdered && lw->dramCut != cut) {
                cut = lw->dramCut;
                const Cycles before =
                    hw.dramLatencyCycles +
                    std::max(cumDram / dramBw, i > 0 ? linkMaxAt[i - 1] / linkBw : 0.0);
                weightBound = std::max(weightBound, before + sw.time - w[size_t(cut)].firstStart);
            }
            cumDram += lw->traffic->weightDram;
            if (lw->dramOrdered) continue; // its S cut's time holds the wait
            const double linkMax = linkMaxAt[i];
            const Cycles arrival =
                hw.dramLatencyCycles + std::max((cumDram + actBefore) / dramBw, linkMax / linkBw);
            // The leaf streams its weights in kStages slices (by output channel,
            // as the generator cuts them): it starts once the first slice is in and its
            // last slice's work follows the last weights, and what comes after it follows
            // its end. Its own wait for DRAM data overlaps the wait for its weights.
            const Cycles own =
                std::max(lw->traffic->weightDram / dramBw, lw->traffic->weightMaxLink / linkBw);
            const Cycles rest = sw.time - start - lw->latency;
            weightBound = std::max({weightBound, arrival - own * (1 - 1.0 / kStages) + rest,
                                    arrival + rest / kStages,
                                    arrival + lw->time / kStages + rest - lw->time});
        }
        segWeightLink[s] = linkMaxAt.back() / linkBw;
    }
    return weightBound;
}

void Coster::costSegment(size_t s) {
    double dram = 0, energyCompute = 0, energyBuffer = 0, leafDramWait = 0, leafNocWait = 0,
           segHop = 0, segInterHop = 0, energyWrite = 0;
    std::array<double, 4> sideBytes{};
    const NodeWork& sw = w[size_t(segments[s])];
    const bool alone = sw.hi - sw.lo == 1;
    byStart.clear();
    actByStart.clear();
    for (int pos = sw.lo; pos < sw.hi; ++pos) {
        const int l = posLayer[size_t(pos)];
        const int id = leafNode[size_t(l)];
        NodeWork& lw = w[size_t(id)];
        const LeafMapping& m = *lw.mapping;
        const LeafTraffic& T = *lw.traffic;
        const double invocations = double(segBatch) / tree.node(id).batch;
        const double hop = T.actHop + T.weightHop;
        const double interHop = T.actInterHop + T.weightInterHop;
        if (opt.detail)
            for (const auto* part : {&T.actLinks, &T.weightLinks})
                for (const auto& [link, b] : *part)
                    C.linkSums.add(link, b);
        segHop += hop;
        segInterHop += interHop;
        const double leafDram = T.actDram + T.weightDram;
        for (size_t d = 0; d < 4; ++d)
            sideBytes[d] += T.actSide[d] + T.weightSide[d];
        if (T.weightDram > 0) byStart.push_back({lw.firstStart, &lw});
        if (lw.dram > 0) actByStart.push_back({lw.firstStart, lw.dram});
        // Why the leaf waits beyond its compute (for the reported bound).
        const double dramWait = std::max(0.0, lw.dram / dramBw - lw.compute);
        const double nocWait = std::max(0.0, std::max({T.actMaxLink, T.maxEgress, lw.sentOut}) /
                                                     T.invocations / linkBw -
                                                 lw.compute);
        leafDramWait += dramWait * invocations;
        leafNocWait += nocWait * invocations;
        const double macs = double(m.macs) * invocations;
        const double eCompute =
            macs * macPjOf(hw) + double(m.vectorOps) * invocations * hw.energy.vectorPjPerOp;
        const double eWrite = lw.cimPrograms * cimWritePj(hw); // 0 unless compute-in-memory
        const double eBuffer = (m.bufferAccessBytes * invocations + T.delivered) * sramPj;
        energyCompute += eCompute;
        energyBuffer += eBuffer;
        macTotal += macs * segInvocations;
        dram += leafDram;
        lw.energy = (eCompute + eBuffer + leafDram * 8 * hw.energy.dramPjPerBit +
                     hopPj(hop, interHop) + eWrite) *
                    segInvocations;
        energyWrite += eWrite;
        programsTotal += lw.cimPrograms * segInvocations;
        programsDefaultTotal += lw.cimProgramsDefault * segInvocations;
        if (opt.detail) {
            // What crosses the leaf's boundary over the whole run (engine/report/layers.h):
            // its DRAM bytes, the NoC pieces it receives from outside its group, and those
            // of its output that leave its group; pieces between its own tiles apart.
            lw.runDram += leafDram * segInvocations;
            lw.runArray += m.bufferAccessBytes * invocations * segInvocations; // as eBuffer
            const auto& ins = C.net.layers[size_t(l)].inputs;
            for (size_t k = 0; k < T.nocInByInput.size() && k < ins.size(); ++k) {
                lw.runNocIn += T.nocInByInput[k] * segInvocations;
                lw.runNocInside += T.nocInsideGroup[k] * segInvocations;
                if (ins[k].producer >= 0)
                    w[size_t(leafNode[size_t(ins[k].producer)])].runNocOut +=
                        T.nocOutOfProducer[k] * segInvocations;
            }
        }
        if (opt.detail && leafDram > 0)
            for (int t = 0; t < lw.tileCount; ++t)
                tileDram[size_t(mesh.tileAt(lw.tileBegin + t))] +=
                    leafDram * segInvocations / lw.tileCount;
    }
    // A leaf alone in its segment (every segment of a layer-sequential tree) has its
    // busiest link precomputed; otherwise add up the leaves' links.
    const double hop = segHop;
    double maxLink =
        alone ? w[size_t(leafNode[size_t(posLayer[size_t(sw.lo)])])].traffic->maxLink : 0.0;
    if (opt.detail)
        C.linkSums.drain([&](int l, double b) {
            maxLink = std::max(maxLink, b * mesh.linkSlowness(l));
            totalLinks[size_t(l)] += b * segInvocations;
        });
    else if (!alone)
        maxLink = C.busiestOf(w, leafNode, posLayer, sw.lo, sw.hi, 1.0, true);
    Cycles weightBound = weightBoundOf(s);
    Cycles dramTime = dram / dramBw;
    if (hw.dramPortBytesPerCycle > 0)
        for (double b : sideBytes)
            dramTime = std::max(dramTime, b / hw.dramPortBytesPerCycle);
    const Cycles nocTime = maxLink / linkBw;
    segTime[s] = sw.time;
    segDramTime[s] = dramTime;
    // What of the segment is traffic: its busiest link's time, or what its leaves wait
    // on their traffic beyond their compute (chainSegments()).
    segNocTime[s] = std::max(nocTime, sw.time - sw.compute);
    // A segment whose pipeline already waits on its leaves' own traffic is bound by
    // what they wait for, even when no whole-segment bound below bites.
    // (An S cut held up by the DRAM's order, dramOrderedPipeline(), waits for the DRAM.)
    const Cycles dramHeld = sw.piped > 0 ? std::max(0.0, sw.time - sw.piped) : 0.0;
    const Bound waitBound = dramHeld > 0                 ? Bound::Dram
                            : leafNocWait > leafDramWait ? Bound::Noc
                                                         : Bound::Dram;
    if (sw.time > sw.compute) segBound[s] = waitBound;
    if (dramTime > segTime[s]) segTime[s] = dramTime, segBound[s] = Bound::Dram;
    if (weightBound > segTime[s]) segTime[s] = weightBound, segBound[s] = Bound::Dram;
    if (nocTime > segTime[s]) segTime[s] = nocTime, segBound[s] = Bound::Noc;
    // The weights stream in behind the leaves' own traffic, on links it also uses: where
    // they meet, each gets its share of the link (docs/cost-model.md §5, "Weights in
    // the background").
    const Cycles shared = sw.time + kWeightShare * segWeightLink[s];
    // (Named after the larger part: the DRAM's order, or the weights' share of the links.)
    const Bound sharedBound = dramHeld > shared - sw.time ? Bound::Dram : Bound::Noc;
    if (shared > segTime[s]) segTime[s] = shared, segBound[s] = sharedBound;
    segDramPart[s] = std::max(dramTime, weightBound);
    segOtherPart[s] = std::max({sw.time, nocTime, shared});
    // An S cut held up by the DRAM's order waits for its weights: what of that wait their
    // loading ahead of the segment takes away (the cut's time were they in before it
    // starts) belongs to the DRAM part.
    if (sw.preloaded > 0 && sw.preloaded < sw.time) {
        segDramPart[s] = std::max(segDramPart[s], sw.time);
        segOtherPart[s] = std::max({sw.preloaded, nocTime, shared - sw.time + sw.preloaded});
    }
    // The bound should the DRAM part shrink below the rest (chainSegments()).
    segOtherBound[s] = nocTime > sw.time && nocTime >= shared ? Bound::Noc
                       : shared > sw.time                     ? sharedBound
                       : sw.time > sw.compute                 ? waitBound
                                                              : Bound::Compute;
    segDram[s] = dram;
    dramTotal += dram * segInvocations;
    hopBytesTotal += hop * segInvocations;
    interHopBytesTotal += segInterHop * segInvocations;
    E.mac += energyCompute * segInvocations;
    E.buffer += energyBuffer * segInvocations;
    E.weightWrite += energyWrite * segInvocations;
    E.dram += dram * 8 * hw.energy.dramPjPerBit * segInvocations;
    E.noc += hopPj(hop, segInterHop) * segInvocations;
}

// Segments follow each other without a barrier (docs/cost-model.md §5, "Segments
// overlap"): a tile starts its part of the next segment once it has finished its part of
// this one, and a leaf's first and last invocations wait for those of its producers in
// earlier segments. Each segment keeps its own bounded time (its leaves' starts stretched
// in proportion to it), a segment starts no earlier than the one before it plus that one's
// traffic time, and the run lasts at least every segment's DRAM time added up.
Cycles Coster::chainSegments() {
    const size_t S = segments.size();
    segStart.assign(S * size_t(segInvocations), 0.0);
    segLen.assign(S * size_t(segInvocations), 0.0);
    tileFree.reset(mesh.tiles());
    loadFree.reset(mesh.tiles());
    firstEnd.resize(size_t(n)); // written before they are read: producers come first
    lastEnd.resize(size_t(n));
    Cycles end = 0, prev = 0, dramFree = 0;
    dramFloor = 0;
    for (double d : segDramTime)
        dramFloor += d;
    if (S == 1 && segInvocations == 1) { // one segment
        segLen[0] = segTime[0];
        return std::max(segTime[0], dramFloor);
    }
    for (int j = 0; j < segInvocations; ++j)
        for (size_t s = 0; s < S; ++s) {
            const NodeWork& sw = w[size_t(segments[s])];
            Cycles start = prev; // segments start in order
            early.clear();
            // Its weights fit beside what the segment before holds on a tile, twice over (the
            // generator places weights at the ends of the buffer's free gaps): they need not
            // wait for that segment's readers, only for the tiles' LOAD engines
            // (docs/cost-model.md §5, "Weights ahead of their segment").
            const bool aside = s > 0 && w[size_t(segments[s - 1])].wgt +
                                                w[size_t(segments[s - 1])].act + 2 * sw.wgt <=
                                            hw.bufferBytes;
            // Its leaves' starts stretched to its time without a head start.
            const double planned = sw.time > 0 ? segTime[s] / sw.time : 1.0;
            for (int pos = sw.lo; pos < sw.hi && (j > 0 || s > 0); ++pos) {
                const int l = posLayer[size_t(pos)];
                const NodeWork& lw = w[size_t(leafNode[size_t(l)])];
                const Cycles first = lw.firstStart * planned, last = lw.lastStart * planned;
                const Cycles free = tileFree.maxOver(lw.tileBegin, lw.tileBegin + lw.tileCount);
                start = std::max(start, free - first);
                if (lw.traffic->weightDram > 0)
                    early.push_back(
                        {aside ? loadFree.maxOver(lw.tileBegin, lw.tileBegin + lw.tileCount) : free,
                         lw.traffic->weightDram / dramBw});
                for (const auto& in : C.net.layers[size_t(l)].inputs) {
                    if (in.producer < 0) continue;
                    const int p = leafNode[size_t(in.producer)];
                    if (w[size_t(p)].segment >= int(s)) continue; // within the segment
                    start =
                        std::max({start, firstEnd[size_t(p)] - first, lastEnd[size_t(p)] - last});
                }
            }
            // ... and no earlier than the segment before has moved its traffic: the DRAM
            // and the links it keeps busy are not free for this one's.
            if (j > 0 || s > 0) {
                const size_t q = s > 0 ? s - 1 : S - 1;
                start = std::max({start, dramFree, prev + segNocTime[q]});
            }
            // Weights load onto tiles as soon as these are free and the DRAM has moved the
            // earlier segments' traffic: what loads before the segment starts shortens its
            // DRAM-bound part (docs/cost-model.md §5, "Weights ahead of their segment").
            Cycles ahead = 0;
            if (start > dramFree && !early.empty()) {
                std::sort(early.begin(), early.end());
                Cycles d = dramFree;
                for (const auto& [free, t] : early) {
                    d = std::max(d, free);
                    if (d >= start) break;
                    ahead += std::min(t, start - d);
                    d += t;
                }
            }
            const Cycles len = std::max(segOtherPart[s], segDramPart[s] - ahead);
            if (j == 0 && segDramPart[s] - ahead < segOtherPart[s] &&
                segDramPart[s] >= segOtherPart[s])
                segBound[s] = segOtherBound[s]; // its weights loaded ahead
            const double scale = sw.time > 0 ? len / sw.time : 1.0;
            for (int pos = sw.lo; pos < sw.hi; ++pos) {
                const int id = leafNode[size_t(posLayer[size_t(pos)])];
                const NodeWork& lw = w[size_t(id)];
                firstEnd[size_t(id)] = start + (lw.firstStart + lw.time) * scale;
                lastEnd[size_t(id)] = start + (lw.lastStart + lw.time) * scale;
                tileFree.raise(lw.tileBegin, lw.tileBegin + lw.tileCount, lastEnd[size_t(id)]);
                // Its tiles' LOAD engines: busy with its weights until its first start, and
                // until its last when it reads inputs from DRAM.
                const bool readsDram = lw.traffic->actDram - lw.traffic->actDramOut > 0;
                loadFree.raise(lw.tileBegin, lw.tileBegin + lw.tileCount,
                               start + (readsDram ? lw.lastStart : lw.firstStart) * scale);
            }
            segStart[size_t(j) * S + s] = prev = start;
            segLen[size_t(j) * S + s] = len;
            dramFree = start + std::max(0.0, segDramTime[s] - ahead);
            end = std::max(end, start + len);
        }
    return std::max(end, dramFloor * segInvocations);
}

// Evaluation::segmentStart and segmentShare from the chain (detail only).
void Coster::segmentShares() {
    const size_t S = segments.size();
    ev.segmentStart.assign(S, 0.0);
    ev.segmentShare.assign(S, 0.0);
    Cycles frontier = 0;
    for (int j = 0; j < segInvocations; ++j)
        for (size_t s = 0; s < S; ++s) {
            const Cycles start = segStart[size_t(j) * S + s];
            const Cycles end = start + segLen[size_t(j) * S + s];
            if (j == 0) ev.segmentStart[s] = start;
            ev.segmentShare[s] += std::max(0.0, end - frontier);
            frontier = std::max(frontier, end);
        }
    if (delay > frontier && dramFloor > 0)
        for (size_t s = 0; s < S; ++s)
            ev.segmentShare[s] += (delay - frontier) * segDramTime[s] / dramFloor;
}

void Coster::totals() {
    delay = chainSegments();

    ev.valid = true;
    ev.energy = E;
    ev.delay = delay;
    ev.cost = objectiveCost(E.total(), delay, opt.objective);
    ev.dramBytes = dramTotal;
    ev.nocHopBytes = hopBytesTotal;
    ev.interChipletHopBytes = interHopBytesTotal;
    ev.macs = Count(macTotal);
    ev.weightProgrammings = Count(std::llround(programsTotal));
    ev.weightProgrammingsDefault = Count(std::llround(programsDefaultTotal));
    ev.utilisation = delay > 0 ? macTotal / (delay * double(hw.macsPerTile) * mesh.tiles()) : 0;
}

// ---- Detail: per-node figures, S-T intervals, per-link bytes.
void Coster::nodeFigures() {
    ev.tileOrder = mesh.snakeOrder();
    ev.linkBytes = std::move(totalLinks);
    ev.tileDramBytes = std::move(tileDram);
    ev.nodes.resize(size_t(n));
    for (auto it = pre.rbegin(); it != pre.rend(); ++it) {
        const int id = *it;
        const RANode& nd = tree.node(id);
        NodeWork& nw = w[size_t(id)];
        if (nd.isCut()) {
            nw.energy = 0;
            for (int c : nd.children)
                nw.energy += w[size_t(c)].energy;
        }
        NodeFigures& f = ev.nodes[size_t(id)];
        f.npt = nw.npt;
        f.tileBegin = nw.tileBegin;
        f.tileCount = nw.tileCount;
        f.stage = nw.stage;
        f.time = nw.time;
        f.energy = nw.energy;
        f.bufferPerTile = nw.wgt + nw.act;
        f.utilisation = nd.type == NodeType::Leaf ? nw.mapping->peUtilisation : nw.util;
        if (nw.mapping) {
            const LeafMapping& m = *nw.mapping;
            f.runDramBytes = nw.runDram;
            f.runNocInBytes = nw.runNocIn;
            f.runNocOutBytes = nw.runNocOut;
            f.runNocInsideBytes = nw.runNocInside;
            f.runArrayBytes = nw.runArray;
            f.inputViaDram = inputViaDram[size_t(nd.layer)];
            f.writesDram = writesDram[size_t(nd.layer)] != 0;
            f.partition = m.partitionLabel();
            f.partitionFactors = {m.pk, m.pb, m.ph, m.pw};
            f.mapping = m.tiling;
            if (m.cim.used) {
                f.weightProgrammings = Count(std::llround(nw.cimPrograms * segInvocations));
                f.weightProgrammingsDefault =
                    Count(std::llround(nw.cimProgramsDefault * segInvocations));
                f.weightWriteEnergy = nw.cimPrograms * cimWritePj(hw) * segInvocations;
                f.writeCycles = m.cim.exposedWrite - nw.writeSaved;
            }
        }
    }
    for (size_t s = 0; s < segments.size(); ++s) {
        NodeFigures& f = ev.nodes[size_t(segments[s])];
        f.time = segLen[s];
        f.bound = segBound[s];
        f.dramBytes = segDram[s];
        f.weightLinkCycles = segWeightLink[s];
    }
    if (rootIsT) {
        ev.nodes[size_t(tree.root)].time = delay;
        ev.nodes[size_t(tree.root)].dramBytes = dramTotal;
    }
}

void Coster::intervals() {
    // Rectangles: walk the schedule; a segment stretched by a DRAM/NoC bound has its
    // rectangles stretched in proportion.
    auto push = [&](int id, Cycles start, Cycles end, int sample) {
        if (ev.intervals.size() >= opt.maxIntervals) {
            ev.intervalsTruncated = true;
            return;
        }
        const RANode& nd = tree.node(id);
        const NodeWork& nw = w[size_t(id)];
        BusyInterval b;
        b.node = id;
        b.layer = nd.layer;
        b.firstSample = sample;
        b.lastSample = sample + nd.batch - 1;
        b.start = start;
        b.end = end;
        b.tileBegin = nw.tileBegin;
        b.tileCount = nw.tileCount;
        b.energy = nw.energy * nd.batch / std::max(1, totalBatch);
        ev.intervals.push_back(b);
    };
    for (int j = 0; j < segInvocations; ++j)
        for (size_t s = 0; s < segments.size(); ++s) {
            const size_t k = size_t(j) * segments.size() + s;
            const Cycles own = w[size_t(segments[s])].time;
            const double scale = own > 0 ? segLen[k] / own : 1.0;
            placeInvocations(tree, w, opt.programClock, segments[s], segStart[k], j * segBatch,
                             scale, push);
        }
}

} // namespace

Evaluation evaluate(EvalContext& ctx, const RATree& tree, int totalBatch, const EvalOptions& opt) {
    EvalContext::Impl& C = ctx.impl();
    ++C.stats.evaluations;

    Evaluation ev;
    ev.objective = opt.objective;
    // Every phase of analyse() rewrites what it reads, so the search's many evaluations
    // per second reuse one Analysis per thread (its vectors keep their capacity).
    thread_local Analysis A;
    if (!analyse(C, tree, totalBatch, opt, A, ev)) return ev;

    // ---- Traffic, energy and segment bounds, per segment invocation (docs/cost-model.md §4-§5).
    Coster K(C, tree, totalBatch, opt, A, ev);
    for (size_t s = 0; s < K.segments.size(); ++s)
        K.costSegment(s);
    K.totals();
    if (!opt.detail) return ev;
    K.nodeFigures();
    K.segmentShares();
    K.intervals();
    return ev;
}

Evaluation evaluate(const Network& net, const Hardware& hw, const RATree& tree, int totalBatch,
                    const EvalOptions& opt) {
    EvalContext ctx(net, hw);
    return evaluate(ctx, tree, totalBatch, opt);
}

} // namespace tilescope

namespace tilescope {

ScheduleLayout analyseSchedule(EvalContext& ctx, const RATree& tree, int totalBatch,
                               const EvalOptions& opt) {
    ScheduleLayout out;
    EvalOptions detailOpt = opt;
    detailOpt.detail = true;
    detailOpt.maxIntervals = std::numeric_limits<size_t>::max();
    detailOpt.programClock = true;
    out.evaluation = evaluate(ctx, tree, totalBatch, detailOpt);
    out.valid = out.evaluation.valid;
    out.reason = out.evaluation.reason;
    if (!out.valid) return out;

    EvalContext::Impl& C = ctx.impl();
    Analysis A;
    Evaluation scratch;
    if (!analyse(C, tree, totalBatch, detailOpt, A, scratch)) { // cannot differ from above
        out.valid = false;
        out.reason = scratch.reason;
        return out;
    }
    out.segments = A.segments;
    out.segBatch = A.segBatch;
    out.segInvocations = A.segInvocations;
    out.leafOfLayer.assign(C.net.layers.size(), -1);
    for (int pos = 0; pos < int(A.posLayer.size()); ++pos) {
        const int layer = A.posLayer[size_t(pos)];
        const int id = A.leafNode[size_t(layer)];
        const NodeWork& nw = A.w[size_t(id)];
        LeafLayout l;
        l.node = id;
        l.layer = layer;
        l.batch = tree.node(id).batch;
        l.segment = nw.segment;
        l.stage = nw.stage;
        l.tileBegin = nw.tileBegin;
        l.tileCount = nw.tileCount;
        for (int t = 0; t < nw.tileCount; ++t)
            l.tiles.push_back(C.mesh.tileAt(nw.tileBegin + t));
        l.mapping = *nw.mapping;
        for (char d : A.inputViaDram[size_t(layer)])
            l.inputViaDram.push_back(d != 0);
        l.writesDram = A.writesDram[size_t(layer)] != 0;
        l.cimPinned = nw.cimPinned;
        out.leafOfLayer[size_t(layer)] = int(out.leaves.size());
        out.leaves.push_back(std::move(l));
    }
    return out;
}

} // namespace tilescope
