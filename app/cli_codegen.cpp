// export-instructions and simulate (CLI.md): from a result or session JSON to a program
// directory (program.bin and hw.json; program.txt, program.json, ir.json with --formats),
// and the replay of
// such a program with the summary a chip bring-up engineer checks first.
#include "cli_commands.h"
#include "cli_search.h"
#include "hw/mesh.h"
#include "model/model_loader.h"
#include "pipeline/export.h"
#include "pipeline/program_flow.h"
#include "report/result_json.h"
#include "report/trace_json.h"
#include "sim/fidelity.h"
#include "util/fileio.h"
#include "util/units.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

namespace tilescope::cli {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string onlyPositional(const Args& a, const char* what) {
    if (a.positional.size() != 1)
        throw UsageError{std::string("expected exactly one ") + what + " argument"};
    return a.positional[0];
}

// A relative model path in a result/session is tried as given, then beside the file.
std::string resolveModel(const std::string& model, const std::string& docPath) {
    if (model.empty() || fs::exists(model)) return model;
    const fs::path beside = fs::path(docPath).parent_path() / model;
    return fs::exists(beside) ? beside.string() : model;
}

double pct(double a, double b) {
    return b != 0 ? 100.0 * (a - b) / b : 0.0;
}

} // namespace

int runExportInstructions(const Args& a) {
    const std::string path = onlyPositional(a, "SESSION_OR_RESULT");
    if (!a.has("--out") || a.get("--out").empty()) throw UsageError{"--out DIR is required"};
    const std::string out = a.get("--out");
    ProgramFormats formats;
    if (a.has("--formats")) {
        auto f = parseProgramFormats(a.get("--formats"));
        if (!f) throw UsageError{"--formats: " + f.error().message};
        formats = *f;
    }
    const std::optional<long long> stageBytes = stageBytesArg(a);

    auto text = readFile(path);
    if (!text) return userError(text.error().message);
    json doc = json::parse(*text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object())
        return userError(path + ": not a result or session JSON");
    if (!doc.contains("tree") && !doc.contains("tree_json") && doc.contains("sa"))
        doc = doc["sa"]; // compare
    const std::string model = resolveModel(doc.value("model", std::string()), path);
    if (model.empty()) return userError(path + ": no \"model\" path");
    const json hwj = doc.contains("hw")         ? doc["hw"]
                     : doc.contains("hardware") ? doc["hardware"]
                                                : json();
    if (hwj.is_null()) return userError(path + ": no \"hw\" or \"hardware\"");
    if (!doc.contains("batch") || !doc["batch"].is_number_integer() ||
        doc["batch"].get<long long>() < 1 || doc["batch"].get<long long>() > (1 << 20))
        return userError(path + ": no positive integer \"batch\"");
    const int batch = doc["batch"].get<int>();

    auto net = loadModel(model, importOptionsOf(doc, path));
    if (!net) return userError(net.error().message);
    Result<Hardware> hw =
        hwj.is_string() ? loadHardware(hwj.get<std::string>()) : parseHardware(hwj, path + " (hw)");
    if (!hw) return userError(hw.error().message);
    if (stageBytes) hw->stageBytes = *stageBytes; // the program's stages (docs/isa.md)
    std::shared_ptr<CimRecordsFile> records;
    if (auto e = attachCimRecords(a, *hw, records)) return userError(e->message);
    Result<RATree> tree =
        doc.contains("tree_json") || !doc.contains("tree") || !doc["tree"].is_string()
            ? parseTreeDocument(doc.dump(), *net, path)
            : parseTreeText(doc["tree"].get<std::string>(), *net, path);
    if (!tree) return userError(tree.error().message);

    EvalOptions eo;
    if (doc.contains("objective") && doc["objective"].is_array() && doc["objective"].size() == 2) {
        const json& o = doc["objective"];
        if (!o[0].is_number() || !o[1].is_number() || o[0].get<double>() < 0 ||
            o[1].get<double>() < 0)
            return userError(path + ": \"objective\": expected two non-negative numbers");
        eo.objective = {o[0].get<double>(), o[1].get<double>()};
    }
    if (doc.contains("config") && doc["config"].is_object() &&
        doc["config"].contains("min_utilisation")) {
        const json& u = doc["config"]["min_utilisation"];
        if (!u.is_number() || u.get<double>() < 0 || u.get<double>() > 1)
            return userError(path + ": \"config.min_utilisation\": expected a number in [0, 1]");
        eo.minUtilisation = u.get<double>();
    }
    // The DRAM layouts the result was costed with (docs/cost-model.md §4b).
    if (doc.contains("layout_plan")) {
        if (!doc["layout_plan"].is_object())
            return userError(path + ": layout_plan: must be an object");
        if (auto e = readLayoutChoice(doc["layout_plan"], path, "layout_plan", "layouts", "pins",
                                      eo.layouts))
            return userError(e->message);
    }
    EvalContext ctx(*net, *hw);
    CodegenOptions co;
    co.withIr = formats.ir; // the IR is only ir.json's
    auto gen = buildProgram(ctx, *tree, batch, eo, model, co);
    if (!gen) return userError(path + ": " + gen.error().message);
    const CodegenResult& r = *gen;
    if (auto e = exportProgram(out, r, *net, *hw, formats)) return userError(e->message);

    const double sched = r.layout.evaluation.dramBytes;
    std::printf("%s: %zu instructions on %zu tiles, %zu workloads\n", out.c_str(),
                r.program.instructionCount(), r.program.tiles.size(), r.workloadCount);
    std::printf("DRAM bytes: program %.0f, schedule %.0f (%+.3f%%)\n", double(r.programDramBytes),
                sched, pct(double(r.programDramBytes), sched));
    std::uint64_t peak = 0;
    for (auto p : r.peakBufferBytes)
        peak = std::max(peak, p);
    std::printf("peak buffer use: %s of %s per tile\n", formatBytes(double(peak)).c_str(),
                formatBytes(hw->bufferBytes).c_str());
    std::error_code ec;
    if (formats.bin) {
        const auto size = fs::file_size(fs::path(out) / "program.bin", ec);
        std::printf("program.bin: %llu bytes (%.1f per instruction)\n", (unsigned long long)size,
                    double(size) / double(std::max<size_t>(1, r.program.instructionCount())));
    }
    std::printf("formats: %s (+ hw.json)\n", formatsToString(formats).c_str());
    return 0;
}

namespace {
// The simulate --json document: `head`, then "timeline" (tile -> its instructions'
// intervals) streamed one interval a line: on a program of a million instructions a
// document in memory took gigabytes.
void writeSimulationJson(std::ostream& out, const json& head, const SimResult& rf,
                         const Program& prog) {
    std::vector<std::vector<std::uint32_t>> perTile;
    for (std::uint32_t k = 0; k < rf.timeline.size(); ++k) {
        const size_t tile = size_t(std::max(0, rf.timeline[k].tile));
        if (tile >= perTile.size()) perTile.resize(tile + 1);
        perTile[tile].push_back(k);
    }
    const std::string text = head.dump(1);
    out << text.substr(0, text.size() - 2) << ",\n \"timeline\": {";
    bool firstTile = true;
    for (size_t t = 0; t < perTile.size(); ++t) {
        if (perTile[t].empty()) continue;
        out << (firstTile ? "\n  \"" : ",\n  \"") << t << "\": [";
        firstTile = false;
        for (size_t n = 0; n < perTile[t].size(); ++n) {
            const auto& iv = rf.timeline[perTile[t][n]];
            const json item = {{"id", iv.id},
                               {"engine", toString(iv.engine)},
                               {"op", toString(iv.op)},
                               {"layer", iv.layer >= 0 && size_t(iv.layer) < prog.layers.size()
                                             ? prog.layers[size_t(iv.layer)]
                                             : ""},
                               {"start", iv.start},
                               {"end", iv.end}};
            out << (n ? ",\n   " : "\n   ") << item.dump();
        }
        out << "\n  ]";
    }
    out << (firstTile ? "}\n}\n" : "\n }\n}\n");
}
} // namespace

int runSimulate(const Args& a) {
    const std::string arg = onlyPositional(a, "DIR_OR_PROGRAM");
    std::string file = arg;
    fs::path dir = fs::path(arg).parent_path();
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
        dir = fs::path(arg);
        // The binary first: it decodes without a JSON document of the whole program in memory.
        file = fs::exists(dir / "program.bin") ? (dir / "program.bin").string()
                                               : (dir / "program.json").string();
    }
    // Mapped, not read: a large program.bin is decoded straight from the page cache.
    auto mapped = MappedFile::open(file);
    if (!mapped) return userError(mapped.error().message);
    const std::string_view bytes = mapped->view();
    Result<Program> prog = Error{};
    if (bytes.size() >= 4 && bytes.compare(0, 4, "TSCP") == 0) {
        prog = decodeProgram(bytes, file);
    } else {
        json j = json::parse(bytes.begin(), bytes.end(), nullptr, false);
        if (j.is_discarded()) return userError(file + ": not JSON and not a program.bin");
        prog = programFromJson(j, file);
    }
    if (!prog) return userError(prog.error().message);
    std::string hwText = prog->hardwareJson;
    std::string hwFile = file + " (hardware)";
    if (hwText.empty() || hwText == "null") {
        hwFile = (dir / "hw.json").string();
        auto t = readFile(hwFile);
        if (!t) return userError(file + ": no hardware embedded and " + t.error().message);
        hwText = *t;
    }
    auto hw = parseHardware(hwText, hwFile);
    if (!hw) return userError(hw.error().message);
    auto replay = replayProgram(*prog, *hw, file);
    if (!replay) return userError(replay.error().message);
    const SimResult& rf = replay->fine;
    const SimResult& rc = replay->coarse;
    const json& s = prog->schedule;
    const double evalDelay = s.contains("delay_cycles") ? s["delay_cycles"].get<double>() : 0.0;
    const double schedDram = s.contains("dram_bytes") ? s["dram_bytes"].get<double>() : 0.0;
    const double speedup = replay->speedUp();
    const bool ok = rf.deadlockFree && rc.deadlockFree;
    const ModelAgreement agree = modelAgreement(rf.delay, evalDelay);
    const double busiestLink =
        rf.linkBytes.empty() ? 0.0 : *std::max_element(rf.linkBytes.begin(), rf.linkBytes.end());
    // The busiest link's time at its own bandwidth (inter-chiplet links are slower).
    double busiestLinkTime = 0;
    {
        const Mesh mesh(*hw);
        for (size_t l = 0; l < rf.linkBytes.size(); ++l)
            busiestLinkTime =
                std::max(busiestLinkTime,
                         rf.linkBytes[l] * mesh.linkSlowness(int(l)) / hw->nocBytesPerCycle);
    }

    if (a.has("--json")) {
        json busy = json::array();
        for (size_t t = 0; t < rf.busy.size(); ++t)
            busy.push_back({{"tile", t},
                            {"load", rf.busy[t][0]},
                            {"compute", rf.busy[t][1]},
                            {"store", rf.busy[t][2]}});
        json j = {{"program", file},
                  {"deadlock_free", ok},
                  {"stuck", rf.stuck.empty() ? rc.stuck : rf.stuck},
                  {"instructions", rf.total},
                  {"completed", rf.completed},
                  {"delay_cycles", rf.delay},
                  {"coarse_delay_cycles", rc.delay},
                  {"speedup_fine_vs_coarse", speedup},
                  {"evaluator_delay_cycles", evalDelay > 0 ? json(evalDelay) : json(nullptr)},
                  {"delay_ratio", evalDelay > 0 ? json(agree.ratio) : json(nullptr)},
                  {"models_agree", agree.agrees},
                  {"dram_bytes", rf.dramBytes},
                  {"schedule_dram_bytes", schedDram > 0 ? json(schedDram) : json(nullptr)},
                  {"noc_hop_bytes", rf.nocHopBytes},
                  {"dram_busy_cycles", rf.dramBusy},
                  {"dram_side_bytes",
                   {{"east", rf.dramSideBytes[East]},
                    {"west", rf.dramSideBytes[West]},
                    {"north", rf.dramSideBytes[North]},
                    {"south", rf.dramSideBytes[South]}}},
                  {"busiest_link_bytes", busiestLink},
                  {"busy", busy}};
        auto write = [&](std::ostream& out) { writeSimulationJson(out, j, rf, *prog); };
        if (auto e = writeFileAtomic(a.get("--json"), StreamWriter(write)))
            return userError(e->message);
    }
    if (a.has("--trace")) {
        // Perfetto timeline of the fine-grained replay: one process per tile, one track per engine.
        const json other = {{"generator", "tilescope simulate"},
                            {"program", file},
                            {"delay_cycles", rf.delay},
                            {"evaluator_delay_cycles", evalDelay}};
        if (auto e = writeFileAtomic(
                a.get("--trace"),
                traceEventJson(simTraceEvents(rf, *prog), hw->clockGHz, other) + "\n"))
            return userError(e->message);
    }
    if (!a.has("--quiet")) {
        std::printf("%s: %zu instructions, deadlock-free: %s\n", file.c_str(), rf.total,
                    ok ? "yes" : "NO");
        if (!ok) std::printf("  stuck: %s\n", (rf.stuck.empty() ? rc.stuck : rf.stuck).c_str());
        std::printf("delay: %.0f cycles", rf.delay);
        if (evalDelay > 0) std::printf("  (evaluator %.0f, ratio %.3f)", evalDelay, agree.ratio);
        if (!agree.agrees)
            std::printf("\nwarning: the simulated program and the evaluator's estimate differ by "
                        "more than %.0f%%",
                        100 * kModelTolerance);
        std::printf("\nDRAM bytes: %.0f", rf.dramBytes);
        if (schedDram > 0)
            std::printf("  (schedule %.0f, %+.3f%%)", schedDram, pct(rf.dramBytes, schedDram));
        std::printf("\nfine-grained dependencies: %.0f cycles vs %.0f coarse, speed-up %.3fx\n",
                    rf.delay, rc.delay, speedup);
        double busyC = 0;
        for (const auto& b : rf.busy)
            busyC += b[1];
        std::printf(
            "compute busy %.1f%% of tile-cycles, DRAM busy %.1f%%, busiest link busy %.1f%%\n",
            rf.delay > 0 ? 100.0 * busyC / (rf.delay * double(rf.busy.size())) : 0.0,
            rf.delay > 0 ? 100.0 * rf.dramBusy / rf.delay : 0.0,
            rf.delay > 0 ? 100.0 * busiestLinkTime / rf.delay : 0.0);
    }
    return ok ? 0 : 1;
}

} // namespace tilescope::cli
