// tilescope-cli generate end to end (docs/cli.md): a decoder's prefill and decode phases on
// a tiny budget, the JSON keys, TTFT above TPOT, fixed exports, and the one-line errors
// naming the file and the reason.
#include "clirunner.h"

#include <QTemporaryDir>
#include <QtTest>
#include <array>
#include <fstream>
#include <nlohmann/json.hpp>

using namespace tilescope;
using nlohmann::json;

namespace {

const QString kDecoder = QStringLiteral(TILESCOPE_TESTDATA "/llama_decoder.onnx");
const QString kPrefill64 = QStringLiteral(TILESCOPE_TESTDATA "/llama_prefill64.onnx");
const QString kDecode64 = QStringLiteral(TILESCOPE_TESTDATA "/llama_decode64.onnx");

using Run = test::CliRun;

json readJson(const QString& path) {
    std::ifstream f(path.toStdString());
    return json::parse(f);
}

using test::expectUserError;

// The search options of every run here: a tiny, reproducible budget.
const QStringList kBudget = {"--hw", "edge", "--seed", "1", "--iterations", "20", "--quiet"};

} // namespace

class TestCliGenerate : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString path(const char* name) const { return m_dir.filePath(QString::fromUtf8(name)); }

    // The 64-token decode export generated with `option` dram, then on-chip, at batch 2: both
    // valid, each result's `key` saying which.
    void dramAndOnChip(const char* option, const std::string& key, std::array<json, 2>& j) {
        const char* where[2] = {"dram", "on-chip"};
        for (int i = 0; i < 2; ++i) {
            const QString file = path(i ? "on-chip.json" : "dram.json");
            const Run r =
                test::runCli(QStringList{"generate", "--prefill", kPrefill64, "--decode", kDecode64,
                                         "--prompt", "64", "--tokens", "8", "--batch", "2", option,
                                         where[i], "--json", file} +
                             kBudget);
            QVERIFY2(r.status == 0, qPrintable(r.err));
            j[size_t(i)] = readJson(file);
            QCOMPARE(j[size_t(i)][key].get<std::string>(), std::string(where[i]));
            QVERIFY(j[size_t(i)]["valid"].get<bool>());
        }
    }

  private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void decoderWithFreeAxes() {
        const QString out = path("gen.json");
        const Run r = test::runCli(QStringList{"generate", kDecoder, "--prompt", "64", "--tokens",
                                               "16", "--batch", "2", "--json", out} +
                                   kBudget);
        QVERIFY2(r.status == 0, qPrintable(r.err));
        const json j = readJson(out);
        for (const char* k : {"ttft_cycles", "tpot_cycles", "tokens_per_s", "energy_per_token_pj",
                              "kv_cache_bytes", "phases", "decode_points", "seq_dim", "past_dim"})
            QVERIFY2(j.contains(k), k);
        QVERIFY(j["valid"].get<bool>());
        QCOMPARE(j["seq_dim"].get<std::string>(), std::string("seq"));
        QCOMPARE(j["past_dim"].get<std::string>(), std::string("past"));
        // The prefill of 64 tokens takes longer than one decode step.
        QVERIFY(j["ttft_cycles"].get<double>() > j["tpot_cycles"].get<double>());
        // 2 blocks x (keys, values) x 2 heads x 32 = 256 bytes a token, 80 tokens, batch 2.
        QCOMPARE(j["kv_cache_bytes"].get<double>(), 256.0 * 80 * 2);
        // The prefill, then 4 decode points over the past lengths 64 .. 78 of the 15 steps.
        const json& ph = j["phases"];
        QCOMPARE(int(ph.size()), 5);
        QCOMPARE(ph[0]["phase"].get<std::string>(), std::string("prefill"));
        QCOMPARE(ph[0]["result"]["dims"], (json{{"past", 1}, {"seq", 64}}));
        QCOMPARE(ph[4]["result"]["dims"], (json{{"past", 78}, {"seq", 1}}));
        for (const json& p : ph) {
            QVERIFY(p["result"]["valid"].get<bool>());
            QCOMPARE(p["result"]["batch"].get<int>(), 2);
            QVERIFY(p["result"].contains("tree"));
        }
        const double tpot = j["tpot_cycles"].get<double>();
        QVERIFY(tpot >= ph[1]["result"]["delay_cycles"].get<double>() * 0.5);
        // tokens/s: 2 x 16 tokens over TTFT + 15 TPOT at the clock (1 GHz on edge).
        const double seconds = (j["ttft_cycles"].get<double>() + 15 * tpot) / 1e9;
        QCOMPARE(j["tokens_per_s"].get<double>(), 32 / seconds);
    }

    void summaryOnStdout() {
        const Run r = test::runCli(
            QStringList{"generate", kDecoder, "--prompt", "32", "--tokens", "4", "--points", "2"} +
            kBudget);
        QVERIFY2(r.status == 0, qPrintable(r.err));
        for (const char* s :
             {"TTFT", "TPOT", "tokens/s", "per token", "KV cache", "in DRAM", "prefill"})
            QVERIFY2(r.out.contains(QString::fromUtf8(s)), qPrintable(r.out));
    }

    void fixedExports() {
        const QString out = path("fixed.json");
        const Run r =
            test::runCli(QStringList{"generate", "--prefill", kPrefill64, "--decode", kDecode64,
                                     "--prompt", "64", "--tokens", "8", "--json", out} +
                         kBudget);
        QVERIFY2(r.status == 0, qPrintable(r.err));
        const json j = readJson(out);
        QCOMPARE(int(j["phases"].size()), 2);
        QCOMPARE(j["phases"][1]["past"].get<int>(), 64); // the export's fixed cache length
        // One decode point: every step takes its delay.
        QCOMPARE(j["tpot_cycles"].get<double>(),
                 j["phases"][1]["result"]["delay_cycles"].get<double>());
        QVERIFY(j["ttft_cycles"].get<double>() > j["tpot_cycles"].get<double>());
        QCOMPARE(j["kv_cache_bytes"].get<double>(), 256.0 * 72);
    }

    // --kv-cache on-chip: the cache stays in the attention layers' tiles, so a decode step
    // reads less from DRAM and takes less time than with the cache in DRAM; the result
    // says where the cache is.
    void kvCacheOnChip() {
        std::array<json, 2> j;
        dramAndOnChip("--kv-cache", "kv_cache", j);
        if (QTest::currentTestFailed()) return;
        const json &dram = j[0]["phases"][1]["result"], &kept = j[1]["phases"][1]["result"];
        QVERIFY(kept["dram_bytes"].get<double>() < dram["dram_bytes"].get<double>());
        QVERIFY(j[1]["tpot_cycles"].get<double>() < j[0]["tpot_cycles"].get<double>());
    }

    // --weights on-chip: every decode step keeps the weights in its leaves' tiles, so it
    // reads none of them from DRAM (the prefill still loads them) and takes less time; the
    // result says where the weights are.
    void weightsOnChip() {
        std::array<json, 2> j;
        dramAndOnChip("--weights", "weights", j);
        if (QTest::currentTestFailed()) return;
        const json &dram = j[0]["phases"][1]["result"], &kept = j[1]["phases"][1]["result"];
        // The decode step's compulsory DRAM bytes lose exactly the weights.
        QCOMPARE(dram["compulsory_dram_bytes"].get<double>() -
                     kept["compulsory_dram_bytes"].get<double>(),
                 kept["kept_weight_bytes"].get<double>());
        QVERIFY(kept["kept_weight_bytes"].get<double>() > 0);
        QVERIFY(!dram.contains("kept_weight_bytes"));
        QVERIFY(kept["dram_bytes"].get<double>() < dram["dram_bytes"].get<double>());
        QVERIFY(j[1]["tpot_cycles"].get<double>() < j[0]["tpot_cycles"].get<double>());
        QCOMPARE(j[1]["phases"][0]["result"]["dram_bytes"],
                 j[0]["phases"][0]["result"]["dram_bytes"]);
        // The decode phase's result records what it keeps on chip, so export-instructions
        // lays the program out the same way: no weight LOAD, the schedule's DRAM bytes.
        QCOMPARE(kept["kept_on_chip"]["weights"].get<bool>(), true);
        const QString phase = path("w-decode.json"), dir = path("w-decode-program");
        std::ofstream(phase.toStdString()) << kept.dump();
        const Run exported = test::runCli({"export-instructions", phase, "--out", dir});
        QVERIFY2(exported.status == 0, qPrintable(exported.err));
        const Run replay = test::runCli({"simulate", dir, "--json", path("w-sim.json")});
        QVERIFY2(replay.status == 0, qPrintable(replay.err));
        QCOMPARE(readJson(path("w-sim.json"))["dram_bytes"].get<double>(),
                 kept["dram_bytes"].get<double>());
        // Compute-in-memory tiles cannot keep them: refused before any search, file named.
        const Run cim = test::runCli(QStringList{
            "generate", "--prefill", kPrefill64, "--decode", kDecode64, "--hw", "cim", "--prompt",
            "64", "--tokens", "8", "--weights", "on-chip", "--iterations", "20", "--quiet"});
        QCOMPARE(cim.status, 1);
        QVERIFY2(cim.err.contains("compute-in-memory tiles program their crossbars"),
                 qPrintable(cim.err));
    }

    // --export: every phase's program in its folder, replayed against its estimate; the
    // folder's program replays alike under `simulate`, and its DRAM bytes are the schedule's.
    void exportEachPhase() {
        const QString out = path("exp.json"), dir = path("programs");
        const Run r = test::runCli(QStringList{"generate", kDecoder, "--prompt", "32", "--tokens",
                                               "4", "--points", "2", "--export", dir, "--formats",
                                               "bin,txt", "--json", out} +
                                   kBudget);
        QVERIFY2(r.status == 0, qPrintable(r.err));
        const json j = readJson(out);
        const json& ph = j["phases"];
        QCOMPARE(int(ph.size()), 3);
        const char* folders[] = {"prefill", "decode-past32", "decode-past34"};
        for (int i = 0; i < 3; ++i) {
            const json& p = ph[size_t(i)]["program"];
            const QString folder = dir + "/" + folders[i];
            QCOMPARE(QString::fromStdString(p["dir"].get<std::string>()), folder);
            QVERIFY(QFile::exists(folder + "/program.bin"));
            QVERIFY(QFile::exists(folder + "/program.txt"));
            QVERIFY(p["deadlock_free"].get<bool>());
            QCOMPARE(p["evaluator_delay_cycles"], ph[size_t(i)]["result"]["delay_cycles"]);
            QCOMPARE(p["program_dram_bytes"], p["schedule_dram_bytes"]);
            QCOMPARE(p["dram_bytes"], p["schedule_dram_bytes"]);
            QVERIFY(p["models_agree"].get<bool>());
            const double ratio =
                p["delay_cycles"].get<double>() / p["evaluator_delay_cycles"].get<double>();
            QCOMPARE(p["delay_ratio"].get<double>(), ratio);
            const QString simOut = path("sim.json");
            const Run sim =
                test::runCli(QStringList{"simulate", folder, "--json", simOut, "--quiet"});
            QVERIFY2(sim.status == 0, qPrintable(sim.err));
            const json replayed = readJson(simOut);
            QCOMPARE(replayed["delay_cycles"], p["delay_cycles"]);
            QCOMPARE(replayed["dram_bytes"], p["dram_bytes"]);
        }
        // The summary on stdout names each folder.
        const Run text =
            test::runCli(QStringList{"generate", kDecoder, "--prompt", "32", "--tokens", "4",
                                     "--points", "2", "--export", path("again")} +
                         kBudget);
        QVERIFY2(text.status == 0, qPrintable(text.err));
        QVERIFY2(text.out.contains(path("again") + "/decode-past34"), qPrintable(text.out));
    }

    // --stage-bytes: every phase is costed and exported with the template's stage size set,
    // so the programs' instructions come in more stages than the 8 without it, each phase's
    // hw.json records the key, and the replays still agree.
    void stageBytes() {
        const QString dir = path("staged"), out = path("staged.json");
        const Run r = test::runCli(QStringList{"generate", kDecoder, "--prompt", "32", "--tokens",
                                               "4", "--points", "2", "--export", dir, "--formats",
                                               "json", "--json", out, "--stage-bytes", "16"} +
                                   kBudget);
        QVERIFY2(r.status == 0, qPrintable(r.err));
        for (const char* folder : {"prefill", "decode-past32"}) {
            const json program = readJson(dir + "/" + folder + "/program.json");
            QCOMPARE(program["hardware"]["tile"]["stage_bytes"].get<double>(), 16.0);
            std::uint32_t most = 0;
            for (const json& t : program["tiles"])
                for (const json& i : t["instructions"])
                    most = std::max(most, i["stages"].get<std::uint32_t>());
            QVERIFY2(most > 8, folder);
        }
        const json result = readJson(out);
        for (const json& ph : result["phases"])
            QVERIFY(ph["program"]["models_agree"].get<bool>());
        const Run bad = test::runCli(QStringList{"generate", kDecoder, "--prompt", "32", "--tokens",
                                                 "4", "--stage-bytes", "-1"});
        QCOMPARE(bad.status, 2);
    }

    void badInputs() {
        const QString squeeze = QStringLiteral(TILESCOPE_TESTDATA "/squeezenet1_0.onnx");
        Run r = test::runCli(QStringList{"generate", squeeze, "--prompt", "8", "--tokens", "4"} +
                             kBudget);
        expectUserError(r, squeeze, "no free dimensions");
        r = test::runCli(QStringList{"generate", kDecoder, "--prompt", "8", "--tokens", "4",
                                     "--seq-dim", "tokens"} +
                         kBudget);
        expectUserError(r, kDecoder, "--seq-dim 'tokens' is not a free dimension of the model");
        r = test::runCli(
            QStringList{"generate", kDecoder, "--prompt", "8", "--tokens", "4", "--dim", "seq=8"} +
            kBudget);
        expectUserError(r, kDecoder, "set by --prompt and --tokens");
        // A fixed export has no KV axis to find.
        r = test::runCli(QStringList{"generate", kPrefill64, "--prompt", "8", "--tokens", "4"} +
                         kBudget);
        expectUserError(r, kPrefill64, "no free dimensions");
    }

    void badArguments_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("no prompt")
            << QStringList{kDecoder, "--tokens", "4"} << "--prompt is required";
        QTest::newRow("one token") << QStringList{kDecoder, "--prompt", "8", "--tokens", "1"}
                                   << "--tokens must be between 2";
        QTest::newRow("prefill alone")
            << QStringList{"--prefill", kPrefill64, "--prompt", "8", "--tokens", "4"}
            << "--prefill and --decode go together";
        QTest::newRow("both forms")
            << QStringList{kDecoder,   "--prefill", kPrefill64, "--decode", kDecode64,
                           "--prompt", "8",         "--tokens", "4"}
            << "not both";
        QTest::newRow("no model") << QStringList{"--prompt", "8", "--tokens", "4"}
                                  << "expected exactly one MODEL";
        QTest::newRow("formats alone")
            << QStringList{kDecoder, "--prompt", "8", "--tokens", "4", "--formats", "txt"}
            << "--formats goes with --export";
        QTest::newRow("bad kv cache")
            << QStringList{kDecoder, "--prompt", "8", "--tokens", "4", "--kv-cache", "sram"}
            << "--kv-cache takes dram or on-chip, got 'sram'";
        QTest::newRow("bad weights")
            << QStringList{kDecoder, "--prompt", "8", "--tokens", "4", "--weights", "hbm"}
            << "--weights takes dram or on-chip, got 'hbm'";
        QTest::newRow("bad format")
            << QStringList{kDecoder,   "--prompt", "8",         "--tokens", "4",
                           "--export", path("x"),  "--formats", "pdf"}
            << "--formats:";
    }

    void badArguments() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const Run r = test::runCli(QStringList{"generate"} + args + kBudget);
        QCOMPARE(r.status, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestCliGenerate)
#include "tst_cli_generate.moc"
