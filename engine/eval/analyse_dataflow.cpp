// The analyser's data-flow and buffer phases: which feature maps go through DRAM and
// what each cut holds for a later consumer, compute-in-memory weights kept programmed,
// each leaf's mapping and the buffer use per tile, and the overflow check.
#include "eval/analyser.h"
#include "util/units.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace tilescope {

// Which leaves write their output to DRAM: network outputs and any producer with a
// consumer that reads it through DRAM.
bool Analyser::viaDram(int prod, int cons) {
    const int pp = layerPos[size_t(prod)];
    int id = leafNode[size_t(cons)];
    int child = id;
    id = tree.node(id).parent;
    while (!(work[size_t(id)].lo <= pp && pp < work[size_t(id)].hi)) {
        child = id;
        id = tree.node(id).parent;
    }
    const RANode& lca = tree.node(id);
    consumerChild = child; // the LCA's child holding the consumer
    lcaIsT = lca.type == NodeType::T;
    if (id == tree.root && lcaIsT) return true; // different segments
    const int pi = childContaining(lca, pp);
    if (lcaIsT) return childContaining(lca, work[size_t(child)].lo) != pi + 1; // not consumed next
    // An S cut: through DRAM when the consumer waits more than one stage.
    return work[size_t(child)].stage - work[size_t(lca.children[size_t(pi)])].stage > 1;
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
    return work[size_t(leaf)].leaf.mapping->ofmapPerTile;
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

// Whether a layer's leaf works through its tiles' slices in blocks (mapping/mapper.h).
bool Analyser::blocked(int layer) {
    return work[size_t(leafNode[size_t(layer)])].leaf.mapping->blocked();
}

// Every leaf's mapping: the mapper's for its layer, tiles and batch, or the alternative
// partition the leaf names (RANode::partition; streamChains() may replace some).
void Analyser::mapLeaves() {
    for (int id : pre) {
        const RANode& nd = tree.node(id);
        if (nd.type == NodeType::Leaf) mapLeaf(id);
    }
}

// One leaf's mapping (mapLeaves()).
void Analyser::mapLeaf(int id) {
    const RANode& nd = tree.node(id);
    LeafWork& leaf = work[size_t(id)].leaf;
    const int tiles = work[size_t(id)].tileCount;
    const LeafMapping* named = ctx.mapper.namedAlternative(nd.layer, tiles, nd.batch, nd.partition);
    leaf.mapping = named ? named : &ctx.mapper.map(nd.layer, tiles, nd.batch);
    leaf.named = named != nullptr;
}

// Leaf b reads leaf a's output as it was written (input k), a and b next to each other in
// a T cut with the same batch: the input index, else -1.
int Analyser::chainLink(int a, int b) const {
    const RANode& na = tree.node(a);
    const RANode& nb = tree.node(b);
    if (na.type != NodeType::Leaf || nb.type != NodeType::Leaf || na.batch != nb.batch) return -1;
    const auto& ins = net.layers[size_t(nb.layer)].inputs;
    for (size_t k = 0; k < ins.size(); ++k)
        if (ins[k].producer == na.layer && ctx.geo.input(nb.layer, k).sameAsProducer) return int(k);
    return -1;
}

// Whether every block j of consumer `cons` finds what it reads of input k in the
// producer's blocks j (the band its tiles' blocks j cover), so blocks can stream.
bool Analyser::streams(int prod, const LeafMapping& mp, int cons, const LeafMapping& mc, size_t k,
                       int batch) const {
    // Input-channel blocks store only after their last block: nothing to stream from them.
    // Into them only in the flash order, where block j of AV reads the Softmax's block j
    // (the same query block and key block).
    if (mp.blocks() != mc.blocks() || mp.reduces() || (mc.reduces() && !mc.flash)) return false;
    const int tiles = mp.pk * mp.pb * mp.ph * mp.pw;
    for (int j = 0; j < mp.blocks(); ++j) {
        Box band;
        bool any = false;
        for (int t = 0; t < tiles; ++t) {
            const Box b = ctx.geo.blockBox(prod, mp, t, j, 0, batch);
            if (b.empty()) continue;
            band = any ? band.hull(b) : b;
            any = true;
        }
        for (int t = 0; t < tiles; ++t) {
            const Box o = ctx.geo.blockBox(cons, mc, t, j, 0, batch);
            if (o.empty()) continue;
            if (!any || !band.contains(ctx.geo.blockWindow(cons, k, mc, j, o))) return false;
        }
    }
    return true;
}

// ---- Streaming chains (docs/cost-model.md §2b): consecutive leaves of a T cut, each
// reading the one before's output, at least one of them blocked, take one tile partition
// and one row blocking (attention's QK^T -> Softmax -> AV: query x key blocks, the flash
// order; Mapper::chainMapping) when every block of each finds its input in
// the block before it: their blocks run in turn, block j of each in order, and that input
// stays on chip. Otherwise a blocked leaf reads and stores through DRAM.
void Analyser::streamChains() {
    analysis.streamInput.assign(size_t(layerCount), -1);
    thread_local std::vector<int> layers, links; // scratch, kept across evaluations
    for (int id : pre) {
        const RANode& nd = tree.node(id);
        if (nd.type != NodeType::T || id == tree.root) continue;
        const auto& ch = nd.children;
        for (size_t i = 0; i < ch.size();) {
            size_t j = i;
            links.clear();
            for (int k = 0; j + 1 < ch.size() && (k = chainLink(ch[j], ch[j + 1])) >= 0; ++j)
                links.push_back(k);
            layers.clear();
            for (size_t m = i; m <= j; ++m)
                layers.push_back(tree.node(ch[m]).layer);
            // Attention's QK^T -> Softmax -> AV is a chain of its own (the flash order may
            // cut it into key blocks, whose AV stores only after the last): the members
            // before and after it form their own chains.
            size_t flashAt = layers.size();
            for (size_t m = 0; m + 2 < layers.size() && flashAt == layers.size(); ++m)
                if (ctx.mapper.flashTriple(layers[m], layers[m + 1], layers[m + 2])) flashAt = m;
            if (flashAt == layers.size()) {
                streamChain(ch, i, i, j, links, false);
            } else {
                if (flashAt > 1) streamChain(ch, i, i, i + flashAt - 1, links, false);
                streamChain(ch, i, i + flashAt, i + flashAt + 2, links, true);
                if (i + flashAt + 4 <= j) streamChain(ch, i, i + flashAt + 3, j, links, false);
            }
            i = j + 1;
        }
    }
}

// Children [first, last] of a T cut, of a run of linked children from `run` (links[m]: the
// input child run + m + 1 reads of the one before), as one chain when one of them is
// blocked (or, for attention's three, when one of them does not fit unblocked).
void Analyser::streamChain(const std::vector<int>& ch, size_t run, size_t first, size_t last,
                           const std::vector<int>& links, bool attention) {
    if (last <= first) return;
    bool need = false;
    for (size_t m = first; m <= last; ++m) {
        const LeafMapping& lm = *work[size_t(ch[m])].leaf.mapping;
        need |= lm.blocked() || (attention && lm.bufferPerTile() > hw.bufferBytes);
    }
    if (!need) return;
    std::vector<int> layers;
    for (size_t m = first; m <= last; ++m)
        layers.push_back(tree.node(ch[m]).layer);
    const int tiles = work[size_t(ch[first])].tileCount, batch = tree.node(ch[first]).batch;
    const std::vector<LeafMapping>& ms = ctx.mapper.chainMapping(layers, tiles, batch);
    // The links follow from the layers, as the mapping does: one verdict per mapping.
    const auto [known, fresh] = ctx.chainStreams.try_emplace(&ms, !ms.empty());
    bool& ok = known->second;
    for (size_t m = 0; fresh && ok && m + 1 < layers.size(); ++m)
        ok = streams(layers[m], ms[m], layers[m + 1], ms[m + 1], size_t(links[first - run + m]),
                     batch);
    for (size_t m = 0; ok && m < layers.size(); ++m) {
        work[size_t(ch[first + m])].leaf.mapping = &ms[m];
        work[size_t(ch[first + m])].leaf.named = false;
        if (m > 0) analysis.streamInput[size_t(layers[m])] = links[first - run + m - 1];
    }
}

// ---- Streaming between the stages of an S cut (docs/cost-model.md §2b): two consecutive
// leaf children of an S cut, the second reading the first's output as it was written (same
// batch), one of them blocked, take row blockings with as many blocks each
// (Mapper::stageMapping) when block j of the consumer reads only the producer's blocks j - 1
// to j + 1: each block's output goes to the consumer's tiles over the NoC as it is made,
// not through DRAM. A stage that already streams from the one before it keeps its blocks.
void Analyser::streamStages() {
    analysis.streamAcross.assign(size_t(layerCount), 0);
    for (int id : pre) {
        const RANode& nd = tree.node(id);
        if (nd.type != NodeType::S) continue;
        const auto& ch = nd.children;
        for (size_t i = 0; i + 1 < ch.size(); ++i) {
            const int k = chainLink(ch[i], ch[i + 1]);
            if (k < 0) continue;
            NodeWork& pw = work[size_t(ch[i])];
            NodeWork& cw = work[size_t(ch[i + 1])];
            const int prod = tree.node(ch[i]).layer, cons = tree.node(ch[i + 1]).layer;
            if ((!pw.leaf.mapping->blocked() && !cw.leaf.mapping->blocked()) ||
                analysis.streamAcross[size_t(prod)] != 0)
                continue;
            const int batch = tree.node(ch[i]).batch;
            const std::vector<LeafMapping>& ms = ctx.mapper.stageMapping(
                prod, pw.tileCount, cons, cw.tileCount, batch,
                [&](const LeafMapping& mp, const LeafMapping& mc) {
                    return streamsAcross(prod, mp, cons, mc, size_t(k), batch);
                });
            if (ms.empty()) continue;
            pw.leaf.mapping = &ms[0];
            cw.leaf.mapping = &ms[1];
            pw.leaf.named = cw.leaf.named = false;
            analysis.streamInput[size_t(cons)] = k;
            analysis.streamAcross[size_t(cons)] = 1;
            analysis.streamAcross[size_t(prod)] = 2;
        }
    }
}

// The stages streamStages() linked go through DRAM again on the mappings mapLeaves() gave
// them; false when none streamed. Clears the overflow placeData() reported.
bool Analyser::dropStageStreams() {
    bool any = false;
    for (int id : pre) {
        const RANode& nd = tree.node(id);
        if (nd.type != NodeType::Leaf) continue;
        char& across = analysis.streamAcross[size_t(nd.layer)];
        if (across == 0) continue;
        if (across == 1) analysis.streamInput[size_t(nd.layer)] = -1;
        across = 0;
        any = true;
        mapLeaf(id);
    }
    if (any) ev.invalidNode = -1, ev.reason.clear();
    return any;
}

// Which feature maps go through DRAM, what stays on chip, and each node's buffer use: false
// (the tree invalid, with the reason) when a tile's buffer overflows.
bool Analyser::placeData() {
    dataFlow();
    cimWeights();
    if (!keptOnChip()) return false;
    leafBuffers();
    return checkBuffers();
}

// Whether block j of consumer `cons` on its tiles finds every element of its window of input
// k in the producer's blocks j - 1 to j + 1 on theirs, for every j: the producer's blocks
// partition its output, so the window is covered when the volumes of its intersections
// with those blocks add up to its own. A block's boxes over the tiles fill one band (their
// hull, when their volumes add up to its own): then the band stands for them.
bool Analyser::streamsAcross(int prod, const LeafMapping& mp, int cons, const LeafMapping& mc,
                             size_t k, int batch) const {
    if (mp.blocks() != mc.blocks() || mp.reduces() || mc.reduces()) return false;
    const int n = mp.blocks();
    const int tp = mp.pk * mp.pb * mp.ph * mp.pw, tc = mc.pk * mc.pb * mc.ph * mc.pw;
    std::vector<Box> made;  // per block: its band, or its boxes tile by tile
    std::vector<size_t> at; // per block: its first box in `made`
    for (int j = 0; j < n; ++j) {
        at.push_back(made.size());
        Box band;
        long long volume = 0;
        bool any = false;
        for (int t = 0; t < tp; ++t) {
            const Box b = ctx.geo.blockBox(prod, mp, t, j, 0, batch);
            if (b.empty()) continue;
            made.push_back(b);
            volume += b.volume();
            band = any ? band.hull(b) : b;
            any = true;
        }
        if (any && band.volume() == volume) {
            made.resize(at.back());
            made.push_back(band);
        }
    }
    at.push_back(made.size());
    for (int j = 0; j < n; ++j)
        for (int t = 0; t < tc; ++t) {
            const Box o = ctx.geo.blockBox(cons, mc, t, j, 0, batch);
            if (o.empty()) continue;
            const Box w = ctx.geo.blockWindow(cons, k, mc, j, o);
            long long covered = 0;
            const size_t lo = at[size_t(std::max(0, j - 1))], hi = at[size_t(std::min(n, j + 2))];
            for (size_t q = lo; q < hi; ++q)
                covered += w.intersect(made[q]).volume();
            if (covered != w.volume()) return false;
        }
    return true;
}

// ---- Data flow (docs/cost-model.md §3): which feature maps go through DRAM.
void Analyser::dataFlow() {
    const double db = hw.dataBits / 8.0;
    hold.assign(static_cast<size_t>(nodeCount), 0.0);
    keptOut.assign(static_cast<size_t>(nodeCount), 0.0);
    sharedProducers.resize(static_cast<size_t>(nodeCount)); // cleared, capacity kept
    for (auto& sp : sharedProducers)
        sp.clear();
    held.clear();
    analysis.writesDram.assign(size_t(layerCount), 0);
    analysis.firstSend.assign(size_t(layerCount), std::numeric_limits<int>::max());
    analysis.inputViaDram.resize(static_cast<size_t>(layerCount)); // each row assigned below
    for (int l = 0; l < layerCount; ++l) {
        const auto& ins = net.layers[size_t(l)].inputs;
        inputViaDram[size_t(l)].assign(ins.size(), 1);
        for (size_t k = 0; k < ins.size(); ++k)
            if (ins[k].producer >= 0) {
                // A blocked leaf reads its inputs and stores its output block by block
                // through DRAM (docs/cost-model.md §2b).
                const bool d =
                    viaDram(ins[k].producer, l) || ((blocked(ins[k].producer) || blocked(l)) &&
                                                    analysis.streamInput[size_t(l)] != int(k));
                inputViaDram[size_t(l)][k] = d;
                if (d)
                    writesDram[size_t(ins[k].producer)] = 1;
                else
                    analysis.firstSend[size_t(ins[k].producer)] =
                        std::min(analysis.firstSend[size_t(ins[k].producer)], layerPos[size_t(l)]);
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
                    const NodeWork& cw = work[size_t(consumerChild)];
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
        if (ctx.isOutput[size_t(l)]) writesDram[size_t(l)] = 1;
    }
    analysis.paceInputs.assign(size_t(layerCount), 0);
    for (int l = 0; l < layerCount; ++l) {
        const auto& ins = net.layers[size_t(l)].inputs;
        const RANode& me = tree.node(leafNode[size_t(l)]);
        if (me.parent < 0 || tree.node(me.parent).type != NodeType::S) continue;
        for (size_t k = 0; k < ins.size() && k < 32; ++k) {
            const int p = ins[k].producer;
            if (p >= 0 && !inputViaDram[size_t(l)][k] &&
                tree.node(leafNode[size_t(p)]).parent == me.parent && !writesDram[size_t(p)] &&
                analysis.firstSend[size_t(p)] == layerPos[size_t(l)])
                analysis.paceInputs[size_t(l)] |= 1u << k;
        }
    }
}

// ---- Compute-in-memory crossbars (docs/cost-model.md §8). A leaf keeps its weights
// programmed over its invocations in a segment invocation when, on every tile of its group,
// the crossbar blocks of all the segment's leaves placed there fit together (S-cut children
// own their tiles, T-cut children share them); otherwise each invocation writes them again.
// Segments follow one another, so each segment invocation writes its weights. A leaf blocked
// by output or input channels writes each block's weights in turn and keeps none.
void Analyser::cimWeights() {
    if (hw.arch != TileArch::Cim) return;
    std::vector<Count> demand(size_t(mesh.tiles()), 0);
    for (int seg : analysis.segments) {
        const NodeWork& sw = work[size_t(seg)];
        std::fill(demand.begin(), demand.end(), 0);
        for (int pos = sw.lo; pos < sw.hi; ++pos) {
            const int id = leafNode[size_t(posLayer[size_t(pos)])];
            const NodeWork& lw = work[size_t(id)];
            const RANode& nd = tree.node(id);
            const LeafMapping& mapping = ctx.mapper.map(nd.layer, lw.tileCount, nd.batch);
            if (!mapping.cim.used) continue;
            for (int t = lw.tileBegin; t < lw.tileBegin + lw.tileCount; ++t)
                demand[size_t(t)] += mapping.cim.footprint;
        }
        for (int pos = sw.lo; pos < sw.hi; ++pos) {
            const int id = leafNode[size_t(posLayer[size_t(pos)])];
            NodeWork& lw = work[size_t(id)];
            const RANode& nd = tree.node(id);
            const LeafMapping& mapping = ctx.mapper.map(nd.layer, lw.tileCount, nd.batch);
            if (!mapping.cim.used) continue;
            // Output- and input-channel blocks write each block's own weights: none stay.
            bool fits = net.layers[size_t(nd.layer)].kind != LayerKind::MatMul && mapping.bk == 1 &&
                        mapping.bc == 1 && mapping.cim.footprint <= mapping.cim.crossbars;
            for (int t = lw.tileBegin; fits && t < lw.tileBegin + lw.tileCount; ++t)
                fits = demand[size_t(t)] <= mapping.cim.crossbars;
            const double inv = double(analysis.segBatch) / std::max(1, nd.batch);
            lw.leaf.cimPinned = fits;
            lw.leaf.cimPrograms = double(mapping.cim.programmings) * (fits ? 1.0 : inv);
            lw.leaf.cimProgramsDefault =
                double(mapping.cim.programmingsDefault) * (fits ? 1.0 : inv);
            lw.leaf.writeSaved =
                fits && inv > 1 ? mapping.cim.exposedWrite * (1.0 - 1.0 / inv) : 0.0;
        }
    }
}

// ---- Inputs and weights kept on chip (docs/cost-model.md §6, "Kept on chip"): every
// invocation's window of the inputs, and each tile's slice of the weights, stays in its
// tile's buffer for the whole run, beside whatever else runs there. A leaf reading a kept
// input may not be blocked (its blocks would read it again), nor may kept weights stream
// with blocks, nor sit in compute-in-memory crossbars (those are programmed per run).
bool Analyser::keptOnChip() {
    analysis.resident.clear();
    analysis.ownResident.clear();
    if (!ctx.keepsOnChip) return true;
    analysis.resident.assign(size_t(mesh.tiles()), 0.0);
    analysis.ownResident.assign(size_t(nodeCount), 0.0);
    const int total = tree.node(tree.root).batch;
    for (int l = 0; l < layerCount; ++l) {
        const bool weights = net.layers[size_t(l)].weightsResident;
        if (!ctx.residentInputs[size_t(l)] && !weights) continue;
        const int id = leafNode[size_t(l)];
        const NodeWork& nw = work[size_t(id)];
        const LeafMapping& m = *nw.leaf.mapping;
        const int b = std::max(1, tree.node(id).batch);
        const std::string where = tree.pathOf(id) + " (" + net.layers[size_t(l)].name + ")";
        if (weights && hw.arch == TileArch::Cim)
            return invalid(id, "weights kept on chip at " + where +
                                   ": compute-in-memory tiles program their crossbars in every "
                                   "run, so the weights are loaded anyway");
        if (weights && m.streamsWeights())
            return invalid(id, "weights kept on chip at " + where + ": the leaf is blocked (" +
                                   m.blockLabel() + "), and its blocks bring their own weights");
        if (weights)
            for (int t = 0; t < nw.tileCount; ++t)
                analysis.resident[size_t(nw.tileBegin + t)] +=
                    double(ctx.geo.keptWeightBytes(l, m, t, b));
        if (!ctx.residentInputs[size_t(l)]) continue;
        if (m.blocked())
            return invalid(id, "input kept on chip at " + where + ": the leaf is blocked (" +
                                   m.blockLabel() + "), so its blocks would read it again");
        for (int t = 0; t < nw.tileCount; ++t) {
            const double all = double(ctx.geo.residentBytes(l, m, t, b, total));
            analysis.resident[size_t(nw.tileBegin + t)] += all;
            analysis.ownResident[size_t(id)] =
                std::max(analysis.ownResident[size_t(id)], all * b / total);
        }
    }
    return true;
}

// The most a tile of node id keeps on chip for the whole run (0 without such inputs).
double Analyser::residentReserve(int id) const {
    if (analysis.resident.empty()) return 0;
    const NodeWork& nw = work[size_t(id)];
    const auto first = analysis.resident.begin() + nw.tileBegin;
    return *std::max_element(first, first + std::max(1, nw.tileCount));
}

// ---- Leaves: intra-layer mapping, buffers; bottom-up time and buffer use.
void Analyser::leafBuffers() {
    for (auto it = pre.rbegin(); it != pre.rend(); ++it) {
        const int id = *it;
        const RANode& nd = tree.node(id);
        NodeWork& nw = work[size_t(id)];
        if (nd.type == NodeType::Leaf) {
            const LeafMapping& mapping = *nw.leaf.mapping;
            nw.compute = mapping.cycles - nw.leaf.writeSaved;
            // Weights kept on chip are in the tile's reserve (keptOnChip()).
            nw.wgt = net.layers[size_t(nd.layer)].weightsResident ? 0.0
                                                                  : mapping.residentWeightPerTile();
            nw.act = mapping.ifmapPerTile * dramGapShare(nd.layer, mapping) +
                     mapping.operandBPerTile + mapping.ofmapPerTile;
            if (mapping.streamsWeights()) nw.act += mapping.weightPerTile; // with each block
            if (mapping.blocked()) nw.act *= 2; // a block computing, the next one loading
            // Streaming to the next stage of an S cut: a block's output waits for the
            // consumer's block after it (streamStages()), so one more is alive.
            if (analysis.streamAcross[size_t(nd.layer)] == 2) nw.act += mapping.ofmapPerTile;
            // The inputs it keeps on chip are in the tile's reserve (keptOnChip()).
            if (!analysis.ownResident.empty())
                nw.act = std::max(0.0, nw.act - analysis.ownResident[size_t(id)]);
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
                t += work[size_t(c)].compute;
                if (isRoot) {
                    // Segments run one after another and reload their weights.
                    nw.act = std::max(nw.act, work[size_t(c)].wgt + work[size_t(c)].act);
                } else {
                    nw.wgt += work[size_t(c)].wgt; // weights stay resident within a segment
                    const double a = work[size_t(c)].act + hold[size_t(c)] + keptOut[size_t(c)];
                    if (a > nw.act) nw.act = a, nw.kept = work[size_t(c)].kept + keptOut[size_t(c)];
                }
            }
            nw.compute = t * nd.subBatch;
        } else {
            Cycles slot = 0;
            nw.wgt = nw.act = nw.kept = 0;
            for (int c : nd.children) {
                slot = std::max(slot, work[size_t(c)].compute);
                nw.wgt = std::max(nw.wgt, work[size_t(c)].wgt);
                // Pipelined sub-batches keep a second input slice in flight (not of the
                // outputs kept for a later consumer).
                const NodeWork& cw = work[size_t(c)];
                const double a = (cw.act - cw.kept) * (nd.subBatch > 1 ? 1.5 : 1.0) + cw.kept +
                                 hold[size_t(c)] + keptOut[size_t(c)];
                if (a > nw.act) nw.act = a, nw.kept = cw.kept + keptOut[size_t(c)];
            }
            nw.compute = slot * (nd.subBatch - 1) + computeFill(nd, nw.cut.maxStage);
        }
    }
}

// The factor on the mapper's ifmap per tile of a convolution reading its input from DRAM
// with its stride larger than its kernel (mapping/mapper.h); 1 elsewhere.
double Analyser::dramGapShare(int layer, const LeafMapping& mapping) const {
    if (!inputViaDram[size_t(layer)].empty() && !inputViaDram[size_t(layer)][0]) return 1.0;
    return tilescope::dramGapShare(net.layers[size_t(layer)], hw.arch, mapping.ph * mapping.bh,
                                   mapping.pw * mapping.bw);
}

// The compute-only fill of an S cut (its `compute`): the first sub-batch passes its stages
// one after another, each as long as its slowest child (the sum of those).
Cycles Analyser::computeFill(const RANode& nd, int maxStage) {
    std::vector<Cycles>& st = ctx.stageScratch;
    st.assign(size_t(maxStage) + 1, 0.0);
    for (int c : nd.children) {
        Cycles& len = st[size_t(work[size_t(c)].stage)];
        len = std::max(len, work[size_t(c)].compute);
    }
    Cycles fill = 0;
    for (Cycles t : st)
        fill += t;
    return fill;
}

bool Analyser::overflow(int id) {
    const double cap = hw.bufferBytes;
    const RANode& nd = tree.node(id);
    const NodeWork& nw = work[size_t(id)];
    const double kept = residentReserve(id), need = nw.wgt + nw.act + kept;
    const std::string what =
        nd.type == NodeType::Leaf
            ? tree.pathOf(id) + " (" + net.layers[size_t(nd.layer)].name + ")"
            : std::string(nd.type == NodeType::S ? "S" : "T") + " cut " + tree.pathOf(id);
    return invalid(
        id, "buffer overflow at " + what + ": needs " + formatBytes(need) + " per tile" +
                (kept > 0 ? " (of which " + formatBytes(kept) + " kept on chip)" : std::string()) +
                ", " + formatBytes(need - cap) + " over the " + formatBytes(cap) + " buffer");
}

// Report the leftmost leaf that overflows on its own, else the deepest cut.
bool Analyser::checkBuffers() {
    const double cap = hw.bufferBytes;
    auto over = [&](int id) {
        return work[size_t(id)].wgt + work[size_t(id)].act + residentReserve(id) > cap;
    };
    for (int id : pre)
        if (tree.node(id).type == NodeType::Leaf && over(id)) return overflow(id);
    for (auto it = pre.rbegin(); it != pre.rend(); ++it)
        if (over(*it)) return overflow(*it);
    return true;
}

} // namespace tilescope
