// Repeated blocks in the GUI (docs/gui.md, "Repeat blocks"): the search panel's check box
// asks for them, the tree marks each copy, an edit of the first block reaches every copy
// (one undo step) and an edit of a copy is refused with the reason.
#include "core/document.h"
#include "core/ratreemodel.h"
#include "expectok.h"
#include "tree/repetition.h"
#include "widgets/searchpanel.h"

#include <QCheckBox>
#include <QTest>
#include <QUndoStack>

using namespace tilescope;
using namespace tilescope::ui;

class TstRepeatBlocks : public QObject {
    Q_OBJECT
  private:
    // The top-level index of the root's child `i` in the model.
    static QModelIndex rootChild(const RATreeModel& m, int i, int column) {
        return m.index(i, column, m.index(0, 0));
    }

  private slots:
    void panelAsksForRepeatedBlocks() {
        SearchPanel panel;
        auto* box = panel.findChild<QCheckBox*>(QStringLiteral("repeatBlocksBox"));
        QVERIFY(box);
        QVERIFY(!panel.settings().repeatBlocks);
        box->setChecked(true);
        QVERIFY(panel.settings().repeatBlocks);
        SearchConfig c;
        panel.setSettings(c);
        QVERIFY(!box->isChecked());
    }

    void treeMarksCopiesAndEditsFollowTheFirstBlock() {
        Document doc;
        QVERIFY_OK(doc.openModel(QStringLiteral(TILESCOPE_TESTDATA "/llama_decode64.onnx")));
        const Network& net = *doc.network();
        const BlockRepetition rep = findRepetition(net);
        QCOMPARE(rep.count, 2);
        auto tied = tieBlocks(doc.tree(), net, rep);
        QVERIFY(tied);
        doc.restoreTree(*tied); // as a search's best, adopted
        RATreeModel model(&doc);
        // The root's children: the first block's leaves, then the copies (marked).
        const QString first = rootChild(model, 0, RATreeModel::Name).data().toString();
        const QString copy = rootChild(model, rep.length, RATreeModel::Name).data().toString();
        QVERIFY2(!first.startsWith(QStringLiteral("\u2261")), qPrintable(first));
        QVERIFY2(copy.startsWith(QStringLiteral("\u2261")), qPrintable(copy));
        QVERIFY(rootChild(model, rep.length, RATreeModel::Name)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("first repeated block")));

        // An edit of a copy is refused, the tree kept.
        const RATree before = doc.tree();
        const auto refused = doc.wrap(doc.tree().root, rep.length, 2, NodeType::S);
        QVERIFY(refused);
        QVERIFY2(refused->message.find("repeats the first block") != std::string::npos,
                 refused->message.c_str());
        QVERIFY(doc.tree() == before);

        // The first block's first two layers in an S cut: the copy follows, one undo step.
        QVERIFY_OK(doc.wrap(doc.tree().root, 0, 2, NodeType::S));
        int sCuts = 0;
        for (const RANode& n : doc.tree().nodes)
            sCuts += n.type == NodeType::S ? 1 : 0;
        QCOMPARE(sCuts, 2);
        QVERIFY(isTied(doc.tree(), net, rep));
        QCOMPARE(doc.undoStack()->count(), 1);
        doc.undoStack()->undo();
        QVERIFY(doc.tree() == before);
    }
};

QTEST_MAIN(TstRepeatBlocks)
#include "tst_repeatblocks.moc"
