#include "sim/simulator.h"

#include "eval/dram_layout.h"
#include "hw/mesh.h"
#include "sim/flat_program.h"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <queue>
#include <span>
#include <tuple>

namespace tilescope {

namespace {

// The simulation's working data: engine queues, stage end times, resource bookings.
struct Sim {
    const Hardware& hw;
    const SimOptions& opt;
    const Mesh mesh;
    SimResult& result;
    const FlatProgram flat;
    const size_t n;
    // Engines: per (tile, engine) the queue of its instructions in program order, then per
    // (tile, core) a compute-in-memory core's own stream (Instruction::core).
    std::vector<std::vector<size_t>> queue;
    static constexpr size_t loadEngine = size_t(Engine::Load);
    size_t coreBase = 0, coresPerTile = 0;
    size_t engineOf(const Instruction& i) const {
        return i.core >= 0 ? coreBase + size_t(i.tile) * coresPerTile + size_t(i.core)
                           : size_t(i.tile) * 3 + size_t(i.engine());
    }
    bool isLoad(size_t e) const { return e < coreBase && e % 3 == loadEngine; }
    std::vector<size_t> head;
    // Compute and store engines: when their last stage ended. Load engines: when their last
    // stage was issued (a LOAD's stages and up to K LOADs overlap; the resources serialise them).
    std::vector<Cycles> engineFree;
    std::vector<Cycles> busyUntil; // busy time counts overlapping loads once
    std::vector<std::uint32_t> done;
    // Stage end times in one array: instruction k's at stageEnd[stageAt[k] + j].
    std::vector<size_t> stageAt;
    std::vector<Cycles> stageEnd;
    std::vector<Cycles> firstStart, finish;
    std::vector<std::vector<size_t>> waiters;
    std::vector<unsigned> version;
    // Dependency targets as positions, resolved once: consider() runs once per stage.
    std::vector<size_t> depAt;
    std::vector<std::uint32_t> depPos;
    // The DRAM's side controllers, when each is free (bookSide()): one per DRAM side (by
    // Dir) when the template limits each side's controller, booked first come, first
    // served. The links are shared instead (linkFlows, bookLink()).
    std::array<Cycles, 4> sideFree{};
    // The DRAM's total bandwidth, given out in need order (grantDram()), as the bandwidth
    // in use over time: from dramUse[i].first on, dramUse[i].second bytes/cycle (the last
    // entry, 0, runs on forever). A transfer stage takes what is left, at most what its
    // route carries, from when it is served on, and more as the transfers served before it
    // end (bookDram()); flowEnd[k]: when transfer k's last booked stage leaves the DRAM
    // (one transfer's stages follow one another).
    std::vector<std::pair<Cycles, double>> dramUse;
    std::vector<Cycles> flowEnd;
    // Route unions and DRAM side sets, computed when an instruction first transfers; the
    // links in one array (programs run to millions of instructions).
    static constexpr size_t kUnrouted = size_t(-1);
    std::vector<size_t> routeAt;
    std::vector<std::uint32_t> routeLen;
    std::vector<std::uint8_t> sideMask;
    std::vector<int> routeLinks, tmp, dsts;
    // Where memory is interleaved over the DRAM ports (Mesh::interleaved), the share of its
    // transfer's bytes each of routeLinks carries (Mesh::dramLinkShares; 1 on a SEND's);
    // empty otherwise, every link carrying all of them.
    std::vector<double> routeShare;
    std::vector<std::pair<int, double>> shares;
    double shareAt(size_t q) const { return routeShare.empty() ? 1.0 : routeShare[q]; }
    size_t maxLoads = 1;
    // Stages each instruction's engine has issued; done counts those whose end is known.
    // They differ for DRAM transfers waiting for the DRAM to take them (grantDram()).
    std::vector<std::uint32_t> posted;
    // Per instruction: the dependencies before depsMet[k] are ready for its stage
    // depsMetStage[k] (they stay so: a compute waiting on thousands of SENDs is woken by each
    // in turn and looks at those it still waits for, not all of them again).
    std::vector<std::uint32_t> depsMet, depsMetStage;
    // Per instruction: the id of the first instruction that depends on it (its own if none),
    // the DRAM's priority. Stages waiting for the DRAM are served lowest (need, stage)
    // first (grantDram()); a STORE engine waits for its stage's grant (waitsGrant).
    std::vector<std::uint32_t> needAt;
    struct DramReq {
        std::uint32_t need, j; // needAt of its instruction, its stage
        size_t k, e;
        Cycles ready, linkEnd; // issued at ready; its links and sides done at linkEnd
        bool operator>(const DramReq& o) const { return need != o.need ? need > o.need : j > o.j; }
    };
    std::priority_queue<DramReq, std::vector<DramReq>, std::greater<DramReq>> dramQ;
    std::vector<char> waitsGrant;
    // Waiting stages whose transfer still moves an earlier stage through the DRAM: served
    // once that one has left (flowEnd), so that a transfer does not book the DRAM ahead
    // of stages the program needs sooner.
    std::vector<DramReq> dramLater;
    // The DRAM's next event in pq (infinity: none); an earlier one supersedes it.
    Cycles dramEventAt = std::numeric_limits<Cycles>::infinity();
    unsigned dramVersion = 0;
    size_t dramEngine = 0; // the DRAM's event in pq: past every engine's index
    using Cand = std::tuple<Cycles, size_t, unsigned>; // start, engine, version
    std::priority_queue<Cand, std::vector<Cand>, std::greater<Cand>> pq;
    double dramBw = 0, linkBw = 0, portBw = 0;
    DramRunModel runModel;
    Cycles latency = 0;
    // Per link: when it was last booked and the transfers with work left on it then
    // (instruction, cycles of work left at the link's full bandwidth); see bookLink().
    struct Flow {
        std::uint32_t k;
        Cycles left;
    };
    struct LinkFlows {
        Cycles at = 0;
        std::vector<Flow> flows;
    };
    std::vector<LinkFlows> linkFlows;
    // Per link: bandwidth a transfer moves at (the NoC's, an inter-chiplet link's own; port
    // links the NoC's too: the DRAM is a resource of its own).
    std::vector<double> linkBwOf;

    Sim(const Program& p, const Hardware& h, const SimOptions& o, SimResult& r)
        : hw(h), opt(o), mesh(h), result(r), flat(flatten(p)), n(flat.ins.size()) {}

    void init() {
        result.total = n;
        result.busy.assign(size_t(mesh.tiles()), {0, 0, 0});
        result.linkBytes.assign(size_t(mesh.linkCount()), 0);
        coreBase = size_t(mesh.tiles()) * 3;
        coresPerTile = hw.arch == TileArch::Cim ? size_t(hw.cim.cores) : 0;
        queue.resize(coreBase + size_t(mesh.tiles()) * coresPerTile);
        for (size_t k = 0; k < n; ++k)
            queue[engineOf(*flat.ins[k])].push_back(k);
        head.assign(queue.size(), 0);
        waitsGrant.assign(queue.size(), 0);
        dramEngine = queue.size();
        engineFree.assign(queue.size(), 0);
        busyUntil.assign(queue.size(), 0);
        done.assign(n, 0);
        posted.assign(n, 0);
        depsMet.assign(n, 0);
        depsMetStage.assign(n, 0);
        stageAt.assign(n + 1, 0);
        for (size_t k = 0; k < n; ++k)
            stageAt[k + 1] = stageAt[k] + flat.ins[k]->stages;
        stageEnd.assign(stageAt[n], 0);
        firstStart.assign(n, -1);
        finish.assign(n, 0);
        waiters.resize(n);
        version.assign(queue.size(), 0);
        depAt.assign(n + 1, 0);
        for (size_t k = 0; k < n; ++k)
            depAt[k + 1] = depAt[k] + flat.ins[k]->deps.size();
        depPos.resize(depAt[n]);
        for (size_t k = 0; k < n; ++k)
            for (size_t d = 0; d < flat.ins[k]->deps.size(); ++d)
                depPos[depAt[k] + d] = std::uint32_t(flat.index.at(flat.ins[k]->deps[d].id));
        needAt.assign(n, std::numeric_limits<std::uint32_t>::max());
        for (size_t k = 0; k < n; ++k)
            for (size_t d = depAt[k]; d < depAt[k + 1]; ++d)
                needAt[depPos[d]] = std::min(needAt[depPos[d]], flat.ins[k]->id);
        for (size_t k = 0; k < n; ++k)
            if (needAt[k] == std::numeric_limits<std::uint32_t>::max()) needAt[k] = flat.ins[k]->id;
        // A STORE holds its in-order engine until the DRAM takes it: the SENDs queued behind
        // it need it as soon as they do.
        for (size_t e = 0; e < queue.size(); ++e) {
            if (isLoad(e)) continue;
            std::uint32_t after = std::numeric_limits<std::uint32_t>::max();
            for (auto it = queue[e].rbegin(); it != queue[e].rend(); ++it) {
                if (flat.ins[*it]->op == Op::Store) needAt[*it] = std::min(needAt[*it], after);
                after = std::min(after, needAt[*it]);
            }
        }
        sideFree.fill(0);
        dramUse.assign(1, {0.0, 0.0});
        flowEnd.assign(n, 0.0);
        routeAt.assign(n, kUnrouted);
        routeLen.assign(n, 0);
        sideMask.assign(n, 0);
        maxLoads = size_t(std::max(1, hw.maxOutstandingLoads));
    }

    void routeOf(size_t k) {
        if (routeAt[k] != kUnrouted) return;
        const Instruction& i = *flat.ins[k];
        tmp.clear();
        dsts.clear();
        if (i.op == Op::Store) {
            mesh.routeToDram(i.tile, tmp);
            dsts.push_back(i.tile);
        } else {
            dsts.push_back(i.dst);
            dsts.insert(dsts.end(), i.mcast.begin(), i.mcast.end());
            // The multicast tree, as the evaluator builds it (Mesh, engine/hw/mesh.h).
            if (i.op == Op::Load)
                mesh.multicastFromDram(dsts, tmp);
            else
                mesh.multicastRoute(i.tile, dsts, tmp);
        }
        routeAt[k] = routeLinks.size();
        if (mesh.interleaved()) {
            if (i.op == Op::Send) {
                std::sort(tmp.begin(), tmp.end());
                tmp.erase(std::unique(tmp.begin(), tmp.end()), tmp.end());
                shares.clear();
                for (int l : tmp)
                    shares.emplace_back(l, 1.0);
            } else {
                mesh.dramLinkShares(tmp, shares);
            }
            routeLen[k] = std::uint32_t(shares.size());
            for (const auto& [l, w] : shares) {
                routeLinks.push_back(l);
                routeShare.push_back(w);
            }
        } else {
            std::sort(tmp.begin(), tmp.end());
            tmp.erase(std::unique(tmp.begin(), tmp.end()), tmp.end());
            routeLen[k] = std::uint32_t(tmp.size());
            routeLinks.insert(routeLinks.end(), tmp.begin(), tmp.end());
        }
        if (i.op != Op::Send)
            for (Dir s : mesh.dramSidesOf(dsts))
                sideMask[k] |= std::uint8_t(1u << s);
    }

    // Candidate start of the engine's next stage, or park it on the instruction it waits for.
    void consider(size_t e) {
        ++version[e];
        if (head[e] >= queue[e].size() || waitsGrant[e]) return;
        const size_t k = queue[e][head[e]];
        const Instruction& i = *flat.ins[k];
        const std::uint32_t j = posted[k]; // next stage, 0-based
        Cycles start = engineFree[e];
        if (isLoad(e) && j == 0 && head[e] >= maxLoads) {
            const size_t q = queue[e][head[e] - maxLoads];
            if (done[q] < flat.ins[q]->stages) {
                waiters[q].push_back(e);
                return;
            }
            start = std::max(start, finish[q]);
        }
        auto need = [&](size_t d, size_t q) {
            const std::uint32_t np = flat.ins[q]->stages;
            return opt.fineGrained ? std::min<std::uint32_t>(np, i.deps[d].stage + j) : np;
        };
        if (depsMetStage[k] != j) depsMetStage[k] = j, depsMet[k] = 0;
        for (size_t d = depsMet[k]; d < i.deps.size(); ++d) {
            const size_t q = depPos[depAt[k] + d];
            if (done[q] < need(d, q)) {
                depsMet[k] = std::uint32_t(d);
                waiters[q].push_back(e);
                return;
            }
        }
        depsMet[k] = std::uint32_t(i.deps.size());
        for (size_t d = 0; d < i.deps.size(); ++d) {
            const size_t q = depPos[depAt[k] + d];
            start = std::max(start, stageEnd[stageAt[q] + need(d, q) - 1]);
        }
        pq.push({start, e, version[e]});
    }

    // The bytes a DRAM transfer holds the DRAM for: its bytes, and where its descriptor
    // has runs their bursts' padding and overhead (docs/cost-model.md §4b).
    double dramOccupancy(const Instruction& i) const {
        if (i.runs == 0 || !runModel.active()) return double(i.bytes);
        const DramRuns r{i.base, i.runs, i.runBytes, i.burstBytes};
        return double(i.bytes) + runOverheadBytes(runModel, r, double(i.bytes));
    }

    void initBandwidths() {
        runModel = dramRunModel(hw);
        dramBw = std::max(1e-9, hw.dramBytesPerCycle);
        linkBw = std::max(1e-9, hw.nocBytesPerCycle);
        portBw = hw.dramPortBytesPerCycle;
        latency = std::max(0.0, hw.dramLatencyCycles);
        linkFlows.assign(size_t(mesh.linkCount()), {});
        linkBwOf.assign(size_t(mesh.linkCount()), linkBw);
        if (mesh.hasChiplets())
            for (int l = 0; l < mesh.linkCount(); ++l)
                if (mesh.crossesChiplet(l))
                    linkBwOf[size_t(l)] = std::max(1e-9, mesh.linkCapacity(l));
    }

    // Books DRAM side s's controller for dur from ready or when it is next free (request
    // order).
    Cycles bookSide(size_t s, Cycles ready, Cycles dur) {
        sideFree[s] = std::max(ready, sideFree[s]) + dur;
        return sideFree[s];
    }

    // Links are shared, not reserved: a link's arbiter interleaves the packets of the
    // transfers crossing it round-robin, which moves every transfer with work left at an
    // equal share of the bandwidth (docs/isa.md, "Replay"). A stage of transfer k ready at
    // s joins k's own work on the link, W_k (k's earlier stages still queued plus this
    // one's d), and ends when the link has moved W_k for k and, meanwhile, at most as much
    // for every other transfer: at s + sum_f min(W_f, W_k), assuming nothing else arrives.
    // The link never moves more than its bandwidth allows, a transfer no shorter than the
    // others waits for them, a short one gets its share while they run. Stages are popped
    // in non-decreasing ready order, so each link's transfers are drained up to s first.
    // First-come-first-served links made a 64-byte SEND wait 19,000 cycles behind weight
    // loads (transformer, cloud); sharing per stage rather than per transfer made a
    // 448-byte SEND wait 1,700 cycles behind the stages of 20 weight loads (mobilenet_v2,
    // cloud).
    Cycles bookLink(int link, std::uint32_t k, Cycles ready, Cycles dur) {
        LinkFlows& lf = linkFlows[size_t(link)];
        auto& fl = lf.flows;
        for (Cycles dt = ready - lf.at; dt > 0 && !fl.empty();) {
            Cycles least = fl.front().left;
            for (const Flow& f : fl)
                least = std::min(least, f.left);
            const double n = double(fl.size());
            if (least * n >= dt) { // nobody finishes before `ready`
                for (Flow& f : fl)
                    f.left -= dt / n;
                break;
            }
            dt -= least * n;
            for (Flow& f : fl)
                f.left -= least;
            std::erase_if(fl, [least](const Flow& f) { return f.left <= 1e-9 * least; });
        }
        lf.at = std::max(lf.at, ready);
        auto own = std::find_if(fl.begin(), fl.end(), [k](const Flow& f) { return f.k == k; });
        if (own == fl.end()) {
            fl.push_back({k, 0});
            own = fl.end() - 1;
        }
        own->left += dur;
        const Cycles mine = own->left;
        Cycles end = ready;
        for (const Flow& f : fl)
            end += std::min(f.left, mine);
        return end;
    }

    // End of stage j of transfer k starting at `start` on its links (and for a DRAM
    // transfer its side controllers), booking them; the DRAM itself is grantDram()'s.
    Cycles transfer(size_t k, const Instruction& i, std::uint32_t j, Cycles start, double frac) {
        Cycles end = start;
        routeOf(k);
        const std::span<const int> links(routeLinks.data() + routeAt[k], routeLen[k]);
        const double bytes = double(i.bytes) * frac;
        const bool dram = i.op != Op::Send;
        for (std::uint32_t q = 0; q < routeLen[k]; ++q) {
            const int l = links[q];
            const double onLink = bytes * shareAt(routeAt[k] + q); // x 1.0 is exact
            end = std::max(end, bookLink(l, std::uint32_t(k), start, onLink / linkBwOf[size_t(l)]));
        }
        if (dram) {
            const double occupied = dramOccupancy(i) * frac;
            result.dramBusy += occupied / dramBw;
            const int sides = std::popcount(unsigned(sideMask[k]));
            if (portBw > 0)
                for (int s = 0; s < 4; ++s)
                    if (sideMask[k] >> s & 1u)
                        end = std::max(end, bookSide(size_t(s), start, occupied / sides / portBw));
            if (j == 0) {
                result.dramBytes += double(i.bytes);
                for (int s = 0; s < 4; ++s)
                    if (sideMask[k] >> s & 1u)
                        result.dramSideBytes[size_t(s)] += double(i.bytes) / sides;
            }
        }
        // Whole-instruction bytes, once: per-stage fractions would not sum back exactly.
        // Hop-bytes over mesh links: a port link is the DRAM's interface (Mesh::isPortLink).
        if (j == 0) {
            for (std::uint32_t q = 0; q < routeLen[k]; ++q) {
                const double onLink = double(i.bytes) * shareAt(routeAt[k] + q);
                result.linkBytes[size_t(links[q])] += onLink;
                if (!mesh.isPortLink(links[q])) result.nocHopBytes += onLink;
            }
        }
        return end;
    }

    // Runs the popped stage of engine e's head instruction: computes, SENDs and the
    // acknowledging LOADs end now; DRAM transfers wait for the DRAM (grantDram()).
    void step(Cycles start, size_t e) {
        const size_t k = queue[e][head[e]];
        const Instruction& i = *flat.ins[k];
        const std::uint32_t j = posted[k]++;
        if (j == 0) firstStart[k] = start;
        const bool viaDram = i.op == Op::Store || (i.op == Op::Load && i.src == kDram);
        if (viaDram) {
            // A STORE's bytes leave the tile as it is issued; a LOAD's leave the DRAM once
            // the DRAM serves its stage, so its links are booked then (grantDram()).
            const Cycles linkEnd =
                i.op == Op::Store ? transfer(k, i, j, start, 1.0 / i.stages) : start;
            dramQ.push({needAt[k], j, k, e, start, linkEnd});
            requestDram(start);
            if (isLoad(e)) { // up to maxLoads LOADs in flight
                engineFree[e] = start;
                if (posted[k] == i.stages) ++head[e];
                consider(e);
            } else { // the STORE engine moves one stage at a time
                waitsGrant[e] = 1;
                ++version[e];
            }
            return;
        }
        Cycles end = start;
        if (i.op == Op::Compute || i.op == Op::Program)
            end = start + double(i.cycles) / i.stages;
        else if (i.op == Op::Send)
            end = transfer(k, i, j, start, 1.0 / i.stages);
        engineFree[e] = isLoad(e) ? start : end;
        if (posted[k] == i.stages) ++head[e];
        consider(e);
        endStage(k, e, start, end);
    }

    // Stage done[k] of instruction k (engine e, issued at start) ends at end.
    void endStage(size_t k, size_t e, Cycles start, Cycles end) {
        const Instruction& i = *flat.ins[k];
        stageEnd[stageAt[k] + done[k]] = end;
        finish[k] = std::max(finish[k], end);
        ++done[k];
        // A core's busy time counts as its share of the tile's compute engine.
        if (end > std::max(start, busyUntil[e]))
            result.busy[size_t(i.tile)][size_t(i.engine())] +=
                (end - std::max(start, busyUntil[e])) /
                (e >= coreBase ? double(coresPerTile) : 1.0);
        busyUntil[e] = std::max(busyUntil[e], end);
        result.delay = std::max(result.delay, end);
        if (done[k] == i.stages) {
            ++result.completed;
            if (opt.recordTimeline)
                result.timeline.push_back(
                    {i.id, i.tile, i.engine(), i.op, i.layer, firstStart[k], finish[k]});
        }
        std::vector<size_t> wake;
        wake.swap(waiters[k]);
        for (size_t w : wake)
            consider(w);
    }

    // The DRAM bandwidth in use at now, and when it next drops (dramUse; the entries
    // before now are dropped).
    double dramInUse(Cycles now, Cycles* nextFree = nullptr) {
        const size_t past = dramEntryAt(now);
        keepDramProfile(past);
        dramUse.erase(dramUse.begin(), dramUse.begin() + std::ptrdiff_t(past));
        const double used = dramUse.front().second;
        if (nextFree) {
            *nextFree = std::numeric_limits<Cycles>::infinity();
            for (size_t q = 1; q < dramUse.size(); ++q)
                if (dramUse[q].second < used) {
                    *nextFree = dramUse[q].first;
                    break;
                }
        }
        return used;
    }

    // The first `count` entries of dramUse, which no later booking changes, go to the
    // result's profile (with the timeline; equal neighbours merged).
    void keepDramProfile(size_t count) {
        if (!opt.recordTimeline) return;
        auto& out = result.dramInUse;
        for (size_t q = 0; q < count; ++q) {
            const auto& [from, used] = dramUse[q];
            if (!out.empty() && out.back().first == from) out.pop_back();
            if (out.empty() || out.back().second != used) out.push_back({from, used});
        }
    }

    // Index of the dramUse entry in force at t (t >= the first entry's time).
    size_t dramEntryAt(Cycles t) const {
        size_t i = 0;
        while (i + 1 < dramUse.size() && dramUse[i + 1].first <= t)
            ++i;
        return i;
    }

    // Index of a breakpoint of dramUse at t (split there if needed; t >= the first).
    size_t dramSplit(Cycles t) {
        const size_t i = dramEntryAt(t);
        if (dramUse[i].first == t) return i;
        dramUse.insert(dramUse.begin() + std::ptrdiff_t(i + 1), {t, dramUse[i].second});
        return i + 1;
    }

    // Moves `bytes` through the DRAM from `from`, at most `cap` bytes/cycle, in the
    // bandwidth the transfers booked before leave: returns when the last byte leaves.
    Cycles bookDram(Cycles from, double bytes, double cap) {
        size_t i = dramSplit(from);
        for (;;) {
            const double avail = std::min(cap, dramBw - dramUse[i].second);
            const Cycles segEnd = i + 1 < dramUse.size() ? dramUse[i + 1].first
                                                         : std::numeric_limits<Cycles>::infinity();
            if (avail > dramBw * 1e-9) {
                const Cycles end = dramUse[i].first + bytes / avail;
                if (end <= dramUse[i].first) return end; // nothing (left) to move
                if (end <= segEnd) {
                    if (end < segEnd) dramSplit(end);
                    dramUse[i].second += avail;
                    return end;
                }
                bytes -= avail * (segEnd - dramUse[i].first);
                dramUse[i].second += avail;
            }
            ++i;
        }
    }

    bool dramFull(double used) const { return used >= dramBw * (1 - 1e-9); }

    // The DRAM takes its next request once it has bandwidth to spare and something waits
    // (a stage behind its transfer's earlier one: once that one has left).
    void requestDram(Cycles now) {
        Cycles at = std::numeric_limits<Cycles>::infinity();
        if (!dramQ.empty()) {
            Cycles next = now;
            at = dramFull(dramInUse(now, &next)) ? next : now;
        } else {
            for (const DramReq& r : dramLater)
                at = std::min(at, std::max(now, flowEnd[r.k]));
        }
        if (at >= dramEventAt) return;
        dramEventAt = at;
        pq.push({at, dramEngine, ++dramVersion});
    }

    // The fastest a transfer's bytes can move: its route's slowest link (and its share of
    // a side controller's bandwidth when the template limits them).
    double routeRate(size_t k) {
        routeOf(k);
        double rate = dramBw;
        for (std::uint32_t q = 0; q < routeLen[k]; ++q)
            rate = std::min(rate,
                            linkBwOf[size_t(routeLinks[routeAt[k] + q])] / shareAt(routeAt[k] + q));
        if (portBw > 0) rate = std::min(rate, portBw * std::popcount(unsigned(sideMask[k])));
        return rate;
    }

    // The DRAM serves the waiting stage the program needs first: the one whose first
    // dependent instruction comes first in program order (needAt), then by stage, while it
    // has bandwidth left, one stage of a transfer at a time. The stage takes what the DRAM
    // has left, at most its route's rate, and more as earlier stages end (bookDram()); a
    // LOAD's links and side controllers are booked from now (a STORE's when it was issued,
    // step()), as the DRAM and the NoC move its bytes concurrently; it ends when the
    // slower of the two is done. A transfer keeping the rate it was first served at let a
    // 401 KB LOAD move at the 1 B/cycle a link-bound one left for 400,000 cycles (googlenet,
    // 5x5 mesh: DRAM 25 B/cycle, links 24; docs/isa.md, "Replay"). Booking a LOAD's
    // links while it waited let the loads queued behind it slow the one served (docs/isa.md,
    // "Replay"). Serving requests in arrival order instead let the weight prefetches
    // every tile's LOAD engine issued at once hold a 672-byte input LOAD of the first layer for
    // 35,000 cycles (mobilenet_v2, 6x6 mesh with slow DRAM): the generator emits transfers in the
    // order the schedule needs them (docs/isa.md, "Replay").
    void grantDram(Cycles now) {
        dramEventAt = std::numeric_limits<Cycles>::infinity();
        std::erase_if(dramLater, [&](const DramReq& r) {
            if (flowEnd[r.k] > now) return false;
            dramQ.push(r);
            return true;
        });
        if (dramFull(dramInUse(now))) {
            requestDram(now);
            return;
        }
        while (!dramQ.empty() && flowEnd[dramQ.top().k] > now) {
            dramLater.push_back(dramQ.top());
            dramQ.pop();
        }
        if (dramQ.empty()) {
            requestDram(now);
            return;
        }
        const DramReq r = dramQ.top();
        dramQ.pop();
        const Instruction& i = *flat.ins[r.k];
        const Cycles linkEnd =
            i.op == Op::Load ? transfer(r.k, i, r.j, now, 1.0 / i.stages) : r.linkEnd;
        // Its transfer's earlier stage has left the DRAM (dramLater): the stage takes what
        // the DRAM has left from now, at most what its route carries.
        flowEnd[r.k] = bookDram(now, dramOccupancy(i) / i.stages, routeRate(r.k));
        Cycles end = std::max(linkEnd, flowEnd[r.k]);
        if (i.op == Op::Load) end += latency; // posted writes pay none (docs/hardware-format.md)
        if (waitsGrant[r.e]) {
            waitsGrant[r.e] = 0;
            engineFree[r.e] = end;
            if (posted[r.k] == i.stages) ++head[r.e];
            consider(r.e);
        }
        endStage(r.k, r.e, r.ready, end);
        requestDram(now);
    }

    void run() {
        while (!pq.empty()) {
            auto [start, e, ver] = pq.top();
            pq.pop();
            if (e == dramEngine) {
                if (ver == dramVersion) grantDram(start);
                continue;
            }
            if (ver != version[e]) continue;
            step(start, e);
        }
    }

    void finishResult() {
        keepDramProfile(dramUse.size());
        result.deadlockFree = result.completed == n;
        if (!result.deadlockFree)
            for (size_t e = 0; e < queue.size() && result.stuck.empty(); ++e)
                if (head[e] < queue[e].size()) {
                    const Instruction& i = *flat.ins[queue[e][head[e]]];
                    result.stuck = "instruction " + std::to_string(i.id) + " on tile " +
                                   std::to_string(i.tile) + " (" + toString(i.engine()) +
                                   ") never became ready";
                }
        std::sort(result.timeline.begin(), result.timeline.end(),
                  [](const SimInterval& a, const SimInterval& b) {
                      return a.start < b.start || (a.start == b.start && a.id < b.id);
                  });
    }
};

} // namespace

SimResult simulate(const Program& p, const Hardware& hw, const SimOptions& opt) {
    SimResult result;
    Sim sim(p, hw, opt, result);
    sim.init();
    for (size_t e = 0; e < sim.queue.size(); ++e)
        sim.consider(e);
    sim.initBandwidths();
    sim.run();
    sim.finishResult();
    return result;
}

} // namespace tilescope
