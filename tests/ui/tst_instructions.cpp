// The Instructions panel and "Export for test chip": the program model under
// QAbstractItemModelTester, the panel's program for a small schedule (deadlock-free, DRAM
// bytes equal to the document's own evaluation), regeneration only when the tree changes,
// selection linking both ways, and the export folder (written whole, or not at all).
#include "codegen/instruction_program.h"
#include "core/bytestext.h"
#include "core/document.h"
#include "core/programmodel.h"
#include "core/programrun.h"
#include "core/programrunner.h"
#include "core/selectionstate.h"
#include "expectok.h"
#include "util/fileio.h"
#include "widgets/exportcontroller.h"
#include "widgets/instructionspanel.h"
#include "widgets/mainwindow.h"
#include "widgets/metricspanel.h"
#include "widgets/programformatsdialog.h"

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <qcustomplot.h>

using namespace tilescope;
using namespace tilescope::ui;

class TstInstructions : public QObject {
    Q_OBJECT
  private:
    QTemporaryDir m_dir;

    // resnet50 on the 2x2 test chip, batch 2: small enough for a program in seconds.
    static void openSmall(MainWindow& w) {
        w.setInteractive(false);
        QVERIFY(w.openHardware(QStringLiteral("testchip")));
        QVERIFY(w.setBatch(2));
        QVERIFY2(w.openModel(TILESCOPE_SAMPLES "/models/resnet50.onnx"), qPrintable(w.lastError()));
    }
    static std::shared_ptr<const ProgramRun> waitRun(MainWindow& w) {
        ProgramRunner* r = w.programRunner();
        if (!r->current()) {
            QSignalSpy ready(r, &ProgramRunner::runReady);
            [&] { QTRY_VERIFY_WITH_TIMEOUT(r->current() != nullptr, 120000); }();
        }
        return r->current();
    }

  private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        qputenv("TILESCOPE_RECOVERY_DIR", m_dir.filePath(QStringLiteral("recovery")).toUtf8());
    }

    void modelUnderTester() {
        MainWindow w;
        openSmall(w);
        auto run = waitRun(w);
        QVERIFY(run && run->ok());
        ProgramModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setRun(run);
        const Program& p = run->codegen->program;
        QCOMPARE(size_t(model.rowCount()), p.instructionCount());
        QCOMPARE(model.columnCount(), int(ProgramModel::ColumnCount));
        // All tiles: in id order; one tile: that tile's stream in issue order.
        for (int r = 1; r < model.rowCount(); ++r)
            QVERIFY(model.instructionAt(r - 1)->id < model.instructionAt(r)->id);
        model.setTile(1);
        QCOMPARE(size_t(model.rowCount()), p.tiles[1].instructions.size());
        QCOMPARE(model.instructionAt(0)->id, p.tiles[1].instructions[0].id);
        // Simulated start / end come from the replay of the same instruction.
        const Instruction* first = model.instructionAt(0);
        for (const SimInterval& iv : run->fine.timeline)
            if (iv.id == first->id) {
                QCOMPARE(
                    model.data(model.index(0, ProgramModel::SimStart), Qt::EditRole).toDouble(),
                    iv.start);
                QCOMPARE(model.data(model.index(0, ProgramModel::SimEnd), Qt::EditRole).toDouble(),
                         iv.end);
            }
        QCOMPARE(model.data(model.index(0, ProgramModel::Tile)).toInt(), 1);
        // Filtering to one layer keeps exactly that layer's instructions of the tile.
        const int layer = first->layer;
        model.setLayers({layer});
        model.setFilterToLayers(true);
        size_t expect = 0;
        for (const Instruction& ins : p.tiles[1].instructions)
            expect += ins.layer == layer;
        QCOMPARE(size_t(model.rowCount()), expect);
        for (int r = 0; r < model.rowCount(); ++r)
            QCOMPARE(model.data(model.index(r, 0), ProgramModel::LayerRole).toInt(), layer);
        model.setTile(ProgramModel::kAllTiles);
        model.setFilterToLayers(false);
        model.setLayers({});
        model.setRun(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    // A compute-in-memory template whose cores run their own streams: the engine column
    // names the core of each PROGRAM and COMPUTE that has one.
    void coresNamedOnCimTiles() {
        MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.openHardware(QStringLiteral(TILESCOPE_SAMPLES "/hw/cim-logical-4x4.json")));
        QVERIFY(w.setBatch(1));
        QVERIFY2(w.openModel(TILESCOPE_SAMPLES "/models/mobilenet_v2.onnx"),
                 qPrintable(w.lastError()));
        auto run = waitRun(w);
        QVERIFY(run && run->ok());
        ProgramModel model;
        model.setRun(run);
        int cores = 0;
        for (int r = 0; r < model.rowCount(); ++r) {
            const Instruction* ins = model.instructionAt(r);
            const QString engine = model.data(model.index(r, ProgramModel::EngineCol)).toString();
            if (ins->core < 0) {
                QVERIFY(!engine.contains(QStringLiteral("core")));
                continue;
            }
            QCOMPARE(engine, QStringLiteral("compute (core %1)").arg(ins->core));
            ++cores;
        }
        QVERIFY(cores > 0);
    }

    void panelSummaryAndRegeneration() {
        MainWindow w;
        openSmall(w);
        auto run = waitRun(w);
        QVERIFY2(run->ok(), qPrintable(run->error));
        QVERIFY(run->fine.deadlockFree);
        // The program moves exactly the schedule's DRAM bytes: checked against the
        // document's own evaluation, computed apart from the generator.
        QCOMPARE(double(run->codegen->programDramBytes), w.document()->evaluation()->dramBytes);
        QCOMPARE(run->fine.completed, run->fine.total);
        const QString summary = w.instructionsPanel()->summaryText();
        QVERIFY2(summary.contains(QStringLiteral("deadlock-free")), qPrintable(summary));
        QVERIFY2(summary.contains(QStringLiteral("(+0.000%)")), qPrintable(summary));
        QVERIFY2(summary.contains(
                     QLocale().toString(qulonglong(run->codegen->program.instructionCount())) +
                     QStringLiteral(" instructions")),
                 qPrintable(summary));
        QCOMPARE(w.instructionsPanel()->tileSelector()->count(),
                 1 + w.document()->hardware()->tiles());
        // The DRAM chart: the replay's bandwidth in use, step by step, never above the
        // template's, moving exactly the program's DRAM bytes; then the template's line.
        QCustomPlot* dram = w.instructionsPanel()->dramPlot();
        QVERIFY(w.instructionsPanel()->hasDramChart());
        const auto& use = run->fine.dramInUse;
        QCOMPARE(dram->graph(0)->dataCount(), int(use.size()));
        const double bw = w.document()->hardware()->dramBytesPerCycle;
        double bytes = 0;
        for (int i = 0; i + 1 < dram->graph(0)->dataCount(); ++i) {
            const auto d = dram->graph(0)->data()->at(i);
            QVERIFY(d->value >= 0 && d->value <= bw * (1 + 1e-9));
            bytes += d->value * (dram->graph(0)->data()->at(i + 1)->key - d->key);
        }
        QVERIFY2(std::abs(bytes - double(run->codegen->programDramBytes)) <=
                     1e-6 * double(run->codegen->programDramBytes),
                 qPrintable(QString::number(bytes)));
        QCOMPARE(dram->graph(1)->data()->at(0)->value, bw);
        QCOMPARE(dram->xAxis->range().upper, run->fine.delay);

        // Nothing changes the tree: nothing is regenerated.
        ProgramRunner* runner = w.programRunner();
        const int jobs = runner->jobsStarted();
        QTest::qWait(800);
        QCOMPARE(runner->jobsStarted(), jobs);
        // A burst of edits (edit, undo, redo) inside the debounce costs one regeneration.
        Document* doc = w.document();
        QVERIFY_OK(doc->wrap(doc->tree().root, 0, 2, NodeType::T));
        doc->undoStack()->undo();
        doc->undoStack()->redo();
        QTRY_VERIFY_WITH_TIMEOUT(runner->current() != nullptr, 120000);
        QCOMPARE(runner->jobsStarted(), jobs + 1);
        QCOMPARE(runner->current()->revision, doc->revision());
    }

    // The DRAM chart shows only where the listing keeps its header and rows beside it: in a
    // tall floating dock it is there, in a short one it gives way (also when a new program
    // arrives there), and back.
    void dramChartGivesWayInAShortPanel() {
        MainWindow w;
        openSmall(w);
        QVERIFY(waitRun(w)->ok());
        auto* dock = w.findChild<QDockWidget*>(QStringLiteral("instructionsDock"));
        QVERIFY(dock);
        dock->setFloating(true);
        dock->resize(1200, 1000);
        dock->show();
        QVERIFY(QTest::qWaitForWindowExposed(dock));
        QCustomPlot* dram = w.instructionsPanel()->dramPlot();
        QTRY_VERIFY(dram->isVisible());
        dock->resize(1200, 300);
        QTRY_VERIFY(!dram->isVisible());
        QTableView* listing = w.instructionsPanel()->view();
        QVERIFY(listing->horizontalHeader()->isVisible());
        // A new program (after an edit) in the short panel: the chart stays out of the way.
        ProgramRunner* runner = w.programRunner();
        const int jobs = runner->jobsStarted();
        Document* doc = w.document();
        QVERIFY_OK(doc->wrap(doc->tree().root, 0, 2, NodeType::T));
        QTRY_VERIFY_WITH_TIMEOUT(runner->jobsStarted() > jobs && runner->current() &&
                                     runner->current()->revision == doc->revision(),
                                 120000);
        QTest::qWait(50);
        QVERIFY(!dram->isVisible());
        dock->resize(1200, 1000);
        QTRY_VERIFY(dram->isVisible());
    }

    // When the replay and the estimate disagree by more than 15%, both panels say so with
    // both figures; when they agree, neither warns (sim/fidelity.h holds the rule).
    void disagreementIsShown() {
        MainWindow w;
        openSmall(w);
        auto run = waitRun(w);
        QVERIFY2(run->ok(), qPrintable(run->error));
        ProgramRun agree = *run;
        agree.fine.delay = agree.evaluatorDelay * 1.10;
        ProgramRun off = *run;
        off.fine.delay = off.evaluatorDelay * 1.30;
        QVERIFY(!InstructionsPanel::summarize(agree).contains(QStringLiteral("WARNING")));
        const QString warn = InstructionsPanel::summarize(off);
        QVERIFY2(warn.contains(QStringLiteral("WARNING")) &&
                     warn.contains(QStringLiteral("ratio 1.300")),
                 qPrintable(warn));
        const QString m1 = MetricsPanel::simulatedFigure(agree),
                      m2 = MetricsPanel::simulatedFigure(off);
        QVERIFY2(m1.contains(QStringLiteral("1.100x")) && !m1.contains(QStringLiteral("apart")),
                 qPrintable(m1));
        QVERIFY2(m2.contains(QStringLiteral("1.300x")) &&
                     m2.contains(QStringLiteral("more than 15% apart")) &&
                     m2.contains(cyclesText(off.evaluatorDelay)), // the units policy
                 qPrintable(m2));
        // The live panel shows the current run's figure.
        QTRY_COMPARE_WITH_TIMEOUT(w.metrics()->figureText(QStringLiteral("Simulated")),
                                  MetricsPanel::simulatedFigure(*run), 20000);
    }

    void selectionLinksBothWays() {
        MainWindow w;
        openSmall(w);
        auto run = waitRun(w);
        QVERIFY(run->ok());
        InstructionsPanel* panel = w.instructionsPanel();
        ProgramModel* model = panel->model();
        const RATree& tree = w.document()->tree();
        SelectionState* sel = w.selection();

        // Tree -> instructions: a leaf highlights exactly its layer's rows.
        const int layer = tree.node(tree.leafOf(3)).layer;
        const int leaf = tree.leafOf(layer);
        sel->select(leaf, QString::fromStdString(tree.pathOf(leaf)));
        int highlighted = 0;
        for (int r = 0; r < model->rowCount(); ++r) {
            const bool mine =
                model->data(model->index(r, 0), ProgramModel::LayerRole).toInt() == layer;
            QCOMPARE(model->isHighlighted(r), mine);
            highlighted += mine;
        }
        QVERIFY(highlighted > 0);
        // A cut: every layer under it.
        sel->select(tree.root, QString::fromStdString(tree.pathOf(tree.root)));
        for (int r = 0; r < model->rowCount(); r += 97)
            QVERIFY(model->isHighlighted(r));
        panel->filterBox()->setChecked(true);
        QCOMPARE(size_t(model->rowCount()), run->codegen->program.instructionCount());
        sel->select(leaf, QString::fromStdString(tree.pathOf(leaf)));
        QCOMPARE(model->rowCount(), highlighted);
        panel->filterBox()->setChecked(false);

        // Instructions -> tree: clicking a row selects the leaf of its layer.
        sel->clear();
        int row = -1;
        for (int r = 0; r < model->rowCount() && row < 0; ++r)
            if (model->instructionAt(r)->layer != layer) row = r;
        QVERIFY(row >= 0);
        const int other = model->instructionAt(row)->layer;
        QSignalSpy spy(sel, &SelectionState::changed);
        panel->view()->setCurrentIndex(model->index(row, 0));
        QCOMPARE(spy.count(), 1);
        QCOMPARE(sel->node(), tree.leafOf(other));
        QCOMPARE(sel->path(), QString::fromStdString(tree.pathOf(tree.leafOf(other))));
        // ... and the selection echoes back as the highlight of that layer.
        QVERIFY(model->isHighlighted(row));
    }

    void exportForTestChip() {
        MainWindow w;
        openSmall(w);
        auto run = waitRun(w);
        const QString out = m_dir.filePath(QStringLiteral("chip"));
        QSignalSpy done(w.exports(), &ExportController::testChipExported);
        w.exports()->exportForTestChip(out);
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 120000);
        QVERIFY2(done.at(0).at(0).toBool(), qPrintable(done.at(0).at(1).toString()));
        // The default formats: program.bin (and hw.json) only.
        QCOMPARE(QDir(out).entryList(QDir::Files, QDir::Name),
                 QStringList({QStringLiteral("hw.json"), QStringLiteral("program.bin")}));
        auto bin = readFile((out + QStringLiteral("/program.bin")).toStdString());
        QVERIFY(bin);
        auto prog = decodeProgram(*bin, "program.bin");
        QVERIFY(prog);
        // The same tree gives the same program as the panel's.
        QCOMPARE(prog->instructionCount(), run->codegen->program.instructionCount());
        QVERIFY(done.at(0).at(1).toString().contains(
            QLocale().toString(qulonglong(prog->instructionCount()))));

        // Every format when chosen (the folder is replaced as a whole).
        ProgramFormats all;
        all.txt = all.json = all.ir = true;
        w.exports()->exportForTestChip(out, all);
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 2, 120000);
        QVERIFY2(done.at(1).at(0).toBool(), qPrintable(done.at(1).at(1).toString()));
        for (const char* f : {"program.json", "program.bin", "program.txt", "ir.json", "hw.json"})
            QVERIFY2(QFile::exists(out + QLatin1Char('/') + QLatin1String(f)), f);
        done.clear();

        // A folder that cannot be made (its parent is a file): one-line error, nothing written.
        const QString blocker = m_dir.filePath(QStringLiteral("afile"));
        {
            QFile f(blocker);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("not a folder");
        }
        const QStringList before =
            QDir(m_dir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden);
        w.exports()->exportForTestChip(blocker + QStringLiteral("/chip"));
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 120000);
        QVERIFY(!done.at(0).at(0).toBool());
        const QString err = done.at(0).at(1).toString();
        QVERIFY(!err.isEmpty());
        QVERIFY2(!err.contains(QLatin1Char('\n')), qPrintable(err));
        QCOMPARE(w.lastError(), err);
        QCOMPARE(
            QDir(m_dir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden),
            before);
        QVERIFY(QFileInfo(blocker).isFile());
        QCOMPARE(QFileInfo(blocker).size(), qint64(12));
    }

    // The formats asked for with "Export for test chip...": program.bin alone by default,
    // each box sets its format, OK needs at least one and a folder.
    void formatsDialog() {
        ProgramFormatsDialog d({}, nullptr, m_dir.filePath(QStringLiteral("chip")));
        QCOMPARE(d.formats(), ProgramFormats{});
        QVERIFY(d.checkBox(QStringLiteral("bin"))->isChecked());
        for (const char* f : {"txt", "json", "ir"})
            QVERIFY(!d.checkBox(QLatin1String(f))->isChecked());
        QVERIFY(d.okButton()->isEnabled());
        d.checkBox(QStringLiteral("bin"))->setChecked(false);
        QVERIFY(!d.okButton()->isEnabled());
        QVERIFY(!d.formats().any());
        d.checkBox(QStringLiteral("ir"))->setChecked(true);
        d.checkBox(QStringLiteral("txt"))->setChecked(true);
        QVERIFY(d.okButton()->isEnabled());
        ProgramFormats expect;
        expect.bin = false;
        expect.txt = expect.ir = true;
        QCOMPARE(d.formats(), expect);
        // The previous choice comes back.
        ProgramFormatsDialog again(expect);
        QCOMPARE(again.formats(), expect);
        QVERIFY(!again.okButton()->isEnabled()); // no folder yet
        again.folderEdit()->setText(QStringLiteral("new-folder"));
        QVERIFY(again.okButton()->isEnabled());
        QCOMPARE(again.folder(), QDir::current().absoluteFilePath(QStringLiteral("new-folder")));
    }
};

QTEST_MAIN(TstInstructions)
#include "tst_instructions.moc"
