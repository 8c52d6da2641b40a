// The costing of an analysed tree (internal to engine/eval): per segment its traffic,
// energy and bounds, the segments chained (costing.cpp), the run's totals and, in detail
// mode, per-node figures and S-T intervals (evaluator.cpp, costing.cpp).
#pragma once

#include "eval/analyser.h"

#include <array>
#include <utility>
#include <vector>

namespace tilescope {

// The working data of evaluate() after analyse(): per-segment traffic, energy and bounds.
struct Coster {
    EvalContext::Impl& ctx;
    const RATree& tree;
    const int totalBatch;
    const EvalOptions& opt;
    Evaluation& ev;
    const Hardware& hw;
    const Mesh& mesh;
    const int nodeCount;
    std::vector<NodeWork>& work;
    const std::vector<int>& pre;
    const std::vector<int>& leafNode;
    const std::vector<int>& posLayer;
    const bool rootIsT;
    const std::vector<int>& segments;
    const int segBatch;
    const int segInvocations;
    const std::vector<std::vector<char>>& inputViaDram;
    const std::vector<char>& writesDram;
    const std::vector<char>& streamAcross; // Analysis::streamAcross
    std::vector<double> totalLinks;
    std::vector<double> tileDram;
    const double readPj, writePj; // the global buffer's, per byte
    double dramTotal = 0, hopBytesTotal = 0, interHopBytesTotal = 0, macTotal = 0;
    double programsTotal = 0, programsDefaultTotal = 0; // compute-in-memory crossbar writes
    EnergyBreakdown energy;
    // Per segment and the chaining's working data (held by the Analysis for its capacity).
    CostScratch& seg;
    Cycles dramFloor = 0; // every segment's DRAM time, one root invocation (chainSegments())
    const double dramBw, linkBw;
    Cycles delay = 0;

    Coster(EvalContext::Impl& c, const RATree& t, int batch, const EvalOptions& o,
           Analysis& analysis, Evaluation& e)
        : ctx(c), tree(t), totalBatch(batch), opt(o), ev(e), hw(c.hw), mesh(c.mesh),
          nodeCount(t.size()), work(analysis.work), pre(analysis.pre), leafNode(analysis.leafNode),
          posLayer(analysis.posLayer), rootIsT(analysis.rootIsT), segments(analysis.segments),
          segBatch(analysis.segBatch), segInvocations(analysis.segInvocations),
          inputViaDram(analysis.inputViaDram), writesDram(analysis.writesDram),
          streamAcross(analysis.streamAcross),
          totalLinks(o.detail ? size_t(c.mesh.linkCount()) : 0, 0.0),
          tileDram(o.detail ? size_t(c.mesh.tiles()) : 0, 0.0), readPj(bufferReadPj(c.hw)),
          writePj(bufferWritePj(c.hw)), seg(analysis.cost), dramBw(c.hw.dramBytesPerCycle),
          linkBw(c.hw.nocBytesPerCycle) {
        const size_t n = analysis.segments.size();
        for (auto* v : {&seg.time, &seg.dram, &seg.weightLink, &seg.dramTime, &seg.nocTime,
                        &seg.dramPart, &seg.otherPart})
            v->assign(n, 0.0);
        seg.bound.assign(n, Bound::Compute);
        seg.otherBound.assign(n, Bound::Compute);
    }

    // NoC energy of `hop` hop-bytes, `inter` of them over inter-chiplet links.
    double hopPj(double hop, double inter) const {
        if (inter <= 0) return hop * 8 * hw.energy.nocPjPerBitHop;
        return (hop - inter) * 8 * hw.energy.nocPjPerBitHop + inter * 8 * hw.chiplets.pjPerBitHop;
    }
    double bufferPj(const LeafMapping& m, const LeafTraffic& t, double invocations) const;
    double levelsPj(const LeafMapping& m, double invocations,
                    std::array<double, kMaxStorageLevels>& perLevel) const;
    Cycles weightBoundOf(size_t s);
    void costSegment(size_t s);
    Cycles chainSegments();
    void segmentShares();
    void totals();
    void nodeFigures();
    void blockingDram(int l, double actDram, NodeWork& lw);
    void blockingFigures(const RANode& nd, const NodeWork& nw, NodeFigures& figures);
    void intervals();
};

} // namespace tilescope
