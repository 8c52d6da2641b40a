// The analyser (internal to engine/eval): everything evaluate() decides before costing
// traffic, as named phases over shared working data. Each phase is defined in the file of
// its concern: analyse_structure.cpp (order, stages, NPT, tile groups, segments),
// analyse_dataflow.cpp (DRAM or NoC per input, held data, compute-in-memory weights,
// buffers), analyse_delay.cpp (leaf traffic, delay per invocation) and
// analyse_pipeline.cpp (S-cut fill and DRAM order, T-cut overlap, starts).
#pragma once

#include "eval/eval_context.h"
#include "eval/evaluator.h"
#include "eval/node_work.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tilescope {

// The costing's per-segment figures and the chaining's working data (Coster): every vector
// is sized or cleared before it is read.
struct CostScratch {
    std::vector<double> time; // per segment: its time
    std::vector<Bound> bound, otherBound;
    std::vector<double> dram, weightLink, dramTime, nocTime;
    // Of time: the part its DRAM traffic bounds (its DRAM time or its weights' arrival) and
    // the rest.
    std::vector<double> dramPart, otherPart;
    // Start and length of segment s in root invocation j at [j x segments + s]
    // (Coster::chainSegments()).
    std::vector<Cycles> start, len;
    std::vector<std::pair<Cycles, Cycles>> early; // chainSegments(): (tiles free, weight time)
    TileClock tileFree;                           // chainSegments()' working data
    TileClock loadFree;                           // ... when the tiles' LOAD engines free up
    std::vector<Cycles> firstEnd, lastEnd;        // ... per leaf node
    std::vector<std::pair<Cycles, const NodeWork*>> byStart; // leaves with weights, by start
    std::vector<std::pair<Cycles, double>> actByStart; // leaves with activation DRAM, likewise
};

// Everything evaluate() decides before costing traffic: leaf ranges, stages, NPT, tile
// groups, segments, mappings, buffer checks and the data-flow rule per input. Shared with
// analyseSchedule() so the instruction generator follows exactly the same decisions.
struct Analysis {
    std::vector<NodeWork> work;
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
    // Per layer, the input it streams block by block from the leaf before it in a T cut
    // or from the stage before it in an S cut (docs/cost-model.md §2b), or -1.
    std::vector<int> streamInput;
    // Per layer: 1 when it streams that input from the stage before it in an S cut (on other
    // tiles: block j reads the producer's blocks j - 1 to j + 1), 2 when it streams its
    // output to the stage after it, 0 otherwise.
    std::vector<char> streamAcross;
    // Inputs and weights kept on chip (LayerInput::resident, Layer::weightsResident): per
    // snake position, the bytes its tile keeps for the whole run, and per leaf node the most
    // one of its tiles keeps per invocation of its inputs (in the leaf's own working set
    // too); both empty when the network keeps nothing on chip.
    std::vector<double> resident, ownResident;
    // The costing's working data (Coster), kept here so a reused Analysis keeps its
    // capacity.
    CostScratch cost;
};

// The working data of analyse(), shared by its phases (each fills part of the Analysis).
struct Analyser {
    EvalContext::Impl& ctx;
    const RATree& tree;
    const EvalOptions& opt;
    Analysis& analysis;
    Evaluation& ev;
    const Network& net;
    const Hardware& hw;
    const Mesh& mesh;
    const int nodeCount;
    const int layerCount;
    std::vector<NodeWork>& work;
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
        : ctx(c), tree(t), opt(o), analysis(a), ev(e), net(c.net), hw(c.hw), mesh(c.mesh),
          nodeCount(t.size()), layerCount(int(c.net.layers.size())), work(a.work), pre(a.pre),
          layerPos(a.layerPos), leafNode(a.leafNode), posLayer(a.posLayer),
          writesDram(a.writesDram), inputViaDram(a.inputViaDram), hold(a.hold), keptOut(a.keptOut),
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
    bool blocked(int layer);
    void mapLeaves();
    void mapLeaf(int id);
    void streamChains();
    void streamChain(const std::vector<int>& ch, size_t run, size_t first, size_t last,
                     const std::vector<int>& links, bool attention);
    int chainLink(int a, int b) const;
    void streamStages();
    bool dropStageStreams();
    bool placeData();
    bool streamsAcross(int prod, const LeafMapping& mp, int cons, const LeafMapping& mc, size_t k,
                       int batch) const;
    bool streams(int prod, const LeafMapping& mp, int cons, const LeafMapping& mc, size_t k,
                 int batch) const;
    void dataFlow();
    void cimWeights();
    bool keptOnChip();
    double residentReserve(int id) const;
    void leafBuffers();
    double dramGapShare(int layer, const LeafMapping& mapping) const;
    bool overflow(int id);
    bool checkBuffers();
    void dramLayouts();
    void leafTraffic();
    void leafDelay(NodeWork& nw, const RANode& nd, const std::vector<char>& readsDram);
    template <class F>
    void forEachSiblingInput(const RANode& nd, int lo, const NodeWork& cw, F&& f) const;
    Cycles computeFill(const RANode& nd, int maxStage);
    Cycles pacedFill(const RANode& nd, const NodeWork& nw);
    Cycles subBatchFeed(const RANode& nd, size_t i, size_t j) const;
    // Marks its leaves; `preloaded`: the cut's weights are in before it starts.
    Cycles dramOrderedPipeline(const RANode& nd, const NodeWork& nw, bool preloaded = false);
    Cycles pipeStart(const RANode& nd, const NodeWork& nw, size_t j, int k, Cycles s);
    Cycles cappedDramPipeline(const RANode& nd, const NodeWork& nw,
                              const std::vector<std::tuple<Cycles, int, int, int>>& items);
    bool weightLoadsShareALink(const NodeWork& nw);
    Cycles bookWeightLoads(int child, double perSeg, Cycles& firstSlice);
    int tcutUnderS(int leafId) const;
    bool fedFromAhead(const RANode& leaf) const;
    Cycles overlapPass(const RANode& nd, const NodeWork& nw);
    void chainDelays(const RANode& nd);
    void cutDelay(NodeWork& nw, const RANode& nd);
    void delays();
    void firstStarts();
};

// Index of the child of `cut` whose leaf range holds position pos (children are
// ordered by leaf range).
inline int Analyser::childContaining(const RANode& cut, int pos) const {
    const auto& ch = cut.children;
    size_t lo = 0, hi = ch.size();
    while (hi - lo > 1) {
        const size_t mid = (lo + hi) / 2;
        if (work[size_t(ch[mid])].lo <= pos)
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
        for (const auto& [prod, k] : ctx.producers[size_t(l)]) {
            const int pp = layerPos[size_t(prod)];
            if (pp >= lo && pp < cw.lo) f(size_t(childContaining(nd, pp)), l, prod, int(k));
        }
    }
}

// The T cut that holds leaf `leafId` directly under an S cut: the child of the leaf's
// nearest S ancestor, when that child is a T cut; -1 otherwise (the leaf is that child, or
// has no S ancestor).
inline int Analyser::tcutUnderS(int leafId) const {
    int id = leafId;
    for (int par = tree.node(id).parent; par >= 0; id = par, par = tree.node(id).parent)
        if (tree.node(par).type == NodeType::S) return tree.node(id).type == NodeType::T ? id : -1;
    return -1;
}

// Fills `analysis`; on an invalid tree sets ev's validity fields and returns false.
bool analyse(EvalContext::Impl& ctx, const RATree& tree, int totalBatch, const EvalOptions& opt,
             Analysis& analysis, Evaluation& ev);

} // namespace tilescope
