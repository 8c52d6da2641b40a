// The LLM generation figures (engine/pipeline/llm_generate.h) on hand-made phase results,
// the decode points, and the decoder axes found from the graph.
#include "eval/evaluator.h"
#include "hw/hardware.h"
#include "model/model_loader.h"
#include "model/onnx_import.h"
#include "pipeline/export.h"
#include "pipeline/llm_generate.h"
#include "report/layers.h"
#include "tree/ratree.h"

#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <tuple>

using namespace tilescope;

namespace {

const std::string kDecoder = std::string(TILESCOPE_TESTDATA) + "/llama_decoder.onnx";
const std::string kDecode64 = std::string(TILESCOPE_TESTDATA) + "/llama_decode64.onnx";

// The schedule of the context's network is valid and its program lays out in the same
// buffers: the program's and the replay's DRAM bytes are the schedule's; `withinGate`: the
// replay is also within the fidelity gate.
void expectLaidOut(EvalContext& ctx, const RATree& tree, int batch, bool withinGate = false) {
    EvalOptions opt;
    QVERIFY(evaluate(ctx, tree, batch, opt).valid);
    QTemporaryDir dir;
    auto check = exportAndReplay(ctx, tree, batch, opt, kDecode64, dir.path().toStdString());
    QVERIFY2(check, check ? "" : check.error().message.c_str());
    QCOMPARE(check->programDramBytes, check->scheduleDramBytes);
    QCOMPARE(check->simulatedDramBytes, check->scheduleDramBytes);
    if (withinGate)
        QVERIFY2(check->agreement.agrees, std::to_string(check->agreement.ratio).c_str());
}

// Valid as `net`, invalid as `kept` (the same network keeping something on chip) on `hw`,
// with every one of `needles` in the reason.
void expectInvalidWhenKept(const Network& net, const Network& kept, const Hardware& hw,
                           const RATree& tree, int batch, std::vector<std::string> needles) {
    EvalOptions opt;
    const Evaluation dram = evaluate(net, hw, tree, batch, opt);
    const Evaluation onChip = evaluate(kept, hw, tree, batch, opt);
    QVERIFY2(dram.valid, dram.reason.c_str());
    QVERIFY(!onChip.valid);
    for (const std::string& n : needles)
        QVERIFY2(onChip.reason.find(n) != std::string::npos, onChip.reason.c_str());
}

Evaluation phase(Cycles delay, PicoJoules energy) {
    Evaluation e;
    e.valid = true;
    e.delay = delay;
    e.energy.mac = energy;
    return e;
}

GenerateRequest request(std::int64_t prompt, std::int64_t tokens, int batch, int points = 4) {
    GenerateRequest r;
    r.prompt = prompt;
    r.tokens = tokens;
    r.batch = batch;
    r.decodePoints = points;
    return r;
}

} // namespace

class TstGenerate : public QObject {
    Q_OBJECT
  private slots:
    void decodeContexts_() {
        using V = std::vector<std::int64_t>;
        // 15 steps read 64 .. 78 cached tokens; 4 points spread over them, ends included.
        QCOMPARE(decodeContexts(request(64, 16, 1)), (V{64, 69, 73, 78}));
        QCOMPARE(decodeContexts(request(64, 2, 1)), (V{64}));     // one step
        QCOMPARE(decodeContexts(request(10, 3, 1)), (V{10, 11})); // fewer steps than points
        QCOMPARE(decodeContexts(request(2048, 128, 1, 1)), (V{2048}));
    }

    void figuresInterpolate() {
        // P 100, G 12: 11 decode steps with past 100 .. 110. Points at 100 (delay 100, energy
        // 10) and 110 (200, 20): by hand the steps take 100, 110, ..., 200 (mean 150) and
        // 10, 11, ..., 20 (sum 165).
        const GenerateRequest r = request(100, 12, 2);
        const std::vector<DecodePoint> decode = {{110, phase(200, 20)}, {100, phase(100, 10)}};
        const GenerateFigures f = generateFigures(phase(1000, 5000), decode, r, 2.0, 256.0);
        QVERIFY(f.valid);
        QCOMPARE(f.ttft, 1000.0);
        QCOMPARE(f.tpot, 150.0);
        // 2 x 12 tokens over 1000 + 11 x 150 cycles at 2 GHz.
        QCOMPARE(f.tokensPerSecond, 24 / (2650 / 2e9));
        QCOMPARE(f.energyPerToken, (5000.0 + 165) / 24);
        QCOMPARE(*f.kvCacheBytes, 256.0 * 112 * 2);
    }

    void figuresOutsideAndSinglePoint() {
        const GenerateRequest r = request(100, 5, 1);
        // One point: every step alike.
        GenerateFigures f = generateFigures(phase(900, 0), {{100, phase(120, 1)}}, r, 1.0, {});
        QVERIFY(f.valid);
        QCOMPARE(f.tpot, 120.0);
        QVERIFY(!f.kvCacheBytes);
        // Steps 100 .. 103 before and after the points 101 and 102: the nearest point's delay
        // outside, the line between them inside: 10, 10, 20, 20.
        f = generateFigures(phase(900, 0), {{101, phase(10, 0)}, {102, phase(20, 0)}}, r, 1.0, {});
        QCOMPARE(f.tpot, 15.0);
    }

    void invalidPhase() {
        const GenerateRequest r = request(100, 5, 1);
        Evaluation bad;
        bad.reason = "buffer overflow at /0";
        GenerateFigures f = generateFigures(phase(900, 0), {{100, bad}}, r, 1.0, 256.0);
        QVERIFY(!f.valid);
        QCOMPARE(f.reason, std::string("decode (past 100): buffer overflow at /0"));
        QVERIFY(std::isnan(f.tpot));
        f = generateFigures(bad, {{100, phase(1, 1)}}, r, 1.0, 256.0);
        QCOMPARE(f.reason, std::string("prefill: buffer overflow at /0"));
        const auto j = generateFiguresJson(f, r, 1.0);
        QVERIFY(j["ttft_cycles"].is_null());
        QCOMPARE(j["kv_cache_bytes"].get<double>(), 256.0 * 105);
    }

    void axesFromTheGraph() {
        auto axes = findDecoderAxes(kDecoder);
        QVERIFY2(axes, axes ? "" : axes.error().message.c_str());
        QCOMPARE(axes->seq, std::string("seq"));
        QCOMPARE(axes->past, std::string("past"));
        QCOMPARE(int(axes->kvCache.size()), 4); // keys and values of 2 blocks
        for (const KvCacheInput& k : axes->kvCache) {
            QCOMPARE(k.axis, 2); // [batch, kv heads, past, head dim]
            QCOMPARE(k.dimName, std::string("past"));
            QVERIFY2(k.output.rfind("present_", 0) == 0, k.output.c_str());
        }
        // Named: the same; swapped names are taken as given.
        auto named = findDecoderAxes(kDecoder, "past", "seq");
        QVERIFY(named);
        QCOMPARE(named->seq, std::string("past"));
        auto unknown = findDecoderAxes(kDecoder, "", "tokens");
        QVERIFY(!unknown);
        QVERIFY2(unknown.error().message.find(kDecoder +
                                              ": --past-dim 'tokens' is not a free "
                                              "dimension of the model (its free dimensions: "
                                              "seq, past)") == 0,
                 unknown.error().message.c_str());
        // A fixed export: its cache inputs with their fixed length, and no free axes.
        auto fixed = kvCacheInputs(kDecode64);
        QVERIFY(fixed);
        QCOMPARE(int(fixed->size()), 4);
        QCOMPARE((*fixed)[0].length, std::int64_t(64));
        QVERIFY((*fixed)[0].dimName.empty());
        QVERIFY(!findDecoderAxes(kDecode64));
    }

    void fixedExportsMatchTheBoundDecoder() {
        // The fixed exports are the dynamic decoder's graph at fixed sizes: imported, the
        // same layers as the decoder bound to those sizes.
        const std::string dir = std::string(TILESCOPE_TESTDATA) + "/";
        for (const auto& [file, seq, past] : {std::tuple{"llama_prefill64.onnx", 64, 1},
                                              std::tuple{"llama_decode64.onnx", 1, 64}}) {
            ImportOptions o;
            o.dims = {{"seq", seq}, {"past", past}};
            auto bound = loadModel(kDecoder, o);
            auto fixed = loadModel(dir + file);
            QVERIFY(bound && fixed);
            QCOMPARE(fixed->totalMacsPerSample(), bound->totalMacsPerSample());
            QCOMPARE(fixed->layers.size(), bound->layers.size());
            QCOMPARE(fixed->inputBytes, bound->inputBytes);
        }
    }

    void kvBytesPerToken() {
        ImportOptions o;
        o.dims = {{"seq", 1}, {"past", 8}};
        auto net = loadModel(kDecoder, o);
        QVERIFY(net);
        auto axes = findDecoderAxes(kDecoder);
        QVERIFY(axes);
        // 2 blocks x (keys, values) x 2 kv heads x head dim 32, one byte each.
        QCOMPARE(*kvCacheBytesPerToken(*net, axes->kvCache, 8), 256.0);
        QVERIFY(!kvCacheBytesPerToken(*net, {}, 8));
    }

    void kvCacheKeptOnChip() {
        // The 64-token decode step, every layer alone on edge's 16 tiles, batch 2: kept on
        // chip, the cache (2 blocks x keys and values x 64 tokens x 2 kv heads x 32, one
        // byte each = 16,384 bytes a sequence) leaves the DRAM traffic, to the byte; the
        // step's new keys still cross DRAM between the layer-by-layer segments.
        auto net = loadModel(kDecode64);
        auto kv = kvCacheInputs(kDecode64);
        QVERIFY(net && kv && kv->size() == 4);
        Hardware hw;
        QVERIFY(presetHardware("edge", hw));
        const RATree tree = RATree::layerSequential(*net, 2);
        EvalOptions opt;
        const Evaluation dram = evaluate(*net, hw, tree, 2, opt);
        Network kept = *net;
        std::vector<std::string> names;
        for (const KvCacheInput& k : *kv)
            names.push_back(k.input);
        QCOMPARE(keepInputsOnChip(kept, names), 4);
        QCOMPARE(kept.outputs.size(), net->outputs.size() - 4); // the new keys join the cache
        EvalContext ctx(kept, hw);
        const Evaluation onChip = evaluate(ctx, tree, 2, opt);
        QVERIFY2(dram.valid && onChip.valid, onChip.reason.c_str());
        QCOMPARE(dram.dramBytes - onChip.dramBytes, 2.0 * 16384);
        QVERIFY(onChip.delay < dram.delay);
        // The program reads the cache in place: its DRAM bytes are the schedule's, and the
        // replay stays within the fidelity gate.
        expectLaidOut(ctx, tree, 2, true);
    }

    void kvCacheThatDoesNotFit() {
        // A buffer that holds each layer's own work but not the cache beside it: invalid,
        // and the reason says what was kept on chip.
        auto net = loadModel(kDecode64);
        auto kv = kvCacheInputs(kDecode64);
        QVERIFY(net && kv);
        Hardware hw;
        QVERIFY(presetHardware("testchip", hw));
        std::vector<std::string> names;
        for (const KvCacheInput& k : *kv)
            names.push_back(k.input);
        Network kept = *net;
        keepInputsOnChip(kept, names);
        const RATree tree = RATree::layerSequential(*net, 8);
        EvalOptions opt;
        // 40 KiB: the gate projection's own 12.7 KB per tile fits, not beside the cache,
        // 8 sequences x 16,384 bytes over the 4 tiles = 32,768 bytes on every tile.
        hw.bufferBytes = 40 << 10;
        expectInvalidWhenKept(*net, kept, hw, tree, 8,
                              {"/blocks.0/gate/MatMul", "(of which 32.77 KB kept on chip)"});
        // 48 KiB: it fits, and the generator lays the cache and every layer's work out in
        // the same buffers.
        hw.bufferBytes = 48 << 10;
        EvalContext ctx(kept, hw);
        expectLaidOut(ctx, tree, 8);
        // 8 KiB: the attention layer itself must be blocked, and a blocked leaf cannot keep
        // its input.
        hw.bufferBytes = 8 << 10;
        const Evaluation tight = evaluate(kept, hw, tree, 8, opt);
        QVERIFY(evaluate(*net, hw, tree, 8, opt).valid);
        QVERIFY2(!tight.valid && tight.reason.find("the leaf is blocked") != std::string::npos,
                 tight.reason.c_str());
    }

    void weightsKeptOnChip() {
        // The 64-token decode step, every layer alone on edge's 16 tiles, batch 2: the
        // layer-sequential tree runs each segment once, so with the weights in DRAM each
        // layer's weights cross DRAM once (one read per output-channel slice, multicast to
        // the tiles sharing it). Kept on chip, exactly those bytes leave the DRAM traffic
        // (8-bit weights: the network's weight bytes), and the step is faster.
        auto net = loadModel(kDecode64);
        QVERIFY(net);
        Hardware hw;
        QVERIFY(presetHardware("edge", hw));
        const RATree tree = RATree::layerSequential(*net, 2);
        EvalOptions opt;
        const Evaluation dram = evaluate(*net, hw, tree, 2, opt);
        Network kept = *net;
        int withWeights = 0;
        for (const Layer& l : net->layers)
            withWeights += l.weightBytes > 0;
        QCOMPARE(keepWeightsOnChip(kept), withWeights);
        QVERIFY(withWeights > 0);
        EvalContext ctx(kept, hw);
        const Evaluation onChip = evaluate(ctx, tree, 2, opt);
        QVERIFY2(dram.valid && onChip.valid, onChip.reason.c_str());
        QCOMPARE(dram.dramBytes - onChip.dramBytes, double(net->totalWeightBytes()));
        QVERIFY(onChip.delay < dram.delay);
        QCOMPARE(keptWeightBytes(kept, hw), double(net->totalWeightBytes()));
        QCOMPARE(compulsoryDramBytes(*net, hw, 2) - compulsoryDramBytes(kept, hw, 2),
                 double(net->totalWeightBytes()));
        // The program reads the weights in place and loads none: its DRAM bytes are the
        // schedule's, and the replay stays within the fidelity gate.
        expectLaidOut(ctx, tree, 2, true);
    }

    void weightsThatDoNotFit() {
        // Every layer's slice of the weights stays on its tiles beside every other layer's
        // work: a buffer that holds each layer's own work (weights included, as with the
        // weights in DRAM) but not all the weights at once makes the schedule invalid, with
        // the bytes kept on chip in the reason.
        auto net = loadModel(kDecode64);
        QVERIFY(net);
        Hardware hw;
        QVERIFY(presetHardware("testchip", hw));
        Network kept = *net;
        keepWeightsOnChip(kept);
        const RATree tree = RATree::layerSequential(*net, 1);
        EvalOptions opt;
        const double all = double(net->totalWeightBytes());
        hw.bufferBytes = 48 << 10;
        QVERIFY(all / hw.tiles() > hw.bufferBytes); // not even an even share fits
        expectInvalidWhenKept(*net, kept, hw, tree, 1, {"buffer overflow", "kept on chip)"});
        // A buffer that takes them all: valid, and the generator lays the weights and every
        // layer's work out in the same buffers.
        hw.bufferBytes = 1 << 20;
        EvalContext ctx(kept, hw);
        expectLaidOut(ctx, tree, 1);
        // Compute-in-memory tiles program their crossbars in every run: nothing to keep.
        Hardware cim;
        QVERIFY(presetHardware("cim", cim));
        QVERIFY(evaluate(*net, cim, tree, 1, opt).valid);
        const Evaluation onCim = evaluate(kept, cim, tree, 1, opt);
        QVERIFY2(!onCim.valid && onCim.reason.find("compute-in-memory") != std::string::npos,
                 onCim.reason.c_str());
    }
};

QTEST_GUILESS_MAIN(TstGenerate)
#include "tst_generate.moc"
