// A real drag and drop in the RA tree under X (xvfb, QT_QPA_PLATFORM=xcb): a leaf is
// dragged with the mouse onto an S cut, the xcb drag manager delivers the drop, and the
// document's tree must show the leaf moved into the cut (and undo must bring it back).
#include "core/document.h"
#include "core/ratreemodel.h"
#include "core/selectionstate.h"
#include "expectok.h"
#include "widgets/treepanel.h"

#include <QApplication>
#include <QStyleHints>
#include <QTest>
#include <QTimer>
#include <QTreeView>
#include <QUndoStack>

using namespace tilescope;
using namespace tilescope::ui;

class XvfbTstDragDrop : public QObject {
    Q_OBJECT
  private slots:
    void dragLeafOntoCut() {
        if (QGuiApplication::platformName() != QLatin1String("xcb"))
            QSKIP("needs the xcb platform (run under xvfb-run with QT_QPA_PLATFORM=xcb)");
        Document doc;
        SelectionState sel;
        QVERIFY_OK(doc.openModel(TILESCOPE_SAMPLES "/models/resnet50.onnx"));
        // /0 = S cut {conv1, maxpool}; /1 = layer1.0/conv1, which may join the cut at its end.
        QVERIFY_OK(doc.wrap(doc.tree().root, 0, 2, NodeType::S));
        doc.undoStack()->clear();
        const RATree before = doc.tree();
        const int cut = before.nodeAtPath("/0");
        QCOMPARE(int(before.node(cut).children.size()), 2);

        TreePanel panel(&doc, &sel);
        panel.resize(700, 600);
        panel.move(50, 50);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QTreeView* view = panel.view();
        RATreeModel* model = panel.model();
        const QModelIndex root = model->index(0, 0);
        view->expand(root);
        QTest::qWait(100);
        const QModelIndex cutIdx = model->index(0, 0, root);
        const QModelIndex leafIdx = model->index(1, 0, root);
        QCOMPARE(leafIdx.data().toString(), QStringLiteral("layer1.0/conv1"));
        QCOMPARE(cutIdx.data().toString(), QStringLiteral("S cut"));
        QWidget* vp = view->viewport();
        const QPoint from = view->visualRect(leafIdx).center();
        const QPoint to = view->visualRect(cutIdx).center(); // the middle of a row drops ON it

        // QDrag::exec runs its own event loop once the drag starts: the moves and the
        // release are scheduled before, and reach the xcb drag manager from inside it.
        const int dist = QGuiApplication::styleHints()->startDragDistance();
        int stepsRun = 0;
        auto step = [&](int ms, auto fn) {
            QTimer::singleShot(ms, vp, [&, fn] {
                fn();
                ++stepsRun;
            });
        };
        step(150, [&] { QTest::mouseMove(vp, from + QPoint(0, -dist)); });
        step(300, [&] { QTest::mouseMove(vp, (from + to) / 2); });
        step(450, [&] { QTest::mouseMove(vp, to + QPoint(0, 1)); });
        step(650, [&] { QTest::mouseMove(vp, to); });
        step(900, [&] { QTest::mouseRelease(vp, Qt::LeftButton, {}, to); });
        QTest::mousePress(vp, Qt::LeftButton, {}, from);
        QTest::mouseMove(vp, from + QPoint(dist + 4, dist + 4)); // starts the drag (blocks)
        QTRY_COMPARE_WITH_TIMEOUT(stepsRun, 5, 5000);

        // The drop went through RATreeModel::dropMimeData -> Document::move (edit::move).
        QTRY_VERIFY_WITH_TIMEOUT(!(doc.tree() == before), 5000);
        const RATree& t = doc.tree();
        const int newCut = t.nodeAtPath("/0");
        QCOMPARE(t.node(newCut).type, NodeType::S);
        QCOMPARE(int(t.node(newCut).children.size()), 3);
        const int moved = t.node(newCut).children[2];
        QCOMPARE(doc.network()->layers[size_t(t.node(moved).layer)].name,
                 std::string("/layer1/layer1.0/conv1/Conv"));
        QCOMPARE(doc.undoStack()->count(), 1);
        QCOMPARE(doc.undoStack()->text(0), QStringLiteral("Move"));
        doc.undoStack()->undo();
        QVERIFY(doc.tree() == before);
    }
};

QTEST_MAIN(XvfbTstDragDrop)
#include "xvfb_tst_dragdrop.moc"
