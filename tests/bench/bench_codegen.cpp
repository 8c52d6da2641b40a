// Instruction generation and replay on the samples: per model and chip, the program size,
// DRAM bytes against the schedule, simulated delay against the evaluator, the fine-grained
// speed-up and the time each step takes. Prints figures; never gates.
//
// usage: bench_codegen [BATCH]     layer-sequential trees (largest valid batch <= BATCH)
//        bench_codegen anneal [--batches 2,4,8] [--seeds 1,2,3] [--beta 3]
//                             [--iterations N [--chains K]] [--save-trees DIR]
//                             annealed trees, as `tilescope-cli anneal` makes them (one chain,
//                             EDP; --iterations: tst_fidelity's short search instead of --beta)
//        bench_codegen --tree RESULT.json --models m --hw h [flags]   one tree, as
//                             `anneal --json` (or --save-trees) wrote it; a result with
//                             "dims" or "kept_on_chip" (a phase of `generate --json`) loads
//                             the model with them
// --models takes sample names or paths to .onnx files (tests/data); --hw presets or meshes
// "8x8", with variants "+fastlinks", "+slowdram", "+4sides". Flags: --segments per-segment
// figures; --leaves the leaves where the replay drifts most; --critical what the replay's
// critical path waits for; --critical-steps also each step over 5,000 cycles (--step-min N:
// over N); --invocations A,B every invocation of layers A and B, estimate against replay;
// --dram-use the DRAM's use in each twentieth of the replay; --program-txt FILE the program;
// --tile-ops T,FROM,TO tile T's instructions that run in that window of the replay.
#include "../engine/hwvariants.h"
#include "codegen/codegen.h"
#include "model/model_loader.h"
#include "saved_tree.h"
#include "search/search.h"
#include "sim/simulator.h"
#include "tree/tree_json.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

using namespace tilescope;

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> splitList(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

int countS(const RATree& t) {
    int n = 0;
    for (int id = 0; id < t.size(); ++id)
        if (t.node(id).type == NodeType::S && t.node(id).parent >= 0) ++n;
    return n;
}

// Per segment: the evaluator's time and bound against the replay's span of the segment's
// instructions (first start to last end, over all root sub-batches). Segments overlap in
// the replay, so spans need not add up to the delay; a span far above the evaluator's time
// points at the segment whose model disagrees.
void printSegments(const CodegenResult& r, const SimResult& f, const RATree& tree) {
    const ScheduleLayout& S = r.layout;
    const size_t nseg = S.segments.size();
    std::vector<int> segOfLayer(r.program.layers.size(), -1);
    for (const auto& l : S.leaves)
        segOfLayer[size_t(l.layer)] = l.segment;
    std::vector<double> first(nseg, 1e300), last(nseg, 0);
    std::vector<double> evalFirst(nseg, 1e300), evalLast(nseg, 0);
    for (const auto& iv : S.evaluation.intervals) {
        const int s = segOfLayer[size_t(iv.layer)];
        if (s < 0) continue;
        evalFirst[size_t(s)] = std::min(evalFirst[size_t(s)], iv.start);
        evalLast[size_t(s)] = std::max(evalLast[size_t(s)], iv.end);
    }
    for (const auto& iv : f.timeline) {
        if (iv.layer < 0) continue;
        const int s = segOfLayer[size_t(iv.layer)];
        if (s < 0) continue;
        first[size_t(s)] = std::min(first[size_t(s)], iv.start);
        last[size_t(s)] = std::max(last[size_t(s)], iv.end);
    }
    for (size_t s = 0; s < nseg; ++s) {
        const NodeFigures& nf = S.evaluation.nodes[size_t(S.segments[s])];
        const RANode& nd = tree.node(S.segments[s]);
        const double span = last[s] - first[s];
        const double evalT = nf.time * S.segInvocations;
        std::printf("    seg %2zu %s%-3s leaves %2d  eval %10.0f (%-7s) dram %9.0f  sim span "
                    "%10.0f  ratio %.3f  eval %8.0f-%8.0f sim %8.0f-%8.0f\n",
                    s,
                    nd.type == NodeType::S   ? "S"
                    : nd.type == NodeType::T ? "T"
                                             : "L",
                    nd.isCut()
                        ? (std::to_string(nd.batch) + "/" + std::to_string(nd.subBatch)).c_str()
                        : "",
                    int(std::count_if(S.leaves.begin(), S.leaves.end(),
                                      [&](const LeafLayout& l) { return l.segment == int(s); })),
                    evalT, toString(nf.bound), nf.dramBytes, span, evalT > 0 ? span / evalT : 0.0,
                    evalFirst[s], evalLast[s], first[s], last[s]);
    }
}

// --dram-use: the DRAM's use in each twentieth of the replay, in % of its bandwidth.
void printDramUse(const SimResult& f, const Hardware& hw) {
    constexpr int kParts = 20;
    std::vector<double> moved(kParts, 0); // bytes
    const double D = f.delay;
    for (size_t q = 0; q < f.dramInUse.size(); ++q) {
        const auto& [from, rate] = f.dramInUse[q];
        const double to = q + 1 < f.dramInUse.size() ? f.dramInUse[q + 1].first : D;
        for (int k = 0; k < kParts; ++k) {
            const double lo = std::max(from, D * k / kParts),
                         hi = std::min(to, D * (k + 1) / kParts);
            if (hi > lo) moved[size_t(k)] += (hi - lo) * rate;
        }
    }
    std::printf("    dram use:");
    for (double b : moved)
        std::printf(" %.0f%%", 100 * b / (D / kParts) / hw.dramBytesPerCycle);
    std::printf("\n");
}

int gIterations = 0, gChains = 1; // --iterations N [--chains K]: instead of --beta
bool gDramUse = false;            // --dram-use: the DRAM's use over the replay, in twentieths
std::string gSaveDir; // --save-trees DIR: annealed trees as result JSON files (for --tree)
bool gFirst = false;  // --first: --leaves prints the first sample's pass, leaf by leaf
// --invocations NAME[,NAME...]: --leaves prints every invocation of these layers instead
// (estimate and replay start and end), e.g. a pipeline's first and last leaf: the spacing
// of their ends is the period each model gives it.
std::vector<std::string> gInvocations;
bool gEndLag = false; // --end-lag: --leaves charges the growth of the lag of ends

// Per leaf invocation, in the evaluator's order: the lag of the replay (first COMPUTE start
// of the invocation in the replay minus its start on the evaluator's clock). The growth of
// the lag from one invocation to the next is charged to the earlier one; summed per leaf,
// the leaves with the largest growth are where the two models disagree.
void printLeaves(const CodegenResult& r, const SimResult& f, const Network& net) {
    const Evaluation& ev = r.layout.evaluation;
    std::map<std::pair<int, int>, std::pair<double, double>>
        sim; // (layer, first sample) -> start, end
    std::map<std::uint32_t, const Instruction*> byId;
    for (const auto& tp : r.program.tiles)
        for (const auto& i : tp.instructions)
            byId[i.id] = &i;
    std::vector<const BusyInterval*> ivs;
    for (const auto& b : ev.intervals)
        ivs.push_back(&b);
    std::sort(ivs.begin(), ivs.end(), [](auto* a, auto* b) { return a->start < b->start; });
    std::map<int, std::vector<const BusyInterval*>> ofLayer;
    for (auto* b : ivs)
        ofLayer[b->layer].push_back(b);
    for (const auto& iv : f.timeline) {
        if (iv.layer < 0 || iv.op != Op::Compute) continue;
        const int s0 = byId[iv.id]->lo[0];
        for (auto* b : ofLayer[iv.layer])
            if (b->firstSample <= s0 && s0 <= b->lastSample) {
                auto [it, fresh] = sim.try_emplace({b->layer, b->firstSample}, iv.start, iv.end);
                if (!fresh)
                    it->second.first = std::min(it->second.first, iv.start),
                    it->second.second = std::max(it->second.second, iv.end);
                break;
            }
    }
    if (gFirst || !gInvocations.empty()) {
        // The first sample's pass, leaf by leaf, or every invocation of the layers named:
        // estimate and replay start and end.
        for (auto* b : ivs) {
            const std::string& name = net.layers[size_t(b->layer)].name;
            if (gInvocations.empty() ? b->firstSample != 0
                                     : std::find(gInvocations.begin(), gInvocations.end(), name) ==
                                           gInvocations.end())
                continue;
            auto it = sim.find({b->layer, b->firstSample});
            if (it == sim.end()) continue;
            std::printf("    %-36s samples %3d-%-3d eval %9.0f %9.0f  sim %9.0f %9.0f\n",
                        name.substr(0, 36).c_str(), b->firstSample, b->lastSample, b->start, b->end,
                        it->second.first, it->second.second);
        }
        for (const std::string& name : gInvocations)
            if (std::none_of(ivs.begin(), ivs.end(),
                             [&](auto* b) { return net.layers[size_t(b->layer)].name == name; }))
                std::fprintf(stderr, "--invocations: no leaf of this tree is layer '%s'\n",
                             name.c_str());
        return;
    }
    std::map<int, double> growth;
    std::map<int, double> evalTime, simTime;
    double prevLag = 0;
    int prevLayer = -1;
    for (auto* b : ivs) {
        auto it = sim.find({b->layer, b->firstSample});
        if (it == sim.end()) continue;
        const double lag = (gEndLag ? it->second.second - b->end : it->second.first - b->start);
        if (prevLayer >= 0) growth[gEndLag ? b->layer : prevLayer] += lag - prevLag;
        prevLag = lag;
        prevLayer = b->layer;
        evalTime[b->layer] += b->end - b->start;
        simTime[b->layer] += it->second.second - it->second.first;
    }
    std::vector<std::pair<double, int>> rows;
    for (auto [l, g] : growth)
        rows.push_back({g, l});
    std::sort(rows.rbegin(), rows.rend());
    // The 15 leaves after which the replay falls furthest behind the estimate, then the 5
    // after which it catches up most (where the estimate is pessimistic).
    std::vector<size_t> shown;
    for (size_t i = 0; i < rows.size() && i < 15; ++i)
        shown.push_back(i);
    for (size_t i = rows.size(); i > 0 && i > rows.size() - 5 && i > 15; --i)
        if (rows[i - 1].first < 0) shown.push_back(i - 1);
    for (size_t i : shown) {
        const int l = rows[i].second;
        const auto& nf =
            ev.nodes[size_t(r.layout.leaves[size_t(r.layout.leafOfLayer[size_t(l)])].node)];
        std::printf("    %-44s %-8s tiles %3d lag growth %+9.0f  eval %9.0f  sim compute span "
                    "%9.0f  part %s\n",
                    net.layers[size_t(l)].name.substr(0, 44).c_str(),
                    toString(net.layers[size_t(l)].kind), nf.tileCount, rows[i].first, evalTime[l],
                    simTime[l], nf.partition.c_str());
    }
}

// The replay's critical path, walked back from the instruction that ends last: each step
// goes to the predecessor (the previous instruction of the same engine queue, or a
// dependency) that ended latest before this one started (stage overlap aside, the one that
// held it back). Time on the path is summed per (op, layer): what the program waits for.
bool whatIf = false;          // --what-if: replays with one resource class made free
double gStepMin = 5000;       // --step-min: the smallest step --critical-steps prints
std::string gProgramTxt;      // --program-txt FILE: the program as text (docs/isa.md)
std::vector<double> gTileOps; // --tile-ops T,FROM,TO: tile T's instructions in that window

// Every instruction of one tile whose replay interval meets [from, to], in start order: what
// each engine of the tile was doing while something waited.
std::map<std::uint32_t, const Instruction*> instructionsById(const Program& p) {
    std::map<std::uint32_t, const Instruction*> ins;
    for (const auto& tp : p.tiles)
        for (const auto& i : tp.instructions)
            ins[i.id] = &i;
    return ins;
}

void printTileOps(const CodegenResult& r, const SimResult& f) {
    const int tile = int(gTileOps[0]);
    const auto ins = instructionsById(r.program);
    for (const auto& x : f.timeline) {
        if (x.tile != tile || x.end < gTileOps[1] || x.start > gTileOps[2]) continue;
        const Instruction& i = *ins.at(x.id);
        std::printf("      [%9.0f, %9.0f] id %6u %-7s bytes %7llu dsts %2zu deps %zu  %s\n",
                    x.start, x.end, i.id, toString(i.op), (unsigned long long)i.bytes,
                    i.destinations().size(), i.deps.size(),
                    i.layer >= 0 ? r.program.layers[size_t(i.layer)].c_str() : "-");
    }
}

void printCritical(const CodegenResult& r, const SimResult& f, bool dumpSteps) {
    std::map<std::uint32_t, const SimInterval*> iv;
    for (const auto& x : f.timeline)
        iv[x.id] = &x;
    const auto ins = instructionsById(r.program);
    std::map<std::uint32_t, std::uint32_t> prevOnQueue;
    for (const auto& tp : r.program.tiles) {
        std::map<int, std::uint32_t> last;
        for (const auto& i : tp.instructions) {
            auto it = last.find(int(i.engine()));
            if (it != last.end()) prevOnQueue[i.id] = it->second;
            last[int(i.engine())] = i.id;
        }
    }
    const SimInterval* cur = nullptr;
    for (const auto& x : f.timeline)
        if (!cur || x.end > cur->end) cur = &x;
    std::map<std::string, double> onPath;
    std::map<std::string, int> steps;
    while (cur) {
        const Instruction& i = *ins.at(cur->id);
        const SimInterval* best = nullptr;
        auto consider = [&](std::uint32_t id) {
            auto it = iv.find(id);
            if (it == iv.end()) return;
            const SimInterval* p = it->second;
            if (p->start >= cur->start) return;
            if (!best || p->end > best->end) best = p;
        };
        if (auto q = prevOnQueue.find(i.id); q != prevOnQueue.end()) consider(q->second);
        for (const auto& d : i.deps)
            consider(d.id);
        const double own = cur->end - (best ? std::max(best->end, cur->start) : cur->start);
        const std::string key =
            std::string(toString(i.op)) + " " +
            (i.layer >= 0 ? r.program.layers[size_t(i.layer)] : std::string("-"));
        onPath[key] += std::max(0.0, own);
        ++steps[key];
        if (own > gStepMin && dumpSteps) {
            std::printf("      own %.0f: id %u %s tile %d layer %s bytes %llu stages %u dsts %zu "
                        "[%.0f, %.0f]",
                        own, i.id, toString(i.op), i.tile,
                        i.layer >= 0 ? r.program.layers[size_t(i.layer)].c_str() : "-",
                        (unsigned long long)i.bytes, i.stages, i.destinations().size(), cur->start,
                        cur->end);
            if (best)
                std::printf(" pred %u %s [%.0f, %.0f]", best->id, toString(best->op), best->start,
                            best->end);
            std::printf("\n");
        }
        cur = best;
    }
    std::vector<std::pair<double, std::string>> rows;
    for (auto& [k, v] : onPath)
        rows.push_back({v, k});
    std::sort(rows.rbegin(), rows.rend());
    std::map<std::string, double> byOp;
    for (auto& [v, k] : rows)
        byOp[k.substr(0, k.find(' '))] += v;
    std::printf("    critical path by op:");
    for (auto& [op, v] : byOp)
        std::printf("  %s %.0f", op.c_str(), v);
    std::printf("\n");
    for (size_t k = 0; k < rows.size() && k < 14; ++k)
        std::printf("    %9.0f cycles on path  %4d steps  %s\n", rows[k].first,
                    steps[rows[k].second], rows[k].second.c_str());
}

void row(const char* m, const char* h, const std::string& tree, const CodegenResult& r,
         const SimResult& f, const SimResult& c, double genS, double simS) {
    const Evaluation& ev = r.layout.evaluation;
    std::printf(
        "%-14s %-9s %-22s %8zu %14.0f %14.0f %8.3f %12.0f %12.0f %7.3f %8.3f %8.2f %8.2f%s\n", m, h,
        tree.c_str(), r.program.instructionCount(), double(r.programDramBytes), ev.dramBytes,
        100.0 * (double(r.programDramBytes) - ev.dramBytes) / ev.dramBytes, f.delay, ev.delay,
        f.delay / ev.delay, c.delay / f.delay, genS, simS,
        f.deadlockFree && c.deadlockFree ? "" : "  DEADLOCK");
}

void header() {
    std::printf("%-14s %-9s %-22s %8s %14s %14s %8s %12s %12s %7s %8s %8s %8s\n", "model", "hw",
                "tree", "instr", "dram_prog", "dram_sched", "diff%", "sim_delay", "eval_delay",
                "ratio", "speedup", "gen_s", "sim_s");
}

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string> models{"mobilenet_v2", "resnet50", "googlenet", "inception_v3",
                                    "transformer"};
    std::vector<std::string> chips{"testchip", "edge"};
    const bool anneal = argc > 1 && !std::strcmp(argv[1], "anneal");
    int batch = 2;
    std::vector<int> batches{2, 4, 8}, seeds{1, 2, 3};
    double beta = 3;
    bool segments = false, leaves = false, critical = false, criticalSteps = false;
    std::string treeFile; // --tree FILE: a result/tree JSON (as `anneal --json` writes it)
    for (int i = anneal ? 2 : 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
        if (a == "--batches") {
            batches.clear();
            for (auto& s : splitList(next()))
                batches.push_back(std::stoi(s));
        } else if (a == "--seeds") {
            seeds.clear();
            for (auto& s : splitList(next()))
                seeds.push_back(std::stoi(s));
        } else if (a == "--beta")
            beta = std::stod(next());
        else if (a == "--models")
            models = splitList(next());
        else if (a == "--hw")
            chips = splitList(next());
        else if (a == "--segments")
            segments = true;
        else if (a == "--leaves")
            leaves = true;
        else if (a == "--critical")
            critical = true;
        else if (a == "--critical-steps")
            critical = criticalSteps = true;
        else if (a == "--what-if")
            whatIf = true;
        else if (a == "--save-trees")
            gSaveDir = next();
        else if (a == "--first")
            gFirst = leaves = true;
        else if (a == "--invocations") {
            gInvocations = splitList(next());
            leaves = true;
        } else if (a == "--end-lag")
            gEndLag = true;
        else if (a == "--step-min")
            gStepMin = std::stod(next());
        else if (a == "--dram-use")
            gDramUse = true;
        else if (a == "--iterations")
            gIterations = std::stoi(next());
        else if (a == "--chains")
            gChains = std::stoi(next());
        else if (a == "--tree")
            treeFile = next();
        else if (a == "--program-txt")
            gProgramTxt = next();
        else if (a == "--tile-ops") {
            for (auto& v : splitList(next()))
                gTileOps.push_back(std::stod(v));
            if (gTileOps.size() != 3) {
                std::fprintf(stderr, "bench_codegen: --tile-ops wants TILE,FROM,TO\n");
                return 2;
            }
        } else
            batch = std::atoi(a.c_str());
    }
    header();
    double worst = 0;
    for (const auto& modelArg : models) {
        // A sample's name, or a path to any .onnx file (tests/data has more kinds).
        const bool isPath = modelArg.find('/') != std::string::npos || modelArg.ends_with(".onnx");
        const std::string m = isPath ? std::filesystem::path(modelArg).stem().string() : modelArg;
        auto net =
            loadModel(isPath ? modelArg : std::string(TILESCOPE_SAMPLES) + "/models/" + m + ".onnx",
                      savedImportOptions(treeFile));
        if (!net) {
            std::printf("%s: %s\n", m.c_str(), net.error().message.c_str());
            continue;
        }
        for (const auto& h : chips) {
            Hardware hw;
            if (!test::hardwareVariant(h, hw)) {
                std::printf("unknown hardware %s\n", h.c_str());
                continue;
            }
            std::vector<std::pair<std::string, RATree>> trees;
            std::vector<int> treeBatch;
            if (!treeFile.empty()) {
                auto t = readSavedTree(treeFile, *net, batch);
                if (!t) {
                    std::printf("%s\n", t.error().message.c_str());
                    return 1;
                }
                const int b = t->second;
                trees.push_back({"tree b" + std::to_string(b), t->first});
                treeBatch.push_back(b);
            } else if (anneal) {
                for (int b : batches)
                    for (int seed : seeds) {
                        SearchConfig cfg;
                        cfg.seed = std::uint64_t(seed);
                        cfg.beta = beta;
                        // tst_fidelity's short search: --iterations N --chains 1
                        if (gIterations > 0) cfg.iterations = gIterations, cfg.chains = gChains;
                        cfg.totalBatch = b;
                        auto s = runSearch(*net, hw, cfg);
                        if (!s) {
                            std::printf("%-14s %-9s b%d s%d: %s\n", m.c_str(), h.c_str(), b, seed,
                                        s.error().message.c_str());
                            continue;
                        }
                        trees.push_back({"SA b" + std::to_string(b) + " s" + std::to_string(seed) +
                                             " (" + std::to_string(countS(s->bestTree)) + " S)",
                                         s->bestTree});
                        treeBatch.push_back(b);
                        if (!gSaveDir.empty()) {
                            nlohmann::json out;
                            out["tree"] = treeToText(s->bestTree, *net);
                            out["batch"] = b;
                            std::ofstream(gSaveDir + "/" + m + "-" + h + "-b" + std::to_string(b) +
                                          "-s" + std::to_string(seed) + ".json")
                                << out.dump();
                        }
                    }
            } else {
                // Layer-sequential at the largest batch <= `batch` whose tree is valid.
                for (int b = batch; b >= 1; b /= 2) {
                    EvalContext ctx(*net, hw);
                    const RATree t = RATree::layerSequential(*net, b);
                    if (!evaluate(ctx, t, b, {}).valid && b > 1) continue;
                    trees.push_back({"LS b" + std::to_string(b), t});
                    treeBatch.push_back(b);
                    break;
                }
            }
            for (size_t i = 0; i < trees.size(); ++i) {
                EvalContext ctx(*net, hw);
                const auto t0 = Clock::now();
                auto r = generateProgram(ctx, trees[i].second, treeBatch[i], {});
                const auto t1 = Clock::now();
                if (!r) {
                    std::printf("%-14s %-9s %-22s %s\n", m.c_str(), h.c_str(),
                                trees[i].first.c_str(), r.error().message.c_str());
                    continue;
                }
                if (!gProgramTxt.empty()) std::ofstream(gProgramTxt) << programToText(r->program);
                SimOptions coarse;
                coarse.fineGrained = false;
                coarse.recordTimeline = false;
                const SimResult f = simulate(r->program, hw);
                const SimResult c = simulate(r->program, hw, coarse);
                if (gDramUse) printDramUse(f, hw);
                if (!gTileOps.empty()) printTileOps(*r, f);
                const auto t2 = Clock::now();
                row(m.c_str(), h.c_str(), trees[i].first, *r, f, c,
                    std::chrono::duration<double>(t1 - t0).count(),
                    std::chrono::duration<double>(t2 - t1).count());
                worst = std::max(worst, std::abs(f.delay / r->layout.evaluation.delay - 1.0));
                if (segments) printSegments(*r, f, trees[i].second);
                if (leaves) printLeaves(*r, f, *net);
                if (critical) printCritical(*r, f, criticalSteps);
                if (whatIf) {
                    // The same program replayed on hardware with one resource made free: how
                    // much of the delay each resource class accounts for.
                    SimOptions quiet;
                    quiet.recordTimeline = false;
                    const double ev = r->layout.evaluation.delay;
                    auto replay = [&](const char* what, auto change) {
                        Hardware h2 = hw;
                        change(h2);
                        const SimResult w = simulate(r->program, h2, quiet);
                        std::printf("    what-if %-22s sim %10.0f  sim/eval %.3f\n", what, w.delay,
                                    w.delay / ev);
                    };
                    replay("links x100", [](Hardware& x) {
                        x.nocBytesPerCycle *= 100;
                        x.chiplets.linkBytesPerCycle *= 100;
                    });
                    if (hw.chiplets.count() > 1)
                        replay("inter-chiplet x100",
                               [](Hardware& x) { x.chiplets.linkBytesPerCycle *= 100; });
                    replay("dram x100", [](Hardware& x) { x.dramBytesPerCycle *= 100; });
                    replay("links+dram x100", [](Hardware& x) {
                        x.nocBytesPerCycle *= 100;
                        x.chiplets.linkBytesPerCycle *= 100;
                        x.dramBytesPerCycle *= 100;
                    });
                }
                std::fflush(stdout);
            }
        }
    }
    std::printf("largest |sim/eval - 1|: %.3f\n", worst);
    return 0;
}
