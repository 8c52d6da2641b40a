// Costing a segment after analyse(): its leaves' energy and traffic, the bounds on its
// time (DRAM, links, weight arrival), segments chained without a barrier, and the run's
// totals (docs/cost-model.md §4-§5).
#include "eval/coster.h"
#include "mapping/cim.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace tilescope {

namespace {

// The share of a segment's weight streaming, on its busiest link, that the leaves' own
// transfers lose to it: a link is shared per transfer and the weights come as many LOADs
// in flight at once, so a SEND meeting them there gets a small share, not half; measured
// on the 1,952 replayed trees with exchanges held up once (docs/cost-model.md §5,
// "Weights in the background").
constexpr double kWeightShare = 0.7;

} // namespace

// Weights arrive in the order their leaves first run, through the shared DRAM and
// the links they use; a leaf cannot start before its weights are in, and what
// follows it in the segment follows it (a flow shop: docs/cost-model.md §5).
// Also sets seg.weightLink[s], the weights' busiest link / link bandwidth.
Cycles Coster::weightBoundOf(size_t s) {
    const NodeWork& sw = work[size_t(segments[s])];
    Cycles weightBound = 0;
    seg.weightLink[s] = 0;
    if (!seg.byStart.empty()) {
        // By start, ties in their order. Most segments have a few leaves, nearly in start
        // order: an insertion sort, which std::stable_sort's buffer would cost more than.
        const auto earlier = [](const auto& a, const auto& b) { return a.first < b.first; };
        if (seg.byStart.size() > 64) {
            std::stable_sort(seg.byStart.begin(), seg.byStart.end(), earlier);
        } else {
            for (size_t i = 1; i < seg.byStart.size(); ++i)
                for (size_t j = i; j > 0 && earlier(seg.byStart[j], seg.byStart[j - 1]); --j)
                    std::swap(seg.byStart[j], seg.byStart[j - 1]);
        }
        double cumDram = 0;
        // The weights of every leaf so far cross the links together: the busiest link of
        // their sum bounds their arrival.
        const std::vector<double>& linkMaxAt = ctx.weightMaxOf(seg.byStart);
        int cut = -1;
        // The DRAM serves in need order: the activation traffic of the leaves that start
        // before a leaf comes before its weights.
        std::sort(seg.actByStart.begin(), seg.actByStart.end());
        size_t a = 0;
        double actBefore = 0;
        for (size_t i = 0; i < seg.byStart.size(); ++i) {
            const auto& [start, lw] = seg.byStart[i];
            for (; a < seg.actByStart.size() && seg.actByStart[a].first < start; ++a)
                actBefore += seg.actByStart[a].second;
            // An S cut's own pipeline counts the DRAM from the cut's start: the weights of
            // the leaves before it, still loading then, come first (docs/cost-model.md §5,
            // "Weight arrival", the backlog at an S cut).
            if (lw->leaf.dramOrdered && lw->leaf.dramCut != cut) {
                cut = lw->leaf.dramCut;
                const Cycles before =
                    hw.dramLatencyCycles +
                    std::max(cumDram / dramBw, i > 0 ? linkMaxAt[i - 1] / linkBw : 0.0);
                weightBound =
                    std::max(weightBound, before + sw.time - work[size_t(cut)].firstStart);
            }
            cumDram += lw->leaf.traffic->weightDram;
            if (lw->leaf.dramOrdered) continue; // its S cut's time holds the wait
            const double linkMax = linkMaxAt[i];
            const Cycles arrival =
                hw.dramLatencyCycles + std::max((cumDram + actBefore) / dramBw, linkMax / linkBw);
            // The leaf streams its weights in S slices (by output channel, as the
            // generator cuts its weight LOADs: weightStagesOf): it starts once the first
            // slice is in and its last slice's work follows the last weights, and what
            // comes after it follows its end. Its own wait for DRAM data overlaps the wait
            // for its weights.
            const double stages = weightStagesOf(*lw->leaf.traffic);
            const Cycles own = std::max(lw->leaf.traffic->weightDram / dramBw,
                                        lw->leaf.traffic->weightMaxLink / linkBw);
            const Cycles rest = sw.time - start - lw->leaf.latency;
            weightBound =
                std::max({weightBound, arrival - own * (1 - 1.0 / stages) + rest,
                          arrival + rest / stages, arrival + lw->time / stages + rest - lw->time});
        }
        seg.weightLink[s] = linkMaxAt.back() / linkBw;
    }
    return weightBound;
}

// What a blocked leaf's blocking adds to its DRAM bytes over the whole run
// (docs/cost-model.md §2b): its activation bytes beyond what it reads from DRAM and stores
// there, each once (a streamed input or an output that stays on chip moves none), and its
// streamed weights beyond one read per segment invocation.
void Coster::blockingDram(int l, double actDram, NodeWork& lw) {
    const Layer& ly = ctx.net.layers[size_t(l)];
    double bytes = writesDram[size_t(l)] ? double(ly.outputBytesPerSample()) : 0.0;
    for (size_t k = 0; k < ly.inputs.size(); ++k)
        if (inputViaDram[size_t(l)][k]) bytes += double(ly.inputs[k].bytesPerSample);
    double once = bytes * hw.dataBits / 8.0 * segBatch;
    if (lw.leaf.mapping->streamsWeights()) once += double(ly.weightBytes) * hw.dataBits / 8.0;
    lw.leaf.blockingDram = std::max(0.0, actDram - once) * segInvocations;
    ++ev.blockedLeaves;
    ev.blockingDramBytes += lw.leaf.blockingDram;
}

// The global buffer's energy of one leaf invocation: the PE array's reads and writes and
// the transfers' writes into it (docs/cost-model.md §4), each at its own energy.
double Coster::bufferPj(const LeafMapping& m, const LeafTraffic& t, double invocations) const {
    if (readPj == writePj) return (m.bufferAccessBytes * invocations + t.delivered) * readPj;
    return (m.bufferAccessBytes - m.bufferWriteBytes) * invocations * readPj +
           (m.bufferWriteBytes * invocations + t.delivered) * writePj;
}

// The in-tile levels' energy of a leaf's invocations (docs/cost-model.md §2c), added per
// level to `perLevel`.
double Coster::levelsPj(const LeafMapping& m, double invocations,
                        std::array<double, kMaxStorageLevels>& perLevel) const {
    double sum = 0;
    for (size_t i = 0; i < hw.levels.size(); ++i) {
        const double e = (m.levelReads[i] * hw.levels[i].readPjPerByte +
                          m.levelWrites[i] * hw.levels[i].writePjPerByte) *
                         invocations;
        perLevel[i] += e;
        sum += e;
    }
    return sum;
}

void Coster::costSegment(size_t s) {
    // dram: the segment's DRAM bytes; dramOcc: the same at the DRAM's pace, its runs' cost
    // included where the template has a run model (docs/cost-model.md §4b).
    double dram = 0, dramOcc = 0, energyCompute = 0, energyBuffer = 0, leafDramWait = 0,
           leafNocWait = 0, segHop = 0, segInterHop = 0, energyWrite = 0;
    std::array<double, 4> sideBytes{};
    std::array<double, kMaxStorageLevels> levelEnergy{};
    const NodeWork& sw = work[size_t(segments[s])];
    const bool alone = sw.hi - sw.lo == 1;
    seg.byStart.clear();
    seg.actByStart.clear();
    for (int pos = sw.lo; pos < sw.hi; ++pos) {
        const int l = posLayer[size_t(pos)];
        const int id = leafNode[size_t(l)];
        NodeWork& lw = work[size_t(id)];
        const LeafMapping& mapping = *lw.leaf.mapping;
        const LeafTraffic& traffic = *lw.leaf.traffic;
        const double invocations = double(segBatch) / tree.node(id).batch;
        const double hop = traffic.actHop + traffic.weightHop;
        const double interHop = traffic.actInterHop + traffic.weightInterHop;
        if (opt.detail)
            for (const auto* part : {&traffic.actLinks, &traffic.weightLinks})
                for (const auto& [link, b] : *part)
                    ctx.linkSums.add(link, b);
        segHop += hop;
        segInterHop += interHop;
        const double leafDram = traffic.dramBytes();
        if (mapping.blocked())
            blockingDram(l, traffic.runsCharged ? traffic.actDramBytes : traffic.actDram, lw);
        for (size_t d = 0; d < 4; ++d)
            sideBytes[d] += traffic.actSide[d] + traffic.weightSide[d];
        if (traffic.weightDram > 0) seg.byStart.push_back({lw.firstStart, &lw});
        if (lw.dram > 0) seg.actByStart.push_back({lw.firstStart, lw.dram});
        // Why the leaf waits beyond its compute (for the reported bound).
        const double dramWait = std::max(0.0, lw.dram / dramBw - lw.compute);
        const double nocWait =
            std::max(0.0, std::max({traffic.actMaxLink, traffic.maxEgress, lw.leaf.sentOut}) /
                                  traffic.invocations / linkBw -
                              lw.compute);
        leafDramWait += dramWait * invocations;
        leafNocWait += nocWait * invocations;
        const double macs = double(mapping.macs) * invocations;
        const double eCompute =
            macs * macPjOf(hw) + double(mapping.vectorOps) * invocations * hw.energy.vectorPjPerOp;
        const double eWrite = lw.leaf.cimPrograms * cimWritePj(hw); // 0 unless compute-in-memory
        const double eBuffer = bufferPj(mapping, traffic, invocations);
        const double eLevels = levelsPj(mapping, invocations, levelEnergy);
        energyCompute += eCompute;
        energyBuffer += eBuffer;
        macTotal += macs * segInvocations;
        dram += leafDram;
        dramOcc += traffic.actDram + traffic.weightDram;
        lw.energy = (eCompute + eBuffer + leafDram * 8 * hw.energy.dramPjPerBit +
                     hopPj(hop, interHop) + eWrite + eLevels) *
                    segInvocations;
        lw.inTileEnergy = eLevels * segInvocations;
        energyWrite += eWrite;
        programsTotal += lw.leaf.cimPrograms * segInvocations;
        programsDefaultTotal += lw.leaf.cimProgramsDefault * segInvocations;
        if (opt.detail) {
            // What crosses the leaf's boundary over the whole run (engine/report/layers.h):
            // its DRAM bytes, the NoC pieces it receives from outside its group, and those
            // of its output that leave its group; pieces between its own tiles apart.
            lw.leaf.runDram += leafDram * segInvocations;
            lw.leaf.runArray +=
                mapping.bufferAccessBytes * invocations * segInvocations; // as eBuffer
            const auto& ins = ctx.net.layers[size_t(l)].inputs;
            for (size_t k = 0; k < traffic.nocInByInput.size() && k < ins.size(); ++k) {
                lw.leaf.runNocIn += traffic.nocInByInput[k] * segInvocations;
                lw.leaf.runNocInside += traffic.nocInsideGroup[k] * segInvocations;
                if (ins[k].producer >= 0)
                    work[size_t(leafNode[size_t(ins[k].producer)])].leaf.runNocOut +=
                        traffic.nocOutOfProducer[k] * segInvocations;
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
        alone ? work[size_t(leafNode[size_t(posLayer[size_t(sw.lo)])])].leaf.traffic->maxLink : 0.0;
    if (opt.detail)
        ctx.linkSums.drain([&](int l, double b) {
            maxLink = std::max(maxLink, b * mesh.linkSlowness(l));
            totalLinks[size_t(l)] += b * segInvocations;
        });
    else if (!alone)
        maxLink = ctx.busiestOf(work, leafNode, posLayer, sw.lo, sw.hi, 1.0, true);
    Cycles weightBound = weightBoundOf(s);
    Cycles dramTime = dramOcc / dramBw;
    if (hw.dramPortBytesPerCycle > 0)
        for (double b : sideBytes)
            dramTime = std::max(dramTime, b / hw.dramPortBytesPerCycle);
    const Cycles nocTime = maxLink / linkBw;
    seg.time[s] = sw.time;
    seg.dramTime[s] = dramTime;
    // What of the segment is traffic: its busiest link's time, or what its leaves wait
    // on their traffic beyond their compute (chainSegments()).
    seg.nocTime[s] = std::max(nocTime, sw.time - sw.compute);
    // A segment whose pipeline already waits on its leaves' own traffic is bound by
    // what they wait for, even when no whole-segment bound below bites.
    // (An S cut held up by the DRAM's order, dramOrderedPipeline(), waits for the DRAM.)
    const Cycles dramHeld = sw.cut.piped > 0 ? std::max(0.0, sw.time - sw.cut.piped) : 0.0;
    const Bound waitBound = dramHeld > 0                 ? Bound::Dram
                            : leafNocWait > leafDramWait ? Bound::Noc
                                                         : Bound::Dram;
    if (sw.time > sw.compute) seg.bound[s] = waitBound;
    if (dramTime > seg.time[s]) seg.time[s] = dramTime, seg.bound[s] = Bound::Dram;
    if (weightBound > seg.time[s]) seg.time[s] = weightBound, seg.bound[s] = Bound::Dram;
    if (nocTime > seg.time[s]) seg.time[s] = nocTime, seg.bound[s] = Bound::Noc;
    // The weights stream in behind the leaves' own traffic, on links it also uses: where
    // they meet, each gets its share of the link (docs/cost-model.md §5, "Weights in
    // the background").
    const Cycles shared = sw.time + kWeightShare * seg.weightLink[s];
    // (Named after the larger part: the DRAM's order, or the weights' share of the links.)
    const Bound sharedBound = dramHeld > shared - sw.time ? Bound::Dram : Bound::Noc;
    if (shared > seg.time[s]) seg.time[s] = shared, seg.bound[s] = sharedBound;
    seg.dramPart[s] = std::max(dramTime, weightBound);
    seg.otherPart[s] = std::max({sw.time, nocTime, shared});
    // An S cut held up by the DRAM's order waits for its weights: what of that wait their
    // loading ahead of the segment takes away (the cut's time were they in before it
    // starts) belongs to the DRAM part.
    if (sw.cut.preloaded > 0 && sw.cut.preloaded < sw.time) {
        seg.dramPart[s] = std::max(seg.dramPart[s], sw.time);
        seg.otherPart[s] =
            std::max({sw.cut.preloaded, nocTime, shared - sw.time + sw.cut.preloaded});
    }
    // The bound should the DRAM part shrink below the rest (chainSegments()).
    seg.otherBound[s] = nocTime > sw.time && nocTime >= shared ? Bound::Noc
                        : shared > sw.time                     ? sharedBound
                        : sw.time > sw.compute                 ? waitBound
                                                               : Bound::Compute;
    seg.dram[s] = dram;
    dramTotal += dram * segInvocations;
    hopBytesTotal += hop * segInvocations;
    interHopBytesTotal += segInterHop * segInvocations;
    energy.mac += energyCompute * segInvocations;
    energy.buffer += energyBuffer * segInvocations;
    energy.weightWrite += energyWrite * segInvocations;
    for (size_t i = 0; i < levelEnergy.size(); ++i)
        energy.levels[i] += levelEnergy[i] * segInvocations;
    energy.dram += dram * 8 * hw.energy.dramPjPerBit * segInvocations;
    energy.noc += hopPj(hop, segInterHop) * segInvocations;
}

// Segments follow each other without a barrier (docs/cost-model.md §5, "Segments
// overlap"): a tile starts its part of the next segment once it has finished its part of
// this one, and a leaf's first and last invocations wait for those of its producers in
// earlier segments. Each segment keeps its own bounded time (its leaves' starts stretched
// in proportion to it), a segment starts no earlier than the one before it plus that one's
// traffic time, and the run lasts at least every segment's DRAM time added up.
Cycles Coster::chainSegments() {
    const size_t segCount = segments.size();
    seg.start.assign(segCount * size_t(segInvocations), 0.0);
    seg.len.assign(segCount * size_t(segInvocations), 0.0);
    seg.tileFree.reset(mesh.tiles());
    seg.loadFree.reset(mesh.tiles());
    seg.firstEnd.resize(size_t(nodeCount)); // written before they are read: producers come first
    seg.lastEnd.resize(size_t(nodeCount));
    Cycles end = 0, prev = 0, dramFree = 0;
    dramFloor = 0;
    for (double d : seg.dramTime)
        dramFloor += d;
    if (segCount == 1 && segInvocations == 1) { // one segment
        seg.len[0] = seg.time[0];
        return std::max(seg.time[0], dramFloor);
    }
    for (int j = 0; j < segInvocations; ++j)
        for (size_t s = 0; s < segCount; ++s) {
            const NodeWork& sw = work[size_t(segments[s])];
            Cycles start = prev; // segments start in order
            seg.early.clear();
            // Its weights fit beside what the segment before holds on a tile, twice over (the
            // generator places weights at the ends of the buffer's free gaps): they need not
            // wait for that segment's readers, only for the tiles' LOAD engines
            // (docs/cost-model.md §5, "Weights ahead of their segment").
            const bool aside = s > 0 && work[size_t(segments[s - 1])].wgt +
                                                work[size_t(segments[s - 1])].act + 2 * sw.wgt <=
                                            hw.bufferBytes;
            // Its leaves' starts stretched to its time without a head start.
            const double planned = sw.time > 0 ? seg.time[s] / sw.time : 1.0;
            for (int pos = sw.lo; pos < sw.hi && (j > 0 || s > 0); ++pos) {
                const int l = posLayer[size_t(pos)];
                const NodeWork& lw = work[size_t(leafNode[size_t(l)])];
                const Cycles first = lw.firstStart * planned, last = lw.lastStart * planned;
                const Cycles free = seg.tileFree.maxOver(lw.tileBegin, lw.tileBegin + lw.tileCount);
                start = std::max(start, free - first);
                if (lw.leaf.traffic->weightDram > 0)
                    seg.early.push_back(
                        {aside ? seg.loadFree.maxOver(lw.tileBegin, lw.tileBegin + lw.tileCount)
                               : free,
                         lw.leaf.traffic->weightDram / dramBw});
                for (const auto& in : ctx.net.layers[size_t(l)].inputs) {
                    if (in.producer < 0) continue;
                    const int p = leafNode[size_t(in.producer)];
                    if (work[size_t(p)].segment >= int(s)) continue; // within the segment
                    start = std::max(
                        {start, seg.firstEnd[size_t(p)] - first, seg.lastEnd[size_t(p)] - last});
                }
            }
            // ... and no earlier than the segment before has moved its traffic: the DRAM
            // and the links it keeps busy are not free for this one's.
            if (j > 0 || s > 0) {
                const size_t q = s > 0 ? s - 1 : segCount - 1;
                start = std::max({start, dramFree, prev + seg.nocTime[q]});
            }
            // Weights load onto tiles as soon as these are free and the DRAM has moved the
            // earlier segments' traffic: what loads before the segment starts shortens its
            // DRAM-bound part (docs/cost-model.md §5, "Weights ahead of their segment").
            Cycles ahead = 0;
            if (start > dramFree && !seg.early.empty()) {
                std::sort(seg.early.begin(), seg.early.end());
                Cycles d = dramFree;
                for (const auto& [free, t] : seg.early) {
                    d = std::max(d, free);
                    if (d >= start) break;
                    ahead += std::min(t, start - d);
                    d += t;
                }
            }
            const Cycles len = std::max(seg.otherPart[s], seg.dramPart[s] - ahead);
            if (j == 0 && seg.dramPart[s] - ahead < seg.otherPart[s] &&
                seg.dramPart[s] >= seg.otherPart[s])
                seg.bound[s] = seg.otherBound[s]; // its weights loaded ahead
            const double scale = sw.time > 0 ? len / sw.time : 1.0;
            for (int pos = sw.lo; pos < sw.hi; ++pos) {
                const int id = leafNode[size_t(posLayer[size_t(pos)])];
                const NodeWork& lw = work[size_t(id)];
                seg.firstEnd[size_t(id)] = start + (lw.firstStart + lw.time) * scale;
                seg.lastEnd[size_t(id)] = start + (lw.lastStart + lw.time) * scale;
                seg.tileFree.raise(lw.tileBegin, lw.tileBegin + lw.tileCount,
                                   seg.lastEnd[size_t(id)]);
                // Its tiles' LOAD engines: busy with its weights until its first start, and
                // until its last when it reads inputs from DRAM.
                const bool readsDram = lw.leaf.traffic->actDram - lw.leaf.traffic->actDramOut > 0;
                seg.loadFree.raise(lw.tileBegin, lw.tileBegin + lw.tileCount,
                                   start + (readsDram ? lw.lastStart : lw.firstStart) * scale);
            }
            seg.start[size_t(j) * segCount + s] = prev = start;
            seg.len[size_t(j) * segCount + s] = len;
            dramFree = start + std::max(0.0, seg.dramTime[s] - ahead);
            end = std::max(end, start + len);
        }
    return std::max(end, dramFloor * segInvocations);
}

// Evaluation::segmentStart and segmentShare from the chain (detail only).
void Coster::segmentShares() {
    const size_t segCount = segments.size();
    ev.segmentStart.assign(segCount, 0.0);
    ev.segmentShare.assign(segCount, 0.0);
    Cycles frontier = 0;
    for (int j = 0; j < segInvocations; ++j)
        for (size_t s = 0; s < segCount; ++s) {
            const Cycles start = seg.start[size_t(j) * segCount + s];
            const Cycles end = start + seg.len[size_t(j) * segCount + s];
            if (j == 0) ev.segmentStart[s] = start;
            ev.segmentShare[s] += std::max(0.0, end - frontier);
            frontier = std::max(frontier, end);
        }
    if (delay > frontier && dramFloor > 0)
        for (size_t s = 0; s < segCount; ++s)
            ev.segmentShare[s] += (delay - frontier) * seg.dramTime[s] / dramFloor;
}

void Coster::totals() {
    delay = chainSegments();

    ev.valid = true;
    ev.energy = energy;
    ev.delay = delay;
    ev.cost = objectiveCost(energy.total(), delay, opt.objective);
    ev.dramBytes = dramTotal;
    ev.nocHopBytes = hopBytesTotal;
    ev.interChipletHopBytes = interHopBytesTotal;
    ev.macs = Count(macTotal);
    ev.weightProgrammings = Count(std::llround(programsTotal));
    ev.weightProgrammingsDefault = Count(std::llround(programsDefaultTotal));
    ev.utilisation = delay > 0 ? macTotal / (delay * double(hw.macsPerTile) * mesh.tiles()) : 0;
}

} // namespace tilescope
