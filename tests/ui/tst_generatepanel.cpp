// The generate figures panel on a hand-made run: the phase selector lists the prefill and
// the decode points, the figures and the selected phase's delay show, and picking a phase
// says which schedule to show.
#include "widgets/generatepanel.h"

#include <QComboBox>
#include <QSignalSpy>
#include <QtTest>

using namespace tilescope;
using namespace tilescope::ui;

namespace {

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
                 QString::fromStdString(formatBytes(1024.0 * 2176)));
        QCOMPARE(panel.figureText(QStringLiteral("Phase delay")),
                 QString::fromStdString(formatTime(1e6, 1.0)));

        QSignalSpy picked(&panel, &GeneratePanel::phaseSelected);
        panel.phaseSelector()->setCurrentIndex(1);
        emit panel.phaseSelector()->activated(1);
        QCOMPARE(picked.count(), 1);
        QCOMPARE(picked.at(0).at(0).toInt(), 1);
        QCOMPARE(panel.figureText(QStringLiteral("Phase delay")),
                 QString::fromStdString(formatTime(2e5, 1.0)));

        panel.setRun(nullptr, 1.0);
        QCOMPARE(panel.phaseSelector()->count(), 0);
        QCOMPARE(panel.figureText(QStringLiteral("TTFT")), QStringLiteral("-"));
    }
};

QTEST_MAIN(TestGeneratePanel)
#include "tst_generatepanel.moc"
