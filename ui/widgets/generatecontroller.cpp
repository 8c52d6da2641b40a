#include "widgets/generatecontroller.h"

#include "core/crossthread.h"
#include "core/document.h"
#include "core/qstrings.h"
#include "widgets/generatepanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QLabel>
#include <QSpinBox>
#include <QThread>
#include <algorithm>

namespace tilescope::ui {

namespace {

// The request a user fills in: prompt and generated tokens, batch, decode points, time.
class GenerateDialog : public QDialog {
  public:
    GenerateDialog(const QString& axes, int batch, QWidget* parent) : QDialog(parent) {
        setWindowTitle(tr("Prefill and decode"));
        auto* form = new QFormLayout(this);
        auto* about = new QLabel(axes, this);
        about->setWordWrap(true);
        form->addRow(about);
        auto spin = [this](int lo, int hi, int value, const QString& tip) {
            auto* s = new QSpinBox(this);
            s->setRange(lo, hi);
            s->setValue(value);
            s->setToolTip(tip);
            return s;
        };
        m_prompt = spin(1, 1 << 20, 128, tr("Tokens of the prompt: the prefill's sequence"));
        m_tokens = spin(2, 1 << 20, 32,
                        tr("Tokens generated: the prefill gives the first, the decode step "
                           "each of the others"));
        m_batch = spin(1, 4096, batch, tr("Sequences generated together in every phase"));
        m_points = spin(1, 16, 4,
                        tr("KV cache lengths the decode step is scheduled at, spread from the "
                           "prompt to the last token; the steps between take the straight "
                           "line between them"));
        m_seconds = new QDoubleSpinBox(this);
        m_seconds->setRange(0.2, 3600);
        m_seconds->setValue(2);
        m_seconds->setSuffix(tr(" s"));
        m_seconds->setToolTip(tr("Search time for each phase (the prefill and each decode "
                                 "point)"));
        form->addRow(tr("Prompt tokens"), m_prompt);
        form->addRow(tr("Generated tokens"), m_tokens);
        form->addRow(tr("Batch"), m_batch);
        form->addRow(tr("Decode points"), m_points);
        form->addRow(tr("Search per phase"), m_seconds);
        // Where something lives between decode steps: DRAM (index 0) or on chip (1).
        auto place = [&](const char* name, const QString& label, const QString& tip) {
            auto* c = new QComboBox(this);
            c->addItem(tr("DRAM"));
            c->addItem(tr("On chip"));
            c->setObjectName(QString::fromLatin1(name));
            c->setToolTip(tip);
            form->addRow(label, c);
            return c;
        };
        m_kvCache = place("kvCache", tr("KV cache"),
                          tr("Where the KV cache lives between decode steps: read from DRAM at "
                             "every step, or kept in the attention layers' tiles (a schedule is "
                             "valid only where it fits beside the rest)"));
        m_weights = place("weights", tr("Weights"),
                          tr("Where the weights live between decode steps: loaded from DRAM at "
                             "every step, or kept in their layers' tiles (a schedule is valid "
                             "only where they all fit beside the rest)"));
        m_repeat = new QCheckBox(tr("Schedule every block as the first"), this);
        m_repeat->setObjectName(QStringLiteral("repeatBlocks"));
        m_repeat->setToolTip(tr("Where the decoder's blocks are copies of one block, every "
                                "phase schedules each copy as the first block and searches that "
                                "block only (docs/search.md, \"Repeated blocks\")"));
        form->addRow(tr("Repeat blocks"), m_repeat);
        auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
        connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
        connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
        form->addRow(buttons);
    }
    GenerateRequest request() const {
        GenerateRequest r;
        r.prompt = m_prompt->value();
        r.tokens = m_tokens->value();
        r.batch = m_batch->value();
        r.decodePoints = m_points->value();
        r.kvOnChip = m_kvCache->currentIndex() == 1;
        r.weightsOnChip = m_weights->currentIndex() == 1;
        return r;
    }
    double seconds() const { return m_seconds->value(); }
    bool repeatBlocks() const { return m_repeat->isChecked(); }

  private:
    QSpinBox *m_prompt, *m_tokens, *m_batch, *m_points;
    QDoubleSpinBox* m_seconds;
    QComboBox *m_kvCache, *m_weights;
    QCheckBox* m_repeat;
};

} // namespace

GenerateController::GenerateController(Document* doc, QWidget* window)
    : QObject(window), m_doc(doc), m_window(window),
      m_dock(new QDockWidget(tr("Prefill and decode"), window)), m_panel(new GeneratePanel(m_dock)),
      m_job(this, BackgroundJob::Policy::OneAtATime), m_receiver(new CallReceiver(this)),
      m_exportJob(this, BackgroundJob::Policy::OneAtATime) {
    m_dock->setObjectName(QStringLiteral("generateDock"));
    m_dock->setWidget(m_panel);
    connect(m_panel, &GeneratePanel::phaseSelected, this, &GenerateController::showPhase);
    connect(m_panel, &GeneratePanel::exportRequested, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(
            m_window, tr("Export the phases' programs into"), QString());
        if (!dir.isEmpty()) exportPrograms(dir);
    });
}

GenerateController::~GenerateController() {
    stop();
}

bool GenerateController::busy() const {
    return m_job.busy();
}

void GenerateController::stop() {
    if (m_stop) m_stop->request_stop();
}

void GenerateController::openDialog() {
    if (!m_doc->hasModel()) {
        emit errorOccurred(tr("Prefill and decode"), tr("Open a decoder model first"));
        return;
    }
    if (busy()) {
        emit statusMessage(tr("Prefill and decode: a run is under way"), 5000);
        return;
    }
    auto axes = findDecoderAxes(m_doc->modelPath().toStdString());
    if (!axes) {
        emit errorOccurred(tr("Prefill and decode"), qs(axes.error().message));
        return;
    }
    GenerateDialog dialog(tr("Sequence axis '%1', KV cache (past) axis '%2' of %3.")
                              .arg(qs(axes->seq), qs(axes->past), m_doc->modelPath()),
                          m_doc->batch(), m_window);
    if (dialog.exec() != QDialog::Accepted) return;
    run(*axes, dialog.request(), dialog.seconds(), dialog.repeatBlocks());
}

void GenerateController::start(const GenerateRequest& request, double secondsPerPhase,
                               bool repeatBlocks) {
    if (!m_doc->hasModel() || busy()) return;
    auto axes = findDecoderAxes(m_doc->modelPath().toStdString());
    if (!axes) {
        emit errorOccurred(tr("Prefill and decode"), qs(axes.error().message));
        emit finished(false);
        return;
    }
    run(*axes, request, secondsPerPhase, repeatBlocks);
}

void GenerateController::run(const DecoderAxes& axes, const GenerateRequest& request,
                             double secondsPerPhase, bool repeatBlocks) {
    GenerateSources src;
    src.model = m_doc->modelPath().toStdString();
    src.axes = axes;
    // The model's other free dimensions keep the values the document was opened with.
    for (const auto& [name, value] : m_doc->network()->dims)
        if (name != axes.seq && name != axes.past) src.import.dims[name] = value;
    SearchConfig cfg;
    cfg.objective = m_doc->objective();
    cfg.layouts = m_doc->layouts();
    cfg.seconds = secondsPerPhase;
    cfg.repeatBlocks = repeatBlocks;
    cfg.chains = std::max(1, QThread::idealThreadCount());
    cfg.threads = cfg.chains;
    m_hw = m_doc->hardware();
    m_hwSource = m_doc->hardwareSource();
    m_modelSha = m_doc->modelSha256();
    m_objective = m_doc->objective();
    m_batch = request.batch;
    m_config = cfg;
    m_stop = std::make_shared<std::stop_source>();
    auto stopSource = m_stop;
    QPointer<CallReceiver> receiver = m_receiver;
    auto post = [receiver](std::function<void()> fn) {
        if (receiver) postCall(receiver, std::move(fn));
    };
    emit statusMessage(tr("Prefill and decode: importing the phases"), 0);
    m_job.run(
        m_doc->revision(),
        [src, hw = m_hw, cfg, request, stopSource, post, this]() {
            GenerateHooks hooks;
            hooks.beforePhase = [&](const std::string& phase, std::size_t index,
                                    std::size_t count) -> std::optional<std::stop_token> {
                if (stopSource->stop_requested()) return std::nullopt;
                post([this, phase = qs(phase), index, count] {
                    emit statusMessage(tr("Prefill and decode: searching %1 (phase %2 of %3)")
                                           .arg(phase)
                                           .arg(index + 1)
                                           .arg(count),
                                       0);
                });
                return stopSource->get_token();
            };
            return std::make_shared<Result<GenerateRun>>(
                runGenerate(src, *hw, cfg, request, hooks));
        },
        [this](std::shared_ptr<Result<GenerateRun>> r, quint64) {
            m_stop.reset();
            if (!*r) {
                emit statusMessage(QString(), 0);
                emit errorOccurred(tr("Prefill and decode"), qs(r->error().message));
                emit finished(false);
                return;
            }
            if ((*r)->stopped) {
                emit statusMessage(tr("Prefill and decode stopped; nothing kept"), 5000);
                emit finished(false);
                return;
            }
            m_run = std::make_shared<const GenerateRun>(std::move(**r));
            m_panel->setRun(m_run, m_hw->clockGHz);
            m_dock->show();
            m_dock->raise();
            const GenerateFigures& f = m_run->figures;
            emit statusMessage(f.valid ? tr("Prefill and decode done: pick a phase in its panel "
                                            "to show its schedule")
                                       : tr("Prefill and decode: %1").arg(qs(f.reason)),
                               10000);
            emit finished(f.valid);
        });
}

bool GenerateController::showPhase(int index) {
    if (!m_run || index < 0 || size_t(index) >= m_run->phases.size()) return false;
    if (m_confirm && !m_confirm()) return false;
    const GeneratePhase& p = m_run->phases[size_t(index)];
    const RATree& tree = p.search.bestTree.empty() ? p.search.initialTree : p.search.bestTree;
    if (auto e = m_doc->restore(p.net, qs(p.modelPath), m_modelSha, *m_hw, m_hwSource, m_batch,
                                m_objective, tree)) {
        emit errorOccurred(tr("Prefill and decode"), qs(e->message));
        return false;
    }
    emit statusMessage(tr("Showing the %1 phase's schedule").arg(qs(p.name)), 5000);
    return true;
}

void GenerateController::exportPrograms(const QString& dir) {
    if (!m_run) {
        emit programsExported(false);
        return;
    }
    emit statusMessage(tr("Prefill and decode: writing and replaying the programs"), 0);
    m_exportJob.run(
        0,
        [run = m_run, hw = m_hw, cfg = m_config, batch = m_batch, dir = dir.toStdString()] {
            return std::make_shared<std::vector<PhaseProgram>>(
                exportPhases(*run, *hw, cfg, batch, dir));
        },
        [this, dir](std::shared_ptr<std::vector<PhaseProgram>> programs, quint64) {
            int written = 0, agree = 0;
            QString failure;
            for (const PhaseProgram& p : *programs) {
                if (!p.error.empty() && failure.isEmpty()) failure = qs(p.error);
                if (!p.check) continue;
                ++written;
                agree += p.check->agreement.agrees;
            }
            m_panel->setPrograms(*programs);
            emit statusMessage(tr("Programs of %1 phases written to %2; %3 replay within 15% of "
                                  "the estimate")
                                   .arg(written)
                                   .arg(dir)
                                   .arg(agree),
                               10000);
            if (!failure.isEmpty()) emit errorOccurred(tr("Export programs"), failure);
            emit programsExported(failure.isEmpty());
        });
}

} // namespace tilescope::ui
