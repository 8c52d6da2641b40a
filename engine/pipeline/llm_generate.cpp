#include "pipeline/llm_generate.h"

#include "eval/evaluator.h"
#include "model/model_loader.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace tilescope {

using nlohmann::json;

namespace {

std::string listNames(const std::vector<FreeDimension>& dims) {
    std::string s;
    for (const FreeDimension& d : dims)
        s += (s.empty() ? "" : ", ") + d.name;
    return s;
}

bool isFree(const std::vector<FreeDimension>& dims, const std::string& name) {
    return std::any_of(dims.begin(), dims.end(),
                       [&](const FreeDimension& d) { return d.name == name; });
}

// The past axis: the one named dimension the KV cache inputs are concatenated along.
Result<std::string> pastFromCache(const std::string& path, const std::vector<KvCacheInput>& kv) {
    std::set<std::string> names;
    for (const KvCacheInput& k : kv)
        if (!k.dimName.empty()) names.insert(k.dimName);
    if (names.empty())
        return makeError(path, "",
                         kv.empty() ? "no KV cache input (a graph input concatenated into a graph "
                                      "output); name the past axis with --past-dim"
                                    : "the KV cache inputs have no free length axis; name the "
                                      "past axis with --past-dim");
    if (names.size() > 1)
        return makeError(path, "",
                         "the KV cache inputs are concatenated along several free axes (" +
                             *names.begin() + ", " + *std::next(names.begin()) +
                             "); name the past axis with --past-dim");
    return *names.begin();
}

// (1 - f) a + f b
double lerp(double a, double b, double f) {
    return a + (b - a) * f;
}

} // namespace

Result<DecoderAxes> findDecoderAxes(const std::string& path, const std::string& seqDim,
                                    const std::string& pastDim) {
    auto graph = graphInterface(path);
    if (!graph) return graph.error();
    const std::vector<FreeDimension>& free = graph->free;
    if (free.empty())
        return makeError(path, "",
                         "the model has no free dimensions (a fixed-shape export: give "
                         "--prefill A.onnx --decode B.onnx, or export with dynamic seq and past "
                         "axes)");
    const std::vector<KvCacheInput>& kv = graph->kvCache;
    DecoderAxes axes;
    for (const auto& [opt, name] :
         {std::pair{"--seq-dim", seqDim}, std::pair{"--past-dim", pastDim}})
        if (!name.empty() && !isFree(free, name))
            return makeError(path, "",
                             std::string(opt) + " '" + name +
                                 "' is not a free dimension of the model (its free dimensions: " +
                                 listNames(free) + ")");
    if (!pastDim.empty()) {
        axes.past = pastDim;
    } else {
        auto p = pastFromCache(path, kv);
        if (!p) return p.error();
        axes.past = *p;
    }
    for (const KvCacheInput& k : kv)
        if (k.dimName == axes.past) axes.kvCache.push_back(k);
    if (!seqDim.empty()) {
        axes.seq = seqDim;
    } else {
        std::vector<std::string> others;
        for (const FreeDimension& d : free)
            if (d.name != axes.past) others.push_back(d.name);
        if (others.size() != 1)
            return makeError(path, "",
                             others.empty() ? "no free dimension besides the past axis '" +
                                                  axes.past + "' to be the sequence"
                                            : "several free dimensions could be the sequence (" +
                                                  listNames(free) + " besides the past axis '" +
                                                  axes.past + "'); name it with --seq-dim");
        axes.seq = others.front();
    }
    if (axes.seq == axes.past)
        return makeError(path, "", "the sequence and the past axis are both '" + axes.seq + "'");
    return axes;
}

std::vector<std::int64_t> decodeContexts(const GenerateRequest& r) {
    const std::int64_t steps = std::max<std::int64_t>(1, r.tokens - 1);
    const std::int64_t k = std::clamp<std::int64_t>(r.decodePoints, 1, steps);
    std::vector<std::int64_t> out;
    for (std::int64_t i = 0; i < k; ++i) {
        const std::int64_t past =
            r.prompt + (k == 1 ? 0 : std::llround(double(i) * double(steps - 1) / double(k - 1)));
        if (out.empty() || out.back() != past) out.push_back(past);
    }
    return out;
}

GenerateFigures generateFigures(const Evaluation& prefill, const std::vector<DecodePoint>& decode,
                                const GenerateRequest& r, double clockGHz,
                                std::optional<Bytes> kvBytesPerToken) {
    GenerateFigures f;
    f.decode = decode;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    f.ttft = f.tpot = f.tokensPerSecond = f.energyPerToken = nan;
    if (kvBytesPerToken)
        f.kvCacheBytes = *kvBytesPerToken * double(r.prompt + r.tokens) * double(r.batch);
    f.kvOnChip = r.kvOnChip;
    f.weightsOnChip = r.weightsOnChip;
    if (!prefill.valid) {
        f.reason = "prefill: " + prefill.reason;
        return f;
    }
    if (decode.empty()) {
        f.reason = "no decode step was scheduled";
        return f;
    }
    for (const DecodePoint& p : decode)
        if (!p.eval.valid) {
            f.reason = "decode (past " + std::to_string(p.past) + "): " + p.eval.reason;
            return f;
        }
    std::vector<DecodePoint> pts = decode;
    std::sort(pts.begin(), pts.end(),
              [](const DecodePoint& a, const DecodePoint& b) { return a.past < b.past; });
    // Step i (1 .. G - 1) reads P + i - 1 cached tokens: a straight line between the two
    // scheduled points around it, the nearest one outside their range.
    const std::int64_t steps = r.tokens - 1;
    double delay = 0, energy = 0;
    std::size_t seg = 0;
    for (std::int64_t i = 0; i < steps; ++i) {
        const double past = double(r.prompt + i);
        while (seg + 1 < pts.size() && double(pts[seg + 1].past) <= past)
            ++seg;
        const DecodePoint& a = pts[seg];
        const DecodePoint& b = seg + 1 < pts.size() ? pts[seg + 1] : a;
        const double span = double(b.past - a.past);
        const double t = span > 0 ? std::clamp((past - double(a.past)) / span, 0.0, 1.0) : 0.0;
        delay += lerp(a.eval.delay, b.eval.delay, t);
        energy += lerp(a.eval.energy.total(), b.eval.energy.total(), t);
    }
    f.valid = true;
    f.ttft = prefill.delay;
    f.tpot = steps > 0 ? delay / double(steps) : 0.0;
    const double tokens = double(r.batch) * double(r.tokens);
    const double seconds = (f.ttft + delay) / (clockGHz * 1e9);
    f.tokensPerSecond = seconds > 0 ? tokens / seconds : nan;
    f.energyPerToken = (prefill.energy.total() + energy) / tokens;
    return f;
}

std::optional<Bytes> kvCacheBytesPerToken(const Network& net, const std::vector<KvCacheInput>& kv,
                                          std::int64_t past) {
    if (kv.empty()) return std::nullopt;
    Bytes perToken = 0;
    for (const KvCacheInput& k : kv) {
        const auto it = net.inputBytes.find(k.input);
        const std::int64_t length = k.length > 0 ? k.length : past;
        if (it == net.inputBytes.end() || length <= 0) return std::nullopt;
        perToken += Bytes(it->second) / double(length);
    }
    return perToken;
}

json generateFiguresJson(const GenerateFigures& f, const GenerateRequest& r, double clockGHz) {
    auto num = [](double d) { return std::isfinite(d) ? json(d) : json(nullptr); };
    json points = json::array();
    for (const DecodePoint& p : f.decode)
        points.push_back({{"past", p.past},
                          {"valid", p.eval.valid},
                          {"delay_cycles", num(p.eval.valid ? p.eval.delay : NAN)},
                          {"energy_pj", num(p.eval.valid ? p.eval.energy.total() : NAN)}});
    return {{"valid", f.valid},
            {"reason", f.reason},
            {"prompt", r.prompt},
            {"tokens", r.tokens},
            {"batch", r.batch},
            {"clock_ghz", clockGHz},
            {"ttft_cycles", num(f.ttft)},
            {"tpot_cycles", num(f.tpot)},
            {"tokens_per_s", num(f.tokensPerSecond)},
            {"energy_per_token_pj", num(f.energyPerToken)},
            {"kv_cache_bytes", f.kvCacheBytes ? json(*f.kvCacheBytes) : json(nullptr)},
            {"kv_cache", f.kvOnChip ? "on-chip" : "dram"},
            {"weights", f.weightsOnChip ? "on-chip" : "dram"},
            {"weight_bytes", f.weightBytes},
            {"decode_points", points}};
}

namespace {

struct PhasePlan {
    std::string name, modelPath;
    std::int64_t seq = 0, past = 0;
    ImportOptions import;
};

std::vector<PhasePlan> planPhases(const GenerateSources& src, const GenerateRequest& r) {
    std::vector<PhasePlan> plan;
    if (src.model.empty()) {
        plan.push_back({"prefill", src.prefill, 0, 0, src.import});
        plan.push_back({"decode", src.decode, 0, 0, src.import});
        return plan;
    }
    PhasePlan prefill{"prefill", src.model, r.prompt, 1, src.import};
    prefill.import.dims[src.axes.seq] = r.prompt;
    prefill.import.dims[src.axes.past] = 1;
    plan.push_back(prefill);
    for (std::int64_t past : decodeContexts(r)) {
        PhasePlan d{"decode", src.model, 1, past, src.import};
        d.import.dims[src.axes.seq] = 1;
        d.import.dims[src.axes.past] = past;
        plan.push_back(d);
    }
    return plan;
}

} // namespace

Result<GenerateRun> runGenerate(const GenerateSources& src, const Hardware& hw,
                                const SearchConfig& config, const GenerateRequest& r,
                                const GenerateHooks& hooks) {
    GenerateRun run;
    // Crossbars are programmed in every run (docs/cost-model.md §8): nothing stays.
    if (r.weightsOnChip && hw.arch == TileArch::Cim)
        return makeError(hw.name, "",
                         "weights on chip: compute-in-memory tiles program their crossbars "
                         "in every run, so the weights are loaded anyway; keep them in DRAM");
    const std::vector<PhasePlan> plan = planPhases(src, r);
    // The KV cache inputs: the decoder's, or a fixed decode export's (their fixed length is
    // the decode step's past).
    std::vector<KvCacheInput> kv = src.axes.kvCache;
    if (src.model.empty())
        if (auto fixed = kvCacheInputs(src.decode)) kv = *fixed;
    SearchConfig cfg = config;
    cfg.totalBatch = r.batch;
    EvalOptions opt = evalOptionsOf(cfg);
    opt.detail = true;
    opt.maxIntervals = 0;
    for (std::size_t i = 0; i < plan.size(); ++i) {
        const PhasePlan& p = plan[i];
        const std::string label =
            p.name +
            (p.past > 1 || p.name == "decode" ? " (past " + std::to_string(p.past) + ")" : "");
        // The decode steps keep the cache on chip; the prefill makes it (its one-token past
        // is the import's stand-in for none) and stores it as with the cache in DRAM, and
        // moving it into the decode step's tiles once is not charged (docs/cli.md). The
        // same for the weights: loaded by the prefill, held by every decode step.
        ImportOptions import = p.import;
        if (p.name == "decode") {
            if (r.kvOnChip)
                for (const KvCacheInput& k : kv)
                    import.keptInputs.push_back(k.input);
            import.keepWeights = r.weightsOnChip;
        }
        auto net = loadModel(p.modelPath, import);
        if (!net) return net.error();
        std::stop_token stop;
        if (hooks.beforePhase) {
            auto token = hooks.beforePhase(label, i, plan.size());
            if (!token) {
                run.stopped = true;
                return run;
            }
            stop = *token;
        }
        GeneratePhase phase{p.name, p.modelPath, p.seq, p.past, nullptr, {}, {}};
        if (src.model.empty() && p.name == "decode")
            phase.past = kv.empty() ? 0 : kv.front().length;
        phase.net = std::make_shared<const Network>(std::move(net).value());
        auto res = runSearch(*phase.net, hw, cfg, hooks.progress, stop);
        if (!res) return makeError(p.modelPath, label, res.error().message);
        phase.search = std::move(res).value();
        phase.detail = phase.search.bestDetail
                           ? *phase.search.bestDetail
                           : evaluate(*phase.net, hw, phase.search.bestTree, cfg.totalBatch, opt);
        run.stopped = run.stopped || phase.search.stopped;
        run.phases.push_back(std::move(phase));
    }
    std::vector<DecodePoint> decode;
    for (std::size_t i = 1; i < run.phases.size(); ++i)
        decode.push_back({run.phases[i].past, run.phases[i].detail});
    const GeneratePhase& last = run.phases.back();
    run.figures = generateFigures(run.phases.front().detail, decode, r, hw.clockGHz,
                                  kvCacheBytesPerToken(*last.net, kv, last.past));
    run.figures.weightBytes = double(last.net->totalWeightBytes()) * hw.dataBits / 8.0;
    return run;
}

std::string phaseFolder(const GeneratePhase& p) {
    if (p.name == "decode" && p.past > 0) return "decode-past" + std::to_string(p.past);
    return p.name;
}

std::vector<PhaseProgram> exportPhases(const GenerateRun& run, const Hardware& hw,
                                       const SearchConfig& config, int batch,
                                       const std::string& dir, const ProgramFormats& formats) {
    std::vector<PhaseProgram> programs;
    const EvalOptions opt = evalOptionsOf(config);
    for (const GeneratePhase& p : run.phases) {
        PhaseProgram& out = programs.emplace_back();
        out.folder = dir + "/" + phaseFolder(p);
        if (!p.detail.valid) continue;
        EvalContext ctx(*p.net, hw);
        auto c =
            exportAndReplay(ctx, p.search.bestTree, batch, opt, p.modelPath, out.folder, formats);
        if (c)
            out.check = *c;
        else
            out.error = c.error().message;
    }
    return programs;
}

} // namespace tilescope
