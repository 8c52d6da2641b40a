// The analyser's schedule within a cut: an S cut's paced fill and its sub-batches with the
// DRAM serving in program order, a T cut's one pass with its children overlapping tile by
// tile, and every node's first and last start in its segment.
#include "eval/analyser.h"

#include <algorithm>
#include <tuple>

namespace tilescope {

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
    const NodeWork& pw = work[size_t(nd.children[i])];
    const NodeWork& cw = work[size_t(nd.children[j])];
    const double stretch = pw.cut.piped > 0 ? std::max(1.0, pw.time / pw.cut.piped) : 1.0;
    const Cycles fill = (pw.cut.piped - pw.cut.slot * (pn.subBatch - 1)) * stretch;
    Cycles lag = 0;
    for (int s = 0; s < pn.batch; s += gc)
        lag = std::max(lag, (s / gp) * pw.cut.slot * stretch - (s / gc) * cw.cut.slot);
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
    std::vector<Cycles>& st = ctx.stageScratch; // per child: start, then end
    st.assign(2 * nd.children.size(), 0.0);
    Cycles fill = 0;
    for (size_t j = 0; j < nd.children.size(); ++j) {
        NodeWork& cw = work[size_t(nd.children[j])];
        Cycles start = 0, end = 0;
        forEachSiblingInput(nd, nw.lo, cw, [&](size_t i, int l, int, int k) {
            if (k < 32 && (analysis.paceInputs[size_t(l)] >> k & 1u)) {
                const LeafTraffic::Pace& pace = cw.leaf.traffic->pace[size_t(k)];
                // Only the producer's compute is spread over its stages; what it waits
                // beyond that (its inputs, DRAM, links) comes first.
                const NodeWork& pw = work[size_t(nd.children[i])];
                const Cycles comp = std::min(pw.compute, pw.time);
                start = std::max(start, st[2 * i] + pw.time - (1 - pace.lead) * comp);
                end = std::max(end, st[2 * i + 1] + pace.tail * cw.time);
            } else {
                const Cycles fed = subBatchFeed(nd, i, j);
                start = std::max(start, fed >= 0 ? st[2 * i] + fed : st[2 * i + 1]);
            }
        });
        // A T child's first sub-batch waits for the exchange of its leaves fed from ahead
        // (docs/cost-model.md §5, "Inputs from ahead"; LeafWork::aheadWait): those it holds
        // directly under this cut, not those of an S cut nested in it, whose own fill counts
        // theirs.
        Cycles wait = 0;
        if (tree.node(nd.children[j]).type == NodeType::T)
            for (int pos = cw.lo; pos < cw.hi; ++pos) {
                const int leaf = leafNode[size_t(posLayer[size_t(pos)])];
                if (tcutUnderS(leaf) == nd.children[j]) wait += work[size_t(leaf)].leaf.aheadWait;
            }
        start += wait;
        st[2 * j] = cw.stageOffset = start;
        st[2 * j + 1] = std::max(start + cw.time, end);
        fill = std::max(fill, st[2 * j + 1]);
    }
    return fill;
}

// When child j's sub-batch k of a DRAM-ordered S cut starts, at the earliest `s` (what the
// DRAM allows): no sooner than its previous sub-batch on the same tiles plus that one's
// period (an S child's pipelinePeriod(), else its time), nor earlier against a producer
// sibling's same sub-batch than in the fill. Records it in ctx.pipeStart.
Cycles Analyser::pipeStart(const RANode& nd, const NodeWork& nw, size_t j, int k, Cycles s) {
    const std::vector<Cycles>& st = ctx.stageScratch;
    std::vector<Cycles>& start = ctx.pipeStart;
    const size_t m = nd.children.size();
    const NodeWork& cw = work[size_t(nd.children[j])];
    const Cycles apart = tree.node(nd.children[j]).type == NodeType::S
                             ? pipelinePeriod(work, tree, nd.children[j])
                             : cw.time;
    if (k > 0) s = std::max(s, start[size_t(k - 1) * m + j] + apart);
    forEachSiblingInput(nd, nw.lo, cw, [&](size_t i, int, int, int) {
        if (i < j) s = std::max(s, start[size_t(k) * m + i] + st[2 * j] - st[2 * i]);
    });
    start[size_t(k) * m + j] = s;
    return s;
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
    const std::vector<Cycles>& st = ctx.stageScratch; // pacedFill(): per child start, end
    const size_t m = nd.children.size();
    const int n = nd.subBatch;
    const double perSeg = std::max(1.0, double(analysis.segBatch) / std::max(1, nd.batch));
    auto& need = ctx.pipeNeed; // per child: weights, inputs, outputs (DRAM bytes)
    need.assign(4 * m, 0.0);
    // Per child: the stages of its first weight-loading leaf's weight LOADs (its first slice).
    auto& stages = ctx.pipeWeightStages;
    stages.assign(m, 0.0);
    auto& loaders = ctx.pipeWeightLeaves; // scratch: a child's leaves that load weights
    for (size_t j = 0; j < m; ++j) {
        const NodeWork& cw = work[size_t(nd.children[j])];
        double all = 0, out = 0;
        loaders.clear();
        for (int pos = cw.lo; pos < cw.hi; ++pos) {
            NodeWork& lw = work[size_t(leafNode[size_t(posLayer[size_t(pos)])])];
            lw.leaf.dramOrdered = true; // this cut's time holds the wait for its weights
            lw.leaf.dramCut = int(&nw - work.data()); // (the outer cut's call comes last)
            const LeafTraffic& traffic = *lw.leaf.traffic;
            need[4 * j] += traffic.weightDram / perSeg;
            need[4 * j + 3] = std::max(need[4 * j + 3], traffic.weightMaxLink / perSeg / linkBw);
            if (traffic.weightDram > 0) loaders.push_back({0.0, &lw});
            if (traffic.weightDram > 0 && stages[j] == 0) stages[j] = weightStagesOf(traffic);
            all += traffic.actDram, out += traffic.actDramOut;
        }
        // Several leaves' weights cross the child's links together (a T cut's leaves share
        // its tiles): their time is the busiest link of their weights added up.
        if (loaders.size() > 1) need[4 * j + 3] = ctx.weightMaxOf(loaders).back() / perSeg / linkBw;
        const double outShare = all > 0 ? out / all : 0.0;
        need[4 * j + 1] = cw.dram * (1 - outShare);
        need[4 * j + 2] = cw.dram * outShare;
    }
    auto& items = ctx.pipeItems; // (when, child, sub-batch, 0 start / 1 end) on that clock
    items.clear();
    for (size_t j = 0; j < m; ++j)
        for (int k = 0; k < n; ++k) {
            const Cycles s = st[2 * j] + k * nw.cut.slot;
            items.push_back({s, int(j), k, 0});
            if (need[4 * j + 2] > 0) items.push_back({s + st[2 * j + 1] - st[2 * j], int(j), k, 1});
        }
    std::sort(items.begin(), items.end());
    auto& start = ctx.pipeStart; // [k * m + j]
    start.assign(m * size_t(n), 0.0);
    // A child whose weights' busiest link moves them slower than the DRAM could: the DRAM
    // serves the children in need order, each at most at its links' rate, and what one
    // leaves goes to the next (a fluid, DramProfile); else every byte at the DRAM's rate.
    bool capped = false;
    for (size_t j = 0; j < m && !preloaded; ++j)
        capped = capped || (need[4 * j] > 0 && need[4 * j + 3] * dramBw > need[4 * j] * (1 + 1e-9));
    if (capped) return cappedDramPipeline(nd, nw, items);
    double served = 0;
    if (preloaded) // counted as served before the cut starts
        for (size_t j = 0; j < m; ++j)
            served -= need[4 * j];
    Cycles end = 0;
    for (const auto& item : items) {
        const Cycles key = std::get<0>(item);
        const size_t j = size_t(std::get<1>(item));
        const int k = std::get<2>(item);
        if (std::get<3>(item)) { // its end: its outputs are stored
            served += need[4 * j + 2];
            continue;
        }
        const double weights = k == 0 ? need[4 * j] : 0.0;
        Cycles s = std::max(key, (served + (weights > 0 ? weights / stages[j] : 0.0)) / dramBw);
        served += weights + need[4 * j + 1];
        s = pipeStart(nd, nw, j, k, s);
        end = std::max(end, s + st[2 * j + 1] - st[2 * j]);
    }
    return end;
}

// The DRAM-ordered pipeline when some child's weights are held back by their links
// (docs/cost-model.md §5, "Weights on few tiles"): the same walk in need order, each
// demand booked into the DRAM's bandwidth over time from the cut's start at most at its
// own rate (a child's weights: their bytes over their busiest link's time; activations: the
// DRAM's), so a child of few tiles takes its weights at its links' pace and leaves the rest
// of the DRAM to the children after it. A (child, sub-batch) starts once its weights' first
// slice is in (with no weights: once the DRAM has room for it), and the child's last
// slice's work follows its last weights. Where two of the cut's weight LOADs share a link,
// the weights are booked LOAD by LOAD instead (bookWeightLoads()).
Cycles Analyser::cappedDramPipeline(const RANode& nd, const NodeWork& nw,
                                    const std::vector<std::tuple<Cycles, int, int, int>>& items) {
    const std::vector<Cycles>& st = ctx.stageScratch;
    const std::vector<double>& need = ctx.pipeNeed;
    const std::vector<double>& stages = ctx.pipeWeightStages;
    DramProfile& dram = ctx.pipeDram;
    dram.reset(dramBw);
    const double perSeg = std::max(1.0, double(analysis.segBatch) / std::max(1, nd.batch));
    // The children's weights share links: all of them up to a child's are in no sooner than
    // their busiest link moves them (weightMaxOf over the leaves in need order; per child,
    // the place of its last leaf there). Booked LOAD by LOAD, each link's own time.
    const bool queued = weightLoadsShareALink(nw);
    auto& order = ctx.pipeWeightLeaves;
    auto& lastLeaf = ctx.pipeLastLeaf;
    order.clear();
    lastLeaf.assign(nd.children.size(), 0);
    for (const auto& item : items) {
        const size_t j = size_t(std::get<1>(item));
        if (queued || std::get<3>(item) || std::get<2>(item) > 0 || !(need[4 * j] > 0)) continue;
        const NodeWork& cw = work[size_t(nd.children[j])];
        for (int pos = cw.lo; pos < cw.hi; ++pos)
            order.push_back({0.0, &work[size_t(leafNode[size_t(posLayer[size_t(pos)])])]});
        lastLeaf[j] = order.size() - 1;
    }
    const std::vector<double>* linkMax = queued ? nullptr : &ctx.weightMaxOf(order);
    Cycles end = 0;
    for (const auto& item : items) {
        const Cycles key = std::get<0>(item);
        const size_t j = size_t(std::get<1>(item));
        const int k = std::get<2>(item);
        if (std::get<3>(item)) {
            dram.book(need[4 * j + 2], dramBw);
            continue;
        }
        const double weights = k == 0 ? need[4 * j] : 0.0;
        Cycles firstSlice = 0, weightsIn = 0;
        if (weights > 0 && queued) {
            weightsIn = bookWeightLoads(nd.children[j], perSeg, firstSlice);
        } else {
            const Cycles allIn =
                weights > 0
                    ? dram.book(weights,
                                need[4 * j + 3] > 0 ? std::min(dramBw, weights / need[4 * j + 3])
                                                    : dramBw,
                                weights / stages[j], &firstSlice)
                    : dram.book(0, dramBw, 0, &firstSlice);
            weightsIn =
                weights > 0 ? std::max(allIn, (*linkMax)[lastLeaf[j]] / perSeg / linkBw) : allIn;
        }
        dram.book(need[4 * j + 1], dramBw);
        const Cycles s = pipeStart(nd, nw, j, k, std::max(key, firstSlice));
        const Cycles span = st[2 * j + 1] - st[2 * j];
        end = std::max(end, s + span);
        if (weights > 0) end = std::max(end, weightsIn + span / stages[j]);
    }
    ctx.pipeLinkClock.drain([](int, double) {});
    return end;
}

// Whether some link carries two or more of the weight LOADs of the cut's leaves.
bool Analyser::weightLoadsShareALink(const NodeWork& nw) {
    LinkSums& count = ctx.pipeLinkClock;
    bool shared = false;
    for (int pos = nw.lo; pos < nw.hi && !shared; ++pos) {
        const LeafTraffic& t = *work[size_t(leafNode[size_t(posLayer[size_t(pos)])])].leaf.traffic;
        for (const LeafTraffic::WeightLoad& load : t.weightLoads)
            for (std::uint32_t q = load.linkFrom; q < load.linkTo && !shared; ++q)
                shared = count.add(t.weightLoadLinks[q], 1.0) > 1.5;
    }
    count.drain([](int, double) {});
    return shared;
}

// The weights of S-cut child `child` booked LOAD by LOAD into the DRAM (docs/cost-model.md
// §5, "Weights queued on shared links"), its leaves in order and each leaf's LOADs in the
// order the program needs them: the replay's DRAM serves each at most at its route's
// bandwidth (and its sides' controllers'), however many LOADs share a link there, in what
// the demands before it left, from when it first has room for it on. Each link of its
// route moves its bytes from then, or once it has moved those of the LOADs booked before,
// at the link's own bandwidth (ctx.pipeLinkClock, drained by the caller), so where LOADs
// share a link their bytes queue there. Returns when the last LOAD's bytes are out of the
// DRAM and over their links; sets `firstSlice` to when every LOAD of the child's first leaf
// with weights has its first slice out of the DRAM.
Cycles Analyser::bookWeightLoads(int child, double perSeg, Cycles& firstSlice) {
    DramProfile& dram = ctx.pipeDram;
    const NodeWork& cw = work[size_t(child)];
    Cycles in = 0;
    bool first = true;
    for (int pos = cw.lo; pos < cw.hi; ++pos) {
        const LeafTraffic& t = *work[size_t(leafNode[size_t(posLayer[size_t(pos)])])].leaf.traffic;
        // The DRAM's time of a byte, its runs' cost included where they are charged.
        const double runs =
            t.runsCharged && t.weightDramBytes > 0 ? t.weightDram / t.weightDramBytes : 1.0;
        for (const LeafTraffic::WeightLoad& load : t.weightLoads) {
            const double bytes = load.bytes / perSeg;
            double rate = std::min(dramBw, linkBw / load.slowness);
            if (portBw > 0) rate = std::min(rate, portBw * load.sides);
            Cycles slice = 0, from = 0;
            Cycles done = dram.book(bytes * runs, rate, bytes * runs / load.stages, &slice, &from);
            if (first) firstSlice = std::max(firstSlice, slice);
            // Each link's bytes at its own bandwidth.
            const int* const route = t.weightLoadLinks.data() + load.linkFrom;
            const double* const shares = t.weightLoadShares.data() + load.linkFrom;
            done = ctx.pipeLinkClock.afterEach(
                route, load.linkTo - load.linkFrom, from,
                [&](std::size_t i) {
                    return bytes * shares[i] * mesh.linkSlowness(route[i]) / linkBw;
                },
                done);
            in = std::max(in, done);
        }
        first = first && t.weightLoads.empty();
    }
    return in;
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
    TileClock& clock = ctx.passClock;
    clock.reset(nw.tileCount);
    std::vector<PassInvocation>& invs = ctx.passInvs;
    invs.clear();
    ctx.passRange.resize(2 * size_t(layerCount)); // per leaf position: its invocations in invs
    Cycles prev = 0, end = 0;
    for (int c : nd.children) {
        NodeWork& cw = work[size_t(c)];
        const size_t from = invs.size();
        auto record = [&](int leaf, Cycles s, Cycles e, int sample) {
            const RANode& ln = tree.node(leaf);
            invs.push_back({layerPos[size_t(ln.layer)], sample, sample + ln.batch - 1, s, e});
        };
        placeInvocations(tree, work, true, c, 0, 0, 1.0, record);
        std::sort(invs.begin() + std::ptrdiff_t(from), invs.end());
        Cycles start = prev;
        for (size_t i = from; i < invs.size(); ++i) {
            const PassInvocation& inv = invs[i];
            const int l = posLayer[size_t(inv.pos)];
            const NodeWork& lw = work[size_t(leafNode[size_t(l)])];
            const int b = lw.tileBegin - nw.tileBegin;
            start = std::max(start, clock.maxOver(b, b + lw.tileCount) - inv.start);
            for (const auto& [prod, k] : ctx.producers[size_t(l)]) {
                const size_t p = size_t(layerPos[size_t(prod)]);
                if (int(p) < nw.lo || int(p) >= cw.lo) continue; // not an earlier child's
                for (int u = ctx.passRange[2 * p]; u < ctx.passRange[2 * p + 1]; ++u)
                    if (invs[size_t(u)].first <= inv.last && inv.first <= invs[size_t(u)].last)
                        start = std::max(start, invs[size_t(u)].end - inv.start);
            }
        }
        for (size_t i = from; i < invs.size(); ++i) {
            PassInvocation& inv = invs[i];
            if (i == from || invs[i - 1].pos != inv.pos)
                ctx.passRange[2 * size_t(inv.pos)] = int(i);
            ctx.passRange[2 * size_t(inv.pos) + 1] = int(i) + 1;
            inv.start += start;
            inv.end += start;
            const NodeWork& lw = work[size_t(leafNode[size_t(posLayer[size_t(inv.pos)])])];
            const int b = lw.tileBegin - nw.tileBegin;
            clock.raise(b, b + lw.tileCount, inv.end);
        }
        cw.passOffset = prev = start;
        end = std::max(end, start + cw.time);
    }
    return end;
}

// First and last start of every node within its segment: T-cut children at their offsets
// in the cut's first pass (overlapPass()), later passes each nw.cut.slot long with the
// children's starts in proportion; S-cut children one slot per stage and per sub-batch (the
// same walk as the S-T graph).
void Analyser::firstStarts() {
    for (int id : pre) {
        const RANode& nd = tree.node(id);
        if (nd.type == NodeType::Leaf) continue;
        const NodeWork& nw = work[size_t(id)];
        const bool top = id == tree.root;
        Cycles first = top ? 0 : nw.firstStart, last = top ? 0 : nw.lastStart;
        const Cycles round = firstPass(work, nd);
        // Later passes: each nw.cut.slot long, the children's starts in proportion.
        const double later = round > 0 ? nw.cut.slot / round : 1.0;
        for (int c : nd.children) {
            NodeWork& cw = work[size_t(c)];
            if (top && analysis.rootIsT) {
                cw.firstStart = cw.lastStart = 0;
            } else if (nd.type == NodeType::T) {
                cw.firstStart = first + cw.passOffset;
                cw.lastStart = nd.subBatch > 1 ? last + round + (nd.subBatch - 2) * nw.cut.slot +
                                                     cw.passOffset * later
                                               : last + cw.passOffset;
            } else {
                cw.firstStart = first + cw.stageOffset;
                cw.lastStart = last + cw.stageOffset + (nd.subBatch - 1) * nw.cut.slot;
            }
        }
    }
}

} // namespace tilescope
