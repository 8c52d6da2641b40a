// Preview before adopting: A/B compare of two saved sessions shows both S-T
// graphs side by side on one time axis, the figures of each and their tree diff; the diff
// panel compares the document's tree with a tree file and adopts B as one undo step.
#include "core/bytestext.h"
#include "core/document.h"
#include "expectok.h"
#include "testwindow.h"
#include "tree/ratree.h"
#include "widgets/comparesessionsdialog.h"
#include "widgets/diffpanel.h"
#include "widgets/exportcontroller.h"
#include "widgets/mainwindow.h"
#include "widgets/sessioncontroller.h"
#include "widgets/stgraphplottable.h"

#include <QPushButton>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <qcustomplot.h>
#include <set>

using namespace tilescope;
using namespace tilescope::ui;

namespace {
std::set<int> nodesOf(const StGraphPlottable* p) {
    std::set<int> out;
    for (const StRect& r : p->layout()->rects())
        out.insert(r.node);
    return out;
}
} // namespace

class TstCompareSessions : public QObject {
    Q_OBJECT
  private:
    QTemporaryDir m_dir;
    std::unique_ptr<MainWindow> m_w;
    QString m_a, m_b;
    RATree m_treeA, m_treeB;
    double m_delayA = 0, m_delayB = 0;
    QString m_energyA, m_energyB;

  private slots:
    void initTestCase() {
        m_w = openTestWindow(m_dir);
        QVERIFY(m_w);
        QVERIFY(m_w->openSample(TILESCOPE_SAMPLES "/models/resnet50.onnx", QStringLiteral("edge"),
                                false));
        Document* doc = m_w->document();
        m_a = m_dir.filePath(QStringLiteral("a.tilescope.json"));
        m_b = m_dir.filePath(QStringLiteral("b.tilescope.json"));
        m_treeA = doc->tree();
        m_delayA = doc->evaluation()->delay;
        m_energyA = energyText(doc->evaluation()->energy.total());
        QVERIFY(m_w->sessions()->saveSession(m_a));
        // B: an S cut over two of the root's children.
        QVERIFY_OK(doc->wrap(doc->tree().root, 2, 2, NodeType::S));
        QVERIFY(doc->evaluation()->valid);
        m_treeB = doc->tree();
        m_delayB = doc->evaluation()->delay;
        m_energyB = energyText(doc->evaluation()->energy.total());
        QVERIFY(m_w->sessions()->saveSession(m_b));
        QVERIFY(m_delayA != m_delayB);
    }

    void sideBySide() {
        CompareSessionsDialog* dlg = m_w->compareSessions(m_a, m_b);
        QVERIFY(dlg);
        QVERIFY(QTest::qWaitForWindowExposed(dlg));
        const Network& net = *m_w->document()->network();
        // Each graph draws its own session's tree: the leaves of A and of B.
        QCOMPARE(nodesOf(dlg->plottable(0)), leavesOf(m_treeA, net));
        QCOMPARE(nodesOf(dlg->plottable(1)), leavesOf(m_treeB, net));
        QVERIFY(leavesOf(m_treeA, net) != leavesOf(m_treeB, net));
        // One time axis, long enough for the longer schedule.
        const QCPRange xa = dlg->plot(0)->xAxis->range(), xb = dlg->plot(1)->xAxis->range();
        QCOMPARE(xa.lower, xb.lower);
        QCOMPARE(xa.upper, xb.upper);
        QVERIFY(xa.upper >= std::max(m_delayA, m_delayB));
        QVERIFY(xa.upper < std::max(m_delayA, m_delayB) * 1.05);
        // Zooming one graph moves the other.
        dlg->plot(1)->xAxis->setRange(xa.lower, xa.upper / 3);
        QCOMPARE(dlg->plot(0)->xAxis->range().upper, xa.upper / 3);
        // The figures of each session, as the document showed them.
        QVERIFY2(dlg->metricsText(0).contains(m_energyA), qPrintable(dlg->metricsText(0)));
        QVERIFY2(dlg->metricsText(1).contains(m_energyB), qPrintable(dlg->metricsText(1)));
        QVERIFY(dlg->metricsText(0).contains(QLatin1String("resnet50.onnx")));
        // B has an S cut A lacks; its two leaves sit under another parent.
        QVERIFY2(dlg->diffSummary().contains(QLatin1String("1 added, 0 removed, 2 moved")),
                 qPrintable(dlg->diffSummary()));
        QCOMPARE(dlg->diffTable()->rowCount(), 3);
        dlg->close();
    }

    void sameSessionIsIdentical() {
        CompareSessionsDialog* dlg = m_w->compareSessions(m_b, m_b);
        QVERIFY(dlg);
        QVERIFY2(dlg->diffSummary().contains(QLatin1String("identical")),
                 qPrintable(dlg->diffSummary()));
        QCOMPARE(dlg->diffTable()->rowCount(), 0);
        QCOMPARE(dlg->plottable(0)->layout()->rects().size(),
                 dlg->plottable(1)->layout()->rects().size());
        dlg->close();
    }

    // Bad input: a clear message naming the file, no dialog.
    void unreadableSession() {
        const QString missing = m_dir.filePath(QStringLiteral("missing.tilescope.json"));
        const auto before = m_w->findChildren<CompareSessionsDialog*>().size();
        QVERIFY(!m_w->compareSessions(m_a, missing));
        QVERIFY2(m_w->lastError().contains(QLatin1String("missing.tilescope.json")),
                 qPrintable(m_w->lastError()));
        QCOMPARE(m_w->findChildren<CompareSessionsDialog*>().size(), before);
    }

    // A/B compare of the document's tree (session A) with a saved tree file: the diff lists
    // added / removed / moved nodes with each one's energy and time change, and "Adopt B"
    // makes the file's tree the document's, as one undo step.
    void compareWithTreeFile() {
        QVERIFY(m_w->sessions()->openSession(m_a));
        Document* doc = m_w->document();
        const RATree saved = doc->tree();
        const QString file = m_dir.filePath(QStringLiteral("b.tree"));
        QVERIFY(m_w->exports()->exportTo(QStringLiteral("tree-text"), file));
        QVERIFY_OK(doc->wrap(doc->tree().root, 2, 2, NodeType::S));
        QVERIFY(m_w->compareWithTreeFile(file));
        DiffPanel* dp = m_w->diffPanel();
        // A has an S cut B lacks; its two leaves sit under different parents.
        QVERIFY2(dp->summary().contains(QLatin1String("0 added, 1 removed, 2 moved, 0 changed")),
                 qPrintable(dp->summary()));
        QCOMPARE(dp->rowCount(), 3);
        QCOMPARE(dp->table()->item(0, 0)->text(), QStringLiteral("removed"));
        QVERIFY(!dp->table()->item(0, 3)->text().isEmpty()); // energy change of the cut
        auto* adopt = dp->findChild<QPushButton*>();
        QVERIFY(adopt && adopt->isEnabled());
        adopt->click();
        QVERIFY(doc->tree() == saved);
        QVERIFY(dp->summary().contains(QLatin1String("identical")));
        doc->undoStack()->undo();
        doc->undoStack()->undo();
        QVERIFY(doc->tree() == saved);
        QVERIFY(waitForLayout(*m_w));
    }

    void cleanupTestCase() { m_w.reset(); }
};

QTEST_MAIN(TstCompareSessions)
#include "tst_comparesessions.moc"
