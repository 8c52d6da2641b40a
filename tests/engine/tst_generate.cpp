// The LLM generation figures (engine/pipeline/llm_generate.h) on hand-made phase results,
// the decode points, and the decoder axes found from the graph.
#include "model/model_loader.h"
#include "model/onnx_import.h"
#include "pipeline/llm_generate.h"

#include <QtTest>
#include <cmath>
#include <tuple>

using namespace tilescope;

namespace {

const std::string kDecoder = std::string(TILESCOPE_TESTDATA) + "/llama_decoder.onnx";
const std::string kDecode64 = std::string(TILESCOPE_TESTDATA) + "/llama_decode64.onnx";

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
};

QTEST_GUILESS_MAIN(TstGenerate)
#include "tst_generate.moc"
