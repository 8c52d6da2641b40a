// The analyser's traffic and delay phases: each leaf's transfers (memoised per placement),
// what its tiles' STORE/SEND engines move, and the time of one invocation of every node,
// bottom-up: a leaf's own traffic on its critical path, a T cut's passes, an S cut's
// pipeline (docs/cost-model.md §5).
#include "eval/analyser.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tilescope {

namespace {

// The share of a consumer's intake from a stage's other tiles that the stage's busiest tile
// waits for while it sends to that consumer. In lock step (every tile sending to the same
// consumer at once) it would be all of it; the replay's tiles drift apart, and their SENDs
// to a shared consumer overlapped for about 60% of their time on the cloud preset and for
// all of it on a 12x16 mesh, where other transfers cross the same links (googlenet's
// maxpool2: docs/cost-model.md §5, "Consumers fed by several tiles").
constexpr double kSharedIngress = 0.75;

} // namespace

// ---- Traffic per leaf: exactly the transfers the instruction generator emits
// (transfers.h), memoised per placement (EvalContext::Impl::trafficOf; memory bounded by
// turnOver).
void Analyser::leafTraffic() {
    ctx.turnOver();
    std::vector<LeafPlacement>& place = ctx.placeScratch;
    place.resize(static_cast<size_t>(layerCount));
    for (int l = 0; l < layerCount; ++l) {
        const int id = leafNode[size_t(l)];
        const NodeWork& lw = work[size_t(id)];
        place[size_t(l)] = {
            l, tree.node(id).batch, lw.tileBegin, lw.tileCount, lw.leaf.mapping, lw.leaf.named};
    }
    std::vector<const LeafPlacement*>& prods = ctx.prodScratch;
    for (int l = 0; l < layerCount; ++l) {
        const auto& ins = net.layers[size_t(l)].inputs;
        prods.assign(ins.size(), nullptr);
        for (size_t k = 0; k < ins.size(); ++k)
            if (!inputViaDram[size_t(l)][k]) prods[k] = &place[size_t(ins[k].producer)];
        work[size_t(leafNode[size_t(l)])].leaf.traffic =
            &ctx.trafficOf(place[size_t(l)], prods, writesDram[size_t(l)] != 0,
                           analysis.paceInputs[size_t(l)], analysis.segBatch);
    }
    // A producer's tiles send to its consumers one after another (docs/cost-model.md §5).
    for (int l = 0; l < layerCount; ++l) {
        NodeWork& lw = work[size_t(leafNode[size_t(l)])];
        lw.leaf.sentOut += lw.leaf.traffic->storedMax;
        const auto& ins = net.layers[size_t(l)].inputs;
        for (size_t k = 0; k < ins.size(); ++k)
            if (!inputViaDram[size_t(l)][k]) {
                const int p = leafNode[size_t(ins[k].producer)];
                NodeWork& pw = work[size_t(p)];
                pw.leaf.sentOut += lw.leaf.traffic->sentByInput[k];
                const int tcut = tcutUnderS(p);
                if (tcut < 0) {
                    const int par = tree.node(p).parent;
                    if (par >= 0 && tree.node(par).type == NodeType::S) {
                        ++pw.leaf.stageConsumers;
                        pw.leaf.sentShared += std::max(0.0, lw.leaf.traffic->receivedByInput[k] -
                                                                lw.leaf.traffic->sentByInput[k]);
                    }
                    continue;
                }
                const int pos = layerPos[size_t(l)];
                if (pos >= work[size_t(tcut)].lo && pos < work[size_t(tcut)].hi) continue;
                ++pw.leaf.sentAhead;
                // At the links' pace, but no longer than the consumer's busiest input link
                // takes to carry all of the exchange (docs/cost-model.md §5, "Sends ahead
                // at the links' pace").
                const LeafTraffic& traffic = *lw.leaf.traffic;
                const double paced = std::min(
                    traffic.pacedByInput[k], std::max({traffic.sentByInput[k], traffic.nocInMaxLink,
                                                       traffic.nocSameMaxLink}));
                pw.leaf.sentAheadPaced =
                    std::max(pw.leaf.sentAheadPaced, paced - traffic.sentByInput[k]);
            }
    }
    // A leaf of a T cut under an S cut that sends ahead, to several consumers of the S
    // cut's later stages (whether or not it also feeds a leaf of its own T cut): the T
    // cut's next pass on its tiles waits behind those sends, and the slowest of them moves
    // at the crowded links' pace (docs/cost-model.md §5, "Sends ahead at the links' pace").
    for (int l = 0; l < layerCount; ++l) {
        NodeWork& lw = work[size_t(leafNode[size_t(l)])];
        if (lw.leaf.sentAhead > 1) lw.leaf.sentOut += lw.leaf.sentAheadPaced;
        // A stage sending to several consumers, each fed by more than one of its tiles at
        // once: those tiles share the consumer tile's links while they send to it
        // (docs/cost-model.md §5, "Consumers fed by several tiles").
        if (lw.leaf.stageConsumers > 1) lw.leaf.sentOut += kSharedIngress * lw.leaf.sentShared;
    }
}

void Analyser::leafDelay(NodeWork& nw, const RANode& nd, const std::vector<char>& readsDram) {
    const LeafTraffic& traffic = *nw.leaf.traffic;
    const double inv = traffic.invocations;
    nw.dram = traffic.actDram / inv;
    // A leaf reading an input from DRAM waits the DRAM latency for its first data
    // (its producer stored it; nothing earlier can fetch it).
    const Cycles latency = nw.leaf.latency =
        readsDram[size_t(nd.layer)] ? hw.dramLatencyCycles : 0.0;
    double sideTime = 0;
    if (portBw > 0)
        for (double b : traffic.actSide)
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
    for (const auto& [prod, k] : ctx.producers[size_t(nd.layer)])
        if (!inputViaDram[size_t(nd.layer)][size_t(k)]) {
            const NodeWork& pw = work[size_t(leafNode[size_t(prod)])];
            const double span =
                std::max(pw.compute, pw.leaf.sentOut / pw.leaf.traffic->invocations / linkBw);
            const double perConsumer =
                span * double(nd.batch) / std::max(1, tree.node(leafNode[size_t(prod)]).batch);
            producerCompute = std::min(producerCompute, perConsumer);
        }
    // On a crowded mesh the exchange is paced by the busiest tile's SENDs at their shared
    // links (LeafTraffic::nocPaced): what is left of it after the producer ends counts as
    // for a re-partitioned input.
    const double xFull = traffic.nocInMaxLink / inv / linkBw,
                 xSame = traffic.nocSameMaxLink / inv / linkBw;
    const double xPaced = traffic.nocPaced / inv / linkBw;
    // S: the stages of the SENDs that bring them (sendStagesOf).
    const double stages = sendStagesOf(traffic);
    auto left = [&](double x) {
        return std::max(x / stages, x - producerCompute * (1 - 1.0 / stages));
    };
    double exposed = (xFull > 0 ? left(xFull) : 0.0) + xSame / stages;
    if (xPaced > 0 && std::isfinite(producerCompute)) {
        // Inputs all in the producer's coordinates: the consumer tile the busiest sender
        // serves last receives its piece stage by stage, and computes on each stage as it
        // lands, so its compute overlaps that piece but for one stage (docs/cost-model.md
        // §5, "The last piece streamed").
        double paced = left(xPaced);
        if (xFull == 0)
            paced = std::max(xPaced / stages,
                             paced - std::min(nw.compute, traffic.nocPacedPiece / linkBw) *
                                         (1 - 1.0 / stages));
        exposed = std::max(exposed, paced);
    }
    // Its tiles' STORE/SEND engines move its stores and its sends to every consumer one
    // transfer at a time (sentOut; docs/cost-model.md §5, "One consumer at a time").
    // A leaf of a T cut whose NoC inputs all come from outside that cut, from an S-cut
    // sibling running ahead, receives them while the T cut works on the sample before
    // (docs/cost-model.md §5, "Inputs from ahead"): its link terms drop out.
    const Cycles sends = std::max(traffic.maxEgress, nw.leaf.sentOut) / inv / linkBw;
    const Cycles stores = traffic.actDramOut / inv / dramBw;
    const Cycles received = nw.compute + latency + std::min(nw.compute, exposed);
    nw.leaf.aheadWait = 0;
    if (fedFromAhead(nd)) {
        // The first sub-batch has no sample before it to receive behind: it waits for what
        // is left of its exchange after its producer (pacedFill(); "Inputs from ahead").
        nw.rest = std::max({nw.compute + latency, sends, stores});
        nw.leaf.aheadWait = std::max(0.0, received - nw.rest);
    } else {
        nw.rest = std::max({received, std::max(traffic.actMaxLink / inv / linkBw, sends), stores});
    }
    nw.time = std::max({nw.rest, nw.dram / dramBw + latency, sideTime});
    // A blocked leaf (docs/cost-model.md §2b): its blocks load, compute and store in turn,
    // two at a time, so all but one block of the shorter of compute and DRAM hide behind
    // the longer (the first block's load, or the last block's compute, stays exposed).
    // A streaming chain pays that once, at its first member: the later members' blocks
    // follow the first's block by block.
    const LeafMapping& m = *nw.leaf.mapping;
    if (m.blocked() && analysis.streamInput[size_t(nd.layer)] < 0) {
        const Cycles exposed = std::min(nw.compute, nw.dram / dramBw) * m.blockShare;
        nw.time += exposed;
        nw.rest += exposed;
    }
}

// Whether every NoC input of leaf nd comes from outside the T cut that holds it directly
// under an S cut: from another child of that S cut, or from before it on other tiles
// (leafDelay()). A producer before the S cut on the cut's tiles does not count: its slices
// wait there and go out on the SEND engines of the cut's stages, behind their own sends
// (docs/cost-model.md §5, "Inputs from ahead").
bool Analyser::fedFromAhead(const RANode& nd) const {
    const int tcut = tcutUnderS(leafNode[size_t(nd.layer)]);
    if (tcut < 0) return false;
    const NodeWork& tw = work[size_t(tcut)];
    const NodeWork& sw = work[size_t(tree.node(tcut).parent)];
    bool any = false;
    for (const auto& [prod, k] : ctx.producers[size_t(nd.layer)])
        if (!inputViaDram[size_t(nd.layer)][size_t(k)]) {
            const int pos = layerPos[size_t(prod)];
            if (pos >= tw.lo && pos < tw.hi) return false;
            const NodeWork& pw = work[size_t(leafNode[size_t(prod)])];
            if ((pos < sw.lo || pos >= sw.hi) && pw.tileBegin < sw.tileBegin + sw.tileCount &&
                sw.tileBegin < pw.tileBegin + pw.tileCount)
                return false; // from before the S cut, held on its tiles
            any = true;
        }
    return any;
}

// A streaming chain among a T cut's children (streamChains()): its members' blocks run in
// turn, so one member's DRAM transfers overlap the others' compute. The chain takes
// max(its compute, its DRAM time) and one block of the shorter (docs/cost-model.md §2b);
// its members' times are scaled to add up to that.
void Analyser::chainDelays(const RANode& nd) {
    const auto& ch = nd.children;
    for (size_t i = 0; i < ch.size();) {
        size_t j = i + 1;
        while (j < ch.size() && tree.node(ch[j]).type == NodeType::Leaf &&
               analysis.streamInput[size_t(tree.node(ch[j]).layer)] >= 0)
            ++j;
        if (j - i > 1) {
            double compute = 0, dram = 0, links = 0, sum = 0;
            for (size_t m = i; m < j; ++m) {
                const NodeWork& w = work[size_t(ch[m])];
                compute += w.compute;
                dram += w.dram / dramBw;
                links += w.leaf.traffic->actMaxLink / w.leaf.traffic->invocations / linkBw;
                sum += w.time;
            }
            const NodeWork& head = work[size_t(ch[i])];
            // The members' DRAM transfers share the links from the ports (attention's K and
            // V multicast to every tile of the chain): no faster than their busiest links.
            dram = std::max(dram, links);
            const double chain = std::max(compute, dram) +
                                 std::min(compute, dram) * head.leaf.mapping->blockShare +
                                 head.leaf.latency;
            if (chain < sum && sum > 0)
                for (size_t m = i; m < j; ++m) {
                    NodeWork& w = work[size_t(ch[m])];
                    w.time *= chain / sum;
                    w.rest *= chain / sum;
                }
        }
        i = j;
    }
}

void Analyser::cutDelay(NodeWork& nw, const RANode& nd) {
    double t = 0, bytes = 0;
    if (nd.type == NodeType::T) {
        chainDelays(nd);
        // One pass over the children, then each further pass no longer than its DRAM
        // transfers or the rest: the LOAD engines read a child's inputs while the
        // children before it compute (docs/cost-model.md §5, "T-cut passes").
        double rest = 0;
        for (int c : nd.children) {
            NodeWork& cw = work[size_t(c)];
            cw.passOffset = t;
            t += cw.time;
            bytes += cw.dram;
            rest += cw.rest;
        }
        // One pass: the children overlap tile by tile, sharing the DRAM (a root cut's
        // children are segments, chained in chainSegments()).
        if (nd.subBatch == 1 && nd.children.size() > 1 && int(&nw - work.data()) != tree.root)
            t = std::max(overlapPass(nd, nw), bytes / dramBw);
        nw.cut.slot = std::min(t, std::max(rest, bytes / dramBw));
        nw.rest = rest * nd.subBatch;
        nw.time = t + nw.cut.slot * (nd.subBatch - 1);
    } else {
        // A T-cut child repeats pass after pass in the pipeline (cutDelay() above).
        for (int c : nd.children) {
            t = std::max(t, pipelinePeriod(work, tree, c));
            bytes += work[size_t(c)].dram;
        }
        // Every child moves one sub-batch per slot: add up the links of every leaf
        // below, scaled from a segment invocation to one child invocation.
        const double perSlot = double(nd.batch / nd.subBatch) / std::max(1, analysis.segBatch);
        const double busiest =
            ctx.busiestOf(work, leafNode, posLayer, nw.lo, nw.hi, perSlot, false);
        nw.cut.slot = std::max({t, bytes / dramBw, busiest / linkBw});
        nw.time = nw.cut.piped = nw.cut.slot * (nd.subBatch - 1) + pacedFill(nd, nw);
        const Cycles ordered = dramOrderedPipeline(nd, nw);
        // A segment's own S cut held up by the DRAM's order: also its time were its weights
        // in before it starts (what is left once they load ahead of it; costSegment()).
        nw.cut.preloaded = 0;
        if (ordered > nw.cut.piped &&
            analysis.segments[size_t(nw.segment)] == int(&nw - work.data()))
            nw.cut.preloaded = std::max(nw.cut.piped, dramOrderedPipeline(nd, nw, true));
        nw.time = std::max(nw.cut.piped, ordered);
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
    std::vector<char> readsDram(static_cast<size_t>(layerCount), 0);
    for (int l = 0; l < layerCount; ++l)
        for (size_t k = 0; k < inputViaDram[size_t(l)].size(); ++k)
            readsDram[size_t(l)] |=
                inputViaDram[size_t(l)][k] && !net.layers[size_t(l)].inputs[k].resident;
    for (auto it = pre.rbegin(); it != pre.rend(); ++it) {
        const int id = *it;
        const RANode& nd = tree.node(id);
        NodeWork& nw = work[size_t(id)];
        if (nd.type == NodeType::Leaf)
            leafDelay(nw, nd, readsDram);
        else
            cutDelay(nw, nd);
    }
}

} // namespace tilescope
