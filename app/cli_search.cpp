// evaluate, anneal, compare and mapping (CLI.md, docs/cli.md): argument checking, progress on
// stderr, the result JSON (engine/report) and a human-readable summary on stdout.
#include "cli_search.h"

#include "cli_commands.h"
#include "eval/evaluator.h"
#include "mapping/cim_records.h"
#include "model/model_loader.h"
#include "pipeline/compare.h"
#include "report/layers.h"
#include "report/mapping_json.h"
#include "report/result_json.h"
#include "report/segments.h"
#include "search/search.h"
#include "util/fileio.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <unistd.h>

namespace tilescope::cli {

bool loadModelAndHardware(Inputs& in, const ImportOptions& opts, int& status) {
    auto net = loadModel(in.modelPath, opts);
    if (!net) {
        status = userError(net.error().message);
        return false;
    }
    in.net = std::move(net).value();
    auto hw = loadHardware(in.hwName);
    if (!hw) {
        status = userError(hw.error().message);
        return false;
    }
    in.hw = std::move(hw).value();
    return true;
}

using nlohmann::json;

namespace {

// ---------------------------------------------------------------------------------------
// Argument parsing: anything malformed is a UsageError (exit 2).

std::string modelArg(const Args& a) {
    if (a.positional.size() != 1) throw UsageError{"expected exactly one MODEL argument"};
    return a.positional[0];
}

std::string required(const Args& a, const std::string& opt) {
    if (!a.has(opt) || a.get(opt).empty()) throw UsageError{opt + " is required"};
    return a.get(opt);
}

double parseNumber(const std::string& opt, const std::string& v) {
    size_t used = 0;
    double d = 0;
    try {
        d = std::stod(v, &used);
    } catch (...) {
        used = 0;
    }
    if (used == 0 || used != v.size() || !std::isfinite(d))
        throw UsageError{opt + " expects a number, got '" + v + "'"};
    return d;
}

std::uint64_t parseSeed(const std::string& v) {
    size_t used = 0;
    unsigned long long s = 0;
    try {
        if (!v.empty() && v[0] != '-') s = std::stoull(v, &used);
    } catch (...) {
        used = 0;
    }
    if (used == 0 || used != v.size())
        throw UsageError{"--seed expects a non-negative integer, got '" + v + "'"};
    return s;
}

// ---------------------------------------------------------------------------------------
// Inputs: user errors (exit 1) with one line naming the file.

std::optional<Inputs> loadInputs(const Args& a, int& status) {
    Inputs in;
    in.modelPath = modelArg(a);
    in.hwName = required(a, "--hw");
    const std::optional<long long> stageBytes = stageBytesArg(a);
    if (!loadModelAndHardware(in, importOptions(a), status)) return std::nullopt;
    if (stageBytes) in.hw.stageBytes = *stageBytes;
    if (auto e = attachCimRecords(a, in.hw, in.cimRecords)) {
        status = userError(e->message);
        return std::nullopt;
    }
    auto sha = sha256File(in.modelPath);
    in.modelSha = sha ? *sha : "";
    return in;
}

Result<RATree> loadTree(const std::string& path, const Network& net) {
    auto text = readFile(path);
    if (!text) return text.error();
    return parseTreeDocument(*text, net, path);
}

// ---------------------------------------------------------------------------------------
// Output for people.

void printEvaluation(const Evaluation& e, const Inputs& in, int batch) {
    std::printf("model %s (%zu layers), hw %s (%dx%d), batch %d, objective %s\n",
                in.modelPath.c_str(), in.net.layers.size(), in.hw.name.c_str(), in.hw.meshX,
                in.hw.meshY, batch, objectiveName(e.objective).c_str());
    if (!e.valid) {
        std::printf("invalid: %s\n", e.reason.c_str());
        return;
    }
    // The units policy of engine/util/units.h, as the GUI and the HTML report show them.
    const auto& b = e.energy;
    std::string levels; // the in-tile storage levels, when the template lists them
    for (size_t i = 0; i < in.hw.levels.size() && i < b.levels.size(); ++i)
        levels += ", " + in.hw.levels[i].name + " " + formatEnergy(b.levels[i]);
    std::printf("energy      %s (DRAM %s, NoC %s, MAC %s, buffer %s%s)\n",
                formatEnergy(b.total()).c_str(), formatEnergy(b.dram).c_str(),
                formatEnergy(b.noc).c_str(), formatEnergy(b.mac).c_str(),
                formatEnergy(b.buffer).c_str(), levels.c_str());
    std::printf("delay       %s at %.3g GHz\n", formatTime(e.delay, in.hw.clockGHz).c_str(),
                in.hw.clockGHz);
    std::printf("cost        %.6g\n", e.cost);
    std::printf("DRAM bytes  %s\nNoC hop-bytes %s\nutilisation %.1f%%\n",
                formatBytes(e.dramBytes).c_str(), formatBytes(e.nocHopBytes).c_str(),
                100.0 * e.utilisation);
    if (e.blockedLeaves > 0)
        std::printf("blocked     %d leaves work in blocks, +%s DRAM (docs/cost-model.md "
                    "§2b)\n",
                    e.blockedLeaves, formatBytes(e.blockingDramBytes).c_str());
}

void printBlockedLeaves(const Evaluation& e, const RATree& t, const Network& net,
                        const Hardware& hw) {
    if (e.blockedLeaves == 0) return;
    for (const LayerFigures& f : layerFigures(e, t, net, hw))
        if (f.blocks > 1)
            std::printf("  %s %s: %s (+%s DRAM)\n", t.pathOf(f.node).c_str(), f.name.c_str(),
                        f.blockingReason.c_str(), formatBytes(f.blockingDramBytes).c_str());
}

void printSegments(const Evaluation& e, const RATree& t, const Network& net, double clockGHz) {
    const auto segs = segmentFigures(e, t, net);
    if (segs.empty()) return;
    // Segments overlap: "starts" is the first invocation's start, "adds" what the segment
    // adds to the delay (the column adds up to it; docs/cost-model.md §5).
    std::printf("%-7s %-4s %6s %26s %14s %14s %12s %12s %8s  %s\n", "segment", "type", "layers",
                "time", "starts", "adds", "energy", "DRAM", "bound", "layers");
    for (const SegmentFigures& s : segs) {
        std::string span = s.firstLayer;
        if (s.layers > 1) span += " .. " + s.lastLayer;
        std::printf("%-7s %-4s %6zu %26s %14s %14s %12s %12s %8s  %s\n", s.path.c_str(),
                    toString(s.type), s.layers, formatTime(s.time, clockGHz).c_str(),
                    formatCycles(s.start).c_str(), formatCycles(s.share).c_str(),
                    formatEnergy(s.energy).c_str(), formatBytes(s.dramBytes).c_str(),
                    toString(s.bound), span.c_str());
    }
}

// The best tree again with the detail figures: per-segment bounds for the report.
Evaluation detailOf(const Inputs& in, const RATree& t, int batch, const Objective& o,
                    double minUtil, const LayoutChoice& layouts) {
    EvalOptions opt;
    opt.objective = o;
    opt.minUtilisation = minUtil;
    opt.layouts = layouts;
    opt.detail = true;
    opt.maxIntervals = 0; // segments need node figures, not the S-T rectangles
    return evaluate(in.net, in.hw, t, batch, opt);
}

void printSearchSummary(const SearchResult& r, const Evaluation& detail, const Inputs& in) {
    printEvaluation(detail, in, r.config.totalBatch);
    char budget[96] = "";
    if (r.config.seconds > 0)
        std::snprintf(budget, sizeof budget, " (time budget %.3g s: %lld iterations in all)",
                      r.config.seconds, r.iterationsRun);
    std::printf("search      %s, seed %llu, %d chain(s) on %d thread(s), %lld iterations per "
                "chain%s, %.2f s%s\n",
                toString(r.config.mode), (unsigned long long)r.seed, r.config.chains,
                std::min(r.config.threads, r.config.chains), r.iterations, budget, r.elapsedSeconds,
                r.stopped ? " (stopped early)" : "");
    if (r.config.repeatBlocks) {
        const BlockRepetition& b = r.repetition;
        if (b.active())
            std::printf("blocks      %s tied: every copy scheduled as %s's block, %d layers "
                        "searched\n",
                        b.describe().c_str(), in.net.layers[size_t(b.first)].name.c_str(),
                        b.searchedLayers(int(in.net.layers.size())));
        else
            std::printf("blocks      no repeated block in the model: every layer searched\n");
    }
    if (r.partitionChoice) {
        const PartitionChoiceStats& pc = *r.partitionChoice;
        std::printf("partitions  %d of %d leaves tried run another partition, cost %.6g -> %.6g "
                    "(%lld trees costed%s)\n",
                    pc.changed, pc.leaves, pc.costBefore, r.best.cost, pc.evaluations,
                    pc.complete ? "" : "; the budget ended first");
    }
    std::printf("start cost  %.6g -> best %.6g (%.3fx), best chain %d\n", r.initialEval.cost,
                r.best.cost, r.best.cost > 0 ? r.initialEval.cost / r.best.cost : 0.0, r.bestChain);
    std::printf("throughput  %.0f evaluations/s, %.0f iterations/s/core, mapper memo hits %.1f%%\n",
                r.stats.evaluationsPerSecond, r.stats.iterationsPerSecondPerCore,
                100 * r.stats.mapperHitRate);
    printBlockedLeaves(detail, r.bestTree, in.net, in.hw);
    printSegments(detail, r.bestTree, in.net, in.hw.clockGHz);
    std::printf("tree:\n%s", treeToText(r.bestTree, in.net).c_str());
}

} // namespace

// ---------------------------------------------------------------------------------------
// Shared with generate (cli_search.h).

long long parseInteger(const std::string& opt, const std::string& v, long long min, long long max) {
    size_t used = 0;
    long long i = 0;
    try {
        i = std::stoll(v, &used);
    } catch (...) {
        used = 0;
    }
    if (used == 0 || used != v.size())
        throw UsageError{opt + " expects an integer, got '" + v + "'"};
    if (i < min || i > max)
        throw UsageError{opt + " must be between " + std::to_string(min) + " and " +
                         std::to_string(max)};
    return i;
}

std::optional<long long> stageBytesArg(const Args& a) {
    if (!a.has("--stage-bytes")) return std::nullopt;
    const long long n = parseInteger("--stage-bytes", a.get("--stage-bytes"), 0, 1000000000);
    if (n == 0) return std::nullopt;
    return n;
}

CimRecordsFile::~CimRecordsFile() {
    if (!book) return;
    if (book->added() > 0)
        if (auto e = writeFileAtomic(path, book->toJson().dump(1) + "\n")) {
            std::fprintf(stderr, "tilescope-cli: %s\n", e->message.c_str());
            return;
        }
    std::fprintf(stderr, "%s: %zu records (%zu new), %zu reused\n", path.c_str(), book->size(),
                 book->added(), book->reused());
}

std::optional<Error> attachCimRecords(const Args& a, Hardware& hw,
                                      std::shared_ptr<CimRecordsFile>& out) {
    if (!a.has("--cim-records")) return std::nullopt;
    const std::string path = a.get("--cim-records");
    if (path.empty()) throw UsageError{"--cim-records expects a file"};
    if (hw.arch != TileArch::Cim)
        return Error{"--cim-records: " + hw.name +
                     " has no compute-in-memory tiles (tile.arch \"cim\")"};
    std::shared_ptr<CimRecordBook> book;
    if (std::filesystem::exists(path)) {
        auto text = readFile(path);
        if (!text) return text.error();
        const json j = json::parse(*text, nullptr, false);
        if (j.is_discarded()) return makeError(path, "", "not JSON");
        auto b = CimRecordBook::fromJson(j, path);
        if (!b) return b.error();
        book = *b;
    } else {
        book = std::make_shared<CimRecordBook>();
    }
    hw.cim.records = book;
    out = std::make_shared<CimRecordsFile>();
    out->book = book;
    out->path = path;
    return std::nullopt;
}

// "n,m": the exponents of E^n x D^m, non-negative and not both zero.
Objective parseObjective(const Args& a) {
    Objective o;
    if (!a.has("--objective")) return o;
    const std::string v = a.get("--objective");
    const auto comma = v.find(',');
    const auto bad = [&] {
        return UsageError{
            "--objective expects n,m (two non-negative numbers, e.g. 1,1 for EDP), got '" + v +
            "'"};
    };
    if (comma == std::string::npos || v.find(',', comma + 1) != std::string::npos) throw bad();
    try {
        o.n = parseNumber("--objective", v.substr(0, comma));
        o.m = parseNumber("--objective", v.substr(comma + 1));
    } catch (const UsageError&) {
        throw bad();
    }
    if (o.n < 0 || o.m < 0 || (o.n == 0 && o.m == 0)) throw bad();
    return o;
}

std::optional<int> batchArg(const Args& a) {
    if (!a.has("--batch")) return std::nullopt;
    return int(parseInteger("--batch", a.get("--batch"), 1, 1 << 20));
}

ResultContext resultContext(const Inputs& in, int batch) {
    ResultContext c;
    c.modelPath = in.modelPath;
    c.modelSha256 = in.modelSha;
    c.hw = &in.hw;
    c.batch = batch;
    return c;
}

int writeOut(const std::string& path, const std::string& contents) {
    if (auto e = writeFileAtomic(path, contents)) return userError(e->message);
    return 0;
}

std::string objectiveName(const Objective& o) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "E^%g x D^%g", o.n, o.m);
    return buf;
}

ProgressPrinter::ProgressPrinter(std::string label, bool quiet)
    : m_label(std::move(label)), m_quiet(quiet), m_tty(isatty(fileno(stderr)) != 0) {}

void ProgressPrinter::operator()(const Progress& p) {
    if (m_quiet) return;
    const double frac = p.fraction;
    // Under a time budget the bar is time, and what is left is what people wait for.
    char left[32] = "";
    if (p.secondsLeft >= 0) std::snprintf(left, sizeof left, "  %.1fs left", p.secondsLeft);
    // A phase before annealing (start trees, baselines) has no chain figures yet.
    const bool building = p.iteration == 0 && !p.final;
    const bool newPhase = p.phase != m_phase;
    m_phase = p.phase;
    if (m_tty) {
        constexpr int width = 24;
        const int filled = int(frac * width + 0.5);
        std::string bar(size_t(filled), '#');
        bar.resize(width, '.');
        if (building)
            std::fprintf(stderr, "\r%s [%s] %3.0f%% %s  %.0fs%s\033[K", m_label.c_str(),
                         bar.c_str(), 100 * frac, p.phase.c_str(), p.elapsedSeconds, left);
        else
            std::fprintf(stderr,
                         "\r%s [%s] %3.0f%% %s  best %.4g  now %.4g  T %.4f  acc %3.0f%%  "
                         "%.0fs%s\033[K",
                         m_label.c_str(), bar.c_str(), 100 * frac, p.phase.c_str(), p.bestCost,
                         p.currentCost, p.temperature, 100 * p.acceptanceRate, p.elapsedSeconds,
                         left);
        if (p.final) std::fputc('\n', stderr);
    } else if (building) {
        // Each phase once, as it begins: on a large mesh it may take a while.
        std::fprintf(stderr, "%s: %s, %.1fs%s\n", m_label.c_str(), p.phase.c_str(),
                     p.elapsedSeconds, left);
    } else if (p.final || newPhase || p.elapsedSeconds - m_lastLine >= 1.0) {
        m_lastLine = p.elapsedSeconds;
        std::fprintf(stderr,
                     "%s: %s %lld/%lld iterations (%.0f%%) best %.6g current %.6g T %.5f "
                     "accept %.0f%% %.1fs%s\n",
                     m_label.c_str(), p.phase.c_str(), p.iteration, p.total, 100 * frac, p.bestCost,
                     p.currentCost, p.temperature, 100 * p.acceptanceRate, p.elapsedSeconds, left);
    }
    std::fflush(stderr);
}

// Options shared by anneal and compare.
LayoutChoice layoutChoiceArg(const Args& a) {
    LayoutChoice c;
    if (a.has("--layouts")) {
        const auto parsed = layoutChoiceFromName(a.get("--layouts"));
        if (!parsed)
            throw UsageError{"--layouts takes auto, nchw, nhwc, chwn or nchwc, got '" +
                             a.get("--layouts") + "'"};
        c = *parsed;
    }
    for (const std::string& p : a.all("--pin-layout")) {
        const size_t eq = p.rfind('=');
        const auto l = eq == std::string::npos ? std::nullopt : layoutFromName(p.substr(eq + 1));
        if (!l || eq == 0)
            throw UsageError{"--pin-layout expects TENSOR=LAYOUT (a layer or network input name "
                             "and nchw, nhwc, chwn or nchwc), got '" +
                             p + "'"};
        c.pins[p.substr(0, eq)] = *l;
    }
    return c;
}

SearchOptions searchOptions(const Args& a, const Inputs& in, int& status) {
    SearchOptions s;
    SearchConfig& c = s.cfg;
    c.objective = a.has("--objective") ? parseObjective(a) : defaultObjective(in.hw);
    if (a.has("--seed")) c.seed = parseSeed(a.get("--seed"));
    // The budget: --time, --beta or --iterations, one at a time; by default a time.
    const int budgets = int(a.has("--time")) + int(a.has("--beta")) + int(a.has("--iterations"));
    if (budgets > 1)
        throw UsageError{"--time, --beta and --iterations each set the budget; give one"};
    c.seconds = budgets == 0 ? defaultSearchSeconds() : 0;
    if (a.has("--time")) {
        c.seconds = parseNumber("--time", a.get("--time"));
        if (!(c.seconds > 0) || c.seconds > maxSearchSeconds())
            throw UsageError{"--time must be more than 0 and at most " +
                             std::to_string(long(maxSearchSeconds())) + " seconds"};
    }
    if (a.has("--beta")) {
        c.beta = parseNumber("--beta", a.get("--beta"));
        if (!(c.beta > 0)) throw UsageError{"--beta must be positive"};
        // beta x L iterations per chain: a huge beta must not wrap round to one iteration.
        const double n = std::round(c.beta * double(in.net.layers.size()));
        if (n < 1 || n > double(maxIterationsPerChain()))
            throw UsageError{"--beta " + a.get("--beta") + " x " +
                             std::to_string(in.net.layers.size()) +
                             " layers must give between 1 and " +
                             std::to_string(maxIterationsPerChain()) + " iterations per chain"};
    }
    if (a.has("--iterations"))
        c.iterations =
            parseInteger("--iterations", a.get("--iterations"), 1, maxIterationsPerChain());
    if (a.has("--t0")) {
        c.t0 = parseNumber("--t0", a.get("--t0"));
        if (c.t0 < 0) throw UsageError{"--t0 must not be negative"};
    }
    if (a.has("--alpha")) {
        c.alpha = parseNumber("--alpha", a.get("--alpha"));
        if (!(c.alpha > -1)) throw UsageError{"--alpha must be greater than -1"};
    }
    if (a.has("--mode") && !parseSearchMode(a.get("--mode"), c.mode))
        throw UsageError{"--mode takes set, ls, lp, dp-lp, chiplet, random or ga, got '" +
                         a.get("--mode") + "'"};
    c.chains = defaultSearchChains();
    if (a.has("--chains")) c.chains = int(parseInteger("--chains", a.get("--chains"), 1, 4096));
    c.threads = int(std::max(1u, std::thread::hardware_concurrency()));
    if (a.has("--threads")) c.threads = int(parseInteger("--threads", a.get("--threads"), 1, 4096));
    if (a.has("--warmup")) {
        c.warmupShare = parseNumber("--warmup", a.get("--warmup"));
        if (!(c.warmupShare >= 0 && c.warmupShare < 1))
            throw UsageError{"--warmup must be in [0, 1)"};
    }
    c.portfolio = !a.has("--no-portfolio");
    c.repeatBlocks = a.has("--repeat-blocks");
    c.partitions = a.has("--partitions");
    c.choosePartitions = !a.has("--mapper-partitions");
    if (c.partitions && !c.choosePartitions)
        throw UsageError{"--partitions and --mapper-partitions exclude each other"};
    c.layouts = layoutChoiceArg(a);
    if (a.has("--min-util")) {
        c.minUtilisation = parseNumber("--min-util", a.get("--min-util"));
        if (c.minUtilisation < 0 || c.minUtilisation > 1)
            throw UsageError{"--min-util must be in [0, 1]"};
    }
    if (a.has("--chiplet-cost") && !parseChipletCost(a.get("--chiplet-cost"), c.chiplet.cost))
        throw UsageError{"--chiplet-cost takes method or whole-chiplet, got '" +
                         a.get("--chiplet-cost") + "'"};
    if (a.has("--chiplet-chains") &&
        !parseChipletChains(a.get("--chiplet-chains"), c.chiplet.chains))
        throw UsageError{"--chiplet-chains takes in-out-1 or single-link, got '" +
                         a.get("--chiplet-chains") + "'"};
    c.pinned = a.all("--pin");
    for (const auto& p : c.pinned)
        if (p.empty() || p[0] != '/')
            throw UsageError{"--pin expects a node path such as /0/2, got '" + p + "'"};
    const auto batch = batchArg(a);
    c.totalBatch = batch.value_or(1);
    if (auto u = unknownLayoutPin(c.layouts, in.net)) {
        status = userError(in.modelPath + ": --pin-layout: " + *u);
        return s;
    }
    if (a.has("--init")) {
        s.initPath = a.get("--init");
        auto t = loadTree(s.initPath, in.net);
        if (!t) {
            status = userError(t.error().message);
            return s;
        }
        s.init = std::move(t).value();
        // Without --batch the initial tree's root batch is the batch.
        if (!batch) c.totalBatch = s.init->node(s.init->root).batch;
        if (auto e = validateStructure(*s.init, in.net, c.totalBatch)) {
            status = userError(s.initPath + ": " + e->message);
            return s;
        }
        c.initialTree = s.init;
    }
    return s;
}

// ---------------------------------------------------------------------------------------

// The leaf's alternative partitions (`part=K..B..H..W..` on a leaf's line of a tree names
// one), cheapest first for the leaf alone.
static void printAlternatives(const LayerMappingReport& r) {
    if (r.alternatives.size() < 2) return;
    std::printf("alternatives (each costed alone, energy^%g x delay^%g; a tree names one with "
                "part=... on the leaf's line)\n",
                r.energyExp, r.delayExp);
    for (size_t i = 0; i < r.alternatives.size(); ++i) {
        const auto& alt = r.alternatives[i];
        std::printf("  part=%-16s %12s  %20s  cost %.4g%s\n", partitionToken(alt.factors).c_str(),
                    formatEnergy(alt.energy).c_str(), formatCycles(alt.cycles).c_str(), alt.cost,
                    i == 0 ? "  (the mapper's choice)" : "");
    }
}

int runMapping(const Args& a) {
    parseObjective(a); // argument errors (exit 2) before any file is read
    const std::string layerName = required(a, "--layer");
    const int batch = batchArg(a).value_or(1);
    std::optional<long long> tilesOpt;
    if (a.has("--tiles")) tilesOpt = parseInteger("--tiles", a.get("--tiles"), 1, 64 * 64);
    int status = 0;
    auto in = loadInputs(a, status);
    if (!in) return status;
    const int tiles = int(tilesOpt.value_or(in->hw.tiles()));
    if (tiles > in->hw.tiles())
        throw UsageError{"--tiles must be between 1 and " + std::to_string(in->hw.tiles()) +
                         " (the mesh of " + in->hwName + ")"};
    const int layer = in->net.indexOf(layerName);
    if (layer < 0)
        return userError(in->modelPath + ": no scheduled layer named '" + layerName +
                         "' (tilescope-cli inspect " + in->modelPath + " lists them)");
    const Objective objective = a.has("--objective") ? parseObjective(a) : defaultObjective(in->hw);
    const LayerMappingReport r =
        layerMapping(in->net, in->hw, layer, tiles, batch, objective.n, objective.m);
    if (a.has("--json")) {
        std::cout << layerMappingJson(r, in->hw).dump(2) << "\n";
        return 0;
    }
    const LeafMapping& m = r.mapping;
    std::printf("layer %s (%s), hw %s, %d tile%s, batch %d\n", r.layer.c_str(),
                toString(in->net.layers[size_t(layer)].kind), in->hwName.c_str(), tiles,
                tiles == 1 ? "" : "s", batch);
    std::printf("partition   %s\n", m.partitionLabel().c_str());
    std::printf("loop order  %s\n", m.tiling.c_str());
    std::printf("buffer      %s per tile (input %s, weights %s, output %s) of %s\n",
                formatBytes(m.bufferPerTile()).c_str(),
                formatBytes(m.ifmapPerTile + m.operandBPerTile).c_str(),
                formatBytes(m.weightPerTile).c_str(), formatBytes(m.ofmapPerTile).c_str(),
                formatBytes(in->hw.bufferBytes).c_str());
    if (m.splitsChannels())
        std::printf("reduction   each slot's input channels over %d tiles next to each other; "
                    "the first adds the others' partial sums (%.0f cycles of its vector unit)\n",
                    m.pc, m.reduceCycles);
    if (m.blocked())
        std::printf("blocks      %s per tile: input%s and output above are one block's, two "
                    "resident; each block reads and stores through DRAM\n",
                    m.blockLabel().c_str(), m.streamsWeights() ? ", weights" : "");
    std::printf("traffic     %s buffer accesses, input multicast %d, input DMA runs %lld\n",
                formatBytes(m.bufferAccessBytes).c_str(), m.inputMulticast,
                static_cast<long long>(m.inputDmaRuns));
    std::printf("cycles      %s, utilisation %.1f%%\n", formatCycles(m.cycles).c_str(),
                100 * m.peUtilisation);
    std::string levels; // the in-tile storage levels, when the template lists them
    for (size_t i = 0; i < in->hw.levels.size(); ++i)
        levels += ", " + in->hw.levels[i].name + " " + formatEnergy(r.levelEnergy[i]);
    std::printf("energy      %s (MAC %s, buffer %s, weight write %s%s)\n",
                formatEnergy(r.energy()).c_str(), formatEnergy(r.macEnergy).c_str(),
                formatEnergy(r.bufferEnergy).c_str(), formatEnergy(r.weightWriteEnergy).c_str(),
                levels.c_str());
    printAlternatives(r);
    if (m.cim.used) {
        const CimLeafMapping& c = m.cim;
        std::printf("crossbars   %lld blocks per tile, %d crossbars, partial sums %s of %s\n",
                    static_cast<long long>(c.blocksPerTile), c.crossbars,
                    formatBytes(c.psumBytes).c_str(),
                    formatBytes(in->hw.cim.psumBufferBytes).c_str());
        std::printf("reads       %s of input windows from the buffer (all tiles)\n",
                    formatBytes(c.inputReads).c_str());
        std::printf("programs    %lld (order %s); default template %lld (order %s)\n",
                    static_cast<long long>(c.programmings), c.order.c_str(),
                    static_cast<long long>(c.programmingsDefault), c.defaultOrder.c_str());
        std::printf("write time  %s of %s (compute %s)\n", formatCycles(c.exposedWrite).c_str(),
                    formatCycles(m.cycles).c_str(), formatCycles(c.computeCycles).c_str());
    }
    return 0;
}

int runEvaluate(const Args& a) {
    parseObjective(a); // argument errors (exit 2) before any file is read
    const LayoutChoice layouts = layoutChoiceArg(a);
    const auto batchOpt = batchArg(a);
    const std::string treePath = required(a, "--tree");
    int status = 0;
    auto in = loadInputs(a, status);
    if (!in) return status;
    const Objective objective = a.has("--objective") ? parseObjective(a) : defaultObjective(in->hw);
    auto tree = loadTree(treePath, in->net);
    if (!tree) return userError(tree.error().message);
    const int batch = batchOpt.value_or(tree->node(tree->root).batch);
    if (auto e = validateStructure(*tree, in->net, batch))
        return userError(treePath + ": " + e->message);

    if (auto u = unknownLayoutPin(layouts, in->net))
        return userError(in->modelPath + ": --pin-layout: " + *u);
    const auto t0 = std::chrono::steady_clock::now();
    const Evaluation e = detailOf(*in, *tree, batch, objective, 0.75, layouts);
    ResultContext ctx = resultContext(*in, batch);
    ctx.elapsedSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    if (a.has("--json")) {
        if (int s = writeOut(a.get("--json"),
                             evaluationResultJson(e, *tree, in->net, ctx).dump(2) + "\n"))
            return s;
    } else {
        printEvaluation(e, *in, batch);
        if (e.valid) {
            printBlockedLeaves(e, *tree, in->net, in->hw);
            printSegments(e, *tree, in->net, in->hw.clockGHz);
        }
    }
    if (!e.valid) return userError(treePath + ": invalid schedule: " + e.reason);
    return 0;
}

int runAnneal(const Args& a) {
    parseObjective(a); // argument errors (exit 2) before any file is read
    int status = 0;
    auto in = loadInputs(a, status);
    if (!in) return status;
    SearchOptions so = searchOptions(a, *in, status);
    if (status) return status;

    ProgressPrinter printer(toString(so.cfg.mode), a.has("--quiet"));
    Interruptible stop;
    auto res = runSearch(
        in->net, in->hw, so.cfg,
        [&](const Progress& p) {
            stop.poll();
            printer(p);
        },
        stop.source.get_token());
    if (!res)
        return userError((so.initPath.empty() ? in->modelPath : so.initPath) + ": " +
                         res.error().message);
    const SearchResult& r = *res;
    const Evaluation detail = r.bestDetail
                                  ? *r.bestDetail
                                  : detailOf(*in, r.bestTree, so.cfg.totalBatch, so.cfg.objective,
                                             so.cfg.minUtilisation, so.cfg.layouts);
    ResultContext ctx = resultContext(*in, so.cfg.totalBatch);
    ctx.seed = r.seed;
    ctx.iterations = r.iterations;
    ctx.elapsedSeconds = r.elapsedSeconds;

    if (a.has("--json")) {
        if (int s =
                writeOut(a.get("--json"), searchResultJson(r, detail, in->net, ctx).dump(2) + "\n"))
            return s;
    } else {
        printSearchSummary(r, detail, *in);
    }
    if (a.has("--tree-out"))
        if (int s = writeOut(a.get("--tree-out"), treeToText(r.bestTree, in->net))) return s;
    if (r.stopped) {
        std::fprintf(stderr, "tilescope-cli: interrupted; the best tree so far was reported\n");
        return 130;
    }
    return 0;
}

int runCompare(const Args& a) {
    parseObjective(a);
    int status = 0;
    auto in = loadInputs(a, status);
    if (!in) return status;
    SearchOptions so = searchOptions(a, *in, status);
    if (status) return status;
    // The baselines always run; --mode chooses the full-space search of the last row.
    if (so.cfg.mode != SearchMode::Set && so.cfg.mode != SearchMode::Genetic)
        throw UsageError{"compare: --mode takes set or ga (the full-space search), got '" +
                         a.get("--mode") + "'"};

    Interruptible stop;
    json out = {
        {"model", in->modelPath},       {"model_sha256", in->modelSha},
        {"hw", hardwareToJson(in->hw)}, {"batch", so.cfg.totalBatch},
        {"seed", so.cfg.seed},          {"objective", {so.cfg.objective.n, so.cfg.objective.m}}};
    if (!in->net.dims.empty()) out["dims"] = in->net.dims;
    struct Row {
        SearchMode mode;
        std::string key, label;
        double cost = 0, energy = 0, delay = 0, edp = 0, seconds = 0;
        bool valid = false;
    };
    auto keyOf = [](SearchMode m) { return m == SearchMode::Set ? "sa" : toString(m); };
    std::optional<ProgressPrinter> printer;
    CompareHooks hooks;
    // Ctrl-C stops the running mode and ends the comparison after it.
    hooks.beforeMode = [&](SearchMode m, std::size_t, std::size_t) {
        printer.emplace(keyOf(m), a.has("--quiet"));
        return stop.poll() ? std::nullopt : std::optional(stop.source.get_token());
    };
    hooks.progress = [&](SearchMode, const Progress& p) {
        stop.poll();
        (*printer)(p);
    };
    std::vector<Row> rows;
    for (const CompareRun& run : compareStrategies(in->net, in->hw, so.cfg, hooks)) {
        Row row;
        row.mode = run.mode;
        row.key = keyOf(run.mode);
        row.label = row.key;
        if (!run.result)
            return userError(in->modelPath + ": " + row.key + ": " + run.error.message);
        const SearchResult& res = *run.result;
        const SearchConfig& cfg = res.config;
        // The full-space row keeps its key "sa" (scripts read it) and shows what ran.
        if (cfg.mode == SearchMode::Genetic) row.label = toString(cfg.mode);
        const Evaluation detail = res.bestDetail
                                      ? *res.bestDetail
                                      : detailOf(*in, res.bestTree, cfg.totalBatch, cfg.objective,
                                                 cfg.minUtilisation, cfg.layouts);
        ResultContext ctx = resultContext(*in, cfg.totalBatch);
        ctx.seed = res.seed;
        ctx.iterations = res.iterations;
        ctx.elapsedSeconds = res.elapsedSeconds;
        out[row.key] = searchResultJson(res, detail, in->net, ctx);
        row.valid = detail.valid;
        row.cost = detail.cost;
        row.energy = detail.energy.total();
        row.delay = detail.delay;
        row.edp = edpOf(detail);
        row.seconds = res.elapsedSeconds;
        rows.push_back(row);
    }
    if (stop.poll()) {
        std::fprintf(stderr, "tilescope-cli: interrupted; nothing written\n");
        return 130;
    }
    auto ratio = [](double a, double b) { return b > 0 ? json(a / b) : json(nullptr); };
    const Row& sa = rows.back();
    json ratios = json::object();
    for (const Row& r : rows) {
        if (r.mode == SearchMode::Set) continue;
        std::string k = r.key;
        std::replace(k.begin(), k.end(), '-', '_');
        ratios["sa_over_" + k] = ratio(sa.cost, r.cost);
        ratios["edp_sa_over_" + k] = ratio(sa.edp, r.edp);
        ratios["energy_sa_over_" + k] = ratio(sa.energy, r.energy);
        ratios["delay_sa_over_" + k] = ratio(sa.delay, r.delay);
    }
    out["ratios"] = ratios;
    if (a.has("--json")) {
        if (int s = writeOut(a.get("--json"), out.dump(2) + "\n")) return s;
    } else {
        std::printf("model %s, hw %s (%dx%d), batch %d, objective %s, seed %llu\n",
                    in->modelPath.c_str(), in->hw.name.c_str(), in->hw.meshX, in->hw.meshY,
                    so.cfg.totalBatch, objectiveName(so.cfg.objective).c_str(),
                    (unsigned long long)so.cfg.seed);
        std::printf("%-7s %12s %28s %14s %14s %8s\n", "mode", "energy", "delay", "cost", "EDP",
                    "time s");
        for (const Row& r : rows)
            std::printf("%-7s %12s %28s %14.6g %14.6g %8.2f\n", r.label.c_str(),
                        formatEnergy(r.energy).c_str(),
                        formatTime(r.delay, in->hw.clockGHz).c_str(), r.cost, r.edp, r.seconds);
        for (const Row& r : rows) {
            if (r.mode == SearchMode::Set) continue;
            std::string upper = r.key;
            for (char& ch : upper)
                ch = char(std::toupper((unsigned char)ch));
            std::printf("SA/%-5s cost %.4f  EDP %.4f\n", upper.c_str(),
                        r.cost > 0 ? sa.cost / r.cost : 0.0, r.edp > 0 ? sa.edp / r.edp : 0.0);
        }
    }
    return 0;
}

} // namespace tilescope::cli
