#include "widgets/searchpanel.h"

#include "core/bytestext.h"
#include "widgets/axisfit.h"
#include "widgets/unitticker.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QToolTip>
#include <QVBoxLayout>
#include <qcustomplot.h>

namespace tilescope::ui {

namespace {
QDoubleSpinBox* dspin(QWidget* parent, double lo, double hi, double v, int decimals, double step) {
    auto* s = new QDoubleSpinBox(parent);
    s->setRange(lo, hi);
    s->setDecimals(decimals);
    s->setSingleStep(step);
    s->setValue(v);
    return s;
}
QString duration(double s) {
    if (s < 0) return QStringLiteral("?");
    if (s < 60) return QStringLiteral("%1 s").arg(s, 0, 'f', 1);
    return QStringLiteral("%1 min %2 s").arg(int(s) / 60).arg(int(s) % 60);
}
} // namespace

SearchPanel::SearchPanel(QWidget* parent) : QWidget(parent), m_plot(new QCustomPlot(this)) {
    setObjectName(QStringLiteral("searchPanel"));
    auto* lay = new QHBoxLayout(this);
    lay->setContentsMargins(4, 4, 4, 4);

    auto* left = new QVBoxLayout;
    auto* grid = new QGridLayout;
    m_seed = new QSpinBox(this);
    m_seed->setRange(0, std::numeric_limits<int>::max());
    m_seed->setValue(1);
    m_beta = dspin(this, 0.1, 100000, 100, 1, 10);
    // 0 switches the time budget off: then beta (an iteration count) is the budget.
    m_seconds = dspin(this, 0, maxSearchSeconds(), defaultSearchSeconds(), 1, 1);
    m_seconds->setObjectName(QStringLiteral("secondsBox"));
    m_seconds->setSpecialValueText(tr("off (beta)"));
    m_seconds->setSuffix(tr(" s"));
    m_t0 = dspin(this, 0, 10, 0.07, 3, 0.01);
    m_alpha = dspin(this, -0.99, 1000, 8, 2, 1);
    m_n = dspin(this, 0, 10, 1, 2, 0.5);
    m_m = dspin(this, 0, 10, 1, 2, 0.5);
    m_mode = new QComboBox(this);
    m_mode->addItem(tr("SA (full space)"), int(SearchMode::Set));
    m_mode->addItem(tr("LS (T segments)"), int(SearchMode::LS));
    m_mode->addItem(tr("LP (S segments)"), int(SearchMode::LP));
    m_mode->addItem(tr("DP-LP (DP pipeline)"), int(SearchMode::DpLp));
    m_mode->addItem(tr("Chiplet (pipeline regions)"), int(SearchMode::Chiplet));
    m_mode->addItem(tr("Random"), int(SearchMode::Random));
    m_mode->addItem(tr("GA (genetic, full space)"), int(SearchMode::Genetic));
    m_chains = new QSpinBox(this);
    m_chains->setRange(1, 64);
    m_chains->setValue(defaultSearchChains());
    m_repeat = new QCheckBox(tr("Repeat blocks"), this);
    m_repeat->setObjectName(QStringLiteral("repeatBlocksBox"));
    m_partitions = new QCheckBox(tr("Move partitions"), this);
    m_partitions->setObjectName(QStringLiteral("partitionsBox"));
    m_choosePartitions = new QCheckBox(tr("Choose partitions"), this);
    m_choosePartitions->setObjectName(QStringLiteral("choosePartitionsBox"));
    m_choosePartitions->setChecked(true);
    // Moving partitions is a finer form of choosing them: off with it.
    connect(m_choosePartitions, &QCheckBox::toggled, this, [this](bool on) {
        if (!on) m_partitions->setChecked(false);
        m_partitions->setEnabled(on && m_choosePartitions->isEnabled());
    });
    // What each setting means, in the method's notation.
    const std::pair<QWidget*, QString> tips[] = {
        {m_seed, tr("Chain i uses seed + i; a run is reproducible from inputs, settings and seed")},
        {m_beta, tr("Iterations per chain N = beta x layers, when the time budget is off")},
        {m_seconds, tr("Time budget in seconds (the temperature follows the time used); results "
                       "then depend on machine speed. Off: beta sets an iteration count, "
                       "reproducible for a seed")},
        {m_t0, tr("T_n = T0 (1 - x) / (1 + alpha x), x = n / N")},
        {m_repeat, tr("Where the model holds copies of one block (a decoder's transformer "
                      "blocks), schedule every copy as the first block and search that block "
                      "only; the tree marks the copies")},
        {m_partitions, tr("Also move each leaf among its alternative partitions (the Partition... "
                          "action lists them), a move kept only where it lowers the cost")},
        {m_choosePartitions,
         tr("At the end, give each leaf of the best tree the alternative partition the whole "
            "tree costs least with (at most the last tenth of a time budget). Off: every leaf runs "
            "the mapper's choice")},
        {m_n, tr("Objective E^n x D^m: energy exponent")},
        {m_m, tr("Objective E^n x D^m: delay exponent")}};
    for (const auto& [widget, tip] : tips)
        widget->setToolTip(tip);
    int r = 0;
    auto add = [&](const QString& label, QWidget* w, int col) {
        grid->addWidget(new QLabel(label, this), r, col);
        grid->addWidget(w, r, col + 1);
    };
    add(tr("Seed"), m_seed, 0);
    add(tr("Mode"), m_mode, 2);
    ++r;
    add(tr("Seconds"), m_seconds, 0);
    add(tr("beta"), m_beta, 2);
    ++r;
    add(tr("Chains"), m_chains, 0);
    grid->addWidget(m_repeat, r, 2, 1, 2);
    ++r;
    add(tr("T0"), m_t0, 0);
    add(tr("alpha"), m_alpha, 2);
    ++r;
    add(tr("E exponent n"), m_n, 0);
    add(tr("D exponent m"), m_m, 2);
    ++r;
    grid->addWidget(m_choosePartitions, r, 0, 1, 2);
    grid->addWidget(m_partitions, r, 2, 1, 2);
    ++r;
    left->addLayout(grid);

    auto* buttons = new QHBoxLayout;
    m_start = new QPushButton(tr("Start"), this);
    m_pause = new QPushButton(tr("Pause"), this);
    m_stop = new QPushButton(tr("Stop"), this);
    m_adopt = new QPushButton(tr("Adopt best"), this);
    m_start->setObjectName(QStringLiteral("startButton"));
    m_pause->setObjectName(QStringLiteral("pauseButton"));
    m_stop->setObjectName(QStringLiteral("stopButton"));
    m_adopt->setObjectName(QStringLiteral("adoptButton"));
    m_adopt->setToolTip(tr("Make the best tree found the document's tree (undoable); a running "
                           "search continues from it"));
    for (auto* b : {m_start, m_pause, m_stop, m_adopt})
        buttons->addWidget(b);
    left->addLayout(buttons);
    m_progress = new QProgressBar(this);
    m_progress->setObjectName(QStringLiteral("searchProgress"));
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_progress->setFormat(QStringLiteral("idle"));
    left->addWidget(m_progress);
    m_bestLabel = new QLabel(this);
    m_bestLabel->setObjectName(QStringLiteral("bestSoFar"));
    m_bestLabel->setWordWrap(true);
    m_bestLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    left->addWidget(m_bestLabel);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("searchStatus"));
    m_status->setWordWrap(true);
    left->addWidget(m_status);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("searchSummary"));
    m_summary->setWordWrap(true);
    left->addWidget(m_summary);
    left->addStretch();
    lay->addLayout(left, 0);

    connect(m_start, &QPushButton::clicked, this, &SearchPanel::startRequested);
    connect(m_pause, &QPushButton::clicked, this, [this] { emit pauseRequested(!m_paused); });
    connect(m_stop, &QPushButton::clicked, this, &SearchPanel::stopRequested);
    connect(m_adopt, &QPushButton::clicked, this, &SearchPanel::adoptRequested);
    auto objEdited = [this] {
        if (!m_settingObjective) emit objectiveEdited(objective());
    };
    connect(m_n, &QDoubleSpinBox::valueChanged, this, objEdited);
    connect(m_m, &QDoubleSpinBox::valueChanged, this, objEdited);

    buildPlot();
    lay->addWidget(m_plot, 1);
    setRunState(RunState::Idle, {});
}

void SearchPanel::buildPlot() {
    // Three stacked axis rects sharing the iteration axis: objective, E and D, T and
    // acceptance. A margin group lines their left and right axes up.
    m_plot->setObjectName(QStringLiteral("searchPlot"));
    m_plot->setMinimumSize(300, 200);
    m_plot->plotLayout()->clear();
    auto* group = new QCPMarginGroup(m_plot);
    QCPAxisRect* rects[3];
    for (int i = 0; i < 3; ++i) {
        rects[i] = new QCPAxisRect(m_plot);
        rects[i]->axis(QCPAxis::atRight)->setVisible(true);
        rects[i]->axis(QCPAxis::atRight)->setTickLabels(i > 0);
        rects[i]->setMarginGroup(QCP::msLeft | QCP::msRight, group);
        rects[i]->setRangeDrag(Qt::Horizontal);
        rects[i]->setRangeZoom(Qt::Horizontal);
        m_plot->plotLayout()->addElement(i, 0, rects[i]);
    }
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    for (auto* rc : rects)
        for (auto* ax : rc->axes()) {
            ax->setTickLabelFont(small);
            ax->setLabelFont(small);
        }
    auto graph = [&](QCPAxisRect* rc, QCPAxis::AxisType y, const QColor& c, const QString& name) {
        QCPGraph* g = m_plot->addGraph(rc->axis(QCPAxis::atBottom), rc->axis(y));
        g->setPen(QPen(c, 1.5));
        g->setName(name);
        return g;
    };
    m_cur = graph(rects[0], QCPAxis::atLeft, QColor(150, 150, 150), tr("current"));
    m_best = graph(rects[0], QCPAxis::atLeft, QColor(21, 101, 192), tr("best"));
    m_energy = graph(rects[1], QCPAxis::atLeft, QColor(46, 125, 50), tr("E (current)"));
    m_delay = graph(rects[1], QCPAxis::atRight, QColor(198, 40, 40), tr("D (current)"));
    m_temp = graph(rects[2], QCPAxis::atLeft, QColor(239, 108, 0), tr("temperature"));
    m_accept = graph(rects[2], QCPAxis::atRight, QColor(106, 27, 154), tr("acceptance"));
    rects[0]->axis(QCPAxis::atLeft)->setLabel(tr("objective"));
    // A log axis over one or two decades: two labels, not three stacked ones.
    setLogUnitAxis(rects[0]->axis(QCPAxis::atLeft), LogUnitTicker::Quantity::Number, 2);
    rects[1]->axis(QCPAxis::atLeft)->setLabel(tr("E"));
    rects[1]->axis(QCPAxis::atRight)->setLabel(tr("D"));
    rects[2]->axis(QCPAxis::atLeft)->setLabel(tr("T"));
    rects[2]->axis(QCPAxis::atRight)->setLabel(tr("accept"));
    rects[2]->axis(QCPAxis::atRight)->setRange(0, 1);
    // Each strip is short: three ticks per value axis keep the labels readable.
    for (auto* rc : rects)
        for (auto t : {QCPAxis::atLeft, QCPAxis::atRight})
            rc->axis(t)->ticker()->setTickCount(rc == rects[0] && t == QCPAxis::atLeft ? 2 : 3);
    // Iterations run into the millions: "1.5·10⁶" with few ticks never overlap.
    for (auto* rc : rects) {
        rc->axis(QCPAxis::atBottom)->ticker()->setTickCount(4);
        rc->axis(QCPAxis::atBottom)->setNumberFormat(QStringLiteral("gb"));
        rc->axis(QCPAxis::atBottom)->setNumberPrecision(3);
        for (auto t : {QCPAxis::atLeft, QCPAxis::atRight})
            if (rc->axis(t)->numberFormat() == QLatin1String("gb"))
                rc->axis(t)->setNumberPrecision(3);
    }
    // E and D in units ("25 mJ", "2.3 M cycles"), after the tick counts above.
    setLinearUnitAxis(rects[1]->axis(QCPAxis::atLeft), LogUnitTicker::Quantity::Energy);
    setLinearUnitAxis(rects[1]->axis(QCPAxis::atRight), LogUnitTicker::Quantity::Cycles);
    rects[2]->axis(QCPAxis::atBottom)->setLabel(tr("iteration"));
    for (int i = 0; i < 2; ++i)
        rects[i]->axis(QCPAxis::atBottom)->setTickLabels(false);
    // Legends per rect would eat room; a one-line text legend says which colour is what.
    auto* legend = new QCPTextElement(
        m_plot,
        // Two short lines: one long line was cut at 1280x800.
        tr("grey current, blue best | dashed: T restarts\nE green, D red | T orange, "
           "acceptance purple"),
        small);
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(0, 0, legend);
    // The legend's row keeps both lines' height; the strips share the rest (a short dock
    // cut the first line at the top).
    legend->setMinimumSize(0, QFontMetrics(small).lineSpacing() * 2 + 6);
    m_plot->plotLayout()->setRowStretchFactor(0, 0.001);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    fitAxisTicks(m_plot);
    m_plot->setMouseTracking(true);
    connect(m_plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) {
        const QString tip = markTipAt(e->pos());
        if (tip.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(m_plot->mapToGlobal(e->pos()), tip, m_plot);
    });
}

int SearchPanel::pointCount() const {
    return m_best->dataCount();
}

QStringList SearchPanel::restartMarks() const {
    QStringList out;
    for (QCPAbstractItem* item : m_marks)
        if (auto* t = qobject_cast<QCPItemText*>(item)) out << t->text();
    return out;
}

QString SearchPanel::markTipAt(const QPoint& pos) const {
    bool inStrip = false;
    for (const QCPGraph* g : {m_best, m_energy, m_temp})
        inStrip = inStrip || g->keyAxis()->axisRect()->rect().contains(pos);
    if (!inStrip) return {};
    for (const auto& [x, why] : m_markWhy) {
        if (std::abs(m_temp->keyAxis()->coordToPixel(x) - pos.x()) > 4) continue;
        QString reason;
        if (why == tr("restart"))
            reason = tr("the search restarted from an edited, pinned or adopted tree");
        else if (why == tr("resumed"))
            reason = tr("the run resumed after a pause and anneals again from its best for "
                        "the time left");
        else if (why == tr("next chain"))
            reason = tr("the next chain starts; each chain anneals from the start temperature");
        else
            reason = tr("the next phase starts: %1").arg(why);
        return tr("The temperature starts high again here: %1").arg(reason);
    }
    return {};
}

void SearchPanel::markRestart(double x, const QString& why) {
    m_markWhy.push_back({x, why});
    QCPAxisRect* bottom = m_temp->keyAxis()->axisRect();
    for (QCPGraph* g : {m_best, m_energy, m_temp}) {
        auto* line = new QCPItemStraightLine(m_plot);
        line->setClipAxisRect(g->keyAxis()->axisRect());
        line->setPen(QPen(QColor(120, 120, 120), 1, Qt::DashLine));
        for (auto* p : {line->point1, line->point2})
            p->setAxes(g->keyAxis(), g->valueAxis());
        line->point1->setCoords(x, 0);
        line->point2->setCoords(x, 1);
        m_marks << line;
    }
    auto* label = new QCPItemText(m_plot);
    label->setClipAxisRect(bottom);
    label->setClipToAxisRect(true);
    label->position->setAxes(m_temp->keyAxis(), m_temp->valueAxis());
    label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    label->position->setCoords(x, 0.02);
    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    label->setText(why);
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.8);
    label->setFont(small);
    label->setColor(QColor(90, 90, 90));
    m_marks << label;
}

SearchConfig SearchPanel::settings() const {
    SearchConfig c;
    c.seed = std::uint64_t(m_seed->value());
    c.seconds = m_seconds->value();
    c.beta = m_beta->value();
    c.t0 = m_t0->value();
    c.alpha = m_alpha->value();
    c.objective = objective();
    c.mode = SearchMode(m_mode->currentData().toInt());
    c.chains = m_chains->value();
    c.repeatBlocks = m_repeat->isChecked();
    c.partitions = m_partitions->isChecked();
    c.choosePartitions = m_choosePartitions->isChecked();
    // Chains run in parallel on at most the cores we have; this never changes the result.
    c.threads = std::max(1, std::min(c.chains, QThread::idealThreadCount() - 1));
    return c;
}

void SearchPanel::setSettings(const SearchConfig& c) {
    m_seed->setValue(
        int(std::min<std::uint64_t>(c.seed, std::uint64_t(std::numeric_limits<int>::max()))));
    m_seconds->setValue(c.seconds);
    m_beta->setValue(c.beta);
    m_t0->setValue(c.t0);
    m_alpha->setValue(c.alpha);
    m_mode->setCurrentIndex(std::max(0, m_mode->findData(int(c.mode))));
    m_chains->setValue(c.chains);
    m_repeat->setChecked(c.repeatBlocks);
    m_choosePartitions->setChecked(c.choosePartitions);
    m_partitions->setChecked(c.partitions && c.choosePartitions);
    setObjective(c.objective);
}

Objective SearchPanel::objective() const {
    return Objective{m_n->value(), m_m->value()};
}

void SearchPanel::setObjective(const Objective& o) {
    m_settingObjective = true;
    m_n->setValue(o.n);
    m_m->setValue(o.m);
    m_settingObjective = false;
}

void SearchPanel::setAdoptEnabled(bool on) {
    m_haveResult = on;
    updateButtons();
}

void SearchPanel::setCanStart(bool on) {
    m_canStart = on;
    m_start->setToolTip(on ? tr("Search for the time budget (F5)") : tr("Open a model first"));
    updateButtons();
}

bool SearchPanel::adoptEnabled() const {
    return m_adopt->isEnabled();
}

QString SearchPanel::bestText() const {
    return m_bestLabel->text();
}

void SearchPanel::setSummary(const QString& text) {
    m_summary->setText(text);
}

QString SearchPanel::summaryText() const {
    return m_summary->text();
}

void SearchPanel::updateButtons() {
    const bool active = m_state == RunState::Running || m_state == RunState::Paused;
    m_start->setEnabled(!active && m_canStart);
    m_pause->setEnabled(active);
    m_stop->setEnabled(active);
    // Search > Adopt best works during a run; so does the button.
    m_adopt->setEnabled(active || m_haveResult);
}

void SearchPanel::clearHistory() {
    for (auto* g : {m_cur, m_best, m_energy, m_delay, m_temp, m_accept})
        g->data()->clear();
    m_progress->setValue(0);
    m_maxIteration = 0;
    for (QCPAbstractItem* item : std::as_const(m_marks))
        m_plot->removeItem(item);
    m_marks.clear();
    m_markWhy.clear();
    m_resumed = false;
    m_lastSegment = 0;
    m_lastPhase.clear();
    m_lastTemperature = 0;
    m_bestLabel->clear();
    m_summary->clear();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void SearchPanel::forgetRun(const QString& why) {
    // Only a run that was shown needs its reason to go; a first model opens quietly.
    const bool hadRun = m_haveResult || pointCount() > 0 || !m_bestLabel->text().isEmpty() ||
                        m_state != RunState::Idle;
    clearHistory();
    m_haveResult = false;
    m_status->clear();
    setRunState(RunState::Idle, hadRun ? why : QString());
    m_progress->setFormat(QStringLiteral("idle"));
}

void SearchPanel::setRunState(RunState s, const QString& message) {
    // A timed run resumed after a pause anneals its time left from the start temperature.
    if (m_state == RunState::Paused && s == RunState::Running) m_resumed = true;
    m_state = s;
    m_paused = s == RunState::Paused;
    const bool active = s == RunState::Running || s == RunState::Paused;
    updateButtons();
    m_pause->setText(m_paused ? tr("Resume") : tr("Pause"));
    for (QWidget* w :
         std::initializer_list<QWidget*>{m_seed, m_seconds, m_beta, m_t0, m_alpha, m_mode, m_chains,
                                         m_repeat, m_choosePartitions})
        w->setEnabled(!active);
    m_partitions->setEnabled(!active && m_choosePartitions->isChecked());
    if (!message.isEmpty()) m_status->setText(message);
    if (s == RunState::Paused) m_progress->setFormat(tr("paused at %p%"));
    if (s == RunState::Finished || s == RunState::Stopped || s == RunState::Failed)
        m_progress->setFormat(s == RunState::Finished  ? tr("done")
                              : s == RunState::Stopped ? tr("stopped at %p%")
                                                       : tr("failed"));
}

void SearchPanel::addSnapshot(const SearchSnapshot& s) {
    const QString left =
        s.secondsLeft >= 0 && !s.final ? tr(", %1 left").arg(duration(s.secondsLeft)) : QString();
    if (s.currentCost <= 0 && !s.final) {
        // A phase before annealing (start trees, baselines): nothing to plot yet, and on a
        // large mesh it may take a while, so say what runs.
        m_status->setText(tr("%1, %2 s").arg(s.phase).arg(s.activeSeconds, 0, 'f', 1) + left);
        return;
    }
    const double x = double(s.iteration);
    // The temperature starts high again after a restart (an edit, a resume) and in the
    // next phase or chain: a marked line says so where it happens.
    if (!s.final && m_best->dataCount() > 0) {
        if (s.segment != m_lastSegment)
            markRestart(x, tr("restart"));
        else if (s.phase != m_lastPhase && !s.phase.isEmpty())
            markRestart(x, s.phase);
        else if (m_lastTemperature > 0 && s.temperature > 1.5 * m_lastTemperature)
            markRestart(x, m_resumed ? tr("resumed") : tr("next chain"));
    }
    if (!s.final && m_best->dataCount() > 0) m_resumed = false;
    if (!s.final) {
        m_lastSegment = s.segment;
        m_lastPhase = s.phase;
        if (s.temperature > 0) m_lastTemperature = s.temperature;
    }
    if (s.currentCost > 0) m_cur->addData(x, s.currentCost);
    if (s.bestCost > 0) m_best->addData(x, s.bestCost);
    m_energy->addData(x, s.energy);
    m_delay->addData(x, s.delay);
    if (!s.final) {
        m_temp->addData(x, s.temperature);
        m_accept->addData(x, s.acceptanceRate);
    }
    for (auto* g : {m_cur, m_best, m_energy, m_delay, m_temp})
        g->rescaleValueAxis(false, false);
    m_best->rescaleValueAxis(true, false); // both objective curves in view
    m_cur->rescaleValueAxis(true, false);
    // A timed run's total is an estimate that a later phase's snapshot can undercut: never
    // cut off what is already plotted.
    m_maxIteration = std::max(m_maxIteration, x);
    for (auto* g : {m_best, m_energy, m_temp})
        g->keyAxis()->setRange(0, std::max({1.0, double(s.total), m_maxIteration}));
    m_plot->replot(QCustomPlot::rpQueuedReplot);

    m_progress->setValue(s.total > 0 ? int(1000.0 * double(s.iteration) / double(s.total)) : 0);
    if (!s.final && m_state == RunState::Running)
        m_progress->setFormat(s.secondsLeft >= 0
                                  ? tr("%p%  -  %1 left").arg(duration(s.secondsLeft))
                                  : tr("%p%  -  ETA %1").arg(duration(s.etaSeconds)));
    // Best so far on a line of its own: state messages ("Paused") never replace it.
    if (s.bestCost > 0)
        m_bestLabel->setText(tr("<b>Best so far</b> %1: E %2, D %3")
                                 .arg(objectiveText(s.bestCost))
                                 .arg(energyText(s.bestEnergy), cyclesText(s.bestDelay)));
    m_status->setText(
        (s.phase.isEmpty() || s.final ? QString() : s.phase + QStringLiteral(": ")) +
        tr("iteration %1 / %2, T %3, acceptance %4%, %5 s%6")
            .arg(s.iteration)
            .arg(s.total)
            .arg(s.temperature, 0, 'g', 3)
            .arg(s.acceptanceRate * 100, 0, 'f', 0)
            .arg(s.activeSeconds, 0, 'f', 1)
            .arg(s.segment > 0 ? tr(" (restarted %1x after edits)").arg(s.segment) : QString()) +
        left);
}

} // namespace tilescope::ui
