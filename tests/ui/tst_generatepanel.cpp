// The generate figures panel on a hand-made run: the phase selector lists the prefill and
// the decode points, the figures and the selected phase's delay show, and picking a phase
// says which schedule to show. Then Search > Prefill and decode in the window, on the
// Llama-style decoder of tests/data: a run that fills the panel and shows a phase as the
// document, and a stopped run that keeps nothing.
#include "core/document.h"
#include "core/ratreemodel.h"
#include "testwindow.h"
#include "widgets/generatecontroller.h"
#include "widgets/generatepanel.h"
#include "widgets/sessioncontroller.h"
#include "widgets/treepanel.h"

#include <QComboBox>
#include <QDockWidget>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QtTest>
#include <functional>

using namespace tilescope;
using namespace tilescope::ui;

namespace {

const QString kDecoder = QStringLiteral(TILESCOPE_TESTDATA "/llama_decoder.onnx");

GeneratePhase phase(const char* name, std::int64_t seq, std::int64_t past, Cycles delay) {
    GeneratePhase p;
    p.name = name;
    p.seq = seq;
    p.past = past;
    p.detail.valid = true;
    p.detail.delay = delay;
    p.detail.energy.mac = 1e6;
    return p;
}

// A window on the decoder (bound at seq 1, past 255) and the testchip preset; null when
// either does not open.
std::unique_ptr<MainWindow> decoderWindow(const QTemporaryDir& dir) {
    auto w = openTestWindow(dir);
    if (!w ||
        !w->openModel(kDecoder, std::map<std::string, std::int64_t>{{"seq", 1}, {"past", 255}}) ||
        !w->openHardware(QStringLiteral("testchip")))
        return nullptr;
    return w;
}

} // namespace

class TestGeneratePanel : public QObject {
    Q_OBJECT
  private slots:
    void showsFiguresAndPhases() {
        auto run = std::make_shared<GenerateRun>();
        run->phases = {phase("prefill", 2048, 1, 1e6), phase("decode", 1, 2048, 2e5),
                       phase("decode", 1, 2174, 3e5)};
        GenerateRequest r;
        r.prompt = 2048;
        r.tokens = 128;
        std::vector<DecodePoint> decode = {{2048, run->phases[1].detail},
                                           {2174, run->phases[2].detail}};
        run->figures = generateFigures(run->phases[0].detail, decode, r, 1.0, 1024.0);
        QVERIFY(run->figures.valid);

        GeneratePanel panel;
        QCOMPARE(panel.currentPhase(), -1);
        panel.setRun(run, 1.0);
        QCOMPARE(panel.phaseSelector()->count(), 3);
        QCOMPARE(panel.phaseSelector()->itemText(0), QStringLiteral("prefill (seq 2048)"));
        QCOMPARE(panel.phaseSelector()->itemText(2), QStringLiteral("decode (past 2174)"));
        QCOMPARE(panel.figureText(QStringLiteral("TTFT")),
                 QString::fromStdString(formatTime(1e6, 1.0)));
        // Decode steps 2048 .. 2174: the line from 2e5 to 3e5, mean 2.5e5.
        QCOMPARE(panel.figureText(QStringLiteral("TPOT")),
                 QString::fromStdString(formatTime(2.5e5, 1.0)));
        QCOMPARE(panel.figureText(QStringLiteral("KV cache")),
                 QString::fromStdString(formatBytes(1024.0 * 2176)) + QStringLiteral(", in DRAM"));
        QCOMPARE(panel.figureText(QStringLiteral("Phase delay")),
                 QString::fromStdString(formatTime(1e6, 1.0)));

        QSignalSpy picked(&panel, &GeneratePanel::phaseSelected);
        panel.phaseSelector()->setCurrentIndex(1);
        emit panel.phaseSelector()->activated(1);
        QCOMPARE(picked.count(), 1);
        QCOMPARE(picked.at(0).at(0).toInt(), 1);
        QCOMPARE(panel.figureText(QStringLiteral("Phase delay")),
                 QString::fromStdString(formatTime(2e5, 1.0)));

        // Kept on chip, the panel says so.
        auto kept = std::make_shared<GenerateRun>(*run);
        r.kvOnChip = true;
        kept->figures = generateFigures(run->phases[0].detail, decode, r, 1.0, 1024.0);
        panel.setRun(kept, 1.0);
        QVERIFY(panel.figureText(QStringLiteral("KV cache"))
                    .endsWith(QStringLiteral(", kept on chip")));
        QCOMPARE(panel.figureText(QStringLiteral("Weights")),
                 QString::fromStdString(formatBytes(0)) + QStringLiteral(", loaded every step"));
        r.weightsOnChip = true;
        kept->figures = generateFigures(run->phases[0].detail, decode, r, 1.0, 1024.0);
        kept->figures.weightBytes = 4096;
        panel.setRun(kept, 1.0);
        QCOMPARE(panel.figureText(QStringLiteral("Weights")),
                 QString::fromStdString(formatBytes(4096)) + QStringLiteral(", kept on chip"));

        panel.setRun(nullptr, 1.0);
        QCOMPARE(panel.phaseSelector()->count(), 0);
        QCOMPARE(panel.figureText(QStringLiteral("TTFT")), QStringLiteral("-"));
    }

    // Prompt 8, 4 tokens: the prefill and the decode step at past 8 and 10 (P .. P + G - 2).
    void windowSchedulesADecoder() {
        QTemporaryDir dir;
        auto w = decoderWindow(dir);
        QVERIFY(w);
        GenerateController* g = w->generateController();
        QSignalSpy done(g, &GenerateController::finished);
        GenerateRequest r;
        r.prompt = 8;
        r.tokens = 4;
        r.decodePoints = 2;
        r.kvOnChip = true;      // the cache stays in the attention layers' tiles
        r.weightsOnChip = true; // and the weights in their layers' tiles
        g->start(r, 0.3);
        QVERIFY(g->busy());
        QVERIFY(done.wait(120000));
        QVERIFY(done.at(0).at(0).toBool());
        QVERIFY(g->dock()->isVisible());
        QCOMPARE(g->panel()->phaseSelector()->count(), 3);
        QCOMPARE(g->panel()->phaseSelector()->itemText(2), QStringLiteral("decode (past 10)"));
        const GenerateFigures& f = g->lastRun()->figures;
        QVERIFY(f.ttft > f.tpot);
        QCOMPARE(g->panel()->figureText(QStringLiteral("TTFT")),
                 QString::fromStdString(formatTime(f.ttft, w->document()->hardware()->clockGHz)));
        // Picking the last decode point makes it the document: its network bound to past 10,
        // its best tree.
        QVERIFY(g->showPhase(2));
        QCOMPARE(w->document()->network()->dims.at("past"), std::int64_t(10));
        QCOMPARE(w->document()->network()->dims.at("seq"), std::int64_t(1));
        int kept = 0; // the phase's network, its cache kept on chip
        for (const Layer& l : w->document()->network()->layers)
            for (const LayerInput& in : l.inputs)
                kept += in.resident;
        QCOMPARE(kept, 4);
        int weights = 0; // ... and its weights
        for (const Layer& l : w->document()->network()->layers)
            weights += l.weightsResident;
        QVERIFY(weights > 0);
        QVERIFY(g->panel()
                    ->figureText(QStringLiteral("Weights"))
                    .endsWith(QStringLiteral("kept on chip")));
        // The tree says what each leaf keeps on chip, by name and in its tooltip.
        const QAbstractItemModel* tm = w->treePanel()->model();
        QStringList keptNames;
        std::function<void(const QModelIndex&)> walk = [&](const QModelIndex& parent) {
            for (int row = 0; row < tm->rowCount(parent); ++row) {
                const QModelIndex i = tm->index(row, 0, parent);
                const QString name = i.data().toString();
                if (name.endsWith(QStringLiteral(" [W]")) ||
                    name.endsWith(QStringLiteral(" [in]"))) {
                    keptNames << name;
                    QVERIFY(i.data(Qt::ToolTipRole)
                                .toString()
                                .contains(QStringLiteral("kept on chip across runs: ")));
                }
                walk(i);
            }
        };
        walk({});
        QCOMPARE(int(keptNames.filter(QStringLiteral(" [W]")).size()), weights);
        QCOMPARE(int(keptNames.filter(QStringLiteral(" [in]")).size()), 4); // the attention leaves
        QVERIFY(g->panel()
                    ->figureText(QStringLiteral("KV cache"))
                    .endsWith(QStringLiteral("kept on chip")));
        QVERIFY(w->document()->evaluation()->valid);

        // Export programs: every phase's folder, replayed; the panel shows the selected
        // phase's replay and DRAM bytes against the schedule.
        QVERIFY(g->panel()->exportButton()->isEnabled());
        QSignalSpy exported(g, &GenerateController::programsExported);
        const QString out = dir.filePath(QStringLiteral("programs"));
        g->exportPrograms(out);
        // (Done before exportPrograms returns when the job finished first: count, not wait.)
        QTRY_VERIFY_WITH_TIMEOUT(exported.count() == 1, 60000);
        QVERIFY(exported.at(0).at(0).toBool());
        for (const char* folder : {"prefill", "decode-past8", "decode-past10"})
            QVERIFY2(QFile::exists(out + "/" + folder + "/program.bin"), folder);
        g->panel()->selectPhase(2);
        const QString program = g->panel()->figureText(QStringLiteral("Program"));
        QVERIFY2(program.contains("instructions, replay ") && program.contains(" as scheduled"),
                 qPrintable(program));
        QVERIFY(g->panel()
                    ->findChild<QLabel*>(QStringLiteral("figure Program"))
                    ->toolTip()
                    .contains(out + "/decode-past10"));

        // Saved and reopened, the phase keeps what it kept on chip: the same figures.
        const QString session = dir.filePath(QStringLiteral("decode.tilescope.json"));
        QVERIFY(w->sessions()->saveSession(session));
        auto w2 = openTestWindow(dir);
        QVERIFY(w2);
        QVERIFY2(w2->sessions()->openSession(session), qPrintable(w2->lastError()));
        QVERIFY(waitForLayout(*w2));
        const Network& reopened = *w2->document()->network();
        int keptAgain = 0, weightsAgain = 0;
        for (const Layer& l : reopened.layers) {
            weightsAgain += l.weightsResident;
            for (const LayerInput& in : l.inputs)
                keptAgain += in.resident;
        }
        QCOMPARE(keptAgain, 4);
        QCOMPARE(weightsAgain, weights);
        QCOMPARE(w2->document()->evaluation()->dramBytes, w->document()->evaluation()->dramBytes);
    }

    // "Repeat blocks": every phase ties the decoder's two blocks, and a phase shown in the
    // main views keeps its copies marked in the tree.
    void repeatedBlocksInEveryPhase() {
        QTemporaryDir dir;
        auto w = decoderWindow(dir);
        QVERIFY(w);
        GenerateController* g = w->generateController();
        QSignalSpy done(g, &GenerateController::finished);
        GenerateRequest r;
        r.prompt = 8;
        r.tokens = 4;
        r.decodePoints = 1;
        g->start(r, 0.3, true);
        QVERIFY(done.wait(120000));
        QVERIFY(done.at(0).at(0).toBool());
        for (const GeneratePhase& p : g->lastRun()->phases)
            QCOMPARE(p.search.repetition.count, 2);
        QVERIFY(g->showPhase(1));
        int tied = 0;
        for (const RANode& n : w->document()->tree().nodes)
            tied += n.tied ? 1 : 0;
        QVERIFY(tied > 0);
    }

    void stopKeepsNothing() {
        QTemporaryDir dir;
        auto w = openTestWindow(dir);
        QVERIFY(w);
        QVERIFY(
            w->openModel(kDecoder, std::map<std::string, std::int64_t>{{"seq", 1}, {"past", 255}}));
        GenerateController* g = w->generateController();
        QSignalSpy done(g, &GenerateController::finished);
        GenerateRequest r;
        r.prompt = 8;
        r.tokens = 4;
        g->start(r, 600);
        QTest::qWait(200);
        g->stop();
        QVERIFY(done.wait(60000));
        QVERIFY(!done.at(0).at(0).toBool());
        QVERIFY(!g->lastRun());
        QVERIFY(!g->dock()->isVisible());
    }

    // A model that is no decoder: the error names the reason, nothing runs.
    void notADecoder() {
        QTemporaryDir dir;
        auto w = openTestWindow(dir);
        QVERIFY(w);
        QVERIFY(w->openSample(QStringLiteral(TILESCOPE_SAMPLES "/models/resnet50.onnx"),
                              QStringLiteral("testchip"), false));
        GenerateController* g = w->generateController();
        QSignalSpy errors(g, &GenerateController::errorOccurred);
        QSignalSpy done(g, &GenerateController::finished);
        g->start(GenerateRequest{}, 0.3);
        QCOMPARE(errors.count(), 1);
        QVERIFY2(errors.at(0).at(1).toString().contains(QStringLiteral("resnet50")),
                 qPrintable(errors.at(0).at(1).toString()));
        QCOMPARE(done.count(), 1);
        QVERIFY(!g->busy());
    }
};

QTEST_MAIN(TestGeneratePanel)
#include "tst_generatepanel.moc"
