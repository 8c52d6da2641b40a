// LLM generation as workloads (docs/cli.md, "generate"): a decoder's prefill and its decode
// step at several context lengths, each scheduled as `anneal` schedules a model, and the
// figures LLM users measure (time to first token, time per output token, tokens/s, energy
// per token, KV cache size) computed from the phases' evaluations.
#pragma once

#include "eval/evaluation.h"
#include "hw/hardware.h"
#include "model/network.h"
#include "model/onnx_import.h"
#include "pipeline/export.h"
#include "search/search.h"
#include "util/result.h"
#include "util/units.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace tilescope {

// Which free dimensions of a decoder export are the sequence and the past (KV cache) length.
struct DecoderAxes {
    std::string seq, past;
    std::vector<KvCacheInput> kvCache; // the inputs concatenated along `past`
};

// The past is the named axis along which the model concatenates a KV cache input with the
// step's keys or values into an output (kvCacheInputs); the sequence is the one other free
// dimension. Either may be named instead (`seqDim`, `pastDim`; "" finds it). Errors name the
// file and the reason: no free dimensions, no KV cache input, a name that is not a free
// dimension, no or several candidates for the sequence.
Result<DecoderAxes> findDecoderAxes(const std::string& path, const std::string& seqDim = "",
                                    const std::string& pastDim = "");

struct GenerateRequest {
    std::int64_t prompt = 1; // P tokens in the prompt
    std::int64_t tokens = 2; // G tokens generated: the prefill gives the first, G - 1 decode steps
    int batch = 1;           // sequences run together in every phase
    int decodePoints = 4;    // context lengths the decode step is scheduled at (at most G - 1)
    // The KV cache kept in the attention leaves' tiles across decode steps (`--kv-cache
    // on-chip`) instead of read from DRAM at every step: every decode step's schedule holds
    // it there, valid only where it fits (docs/cost-model.md §6, "Kept on chip"); the
    // prefill stores the cache it makes as with the cache in DRAM.
    bool kvOnChip = false;
    // Every layer's weights kept in its leaf's tiles across decode steps (`--weights
    // on-chip`) instead of loaded from DRAM at every step: each decode step's schedule holds
    // them there, valid only where they fit beside everything else (docs/cost-model.md §6,
    // "Kept on chip"); the prefill loads them as with the weights in DRAM.
    bool weightsOnChip = false;
};

// The decode steps' past lengths P .. P + G - 2 (step i reads a KV cache of P + i - 1 tokens);
// the ones scheduled are `decodePoints` of them spread evenly over that range, ends included.
std::vector<std::int64_t> decodeContexts(const GenerateRequest& r);

// A decode step as scheduled at one past length.
struct DecodePoint {
    std::int64_t past = 0;
    Evaluation eval;
};

struct GenerateFigures {
    bool valid = false;
    std::string reason;                // the first invalid phase and its reason
    Cycles ttft = 0;                   // the prefill's delay
    Cycles tpot = 0;                   // mean decode-step delay over the G - 1 steps (interpolated)
    double tokensPerSecond = 0;        // B x G over TTFT + (G - 1) x TPOT, at the clock
    PicoJoules energyPerToken = 0;     // prefill + every decode step, over B x G
    std::optional<Bytes> kvCacheBytes; // at P + G tokens, all B sequences; none without a cache
    bool kvOnChip = false;             // kept on chip (GenerateRequest::kvOnChip), else in DRAM
    bool weightsOnChip = false;        // GenerateRequest::weightsOnChip
    Bytes weightBytes = 0;             // the decode step's weights (kept on chip or loaded)
    std::vector<DecodePoint> decode;   // the scheduled points, as given
};

// The figures from the phases' evaluations (delay in cycles and energy of the whole batch).
// A decode step between two scheduled past lengths takes the straight line between their
// delays and energies; before the first or after the last, the nearest point's (one point:
// every step alike). `kvBytesPerToken`: the KV cache bytes one token adds for one sequence.
GenerateFigures generateFigures(const Evaluation& prefill, const std::vector<DecodePoint>& decode,
                                const GenerateRequest& r, double clockGHz,
                                std::optional<Bytes> kvBytesPerToken);

// The KV cache bytes per token and sequence of a network imported with `past` tokens of cache
// (a fixed export: each input's own length): its KV inputs' bytes over their length.
std::optional<Bytes> kvCacheBytesPerToken(const Network& net, const std::vector<KvCacheInput>& kv,
                                          std::int64_t past);

// The figures as the result JSON writes them (docs/cli.md): ttft_cycles, tpot_cycles,
// tokens_per_s, energy_per_token_pj, kv_cache_bytes, ... (null where not valid).
nlohmann::json generateFiguresJson(const GenerateFigures& f, const GenerateRequest& r,
                                   double clockGHz);

// What to schedule: one decoder export with free sequence and past axes, or two exports of
// fixed shape (a prefill and a decode step).
struct GenerateSources {
    std::string model;    // a decoder with free axes ("" with prefill/decode)
    DecoderAxes axes;     // of `model`
    std::string prefill;  // fixed exports
    std::string decode;   //
    ImportOptions import; // other free dimensions, the fallback
};

// One scheduled phase: the network as imported, its search and its best tree's detail.
struct GeneratePhase {
    std::string name; // "prefill", "decode"
    std::string modelPath;
    std::int64_t seq = 0, past = 0; // the sizes imported (0 when the export fixed them)
    std::shared_ptr<const Network> net;
    SearchResult search;
    Evaluation detail;
};

struct GenerateHooks {
    // Before phase `index` of `count`: the stop token its search obeys, or nullopt to stop.
    std::function<std::optional<std::stop_token>(const std::string& phase, std::size_t index,
                                                 std::size_t count)>
        beforePhase;
    std::function<void(const Progress&)> progress;
};

struct GenerateRun {
    std::vector<GeneratePhase> phases; // the prefill first, then the decode points
    GenerateFigures figures;
    bool stopped = false; // a phase's search was stopped, or beforePhase ended the run
};

// Imports every phase (a decoder: the prefill at seq P, past 1, since a zero-length past is
// not a shape ONNX can hold; the decode step at seq 1 and each decodeContexts past), runs
// the search with `config` (its totalBatch set to the request's batch) and computes the
// figures. Errors: an import or a search that fails, naming the file and the phase.
Result<GenerateRun> runGenerate(const GenerateSources& src, const Hardware& hw,
                                const SearchConfig& config, const GenerateRequest& r,
                                const GenerateHooks& hooks = {});

// A phase's program folder under `generate --export DIR`: "prefill", "decode-past255" (a
// fixed decode export without a recognised cache: "decode").
std::string phaseFolder(const GeneratePhase& p);

// A phase's program under `generate --export`: its folder, its check, or why there is none.
struct PhaseProgram {
    std::string folder;                // dir/phaseFolder(phase)
    std::optional<ProgramCheck> check; // none: no valid schedule, or `error`
    std::string error;                 // generating or writing the program failed
};

// Each phase's best tree as a program: generated, written to dir/phaseFolder(p) and replayed
// (exportAndReplay) at the run's `batch`, with the search's objective and utilisation floor.
// A phase without a valid schedule has no program; one whose program fails keeps its error
// (naming the folder) and the other phases go on.
std::vector<PhaseProgram> exportPhases(const GenerateRun& run, const Hardware& hw,
                                       const SearchConfig& config, int batch,
                                       const std::string& dir, const ProgramFormats& formats = {});

} // namespace tilescope
