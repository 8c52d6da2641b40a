// RA tree: validation rules, the text and JSON formats, and the edit operations,
// on networks built here in code (no importer involved).
#include "tree/ratree.h"
#include "tree/tree_json.h"

#include <QElapsedTimer>
#include <QFile>
#include <QtTest>
#include <algorithm>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

using namespace tilescope;

namespace {

#define COMPARE_STR(a, b) QCOMPARE(QString::fromStdString(a), QString::fromStdString(b))
// Checks that message m contains every fragment; prints m when it does not.
#define VERIFY_MENTIONS(m, ...)                                                                    \
    do {                                                                                           \
        const std::string msg_ = (m);                                                              \
        const std::vector<std::string> frags_{__VA_ARGS__}; /* copies: args may be temporaries */  \
        for (const std::string& f_ : frags_)                                                       \
            QVERIFY2(                                                                              \
                msg_.find(f_) != std::string::npos,                                                \
                qPrintable(QString("'%1' not in: %2")                                              \
                               .arg(QString::fromStdString(f_), QString::fromStdString(msg_))));   \
    } while (0)

struct NetBuilder {
    Network net;
    int add(const std::string& name, std::vector<int> producers, LayerKind kind = LayerKind::Conv) {
        Layer l;
        l.name = name;
        l.kind = kind;
        if (producers.empty()) producers.push_back(-1);
        for (int p : producers) {
            LayerInput in;
            in.producer = p;
            if (p < 0) in.networkInput = "input";
            in.bytesPerSample = 1024;
            l.inputs.push_back(in);
        }
        net.layers.push_back(l);
        return int(net.layers.size()) - 1;
    }
};

Network chainNet(int n) {
    NetBuilder b;
    b.net.name = "chain";
    int prev = -1;
    for (int i = 0; i < n; ++i)
        prev =
            b.add("c" + std::to_string(i), prev < 0 ? std::vector<int>{} : std::vector<int>{prev});
    return b.net;
}

// in -> {a, b} -> add -> out
Network diamondNet() {
    NetBuilder b;
    b.net.name = "diamond";
    const int in = b.add("in", {});
    const int a = b.add("a", {in});
    const int bb = b.add("b", {in});
    const int add = b.add("add", {a, bb}, LayerKind::Eltwise);
    b.add("out", {add});
    return b.net;
}

// Two residual blocks, the second with a downsample branch: the golden dumps use it.
Network smallResNet() {
    NetBuilder b;
    b.net.name = "smallres";
    const int conv1 = b.add("conv1", {});
    const int pool1 = b.add("pool1", {conv1}, LayerKind::Pool);
    const int b1a = b.add("b1a", {pool1});
    const int b1b = b.add("b1b", {b1a});
    const int add1 = b.add("add1", {pool1, b1b}, LayerKind::Eltwise);
    const int b2a = b.add("b2a", {add1});
    const int b2b = b.add("b2b", {b2a});
    const int ds2 = b.add("ds2", {add1});
    const int add2 = b.add("add2", {ds2, b2b}, LayerKind::Eltwise);
    b.add("fc", {add2}, LayerKind::Gemm);
    return b.net;
}

// ResNet-like: stem, 16 basic blocks (downsample branch at each stage start), head: 56 layers.
Network resNet50Like() {
    NetBuilder b;
    b.net.name = "resnet_like";
    int x = b.add("conv1", {});
    x = b.add("pool1", {x}, LayerKind::Pool);
    for (int blk = 0; blk < 16; ++blk) {
        const std::string p = "blk" + std::to_string(blk) + "_";
        const int c1 = b.add(p + "conv1", {x});
        const int c2 = b.add(p + "conv2", {c1});
        int shortcut = x;
        if (blk % 4 == 0) shortcut = b.add(p + "down", {x});
        x = b.add(p + "add", {shortcut, c2}, LayerKind::Eltwise);
    }
    x = b.add("gap", {x}, LayerKind::Pool);
    b.add("fc", {x}, LayerKind::Gemm);
    return b.net;
}

// Transformer-like: 4 encoder blocks with Q/K/V branches and two residual adds each.
Network transformerLike() {
    NetBuilder b;
    b.net.name = "transformer_like";
    int x = b.add("embed", {}, LayerKind::Gemm);
    for (int blk = 0; blk < 4; ++blk) {
        const std::string p = "enc" + std::to_string(blk) + "_";
        const int ln1 = b.add(p + "ln1", {x}, LayerKind::Vector);
        const int q = b.add(p + "q", {ln1}, LayerKind::Gemm);
        const int k = b.add(p + "k", {ln1}, LayerKind::Gemm);
        const int v = b.add(p + "v", {ln1}, LayerKind::Gemm);
        const int qk = b.add(p + "qk", {q, k}, LayerKind::MatMul);
        const int sm = b.add(p + "softmax", {qk}, LayerKind::Vector);
        const int av = b.add(p + "av", {sm, v}, LayerKind::MatMul);
        const int proj = b.add(p + "proj", {av}, LayerKind::Gemm);
        const int add1 = b.add(p + "add1", {x, proj}, LayerKind::Eltwise);
        const int ln2 = b.add(p + "ln2", {add1}, LayerKind::Vector);
        const int ff1 = b.add(p + "ff1", {ln2}, LayerKind::Gemm);
        const int ff2 = b.add(p + "ff2", {ff1}, LayerKind::Gemm);
        x = b.add(p + "add2", {add1, ff2}, LayerKind::Eltwise);
    }
    b.add("head", {x}, LayerKind::Gemm);
    return b.net;
}

RATree parseOk(const std::string& text, const Network& net) {
    auto r = parseTreeText(text, net, "test");
    if (!r) qFatal("test tree does not parse: %s", r.error().message.c_str());
    return *r;
}

std::string readFile(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) qFatal("cannot open %s", qPrintable(path));
    return f.readAll().toStdString();
}

// Invariants written independently of validateStructure (which the ops already run), so
// the random walk does not only test the validator against itself.
QString independentCheck(const RATree& t, const Network& net, int totalBatch) {
    if (t.empty() || t.root != 0) return "root is not node 0";
    // Pre-order numbering: a recursive walk must visit ids 0, 1, 2, ... in order.
    int expectId = 0;
    std::vector<int> leafLayers;
    QString err;
    std::function<void(int)> walk = [&](int id) {
        if (!err.isEmpty()) return;
        if (id != expectId++) err = QString("node %1 out of pre-order").arg(id);
        const RANode& n = t.node(id);
        if (n.isCut()) {
            if (n.children.empty()) err = "empty cut";
            if (n.batch % n.subBatch) err = "sb does not divide b";
            for (int c : n.children) {
                if (t.node(c).parent != id) err = "bad parent link";
                if (t.node(c).batch != n.batch / n.subBatch) err = "child batch";
                walk(c);
            }
        } else {
            if (n.subBatch != 1) err = "leaf sb";
            leafLayers.push_back(n.layer);
        }
    };
    walk(0);
    if (!err.isEmpty()) return err;
    if (expectId != t.size()) return "unreachable nodes kept";
    if (t.node(0).batch != totalBatch) return "root batch";
    std::vector<int> pos(net.layers.size(), -1);
    for (size_t i = 0; i < leafLayers.size(); ++i) {
        if (pos[size_t(leafLayers[i])] >= 0) return "duplicate layer";
        pos[size_t(leafLayers[i])] = int(i);
    }
    for (size_t l = 0; l < net.layers.size(); ++l) {
        if (pos[l] < 0) return "missing layer";
        for (const auto& in : net.layers[l].inputs)
            if (in.producer >= 0 && pos[size_t(in.producer)] > pos[l]) return "order";
    }
    return {};
}

// Text of every pinned subtree (outermost pinned nodes), sorted: ops move pinned subtrees
// around as a whole, so their paths change but their text must not.
std::multiset<std::string> pinnedSubtrees(const RATree& t, const Network& net) {
    std::multiset<std::string> out;
    for (int i = 0; i < t.size(); ++i)
        if (t.node(i).pinned && (t.node(i).parent < 0 || !t.frozen(t.node(i).parent)))
            out.insert(subtreeToText(t, net, i));
    return out;
}

const char* kDiamondTree = "T 8/1\n"
                           "\tS 8/2\n"
                           "\t\tin 4\n"
                           "\t\ta 4\n"
                           "\tT 8/4\n"
                           "\t\tb 2\n"
                           "\t\tadd 2\n"
                           "\tout 8\n";
// Arena ids after parsing kDiamondTree (pre-order): 0 /, 1 /0, 2 /0/0 in, 3 /0/1 a,
// 4 /1, 5 /1/0 b, 6 /1/1 add, 7 /2 out.

using Mutation = std::function<void(RATree&)>;
struct RuleCase {
    const char* name;
    Mutation mutate;
    int totalBatch;
    std::vector<const char*> mentions;
};

const std::vector<RuleCase>& ruleCases() {
    static const std::vector<RuleCase> cases = {
        {"valid", [](RATree&) {}, 8, {}},
        {"no root", [](RATree& t) { t.root = -1; }, 8, {"root"}},
        {"missing layer",
         [](RATree& t) { t.node(0).children.pop_back(); },
         8,
         {"missing layer", "'out'"}},
        {"duplicated layer",
         [](RATree& t) { t.node(7).layer = 0; },
         8,
         {"duplicated layer", "'in'", "/0/0", "/2"}},
        {"leaf with children",
         [](RATree& t) {
             RANode extra;
             extra.layer = 4;
             extra.batch = 8;
             extra.parent = 7;
             t.nodes.push_back(extra);
             t.node(7).children.push_back(t.size() - 1);
         },
         8,
         {"leaf: leaf /2", "'out'", "has children"}},
        {"leaf without layer", [](RATree& t) { t.node(7).layer = 99; }, 8, {"leaf: leaf /2", "99"}},
        {"empty cut",
         [](RATree& t) {
             RANode cut;
             cut.type = NodeType::S;
             cut.batch = 8;
             cut.parent = 0;
             t.nodes.push_back(cut);
             t.node(0).children.push_back(t.size() - 1);
         },
         8,
         {"empty cut", "cut /3"}},
        {"topological order",
         [](RATree& t) { std::swap(t.node(0).children[0], t.node(0).children[1]); },
         8,
         {"topological order: layer 'b' at /0/0 comes before its producer 'in' at /1/0"}},
        {"producer later in same cut",
         [](RATree& t) { std::swap(t.node(4).children[0], t.node(4).children[1]); },
         8,
         {"topological order: layer 'add' at /1/0 comes before its producer 'b' at /1/1"}},
        {"sub-batch does not divide",
         [](RATree& t) { t.node(1).subBatch = 3; },
         8,
         {"sub-batch: cut /0", "3", "batch 8"}},
        {"zero sub-batch", [](RATree& t) { t.node(4).subBatch = 0; }, 8, {"sub-batch: cut /1"}},
        {"child batch",
         [](RATree& t) { t.node(5).batch = 4; },
         8,
         {"child batch: node /1/0", "batch 4", "8/4 = 2"}},
        {"leaf sub-batch",
         [](RATree& t) { t.node(7).subBatch = 2; },
         8,
         {"leaf sub-batch: leaf /2", "'out'"}},
        {"root batch", [](RATree&) {}, 16, {"root batch", "8", "16"}},
        {"non-positive batch", [](RATree& t) { t.node(1).batch = 0; }, 8, {"batch: node /0"}},
        {"shared child",
         [](RATree& t) { t.node(4).children.push_back(7); },
         8,
         {"tree shape: node /2 is also a child of /1"}},
        {"parent link",
         [](RATree& t) { t.node(5).parent = 1; },
         8,
         {"tree shape: node /1/0", "parent /1"}},
        {"child id outside arena",
         [](RATree& t) { t.node(4).children.push_back(42); },
         8,
         {"tree shape: cut /1", "42"}},
    };
    return cases;
}

struct ParseCase {
    const char* name;
    const char* text;
    const char* mentions1;
    const char* mentions2;
};

const std::vector<ParseCase>& parseErrorCases() {
    static const std::vector<ParseCase> cases = {
        {"empty text", "# nothing here\n\n", "f.tree: no tree", ""},
        {"indentation jump", "T 8/1\n\tin 8\n\t\t\ta 8\n",
         "f.tree: line 3:", "jumps from depth 1 to 3"},
        {"unknown layer", "T 8/1\n\tin 8\n\tnope 8\n", "f.tree: line 3:", "unknown layer 'nope'"},
        {"duplicated layer", "T 8/1\n\tin 8\n\tin 8\n",
         "f.tree: line 3:", "duplicated layer 'in' (already at line 2)"},
        {"non-numeric batch", "T 8/1\n\tin eight\n", "f.tree: line 2:", "batch 'eight'"},
        {"non-numeric cut batch", "T x/1\n\tin 8\n", "f.tree: line 1:", "batch 'x'"},
        {"non-numeric sub-batch", "T 8/y\n\tin 8\n", "f.tree: line 1:", "sub-batch count 'y'"},
        {"sub-batch not dividing", "T 8/1\n\tS 8/3\n\t\tin 8\n",
         "f.tree: line 2:", "sub-batch count 3 does not divide batch 8"},
        {"indented under a leaf", "T 8/1\n\tin 8\n\t\ta 8\n",
         "f.tree: line 3:", "indented under the leaf 'in' at line 2"},
        {"second root", "T 8/1\n\tin 8\nT 8/1\n", "f.tree: line 3:", "second root"},
        {"indented root", "\tT 8/1\n", "f.tree: line 1:", "root"},
        {"space indentation", "T 8/1\n    in 8\n", "f.tree: line 2:", "tabs"},
        {"single token", "T 8/1\n\tin\n", "f.tree: line 2:", "expected"},
        {"cut without sub-batch", "T 8\n\tin 8\n",
         "f.tree: line 1:", "unknown layer 'T' (a cut is written 'T b/sb')"},
        {"zero batch", "T 8/1\n\tin 0\n", "f.tree: line 2:", "not a positive integer"},
        // Structural rules come from validateStructure, prefixed by the file.
        {"missing layers", "T 8/1\n\tin 8\n\ta 8\n", "f.tree: missing layer", "'b'"},
        {"child batch", "T 8/2\n\tin 8\n\ta 4\n\tb 4\n\tadd 4\n\tout 4\n", "f.tree: child batch",
         "node /0"},
        {"order", "T 8/1\n\ta 8\n\tin 8\n\tb 8\n\tadd 8\n\tout 8\n", "f.tree: topological order",
         "layer 'a' at /0"},
    };
    return cases;
}

} // namespace

class TestRATree : public QObject {
    Q_OBJECT

  private slots:
    void layerSequentialAndQueries() {
        const Network net = diamondNet();
        const RATree t = RATree::layerSequential(net, 4);
        QCOMPARE(t.size(), 6);
        QCOMPARE(t.root, 0);
        QVERIFY(t.node(0).type == NodeType::T);
        QCOMPARE(t.node(0).batch, 4);
        QCOMPARE(t.node(0).subBatch, 1);
        QVERIFY(!validateStructure(t, net, 4));
        QCOMPARE(t.leavesInOrder(), (std::vector<int>{0, 1, 2, 3, 4}));
        COMPARE_STR(treeToText(t, net), "T 4/1\n\tin 4\n\ta 4\n\tb 4\n\tadd 4\n\tout 4\n");

        const RATree d = parseOk(kDiamondTree, net);
        COMPARE_STR(d.pathOf(0), "/");
        COMPARE_STR(d.pathOf(6), "/1/1");
        COMPARE_STR(d.pathOf(7), "/2");
        QCOMPARE(d.nodeAtPath("/"), 0);
        QCOMPARE(d.nodeAtPath("/1/1"), 6);
        QCOMPARE(d.nodeAtPath("/2"), 7);
        QCOMPARE(d.nodeAtPath("/3"), -1);
        QCOMPARE(d.nodeAtPath("/2/0"), -1); // a leaf has no children
        QCOMPARE(d.nodeAtPath("/1/"), -1);
        QCOMPARE(d.nodeAtPath("1/1"), -1);
        QCOMPARE(d.nodeAtPath("/x"), -1);
        for (int i = 0; i < d.size(); ++i)
            QCOMPARE(d.nodeAtPath(d.pathOf(i)), i);
        QCOMPARE(d.depth(0), 0);
        QCOMPARE(d.depth(6), 2);
        QCOMPARE(d.leafOf(3), 6);
        QCOMPARE(d.leafOf(99), -1);
        QCOMPARE(d.childIndex(6), 1);
        QCOMPARE(d.childIndex(0), -1);
        QCOMPARE(d.layersUnder(4), (std::vector<int>{2, 3}));
        QVERIFY(d.contains(4, 6));
        QVERIFY(!d.contains(1, 6));
        QVERIFY(d.attached(7));
    }

    void frozenAndPinnedAncestor() {
        const Network net = diamondNet();
        RATree d = parseOk(kDiamondTree, net);
        d.node(4).pinned = true;
        QVERIFY(d.frozen(4));
        QVERIFY(d.frozen(6));
        QVERIFY(!d.frozen(0));
        QVERIFY(!d.frozen(3));
        QCOMPARE(d.pinnedAncestor(6), 4);
        QCOMPARE(d.pinnedAncestor(3), -1);
    }

    void compactAndPropagate() {
        const Network net = diamondNet();
        RATree d = parseOk(kDiamondTree, net);
        // Scramble the arena: a dead node at the front and the children of the root
        // stored out of pre-order. compact() must restore pre-order and drop the dead node.
        RATree s;
        s.nodes.resize(size_t(d.size()) + 1);
        s.nodes[0].type = NodeType::S;                    // unreachable garbage
        std::vector<int> perm = {3, 7, 1, 5, 2, 8, 6, 4}; // old id -> new id
        for (int i = 0; i < d.size(); ++i) {
            RANode n = d.node(i);
            if (n.parent >= 0) n.parent = perm[size_t(n.parent)];
            for (int& c : n.children)
                c = perm[size_t(c)];
            s.nodes[size_t(perm[size_t(i)])] = n;
        }
        s.root = perm[0];
        QVERIFY(s == d); // structural equality ignores the arena layout
        s.compact();
        QCOMPARE(s.size(), d.size());
        QCOMPARE(s.root, 0);
        for (int i = 0; i < s.size(); ++i) {
            QCOMPARE(s.node(i).children, d.node(i).children);
            QCOMPARE(s.node(i).parent, d.node(i).parent);
        }

        // propagateBatches: root 8 / sb 4 -> children 2; the T /1 with sb 4 then cannot
        // divide its batch 2, so its children keep their old batches and validation names /1.
        RATree p = d;
        p.node(0).subBatch = 4;
        p.propagateBatches();
        QCOMPARE(p.node(1).batch, 2);
        QCOMPARE(p.node(2).batch, 1);
        QCOMPARE(p.node(4).batch, 2);
        QCOMPARE(p.node(5).batch, 2);
        QCOMPARE(p.node(7).batch, 2);
        const auto e = validateStructure(p, net, 8);
        QVERIFY(e);
        VERIFY_MENTIONS(e->message, "sub-batch: cut /1");
    }

    void equality() {
        const Network net = diamondNet();
        const RATree a = parseOk(kDiamondTree, net);
        RATree b = a;
        QVERIFY(a == b);
        b.node(7).pinned = true;
        QVERIFY(!(a == b));
        b = a;
        b.node(1).type = NodeType::T;
        QVERIFY(!(a == b));
        b = a;
        b.node(2).layer = 1;
        QVERIFY(!(a == b));
        QVERIFY(RATree() == RATree());
        QVERIFY(!(RATree() == a));
    }

    void validationRule_data() {
        QTest::addColumn<int>("index");
        for (size_t i = 0; i < ruleCases().size(); ++i)
            QTest::newRow(ruleCases()[i].name) << int(i);
    }
    void validationRule() {
        QFETCH(int, index);
        const RuleCase& c = ruleCases()[size_t(index)];
        const Network net = diamondNet();
        RATree t = parseOk(kDiamondTree, net);
        c.mutate(t);
        const auto e = validateStructure(t, net, c.totalBatch);
        if (c.mentions.empty()) {
            QVERIFY2(!e, e ? e->message.c_str() : "");
            return;
        }
        QVERIFY(e.has_value());
        for (const char* m : c.mentions)
            VERIFY_MENTIONS(e->message, m);
    }

    void textRoundTrip_data() {
        QTest::addColumn<QString>("text");
        QTest::newRow("diamond") << QString(kDiamondTree);
        QTest::newRow("sequential") << QString("T 2/1\n\tin 2\n\ta 2\n\tb 2\n\tadd 2\n\tout 2\n");
        QTest::newRow("root S") << QString(
            "S 4/4\n\tin 1\n\tT 1/1\n\t\ta 1\n\t\tb 1\n\tadd 1\n\tout 1\n");
        QTest::newRow("pinned") << QString("T 8/1 pinned\n\tS 8/2\n\t\tin 4 pinned\n\t\ta 4\n"
                                           "\tT 8/4 pinned\n\t\tb 2\n\t\tadd 2\n\tout 8\n");
    }
    void textRoundTrip() {
        QFETCH(QString, text);
        const Network net = diamondNet();
        const RATree t = parseOk(text.toStdString(), net);
        COMPARE_STR(treeToText(t, net), text.toStdString());
        QVERIFY(parseOk(treeToText(t, net), net) == t);
    }

    void parseTolerance() {
        const Network net = diamondNet();
        // Comments, blank lines, CRLF and trailing annotations are accepted and ignored.
        const std::string text = "# a comment\r\n\r\nT 8/1 E:1.0e9, T:2e6\r\n"
                                 "\tin 8 junk pinned\r\n\t# indented comment\n\ta 8\n\tb 8\n"
                                 "\tadd 8 pinned extra\n\n\tout 8\t\n";
        const auto r = parseTreeText(text, net, "f.tree");
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        COMPARE_STR(treeToText(*r, net), "T 8/1\n\tin 8\n\ta 8\n\tb 8\n\tadd 8 pinned\n\tout 8\n");
    }

    void layersNamedLikeCuts() {
        // A layer may be called "S" or "T": the '/' of the second token tells them apart.
        NetBuilder b;
        const int s = b.add("S", {});
        const int t = b.add("T", {s});
        b.add("x y", {t}); // a name with a blank survives the text format
        const std::string text = "T 2/1\n\tS 2\n\tS 2/2\n\t\tT 1\n\t\tx y 1 pinned\n";
        const auto r = parseTreeText(text, b.net, "f.tree");
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        QVERIFY(r->node(1).type == NodeType::Leaf);
        QCOMPARE(r->node(1).layer, 0);
        QVERIFY(r->node(2).type == NodeType::S);
        QVERIFY(r->node(3).type == NodeType::Leaf);
        QCOMPARE(r->node(3).layer, 1);
        QCOMPARE(r->node(4).layer, 2);
        QVERIFY(r->node(4).pinned);
        COMPARE_STR(treeToText(*r, b.net), text);
    }

    void parseErrors_data() {
        QTest::addColumn<int>("index");
        for (size_t i = 0; i < parseErrorCases().size(); ++i)
            QTest::newRow(parseErrorCases()[i].name) << int(i);
    }
    void parseErrors() {
        QFETCH(int, index);
        const ParseCase& c = parseErrorCases()[size_t(index)];
        const auto r = parseTreeText(c.text, diamondNet(), "f.tree");
        QVERIFY(!r);
        VERIFY_MENTIONS(r.error().message, c.mentions1, c.mentions2);
    }

    // A dump in the reference code's print_struct format (cost annotations after each
    // node) reads as the same tree as our plain text golden, which we write back exactly.
    void goldenReferenceDump() {
        const Network net = smallResNet();
        const QString dir = QStringLiteral(TILESCOPE_TESTDATA "/trees/");
        const auto r =
            parseTreeText(readFile(dir + "smallres_struct.txt"), net, "smallres_struct.txt");
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        const std::string golden = readFile(dir + "smallres.tree");
        COMPARE_STR(treeToText(*r, net), golden);
        QVERIFY(parseOk(golden, net) == *r);
        // Spot checks against the golden written by hand: S 4/4 at /1/2 feeds batch-1 leaves.
        const int s = r->nodeAtPath("/1/2");
        QVERIFY(r->node(s).type == NodeType::S);
        QCOMPARE(r->node(s).batch, 4);
        QCOMPARE(r->node(r->node(s).children[2]).batch, 1);
        COMPARE_STR(net.layers[size_t(r->node(r->node(s).children[2]).layer)].name, "ds2");
    }

    // smallres.json was derived from smallres.tree by a separate script (not by this code).
    void goldenJson() {
        const Network net = smallResNet();
        const QString dir = QStringLiteral(TILESCOPE_TESTDATA "/trees/");
        RATree t = parseOk(readFile(dir + "smallres.tree"), net);
        t = *edit::setPinned(t, t.nodeAtPath("/1/0"), true);
        COMPARE_STR(treeToJson(t, net) + "\n", readFile(dir + "smallres.json"));
    }

    void jsonRoundTrip() {
        for (const Network& net : {diamondNet(), smallResNet()}) {
            RATree t = net.name == "diamond"
                           ? parseOk(kDiamondTree, net)
                           : parseOk(readFile(TILESCOPE_TESTDATA "/trees/smallres.tree"), net);
            t.node(t.size() - 1).pinned = true;
            t.node(1).pinned = true;
            const auto back = parseTreeJson(treeToJson(t, net), net, "t.json");
            QVERIFY2(back, back ? "" : back.error().message.c_str());
            QVERIFY(*back == t);
            const auto viaValue = parseTreeJsonValue(treeToJsonValue(t, net), net, "t.json");
            QVERIFY(viaValue && *viaValue == t);
        }
        // A bare root node object is accepted too, with defaults for sub_batch and pinned.
        const Network net = diamondNet();
        const auto bare = parseTreeJson(
            R"({"type":"T","batch":2,"children":[{"type":"leaf","layer":"in","batch":2},
               {"type":"leaf","layer":"a","batch":2},{"type":"leaf","layer":"b","batch":2},
               {"type":"leaf","layer":"add","batch":2},{"type":"leaf","layer":"out","batch":2}]})",
            net, "bare.json");
        QVERIFY2(bare, bare ? "" : bare.error().message.c_str());
        QVERIFY(*bare == RATree::layerSequential(net, 2));
    }

    void jsonErrors_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("mention");
        const QString head = R"({"format":"tilescope-ratree","version":1,"root":)";
        auto leaf = [](const char* l, int b) {
            return QString(R"({"type":"leaf","layer":"%1","batch":%2})").arg(l).arg(b);
        };
        const QString okKids =
            leaf("a", 2) + "," + leaf("b", 2) + "," + leaf("add", 2) + "," + leaf("out", 2);
        QTest::newRow("not json") << "{"
                                  << "j.json: not valid JSON";
        QTest::newRow("unknown layer") << head + R"({"type":"T","batch":2,"children":[)" +
                                              leaf("in", 2) + "," + leaf("zzz", 2) + "]}}"
                                       << "j.json: node /1: unknown layer 'zzz'";
        QTest::newRow("bad type")
            << head + R"({"type":"T","batch":2,"children":[{"type":"Q","batch":2}]}})"
            << "j.json: node /0: unknown type 'Q'";
        QTest::newRow("batch not integer")
            << head +
                   R"({"type":"T","batch":2,"children":[{"type":"S","batch":"2","children":[]}]}})"
            << "j.json: node /0: \"batch\" must be a positive integer";
        QTest::newRow("cut without children")
            << head + R"({"type":"T","batch":2,"children":[{"type":"S","batch":2}]}})"
            << "j.json: node /0: a cut needs a \"children\" array";
        QTest::newRow("nested path")
            << head + R"({"type":"T","batch":2,"children":[{"type":"S","batch":2,"children":[)" +
                   leaf("in", 2) + R"(,{"type":"leaf","batch":2}]}]}})"
            << "j.json: node /0/1: a leaf needs a string \"layer\"";
        QTest::newRow("pinned not bool")
            << head + R"({"type":"T","batch":2,"pinned":1,"children":[]}})"
            << "j.json: node /: \"pinned\" must be true or false";
        QTest::newRow("wrong format") << R"({"format":"tilescope-network","root":{}})"
                                      << "format is \"tilescope-network\"";
        QTest::newRow("structure") << head + R"({"type":"T","batch":2,"sub_batch":2,"children":[)" +
                                          leaf("in", 2) + "," + okKids + "]}}"
                                   << "j.json: child batch: node /0";
        QTest::newRow("total batch")
            << R"({"total_batch":4,"root":{"type":"T","batch":2,"children":[)" + leaf("in", 2) +
                   "," + okKids + "]}}"
            << "j.json: root batch";
    }
    void jsonErrors() {
        QFETCH(QString, text);
        QFETCH(QString, mention);
        const auto r = parseTreeJson(text.toStdString(), diamondNet(), "j.json");
        QVERIFY(!r);
        VERIFY_MENTIONS(r.error().message, qPrintable(mention));
    }

    // ---- edit operations: exact results ---------------------------------------------

    void swapWithNext() {
        const Network net = diamondNet();
        const RATree t = RATree::layerSequential(net, 4);
        const std::string before = treeToText(t, net);
        const auto r = edit::swapWithNext(t, net, t.nodeAtPath("/1"));
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        COMPARE_STR(treeToText(*r, net), "T 4/1\n\tin 4\n\tb 4\n\ta 4\n\tadd 4\n\tout 4\n");
        COMPARE_STR(treeToText(t, net), before); // the input is untouched

        // Swapping whole cuts: S{in,a} cannot pass T{b,add} (b needs in) ...
        const RATree d = parseOk(kDiamondTree, net);
        auto e = edit::swapWithNext(d, net, 1);
        QVERIFY(!e);
        VERIFY_MENTIONS(e.error().message, "cannot swap /0 and /1",
                        "layer 'b' depends on layer 'in'");
        // ... and with a precomputed dependency matrix the answer is the same.
        const auto deps = net.transitiveDeps();
        e = edit::swapWithNext(d, net, 1, deps);
        QVERIFY(!e);
        VERIFY_MENTIONS(e.error().message, "layer 'b' depends on layer 'in'");

        // Leaves a and b are independent siblings inside a cut.
        const RATree two =
            parseOk("T 4/1\n\tin 4\n\tS 4/2\n\t\ta 2\n\t\tb 2\n\tadd 4\n\tout 4\n", net);
        const auto ok = edit::swapWithNext(two, net, two.nodeAtPath("/1/0"), deps);
        QVERIFY(ok);
        COMPARE_STR(treeToText(*ok, net),
                    "T 4/1\n\tin 4\n\tS 4/2\n\t\tb 2\n\t\ta 2\n\tadd 4\n\tout 4\n");

        // Refusals: direct dependency, no next sibling, the root.
        e = edit::swapWithNext(t, net, t.nodeAtPath("/0"));
        QVERIFY(!e);
        VERIFY_MENTIONS(e.error().message, "layer 'a' depends on layer 'in'");
        e = edit::swapWithNext(t, net, t.nodeAtPath("/4"));
        QVERIFY(!e);
        VERIFY_MENTIONS(e.error().message, "node /4 has no next sibling");
        QVERIFY(!edit::swapWithNext(t, net, 0));
        e = edit::swapWithNext(t, net, 42);
        QVERIFY(!e);
        VERIFY_MENTIONS(e.error().message, "no node with id 42");
        // A matrix for another network is a caller bug, reported rather than read past.
        QVERIFY(!edit::swapWithNext(t, net, 2, std::vector<std::vector<bool>>(2)));
    }

    void moveNode() {
        const Network net = chainNet(6);
        const RATree t =
            parseOk("T 4/1\n\tS 4/2\n\t\tc0 2\n\t\tc1 2\n\tc2 4\n\tc3 4\n\tc4 4\n\tc5 4\n", net);
        // c2 joins the S cut at its end and takes the cut's child batch.
        auto r = edit::move(t, net, t.nodeAtPath("/1"), t.nodeAtPath("/0"), 2);
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        COMPARE_STR(treeToText(*r, net),
                    "T 4/1\n\tS 4/2\n\t\tc0 2\n\t\tc1 2\n\t\tc2 2\n\tc3 4\n\tc4 4\n\tc5 4\n");

        // Moving c1 out leaves S{c0}: the single-child cut is dissolved, c0 takes its place.
        r = edit::move(t, net, t.nodeAtPath("/0/1"), 0, 1);
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        COMPARE_STR(treeToText(*r, net), "T 4/1\n\tc0 4\n\tc1 4\n\tc2 4\n\tc3 4\n\tc4 4\n\tc5 4\n");

        // Only the cut the node left is tidied: T 4/2 keeps c2 alone and is dissolved (c2
        // gets T's batch 4); the S above, already single-child before, is left as it was.
        const RATree nested = parseOk("T 4/1\n\tc0 4\n\tS 4/1\n\t\tT 4/2\n\t\t\tc1 2\n\t\t\tc2 2\n"
                                      "\tc3 4\n\tc4 4\n\tc5 4\n",
                                      net);
        r = edit::move(nested, net, nested.nodeAtPath("/1/0/0"), 0, 1);
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        COMPARE_STR(treeToText(*r, net),
                    "T 4/1\n\tc0 4\n\tc1 4\n\tS 4/1\n\t\tc2 4\n\tc3 4\n\tc4 4\n\tc5 4\n");
        // Moving the only child of a cut removes the emptied cut, and its parent, left
        // with one child, is dissolved in turn.
        const RATree lone = parseOk("T 4/1\n\tc0 4\n\tS 4/2\n\t\tT 2/2\n\t\t\tc1 1\n\t\tc2 2\n"
                                    "\tc3 4\n\tc4 4\n\tc5 4\n",
                                    net);
        r = edit::move(lone, net, lone.nodeAtPath("/1/0/0"), 0, 1);
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        COMPARE_STR(treeToText(*r, net), "T 4/1\n\tc0 4\n\tc1 4\n\tc2 4\n\tc3 4\n\tc4 4\n\tc5 4\n");

        // Same-parent moves use "insert before the child now at position": moving c2 to
        // position 5 (the end) puts it after c3, its consumer, so it is refused; moving c5
        // to position 4 (before itself) changes nothing.
        auto e = edit::move(t, net, t.nodeAtPath("/1"), 0, 5);
        QVERIFY(!e);
        VERIFY_MENTIONS(e.error().message, "topological order", "'c3'", "'c2'");
        r = edit::move(t, net, t.nodeAtPath("/4"), 0, 4);
        QVERIFY(r && *r == t);

        e = edit::move(t, net, t.nodeAtPath("/0"), t.nodeAtPath("/0/1"), 0);
        QVERIFY(!e);
        VERIFY_MENTIONS(e.error().message, "node /0/1 is a leaf");
        const RATree deep = parseOk("T 4/1\n\tS 4/2\n\t\tc0 2\n\t\tT 2/1\n\t\t\tc1 2\n\t\t\tc2 2\n"
                                    "\tc3 4\n\tc4 4\n\tc5 4\n",
                                    net);
        e = edit::move(deep, net, deep.nodeAtPath("/0"), deep.nodeAtPath("/0/1"), 0);
        QVERIFY(!e);
        VERIFY_MENTIONS(e.error().message, "cannot move /0 into its own subtree /0/1");
        e = edit::move(t, net, t.nodeAtPath("/1"), 0, 9);
        QVERIFY(!e);
        VERIFY_MENTIONS(e.error().message, "position 9");
        QVERIFY(!edit::move(t, net, 0, 0, 0));
        // A subtree whose sub-batches no longer divide its new batch: named by validation.
        const RATree sub = parseOk("T 4/1\n\tc0 4\n\tS 4/4\n\t\tc1 1\n\t\tc2 1\n\tT 4/4\n\t\tc3 1\n"
                                   "\t\tc4 1\n\tc5 4\n",
                                   net);
        e = edit::move(sub, net, sub.nodeAtPath("/2"), sub.nodeAtPath("/1"), 2);
        QVERIFY(!e);
        VERIFY_MENTIONS(e.error().message, "sub-batch: cut /1/2");
    }

    void wrapChildren() {
        const Network net = chainNet(6);
        const RATree t = RATree::layerSequential(net, 8);
        auto r = edit::wrap(t, net, 0, 1, 3, NodeType::S, 2);
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        COMPARE_STR(treeToText(*r, net),
                    "T 8/1\n\tc0 8\n\tS 8/2\n\t\tc1 4\n\t\tc2 4\n\t\tc3 4\n\tc4 8\n\tc5 8\n");
        // Wrapping inside a sub-batched cut: the new cut's batch is the parent's child batch.
        r = edit::wrap(*r, net, 2, 0, 2, NodeType::T, 4);
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        COMPARE_STR(treeToText(*r, net), "T 8/1\n\tc0 8\n\tS 8/2\n\t\tT 4/4\n\t\t\tc1 1\n"
                                         "\t\t\tc2 1\n\t\tc3 4\n\tc4 8\n\tc5 8\n");
        // A single child may be wrapped: sub-batching one layer is a meaningful schedule.
        r = edit::wrap(t, net, 0, 5, 1, NodeType::T, 8);
        QVERIFY(r);
        COMPARE_STR(treeToText(*r, net),
                    "T 8/1\n\tc0 8\n\tc1 8\n\tc2 8\n\tc3 8\n\tc4 8\n\tT 8/8\n\t\tc5 1\n");

        auto e = edit::wrap(t, net, 0, 1, 3, NodeType::S, 3);
        QVERIFY(!e);
        VERIFY_MENTIONS(e.error().message, "sub-batch count 3 does not divide the batch 8");
        QVERIFY(!edit::wrap(t, net, 0, 4, 3, NodeType::S, 1));
        QVERIFY(!edit::wrap(t, net, 0, 0, 0, NodeType::S, 1));
        QVERIFY(!edit::wrap(t, net, 0, 0, 2, NodeType::Leaf, 1));
        e = edit::wrap(t, net, 1, 0, 1, NodeType::S, 1);
        QVERIFY(!e);
        VERIFY_MENTIONS(e.error().message, "node /0 is a leaf");
    }

    void dissolveCut() {
        const Network net = chainNet(6);
        const RATree t = RATree::layerSequential(net, 8);
        const RATree w =
            *edit::wrap(*edit::wrap(t, net, 0, 1, 3, NodeType::S, 2), net, 2, 0, 2, NodeType::T, 2);
        // Dissolving the inner T: c1, c2 go back to the S cut with its child batch 4.
        auto r = edit::dissolve(w, net, w.nodeAtPath("/1/0"));
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        COMPARE_STR(treeToText(*r, net),
                    "T 8/1\n\tc0 8\n\tS 8/2\n\t\tc1 4\n\t\tc2 4\n\t\tc3 4\n\tc4 8\n\tc5 8\n");
        // Dissolving the S: its sub-batch count is lost, every batch back to 8.
        r = edit::dissolve(w, net, w.nodeAtPath("/1"));
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        COMPARE_STR(treeToText(*r, net), "T 8/1\n\tc0 8\n\tT 8/2\n\t\tc1 4\n\t\tc2 4\n\tc3 8\n"
                                         "\tc4 8\n\tc5 8\n");
        auto e = edit::dissolve(w, net, 0);
        QVERIFY(!e);
        VERIFY_MENTIONS(e.error().message, "the root cannot be dissolved");
        e = edit::dissolve(w, net, w.nodeAtPath("/0"));
        QVERIFY(!e);
        VERIFY_MENTIONS(e.error().message, "node /0 is a leaf");
    }

    void flipCut() {
        const Network net = chainNet(6);
        const RATree w = *edit::wrap(RATree::layerSequential(net, 8), net, 0, 1, 3, NodeType::S, 2);
        auto r = edit::flip(w, net, 2);
        QVERIFY(r);
        COMPARE_STR(treeToText(*r, net),
                    "T 8/1\n\tc0 8\n\tT 8/2\n\t\tc1 4\n\t\tc2 4\n\t\tc3 4\n\tc4 8\n\tc5 8\n");
        r = edit::flip(w, net, 0); // a root S cut is allowed
        QVERIFY(r);
        QVERIFY(r->node(0).type == NodeType::S);
        QVERIFY(!edit::flip(w, net, 1));
    }

    void setSubBatch() {
        const Network net = chainNet(6);
        const RATree w = *edit::wrap(RATree::layerSequential(net, 8), net, 0, 1, 3, NodeType::S, 2);
        auto r = edit::setSubBatch(w, net, 2, 4);
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        COMPARE_STR(treeToText(*r, net),
                    "T 8/1\n\tc0 8\n\tS 8/4\n\t\tc1 2\n\t\tc2 2\n\t\tc3 2\n\tc4 8\n\tc5 8\n");
        r = edit::setSubBatch(w, net, 0, 2); // the root: every batch below halves
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        COMPARE_STR(treeToText(*r, net),
                    "T 8/2\n\tc0 4\n\tS 4/2\n\t\tc1 2\n\t\tc2 2\n\t\tc3 2\n\tc4 4\n\tc5 4\n");

        auto e = edit::setSubBatch(w, net, 2, 3);
        QVERIFY(!e);
        VERIFY_MENTIONS(e.error().message, "sub-batch count 3 does not divide the batch 8 of /1");
        QVERIFY(!edit::setSubBatch(w, net, 2, 0));
        e = edit::setSubBatch(w, net, 1, 1);
        QVERIFY(!e);
        VERIFY_MENTIONS(e.error().message, "node /0 is a leaf");
        // The root going to 8 sub-batches leaves the S (sb 2) with batch 1: refused, naming it.
        e = edit::setSubBatch(w, net, 0, 8);
        QVERIFY(!e);
        VERIFY_MENTIONS(e.error().message, "sub-batch: cut /1", "does not divide its batch 1");
    }

    void setPinned() {
        const Network net = chainNet(6);
        const RATree t = RATree::layerSequential(net, 8);
        auto r = edit::setPinned(t, 3, true);
        QVERIFY(r);
        COMPARE_STR(treeToText(*r, net),
                    "T 8/1\n\tc0 8\n\tc1 8\n\tc2 8 pinned\n\tc3 8\n\tc4 8\n\tc5 8\n");
        r = edit::setPinned(*r, 3, false);
        QVERIFY(r && *r == t);
        QVERIFY(!edit::setPinned(t, 99, true));
    }

    // Every op must refuse to change a pinned node; the message names the pinned node.
    void pinnedRefusals_data() {
        QTest::addColumn<int>("op");
        QTest::addColumn<QString>("pinned");
        const char* names[] = {"flip pinned cut",
                               "sub-batch of pinned cut",
                               "dissolve pinned cut",
                               "move a leaf out of pinned cut",
                               "move a leaf into pinned cut",
                               "swap inside pinned cut",
                               "wrap inside pinned cut",
                               "swap pinned cut with next",
                               "swap previous with pinned cut",
                               "root sub-batch changes pinned batch",
                               "wrap pinned cut",
                               "dissolve parent of pinned leaf",
                               "move pinned leaf"};
        const char* culprit[] = {"/1", "/1", "/1", "/1", "/1",   "/1",  "/1",
                                 "/1", "/1", "/1", "/1", "/2/2", "/2/2"};
        for (int i = 0; i < int(std::size(names)); ++i)
            QTest::newRow(names[i]) << i << QString(culprit[i]);
    }
    void pinnedRefusals() {
        QFETCH(int, op);
        QFETCH(QString, pinned);
        const Network net = chainNet(8);
        // /1 is a pinned S cut; /2/1 (c6) a pinned leaf inside an unpinned T 8/2.
        const RATree t =
            parseOk("T 8/1\n\tc0 8\n\tS 8/2 pinned\n\t\tc1 4\n\t\tc2 4\n\t\tc3 4\n"
                    "\tT 8/2\n\t\tc4 4\n\t\tT 4/1\n\t\t\tc5 4\n\t\tc6 4 pinned\n\tc7 8\n",
                    net);
        const int s = t.nodeAtPath("/1");
        Result<RATree> r = Error{"not run"};
        switch (op) {
        case 0:
            r = edit::flip(t, net, s);
            break;
        case 1:
            r = edit::setSubBatch(t, net, s, 4);
            break;
        case 2:
            r = edit::dissolve(t, net, s);
            break;
        case 3:
            r = edit::move(t, net, t.nodeAtPath("/1/2"), 0, 4);
            break;
        case 4:
            r = edit::move(t, net, t.nodeAtPath("/0"), s, 0);
            break;
        case 5:
            r = edit::swapWithNext(t, net, t.nodeAtPath("/1/0"));
            break;
        case 6:
            r = edit::wrap(t, net, s, 0, 2, NodeType::T, 1);
            break;
        case 7:
            r = edit::swapWithNext(t, net, s);
            break;
        case 8:
            r = edit::swapWithNext(t, net, t.nodeAtPath("/0"));
            break;
        case 9:
            r = edit::setSubBatch(t, net, 0, 2);
            break;
        case 10:
            r = edit::wrap(t, net, 0, 1, 1, NodeType::T, 1);
            break;
        case 11:
            r = edit::dissolve(t, net, t.nodeAtPath("/2"));
            break;
        case 12:
            r = edit::move(t, net, t.nodeAtPath("/2/2"), t.nodeAtPath("/2"), 0);
            break;
        }
        QVERIFY(!r);
        VERIFY_MENTIONS(r.error().message, qPrintable("node " + pinned + " is pinned"));
    }

    // Ops next to pinned nodes that leave them intact are allowed.
    void pinnedAllowed() {
        const Network net = chainNet(8);
        const RATree t =
            parseOk("T 8/1\n\tc0 8\n\tS 8/2 pinned\n\t\tc1 4\n\t\tc2 4\n\t\tc3 4\n"
                    "\tT 8/2\n\t\tc4 4\n\t\tT 4/1\n\t\t\tc5 4\n\t\tc6 4 pinned\n\tc7 8\n",
                    net);
        // Dissolving the T 4/1 (sb 1) keeps every batch; the pinned c6 keeps its parent.
        auto r = edit::dissolve(t, net, t.nodeAtPath("/2/1"));
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        // Flipping the T above the pinned leaf is fine: only an unpinned cut's type changes.
        r = edit::flip(t, net, t.nodeAtPath("/2"));
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        COMPARE_STR(subtreeToText(*r, net, r->nodeAtPath("/1")),
                    subtreeToText(t, net, t.nodeAtPath("/1")));
        // Unpinning a pinned node is always possible.
        r = edit::setPinned(t, t.nodeAtPath("/1"), false);
        QVERIFY(r && !r->frozen(r->nodeAtPath("/1/0")));
    }

    void randomWalk_data() {
        QTest::addColumn<int>("which");
        QTest::newRow("resnet-like") << 0;
        QTest::newRow("transformer-like") << 1;
    }
    void randomWalk() {
        QFETCH(int, which);
        const Network net = which == 0 ? resNet50Like() : transformerLike();
        QVERIFY(net.layers.size() >= 50);
        const int batch = 16;
        RATree t = RATree::layerSequential(net, batch);
        // Pin a 3-layer group in an S cut with sub-batches and one lone leaf further on.
        const int first = which == 0 ? net.indexOf("blk3_conv1") : net.indexOf("enc1_q");
        QVERIFY(first >= 0);
        t = *edit::wrap(t, net, 0, first, 3, NodeType::S, 4);
        t = *edit::setPinned(t, t.node(0).children[size_t(first)], true);
        t = *edit::setPinned(t, t.leafOf(net.indexOf(which == 0 ? "blk10_conv2" : "enc2_ff1")),
                             true);
        const auto pinnedBefore = pinnedSubtrees(t, net);
        QCOMPARE(int(pinnedBefore.size()), 2);
        const auto deps = net.transitiveDeps();

        std::mt19937 rng(which == 0 ? 12345u : 777u);
        auto pick = [&](int n) { return int(std::uniform_int_distribution<int>(0, n - 1)(rng)); };
        auto divisorOf = [&](int b) {
            std::vector<int> d;
            for (int i = 1; i <= b; ++i)
                if (b % i == 0) d.push_back(i);
            return d[size_t(pick(int(d.size())))];
        };
        auto randomCut = [&]() {
            std::vector<int> cuts;
            for (int i = 0; i < t.size(); ++i)
                if (t.node(i).isCut()) cuts.push_back(i);
            return cuts[size_t(pick(int(cuts.size())))];
        };

        const char* opNames[] = {"swap", "move", "wrap", "dissolve", "flip", "subbatch"};
        int applied[6] = {};
        int tried[6] = {};
        int maxSize = 0;
        QElapsedTimer timer;
        timer.start();
        for (int step = 0; step < 10000; ++step) {
            const int op = pick(6);
            const int n = pick(t.size());
            Result<RATree> r = Error{""};
            switch (op) {
            case 0:
                r = edit::swapWithNext(t, net, n, deps);
                break;
            case 1: {
                // Mostly local moves (out of the parent, into an adjacent sibling cut): the
                // search's operator 2; uniformly random targets mostly break the order.
                const int kind = pick(3);
                const int p = t.node(n).parent;
                int np = randomCut();
                int pos = pick(int(t.node(np).children.size()) + 1);
                if (kind == 0 && p > 0) {
                    np = t.node(p).parent;
                    pos = t.childIndex(p) + pick(2);
                } else if (kind == 1 && p >= 0) {
                    const auto& sib = t.node(p).children;
                    const int i = t.childIndex(n);
                    const int j = pick(2) ? i - 1 : i + 1;
                    if (j >= 0 && j < int(sib.size()) && t.node(sib[size_t(j)]).isCut()) {
                        np = sib[size_t(j)];
                        pos = j < i ? int(t.node(np).children.size()) : 0;
                    }
                }
                r = edit::move(t, net, n, np, pos);
                break;
            }
            case 2: {
                const int p = randomCut();
                const int k = int(t.node(p).children.size());
                const int f = pick(k);
                const int c = 1 + pick(std::min(k - f, 4));
                const NodeType type = pick(2) ? NodeType::S : NodeType::T;
                const int sb = divisorOf(t.node(p).batch / t.node(p).subBatch);
                r = edit::wrap(t, net, p, f, c, type, sb);
                break;
            }
            case 3:
                r = edit::dissolve(t, net, randomCut());
                break;
            case 4:
                r = edit::flip(t, net, randomCut());
                break;
            case 5: {
                const int c = randomCut();
                r = edit::setSubBatch(t, net, c, divisorOf(t.node(c).batch));
                break;
            }
            }
            ++tried[op];
            if (!r) {
                QVERIFY(!r.error().message.empty());
                continue;
            }
            ++applied[op];
            t = std::move(*r);
            maxSize = std::max(maxSize, t.size());
            const auto v = validateStructure(t, net, batch);
            QVERIFY2(!v,
                     qPrintable(QString("step %1 (%2): %3")
                                    .arg(step)
                                    .arg(opNames[op])
                                    .arg(QString::fromStdString(v ? v->message : std::string()))));
            const QString ind = independentCheck(t, net, batch);
            QVERIFY2(ind.isEmpty(),
                     qPrintable(QString("step %1 (%2): %3").arg(step).arg(opNames[op]).arg(ind)));
            QVERIFY2(
                pinnedSubtrees(t, net) == pinnedBefore,
                qPrintable(
                    QString("step %1 (%2) changed a pinned subtree").arg(step).arg(opNames[op])));
            if (step % 250 == 0) {
                QVERIFY(parseOk(treeToText(t, net), net) == t);
                const auto j = parseTreeJson(treeToJson(t, net), net, "walk.json");
                QVERIFY(j && *j == t);
            }
        }
        const qint64 ms = timer.elapsed();
        QString summary;
        for (int i = 0; i < 6; ++i) {
            summary += QString(" %1 %2/%3").arg(opNames[i]).arg(applied[i]).arg(tried[i]);
            // Each op must actually apply often enough for the walk to explore the space.
            QVERIFY2(
                applied[i] >= 50,
                qPrintable(QString("%1 applied only %2 times").arg(opNames[i]).arg(applied[i])));
        }
        qInfo("%s: 10000 steps in %lld ms (with checks), max %d nodes;%s", net.name.c_str(), ms,
              maxSize, qPrintable(summary));
    }
};

QTEST_APPLESS_MAIN(TestRATree)
#include "tst_ratree.moc"
