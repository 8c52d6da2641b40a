// RATreeModel under QAbstractItemModelTester through loads, edits and undo; its figures,
// the invalid-node marking, the pinned check box and drops through dropMimeData.
#include "core/bytestext.h"
#include "core/document.h"
#include "core/ratreemodel.h"
#include "expectok.h"
#include "search/chiplet.h"

#include <QAbstractItemModelTester>
#include <QBrush>
#include <QMimeData>
#include <QSet>
#include <QTest>
#include <QUndoStack>

using namespace tilescope;
using namespace tilescope::ui;

namespace {
// A tree model over its own document, checked by QAbstractItemModelTester through every
// change the test makes.
struct TestedModel {
    Document doc;
    RATreeModel model{&doc};
    QAbstractItemModelTester tester{&model, QAbstractItemModelTester::FailureReportingMode::QtTest};
};
} // namespace

class TstRATreeModel : public QObject {
    Q_OBJECT
  private slots:
    void testerThroughEdits() {
        TestedModel tested;
        Document& doc = tested.doc;
        RATreeModel& model = tested.model;
        QCOMPARE(model.rowCount(), 0);
        QVERIFY_OK(doc.openModel(TILESCOPE_SAMPLES "/models/resnet50.onnx"));
        QCOMPARE(model.rowCount(), 1);
        const QModelIndex root = model.index(0, 0);
        QCOMPARE(model.rowCount(root), 72);
        QCOMPARE(root.data().toString(), QStringLiteral("T cut"));
        QCOMPARE(model.index(0, RATreeModel::Layers).data().toInt(), 72);
        // Short unique names; the full ONNX name is in the tooltip.
        QCOMPARE(model.index(0, 0, root).data().toString(), QStringLiteral("conv1"));
        QVERIFY(model.index(0, 0, root)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .startsWith(QLatin1String("/conv1/Conv")));
        QCOMPARE(model.index(0, 0, root).data(RATreeModel::NodePathRole).toString(),
                 QStringLiteral("/0"));
        QVERIFY(!model.index(0, 0, root).data(Qt::DecorationRole).value<QIcon>().isNull());
        // Root tile group: all 16 tiles of the edge mesh.
        QVERIFY(
            model.index(0, RATreeModel::Tiles).data().toString().startsWith(QLatin1String("16:")));
        QVERIFY(!model.index(0, RATreeModel::Time).data().toString().isEmpty());

        QVERIFY_OK(doc.wrap(doc.tree().root, 1, 2, NodeType::S));
        QCOMPARE(model.rowCount(model.index(0, 0)), 71);
        const QModelIndex cut = model.index(1, 0, model.index(0, 0));
        QCOMPARE(cut.data().toString(), QStringLiteral("S cut"));
        QCOMPARE(model.rowCount(cut), 2);
        QCOMPARE(cut.parent(), model.index(0, 0));
        QVERIFY(model.flags(cut) & Qt::ItemIsDropEnabled);
        QVERIFY(!(model.flags(model.index(0, 0, cut)) & Qt::ItemIsDropEnabled));
        doc.undoStack()->undo();
        doc.undoStack()->redo();
        QVERIFY_OK(doc.openHardware(QStringLiteral("cloud")));
        QVERIFY(
            model.index(0, RATreeModel::Tiles).data().toString().startsWith(QLatin1String("144:")));
    }

    // The chiplet baseline's regions: on a template with chiplets the Tiles
    // column says which chiplets a node's tiles lie on, for each region of the baseline's
    // root S cut too.
    void regionsShowTheirChiplets() {
        Document doc;
        RATreeModel model(&doc);
        QVERIFY_OK(doc.openModel(TILESCOPE_SAMPLES "/models/googlenet.onnx"));
        QVERIFY(!model.index(0, RATreeModel::Tiles).data().toString().contains("chiplet"));
        QVERIFY_OK(doc.openHardware(QStringLiteral("chiplet")));
        QCOMPARE(model.index(0, RATreeModel::Tiles).data().toString().section(" (", 1),
                 QStringLiteral("chiplets 0, 1, 2, 3)"));
        auto tree = chipletBaseline(*doc.network(), *doc.hardware(), doc.batch(), {});
        QVERIFY2(tree.ok(), tree.ok() ? "" : tree.error().message.c_str());
        QVERIFY_OK(doc.adoptTree(*tree, QStringLiteral("chiplet baseline")));
        // GoogLeNet splits into 3 regions: the root S cut's children.
        const QModelIndex cut = model.index(0, 0);
        QCOMPARE(cut.data().toString(), QStringLiteral("S cut"));
        QCOMPARE(model.rowCount(cut), 3);
        QStringList chips;
        for (int r = 0; r < model.rowCount(cut); ++r) {
            const QString t = model.index(r, RATreeModel::Tiles, cut).data().toString();
            QVERIFY2(t.contains(QLatin1String("(chiplet")), qPrintable(t));
            // The region's name says it too (the Tiles column is off to the right).
            const QString name = model.index(r, 0, cut).data().toString();
            QVERIFY2(name.endsWith(t.section(QLatin1String(" ("), 1)), qPrintable(name));
            chips << t.section(QLatin1String(" (chiplet"), 1)
                         .remove(QLatin1Char('s'))
                         .remove(')')
                         .trimmed();
        }
        // The evaluator gives the regions tiles by their work (docs/method.md, tile allocation at
        // an S cut), so a region may reach into a neighbouring chiplet; together they use all four.
        QStringList all = chips.join(QStringLiteral(", ")).split(QStringLiteral(", "));
        all.sort();
        all.removeDuplicates();
        QCOMPARE(all, QStringList({"0", "1", "2", "3"}));
    }

    // An S cut's children take a fixed tile count through the document (undoable); the
    // Tiles column says whether it applies: only when every child has one and they add up
    // to the cut's tiles.
    void fixedTileCountsThroughDocument() {
        Document doc;
        RATreeModel model(&doc);
        QVERIFY_OK(doc.openModel(TILESCOPE_SAMPLES "/models/resnet50.onnx"));
        QVERIFY_OK(doc.wrap(doc.tree().root, 1, 2, NodeType::S));
        auto node = [&](const char* path) { return doc.tree().nodeAtPath(path); };
        auto tiles = [&](const char* path) {
            return model.indexOfNode(node(path), RATreeModel::Tiles).data().toString();
        };
        const auto notChild = doc.setTiles(node("/0"), 4);
        QVERIFY(notChild && notChild->message.find("not a child of an S cut") != std::string::npos);
        QVERIFY(doc.setTiles(node("/1/0"), -1));
        QVERIFY_OK(doc.setTiles(node("/1/0"), 4));
        QCOMPARE(doc.tree().node(node("/1/0")).tiles, 4);
        QVERIFY2(tiles("/1/0").contains(QLatin1String("(asks 4)")), qPrintable(tiles("/1/0")));
        QVERIFY_OK(doc.setTiles(node("/1/1"), 12));
        QVERIFY2(tiles("/1/0").startsWith(QLatin1String("4 fixed:")), qPrintable(tiles("/1/0")));
        QVERIFY2(tiles("/1/1").startsWith(QLatin1String("12 fixed:")), qPrintable(tiles("/1/1")));
        QCOMPARE(doc.evaluation()->nodes[size_t(node("/1/1"))].tileCount, 12);
        doc.undoStack()->undo();
        QCOMPARE(doc.tree().node(node("/1/1")).tiles, 0);
        QVERIFY(tiles("/1/0").contains(QLatin1String("(asks 4)")));
        QVERIFY_OK(doc.setTiles(node("/1/0"), 0)); // released
        QVERIFY(!tiles("/1/0").contains(QLatin1String("asks")));
        QVERIFY_OK(doc.setPinned(node("/1"), true));
        QVERIFY(doc.setTiles(node("/1/0"), 4)); // under a pinned cut: refused
    }

    // The Energy column is scaled per node: not "0.00 J" on every row.
    void energyColumnScalesPerNode() {
        TestedModel tested;
        Document& doc = tested.doc;
        RATreeModel& model = tested.model;
        QVERIFY_OK(doc.openModel(TILESCOPE_SAMPLES "/models/resnet50.onnx"));
        const QString rootText = model.index(0, RATreeModel::Energy).data().toString();
        QVERIFY2(rootText.endsWith(QLatin1String("J")), qPrintable(rootText));
        QVERIFY2(!rootText.startsWith(QLatin1String("0")), qPrintable(rootText));
        QSet<QString> distinct;
        const QModelIndex root = model.index(0, 0);
        for (int r = 0; r < model.rowCount(root); ++r) {
            const QString t = model.index(r, RATreeModel::Energy, root).data().toString();
            QVERIFY2(!t.startsWith(QLatin1String("0")), qPrintable(t));
            distinct.insert(t);
        }
        QVERIFY(distinct.size() > 10);
        QCOMPARE(rootText, energyText(doc.evaluation()->nodes[size_t(doc.tree().root)].energy));
    }

    void pinnedCheckBoxGoesThroughDocument() {
        TestedModel tested;
        Document& doc = tested.doc;
        RATreeModel& model = tested.model;
        QVERIFY_OK(doc.openModel(TILESCOPE_SAMPLES "/models/resnet50.onnx"));
        const QModelIndex pin = model.index(3, RATreeModel::Pinned, model.index(0, 0));
        QCOMPARE(pin.data(Qt::CheckStateRole).toInt(), int(Qt::Unchecked));
        QVERIFY(model.setData(pin, Qt::Checked, Qt::CheckStateRole));
        QVERIFY(doc.tree().node(doc.tree().nodeAtPath("/3")).pinned);
        QCOMPARE(
            model.index(3, RATreeModel::Pinned, model.index(0, 0)).data(Qt::CheckStateRole).toInt(),
            int(Qt::Checked));
        QCOMPARE(doc.undoStack()->count(), 1);
    }

    void invalidNodeMarkedRed() {
        TestedModel tested;
        Document& doc = tested.doc;
        RATreeModel& model = tested.model;
        QVERIFY_OK(doc.openHardware(QStringLiteral("testchip")));
        QVERIFY_OK(doc.openModel(TILESCOPE_SAMPLES "/models/resnet50.onnx"));
        // Five concurrent children on a 4-tile chip cannot each get a tile.
        QVERIFY_OK(doc.wrap(doc.tree().root, 2, 5, NodeType::S));
        QVERIFY(!doc.evaluation()->valid);
        const int bad = doc.evaluation()->invalidNode;
        QVERIFY(bad >= 0);
        const QModelIndex i = model.indexOfNode(bad);
        QVERIFY(i.isValid());
        QCOMPARE(i.data(Qt::ForegroundRole).value<QBrush>().color(), QColor(0xc6, 0x28, 0x28));
        QVERIFY(i.data(Qt::ToolTipRole)
                    .toString()
                    .contains(QString::fromStdString(doc.evaluation()->reason)));
        // A valid node is not marked.
        QVERIFY(!model.index(0, 0, model.index(0, 0)).data(Qt::ForegroundRole).isValid());
    }

    void dropMovesThroughDocument() {
        TestedModel tested;
        Document& doc = tested.doc;
        RATreeModel& model = tested.model;
        QVERIFY_OK(doc.openModel(TILESCOPE_SAMPLES "/models/resnet50.onnx"));
        QVERIFY_OK(doc.wrap(doc.tree().root, 1, 2, NodeType::S));
        const QModelIndex root = model.index(0, 0);
        std::unique_ptr<QMimeData> md(model.mimeData({model.index(0, 0, root)}));
        QVERIFY(md);
        QCOMPARE(md->data(QString::fromLatin1(RATreeModel::kMimeType)), QByteArray("/0"));
        const QModelIndex cut = model.index(1, 0, root);
        QVERIFY(model.canDropMimeData(md.get(), Qt::MoveAction, 0, 0, cut));
        // A leaf is no drop target; a node cannot go into itself.
        QVERIFY(!model.canDropMimeData(md.get(), Qt::MoveAction, -1, 0, model.index(2, 0, root)));
        model.dropMimeData(md.get(), Qt::MoveAction, 0, 0, cut);
        QCOMPARE(doc.tree().node(doc.tree().nodeAtPath("/0")).type, NodeType::S);
        QCOMPARE(int(doc.tree().node(doc.tree().nodeAtPath("/0")).children.size()), 3);
        // Dropping maxpool after its consumers is refused and changes nothing.
        const RATree before = doc.tree();
        std::unique_ptr<QMimeData> md2(
            model.mimeData({model.index(1, 0, model.index(0, 0, model.index(0, 0)))}));
        model.dropMimeData(md2.get(), Qt::MoveAction, -1, 0, model.index(0, 0));
        QVERIFY(doc.tree() == before);
    }
};

QTEST_MAIN(TstRATreeModel)
#include "tst_ratreemodel.moc"
