// A leaf's alternative partitions (docs/cost-model.md §2, "Alternative partitions"): the
// mapper ranks them by the leaf's own cost under the objective, a tree names one by its
// factors (text and JSON, checked on input), the evaluator and the program run it, and the
// search moves leaves among them when asked (docs/search.md).
#include "clirunner.h"
#include "codegen/codegen.h"
#include "eval/evaluator.h"
#include "mapping/mapper.h"
#include "model/model_loader.h"
#include "netbuilder.h"
#include "replaycheck.h"
#include "search/operators.h"
#include "search/search.h"
#include "tree/tree_json.h"

#include <QtTest>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

using namespace tilescope;

namespace {

const std::string kResnet = std::string(TILESCOPE_SAMPLES) + "/models/resnet50.onnx";
const std::string kConv2 = "/layer1/layer1.0/conv2/Conv";

Network resnet() {
    auto net = loadModel(kResnet);
    if (!net.ok()) qFatal("%s", net.error().message.c_str());
    return std::move(net).value();
}

// The layer-sequential tree of `net` at `batch` with leaf `layer` on partition p.
RATree lsWith(const Network& net, int batch, int layer, const PartitionFactors& p) {
    RATree t = RATree::layerSequential(net, batch);
    for (int id = 0; id < t.size(); ++id)
        if (!t.node(id).isCut() && t.node(id).layer == layer) {
            auto r = edit::setPartition(t, id, p);
            if (!r.ok()) qFatal("%s", r.error().message.c_str());
            return std::move(r).value();
        }
    qFatal("no leaf of layer %d", layer);
}

std::string readFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

} // namespace

class TestPartitions : public QObject {
    Q_OBJECT
  private slots:
    void rankedByTheLeafsCost();
    void treeFormats();
    void badPartitionsRefused();
    void namedPartitionEvaluatedAndReplayed();
    void namedPartitionOffTheListFallsBack();
    void repartitionOperator();
    void searchMovesPartitions();
    void searchChoosesPartitions();
    void cli();
};

// The list: the mapper's choice first, then at most kAlternatives - 1 others, none the
// same partition twice, each fitting the buffer unblocked, cheapest first for the leaf
// alone (Mapper::leafCost: energy^n x delay^m of its compute, buffers, levels and each
// tile's data over one hop).
void TestPartitions::rankedByTheLeafsCost() {
    const Network net = resnet();
    Hardware hw;
    QVERIFY(presetHardware("edge", hw));
    Mapper mapper(net, hw);
    mapper.setObjective(2, 1);
    const int layer = net.indexOf(kConv2);
    const auto& alts = mapper.alternatives(layer, 16, 4);
    QCOMPARE(alts.size(), size_t(Mapper::kAlternatives));
    QCOMPARE(Mapper::factorsOf(alts[0]), Mapper::factorsOf(mapper.map(layer, 16, 4)));
    for (size_t i = 0; i < alts.size(); ++i) {
        QCOMPARE(alts[i].groupSize(), 16);
        QVERIFY(!alts[i].blocked());
        QVERIFY(alts[i].bufferPerTile() <= hw.bufferBytes);
        QVERIFY(!alts[i].tiling.empty()); // each with its loop order
        for (size_t j = 0; j < i; ++j)
            QVERIFY(Mapper::factorsOf(alts[i]) != Mapper::factorsOf(alts[j]));
        if (i >= 2) QVERIFY(mapper.leafCost(alts[i - 1]).cost <= mapper.leafCost(alts[i]).cost);
    }
    // The cost by hand for one: E^2 x D of its own energy and cycles.
    const Mapper::LeafCost c = mapper.leafCost(alts[1]);
    QVERIFY(c.energyPj > double(alts[1].macs) * hw.energy.macPj);
    QVERIFY(c.cycles > alts[1].cycles);
    QCOMPARE(c.cost, c.energyPj * c.energyPj * c.cycles);
    // Another objective ranks by its own cost (its own memo).
    mapper.setObjective(1, 2);
    const auto& delayFirst = mapper.alternatives(layer, 16, 4);
    for (size_t i = 2; i < delayFirst.size(); ++i)
        QVERIFY(mapper.leafCost(delayFirst[i - 1]).cost <= mapper.leafCost(delayFirst[i]).cost);
    // A slice that does not fit unblocked has the mapper's blocked mapping alone.
    Hardware small = hw;
    small.bufferBytes = 256 * 1024;
    Mapper tight(net, small);
    const auto& one = tight.alternatives(net.indexOf("/conv1/Conv"), 1, 8);
    QVERIFY(one[0].blocked());
    QCOMPARE(one.size(), size_t(1));
}

// `part=K..B..H..W..[C..]` on a leaf's line, and "partition": [k, b, h, w, c] in JSON,
// both read back as written; the mapper's choice writes nothing.
void TestPartitions::treeFormats() {
    const Network net = test::network(
        "two", {test::conv("a", 16, 32, 16, 3, -1), test::conv("b", 32, 32, 16, 3, 0)});
    const RATree t = test::parseTree("T 4/1\n\ta 4 part=K2B2H1W1\n\tb 4\n", net);
    QCOMPARE(t.node(1).partition, (PartitionFactors{2, 2, 1, 1, 1}));
    QCOMPARE(t.node(2).partition, PartitionFactors{});
    const std::string text = treeToText(t, net);
    QVERIFY2(text.find("a 4 part=K2B2H1W1\n") != std::string::npos, text.c_str());
    QVERIFY(text.find("b 4 part") == std::string::npos);
    QVERIFY(test::parseTree(text, net) == t);
    const RATree c = test::parseTree("T 4/1\n\ta 4 part=K1B1H2W1C2 pinned\n\tb 4\n", net);
    QCOMPARE(c.node(1).partition, (PartitionFactors{1, 1, 2, 1, 2}));
    QVERIFY(c.node(1).pinned);
    const nlohmann::json j = treeToJsonValue(t, net);
    QCOMPARE(j["root"]["children"][0]["partition"], nlohmann::json({2, 2, 1, 1, 1}));
    QVERIFY(!j["root"]["children"][1].contains("partition"));
    auto back = parseTreeJson(j.dump(), net, "t.json");
    QVERIFY2(back.ok(), back.ok() ? "" : back.error().message.c_str());
    QVERIFY(*back == t);
}

// Each refusal names the file, the place and the reason.
void TestPartitions::badPartitionsRefused() {
    const Network net = test::network(
        "two", {test::conv("a", 16, 32, 16, 3, -1), test::conv("b", 32, 32, 16, 3, 0)});
    for (const char* bad : {"part=K2B2H1", "part=K2B0H1W1", "part=2x2", "part=K2B2H1W1C", ""}) {
        const std::string text = std::string("T 4/1\n\ta 4 ") + bad + "\n\tb 4\n";
        auto r = parseTreeText(text, net, "bad.tree");
        if (!*bad) {
            QVERIFY(r.ok());
            continue;
        }
        QVERIFY2(!r.ok(), bad);
        const std::string& m = r.error().message;
        QVERIFY2(m.find("bad.tree") != std::string::npos && m.find("line 2") != std::string::npos &&
                     m.find("partition") != std::string::npos,
                 m.c_str());
    }
    auto cut = parseTreeText("T 4/1 part=K2B2H1W1\n\ta 4\n\tb 4\n", net, "cut.tree");
    QVERIFY(!cut.ok());
    QVERIFY2(cut.error().message.find("a cut has none") != std::string::npos,
             cut.error().message.c_str());
    auto j = parseTreeJson(R"({"format": "tilescope-ratree", "version": 1, "root":
        {"type": "T", "batch": 4, "children": [
        {"type": "leaf", "layer": "a", "batch": 4, "partition": [2, 2, 1, 1]},
        {"type": "leaf", "layer": "b", "batch": 4}]}})",
                           net, "bad.json");
    QVERIFY(!j.ok());
    QVERIFY2(j.error().message.find("5 positive integers") != std::string::npos,
             j.error().message.c_str());
    RATree t = test::parseTree("T 4/1\n\ta 4\n\tb 4\n", net);
    QVERIFY(!edit::setPartition(t, t.root, {1, 1, 1, 1, 1}).ok());
    QVERIFY(!edit::setPartition(t, 1, {2, 0, 1, 1, 1}).ok());
    t.node(1).pinned = true;
    QVERIFY(!edit::setPartition(t, 1, {2, 2, 1, 1, 1}).ok());
}

// A named partition is what the leaf runs: its figures name it, the cost moves, and the
// program the generator writes for the tree replays within 15% with the estimate's DRAM
// bytes.
void TestPartitions::namedPartitionEvaluatedAndReplayed() {
    const Network net = resnet();
    Hardware hw;
    QVERIFY(presetHardware("edge", hw));
    EvalContext ctx(net, hw);
    EvalOptions opt;
    opt.objective = {2, 1};
    opt.detail = true;
    const int layer = net.indexOf(kConv2);
    const RATree plain = RATree::layerSequential(net, 4);
    const Evaluation e0 = evaluate(ctx, plain, 4, opt);
    QVERIFY2(e0.valid, e0.reason.c_str());
    const auto& alts = ctx.alternatives(layer, 16, 4);
    QVERIFY(alts.size() > 3);
    const RATree t = lsWith(net, 4, layer, Mapper::factorsOf(alts[3]));
    const Evaluation e = evaluate(ctx, t, 4, opt);
    QVERIFY2(e.valid, e.reason.c_str());
    int leaf = -1;
    for (int id = 0; id < t.size(); ++id)
        if (!t.node(id).isCut() && t.node(id).layer == layer) leaf = id;
    QCOMPARE(e.nodes[size_t(leaf)].partition, alts[3].partitionLabel());
    QVERIFY(e.nodes[size_t(leaf)].namedPartition);
    QVERIFY(e0.nodes[size_t(leaf)].partition != alts[3].partitionLabel());
    QVERIFY(e.cost != e0.cost);
    // The same tree in a fresh context costs the same (the memo keys name the partition).
    const Evaluation fresh = evaluate(net, hw, t, 4, opt);
    QCOMPARE(fresh.cost, e.cost);
    auto r = generateProgram(ctx, t, 4, {});
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    SimResult s;
    test::replayChecked(*r, hw, s);
    if (QTest::currentTestFailed()) return;
    const double ratio = double(s.delay) / e.delay;
    qInfo("sim/eval delay %.3f", ratio);
    QVERIFY2(ratio >= 0.85 && ratio <= 1.15, qPrintable(QString::number(ratio)));
}

// Factors that are not among the leaf's alternatives on the tiles it gets (another tile
// count, or no partition of them) leave it on the mapper's choice, costed as the plain tree.
void TestPartitions::namedPartitionOffTheListFallsBack() {
    const Network net = resnet();
    Hardware hw;
    QVERIFY(presetHardware("edge", hw));
    EvalOptions opt;
    opt.objective = {2, 1};
    opt.detail = true;
    const int layer = net.indexOf(kConv2);
    const Evaluation e0 = evaluate(net, hw, RATree::layerSequential(net, 4), 4, opt);
    const Evaluation e = evaluate(net, hw, lsWith(net, 4, layer, {4, 1, 1, 1, 1}), 4, opt);
    QVERIFY2(e.valid, e.reason.c_str());
    QCOMPARE(e.cost, e0.cost);
    for (const NodeFigures& f : e.nodes)
        QVERIFY(!f.namedPartition);
}

// Operator 7 draws among a leaf's other alternatives, the mapper's choice written as no
// factors; without partitionsOf it is never drawn and the draws are the six's.
void TestPartitions::repartitionOperator() {
    const Network net = test::network(
        "two", {test::conv("a", 16, 32, 16, 3, -1), test::conv("b", 32, 32, 16, 3, 0)});
    const auto deps = net.transitiveDeps();
    RATree t = test::parseTree("T 4/1\n\ta 4 part=K2B2H1W1\n\tb 4\n", net);
    OperatorContext ops{net, deps, {}};
    QCOMPARE(ops.operatorCount(), kOperatorCount);
    QVERIFY(neighbours(t, Operator::Repartition, ops).empty());
    const std::vector<PartitionFactors> list{
        {4, 1, 1, 1, 1}, {2, 2, 1, 1, 1}, {1, 4, 1, 1, 1}, {1, 1, 2, 2, 1}};
    ops.partitionsOf = [&](int, std::vector<PartitionFactors>& out) { out = list; };
    QCOMPARE(ops.operatorCount(), kOperatorCount + 1);
    // Leaf a runs list[1]: it may go to the mapper's choice (no factors), list[2] or list[3];
    // leaf b runs the mapper's choice: to list[1], list[2] or list[3].
    const auto ns = neighbours(t, Operator::Repartition, ops);
    QCOMPARE(ns.size(), size_t(6));
    std::set<std::pair<int, PartitionFactors>> seen;
    for (const RATree& n : ns)
        for (int id : {1, 2})
            if (n.node(id).partition != t.node(id).partition)
                seen.insert({id, n.node(id).partition});
    QCOMPARE(seen.size(), size_t(6));
    QVERIFY(seen.count({1, PartitionFactors{}}));
    QVERIFY(!seen.count({1, list[1]}));
    QVERIFY(!seen.count({2, PartitionFactors{}}));
    Rng rng(7);
    for (int i = 0; i < 20; ++i) {
        auto r = applyOperator(t, Operator::Repartition, ops, rng);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    }
    t.node(1).pinned = t.node(2).pinned = true;
    QVERIFY(neighbours(t, Operator::Repartition, ops).empty());
}

// resnet50 on cloud at batch 8, 600 iterations on one chain, every leaf on the mapper's
// choice: the plain search the partition tests set against.
static SearchConfig plainCloudSearch() {
    SearchConfig cfg;
    cfg.totalBatch = 8;
    cfg.iterations = 600;
    cfg.chains = 1;
    cfg.objective = {1, 2};
    cfg.choosePartitions = false;
    return cfg;
}

// With SearchConfig::partitions the chains move partitions (kept only where the cost
// drops): the best tree names some, each one its leaf runs, and evaluates to the cost the
// search reports. Off, the same seed and budget give the result they always gave (no leaf
// names a partition).
void TestPartitions::searchMovesPartitions() {
    const Network net = resnet();
    Hardware hw;
    QVERIFY(presetHardware("cloud", hw));
    SearchConfig cfg = plainCloudSearch();
    auto offRun = runSearch(net, hw, cfg);
    QVERIFY2(offRun.ok(), offRun.ok() ? "" : offRun.error().message.c_str());
    const SearchResult& off = *offRun;
    QVERIFY(off.best.valid);
    for (const RANode& n : off.bestTree.nodes)
        QCOMPARE(n.partition, PartitionFactors{});
    cfg.partitions = true;
    cfg.choosePartitions = true;
    auto onRun = runSearch(net, hw, cfg);
    QVERIFY2(onRun.ok(), onRun.ok() ? "" : onRun.error().message.c_str());
    const SearchResult& on = *onRun;
    QVERIFY(on.best.valid);
    int named = 0;
    for (const RANode& n : on.bestTree.nodes)
        named += n.partition != PartitionFactors{};
    QVERIFY(named > 0);
    EvalOptions opt;
    opt.objective = cfg.objective;
    opt.detail = true;
    const Evaluation again = evaluate(net, hw, on.bestTree, 8, opt);
    QCOMPARE(again.cost, on.best.cost);
    // Every partition the tree names is one its leaf runs (names a move left behind are
    // dropped).
    for (int id = 0; id < on.bestTree.size(); ++id)
        if (on.bestTree.node(id).partition != PartitionFactors{})
            QVERIFY(again.nodes[size_t(id)].namedPartition);
    qInfo("cost without / with partition moves: %.4g / %.4g (%d leaves named)", off.best.cost,
          on.best.cost, named);
}

// By default the search ends with the partition choice: the chains run as with every leaf on
// the mapper's choice (the same seed and budget reach the same tree), then each leaf of the
// best tree takes the alternative the whole tree costs least with. The result is never
// dearer, names only partitions its leaves run, and evaluates to the cost reported.
void TestPartitions::searchChoosesPartitions() {
    const Network net = resnet();
    Hardware hw;
    QVERIFY(presetHardware("cloud", hw));
    SearchConfig cfg = plainCloudSearch();
    auto plainRun = runSearch(net, hw, cfg);
    QVERIFY2(plainRun.ok(), plainRun.ok() ? "" : plainRun.error().message.c_str());
    QVERIFY(!plainRun->partitionChoice);
    cfg.choosePartitions = true;
    auto chosenRun = runSearch(net, hw, cfg);
    QVERIFY2(chosenRun.ok(), chosenRun.ok() ? "" : chosenRun.error().message.c_str());
    const SearchResult& chosen = *chosenRun;
    QVERIFY(chosen.partitionChoice);
    const PartitionChoiceStats& st = *chosen.partitionChoice;
    QCOMPARE(st.costBefore, plainRun->best.cost);
    QVERIFY(st.complete);
    QVERIFY(st.evaluations > 0);
    QVERIFY(st.changed > 0);
    QVERIFY(chosen.best.cost < plainRun->best.cost);
    // Without its names the tree is the plain run's.
    RATree unnamed = chosen.bestTree;
    int named = 0;
    for (RANode& n : unnamed.nodes) {
        named += n.partition != PartitionFactors{};
        n.partition = {};
    }
    QCOMPARE(named, st.changed);
    QVERIFY(unnamed == plainRun->bestTree);
    EvalOptions opt;
    opt.objective = cfg.objective;
    opt.detail = true;
    const Evaluation again = evaluate(net, hw, chosen.bestTree, 8, opt);
    QCOMPARE(again.cost, chosen.best.cost);
    for (int id = 0; id < chosen.bestTree.size(); ++id)
        if (chosen.bestTree.node(id).partition != PartitionFactors{})
            QVERIFY(again.nodes[size_t(id)].namedPartition);
    // No single leaf's other alternative lowers the cost further once the choice has
    // settled (a pass that changed nothing ended it).
    QVERIFY(st.settled);
    EvalContext ctx(net, hw);
    RATree t = chosen.bestTree;
    Evaluation e = evaluate(ctx, t, 8, opt);
    const PartitionChoiceStats second =
        choosePartitions(t, e, ctx, {net, 8, opt, BlockRepetition{}, {}, {}});
    QCOMPARE(second.changed, 0);
    QCOMPARE(e.cost, chosen.best.cost);
    qInfo("cost with the mapper's choice / with the partition choice: %.4g / %.4g (%d leaves "
          "named, %lld trees costed)",
          plainRun->best.cost, chosen.best.cost, named, st.evaluations);
}

// The CLI: `mapping` lists the alternatives (text and JSON, under --objective), and
// `anneal --partitions` records the setting and writes the named partitions in its tree.
void TestPartitions::cli() {
    const QString model = QString::fromStdString(kResnet);
    test::CliRun r = test::runCli({"mapping", model, "--hw", "edge", "--layer",
                                   QString::fromStdString(kConv2), "--batch", "4", "--json"});
    QVERIFY2(r.status == 0, qPrintable(r.err + r.out));
    const auto m = nlohmann::json::parse(r.out.toStdString());
    const auto& parts = m["alternatives"]["partitions"];
    QCOMPARE(parts.size(), size_t(Mapper::kAlternatives));
    QCOMPARE(parts[0]["partition"], m["partition"]["label"]);
    QCOMPARE(m["alternatives"]["objective"]["energy_exp"].get<double>(), 2.0);
    for (size_t i = 1; i < parts.size(); ++i)
        QVERIFY(parts[i - 1]["cost"].get<double>() <= parts[i]["cost"].get<double>() || i == 1);
    r = test::runCli({"mapping", model, "--hw", "edge", "--layer", QString::fromStdString(kConv2),
                      "--batch", "4", "--objective", "1,2"});
    QVERIFY2(r.status == 0, qPrintable(r.err + r.out));
    QVERIFY2(r.out.contains("energy^1 x delay^2") && r.out.contains("part=K"), qPrintable(r.out));
    QTemporaryDir dir;
    const QString result = dir.filePath("r.json");
    r = test::runCli({"anneal", model, "--hw", "cloud", "--batch", "8", "--iterations", "300",
                      "--seed", "1", "--partitions", "--json", result, "--quiet"});
    QVERIFY2(r.status == 0, qPrintable(r.err + r.out));
    const auto res = nlohmann::json::parse(readFile(result.toStdString()));
    QVERIFY(res["config"]["partitions"].get<bool>());
    const std::string tree = res["tree"].get<std::string>();
    int named = 0;
    for (const auto& l : res["layers"])
        named += l["partition_named"].get<bool>();
    size_t written = 0;
    for (size_t at = tree.find(" part="); at != std::string::npos; at = tree.find(" part=", at + 1))
        ++written;
    QCOMPARE(int(written), named);
    QVERIFY(res["config"]["choose_partitions"].get<bool>());
    QVERIFY(res.contains("partition_choice"));
    QVERIFY(res["cost"].get<double>() <= res["partition_choice"]["cost_before"].get<double>());
    // --mapper-partitions: every leaf on the mapper's choice, none named.
    r = test::runCli({"anneal", model, "--hw", "cloud", "--batch", "8", "--iterations", "300",
                      "--seed", "1", "--mapper-partitions", "--json", result, "--quiet"});
    QVERIFY2(r.status == 0, qPrintable(r.err + r.out));
    const auto plain = nlohmann::json::parse(readFile(result.toStdString()));
    QVERIFY(!plain["config"]["choose_partitions"].get<bool>());
    QVERIFY(!plain.contains("partition_choice"));
    QVERIFY(plain["tree"].get<std::string>().find(" part=") == std::string::npos);
    r = test::runCli({"anneal", model, "--hw", "edge", "--partitions", "--mapper-partitions"});
    QCOMPARE(r.status, 2);
    QVERIFY2(r.err.contains("exclude each other"), qPrintable(r.err));
    r = test::runCli({"anneal", model, "--hw", "edge", "--partitions", "--mode", "bogus"});
    QCOMPARE(r.status, 2);
}

QTEST_GUILESS_MAIN(TestPartitions)
#include "tst_partitions.moc"
