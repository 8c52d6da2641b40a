// tilescope-cli evaluate / anneal / compare end to end (CLI.md): exit codes, one-line
// error messages naming the file, the result JSON fields, atomic outputs, seeded runs.
#include "clirunner.h"
#include "model/model_loader.h"
#include "tree/ratree.h"
#include "util/units.h"

#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace tilescope;
using nlohmann::json;

namespace {

const std::string kResnet = std::string(TILESCOPE_SAMPLES) + "/models/resnet50.onnx";

using Run = test::CliRun;

Run cli(const QStringList& args) {
    return test::runCli(args);
}

void writeText(const QString& path, const std::string& text) {
    std::ofstream(path.toStdString()) << text;
}

json readJson(const QString& path) {
    std::ifstream f(path.toStdString());
    return json::parse(f);
}

// The layer-sequential tree text at batch b with root sub-batch sb, leaves in `order`.
std::string lsText(const Network& net, const std::vector<int>& order, int b, int sb) {
    std::ostringstream s;
    s << "T " << b << "/" << sb << "\n";
    for (int l : order)
        s << "\t" << net.layers[size_t(l)].name << " " << b / sb << "\n";
    return s.str();
}

const Network& resnet() {
    static Network net = [] {
        auto r = loadModel(kResnet);
        if (!r) qFatal("%s", r.error().message.c_str());
        return std::move(r).value();
    }();
    return net;
}

std::vector<int> identity(size_t n) {
    std::vector<int> v(n);
    for (size_t i = 0; i < n; ++i)
        v[i] = int(i);
    return v;
}

using test::expectUserError;

void expectResultFields(const json& j) {
    for (const char* k :
         {"valid", "reason", "energy_pj", "delay_cycles", "objective", "cost", "breakdown_pj",
          "dram_bytes", "noc_hop_bytes", "utilisation", "tree", "seed", "iterations", "elapsed_s",
          "model", "model_sha256", "hw", "batch"})
        QVERIFY2(j.contains(k), k);
    for (const char* k : {"dram", "noc", "mac", "buffer"})
        QVERIFY2(j["breakdown_pj"].contains(k), k);
    QVERIFY(j["tree"].is_string());
    QCOMPARE(int(j["objective"].size()), 2);
    QCOMPARE(j["model_sha256"].get<std::string>().size(), size_t(64));
    // cost = E^n D^m, and the breakdown sums to E.
    const double n = j["objective"][0], m = j["objective"][1];
    const double e = j["energy_pj"], d = j["delay_cycles"], c = j["cost"];
    QVERIFY(std::abs(c - std::pow(e, n) * std::pow(d, m)) <= 1e-9 * c);
    // (Every key of the breakdown is a part: the four above, and on templates with in-tile
    // storage levels one per level.)
    double sum = 0;
    for (const auto& [k, v] : j["breakdown_pj"].items())
        sum += double(v);
    QVERIFY(std::abs(sum - e) <= 1e-9 * e);
}

} // namespace

class TestCliSearch : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString path(const QString& name) const { return m_dir.filePath(name); }
    // The valid layer-sequential start at batch 8 (root sub-batch 2 fits the edge buffer).
    QString validTree() {
        const QString p = path("ls.tree");
        writeText(p, lsText(resnet(), identity(resnet().layers.size()), 8, 2));
        return p;
    }

  private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void unknownLayer() {
        const QString p = path("unknown.tree");
        writeText(p, "T 8/1\n\tno_such_layer 8\n");
        const Run r =
            cli({"evaluate", QString::fromStdString(kResnet), "--hw", "edge", "--tree", p});
        expectUserError(r, p, "no_such_layer");
        QVERIFY(r.out.isEmpty());
    }

    void leavesOutOfTopologicalOrder() {
        auto order = identity(resnet().layers.size());
        std::swap(order[0], order[1]); // the stem's consumer before the stem
        const QString p = path("order.tree");
        writeText(p, lsText(resnet(), order, 8, 1));
        const Run r =
            cli({"evaluate", QString::fromStdString(kResnet), "--hw", "edge", "--tree", p});
        expectUserError(r, p, "topological order");
        QVERIFY(r.err.contains(QString::fromStdString(resnet().layers[0].name)));
    }

    void subBatchNotDividingBatch() {
        const QString p = path("subbatch.tree");
        std::string text = lsText(resnet(), identity(resnet().layers.size()), 8, 1);
        text.replace(0, text.find('\n'), "T 8/3");
        writeText(p, text);
        const Run r =
            cli({"evaluate", QString::fromStdString(kResnet), "--hw", "edge", "--tree", p});
        expectUserError(r, p, "does not divide");
    }

    void badArguments_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("option"); // the message names it (empty: not checked)
        QTest::newRow("objective one number")
            << QStringList{"--objective", "1"} << QString("--objective");
        QTest::newRow("objective words")
            << QStringList{"--objective", "a,b"} << QString("--objective");
        QTest::newRow("objective negative")
            << QStringList{"--objective", "-1,1"} << QString("--objective");
        QTest::newRow("objective three")
            << QStringList{"--objective", "1,1,1"} << QString("--objective");
        QTest::newRow("seed not a number") << QStringList{"--seed", "abc"} << QString("--seed");
        QTest::newRow("seed negative") << QStringList{"--seed", "-3"} << QString("--seed");
        QTest::newRow("beta zero") << QStringList{"--beta", "0"} << QString("--beta");
        QTest::newRow("mode unknown") << QStringList{"--mode", "greedy"} << QString("--mode");
        QTest::newRow("batch zero") << QStringList{"--batch", "0"} << QString("--batch");
        QTest::newRow("chains text") << QStringList{"--chains", "two"} << QString("--chains");
        // Budgets that would silently collapse or never end.
        QTest::newRow("beta 1e30") << QStringList{"--beta", "1e30"} << QString("--beta");
        QTest::newRow("beta below one iteration")
            << QStringList{"--beta", "0.001"} << QString("--beta");
        QTest::newRow("beta inf") << QStringList{"--beta", "inf"} << QString("--beta");
        QTest::newRow("time zero") << QStringList{"--time", "0"} << QString("--time");
        QTest::newRow("time negative") << QStringList{"--time", "-2"} << QString("--time");
        QTest::newRow("time words") << QStringList{"--time", "soon"} << QString("--time");
        QTest::newRow("time beyond a week") << QStringList{"--time", "1e9"} << QString("--time");
        QTest::newRow("time and beta")
            << QStringList{"--time", "2", "--beta", "3"} << QString("--time");
        QTest::newRow("beta and iterations")
            << QStringList{"--beta", "3", "--iterations", "5"} << QString("--beta");
        QTest::newRow("iterations fraction")
            << QStringList{"--iterations", "2.5"} << QString("--iterations");
        QTest::newRow("iterations exponent")
            << QStringList{"--iterations", "1e3"} << QString("--iterations");
        QTest::newRow("iterations zero")
            << QStringList{"--iterations", "0"} << QString("--iterations");
        QTest::newRow("iterations beyond the cap")
            << QStringList{"--iterations", "9000000000000000000"} << QString("--iterations");
        QTest::newRow("chains fraction") << QStringList{"--chains", "1.5"} << QString("--chains");
        QTest::newRow("chains zero") << QStringList{"--chains", "0"} << QString("--chains");
        QTest::newRow("unknown option") << QStringList{"--colour", "red"} << QString("");
        QTest::newRow("layouts unknown")
            << QStringList{"--layouts", "nwhc"} << QString("--layouts");
        QTest::newRow("pin without a layout")
            << QStringList{"--pin-layout", "/conv1/Conv"} << QString("--pin-layout");
        QTest::newRow("pin to an unknown layout")
            << QStringList{"--pin-layout", "/conv1/Conv=rows"} << QString("--pin-layout");
        QTest::newRow("stage bytes negative")
            << QStringList{"--stage-bytes", "-1"} << QString("--stage-bytes");
        QTest::newRow("stage bytes fraction")
            << QStringList{"--stage-bytes", "1.5"} << QString("--stage-bytes");
        QTest::newRow("stage bytes words")
            << QStringList{"--stage-bytes", "4k"} << QString("--stage-bytes");
    }
    void badArguments() {
        QFETCH(QStringList, args);
        QFETCH(QString, option);
        for (const char* command : {"anneal", "compare"}) {
            const Run r =
                cli(QStringList{command, QString::fromStdString(kResnet), "--hw", "edge"} + args);
            QCOMPARE(r.status, 2);
            QVERIFY(r.out.isEmpty());
            QVERIFY(!r.err.isEmpty());
            QVERIFY2(r.err.trimmed().count('\n') <= 0 || r.err.contains("usage"),
                     qPrintable(r.err));
            if (!option.isEmpty()) QVERIFY2(r.err.contains(option), qPrintable(r.err));
        }
    }

    void badObjectiveOnEvaluate() {
        const Run r = cli({"evaluate", QString::fromStdString(kResnet), "--hw", "edge", "--tree",
                           validTree(), "--objective", "x"});
        QCOMPARE(r.status, 2);
        QVERIFY(r.err.contains("--objective"));
    }

    void badInputFiles() {
        expectUserError(cli({"anneal", path("missing.onnx"), "--hw", "edge"}), path("missing.onnx"),
                        "");
        expectUserError(cli({"anneal", QString::fromStdString(kResnet), "--hw", path("nohw.json")}),
                        path("nohw.json"), "");
        expectUserError(cli({"evaluate", QString::fromStdString(kResnet), "--hw", "edge", "--tree",
                             path("nothere.tree")}),
                        path("nothere.tree"), "");
    }

    void evaluateWritesTheResultJson() {
        const QString out = path("eval.json");
        const Run r = cli({"evaluate", QString::fromStdString(kResnet), "--hw", "edge", "--tree",
                           validTree(), "--objective", "2,1", "--json", out});
        QCOMPARE(r.status, 0);
        QVERIFY(r.out.isEmpty());
        const json j = readJson(out);
        expectResultFields(j);
        QCOMPARE(j["valid"].get<bool>(), true);
        QCOMPARE(j["batch"].get<int>(), 8);
        QCOMPARE(double(j["objective"][0]), 2.0);
        QVERIFY(j["seed"].is_null());
        QVERIFY(j["segments"].size() == resnet().layers.size());
        // No temporary file left behind.
        QCOMPARE(QDir(m_dir.path()).entryList({"eval.json.tmp*"}, QDir::Files).size(), 0);
    }

    // A template with a run model (docs/cost-model.md §4b): the result carries the plan and
    // each layer's layouts; one layout for all and a pin are honoured; export-instructions
    // writes the descriptors of the layouts the result was costed with.
    void layoutsThroughTheCli() {
        json hw = json::parse(std::ifstream(std::string(TILESCOPE_SAMPLES) + "/hw/edge-4x4.json"));
        hw["dram"]["burst_bytes"] = 64;
        hw["dram"]["run_overhead_cycles"] = 20;
        const QString hwPath = path("edge-runs.json"), out = path("layouts.json");
        writeText(hwPath, hw.dump());
        const QString model = QString::fromStdString(kResnet);
        Run r = cli({"evaluate", model, "--hw", hwPath, "--tree", validTree(), "--json", out,
                     "--layouts", "nhwc", "--pin-layout", "/conv1/Conv=nchwc"});
        QCOMPARE(r.status, 0);
        json j = readJson(out);
        QCOMPARE(j["layout_plan"]["layouts"].get<std::string>(), std::string("nhwc"));
        QCOMPARE(j["layout_plan"]["pins"]["/conv1/Conv"].get<std::string>(), std::string("nchwc"));
        for (const json& l : j["layers"]) {
            const std::string o = l["output_layout"];
            QVERIFY(o.empty() || o == (l["name"] == "/conv1/Conv" ? "nchwc" : "nhwc"));
            QVERIFY(l["run_efficiency"].get<double>() > 0 &&
                    l["run_efficiency"].get<double>() <= 1);
        }
        // The planned layouts are no slower on the DRAM than any single one.
        r = cli({"evaluate", model, "--hw", hwPath, "--tree", validTree(), "--json", out});
        QCOMPARE(r.status, 0);
        j = readJson(out);
        for (const auto& [name, cycles] : j["layout_plan"]["fixed_dram_cycles"].items())
            QVERIFY2(j["layout_plan"]["dram_cycles"].get<double>() <=
                         cycles.get<double>() * (1 + 1e-12),
                     name.c_str());
        // Exported with the descriptors the estimate charged.
        const QString dir = path("layouts-program");
        r = cli({"export-instructions", out, "--out", dir, "--formats", "json"});
        QCOMPARE(r.status, 0);
        const json prog = readJson(dir + "/program.json");
        double runs = 0, estimated = 0;
        for (const json& t : prog["tiles"])
            for (const json& i : t["instructions"])
                if (i.contains("dram")) runs += i["dram"]["runs"].get<double>();
        for (const json& l : j["layers"])
            estimated += l["dram_runs"].get<double>();
        QCOMPARE(runs, estimated);
        // A pin naming no tensor is a user error naming the model and the pin.
        r = cli({"evaluate", model, "--hw", hwPath, "--tree", validTree(), "--pin-layout",
                 "/conv9/Conv=nhwc"});
        expectUserError(r, model, "/conv9/Conv");
        r = cli(
            {"anneal", model, "--hw", hwPath, "--iterations", "5", "--pin-layout", "nothing=nhwc"});
        expectUserError(r, model, "nothing");
        // Without a run model the keys are absent.
        r = cli({"evaluate", model, "--hw", "edge", "--tree", validTree(), "--json", out,
                 "--layouts", "nhwc"});
        QCOMPARE(r.status, 0);
        QVERIFY(!readJson(out).contains("layout_plan"));
    }

    // --stage-bytes (docs/cli.md): the result's template carries it, export-instructions cuts
    // the program's instructions with it (or with its own), and the exported hw.json says so.
    void stageBytesThroughTheCli() {
        const QString model = QString::fromStdString(kResnet), out = path("stages.json");
        Run r = cli({"evaluate", model, "--hw", "edge", "--tree", validTree(), "--json", out,
                     "--stage-bytes", "4096"});
        QCOMPARE(r.status, 0);
        const json j = readJson(out);
        QCOMPARE(j["hw"]["tile"]["stage_bytes"].get<long long>(), 4096LL);
        auto maxStages = [](const json& prog) {
            std::uint32_t most = 0;
            for (const json& t : prog["tiles"])
                for (const json& i : t["instructions"])
                    most = std::max(most, i["stages"].get<std::uint32_t>());
            return most;
        };
        // Under 4 KiB stages resnet50's large transfers have more than 8 stages.
        const QString dir = path("stages-program");
        r = cli({"export-instructions", out, "--out", dir, "--formats", "json"});
        QCOMPARE(r.status, 0);
        QVERIFY(maxStages(readJson(dir + "/program.json")) > 8);
        QCOMPARE(readJson(dir + "/hw.json")["tile"]["stage_bytes"].get<long long>(), 4096LL);
        // Overridden with stages larger than any instruction: one stage each.
        const QString whole = path("whole-program");
        r = cli({"export-instructions", out, "--out", whole, "--formats", "json", "--stage-bytes",
                 "1000000000"});
        QCOMPARE(r.status, 0);
        QCOMPARE(maxStages(readJson(whole + "/program.json")), 1u);
        // 0 keeps the template's; a template without the key cuts every instruction into 8.
        r = cli({"evaluate", model, "--hw", "edge", "--tree", validTree(), "--json", out,
                 "--stage-bytes", "0"});
        QCOMPARE(r.status, 0);
        QVERIFY(!readJson(out)["hw"]["tile"].contains("stage_bytes"));
        r = cli({"export-instructions", out, "--out", dir, "--formats", "json"});
        QCOMPARE(r.status, 0);
        QCOMPARE(maxStages(readJson(dir + "/program.json")), 8u);
    }

    void evaluateInvalidScheduleIsAUserError() {
        // The compute-in-memory template with a 256-byte buffer: below the weights of one
        // output channel of the first convolution twice over, and of one of its input
        // channels, so no blocking fits (docs/cost-model.md §2b) and the tree overflows.
        json hw =
            readJson(QString::fromStdString(std::string(TILESCOPE_SAMPLES) + "/hw/cim-4x4.json"));
        hw["tile"]["buffer_bytes"] = 256.0;
        const QString hwPath = path("tiny-buffer.json");
        writeText(hwPath, hw.dump());
        const QString p = path("overflow.tree");
        writeText(p, lsText(resnet(), identity(resnet().layers.size()), 8, 1));
        const QString out = path("overflow.json");
        const Run r = cli({"evaluate", QString::fromStdString(kResnet), "--hw", hwPath, "--tree", p,
                           "--json", out});
        expectUserError(r, p, "buffer");
        const json j = readJson(out); // the full result with the reason, for scripts
        QCOMPARE(j["valid"].get<bool>(), false);
        QVERIFY(!j["reason"].get<std::string>().empty());
    }

    void annealIsSeededAndRoundTrips() {
        const QString a = path("a.json"), b = path("b.json"), treeOut = path("best.tree");
        const QStringList common{"anneal",   QString::fromStdString(kResnet),
                                 "--hw",     "edge",
                                 "--batch",  "8",
                                 "--beta",   "2",
                                 "--seed",   "17",
                                 "--chains", "2"};
        Run r = cli(common +
                    QStringList{"--threads", "1", "--json", a, "--tree-out", treeOut, "--quiet"});
        QCOMPARE(r.status, 0);
        QVERIFY2(r.err.isEmpty(), qPrintable(r.err)); // --quiet
        r = cli(common + QStringList{"--threads", "2", "--json", b});
        QCOMPARE(r.status, 0);
        QVERIFY(!r.err.isEmpty()); // progress lines (stderr is not a terminal here)
        const json ja = readJson(a), jb = readJson(b);
        expectResultFields(ja);
        QCOMPARE(ja["seed"].get<std::uint64_t>(), std::uint64_t(17));
        QCOMPARE(ja["iterations"].get<long long>(), 2LL * (long long)resnet().layers.size());
        QCOMPARE(ja["tree"], jb["tree"]);
        QCOMPARE(double(ja["cost"]), double(jb["cost"]));
        QVERIFY(double(ja["cost"]) <= double(ja["initial"]["cost"]));

        // The tree written with --tree-out evaluates to the reported cost.
        const QString ev = path("re.json");
        r = cli({"evaluate", QString::fromStdString(kResnet), "--hw", "edge", "--tree", treeOut,
                 "--json", ev});
        QCOMPARE(r.status, 0);
        QVERIFY(std::abs(double(readJson(ev)["cost"]) - double(ja["cost"])) <=
                1e-9 * double(ja["cost"]));
        // A result JSON is accepted as TREE and as --init.
        r = cli({"evaluate", QString::fromStdString(kResnet), "--hw", "edge", "--tree", a});
        QCOMPARE(r.status, 0);
        QVERIFY(r.out.contains("energy"));
        // The units policy (engine/util/units.h), as the GUI and the HTML report write them:
        // the delay and the segments' times in cycles and ms at the clock, energy in J.
        {
            const json je = readJson(ev);
            const std::string delay = formatTime(double(je["delay_cycles"]), 1.0);
            QVERIFY2(r.out.contains(QString::fromStdString(delay)), qPrintable(r.out));
            QVERIFY2(r.out.contains(QString::fromStdString(formatEnergy(double(je["energy_pj"])))),
                     qPrintable(r.out));
            const json& s0 = je["segments"][0];
            QVERIFY(r.out.contains(
                QString::fromStdString(formatTime(double(s0["total_time_cycles"]), 1.0))));
            QCOMPARE(double(s0["total_time_cycles"]),
                     double(s0["time_cycles"]) * double(s0["invocations"]));
        }
        r = cli({"anneal", QString::fromStdString(kResnet), "--hw", "edge", "--init", a, "--beta",
                 "1", "--pin", "/0", "--json", path("c.json"), "--quiet"});
        QCOMPARE(r.status, 0);
        const json jc = readJson(path("c.json"));
        QCOMPARE(double(jc["initial"]["cost"]), double(ja["cost"]));
        QCOMPARE(jc["batch"].get<int>(), 8);
        QVERIFY(double(jc["cost"]) <= double(ja["cost"]));
    }

    void annealWithABadPin() {
        const Run r = cli({"anneal", QString::fromStdString(kResnet), "--hw", "edge", "--batch",
                           "8", "--beta", "1", "--pin", "/500", "--quiet"});
        expectUserError(r, QString::fromStdString(kResnet), "/500");
    }

    void compareReportsAllFour() {
        const QString out = path("cmp.json");
        const Run r = cli({"compare", QString::fromStdString(kResnet), "--hw", "edge", "--batch",
                           "8", "--beta", "2", "--seed", "3", "--json", out, "--quiet"});
        QCOMPARE(r.status, 0);
        const json j = readJson(out);
        for (const char* k : {"ls", "lp", "dp-lp", "sa"}) {
            QVERIFY2(j.contains(k), k);
            expectResultFields(j[k]);
            QCOMPARE(j[k]["seed"].get<int>(), 3);
        }
        for (const char* k : {"ls", "lp"}) {
            QCOMPARE(j[k]["iterations"], j["sa"]["iterations"]); // same budget
            QCOMPARE(j[k]["iterations_run"], j["sa"]["iterations_run"]);
        }
        QCOMPARE(j["ls"]["mode"].get<std::string>(), std::string("ls"));
        QCOMPARE(j["lp"]["mode"].get<std::string>(), std::string("lp"));
        QCOMPARE(j["dp-lp"]["mode"].get<std::string>(), std::string("dp-lp"));
        QCOMPARE(j["sa"]["mode"].get<std::string>(), std::string("set"));
        // The edge preset's objective when none is given.
        QCOMPARE(double(j["objective"][0]), 2.0);
        QCOMPARE(double(j["objective"][1]), 1.0);
        const double sa = j["sa"]["cost"], ls = j["ls"]["cost"], lp = j["lp"]["cost"],
                     dp = j["dp-lp"]["cost"];
        // SA starts from the baselines' bests: it never loses to any of them.
        QVERIFY(sa <= ls && sa <= lp && sa <= dp);
        auto near = [](double a, double b) { return std::abs(a - b) <= 1e-12 * std::abs(b); };
        QVERIFY(near(double(j["ratios"]["sa_over_ls"]), sa / ls));
        QVERIFY(near(double(j["ratios"]["sa_over_lp"]), sa / lp));
        QVERIFY(near(double(j["ratios"]["sa_over_dp_lp"]), sa / dp));
        auto edp = [&](const char* k) {
            return double(j[k]["energy_pj"]) * double(j[k]["delay_cycles"]);
        };
        QVERIFY(near(double(j["ratios"]["edp_sa_over_ls"]), edp("sa") / edp("ls")));
        QVERIFY(near(double(j["ratios"]["edp_sa_over_dp_lp"]), edp("sa") / edp("dp-lp")));
    }

    // --mode ga: the full-space row runs the genetic search, keeps its key "sa" and shows
    // "ga" in the table; it still starts from the baselines' bests. Other modes are refused.
    void compareRunsTheGeneticSearch() {
        const QString out = path("cmp-ga.json");
        const Run r = cli({"compare", QString::fromStdString(kResnet), "--hw", "edge", "--batch",
                           "8", "--iterations", "100", "--mode", "ga", "--json", out, "--quiet"});
        QCOMPARE(r.status, 0);
        const json j = readJson(out);
        QCOMPARE(j["sa"]["mode"].get<std::string>(), std::string("ga"));
        const double sa = j["sa"]["cost"];
        QVERIFY(sa <= double(j["ls"]["cost"]) && sa <= double(j["lp"]["cost"]));
        const Run table = cli({"compare", QString::fromStdString(kResnet), "--hw", "edge",
                               "--batch", "8", "--iterations", "50", "--mode", "ga", "--quiet"});
        QCOMPARE(table.status, 0);
        QVERIFY2(table.out.contains("\nga "), qPrintable(table.out));
        const Run bad = cli({"compare", QString::fromStdString(kResnet), "--hw", "edge",
                             "--iterations", "50", "--mode", "ls", "--quiet"});
        QVERIFY(bad.status != 0);
        QVERIFY2(bad.err.contains("--mode takes set or ga"), qPrintable(bad.err));
    }

    void compareTableHasEdp() {
        const Run r = cli({"compare", QString::fromStdString(kResnet), "--hw", "edge", "--batch",
                           "8", "--iterations", "30", "--objective", "1,1", "--quiet"});
        QCOMPARE(r.status, 0);
        QVERIFY(r.out.contains("EDP"));
        QVERIFY(r.out.contains("dp-lp"));
        QVERIFY(r.out.contains("SA/DP-LP"));
        QVERIFY(r.out.contains("E^1 x D^1"));
    }

    void defaultObjectiveIsThePresets() {
        const QString out = path("cloud.json");
        Run r = cli({"anneal", QString::fromStdString(kResnet), "--hw", "cloud", "--batch", "8",
                     "--iterations", "20", "--json", out, "--quiet"});
        QCOMPARE(r.status, 0);
        json j = readJson(out);
        QCOMPARE(double(j["objective"][0]), 1.0);
        QCOMPARE(double(j["objective"][1]), 2.0);
        // evaluate agrees with the search on the default.
        const QString ev = path("cloud-eval.json");
        r = cli({"evaluate", QString::fromStdString(kResnet), "--hw", "cloud", "--tree", out,
                 "--json", ev});
        QCOMPARE(r.status, 0);
        QCOMPARE(double(readJson(ev)["cost"]), double(j["cost"]));
        // --objective still wins.
        r = cli({"anneal", QString::fromStdString(kResnet), "--hw", "cloud", "--batch", "8",
                 "--iterations", "20", "--objective", "1,1", "--json", out, "--quiet"});
        QCOMPARE(r.status, 0);
        j = readJson(out);
        QCOMPARE(double(j["objective"][1]), 1.0);
    }

    void timeBudgetIsReplayable() {
        const QString out = path("timed.json"), again = path("replay.json");
        // 3 s: the portfolio's starting trees come out of the budget, and under the
        // sanitizers (scripts/ci-extra.sh, ~5x slower) half a second left no iteration.
        Run r = cli({"anneal", QString::fromStdString(kResnet), "--hw", "edge", "--batch", "8",
                     "--time", "3", "--json", out});
        QCOMPARE(r.status, 0);
        QVERIFY2(r.err.contains("left"), qPrintable(r.err)); // progress shows the time left
        const json j = readJson(out);
        QCOMPARE(double(j["config"]["seconds"]), 3.0);
        const long long run = j["iterations_run"], per = j["iterations"];
        const int chains = j["config"]["chains"];
        QVERIFY(run > 0);
        QCOMPARE(per, std::max(1LL, run / chains));
        // The recorded count replays a run of the same length on an iteration budget.
        r = cli({"anneal", QString::fromStdString(kResnet), "--hw", "edge", "--batch", "8",
                 "--iterations", QString::number(per), "--json", again, "--quiet"});
        QCOMPARE(r.status, 0);
        const json k = readJson(again);
        QCOMPARE(k["iterations"].get<long long>(), per);
        QCOMPARE(k["iterations_run"].get<long long>(), per * chains);
        QCOMPARE(double(k["config"]["seconds"]), 0.0);
    }

    // On an iteration budget dp-lp costs its whole segment table, whatever the machine's
    // speed; the default time budget plans the table by the time left, so a slow build (the
    // sanitizers) may cost fewer segments.
    void dpLpMode() {
        const QString a = path("dp1.json"), b = path("dp2.json");
        Run r =
            cli({"anneal", QString::fromStdString(kResnet), "--hw", "edge", "--batch", "8",
                 "--mode", "dp-lp", "--iterations", "1", "--threads", "1", "--json", a, "--quiet"});
        QCOMPARE(r.status, 0);
        r = cli({"anneal", QString::fromStdString(kResnet), "--hw", "edge", "--batch", "8",
                 "--mode", "dp-lp", "--iterations", "1", "--threads", "2", "--json", b, "--quiet"});
        QCOMPARE(r.status, 0);
        const json ja = readJson(a), jb = readJson(b);
        QCOMPARE(ja["mode"].get<std::string>(), std::string("dp-lp"));
        QCOMPARE(ja["tree"], jb["tree"]); // deterministic, whatever the thread count
        QCOMPARE(ja["stats"]["evaluations"], jb["stats"]["evaluations"]);
        QVERIFY(ja["tree"].get<std::string>().find("\tS ") != std::string::npos);
        QVERIFY(double(ja["cost"]) <= double(ja["initial"]["cost"]));
    }

    // A model with free dimensions (the decoder's seq and past): refused with the list until
    // bound with --dim; the result records the bindings, and export-instructions loads the
    // model with them again.
    void freeDimensionsBound() {
        const QString model = QStringLiteral(TILESCOPE_TESTDATA "/llama_decoder.onnx");
        Run r = cli({"anneal", model, "--hw", "edge", "--iterations", "20", "--quiet"});
        expectUserError(r, model, "free dimensions seq (input 'x' axis 1), past");
        const QString out = path("decode.json"), prog = path("decode-prog");
        r = cli({"anneal", model, "--hw", "edge", "--dim", "seq=1", "--dim=past=255", "--seed", "1",
                 "--iterations", "40", "--json", out, "--quiet"});
        QVERIFY2(r.status == 0, qPrintable(r.err));
        const json j = readJson(out);
        QVERIFY(j["valid"].get<bool>());
        QCOMPARE(j["dims"], (json{{"past", 255}, {"seq", 1}}));
        QCOMPARE(j["macs"].get<double>(), 493568.0);
        r = cli({"export-instructions", out, "--out", prog, "--formats", "bin"});
        QVERIFY2(r.status == 0, qPrintable(r.err));
        r = cli({"anneal", model, "--hw", "edge", "--dim", "seq", "--quiet"});
        QCOMPARE(r.status, 2);
        QVERIFY2(r.err.contains("expected NAME=VALUE"), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestCliSearch)
#include "tst_cli_search.moc"
