// Repeated blocks (engine/tree/repetition.h, docs/search.md "Repeated blocks"): finding a
// network's identical blocks, trees tied to the first block, edits and the search keeping
// them tied, the evaluator's memos shared by copies of a layer, and the CLI.
#include "clirunner.h"
#include "eval/evaluator.h"
#include "hw/hardware.h"
#include "model/model_loader.h"
#include "netbuilder.h"
#include "search/search.h"
#include "tree/repetition.h"
#include "tree/tree_json.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using namespace tilescope;
using namespace tilescope::test;

namespace {

const std::string kDecode64 = std::string(TILESCOPE_TESTDATA) + "/llama_decode64.onnx";

// A stem, `blocks` residual blocks (conv, conv, add with the block's input), a head.
Network residualBlocks(int blocks) {
    Network n;
    n.name = "blocks";
    n.layers.push_back(conv("stem", 3, 32, 16, 3, -1));
    for (int b = 0; b < blocks; ++b) {
        const int in = int(n.layers.size()) - 1;
        const std::string p = "b" + std::to_string(b) + ".";
        n.layers.push_back(conv(p + "c1", 32, 32, 16, 3, in));
        n.layers.push_back(conv(p + "c2", 32, 32, 16, 3, in + 1));
        n.layers.push_back(add(p + "add", 32, 16, in + 2, in));
    }
    n.layers.push_back(conv("head", 32, 8, 16, 1, int(n.layers.size()) - 1));
    return finish(n);
}

int tiedCount(const RATree& t) {
    int n = 0;
    for (const RANode& x : t.nodes)
        n += x.tied ? 1 : 0;
    return n;
}

} // namespace

class TestRepetition : public QObject {
    Q_OBJECT
  private slots:
    void findsResidualBlocks();
    void findsDecoderBlocks();
    void noBlocksInAChain();
    void tiesALayerSequentialTree();
    void editsOfTheFirstBlockReachTheCopies();
    void copiesShareTheMemos();
    void searchKeepsBlocksTied();
    void cliReportsTheBlocks();
    void generateTiesEveryPhase();
    void compareWithRepeatedBlocks();
    void treeFilesKeepTheTies();
};

void TestRepetition::findsResidualBlocks() {
    const Network net = residualBlocks(4);
    const BlockRepetition r = findRepetition(net);
    QCOMPARE(r.first, 1);
    QCOMPARE(r.length, 3);
    QCOMPARE(r.count, 4);
    QCOMPARE(r.blockOf(0), -1);
    QCOMPARE(r.blockOf(4), 1);
    QCOMPARE(r.blockOf(13), 4); // the head, after the blocks
    QCOMPARE(QString::fromStdString(r.describe()),
             QStringLiteral("4 blocks of 3 layers (layers 1-12)"));
    // Copies of a layer share its class once their producers' producers are copies too:
    // from the third block on (the first reads the stem, the second the first's add).
    const auto cls = net.layerClasses();
    QCOMPARE(cls[size_t(10)], cls[size_t(7)]);
    QCOMPARE(cls[size_t(12)], cls[size_t(9)]);
    QVERIFY(cls[size_t(4)] != cls[size_t(1)]);
    const auto mapping = net.mappingClasses();
    QCOMPARE(mapping[size_t(7)], mapping[size_t(4)]);
}

void TestRepetition::findsDecoderBlocks() {
    auto net = loadModel(kDecode64);
    QVERIFY2(net, net ? "" : net.error().message.c_str());
    const BlockRepetition r = findRepetition(*net);
    QCOMPARE(r.count, 2);
    QCOMPARE(r.first, 0);
    QCOMPARE(r.length * 2, int(net->layers.size()));
    QVERIFY(net->layers[size_t(r.length)].name.rfind("/blocks.1/", 0) == 0);
}

void TestRepetition::noBlocksInAChain() {
    Network n;
    n.layers.push_back(conv("a", 3, 16, 16, 3, -1));
    n.layers.push_back(conv("b", 16, 32, 16, 3, 0));
    n.layers.push_back(conv("c", 32, 8, 16, 1, 1));
    n = finish(n);
    QVERIFY(!findRepetition(n).active());
    // Without blocks a tree is tied as it is.
    const RATree t = RATree::layerSequential(n, 2);
    auto tied = tieBlocks(t, n, findRepetition(n));
    QVERIFY(tied);
    QVERIFY(*tied == t);
}

void TestRepetition::tiesALayerSequentialTree() {
    const Network net = residualBlocks(3);
    const BlockRepetition r = findRepetition(net);
    const RATree ls = RATree::layerSequential(net, 4);
    auto tied = tieBlocks(ls, net, r);
    QVERIFY2(tied, tied ? "" : tied.error().message.c_str());
    QVERIFY(*tied == ls);              // the same schedule
    QCOMPARE(tiedCount(*tied), 2 * 3); // blocks 1 and 2: three leaves each
    QVERIFY(isTied(*tied, net, r));
    QVERIFY(!isTied(ls, net, r)); // the copies are not marked
    // A tree whose root child mixes the first block and the stem cannot be tied.
    auto mixed = edit::wrap(ls, net, 0, 0, 2, NodeType::T, 1);
    QVERIFY(mixed);
    auto no = tieBlocks(*mixed, net, r);
    QVERIFY(!no);
    QVERIFY2(no.error().message.find("two blocks") != std::string::npos,
             no.error().message.c_str());
}

void TestRepetition::editsOfTheFirstBlockReachTheCopies() {
    const Network net = residualBlocks(3);
    const BlockRepetition r = findRepetition(net);
    const RATree tied = *tieBlocks(RATree::layerSequential(net, 4), net, r);
    // An edit of a copy is refused, naming it.
    const int copyLeaf = tied.leafOf(5); // block 1's second conv
    auto refused = edit::wrap(tied, net, 0, tied.childIndex(copyLeaf), 2, NodeType::S, 1);
    QVERIFY(!refused);
    QVERIFY2(refused.error().message.find("repeats the first block") != std::string::npos,
             refused.error().message.c_str());
    // The first block's two convolutions in an S cut: every copy follows once tied again.
    auto edited = edit::wrap(tied, net, 0, 1, 2, NodeType::S, 2);
    QVERIFY2(edited, edited ? "" : edited.error().message.c_str());
    auto again = tieBlocks(*edited, net, r);
    QVERIFY2(again, again ? "" : again.error().message.c_str());
    int sCuts = 0;
    for (const RANode& n : again->nodes)
        if (n.type == NodeType::S) {
            ++sCuts;
            QCOMPARE(n.subBatch, 2);
            QCOMPARE(int(n.children.size()), 2);
        }
    QCOMPARE(sCuts, 3);
    for (int b = 1; b < 3; ++b) {
        const int leaf = again->leafOf(1 + 3 * b);
        const int cut = again->node(leaf).parent;
        QCOMPARE(again->node(cut).type, NodeType::S);
        QVERIFY(again->node(cut).tied);
        QCOMPARE(again->layersUnder(cut), (std::vector<int>{1 + 3 * b, 2 + 3 * b}));
    }
}

void TestRepetition::copiesShareTheMemos() {
    // The copies of a changed leaf share one mapping and one routing: evaluating a tied
    // tree after a change of the first block misses as often with 8 blocks as with 4.
    Hardware hw;
    QVERIFY(presetHardware("edge", hw));
    EvalOptions opt;
    long long missesOf[2] = {0, 0};
    int i = 0;
    for (int blocks : {4, 8}) {
        const Network net = residualBlocks(blocks);
        const BlockRepetition r = findRepetition(net);
        EvalContext ctx(net, hw);
        const RATree a = *tieBlocks(RATree::layerSequential(net, 4), net, r);
        QVERIFY(evaluate(ctx, a, 4, opt).valid);
        const EvalStats before = ctx.stats();
        auto wrapped = edit::wrap(a, net, 0, 1, 2, NodeType::S, 1);
        QVERIFY(wrapped);
        const RATree b = *tieBlocks(*wrapped, net, r);
        const Evaluation eb = evaluate(ctx, b, 4, opt);
        QVERIFY(eb.valid);
        const EvalStats after = ctx.stats();
        missesOf[i++] =
            (after.routeCalls - before.routeCalls) - (after.routeHits - before.routeHits);
        // The same figures as a fresh context's.
        const Evaluation fresh = evaluate(net, hw, b, 4, opt);
        QCOMPARE(eb.cost, fresh.cost);
        QCOMPARE(eb.delay, fresh.delay);
        QCOMPARE(eb.energy.total(), fresh.energy.total());
    }
    QVERIFY(missesOf[0] > 0);
    QCOMPARE(missesOf[1], missesOf[0]);
}

void TestRepetition::searchKeepsBlocksTied() {
    const Network net = residualBlocks(4);
    Hardware hw;
    QVERIFY(presetHardware("edge", hw));
    SearchConfig c;
    c.totalBatch = 4;
    c.iterations = 300;
    c.chains = 2;
    c.repeatBlocks = true;
    c.objective = defaultObjective(hw);
    auto res = runSearch(net, hw, c);
    QVERIFY2(res, res ? "" : res.error().message.c_str());
    QCOMPARE(res->repetition.count, 4);
    const BlockRepetition& r = res->repetition;
    QVERIFY(isTied(res->bestTree, net, r));
    QVERIFY(isTied(res->initialTree, net, r));
    // The whole tree's cost, exact: a fresh evaluation of the best tree agrees.
    EvalOptions opt;
    opt.objective = c.objective;
    const Evaluation e = evaluate(net, hw, res->bestTree, 4, opt);
    QVERIFY(e.valid);
    QCOMPARE(e.cost, res->best.cost);
    // Every copy's subtree is the first block's, shifted.
    const RATree& t = res->bestTree;
    const auto& kids = t.node(t.root).children;
    std::vector<std::string> blockText(size_t(r.count));
    for (int k : kids) {
        const auto layers = t.layersUnder(k);
        const int b = r.blockOf(layers.front());
        if (b < 0 || b >= r.count) continue;
        std::string text = subtreeToText(t, net, k);
        // Names differ by block: compare the shapes of the subtrees by their layer offsets.
        std::string shape;
        for (int l : layers)
            shape += std::to_string(l - b * r.length) + ",";
        blockText[size_t(b)] += shape + "|" + std::to_string(t.node(k).batch) + ";";
    }
    for (int b = 1; b < r.count; ++b)
        QCOMPARE(blockText[size_t(b)], blockText[0]);
    // The budget counts the searched layers: the stem, one block and the head.
    QCOMPARE(res->iterations, 300LL);
}

void TestRepetition::cliReportsTheBlocks() {
    QTemporaryDir dir;
    const QString out = dir.filePath("r.json");
    const CliRun run =
        runCli({QStringLiteral("anneal"), QString::fromStdString(kDecode64), QStringLiteral("--hw"),
                QStringLiteral("edge"), QStringLiteral("--iterations"), QStringLiteral("60"),
                QStringLiteral("--repeat-blocks"), QStringLiteral("--json"), out});
    QVERIFY2(run.status == 0, qPrintable(run.err));
    QFile f(out);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject j = QJsonDocument::fromJson(f.readAll()).object();
    const QJsonObject rep = j.value(QStringLiteral("repetition")).toObject();
    QCOMPARE(rep.value(QStringLiteral("blocks")).toInt(), 2);
    QVERIFY(rep.value(QStringLiteral("first_layer")).toString().startsWith("/blocks.0/"));
    QVERIFY(rep.value(QStringLiteral("last_layer")).toString().startsWith("/blocks.1/"));
    QCOMPARE(rep.value(QStringLiteral("searched_layers")).toInt(),
             rep.value(QStringLiteral("layers_per_block")).toInt());
    QVERIFY(j.value(QStringLiteral("config")).toObject().value("repeat_blocks").toBool());
    // The tree it wrote is tied: the second block scheduled as the first.
    auto net = loadModel(kDecode64);
    QVERIFY(net);
    auto tree =
        parseTreeText(j.value(QStringLiteral("tree")).toString().toStdString(), *net, "r.json");
    QVERIFY2(tree, tree ? "" : tree.error().message.c_str());
    auto tied = tieBlocks(*tree, *net, findRepetition(*net));
    QVERIFY(tied);
    QVERIFY(*tied == *tree);
    // The summary names the blocks.
    const CliRun shown =
        runCli({QStringLiteral("anneal"), QString::fromStdString(kDecode64), QStringLiteral("--hw"),
                QStringLiteral("edge"), QStringLiteral("--iterations"), QStringLiteral("20"),
                QStringLiteral("--repeat-blocks")});
    QVERIFY2(shown.status == 0, qPrintable(shown.err));
    QVERIFY2(shown.out.contains(QStringLiteral("2 blocks of")), qPrintable(shown.out));
    // Without the option no key is written.
    const QString plain = dir.filePath("p.json");
    const CliRun run2 =
        runCli({QStringLiteral("anneal"), QString::fromStdString(kDecode64), QStringLiteral("--hw"),
                QStringLiteral("edge"), QStringLiteral("--iterations"), QStringLiteral("20"),
                QStringLiteral("--json"), plain});
    QVERIFY2(run2.status == 0, qPrintable(run2.err));
    QFile g(plain);
    QVERIFY(g.open(QIODevice::ReadOnly));
    QVERIFY(!QJsonDocument::fromJson(g.readAll()).object().contains("repetition"));
}

void TestRepetition::generateTiesEveryPhase() {
    QTemporaryDir dir;
    const QString out = dir.filePath("g.json");
    const CliRun run = runCli(
        {QStringLiteral("generate"), QStringLiteral(TILESCOPE_TESTDATA "/llama_decoder.onnx"),
         QStringLiteral("--hw"), QStringLiteral("testchip"), QStringLiteral("--prompt"),
         QStringLiteral("32"), QStringLiteral("--tokens"), QStringLiteral("8"),
         QStringLiteral("--points"), QStringLiteral("2"), QStringLiteral("--iterations"),
         QStringLiteral("30"), QStringLiteral("--repeat-blocks"), QStringLiteral("--json"), out});
    QVERIFY2(run.status == 0, qPrintable(run.err));
    QFile f(out);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonArray phases =
        QJsonDocument::fromJson(f.readAll()).object().value("phases").toArray();
    QCOMPARE(phases.size(), 3); // the prefill and two decode points
    for (const auto& p : phases) {
        const QJsonObject rep =
            p.toObject().value("result").toObject().value("repetition").toObject();
        QCOMPARE(rep.value(QStringLiteral("blocks")).toInt(), 2);
    }
}

void TestRepetition::compareWithRepeatedBlocks() {
    // The LP baseline's own start (a greedy pipeline) spans the blocks: it starts from the
    // tied layer-sequential tree instead, and every row runs.
    QTemporaryDir dir;
    const QString out = dir.filePath("c.json");
    const CliRun run =
        runCli({QStringLiteral("compare"), QString::fromStdString(kDecode64),
                QStringLiteral("--hw"), QStringLiteral("edge"), QStringLiteral("--iterations"),
                QStringLiteral("30"), QStringLiteral("--repeat-blocks"), QStringLiteral("--quiet"),
                QStringLiteral("--json"), out});
    QVERIFY2(run.status == 0, qPrintable(run.err));
    QFile f(out);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(!QJsonDocument::fromJson(f.readAll()).object().isEmpty());
}

void TestRepetition::treeFilesKeepTheTies() {
    const Network net = residualBlocks(3);
    const RATree tied = *tieBlocks(RATree::layerSequential(net, 2), net, findRepetition(net));
    const std::string text = treeToJson(tied, net);
    auto back = parseTreeJson(text, net, "t.json");
    QVERIFY2(back, back ? "" : back.error().message.c_str());
    QVERIFY(isTied(*back, net, findRepetition(net)));
    // A tied mark on a node that is no copy is refused, naming the file.
    RATree wrong = tied;
    wrong.node(wrong.node(wrong.root).children.front()).tied = true; // the stem
    auto refused = parseTreeJson(treeToJson(wrong, net), net, "t.json");
    QVERIFY(!refused);
    QVERIFY2(refused.error().message.find("t.json") != std::string::npos &&
                 refused.error().message.find("tied") != std::string::npos,
             refused.error().message.c_str());
    // Files without the key read as before: nothing tied.
    auto plain = parseTreeJson(treeToJson(RATree::layerSequential(net, 2), net), net, "p.json");
    QVERIFY(plain);
    QVERIFY(!hasTiedBlocks(*plain));
}

QTEST_GUILESS_MAIN(TestRepetition)
#include "tst_repetition.moc"
