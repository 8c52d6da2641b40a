// A leaf's alternative partitions in the GUI (docs/gui.md, "Partitions"): the tree's
// Partition... action lists them for the selected leaf (the mapper's choice first, each with
// what it costs the leaf alone), picking one is an undoable edit the tree and the figures
// show, and the search panel's check box lets the search move them.
#include "core/document.h"
#include "core/selectionstate.h"
#include "eval/evaluation.h"
#include "expectok.h"
#include "testwindow.h"
#include "tree/ratree.h"
#include "widgets/mainwindow.h"
#include "widgets/searchpanel.h"
#include "widgets/treepanel.h"

#include <QCheckBox>
#include <QTest>
#include <QUndoStack>

using namespace tilescope;
using namespace tilescope::ui;

class TstPartitionsUi : public QObject {
    Q_OBJECT
  private slots:
    void panelAsksForPartitionMoves() {
        SearchPanel panel;
        auto* box = panel.findChild<QCheckBox*>(QStringLiteral("partitionsBox"));
        QVERIFY(box);
        QVERIFY(!panel.settings().partitions);
        box->setChecked(true);
        QVERIFY(panel.settings().partitions);
        panel.setSettings(SearchConfig{});
        QVERIFY(!box->isChecked());
    }

    // The partition choice at the end of a run: on by default; off, the partitions do not
    // move either (every leaf runs the mapper's choice).
    void panelChoosesPartitions() {
        SearchPanel panel;
        auto* choose = panel.findChild<QCheckBox*>(QStringLiteral("choosePartitionsBox"));
        auto* moves = panel.findChild<QCheckBox*>(QStringLiteral("partitionsBox"));
        QVERIFY(choose && moves);
        QVERIFY(choose->isChecked());
        QVERIFY(panel.settings().choosePartitions);
        moves->setChecked(true);
        choose->setChecked(false);
        QVERIFY(!moves->isChecked() && !moves->isEnabled());
        SearchConfig c = panel.settings();
        QVERIFY(!c.choosePartitions && !c.partitions);
        c.choosePartitions = true;
        c.partitions = true;
        panel.setSettings(c);
        QVERIFY(choose->isChecked() && moves->isChecked() && moves->isEnabled());
        QVERIFY(panel.settings().partitions && panel.settings().choosePartitions);
    }

    void leafTakesAnotherPartition() {
        QTemporaryDir dir;
        auto w = openSampleWindow(dir);
        QVERIFY(w);
        Document* doc = w->document();
        const RATree ls = RATree::layerSequential(*doc->network(), doc->batch());
        if (!(doc->tree() == ls))
            QVERIFY_OK(doc->adoptTree(ls, QStringLiteral("layer-sequential")));
        QVERIFY(
            QTest::qWaitFor([&] { return doc->evaluation() && doc->evaluation()->valid; }, 20000));
        const int layer = doc->network()->indexOf("/layer1/layer1.0/conv2/Conv");
        int leaf = -1;
        for (int id = 0; id < doc->tree().size(); ++id)
            if (!doc->tree().node(id).isCut() && doc->tree().node(id).layer == layer) leaf = id;
        QVERIFY(leaf >= 0);
        TreePanel* panel = w->treePanel();
        // Nothing to offer for a cut.
        w->selection()->select(doc->tree().root,
                               QString::fromStdString(doc->tree().pathOf(doc->tree().root)));
        QVERIFY(panel->partitionOptions().isEmpty());
        QVERIFY(panel->setPartitionSelected({2, 2, 2, 2, 1}));
        w->selection()->select(leaf, QString::fromStdString(doc->tree().pathOf(leaf)));
        const auto options = panel->partitionOptions();
        QVERIFY(options.size() > 2);
        QVERIFY2(options[0].text.contains(QStringLiteral("mapper's choice")),
                 qPrintable(options[0].text));
        QCOMPARE(options[0].factors, PartitionFactors{});
        const double before = doc->evaluation()->cost;
        QVERIFY_OK(panel->setPartitionSelected(options[2].factors));
        QCOMPARE(doc->tree().node(leaf).partition, options[2].factors);
        QVERIFY(QTest::qWaitFor(
            [&] {
                const auto e = doc->evaluation();
                return e && e->valid && size_t(leaf) < e->nodes.size() &&
                       e->nodes[size_t(leaf)].namedPartition;
            },
            20000));
        QVERIFY(options[2].text.startsWith(
            QString::fromStdString(doc->evaluation()->nodes[size_t(leaf)].partition)));
        QVERIFY(doc->evaluation()->cost != before);
        doc->undoStack()->undo();
        QCOMPARE(doc->tree().node(leaf).partition, PartitionFactors{});
    }
};

QTEST_MAIN(TstPartitionsUi)
#include "tst_partitions_ui.moc"
