#include "widgets/generatepanel.h"

#include "core/qstrings.h"
#include "util/units.h"

#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>
#include <cmath>

namespace tilescope::ui {

namespace {

const QStringList kFigures = {
    QStringLiteral("TTFT"),         QStringLiteral("TPOT"),         QStringLiteral("Tokens/s"),
    QStringLiteral("Energy/token"), QStringLiteral("KV cache"),     QStringLiteral("Weights"),
    QStringLiteral("Phase delay"),  QStringLiteral("Phase energy"), QStringLiteral("Program")};

QString phaseLabel(const GeneratePhase& p) {
    if (p.name == "prefill")
        return p.seq > 0 ? QStringLiteral("prefill (seq %1)").arg(p.seq)
                         : QStringLiteral("prefill");
    return p.past > 0 ? QStringLiteral("decode (past %1)").arg(p.past) : QStringLiteral("decode");
}

} // namespace

GeneratePanel::GeneratePanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    m_phases = new QComboBox(this);
    m_phases->setToolTip(tr("The phase whose schedule is shown: the prefill (the prompt in one "
                            "pass) or the decode step at one KV cache length"));
    layout->addWidget(m_phases);
    m_form = new QFormLayout;
    for (const QString& key : kFigures) {
        auto* label = new QLabel(QStringLiteral("-"), this);
        label->setTextInteractionFlags(Qt::TextSelectableByMouse);
        label->setObjectName(QStringLiteral("figure ") + key);
        m_figures[key] = label;
        m_form->addRow(key, label);
    }
    m_figures[QStringLiteral("TPOT")]->setToolTip(
        tr("Time per output token: the mean decode step over the generated tokens, a straight "
           "line between the scheduled KV cache lengths"));
    m_figures[QStringLiteral("Tokens/s")]->setToolTip(
        tr("Batch x tokens over TTFT + (tokens - 1) x TPOT, at the template's clock"));
    m_figures[QStringLiteral("Program")]->setToolTip(
        tr("The selected phase's program as exported: its replay on the instruction-level "
           "simulator against the estimate, and its DRAM bytes against the schedule's"));
    layout->addLayout(m_form);
    m_export = new QPushButton(tr("Export programs..."), this);
    m_export->setToolTip(tr("Write every phase's schedule as a program folder for the test "
                            "chip (prefill, decode-pastN) and replay each"));
    connect(m_export, &QPushButton::clicked, this, &GeneratePanel::exportRequested);
    layout->addWidget(m_export);
    layout->addStretch(1);
    connect(m_phases, &QComboBox::activated, this, [this](int index) {
        refreshPhase();
        emit phaseSelected(index);
    });
    setRun(nullptr, 1);
}

void GeneratePanel::setRun(std::shared_ptr<const GenerateRun> run, double clockGHz) {
    m_run = std::move(run);
    m_programs.clear();
    m_export->setEnabled(bool(m_run));
    m_clockGHz = clockGHz > 0 ? clockGHz : 1;
    m_phases->clear();
    for (QLabel* l : m_figures)
        l->setText(QStringLiteral("-"));
    if (!m_run) return;
    for (const GeneratePhase& p : m_run->phases)
        m_phases->addItem(phaseLabel(p));
    const GenerateFigures& f = m_run->figures;
    if (f.valid) {
        figure(QStringLiteral("TTFT"))->setText(qs(formatTime(f.ttft, m_clockGHz)));
        figure(QStringLiteral("TPOT"))->setText(qs(formatTime(f.tpot, m_clockGHz)));
        figure(QStringLiteral("Tokens/s"))->setText(QString::number(f.tokensPerSecond, 'g', 5));
        figure(QStringLiteral("Energy/token"))->setText(qs(formatEnergy(f.energyPerToken)));
    } else {
        figure(QStringLiteral("TTFT"))->setText(tr("invalid: %1").arg(qs(f.reason)));
    }
    if (f.kvCacheBytes)
        figure(QStringLiteral("KV cache"))
            ->setText(qs(formatBytes(*f.kvCacheBytes)) +
                      (f.kvOnChip ? tr(", kept on chip") : tr(", in DRAM")));
    figure(QStringLiteral("Weights"))
        ->setText(qs(formatBytes(f.weightBytes)) +
                  (f.weightsOnChip ? tr(", kept on chip") : tr(", loaded every step")));
    refreshPhase();
}

int GeneratePanel::currentPhase() const {
    return m_run ? m_phases->currentIndex() : -1;
}

void GeneratePanel::selectPhase(int index) {
    if (!m_run || index < 0 || index >= m_phases->count()) return;
    m_phases->setCurrentIndex(index);
    refreshPhase();
}

QString GeneratePanel::figureText(const QString& key) const {
    const QLabel* l = m_figures.value(key);
    return l ? l->text() : QString();
}

QLabel* GeneratePanel::figure(const QString& key) const {
    return m_figures.value(key);
}

void GeneratePanel::setPrograms(std::vector<PhaseProgram> programs) {
    m_programs = std::move(programs);
    refreshPhase();
}

void GeneratePanel::refreshPhase() {
    const int i = currentPhase();
    if (i < 0 || i >= int(m_run->phases.size())) return;
    QLabel* program = figure(QStringLiteral("Program"));
    program->setText(QStringLiteral("-"));
    program->setToolTip(QString());
    if (size_t(i) < m_programs.size()) {
        const PhaseProgram& pp = m_programs[size_t(i)];
        if (!pp.error.empty()) {
            program->setText(tr("failed (hover for why)"));
            program->setToolTip(qs(pp.error));
        } else if (pp.check) {
            const ProgramCheck& c = *pp.check;
            // Two short lines for a narrow dock; the folder in the tooltip.
            program->setText(
                tr("%1 instructions, replay %2x%3\nDRAM %4%5")
                    .arg(c.instructions)
                    .arg(c.agreement.ratio, 0, 'f', 3)
                    .arg(c.agreement.agrees ? QString() : tr(" (outside 15%)"))
                    .arg(qs(formatBytes(c.programDramBytes)))
                    .arg(c.programDramBytes == c.scheduleDramBytes
                             ? tr(" as scheduled")
                             : tr(", schedule %1").arg(qs(formatBytes(c.scheduleDramBytes)))));
            program->setToolTip(tr("Written to %1 and replayed on the instruction-level "
                                   "simulator: the replay's delay over the estimate, the "
                                   "program's DRAM bytes against the schedule's")
                                    .arg(qs(pp.folder)));
        }
    }
    const Evaluation& e = m_run->phases[size_t(i)].detail;
    if (!e.valid) {
        figure(QStringLiteral("Phase delay"))->setText(tr("invalid: %1").arg(qs(e.reason)));
        figure(QStringLiteral("Phase energy"))->setText(QStringLiteral("-"));
        return;
    }
    figure(QStringLiteral("Phase delay"))->setText(qs(formatTime(e.delay, m_clockGHz)));
    figure(QStringLiteral("Phase energy"))->setText(qs(formatEnergy(e.energy.total())));
}

} // namespace tilescope::ui
