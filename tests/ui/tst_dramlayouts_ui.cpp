// DRAM layouts in the GUI (docs/gui.md): on a template with a run model the Layers table
// shows each leaf's input and output layouts, runs and run efficiency (the figures of
// report/layers.h), a leaf's output tensor can be pinned to a layout and the rest re-planned,
// a global choice lays every tensor out one way, sessions keep the choice and the pins, the
// S-T graph colours leaves by run efficiency and the metrics panel shows the plan's DRAM
// cycles. A template without a run model shows none of it.
#include "core/bytestext.h"
#include "core/document.h"
#include "core/layersmodel.h"
#include "core/selectionstate.h"
#include "core/session.h"
#include "eval/evaluator.h"
#include "expectok.h"
#include "report/layers.h"
#include "testwindow.h"
#include "widgets/layerspanel.h"
#include "widgets/mainwindow.h"
#include "widgets/metricspanel.h"
#include "widgets/palette.h"
#include "widgets/sessioncontroller.h"
#include "widgets/stgraphplottable.h"
#include "widgets/stgraphview.h"

#include <QAction>
#include <QLabel>
#include <QMenu>
#include <QTemporaryDir>
#include <QTest>
#include <fstream>

using namespace tilescope;
using namespace tilescope::ui;

namespace {

Hardware runModelHardware() {
    Hardware hw;
    presetHardware("edge", hw);
    hw.dramBurstBytes = 64;
    hw.dramRunOverheadCycles = 20;
    return hw;
}

QAction* actionWithData(QMenu* menu, const QString& data) {
    for (QAction* a : menu->actions())
        if (a->data().toString() == data) return a;
    return nullptr;
}

} // namespace

class TstDramLayoutsUi : public QObject {
    Q_OBJECT
  private:
    QTemporaryDir m_dir;
    std::unique_ptr<MainWindow> m_w;

    Document* doc() const { return m_w->document(); }
    LayersModel* layers() const { return m_w->layersPanel()->model(); }
    QString summary() const {
        return m_w->layersPanel()->findChild<QLabel*>(QStringLiteral("layersSummary"))->text();
    }

    std::vector<LayerFigures> figures() const {
        return layerFigures(*doc()->evaluation(), doc()->tree(), *doc()->network(),
                            *doc()->hardware());
    }

    // The S-T graph shows the document's current evaluation (its layout job has run).
    bool laidOut() const {
        auto* p = m_w->stGraph()->plottable();
        return QTest::qWaitFor(
            [&] { return p->layout() && &p->layout()->evaluation() == doc()->evaluation().get(); },
            20000);
    }

    // The first leaf whose output is stored to DRAM (a pin takes any layout).
    int pinnableRow() const {
        for (int r = 0; r < layers()->rowCount(); ++r)
            if (!layers()->figures()[size_t(r)].outputLayout.empty()) return r;
        return -1;
    }

  private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_w = openTestWindow(m_dir);
        QVERIFY(m_w);
        QVERIFY_OK(doc()->setHardware(runModelHardware(), QStringLiteral("edge-runs")));
        QVERIFY2(m_w->openModel(QStringLiteral(TILESCOPE_SAMPLES "/models/mobilenet_v2.onnx")),
                 qPrintable(m_w->lastError()));
        QVERIFY(waitForLayout(*m_w));
        QVERIFY(doc()->evaluation()->valid);
        QVERIFY(doc()->evaluation()->layouts.active);
    }

    // The four columns are there, each cell what layerFigures says.
    void columnsShowLayerFigures() {
        QCOMPARE(layers()->columnCount(), int(LayersModel::ColumnCount));
        QCOMPARE(
            layers()->headerData(LayersModel::InLayout, Qt::Horizontal, Qt::DisplayRole).toString(),
            QStringLiteral("In layout"));
        QCOMPARE(layers()
                     ->headerData(LayersModel::RunEfficiency, Qt::Horizontal, Qt::DisplayRole)
                     .toString(),
                 QStringLiteral("Run eff."));
        const auto want = figures();
        QCOMPARE(layers()->rowCount(), int(want.size()));
        int stored = 0, read = 0, inefficient = 0;
        for (int r = 0; r < layers()->rowCount(); ++r) {
            const LayerFigures& f = want[size_t(r)];
            auto cell = [&](int c) { return layers()->index(r, c).data().toString(); };
            QStringList ins;
            for (const std::string& l : f.inputLayouts)
                ins << (l.empty() ? QStringLiteral("-") : QString::fromStdString(l));
            QCOMPARE(cell(LayersModel::InLayout), ins.join(QStringLiteral(", ")));
            QCOMPARE(cell(LayersModel::OutLayout), f.outputLayout.empty()
                                                       ? QStringLiteral("-")
                                                       : QString::fromStdString(f.outputLayout));
            QCOMPARE(layers()->index(r, LayersModel::DramRuns).data(LayersModel::SortRole),
                     QVariant(f.dramRuns));
            QCOMPARE(cell(LayersModel::RunEfficiency),
                     QStringLiteral("%1 %").arg(f.runEfficiency * 100, 0, 'f', 1));
            stored += !f.outputLayout.empty();
            read += std::count_if(f.inputLayouts.begin(), f.inputLayouts.end(),
                                  [](const std::string& s) { return !s.empty(); });
            inefficient += f.runEfficiency < 0.999;
        }
        QVERIFY(stored > 0);
        QVERIFY(read > 0);
        QVERIFY(inefficient > 0);
        QVERIFY2(summary().contains(QStringLiteral("DRAM layouts auto: runs")),
                 qPrintable(summary()));
    }

    // Pinning a leaf's output from the Layers panel's menu: the evaluation lays that tensor
    // out so and re-plans the rest; the cell says pinned; Undo and Unpin go back.
    void pinReplans() {
        const int row = pinnableRow();
        QVERIFY(row >= 0);
        const LayerFigures f = layers()->figures()[size_t(row)];
        const auto before = doc()->evaluation();
        const int planned = before->layouts.output[size_t(f.layer)];
        // A layout other than the planner's choice.
        const DramLayout pin =
            planned == int(DramLayout::Chwn) ? DramLayout::Nhwc : DramLayout::Chwn;
        m_w->selection()->select(f.node, QString::fromStdString(doc()->tree().pathOf(f.node)));
        QMenu* menu = m_w->layersPanel()->pinMenu();
        QVERIFY(menu->isEnabled());
        QVERIFY(menu->menuAction()->isVisible());
        QAction* a = actionWithData(menu, QString::fromLatin1(layoutName(pin)));
        QVERIFY(a);
        a->trigger();
        QCOMPARE(doc()->layouts().pins.size(), size_t(1));
        QCOMPARE(doc()->layouts().pins.at(f.name), pin);
        const auto after = doc()->evaluation();
        QVERIFY(after->valid);
        QCOMPARE(after->layouts.output[size_t(f.layer)], int(pin));
        QCOMPARE(after->layouts.choice.pins.at(f.name), pin);
        // The plan is the best with the pin: never better than the unpinned best.
        if (before->layouts.planExhaustive && after->layouts.planExhaustive)
            QVERIFY(after->layouts.planCycles >= before->layouts.planCycles * (1 - 1e-9));
        QVERIFY(after->layouts.planCycles != before->layouts.planCycles ||
                after->layouts.output != before->layouts.output);
        const int r = layers()->rowOfNode(f.node);
        QCOMPARE(layers()->index(r, LayersModel::OutLayout).data().toString(),
                 QStringLiteral("%1 (pinned)").arg(QString::fromLatin1(layoutName(pin))));
        QVERIFY(a->isChecked());
        // The metrics row measures the pinned plan against the best single layout.
        const QString metricsRow = m_w->metrics()->figureText(QStringLiteral("DRAM layouts"));
        QVERIFY2(metricsRow.contains(QStringLiteral("(auto, 1 pinned)")), qPrintable(metricsRow));
        QVERIFY2(metricsRow.contains(QStringLiteral("the plan saves")) ||
                     metricsRow.contains(QStringLiteral("% more (its pins)")),
                 qPrintable(metricsRow));
        QVERIFY2(summary().contains(QStringLiteral("DRAM layouts auto, 1 pinned")),
                 qPrintable(summary()));
        // Undoable: one step back is the plan before it.
        doc()->undoStack()->undo();
        QVERIFY(doc()->layouts().pins.empty());
        QCOMPARE(doc()->evaluation()->layouts.output, before->layouts.output);
        doc()->undoStack()->redo();
        QCOMPARE(doc()->evaluation()->layouts.output[size_t(f.layer)], int(pin));
        // Unpin: planned again.
        m_w->selection()->select(f.node, QString::fromStdString(doc()->tree().pathOf(f.node)));
        QAction* unpin = menu->actions().last();
        QVERIFY(unpin->isEnabled());
        unpin->trigger();
        QVERIFY(doc()->layouts().pins.empty());
        QCOMPARE(doc()->evaluation()->layouts.output, before->layouts.output);
    }

    // The global choice: every DRAM tensor in that layout (those read through a reshape stay
    // NCHW), exactly what the engine evaluates with that choice.
    void globalChoiceLaysOutEveryTensor() {
        QMenu* menu = m_w->layersPanel()->layoutsMenu();
        QVERIFY(menu->isEnabled());
        for (DramLayout l : {DramLayout::Nhwc, DramLayout::Chwn, DramLayout::Nchwc}) {
            QAction* a = actionWithData(menu, QString::fromLatin1(layoutName(l)));
            QVERIFY(a);
            a->trigger();
            QVERIFY(!doc()->layouts().planned);
            QCOMPARE(doc()->layouts().fixed, l);
            const auto e = doc()->evaluation();
            EvalOptions opt;
            opt.objective = doc()->objective();
            opt.layouts.planned = false;
            opt.layouts.fixed = l;
            opt.detail = true;
            const Evaluation want =
                evaluate(*doc()->network(), *doc()->hardware(), doc()->tree(), doc()->batch(), opt);
            QCOMPARE(e->layouts.output, want.layouts.output);
            QCOMPARE(e->layouts.inputs, want.layouts.inputs);
            int inLayout = 0;
            for (int o : e->layouts.output) {
                QVERIFY(o < 0 || o == int(l) || o == int(DramLayout::Nchw));
                inLayout += o == int(l);
            }
            QVERIFY(inLayout > 0);
            QVERIFY(a->isChecked());
        }
        QAction* autoPlan = actionWithData(menu, QStringLiteral("auto"));
        QVERIFY(autoPlan);
        autoPlan->trigger();
        QVERIFY(doc()->layouts().planned);
    }

    // The metrics panel: the plan's DRAM cycles and its gain over the best single layout.
    void metricsShowThePlan() {
        QVERIFY(m_w->metrics()->figureShown(QStringLiteral("DRAM layouts")));
        const auto e = doc()->evaluation();
        const QString text = m_w->metrics()->figureText(QStringLiteral("DRAM layouts"));
        QCOMPARE(text, MetricsPanel::layoutPlanText(*e));
        QVERIFY2(text.contains(cyclesText(e->layouts.planCycles)), qPrintable(text));
        const double best =
            *std::min_element(e->layouts.fixedCycles.begin(), e->layouts.fixedCycles.end());
        QVERIFY2(text.contains(cyclesText(best)), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("the plan saves")), qPrintable(text));
    }

    // The S-T graph's DRAM run efficiency colouring, from layerFigures.
    void stGraphColoursRunEfficiency() {
        StGraphView* st = m_w->stGraph();
        QVERIFY(st->colouringOffered(StGraphView::Colouring::DramRuns));
        st->setColouring(StGraphView::Colouring::DramRuns);
        int coloured = 0;
        for (const LayerFigures& f : figures()) {
            const QColor want =
                f.dramBytes > 0 ? efficiencyColor(1 / f.runEfficiency) : efficiencyColor(0);
            QCOMPARE(st->plottable()->layerColorOf(f.layer), want);
            coloured += f.dramBytes > 0;
        }
        QVERIFY(coloured > 0);
        QVERIFY2(st->keyText().contains(QStringLiteral("DRAM run efficiency")),
                 qPrintable(st->keyText()));
        // The hover names the leaf's layouts, runs and run efficiency.
        QVERIFY(laidOut());
        const auto layout = st->plottable()->layout();
        const StRect& r = layout->rects().front();
        const QString tip = st->rectToolTip(*layout, 0);
        for (const LayerFigures& f : figures())
            if (f.layer == r.layer)
                QVERIFY2(tip.contains(QStringLiteral("run efficiency %1 %")
                                          .arg(f.runEfficiency * 100, 0, 'f', 1)),
                         qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("DRAM layouts: in ")), qPrintable(tip));
    }

    // Save and open: the choice and the pins come back; a session without them has neither
    // key (files of templates without a run model stay as they were).
    void sessionRoundTrip() {
        const QString plain = m_dir.filePath(QStringLiteral("plain.tilescope.json"));
        QVERIFY2(m_w->sessions()->saveSession(plain), qPrintable(m_w->lastError()));
        auto p = Session::load(plain);
        QVERIFY(p.ok());
        QVERIFY(p->layouts == LayoutChoice{});
        {
            QFile f(plain);
            QVERIFY(f.open(QIODevice::ReadOnly));
            const auto j = nlohmann::json::parse(f.readAll().toStdString());
            QVERIFY(!j.contains("layouts"));
            QVERIFY(!j.contains("layout_pins"));
            // The results say what the evaluation did, the choice included.
            QVERIFY(j.at("results").dump().find("layout_plan") != std::string::npos);
        }
        const int row = pinnableRow();
        QVERIFY(row >= 0);
        const std::string tensor = layers()->figures()[size_t(row)].name;
        LayoutChoice c;
        c.planned = false;
        c.fixed = DramLayout::Chwn;
        c.pins[tensor] = DramLayout::Nhwc;
        doc()->setLayouts(c, QStringLiteral("test"));
        const QString path = m_dir.filePath(QStringLiteral("layouts.tilescope.json"));
        QVERIFY2(m_w->sessions()->saveSession(path), qPrintable(m_w->lastError()));
        auto s = Session::load(path);
        QVERIFY(s.ok());
        QVERIFY(s->layouts == c);
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::ReadOnly));
            const auto j = nlohmann::json::parse(f.readAll().toStdString());
            QCOMPARE(j.at("layouts"), nlohmann::json("chwn"));
            QCOMPARE(j.at("layout_pins"), nlohmann::json({{tensor, "nhwc"}}));
        }

        MainWindow b;
        b.setInteractive(false);
        QVERIFY2(b.sessions()->openSession(path), qPrintable(b.lastError()));
        QVERIFY(b.document()->layouts() == c);
        QVERIFY(b.document()->evaluation()->layouts.choice == c);
        QCOMPARE(b.document()->evaluation()->layouts.output, doc()->evaluation()->layouts.output);
        doc()->setLayouts(LayoutChoice{}, QStringLiteral("test"));
    }

    // An unknown layout name is refused with the key and the file named; the document stays.
    void badLayoutNameRefused() {
        const QString good = m_dir.filePath(QStringLiteral("good.tilescope.json"));
        QVERIFY2(m_w->sessions()->saveSession(good), qPrintable(m_w->lastError()));
        QFile f(good);
        QVERIFY(f.open(QIODevice::ReadOnly));
        auto j = nlohmann::json::parse(f.readAll().toStdString());
        f.close();
        MainWindow b;
        b.setInteractive(false);
        QVERIFY2(b.sessions()->openSession(good), qPrintable(b.lastError()));
        LayoutChoice kept;
        kept.planned = false;
        kept.fixed = DramLayout::Nhwc;
        b.document()->setLayouts(kept, QStringLiteral("test"));
        const RATree tree = b.document()->tree();
        auto refused = [&](const nlohmann::json& bad, const QString& key) {
            const QString path = m_dir.filePath(QStringLiteral("bad.tilescope.json"));
            std::ofstream(path.toStdString()) << bad.dump(2);
            QVERIFY(!b.sessions()->openSession(path));
            QVERIFY2(b.lastError().contains(path), qPrintable(b.lastError()));
            QVERIFY2(b.lastError().contains(key), qPrintable(b.lastError()));
            QVERIFY(b.document()->layouts() == kept);
            QVERIFY(b.document()->tree() == tree);
        };
        nlohmann::json bad = j;
        bad["layouts"] = "nhcw";
        refused(bad, QStringLiteral("layouts: unknown layout choice \"nhcw\""));
        bad = j;
        bad["layout_pins"] = {{"conv1", "zigzag"}};
        refused(bad, QStringLiteral("layout_pins.conv1: unknown layout \"zigzag\""));
        bad = j;
        bad["layout_pins"] = "nhwc";
        refused(bad, QStringLiteral("layout_pins: must be an object"));
    }

    // Without a run model: no layout columns, no colouring, no menus, no metrics row.
    void withoutRunModelNothingShows() {
        StGraphView* st = m_w->stGraph();
        st->setColouring(StGraphView::Colouring::DramRuns);
        QVERIFY(m_w->openHardware(QStringLiteral("edge")));
        QVERIFY(waitForLayout(*m_w));
        QVERIFY(!doc()->evaluation()->layouts.active);
        QCOMPARE(layers()->columnCount(), int(LayersModel::InLayout));
        QVERIFY(!st->colouringOffered(StGraphView::Colouring::DramRuns));
        QCOMPARE(st->colouring(), StGraphView::Colouring::Layer);
        QVERIFY(!m_w->layersPanel()->pinMenu()->menuAction()->isVisible());
        QVERIFY(!m_w->layersPanel()->layoutsMenu()->menuAction()->isVisible());
        QVERIFY(!m_w->metrics()->figureShown(QStringLiteral("DRAM layouts")));
        QVERIFY2(!summary().contains(QStringLiteral("DRAM layouts")), qPrintable(summary()));
        QVERIFY(laidOut());
        QVERIFY(!st->rectToolTip(*st->plottable()->layout(), 0)
                     .contains(QStringLiteral("DRAM layouts")));
        // And back: a run model brings them again.
        doc()->undoStack()->undo();
        QVERIFY(doc()->evaluation()->layouts.active);
        QCOMPARE(layers()->columnCount(), int(LayersModel::ColumnCount));
        QVERIFY(st->colouringOffered(StGraphView::Colouring::DramRuns));
        QVERIFY(m_w->layersPanel()->layoutsMenu()->menuAction()->isVisible());
    }

    void cleanupTestCase() { m_w.reset(); }
};

QTEST_MAIN(TstDramLayoutsUi)
#include "tst_dramlayouts_ui.moc"
