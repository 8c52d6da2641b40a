// generate (docs/cli.md): a decoder's prefill and decode steps, each scheduled as anneal
// schedules a model, and the LLM figures of engine/pipeline/llm_generate.h on stdout or in
// the --json result.
#include "cli_commands.h"
#include "cli_search.h"
#include "model/model_loader.h"
#include "pipeline/llm_generate.h"
#include "util/fileio.h"
#include "util/units.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>

namespace tilescope::cli {

using nlohmann::json;

namespace {

std::string requiredValue(const Args& a, const std::string& opt) {
    if (!a.has(opt) || a.get(opt).empty()) throw UsageError{opt + " is required"};
    return a.get(opt);
}

// The request and where the phases come from; argument errors throw before any file is read.
GenerateRequest requestOf(const Args& a) {
    const bool fixed = a.has("--prefill") || a.has("--decode");
    if (fixed) {
        if (!a.has("--prefill") || !a.has("--decode"))
            throw UsageError{"--prefill and --decode go together (two fixed-shape exports)"};
        if (!a.positional.empty())
            throw UsageError{"give MODEL or --prefill A.onnx --decode B.onnx, not both"};
        if (a.has("--seq-dim") || a.has("--past-dim"))
            throw UsageError{"--seq-dim and --past-dim name the free axes of one MODEL, not of "
                             "fixed exports"};
    } else if (a.positional.size() != 1) {
        throw UsageError{
            "expected exactly one MODEL argument (or --prefill A.onnx --decode B.onnx)"};
    }
    GenerateRequest r;
    r.prompt = parseInteger("--prompt", requiredValue(a, "--prompt"), 1, 1LL << 24);
    r.tokens = parseInteger("--tokens", requiredValue(a, "--tokens"), 2, 1LL << 24);
    r.batch = batchArg(a).value_or(1);
    if (a.has("--points")) r.decodePoints = int(parseInteger("--points", a.get("--points"), 1, 64));
    if (a.has("--kv-cache")) {
        const std::string where = a.get("--kv-cache");
        if (where != "dram" && where != "on-chip")
            throw UsageError{"--kv-cache takes dram or on-chip, got '" + where + "'"};
        r.kvOnChip = where == "on-chip";
    }
    if (a.has("--weights")) {
        const std::string where = a.get("--weights");
        if (where != "dram" && where != "on-chip")
            throw UsageError{"--weights takes dram or on-chip, got '" + where + "'"};
        r.weightsOnChip = where == "on-chip";
    }
    return r;
}

// The sources, and the network the search options are checked against (the prefill's: every
// phase has its layers). Errors (exit 1) name the file.
std::optional<GenerateSources> sourcesOf(const Args& a, const GenerateRequest& r, Inputs& in,
                                         int& status) {
    GenerateSources src;
    src.import = importOptions(a);
    ImportOptions prefill = src.import;
    if (a.positional.empty()) {
        src.prefill = a.get("--prefill");
        src.decode = a.get("--decode");
        in.modelPath = src.prefill;
    } else {
        src.model = in.modelPath = a.positional[0];
        auto axes = findDecoderAxes(src.model, a.get("--seq-dim"), a.get("--past-dim"));
        if (!axes) {
            status = userError(axes.error().message);
            return std::nullopt;
        }
        for (const std::string& d : {axes->seq, axes->past})
            if (src.import.dims.count(d)) {
                status = userError(src.model + ": --dim " + d +
                                   ": the sequence and past axes are set by --prompt and --tokens");
                return std::nullopt;
            }
        src.axes = std::move(axes).value();
        prefill.dims[src.axes.seq] = r.prompt;
        prefill.dims[src.axes.past] = 1;
    }
    if (!loadModelAndHardware(in, prefill, status)) return std::nullopt;
    return src;
}

using PhasePrograms = std::vector<PhaseProgram>; // `generate --export`, per phase

// The keys `simulate --json` uses for the same figures, and the program's own DRAM bytes.
json programJson(const ProgramCheck& c, const std::string& dir) {
    return {{"dir", dir},
            {"instructions", c.instructions},
            {"deadlock_free", c.deadlockFree},
            {"delay_cycles", c.simulated},
            {"evaluator_delay_cycles", c.estimated},
            {"delay_ratio", c.agreement.ratio},
            {"models_agree", c.agreement.agrees},
            {"dram_bytes", c.simulatedDramBytes},
            {"program_dram_bytes", c.programDramBytes},
            {"schedule_dram_bytes", c.scheduleDramBytes}};
}

json generateJson(const GenerateRun& run, const GenerateSources& src, const GenerateRequest& r,
                  const Inputs& in, const SearchConfig& cfg, const PhasePrograms& programs) {
    json j = generateFiguresJson(run.figures, r, in.hw.clockGHz);
    j["model"] = src.model.empty() ? json(nullptr) : json(src.model);
    if (!src.model.empty()) {
        j["seq_dim"] = src.axes.seq;
        j["past_dim"] = src.axes.past;
    } else {
        j["prefill_model"] = src.prefill;
        j["decode_model"] = src.decode;
    }
    j["hw"] = hardwareToJson(in.hw);
    j["seed"] = cfg.seed;
    j["objective"] = {cfg.objective.n, cfg.objective.m};
    json phases = json::array();
    for (std::size_t i = 0; i < run.phases.size(); ++i) {
        const GeneratePhase& p = run.phases[i];
        Inputs pin;
        pin.modelPath = p.modelPath;
        auto sha = sha256File(p.modelPath);
        pin.modelSha = sha ? *sha : "";
        ResultContext ctx = resultContext(pin, r.batch);
        ctx.hw = &in.hw;
        ctx.seed = p.search.seed;
        ctx.iterations = p.search.iterations;
        ctx.elapsedSeconds = p.search.elapsedSeconds;
        phases.push_back({{"phase", p.name},
                          {"seq", p.seq},
                          {"past", p.past},
                          {"result", searchResultJson(p.search, p.detail, *p.net, ctx)}});
        if (i >= programs.size()) continue;
        const PhaseProgram& pp = programs[i];
        if (pp.check)
            phases.back()["program"] = programJson(*pp.check, pp.folder);
        else if (!pp.error.empty())
            phases.back()["program"] = {{"dir", pp.folder}, {"error", pp.error}};
    }
    j["phases"] = phases;
    return j;
}

// A size the phase was imported with; "-" where a fixed export set it.
std::string sizeText(std::int64_t v) {
    return v > 0 ? std::to_string(v) : "-";
}

// With --export: per phase, its folder, the replay against the estimate and the DRAM bytes.
void printPrograms(const GenerateRun& run, const PhasePrograms& programs) {
    int width = 7;
    for (const PhaseProgram& pp : programs)
        width = std::max(width, int(pp.folder.size()));
    std::printf("%-8s %6s %-*s %12s %14s %14s %8s %s\n", "phase", "past", width, "program",
                "instructions", "estimate", "replay", "ratio", "DRAM program / schedule");
    for (std::size_t i = 0; i < run.phases.size() && i < programs.size(); ++i) {
        const GeneratePhase& p = run.phases[i];
        const PhaseProgram& pp = programs[i];
        if (!pp.error.empty())
            std::printf("%-8s %6s %-*s failed: %s\n", p.name.c_str(), sizeText(p.past).c_str(),
                        width, pp.folder.c_str(), pp.error.c_str());
        if (!pp.check) continue;
        const ProgramCheck& c = *pp.check;
        std::printf("%-8s %6s %-*s %12zu %14.0f %14.0f %8.3f %.0f / %.0f%s\n", p.name.c_str(),
                    sizeText(p.past).c_str(), width, pp.folder.c_str(), c.instructions, c.estimated,
                    c.simulated, c.agreement.ratio, c.programDramBytes, c.scheduleDramBytes,
                    c.agreement.agrees ? "" : "  (replay outside 15% of the estimate)");
    }
}

void printGenerate(const GenerateRun& run, const GenerateSources& src, const GenerateRequest& r,
                   const Inputs& in, const SearchConfig& cfg) {
    const double clock = in.hw.clockGHz;
    const std::string models = src.model.empty()
                                   ? "prefill " + src.prefill + ", decode " + src.decode
                                   : "model " + src.model;
    std::printf("%s, hw %s (%dx%d), prompt %lld, %lld tokens, batch %d, objective %s\n",
                models.c_str(), in.hw.name.c_str(), in.hw.meshX, in.hw.meshY, (long long)r.prompt,
                (long long)r.tokens, r.batch, objectiveName(cfg.objective).c_str());
    std::printf("%-8s %6s %6s %26s %12s %12s %10s %8s\n", "phase", "seq", "past", "delay", "energy",
                "DRAM", "iterations", "time s");
    for (const GeneratePhase& p : run.phases) {
        const Evaluation& e = p.detail;
        if (!e.valid) {
            std::printf("%-8s %6s %6s invalid: %s\n", p.name.c_str(), sizeText(p.seq).c_str(),
                        sizeText(p.past).c_str(), e.reason.c_str());
            continue;
        }
        std::printf("%-8s %6s %6s %26s %12s %12s %10lld %8.2f\n", p.name.c_str(),
                    sizeText(p.seq).c_str(), sizeText(p.past).c_str(),
                    formatTime(e.delay, clock).c_str(), formatEnergy(e.energy.total()).c_str(),
                    formatBytes(e.dramBytes).c_str(), p.search.iterations, p.search.elapsedSeconds);
    }
    const GenerateFigures& f = run.figures;
    if (!f.valid) return;
    std::printf("TTFT        %s\n", formatTime(f.ttft, clock).c_str());
    std::printf("TPOT        %s (mean over %lld decode steps)\n", formatTime(f.tpot, clock).c_str(),
                (long long)(r.tokens - 1));
    std::printf("tokens/s    %.6g (batch %d x %lld tokens over TTFT + %lld x TPOT)\n",
                f.tokensPerSecond, r.batch, (long long)r.tokens, (long long)(r.tokens - 1));
    std::printf("energy      %s per token\n", formatEnergy(f.energyPerToken).c_str());
    if (f.kvCacheBytes)
        std::printf("KV cache    %s at %lld tokens, %s\n", formatBytes(*f.kvCacheBytes).c_str(),
                    (long long)(r.prompt + r.tokens), f.kvOnChip ? "kept on chip" : "in DRAM");
    std::printf("weights     %s, %s\n", formatBytes(f.weightBytes).c_str(),
                f.weightsOnChip ? "kept on chip across decode steps"
                                : "loaded from DRAM in every step");
}

} // namespace

int runGenerate(const Args& a) {
    parseObjective(a); // argument errors (exit 2) before any file is read
    const GenerateRequest req = requestOf(a);
    const std::string exportDir = a.get("--export");
    if (a.has("--export") && exportDir.empty()) throw UsageError{"--export needs a folder"};
    ProgramFormats formats;
    if (a.has("--formats")) {
        if (!a.has("--export")) throw UsageError{"--formats goes with --export DIR"};
        auto f = parseProgramFormats(a.get("--formats"));
        if (!f) throw UsageError{"--formats: " + f.error().message};
        formats = *f;
    }
    Inputs in;
    in.hwName = requiredValue(a, "--hw");
    const std::optional<long long> stageBytes = stageBytesArg(a);
    int status = 0;
    auto src = sourcesOf(a, req, in, status);
    if (!src) return status;
    if (stageBytes) in.hw.stageBytes = *stageBytes; // every phase's stages (docs/isa.md)
    SearchOptions so = searchOptions(a, in, status);
    if (status) return status;

    Interruptible stop;
    std::optional<ProgressPrinter> printer;
    GenerateHooks hooks;
    hooks.beforePhase = [&](const std::string& phase, std::size_t, std::size_t) {
        printer.emplace(phase, a.has("--quiet"));
        return stop.poll() ? std::nullopt : std::optional(stop.source.get_token());
    };
    hooks.progress = [&](const Progress& p) {
        stop.poll();
        (*printer)(p);
    };
    auto run = runGenerate(*src, in.hw, so.cfg, req, hooks);
    if (!run) return userError(run.error().message);
    if (run->stopped) {
        std::fprintf(stderr, "tilescope-cli: interrupted; nothing written\n");
        return 130;
    }
    PhasePrograms programs;
    if (!exportDir.empty())
        programs = exportPhases(*run, in.hw, so.cfg, req.batch, exportDir, formats);
    if (a.has("--json")) {
        const json j = generateJson(*run, *src, req, in, so.cfg, programs);
        if (int s = writeOut(a.get("--json"), j.dump(2) + "\n")) return s;
    } else {
        printGenerate(*run, *src, req, in, so.cfg);
        if (!exportDir.empty()) printPrograms(*run, programs);
    }
    if (!run->figures.valid)
        return userError(in.modelPath + ": no valid schedule: " + run->figures.reason);
    // The results are written; a program that could not be generated is still an error.
    for (const PhaseProgram& p : programs)
        if (!p.error.empty()) return userError(p.error);
    return 0;
}

} // namespace tilescope::cli
