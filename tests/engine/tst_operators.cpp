// The search operators as docs/method.md §4 defines them: operator 1 swaps leaves adjacent in
// the whole leaf order (across cut boundaries), operators 5 and 6 jump to any larger or
// smaller sub-batch count, and from the layer-sequential start the operators reach every
// tree of the space, checked against an enumeration of that space written here.
#include "netbuilder.h"
#include "search/operators.h"

#include <QtTest>
#include <deque>
#include <numeric>
#include <set>
#include <unordered_set>

using namespace tilescope;
using namespace tilescope::test;

namespace {

// Five convolutions in a chain: one topological order.
Network chain5() {
    Network n;
    n.name = "chain5";
    for (int i = 0; i < 5; ++i)
        n.layers.push_back(conv("c" + std::to_string(i), 16, 16, 8, 3, i - 1));
    return finish(n);
}

// stem -> {a, b} -> add -> tail: two topological orders (a and b independent).
Network fork5() {
    Network n;
    n.name = "fork5";
    n.layers.push_back(conv("stem", 16, 16, 8, 3, -1));
    n.layers.push_back(conv("a", 16, 16, 8, 3, 0));
    n.layers.push_back(conv("b", 16, 16, 8, 3, 0));
    n.layers.push_back(add("add", 16, 8, 1, 2));
    n.layers.push_back(conv("tail", 16, 16, 8, 3, 3));
    return finish(n);
}

Network networkNamed(const QString& name) {
    if (name == "chain5") return chain5();
    if (name == "fork5") return fork5();
    return independent4();
}

// A tree as a string of this test's own making ("T4/2(S2/1(a,b),c)"), so the comparison
// below does not lean on the tree text format.
void keyOf(const RATree& t, const Network& net, int id, std::string& out) {
    const RANode& n = t.node(id);
    if (!n.isCut()) {
        out += net.layers[size_t(n.layer)].name;
        return;
    }
    out += toString(n.type);
    out += std::to_string(n.batch) + "/" + std::to_string(n.subBatch) + "(";
    for (size_t i = 0; i < n.children.size(); ++i) {
        if (i) out += ',';
        keyOf(t, net, n.children[i], out);
    }
    out += ')';
}
std::string keyOf(const RATree& t, const Network& net) {
    std::string out;
    keyOf(t, net, t.root, out);
    return out;
}

// The space, enumerated independently of the operators and the edit layer: a root T cut
// of batch B over the layers in any topological order; every non-root cut is S or T with
// two or more children (the root may have one); every cut's sub-batch count divides its
// batch and its children get batch / sub-batch. Trees of the same leaves differ in their
// nesting, types and counts, so the set is finite (chain5 at B = 4: 11,867 trees).
class SpaceEnumerator {
  public:
    SpaceEnumerator(const Network& net, int batch) : m_net(net), m_batch(batch) {}

    std::set<std::string> all() {
        std::set<std::string> out;
        std::vector<int> order(m_net.layers.size());
        std::iota(order.begin(), order.end(), 0);
        do {
            if (!topological(order)) continue;
            m_names.clear();
            for (int l : order)
                m_names.push_back(m_net.layers[size_t(l)].name);
            const int n = int(order.size());
            for (int sb : divisorsOf(m_batch))
                for (const auto& f : forests(0, n, m_batch / sb, 1))
                    out.insert("T" + std::to_string(m_batch) + "/" + std::to_string(sb) + "(" + f +
                               ")");
        } while (std::next_permutation(order.begin(), order.end()));
        return out;
    }

  private:
    bool topological(const std::vector<int>& order) const {
        std::vector<int> pos(order.size());
        for (size_t i = 0; i < order.size(); ++i)
            pos[size_t(order[i])] = int(i);
        for (size_t l = 0; l < order.size(); ++l)
            for (const auto& in : m_net.layers[l].inputs)
                if (in.producer >= 0 && pos[size_t(in.producer)] > pos[l]) return false;
        return true;
    }

    // Subtrees over leaves [a, b) whose batch is `batch`.
    std::vector<std::string> trees(int a, int b, int batch) {
        if (b - a == 1) return {m_names[size_t(a)]};
        std::vector<std::string> out;
        for (const char* type : {"S", "T"})
            for (int sb : divisorsOf(batch))
                for (const auto& f : forests(a, b, batch / sb, 2))
                    out.push_back(std::string(type) + std::to_string(batch) + "/" +
                                  std::to_string(sb) + "(" + f + ")");
        return out;
    }

    // Comma-separated sequences of at least `minTrees` subtrees covering leaves [a, b).
    std::vector<std::string> forests(int a, int b, int batch, int minTrees) {
        std::vector<std::string> out;
        for (int m = a + 1; m <= b; ++m) {
            if (m == b && minTrees > 1) break;
            const auto first = trees(a, m, batch);
            if (m == b) {
                out.insert(out.end(), first.begin(), first.end());
                continue;
            }
            const auto rest = forests(m, b, batch, std::max(1, minTrees - 1));
            for (const auto& f : first)
                for (const auto& r : rest)
                    out.push_back(f + "," + r);
        }
        return out;
    }

    const Network& m_net;
    int m_batch;
    std::vector<std::string> m_names;
};

RATree parse(const std::string& text, const Network& net) {
    auto t = parseTreeText(text, net, "test");
    if (!t) qFatal("%s", t.error().message.c_str());
    return std::move(t).value();
}

} // namespace

class TestOperators : public QObject {
    Q_OBJECT

  private slots:
    // Operator 1 swaps two leaves adjacent in the whole leaf order: here i1 (the last leaf
    // of the S cut) and i2 (a leaf of the root) are adjacent across the cut's boundary. The
    // tree keeps its shape; the two leaves trade layers.
    void swapCrossesCutBoundaries() {
        const Network net = independent4();
        const auto deps = net.transitiveDeps();
        const OperatorContext ctx{net, deps, {}};
        const RATree t = parse("T 4/1\n\tS 4/2\n\t\ti0 2\n\t\ti1 2\n\ti2 4\n\ti3 4\n", net);
        std::set<std::string> seen;
        for (std::uint64_t seed = 0; seed < 200; ++seed) {
            Rng rng(seed);
            auto r = applyOperator(t, Operator::SwapLeaves, ctx, rng);
            QVERIFY(r.ok());
            QVERIFY(adjacentTransposition(t.leavesInOrder(), r->leavesInOrder()));
            QCOMPARE(r->size(), t.size());
            seen.insert(keyOf(*r, net));
        }
        // Three adjacent pairs, each drawn: i0/i1 (siblings), i1/i2 (across), i2/i3.
        const std::set<std::string> expected{"T4/1(S4/2(i1,i0),i2,i3)", "T4/1(S4/2(i0,i2),i1,i3)",
                                             "T4/1(S4/2(i0,i1),i3,i2)"};
        QCOMPARE(seen, expected);
    }

    // Across a boundary the dependency still rules: fork5's a and b are the only
    // independent neighbours, and in this tree they sit in different cuts.
    void swapAcrossBoundaryKeepsDependencies() {
        const Network net = fork5();
        const auto deps = net.transitiveDeps();
        const OperatorContext ctx{net, deps, {}};
        const RATree t = parse(
            "T 2/1\n\tT 2/1\n\t\tstem 2\n\t\ta 2\n\tS 2/2\n\t\tb 1\n\t\tadd 1\n\ttail 2\n", net);
        const auto n = neighbours(t, Operator::SwapLeaves, ctx);
        QCOMPARE(int(n.size()), 1);
        QCOMPARE(keyOf(n.front(), net), std::string("T2/1(T2/1(stem,b),S2/2(a,add),tail)"));
        // A pinned leaf is not swapped, across a boundary or not.
        const RATree pinned = *edit::setPinned(t, t.leafOf(2), true);
        QVERIFY(neighbours(pinned, Operator::SwapLeaves, ctx).empty());
        Rng rng(1);
        QVERIFY(!applyOperator(pinned, Operator::SwapLeaves, ctx, rng).ok());
    }

    // Operators 5 and 6 raise or lower a cut's sub-batch count by a random step: from 1 at
    // batch 8 every larger divisor (2, 4, 8) is reached in one step, and from 8 every
    // smaller one.
    void subBatchStepsToAnyDivisor_data() {
        QTest::addColumn<int>("from");
        QTest::addColumn<int>("op");
        QTest::addColumn<QList<int>>("expected");
        QTest::newRow("raise from 1")
            << 1 << int(Operator::IncreaseSubBatch) << QList<int>{2, 4, 8};
        QTest::newRow("lower from 8")
            << 8 << int(Operator::DecreaseSubBatch) << QList<int>{1, 2, 4};
        QTest::newRow("raise from 2") << 2 << int(Operator::IncreaseSubBatch) << QList<int>{4, 8};
        QTest::newRow("lower from 2") << 2 << int(Operator::DecreaseSubBatch) << QList<int>{1};
    }
    void subBatchStepsToAnyDivisor() {
        QFETCH(int, from);
        QFETCH(int, op);
        QFETCH(QList<int>, expected);
        const Network net = chain5();
        const auto deps = net.transitiveDeps();
        const OperatorContext ctx{net, deps, {}};
        RATree t = RATree::layerSequential(net, 8);
        t.node(t.root).subBatch = from;
        t.propagateBatches();
        std::set<int> seen;
        for (std::uint64_t seed = 0; seed < 200; ++seed) {
            Rng rng(seed);
            auto r = applyOperator(t, Operator(op), ctx, rng);
            QVERIFY(r.ok());
            seen.insert(r->node(r->root).subBatch);
        }
        QCOMPARE(seen, std::set<int>(expected.begin(), expected.end()));
        std::set<int> listed;
        for (const RATree& n : neighbours(t, Operator(op), ctx))
            listed.insert(n.node(n.root).subBatch);
        QCOMPARE(listed, seen);
    }

    // The method's property: any two trees of the space are linked by finitely many
    // operator steps. A breadth-first walk over every operator application from the
    // layer-sequential start must reach exactly the trees SpaceEnumerator lists (none
    // outside it, none missed); the operators keep no single-child cut below the root, so
    // the walk stays in that finite set.
    void everyTreeIsReachable_data() {
        QTest::addColumn<QString>("net");
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("trees");
        // The counts follow from the definition: 11,867 trees over one order of 5 leaves at
        // batch 4, 3,586 at batch 2 (x 2 orders for fork5), 410 over 4 leaves at batch 2
        // (x 24 orders).
        QTest::newRow("chain of 5, batch 4") << "chain5" << 4 << 11867;
        QTest::newRow("fork of 5, batch 4") << "fork5" << 4 << 2 * 11867;
        QTest::newRow("fork of 5, batch 2") << "fork5" << 2 << 2 * 3586;
        QTest::newRow("4 independent, batch 2") << "independent4" << 2 << 24 * 410;
    }
    void everyTreeIsReachable() {
        QFETCH(QString, net);
        QFETCH(int, batch);
        QFETCH(int, trees);
        const Network n = networkNamed(net);
        const auto deps = n.transitiveDeps();
        const OperatorContext ctx{n, deps, {}};
        const std::set<std::string> space = SpaceEnumerator(n, batch).all();
        QCOMPARE(int(space.size()), trees);

        const RATree start = RATree::layerSequential(n, batch);
        std::unordered_set<std::string> reached{keyOf(start, n)};
        std::deque<RATree> queue{start};
        while (!queue.empty()) {
            const RATree t = std::move(queue.front());
            queue.pop_front();
            for (int op = 0; op < kOperatorCount; ++op)
                for (RATree& m : neighbours(t, Operator(op), ctx)) {
                    std::string k = keyOf(m, n);
                    if (!reached.insert(k).second) continue;
                    if (!space.count(k))
                        QFAIL(qPrintable(QString("outside the space: ") + k.c_str()));
                    QVERIFY(!validateStructure(m, n, batch));
                    queue.push_back(std::move(m));
                }
        }
        QCOMPARE(int(reached.size()), int(space.size()));
    }
};

QTEST_APPLESS_MAIN(TestOperators)
#include "tst_operators.moc"
