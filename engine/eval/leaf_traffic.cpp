// A leaf's traffic over one period of its invocations, exactly as the instruction generator
// moves it: weights read once per output-channel slice, inputs read from DRAM (cells) or
// received over the NoC (producer pieces), outputs stored; per-link bytes, the sending
// engines' and the crowded links' time, and how it keeps pace with its producer; then scaled
// to a segment invocation (transfers.h).
#include "eval/link_accounting.h"
#include "eval/transfers.h"
#include "hw/mesh.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace tilescope {

namespace {

// A transfer's DRAM bytes split evenly among `sides`.
void chargeSides(std::array<double, 4>& side, std::span<const Dir> sides, double bytes) {
    for (Dir d : sides)
        side[size_t(d)] += bytes / double(sides.size());
}

// DRAM bytes per side of a transfer to (or from) `tiles`: split evenly among the sides
// Mesh::dramSidesOf names, as the simulator charges them.
void chargeSides(const Mesh& mesh, std::array<double, 4>& side, const std::vector<int>& tiles,
                 double bytes) {
    chargeSides(side, mesh.dramSidesOf(tiles), bytes);
}

// The runs of a DRAM transfer of `box` of a tensor of `shape` in every layout, added with
// what they cost beyond the transfer's bytes to `into`, split over `sides` as its bytes are
// (docs/cost-model.md §4b).
void countRuns(const TransferGeometry& geo, const Mesh& mesh, const std::array<int, 4>& shape,
               const Box& box, double bytes, std::span<const Dir> sides,
               LeafTraffic::LayoutRuns& into) {
    for (DramLayout l : kLayouts) {
        const DramRuns r = dramRuns(mesh.dramRuns(), l, shape, box.lo, box.hi, geo.dataBits());
        const double extra = runOverheadBytes(mesh.dramRuns(), r, bytes);
        const size_t li = size_t(l);
        into.runs[li] += double(r.runs);
        into.extra[li] += extra;
        for (Dir d : sides)
            into.side[li][size_t(d)] += extra / double(sides.size());
    }
}

// Weights by output-channel range (-> the tiles that hold it): one DRAM read per range,
// multicast to its tiles, on `tally`, its bytes added to the resident weights' figures of
// `traffic`, or to the activations' when they stream with blocks. Returns the bytes
// delivered (multicast copies counted).
double weightReads(const TransferGeometry& geo, const Mesh& mesh, int layer,
                   const std::map<std::pair<int, int>, std::vector<int>>& byK,
                   std::pair<int, int> channels, LinkTally& tally, bool streamed,
                   LeafTraffic& traffic) {
    thread_local std::vector<int> route;
    double delivered = 0;
    std::array<double, 4>& side = streamed ? traffic.actSide : traffic.weightSide;
    double& dram = streamed ? traffic.actDram : traffic.weightDram;
    for (const auto& [kr, members] : byK) {
        const double bytes = double(geo.bytesOf(
            geo.weightElems(layer, kr.first, kr.second, channels.first, channels.second)));
        route.clear();
        mesh.multicastFromDram(members, route);
        tally.addDram(mesh, route, bytes);
        chargeSides(mesh, side, members, bytes);
        dram += bytes;
        delivered += bytes * double(members.size());
        if (!streamed) {
            traffic.weightStages =
                std::max(traffic.weightStages, geo.stagesOf(std::uint64_t(bytes)));
            LeafTraffic::WeightLoad load;
            load.bytes = bytes;
            load.slowness = mesh.dramSlowness(route);
            load.stages = geo.stagesOf(std::uint64_t(bytes));
            load.sides = int(mesh.dramSidesOf(members).size());
            thread_local std::vector<std::pair<int, double>> shares;
            mesh.dramLinkShares(route, shares);
            load.linkFrom = std::uint32_t(traffic.weightLoadLinks.size());
            for (const auto& [l, share] : shares) {
                traffic.weightLoadLinks.push_back(l);
                traffic.weightLoadShares.push_back(share);
            }
            load.linkTo = std::uint32_t(traffic.weightLoadLinks.size());
            traffic.weightLoads.push_back(load);
        }
        if (mesh.dramRuns().active()) {
            // Weights are laid out offline in the order the program loads them: one run.
            const DramRuns r = oneRun(std::uint64_t(bytes), mesh.dramRuns().burstBytes);
            const double extra = runOverheadBytes(mesh.dramRuns(), r, bytes);
            (streamed ? traffic.streamedRuns : traffic.weightRuns) += double(r.runs);
            (streamed ? traffic.streamedExtra : traffic.weightExtra) += extra;
            chargeSides(mesh, streamed ? traffic.streamedSideExtra : traffic.weightSideExtra,
                        members, extra);
        }
    }
    return delivered;
}

// Resident weights: each tile's output-channel slice, read once per invocation period.
// With input-channel parts (LeafMapping::pc), member by member: each reads its channels'
// share of its output channels' weights.
void weightTraffic(const TransferGeometry& geo, const Mesh& mesh, const LeafPlacement& leaf,
                   LinkTally& wgt, LeafTraffic& traffic) {
    const int b = std::max(1, leaf.batch);
    const LeafMapping& m = *leaf.mapping;
    for (int ic = 0; ic < m.pc; ++ic) {
        std::map<std::pair<int, int>, std::vector<int>> byK;
        for (int t = ic; t < leaf.tileCount; t += m.pc) {
            const Box box = geo.tileBox(leaf.layer, m, t, 0, b);
            if (!box.empty())
                byK[{box.lo[1], box.hi[1]}].push_back(mesh.tileAt(leaf.tileBegin + t));
        }
        traffic.weightDelivered += weightReads(
            geo, mesh, leaf.layer, byK, geo.memberChannels(leaf.layer, m, ic), wgt, false, traffic);
    }
}

// Block blk's weights when they stream with output- or input-channel blocks (LeafMapping::
// streamsWeights): as the block's other DRAM reads (activation traffic: they come and go
// with it). Returns the bytes delivered (none when the leaf's weights do not stream).
double streamedWeights(const TransferGeometry& geo, const Mesh& mesh, const LeafPlacement& leaf,
                       int blk, const std::vector<Box>& boxes, const std::vector<int>& actTiles,
                       LinkTally& act, LeafTraffic& traffic) {
    if (!leaf.mapping->streamsWeights()) return 0.0;
    std::map<std::pair<int, int>, std::vector<int>> byK;
    for (size_t a = 0; a < boxes.size(); ++a)
        byK[{boxes[a].lo[1], boxes[a].hi[1]}].push_back(actTiles[a]);
    return weightReads(geo, mesh, leaf.layer, byK,
                       geo.blockChannels(leaf.layer, *leaf.mapping, blk), act, true, traffic);
}

// Invocations repeat with a period: the consumer's own partition is the same every
// invocation, and a NoC producer's invocations line up the same way again after
// lcm(b, producer batch) samples. One period is costed and scaled.
int periodOf(int b, const std::vector<const LeafPlacement*>& producers) {
    int period = 1;
    for (const LeafPlacement* p : producers)
        if (p) {
            const int pb = std::max(1, p->batch);
            period = std::lcm(period, std::lcm(b, pb) / b);
        }
    return period;
}

// The windows of input k that block blk's output boxes need (into win, replacing it); with
// input-channel parts, each member's (`slots`: each box's partition slot).
void blockWindows(const TransferGeometry& geo, int layer, size_t k, const LeafMapping& mapping,
                  int blk, const std::vector<Box>& boxes, const std::vector<int>& slots,
                  std::vector<Box>& win) {
    win.clear();
    for (size_t a = 0; a < boxes.size(); ++a)
        win.push_back(geo.tileWindow(layer, k, mapping, slots[a], blk, boxes[a]));
}

// An input read from DRAM for samples [s0, s1): each cell once, multicast to the tiles
// whose windows hold it. Returns the bytes delivered (multicast copies counted).
double dramInput(const TransferGeometry& geo, const Mesh& mesh, const InputGeom& geom, int s0,
                 int s1, const std::vector<Box>& win, const std::vector<int>& actTiles,
                 bool blocked, LinkTally& act, LeafTraffic& traffic, LeafTraffic::LayoutRuns& runs,
                 int totalBatch) {
    thread_local std::vector<int> dst, route;
    const std::array<int, 4> shape{std::max(totalBatch, s1), geom.C, geom.H, geom.W};
    const Box ext = dramExtent(geom, s0, s1, win, blocked);
    double delivered = 0;
    thread_local std::vector<DramCell> cells;
    const size_t count = dramCells(ext, win, cells);
    for (size_t i = 0; i < count; ++i) {
        const DramCell& c = cells[i];
        const double bytes = double(geo.bytesOf(c.box.volume()));
        dst.clear();
        for (size_t a : c.to)
            dst.push_back(actTiles[a]);
        route.clear();
        mesh.multicastFromDram(dst, route);
        act.addDram(mesh, route, bytes);
        chargeSides(mesh, traffic.actSide, dst, bytes);
        traffic.actDram += bytes;
        delivered += bytes * double(c.to.size());
        if (mesh.dramRuns().active())
            countRuns(geo, mesh, shape, c.box, bytes, mesh.dramSidesOf(dst), runs);
    }
    return delivered;
}

// A producer invocation's output slices over samples [s0, s1), tile by tile; a blocked
// producer streams, so block blk of it feeds block blk of its consumer in a T cut, and
// blocks blk - 1 to blk + 1 of it (`across`: the stage before in an S cut, on other tiles)
// block blk of its consumer (docs/cost-model.md §2b). blocks: each slice's block.
// With `reach` (the hull of the consumer's windows), the slices outside it, which no window
// meets, are left out.
void producerSlices(const TransferGeometry& geo, const Mesh& mesh, const LeafPlacement& p, int blk,
                    bool across, int s0, int s1, std::vector<SliceRef>& slices,
                    std::vector<int>& blocks, const Box* reach = nullptr) {
    slices.clear();
    blocks.clear();
    const int n = p.mapping->blocks();
    const int lo = across ? std::max(0, blk - 1) : blk,
              hi = across ? std::min(n - 1, blk + 1) : blk;
    for (int j = lo; j <= hi; ++j)
        for (int t = 0; t < p.tileCount; ++t) {
            if (!TransferGeometry::holdsOutput(*p.mapping, t)) continue; // a member's partial sums
            const Box box = p.mapping->blocked() ? geo.blockBox(p.layer, *p.mapping, t, j, s0, s1)
                                                 : geo.tileBox(p.layer, *p.mapping, t, s0, s1);
            if (box.empty() || (reach && !reach->intersects(box))) continue;
            slices.push_back({mesh.tileAt(p.tileBegin + t), box});
            blocks.push_back(j);
        }
}

// How a leaf's first invocation keeps pace with a producer (LeafTraffic::pace), from the
// stage boxes the generator cuts (docs/isa.md, "Dependencies at stage granularity"): each
// consumer tile's compute stages (the first invocation loads the weights), the windows
// they read of the input, each producer slice's stages and a piece's SEND stages (in the
// producer's order, as the generator's emitInput cuts them). A producer tile's STORE/SEND
// engine moves its pieces one after another in that order, so a piece's SEND starts no
// sooner than the one before it on the same tile has ended (docs/cost-model.md §5,
// "Pieces in turn"). From nothing upwards, the slowest piece decides; once it waits for
// all of its producer nothing can be slower.
class PaceProbe {
  public:
    void consumer(const TransferGeometry& geo, int layer, const std::vector<Box>& boxes) {
        m_cStages.resize(boxes.size());
        for (size_t a = 0; a < boxes.size(); ++a)
            splitBox(boxes[a], geo.computeOrder(layer, boxes[a], true), geo.stagesOf(boxes[a]),
                     m_cStages[a]);
    }
    void input(const TransferGeometry& geo, int layer, size_t k, LeafTraffic::Pace& pace) {
        m_pace = &pace;
        pace = {0, 0};
        m_req.resize(m_cStages.size());
        for (size_t a = 0; a < m_cStages.size(); ++a) {
            m_req[a].clear();
            for (const Box& st : m_cStages[a])
                m_req[a].push_back(geo.window(layer, k, st));
        }
    }
    // blocks: each slice's block of a producer streaming from the stage before in an S cut
    // (n blocks), else null (one block, 0): a piece of block m is there once m blocks and its
    // own stages are done, and the consumer's first block ends after the producer's first
    // (docs/cost-model.md §2b, "Streaming between the stages of an S cut").
    void producer(const TransferGeometry& geo, int layer, const std::vector<SliceRef>& slices,
                  bool loadsWeights, const std::vector<int>* blocks, int n) {
        m_block = blocks;
        m_n = blocks ? std::max(1, n) : 1;
        m_pStages.resize(slices.size());
        m_pOrder.resize(slices.size());
        m_sent.assign(slices.size(), 0);
        for (size_t sl = 0; sl < slices.size(); ++sl) {
            m_pOrder[sl] = geo.computeOrder(layer, slices[sl].box, loadsWeights);
            splitBox(slices[sl].box, m_pOrder[sl], geo.stagesOf(slices[sl].box), m_pStages[sl]);
        }
    }
    // Producer compute -> SEND -> consumer compute.
    void piece(const TransferGeometry& geo, size_t sl, const Box& box, std::span<const size_t> to) {
        if (saturated()) return;
        splitBox(box, m_pOrder[sl], geo.stagesOf(box), m_send);
        // In producer stages: when this piece's SEND can start (its first data there and
        // the engine done with the slice's earlier pieces), and when it is done (its last
        // stage follows the producer's, one stage after another).
        const std::uint32_t nP = std::uint32_t(m_pStages[sl].size());
        const std::uint32_t first = lagStage(m_pStages[sl], m_send);
        const std::uint32_t lag1 = std::max(first, m_sent[sl]);
        m_sent[sl] = std::min(nP, std::max(m_sent[sl], first + std::uint32_t(m_send.size()) - 1));
        for (size_t a : to)
            by(sl, a, std::min(nP, lag1 + lagStage(m_send, m_req[a]) - 1));
    }
    // A slice the consumer reads in place.
    void local(size_t a, size_t sl) {
        if (!saturated()) by(sl, a, lagStage(m_pStages[sl], m_req[a]));
    }

  private:
    bool saturated() const { return m_pace->lead >= 1 && m_pace->tail >= 1; }
    void by(size_t sl, size_t a, std::uint32_t lag) {
        const double nP = double(m_pStages[sl].size()), nC = double(m_req[a].size());
        const int m = m_block ? (*m_block)[sl] : 0;
        m_pace->lead = std::max(m_pace->lead, float(std::min(1.0, (m + lag / nP) / m_n)));
        if (m == 0)
            m_pace->tail =
                std::max(m_pace->tail, float(std::clamp(nC - nP + lag, 1.0, nC) / nC / m_n));
    }
    std::vector<std::vector<Box>> m_cStages, m_req, m_pStages;
    std::vector<StageOrder> m_pOrder;
    std::vector<std::uint32_t> m_sent; // per slice: the producer stage its engine is done at
    const std::vector<int>* m_block = nullptr;
    int m_n = 1;
    std::vector<Box> m_send;
    LeafTraffic::Pace* m_pace = nullptr;
};

// A figure per tile of the mesh that only the tiles a pass touches hold (the others are 0):
// reset, added to and read in the touched tiles' time, whatever the mesh's size.
class TileFigure {
  public:
    // Zero again, for a mesh of `tiles`.
    void reset(int tiles) {
        for (int t : m_touched)
            m_value[size_t(t)] = 0.0, m_seen[size_t(t)] = 0;
        m_touched.clear();
        growTo(m_value, size_t(tiles));
        growTo(m_seen, size_t(tiles));
    }
    double& operator[](size_t t) {
        if (!m_seen[t]) m_seen[t] = 1, m_touched.push_back(int(t));
        return m_value[t];
    }
    // The largest figure (every one is at least 0; 0 with none touched).
    double max() const {
        double most = 0.0;
        for (int t : m_touched)
            most = std::max(most, m_value[size_t(t)]);
        return most;
    }
    // The touched tiles' figures (tile, figure), in the order first touched.
    void take(std::vector<std::pair<int, double>>& out) const {
        out.clear();
        for (int t : m_touched)
            out.emplace_back(t, m_value[size_t(t)]);
    }

  private:
    std::vector<double> m_value;
    std::vector<char> m_seen;
    std::vector<int> m_touched;
};

// Marks a set of tiles in a mesh-sized array that is never cleared: a tile is in the set
// when its stamp is the set's, and mark() starts a new set.
class TileSet {
  public:
    void mark(const Mesh& mesh, const LeafPlacement& p) {
        growTo(m_stamp, size_t(mesh.tiles()));
        if (++m_current == 0) { // wrapped: no stale stamp may match
            std::fill(m_stamp.begin(), m_stamp.end(), 0);
            m_current = 1;
        }
        for (int t = 0; t < p.tileCount; ++t)
            m_stamp[size_t(mesh.tileAt(p.tileBegin + t))] = m_current;
    }
    bool has(int tile) const { return m_stamp[size_t(tile)] == m_current; }

  private:
    std::vector<std::uint32_t> m_stamp;
    std::uint32_t m_current = 0;
};

// One invocation's outputs stored to DRAM from each tile (`boxes` on `tiles`): their links,
// DRAM sides and bytes, and each tile's STORE/SEND engine time (x the route's slowness).
void storeOutputs(const TransferGeometry& geo, const Mesh& mesh, const std::vector<Box>& boxes,
                  const std::vector<int>& tiles, LinkTally& act, TileFigure& egress,
                  TileFigure& stored, LeafTraffic& traffic, const std::array<int, 4>& shape) {
    thread_local std::vector<int> route;
    for (size_t a = 0; a < boxes.size(); ++a) {
        const double bytes = double(geo.bytesOf(boxes[a].volume()));
        if (mesh.interleaved()) { // every port's share, every side's
            double slowness = 1.0;
            for (const auto& [l, share] : mesh.storeShares(tiles[a], slowness))
                act.addLink(l, bytes * share);
            chargeSides(traffic.actSide, mesh.dramSides(), bytes);
            if (mesh.dramRuns().active())
                countRuns(geo, mesh, shape, boxes[a], bytes, mesh.dramSides(), traffic.outRuns);
            egress[size_t(tiles[a])] += bytes * slowness;
            stored[size_t(tiles[a])] += bytes * slowness;
        } else {
            route.clear();
            mesh.routeToDram(tiles[a], route);
            act.add(route, bytes);
            const Dir side = mesh.nearestPort(tiles[a]).first;
            traffic.actSide[size_t(side)] += bytes;
            if (mesh.dramRuns().active())
                countRuns(geo, mesh, shape, boxes[a], bytes, std::span<const Dir>(&side, 1),
                          traffic.outRuns);
            egress[size_t(tiles[a])] += bytes * mesh.routeSlowness(route);
            stored[size_t(tiles[a])] += bytes * mesh.routeSlowness(route);
        }
        traffic.actDram += bytes;
        traffic.actDramOut += bytes;
    }
}

// Per input, a zeroed figure per tile for what each tile sends and receives of it.
void perInputTiles(const Mesh& mesh, size_t inputs, std::vector<TileFigure>& sent,
                   std::vector<TileFigure>& recv) {
    if (sent.size() < inputs) sent.resize(inputs);
    if (recv.size() < inputs) recv.resize(inputs);
    for (size_t k = 0; k < inputs; ++k) {
        sent[k].reset(mesh.tiles());
        recv[k].reset(mesh.tiles());
    }
}

// The tiles of the leaf with work in block `blk` of samples [s0, s1), and their output
// boxes (tiles with an empty box left out).
// With input-channel parts every member is among them (it computes its slot's box);
// `slots`: each one's partition slot.
void stepBoxes(const TransferGeometry& geo, const Mesh& mesh, const LeafPlacement& leaf, int blk,
               int s0, int s1, std::vector<int>& tiles, std::vector<Box>& boxes,
               std::vector<int>& slots) {
    tiles.clear();
    boxes.clear();
    slots.clear();
    for (int t = 0; t < leaf.tileCount; ++t) {
        const Box box = geo.blockBox(leaf.layer, *leaf.mapping, t, blk, s0, s1);
        if (box.empty()) continue;
        tiles.push_back(mesh.tileAt(leaf.tileBegin + t));
        boxes.push_back(box);
        slots.push_back(t);
    }
}

// Input-channel parts (LeafMapping::pc): each member after its slot's first sends its
// partial sums (its box at the accumulator width) to the first, the root, over the NoC, as
// a STORE leaves a tile: on the links, the member's egress, the bytes written into the
// root's buffer. Returns those bytes.
double partialSums(const TransferGeometry& geo, const Mesh& mesh, const LeafPlacement& leaf,
                   const std::vector<int>& tiles, const std::vector<Box>& boxes,
                   const std::vector<int>& slots, LinkTally& act, TileFigure& egress,
                   std::vector<int>& route, LeafTraffic& traffic) {
    const LeafMapping& m = *leaf.mapping;
    double sent = 0;
    for (size_t a = 0; a < tiles.size(); ++a) {
        const int ic = TransferGeometry::memberOf(m, slots[a]);
        if (ic == 0) continue;
        const double bytes = double(geo.psumBytesOf(boxes[a]));
        const int root = mesh.tileAt(leaf.tileBegin + slots[a] - ic);
        route.clear();
        mesh.route(tiles[a], root, route);
        act.add(route, bytes);
        egress[size_t(tiles[a])] += bytes * mesh.routeSlowness(route);
        traffic.partialSumBytes += bytes;
        sent += bytes;
    }
    return sent;
}

// Of the tiles and boxes stepBoxes gave (`slots`: their partition slots), only the slots'
// roots (TransferGeometry::holdsOutput): what stores and what consumers read.
void keepRoots(const LeafMapping& m, const std::vector<int>& slots, std::vector<int>& tiles,
               std::vector<Box>& boxes) {
    size_t w = 0;
    for (size_t a = 0; a < tiles.size(); ++a)
        if (TransferGeometry::holdsOutput(m, slots[a])) tiles[w] = tiles[a], boxes[w++] = boxes[a];
    tiles.resize(w), boxes.resize(w);
}

// Per-thread scratch of a pass over a leaf's period (it only grows; the tallies are empty
// between uses).
struct PassScratch {
    LinkTally act, wgt, noc, nocSame;
    TileSet inLeaf, inProducer; // which tiles are this leaf's and the producer's
    std::vector<int> actTiles, dst, slots;
    std::vector<Box> boxes, win;
    std::vector<int> route; // input-channel parts: a member's route to its root
    std::vector<std::vector<Box>> wants;
    std::vector<SliceRef> slices;
    std::vector<int> sliceBlocks; // each slice's block (producerSlices)
    TileFigure egress, stored;
    std::vector<TileFigure> sent; // per input, per producer tile
    std::vector<TileFigure> recv; // per input, per consumer tile
    SendLog sends;
    PaceProbe probe;
    LeafTraffic::LayoutRuns noRuns;
};
thread_local PassScratch tPass;

// One pass over a leaf's period (leafTrafficPeriod): every transfer, or (paceOnly) only
// what the pace of the inputs paceInputs names needs, the same steps in the same order.
class PeriodPass {
  public:
    PeriodPass(const TransferGeometry& geo, const Mesh& mesh, const LeafPlacement& leaf,
               const std::vector<const LeafPlacement*>& producers, int totalBatch,
               LeafTraffic& traffic)
        : geo(geo), mesh(mesh), leaf(leaf), producers(producers), totalBatch(totalBatch),
          traffic(traffic), ly(geo.network().layers[size_t(leaf.layer)]), mapping(*leaf.mapping),
          b(std::max(1, leaf.batch)) {}
    void run(bool writesDram, std::uint32_t paceInputs, bool paceOnly);
    // After a full run: the figures from the tallies (the scratch's egress stays).
    void reduce();

  private:
    void start();
    void nocInput(size_t k, int inv, int blk, int s0, int s1, std::uint32_t paceInputs,
                  bool paceOnly);

    const TransferGeometry& geo;
    const Mesh& mesh;
    const LeafPlacement& leaf;
    const std::vector<const LeafPlacement*>& producers;
    const int totalBatch;
    LeafTraffic& traffic;
    const Layer& ly;
    const LeafMapping& mapping;
    const int b;
    double actDelivered = 0;
};

// Sizes and zeroes the scratch and the traffic's per-input figures; the resident weights.
void PeriodPass::start() {
    PassScratch& s = tPass;
    s.act.ensure(mesh.linkCount());
    s.wgt.ensure(mesh.linkCount());
    s.noc.ensure(mesh.linkCount());
    s.nocSame.ensure(mesh.linkCount());
    // Weights kept on chip never move (docs/cost-model.md §6, "Kept on chip").
    if (ly.weightBytes > 0 && !mapping.streamsWeights() && !ly.weightsResident)
        weightTraffic(geo, mesh, leaf, s.wgt, traffic);
    traffic.invocations = periodOf(b, producers);
    traffic.nocInByInput.assign(ly.inputs.size(), 0.0);
    traffic.nocOutOfProducer.assign(ly.inputs.size(), 0.0);
    traffic.nocInsideGroup.assign(ly.inputs.size(), 0.0);
    s.inLeaf.mark(mesh, leaf);
    s.egress.reset(mesh.tiles());
    s.stored.reset(mesh.tiles());
    perInputTiles(mesh, ly.inputs.size(), s.sent, s.recv);
    s.sends.clear();
    actDelivered = 0;
    traffic.pace.assign(ly.inputs.size(), {});
    if (mesh.dramRuns().active()) traffic.inRuns.assign(ly.inputs.size(), {});
}

void PeriodPass::run(bool writesDram, std::uint32_t paceInputs, bool paceOnly) {
    PassScratch& s = tPass;
    if (!paceOnly) start();
    const int period = periodOf(b, producers);
    const std::array<int, 4> outShape{std::max(totalBatch, period * b), ly.outC, ly.outH, ly.outW};
    // A blocked leaf's tiles work through their blocks in turn, each block's inputs read and
    // output stored on their own (docs/cost-model.md §2b). Only the first invocation's first
    // block paces.
    const int steps = paceOnly ? 1 : period * mapping.blocks();
    for (int step = 0; step < steps; ++step) {
        const int inv = step / mapping.blocks(), blk = step % mapping.blocks();
        const int s0 = inv * b, s1 = s0 + b;
        stepBoxes(geo, mesh, leaf, blk, s0, s1, s.actTiles, s.boxes, s.slots);
        if (step == 0 && paceInputs) s.probe.consumer(geo, leaf.layer, s.boxes);
        if (!paceOnly)
            actDelivered +=
                streamedWeights(geo, mesh, leaf, blk, s.boxes, s.actTiles, s.act, traffic);
        for (size_t k = 0; k < ly.inputs.size(); ++k) {
            if (ly.inputs[k].resident) continue; // kept in the tiles' buffers: nothing moves
            const InputGeom& geom = geo.input(leaf.layer, k);
            blockWindows(geo, leaf.layer, k, mapping, blk, s.boxes, s.slots, s.win);
            const LeafPlacement* p = k < producers.size() ? producers[k] : nullptr;
            if (p) {
                nocInput(k, inv, blk, s0, s1, paceInputs, paceOnly);
            } else if (!paceOnly && mapping.readsInput(k, blk)) {
                actDelivered += dramInput(
                    geo, mesh, geom, s0, s1, s.win, s.actTiles, mapping.blocked(), s.act, traffic,
                    traffic.inRuns.empty() ? s.noRuns : traffic.inRuns[k], totalBatch);
            }
        }
        if (mapping.splitsChannels() && !paceOnly) {
            actDelivered += partialSums(geo, mesh, leaf, s.actTiles, s.boxes, s.slots, s.act,
                                        s.egress, s.route, traffic);
            keepRoots(mapping, s.slots, s.actTiles, s.boxes);
        }
        if (!paceOnly && writesDram && mapping.storesAfter(blk))
            storeOutputs(geo, mesh, s.boxes, s.actTiles, s.act, s.egress, s.stored, traffic,
                         outShape);
    }
}

// Input k of the step's tiles received over the NoC from its producer's invocations.
void PeriodPass::nocInput(size_t k, int inv, int blk, int s0, int s1, std::uint32_t paceInputs,
                          bool paceOnly) {
    PassScratch& s = tPass;
    const LeafPlacement& p = *producers[k];
    const InputGeom& geom = geo.input(leaf.layer, k);
    // The producer invocations whose samples overlap [s0, s1).
    const int pb = std::max(1, p.batch);
    // Paced when the first invocation reads one producer invocation in its own
    // coordinates; from nothing upwards, the slowest piece decides.
    const bool pacing =
        inv == 0 && blk == 0 && k < 32 && (paceInputs >> k & 1u) && geom.sameAsProducer && pb >= b;
    // A blocked producer on other tiles sends over the NoC only to the next stage of its S
    // cut, streaming (Analyser::streamStages()); in a T cut its tiles are the leaf's.
    const bool across = p.mapping->blocked() && p.tileBegin != leaf.tileBegin;
    if (paceOnly && !pacing) return;
    s.wants.resize(s.boxes.size()); // keeps each consumer's capacity
    for (size_t a = 0; a < s.boxes.size(); ++a) {
        s.wants[a].clear();
        if (geom.sameAsProducer)
            s.wants[a].push_back(s.win[a]);
        else
            geo.producerWants(leaf.layer, k, s.boxes[a], s.wants[a]);
    }
    if (!paceOnly) s.inProducer.mark(mesh, p);
    if (pacing) s.probe.input(geo, leaf.layer, k, traffic.pace[k]);
    const auto onLocal = [&](size_t a, size_t sl) {
        if (pacing) s.probe.local(a, sl);
    };
    // Across S-cut stages, the producer's three blocks' slices the windows meet.
    Box reach;
    for (size_t a = 0; across && a < s.win.size(); ++a)
        reach = a == 0 ? s.win[a] : reach.hull(s.win[a]);
    for (int q0 = (s0 / pb) * pb; q0 < s1; q0 += pb) {
        producerSlices(geo, mesh, p, blk, across, q0, q0 + pb, s.slices, s.sliceBlocks,
                       across ? &reach : nullptr);
        if (pacing)
            s.probe.producer(geo, p.layer, s.slices, q0 == 0, across ? &s.sliceBlocks : nullptr,
                             p.mapping->blocks());
        if (paceOnly) {
            forEachNocPiece(
                s.slices, s.actTiles, s.wants,
                [&](size_t sl, const Box& box, std::span<const size_t> to) {
                    s.probe.piece(geo, sl, box, to);
                },
                onLocal);
            continue;
        }
        forEachNocPiece(
            s.slices, s.actTiles, s.wants,
            [&](size_t sl, const Box& box, std::span<const size_t> to) {
                if (pacing) s.probe.piece(geo, sl, box, to);
                const double bytes = double(geo.bytesOf(box.volume()));
                s.dst.clear();
                bool leaves = false;
                for (size_t a : to) {
                    s.recv[k][size_t(s.actTiles[a])] += bytes;
                    s.dst.push_back(s.actTiles[a]);
                    leaves |= !s.inProducer.has(s.actTiles[a]);
                }
                const int from = s.slices[sl].tile;
                // Routed into the send log; `act` takes the NoC tallies from it at the end.
                mesh.multicastRoute(from, s.dst, s.sends.open(from, bytes, k));
                s.sends.close(geom.sameAsProducer ? 1 : 0); // its links' bytes: noc, nocSame
                const std::span<const int> route = s.sends.lastRoute();
                if (s.inLeaf.has(from))
                    traffic.nocInsideGroup[k] += bytes;
                else
                    traffic.nocInByInput[k] += bytes;
                if (leaves) traffic.nocOutOfProducer[k] += bytes;
                const double slow = bytes * mesh.routeSlowness(route);
                s.egress[size_t(from)] += slow;
                s.sent[k][size_t(from)] += slow;
                actDelivered += bytes * double(to.size());
            },
            onLocal);
    }
}

void PeriodPass::reduce() {
    PassScratch& s = tPass;
    traffic.sentByInput.assign(ly.inputs.size(), 0.0);
    traffic.receivedByInput.assign(ly.inputs.size(), 0.0);
    for (size_t k = 0; k < ly.inputs.size(); ++k) {
        traffic.sentByInput[k] = s.sent[k].max();
        traffic.receivedByInput[k] = s.recv[k].max();
    }
    traffic.storedMax = s.stored.max();
    traffic.nocPaced = s.sends.paced(mesh);
    traffic.nocPacedPiece = s.sends.pieceTime();
    traffic.sendStages = geo.stagesOf(std::uint64_t(s.sends.largestPiece()));
    traffic.pieces = (long long)s.sends.pieceCount();
    traffic.pieceLinks = (long long)s.sends.entryCount();
    traffic.pacedByInput.assign(ly.inputs.size(), 0.0);
    if (traffic.nocPaced > 0) s.sends.pacedByInput(mesh, traffic.pacedByInput);
    s.sends.takeLinkBytes(0, s.noc);
    s.sends.takeLinkBytes(1, s.nocSame);
    s.act.addFrom(s.noc), s.act.addFrom(s.nocSame); // the pieces' bytes
    traffic.actMaxLink = s.act.take(mesh, traffic.actLinks);
    traffic.delivered = traffic.weightDelivered + actDelivered;
    traffic.maxEgress = s.egress.max();
    traffic.weightMaxLink = s.wgt.take(mesh, traffic.weightLinks);
    traffic.nocInMaxLink = s.noc.takeMax(mesh);
    traffic.nocSameMaxLink = s.nocSame.takeMax(mesh);
}

// Merges sorted (link, bytes) pairs into `into` (sorted), adding the bytes of a link in both:
// whole numbers, so each sum is the one a single tally of both would hold.
void mergeLinks(std::vector<std::pair<int, double>>& into,
                const std::vector<std::pair<int, double>>& add) {
    thread_local std::vector<std::pair<int, double>> merged;
    merged.clear();
    size_t i = 0, j = 0;
    while (i < into.size() || j < add.size()) {
        if (j == add.size() || (i < into.size() && into[i].first < add[j].first))
            merged.push_back(into[i++]);
        else if (i == into.size() || add[j].first < into[i].first)
            merged.push_back(add[j++]);
        else
            merged.emplace_back(into[i].first, into[i].second + add[j].second), ++i, ++j;
    }
    into.swap(merged);
}

} // namespace

LeafTraffic leafTrafficPeriod(const TransferGeometry& geo, const Mesh& mesh,
                              const LeafPlacement& leaf,
                              const std::vector<const LeafPlacement*>& producers, bool writesDram,
                              std::uint32_t paceInputs, int totalBatch) {
    LeafTraffic traffic;
    PeriodPass pass(geo, mesh, leaf, producers, totalBatch, traffic);
    pass.run(writesDram, paceInputs, false);
    pass.reduce();
    return traffic;
}

bool storesComeLast(const LeafPlacement& leaf, const std::vector<const LeafPlacement*>& producers) {
    return periodOf(std::max(1, leaf.batch), producers) * leaf.mapping->blocks() == 1;
}

LeafTrafficBase leafTrafficBase(const TransferGeometry& geo, const Mesh& mesh,
                                const LeafPlacement& leaf,
                                const std::vector<const LeafPlacement*>& producers,
                                std::uint32_t paceInputs, int totalBatch) {
    LeafTrafficBase base;
    PeriodPass pass(geo, mesh, leaf, producers, totalBatch, base.traffic);
    pass.run(false, paceInputs, false);
    pass.reduce();
    base.paced = paceInputs;
    tPass.egress.take(base.egress);
    return base;
}

LeafTraffic finishPeriod(const TransferGeometry& geo, const Mesh& mesh, const LeafPlacement& leaf,
                         const std::vector<const LeafPlacement*>& producers, LeafTrafficBase& base,
                         bool writesDram, std::uint32_t paceInputs, int totalBatch) {
    PassScratch& s = tPass;
    if (const std::uint32_t missing = paceInputs & ~base.paced) {
        // Each input's pace is its own: only the inputs not yet paced are probed.
        LeafTraffic probed;
        probed.pace.assign(base.traffic.pace.size(), {});
        PeriodPass(geo, mesh, leaf, producers, totalBatch, probed).run(false, missing, true);
        for (size_t k = 0; k < probed.pace.size() && k < 32; ++k)
            if (missing >> k & 1u) base.traffic.pace[k] = probed.pace[k];
        base.paced |= missing;
    }
    LeafTraffic traffic = base.traffic;
    for (size_t k = 0; k < traffic.pace.size(); ++k)
        if (k >= 32 || !(paceInputs >> k & 1u)) traffic.pace[k] = {};
    const LeafMapping& mapping = *leaf.mapping;
    if (!writesDram || !mapping.storesAfter(0)) return traffic;
    // One step (storesComeLast): its stores were the period's last transfers, so they add
    // to the figures in the order a pass with them would have added them.
    const Layer& ly = geo.network().layers[size_t(leaf.layer)];
    const int b = std::max(1, leaf.batch);
    stepBoxes(geo, mesh, leaf, 0, 0, b, s.actTiles, s.boxes, s.slots);
    // The roots store (their members' partial sums are in the base).
    if (mapping.splitsChannels()) keepRoots(mapping, s.slots, s.actTiles, s.boxes);
    s.act.ensure(mesh.linkCount());
    s.egress.reset(mesh.tiles());
    for (const auto& [t, e] : base.egress)
        s.egress[size_t(t)] = e;
    s.stored.reset(mesh.tiles());
    const std::array<int, 4> outShape{std::max(totalBatch, b), ly.outC, ly.outH, ly.outW};
    storeOutputs(geo, mesh, s.boxes, s.actTiles, s.act, s.egress, s.stored, traffic, outShape);
    thread_local std::vector<std::pair<int, double>> storeLinks;
    storeLinks.clear();
    s.act.take(mesh, storeLinks);
    mergeLinks(traffic.actLinks, storeLinks);
    traffic.actMaxLink = 0;
    for (const auto& [l, bytes] : traffic.actLinks)
        traffic.actMaxLink = std::max(traffic.actMaxLink, bytes * mesh.linkSlowness(l));
    traffic.storedMax = s.stored.max();
    traffic.maxEgress = s.egress.max();
    return traffic;
}

LeafTraffic scaleTraffic(const Mesh& mesh, const LeafTraffic& period, int invocations) {
    LeafTraffic scaled = period;
    const double scale = double(invocations) / std::max(1, period.invocations);
    scaled.invocations = invocations;
    for (auto& [link, bytes] : scaled.actLinks)
        bytes *= scale;
    scaled.actMaxLink *= scale;
    scaled.nocInMaxLink *= scale;
    scaled.nocSameMaxLink *= scale;
    scaled.maxEgress *= scale;
    scaled.storedMax *= scale;
    for (auto* v : {&scaled.sentByInput, &scaled.pacedByInput, &scaled.receivedByInput})
        for (double& b : *v)
            b *= scale;
    scaled.nocPaced *= scale;
    for (double& b : scaled.actSide)
        b *= scale;
    scaled.actDram *= scale;
    scaled.actDramOut *= scale;
    scaled.partialSumBytes *= scale;
    auto scaleRuns = [scale](LeafTraffic::LayoutRuns& r) {
        for (size_t l = 0; l < r.runs.size(); ++l) {
            r.runs[l] *= scale;
            r.extra[l] *= scale;
            for (double& b : r.side[l])
                b *= scale;
        }
    };
    for (auto& r : scaled.inRuns)
        scaleRuns(r);
    scaleRuns(scaled.outRuns);
    scaled.streamedRuns *= scale;
    scaled.streamedExtra *= scale;
    for (double& b : scaled.streamedSideExtra)
        b *= scale;
    for (auto* v : {&scaled.nocInByInput, &scaled.nocOutOfProducer, &scaled.nocInsideGroup})
        for (double& b : *v)
            b *= scale;
    scaled.delivered = period.weightDelivered + (period.delivered - period.weightDelivered) * scale;
    // Both parts together, for a leaf alone in its segment (links are sorted in each).
    scaled.maxLink = 0;
    scaled.actHop = scaled.weightHop = scaled.actInterHop = scaled.weightInterHop = 0;
    size_t j = 0;
    auto weightOnly = [&](size_t i) {
        const auto& [l, b] = scaled.weightLinks[i];
        scaled.maxLink = std::max(scaled.maxLink, b * mesh.linkSlowness(l));
    };
    // Hop-bytes over mesh links: a port link is the DRAM's interface (Mesh::isPortLink).
    for (const auto& [link, bytes] : scaled.actLinks) {
        if (!mesh.isPortLink(link)) scaled.actHop += bytes;
        if (mesh.crossesChiplet(link)) scaled.actInterHop += bytes;
        while (j < scaled.weightLinks.size() && scaled.weightLinks[j].first < link)
            weightOnly(j++);
        const double w = j < scaled.weightLinks.size() && scaled.weightLinks[j].first == link
                             ? scaled.weightLinks[j++].second
                             : 0.0;
        scaled.maxLink = std::max(scaled.maxLink, (bytes + w) * mesh.linkSlowness(link));
    }
    for (; j < scaled.weightLinks.size(); ++j)
        weightOnly(j);
    for (const auto& [link, bytes] : scaled.weightLinks) {
        if (!mesh.isPortLink(link)) scaled.weightHop += bytes;
        if (mesh.crossesChiplet(link)) scaled.weightInterHop += bytes;
    }
    return scaled;
}

} // namespace tilescope
