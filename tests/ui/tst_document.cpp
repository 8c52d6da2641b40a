// The Document's edits (docs/method.md §6): each accepted edit changes the tree, re-evaluates and
// is undoable; refused edits leave tree and undo stack alone and report the reason; a change
// of the inputs is one undo step, which the main window names on its status bar.
#include "core/document.h"
#include "expectok.h"
#include "testwindow.h"
#include "tree/ratree.h"
#include "widgets/mainwindow.h"

#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

using namespace tilescope;
using namespace tilescope::ui;

class TstDocument : public QObject {
    Q_OBJECT
  private:
    Document m_doc;
    RATree m_start;

    int child(int i) const { return m_doc.tree().node(m_doc.tree().root).children[size_t(i)]; }
    QString layerOf(int node) const {
        return QString::fromStdString(
            m_doc.network()->layers[size_t(m_doc.tree().node(node).layer)].name);
    }
    // Checks that undo restores the start tree and redo brings back `after`.
    void checkUndoRedo(const RATree& after) {
        QVERIFY(m_doc.undoStack()->canUndo());
        m_doc.undoStack()->undo();
        QVERIFY(m_doc.tree() == m_start);
        m_doc.undoStack()->redo();
        QVERIFY(m_doc.tree() == after);
        m_doc.undoStack()->undo();
        QVERIFY(m_doc.tree() == m_start);
    }
    void checkRefused(const std::optional<Error>& refusal, const QString& mustContain) {
        const QString reason = errorText(refusal);
        QVERIFY2(!reason.isEmpty(), "the edit should have been refused");
        QVERIFY2(reason.contains(mustContain, Qt::CaseInsensitive), qPrintable(reason));
        QVERIFY(m_doc.tree() == m_start);
        QCOMPARE(m_doc.undoStack()->count(), 0);
    }

  private slots:
    void initTestCase() {
        QVERIFY_OK(m_doc.openModel(TILESCOPE_SAMPLES "/models/resnet50.onnx"));
        QVERIFY(m_doc.hasModel());
        m_start = m_doc.tree();
        QCOMPARE(m_start.node(m_start.root).type, NodeType::T);
        QCOMPARE(int(m_start.node(m_start.root).children.size()), 72);
        QVERIFY(m_doc.evaluation()->valid);
    }
    void init() {
        // Each test starts from the opened tree with an empty undo history.
        m_doc.undoStack()->clear();
        if (!(m_doc.tree() == m_start)) m_doc.restoreTree(m_start);
        QVERIFY(m_doc.tree() == m_start);
    }

    void failedOpenKeepsDocument() {
        const quint64 rev = m_doc.revision();
        const QString err = errorText(m_doc.openModel(QStringLiteral("/nonexistent/model.onnx")));
        QVERIFY(err.contains(QLatin1String("/nonexistent/model.onnx")));
        QVERIFY(m_doc.tree() == m_start);
        QCOMPARE(m_doc.revision(), rev);
        QVERIFY(m_doc.openHardware(QStringLiteral("no-such-preset")).has_value());
        QCOMPARE(m_doc.hardware()->meshX, 4);
    }

    void wrapInSCut() {
        QSignalSpy changed(&m_doc, &Document::treeChanged);
        const double before = m_doc.evaluation()->cost;
        QVERIFY_OK(m_doc.wrap(m_start.root, 1, 2, NodeType::S));
        QCOMPARE(changed.count(), 1);
        const RATree& t = m_doc.tree();
        const RANode& cut = t.node(child(1));
        QCOMPARE(cut.type, NodeType::S);
        QCOMPARE(int(cut.children.size()), 2);
        QCOMPARE(layerOf(cut.children[0]), QStringLiteral("/maxpool/MaxPool"));
        QCOMPARE(int(t.node(t.root).children.size()), 71);
        // Re-evaluated at once: the evaluation belongs to the new tree.
        QCOMPARE(m_doc.evaluation()->nodes.size(), size_t(t.size()));
        QVERIFY(m_doc.evaluation()->cost != before);
        checkUndoRedo(RATree(t));
    }

    void wrapInTCutThenFlipAndDissolve() {
        QVERIFY_OK(m_doc.wrap(m_start.root, 2, 3, NodeType::T));
        const int cut = child(2);
        QCOMPARE(m_doc.tree().node(cut).type, NodeType::T);
        QVERIFY_OK(m_doc.flip(cut));
        QCOMPARE(m_doc.tree().node(child(2)).type, NodeType::S);
        QVERIFY_OK(m_doc.dissolve(child(2)));
        QVERIFY(m_doc.tree() == m_start); // wrap then dissolve is the identity
        QCOMPARE(m_doc.undoStack()->count(), 3);
        m_doc.undoStack()->undo();
        QCOMPARE(m_doc.tree().node(child(2)).type, NodeType::S);
        m_doc.undoStack()->undo();
        QCOMPARE(m_doc.tree().node(child(2)).type, NodeType::T);
        m_doc.undoStack()->undo();
        QVERIFY(m_doc.tree() == m_start);
    }

    void subBatchUpDown() {
        const RANode& root = m_start.node(m_start.root);
        const int sb = root.subBatch;
        QVERIFY_OK(m_doc.stepSubBatch(m_start.root, +1));
        const int up = m_doc.tree().node(m_doc.tree().root).subBatch;
        QVERIFY(up > sb);
        QCOMPARE(root.batch % up, 0);
        // Children's batch follows: b_child = b / sb.
        QCOMPARE(m_doc.tree().node(child(0)).batch, root.batch / up);
        checkUndoRedo(RATree(m_doc.tree()));
        QVERIFY_OK(m_doc.stepSubBatch(m_start.root, -1));
        QVERIFY(m_doc.tree().node(m_doc.tree().root).subBatch < sb);
    }

    void pinAndUnpin() {
        QVERIFY_OK(m_doc.setPinned(child(3), true));
        QVERIFY(m_doc.tree().node(child(3)).pinned);
        checkUndoRedo(RATree(m_doc.tree()));
    }

    void moveLeafIntoCut() {
        // conv1 (/0) into a new S cut holding maxpool and layer1.0/conv1, at its front:
        // the leaves keep their order, so the move is valid.
        QVERIFY_OK(m_doc.wrap(m_start.root, 1, 2, NodeType::S));
        const RATree wrapped = m_doc.tree();
        QVERIFY_OK(m_doc.move(child(0), child(1), 0));
        const RATree& t = m_doc.tree();
        const RANode& cut = t.node(child(0));
        QCOMPARE(cut.type, NodeType::S);
        QCOMPARE(int(cut.children.size()), 3);
        QCOMPARE(layerOf(cut.children[0]), QStringLiteral("/conv1/Conv"));
        m_doc.undoStack()->undo();
        QVERIFY(m_doc.tree() == wrapped);
    }

    void refusedMoveBreaksDependencies() {
        QSignalSpy refused(&m_doc, &Document::editRefused);
        // maxpool after everything that consumes it: not a topological order.
        const auto refusal = m_doc.move(child(1), m_start.root, 72);
        checkRefused(refusal, QString());
        const QString r = errorText(refusal);
        QCOMPARE(refused.count(), 1);
        QVERIFY(refused.front().front().toString().contains(r));
    }

    void refusedEdits() {
        checkRefused(m_doc.dissolve(m_start.root), QString());
        checkRefused(m_doc.flip(child(0)), QString()); // a leaf is not a cut
        checkRefused(m_doc.stepSubBatch(child(0), +1), QStringLiteral("cut"));
        checkRefused(m_doc.swapWithNext(child(0)), QString()); // maxpool depends on conv1
    }

    void refusedBecausePinned() {
        QVERIFY_OK(m_doc.wrap(m_start.root, 1, 2, NodeType::S));
        QVERIFY_OK(m_doc.setPinned(child(1), true));
        const RATree pinned = m_doc.tree();
        const int count = m_doc.undoStack()->count();
        const QString r = errorText(m_doc.flip(child(1)));
        QVERIFY(r.contains(QLatin1String("pinned")));
        QVERIFY(m_doc.tree() == pinned);
        QCOMPARE(m_doc.undoStack()->count(), count);
    }

    // A batch change starts from the default tree for the new batch but is
    // one undo step; the hand edit before it stays one more Undo away.
    void batchChangeIsUndoable() {
        QVERIFY_OK(m_doc.wrap(m_doc.tree().root, 0, 2, NodeType::S));
        const RATree edited = m_doc.tree();
        QVERIFY_OK(m_doc.setBatch(4));
        QCOMPARE(m_doc.tree().node(m_doc.tree().root).batch, 4);
        QCOMPARE(m_doc.batch(), 4);
        QCOMPARE(m_doc.undoStack()->count(), 2);
        QVERIFY(m_doc.setBatch(0).has_value());
        QCOMPARE(m_doc.undoStack()->count(), 2);
        m_doc.undoStack()->undo();
        QCOMPARE(m_doc.batch(), 8);
        QVERIFY(m_doc.tree() == edited);
        m_doc.undoStack()->undo();
        QVERIFY(m_doc.tree() == m_start);
        m_doc.undoStack()->redo();
        m_doc.undoStack()->redo();
        QCOMPARE(m_doc.batch(), 4);
        m_doc.undoStack()->undo();
        m_doc.undoStack()->undo();
        QCOMPARE(m_doc.batch(), 8);
    }

    // Switching the hardware preset must not discard the edits and the undo history: it is
    // an undo step that brings back hardware, objective, tree and the edits before it.
    void hardwareSwitchIsUndoable() {
        QVERIFY_OK(m_doc.wrap(m_doc.tree().root, 0, 2, NodeType::S));
        const RATree edited = m_doc.tree();
        const Objective before = m_doc.objective();
        const double editedCost = m_doc.evaluation()->cost;
        QSignalSpy reset(&m_doc, &Document::documentReset);
        QVERIFY_OK(m_doc.openHardware(QStringLiteral("cloud")));
        QCOMPARE(m_doc.hardware()->meshX, 12);
        QCOMPARE(reset.count(), 1);
        QCOMPARE(reset.front().front().toBool(), true); // undoable: not a new document
        QVERIFY(m_doc.undoStack()->canUndo());
        QCOMPARE(m_doc.undoStack()->count(), 2);
        m_doc.undoStack()->undo();
        QCOMPARE(m_doc.hardware()->meshX, 4);
        QCOMPARE(m_doc.hardwareSource(), QStringLiteral("edge"));
        QCOMPARE(m_doc.objective().n, before.n);
        QCOMPARE(m_doc.objective().m, before.m);
        QVERIFY(m_doc.tree() == edited);
        QCOMPARE(m_doc.evaluation()->cost, editedCost); // re-evaluated on edge again
        m_doc.undoStack()->undo();
        QVERIFY(m_doc.tree() == m_start);
    }

    // In the main window, an input switch says how to go back, and Undo brings back the
    // previous inputs with the tree and the edits made before the switch.
    void windowSaysHowToUndoAnInputSwitch() {
        QTemporaryDir dir;
        auto w = openSampleWindow(dir);
        QVERIFY(w);
        Document* doc = w->document();
        QVERIFY_OK(doc->wrap(doc->tree().root, 2, 2, NodeType::S));
        const RATree edited = doc->tree();
        const int batch = doc->batch();
        const int count = doc->undoStack()->count();
        QVERIFY(count >= 1);
        QVERIFY(w->openHardware(QStringLiteral("cloud")));
        QCOMPARE(doc->undoStack()->count(), count + 1);
        QVERIFY(w->statusBar()->currentMessage().contains(QLatin1String("Undo")));
        doc->undoStack()->undo();
        QCOMPARE(doc->hardwareSource(), QStringLiteral("edge"));
        QVERIFY(doc->tree() == edited);
        QVERIFY(w->setBatch(batch * 2));
        QCOMPARE(doc->undoStack()->count(), count + 1); // the redo of cloud went
        doc->undoStack()->undo();
        QCOMPARE(doc->batch(), batch);
        QVERIFY(doc->tree() == edited);
    }
};

QTEST_MAIN(TstDocument)
#include "tst_document.moc"
