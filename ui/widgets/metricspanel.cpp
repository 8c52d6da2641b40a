#include "widgets/metricspanel.h"

#include "core/bytestext.h"
#include "core/document.h"
#include "core/layernames.h"
#include "core/programrunner.h"
#include "report/segments.h"
#include "sim/fidelity.h"
#include "widgets/axisfit.h"

#include <QFormLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QScrollArea>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <iterator>
#include <qcustomplot.h>

namespace tilescope::ui {

namespace {
QString sci(double v) {
    return objectiveText(v);
}
QTableWidgetItem* item(const QString& s, bool right = false) {
    auto* it = new QTableWidgetItem(s);
    if (right) it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return it;
}
} // namespace

MetricsPanel::MetricsPanel(Document* doc, QWidget* parent)
    : QWidget(parent), m_doc(doc), m_plot(new QCustomPlot(this)) {
    setObjectName(QStringLiteral("metrics"));
    // Two columns (it sits under the S-T graph, beside the search panel): the figures,
    // with the whole height to wrap in (under the chart, 1280x800 clipped them), then
    // tabs: energy chart, segments, comparison.
    auto* outer = new QHBoxLayout(this);
    outer->setContentsMargins(4, 4, 4, 4);
    // The figures scroll when a warning or an extra row (chiplets, compute-in-memory) makes
    // them taller than the dock, rather than be clipped.
    auto* figures = new QWidget;
    auto* lay = new QVBoxLayout(figures);
    lay->setContentsMargins(0, 0, 0, 0);
    auto* scroll = new QScrollArea(this);
    scroll->setObjectName(QStringLiteral("metricsFigures"));
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setWidgetResizable(true);
    scroll->setWidget(figures);
    // The widest label beside the widest cycle count: a time figure takes at most two
    // lines (cycles, then the wall time) at 1280x800, not three.
    scroll->setMinimumWidth(
        fontMetrics().horizontalAdvance(QStringLiteral("NoC hop-bytes: 888.8 M cycles")) + 24);
    outer->addWidget(scroll, 2);

    auto* form = m_form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    for (const char* key :
         {"Validity", "Energy", "Delay", "Simulated", "Objective", "Utilisation", "DRAM bytes",
          "DRAM layouts", "Blocked leaves", "NoC hop-bytes", "Inter-chiplet", "Weight writes"}) {
        auto* l = new QLabel(QStringLiteral("-"), this);
        l->setTextInteractionFlags(Qt::TextSelectableByMouse);
        l->setWordWrap(true);
        m_figures.insert(QString::fromLatin1(key), l);
        form->addRow(tr(key) + QLatin1Char(':'), l);
    }
    m_figures[QStringLiteral("Weight writes")]->setToolTip(
        tr("Compute-in-memory tiles: the energy of writing weights into the crossbars, the "
           "programmings of the whole run, and how many the default loop order would need "
           "(docs/cost-model.md section 8)"));
    form->setRowVisible(m_figures[QStringLiteral("Weight writes")], false);
    m_figures[QStringLiteral("Inter-chiplet")]->setToolTip(
        tr("Multi-chiplet templates: the hop-bytes that cross a link between two chiplets (the "
           "slower, costlier link class; docs/hardware-format.md)"));
    form->setRowVisible(m_figures[QStringLiteral("Inter-chiplet")], false);
    m_figures[QStringLiteral("Blocked leaves")]->setToolTip(
        tr("Leaves whose slice does not fit their tiles' buffers work through it in blocks, "
           "and the DRAM bytes that adds over the run (part of the DRAM bytes above); the "
           "Layers table says which leaves and why"));
    form->setRowVisible(m_figures[QStringLiteral("Blocked leaves")], false);
    m_figures[QStringLiteral("DRAM layouts")]->setToolTip(
        tr("Templates with a DRAM run model: the DRAM's time under the layout plan (the sum "
           "over segments of the slowest of the DRAM and its ports, runs' overhead included) "
           "and what it saves against the best single layout for every tensor "
           "(docs/cost-model.md section 4b)"));
    form->setRowVisible(m_figures[QStringLiteral("DRAM layouts")], false);
    lay->addLayout(form);
    lay->addStretch(1);

    m_plot->setObjectName(QStringLiteral("energyPlot"));
    m_plot->setMinimumHeight(100);
    // Horizontal bars: the four labels stack down the key axis instead of running into one
    // another under narrow bars.
    m_bars = new QCPBars(m_plot->yAxis, m_plot->xAxis);
    m_bars->setBrush(QColor(21, 101, 192, 190));
    m_bars->setPen(QPen(QColor(21, 101, 192)));
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    ticker->addTicks({1, 2, 3, 4}, {tr("DRAM"), tr("NoC"), tr("MAC"), tr("Buffer")});
    m_plot->yAxis->setTicker(ticker);
    m_plot->yAxis->setRange(0.4, 4.6);
    m_plot->yAxis->setRangeReversed(true); // DRAM on top, as the breakdown is listed
    m_plot->yAxis->grid()->setVisible(false);
    m_plot->xAxis->ticker()->setTickCount(4);
    fitAxisTicks(m_plot);

    // Segments and the comparison share one tab widget: the dock is narrow and short.
    auto* tabs = new QTabWidget(this);
    tabs->setObjectName(QStringLiteral("metricsTabs"));
    // Every tab title whole: the panel takes the width from its neighbours instead.
    tabs->setUsesScrollButtons(false);
    tabs->setElideMode(Qt::ElideNone);
    tabs->addTab(m_plot, tr("Energy"));
    // The figures of report/segments.h, formatted by the units policy: the HTML report
    // shows the same text for every segment (tst_render checks it).
    m_segments = new QTableWidget(0, 7, this);
    m_segments->setObjectName(QStringLiteral("segmentsTable"));
    m_segments->setHorizontalHeaderLabels({tr("Segment"), tr("Layers"), tr("Time"), tr("Energy"),
                                           tr("Bound"), tr("Starts"), tr("Adds")});
    // Segments overlap (no barrier between them): "Adds" is what each adds to the delay.
    m_segments->horizontalHeaderItem(5)->setToolTip(
        tr("When the segment's first invocation starts"));
    m_segments->horizontalHeaderItem(6)->setToolTip(
        tr("What the segment adds to the delay: segments overlap, so their times add up to "
           "more than the delay and this column to the delay"));
    m_segments->verticalHeader()->hide();
    m_segments->horizontalHeader()->setStretchLastSection(true);
    m_segments->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_segments->setMinimumHeight(60);
    m_segments->setWordWrap(false);
    tabs->addTab(m_segments, tr("Segments"));

    auto* cmp = new QWidget(this);
    auto* cl = new QVBoxLayout(cmp);
    cl->setContentsMargins(2, 2, 2, 2);
    m_compareButton = new QPushButton(tr("Compare LS / LP / DP-LP / SA"), cmp);
    m_compareButton->setToolTip(tr(
        "Run the layer-sequential and layer-pipeline baselines and SA with the search settings"));
    connect(m_compareButton, &QPushButton::clicked, this, &MetricsPanel::compareRequested);
    cl->addWidget(m_compareButton, 0, Qt::AlignLeft);
    m_compare = new QTableWidget(0, 6, cmp);
    m_compare->setObjectName(QStringLiteral("compareTable"));
    m_compare->setHorizontalHeaderLabels(
        {tr("Space"), tr("Energy"), tr("Delay"), tr("Objective"), tr("EDP"), tr("vs SA")});
    m_compare->verticalHeader()->hide();
    m_compare->horizontalHeader()->setStretchLastSection(true);
    m_compare->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_compare->setMinimumHeight(60);
    cl->addWidget(m_compare, 1);
    // A short title: "LS / LP / SA" was cut at 1280x800 (the button says what it compares).
    tabs->addTab(cmp, tr("Compare"));
    tabs->setMinimumWidth(220);
    outer->addWidget(tabs, 3);
    connect(this, &MetricsPanel::compareRequested, tabs,
            [tabs, cmp] { tabs->setCurrentWidget(cmp); });

    connect(doc, &Document::treeChanged, this, &MetricsPanel::refresh);
    connect(doc, &Document::documentReset, this, [this] {
        m_lastCompare.reset();
        m_compare->setRowCount(0);
        refresh();
    });
    refresh();
}

void MetricsPanel::setProgramRunner(ProgramRunner* runner) {
    m_programs = runner;
    connect(runner, &ProgramRunner::runReady, this, &MetricsPanel::refreshSimulated);
    connect(runner, &ProgramRunner::runStarted, this, &MetricsPanel::refreshSimulated);
    refreshSimulated();
}

bool MetricsPanel::weightWritesShown() const {
    return m_doc->hasModel() && m_doc->hardware()->arch == TileArch::Cim;
}

bool MetricsPanel::figureShown(const QString& key) const {
    auto it = m_figures.constFind(key);
    return it != m_figures.constEnd() && m_form->isRowVisible(it.value());
}

void MetricsPanel::refreshSimulated() {
    QLabel* l = m_figures[QStringLiteral("Simulated")];
    l->setToolTip(QString());
    auto e = m_doc->evaluation();
    auto run = m_programs ? m_programs->current() : nullptr;
    if (!m_doc->hasModel() || !e || !e->valid) {
        l->setText(QStringLiteral("-"));
        return;
    }
    if (!run) {
        l->setText(m_programs && m_programs->busy() ? tr("replaying the program...")
                                                    : QStringLiteral("-"));
        return;
    }
    if (!run->ok()) {
        l->setText(tr("no program: %1").arg(run->error));
        return;
    }
    l->setText(simulatedFigure(*run));
    // The dock is narrow at small window sizes: the whole sentence stays one hover away.
    const ModelAgreement a = modelAgreement(run->fine.delay, run->evaluatorDelay);
    l->setToolTip(
        tr("Simulated program: %1; evaluator estimate: %2 (ratio %3)%4")
            .arg(cyclesText(run->fine.delay), cyclesText(run->evaluatorDelay))
            .arg(a.ratio, 0, 'f', 3)
            .arg(a.agrees ? QString()
                          : tr(": more than %1% apart").arg(100 * kModelTolerance, 0, 'f', 0)));
}

QString MetricsPanel::simulatedFigure(const ProgramRun& run) {
    const ModelAgreement a = modelAgreement(run.fine.delay, run.evaluatorDelay);
    // Short: the column is narrow at 1280x800; the tooltip says "x the estimate".
    const QString text = tr("%1 (%2x)").arg(cyclesText(run.fine.delay)).arg(a.ratio, 0, 'f', 3);
    if (a.agrees) return text;
    return QStringLiteral("<span style='color:#c62828'>%1 (%2): %3</span>")
        .arg(text, cyclesText(run.evaluatorDelay),
             tr("more than %1% apart").arg(100 * kModelTolerance, 0, 'f', 0));
}

QString MetricsPanel::figureText(const QString& key) const {
    auto* l = m_figures.value(key);
    return l ? l->text() : QString();
}

void MetricsPanel::setCompareRunning(bool running) {
    m_compareButton->setEnabled(!running);
    m_compareButton->setText(running ? tr("Comparing...") : tr("Compare LS / LP / DP-LP / SA"));
}

void MetricsPanel::setCompare(ComparePtr compare) {
    m_lastCompare = compare;
    m_compare->setRowCount(0);
    if (!compare) return;
    double sa = 0;
    for (const auto& r : compare->rows)
        if (r.ok && r.mode == SearchMode::Set) sa = r.eval.cost;
    for (const auto& r : compare->rows) {
        const int i = m_compare->rowCount();
        m_compare->insertRow(i);
        m_compare->setItem(i, 0,
                           item(r.mode == SearchMode::Set
                                    ? QStringLiteral("SA")
                                    : QString::fromLatin1(toString(r.mode)).toUpper()));
        if (!r.ok) {
            m_compare->setItem(i, 1, item(r.error));
            continue;
        }
        m_compare->setItem(i, 1, item(energyText(r.eval.energy.total()), true));
        m_compare->setItem(i, 2, item(cyclesText(r.eval.delay), true));
        m_compare->setItem(i, 3, item(sci(r.eval.cost), true));
        m_compare->setItem(i, 4, item(sci(edpOf(r.eval)), true));
        m_compare->setItem(
            i, 5,
            item(sa > 0 ? QStringLiteral("%1x").arg(r.eval.cost / sa, 0, 'f', 3) : QString(),
                 true));
    }
    m_compare->resizeColumnsToContents();
}

QString MetricsPanel::layoutPlanText(const Evaluation& e) {
    const auto& l = e.layouts;
    if (!l.active) return QStringLiteral("-");
    // The best single layout for every tensor: what the plan is measured against.
    int best = 0;
    for (int i = 1; i < kLayoutCount; ++i)
        if (l.fixedCycles[size_t(i)] < l.fixedCycles[size_t(best)]) best = i;
    const double bestCycles = l.fixedCycles[size_t(best)];
    const double gain = bestCycles > 0 ? (bestCycles - l.planCycles) / bestCycles : 0.0;
    QString choice = QString::fromStdString(layoutChoiceName(l.choice));
    if (!l.choice.pins.empty()) choice += tr(", %n pinned", nullptr, int(l.choice.pins.size()));
    // The single layouts lay every free tensor out alike, pinned ones too: pins that go
    // against the runs make the plan slower than the best of them, and the row says so.
    const QString outcome = gain >= 0
                                ? tr("the plan saves %1 %").arg(gain * 100, 0, 'f', 1)
                                : tr("the plan takes %1 % more%2")
                                      .arg(-gain * 100, 0, 'f', 1)
                                      .arg(l.choice.pins.empty() ? QString() : tr(" (its pins)"));
    return tr("%1 of DRAM time (%2); best single layout %3: %4, %5")
        .arg(cyclesText(l.planCycles), choice,
             QString::fromLatin1(layoutName(kLayouts[size_t(best)])), cyclesText(bestCycles),
             outcome);
}

void MetricsPanel::refresh() {
    auto e = m_doc->evaluation();
    const bool have = m_doc->hasModel() && e;
    auto set = [&](const char* k, const QString& v) {
        m_figures[QString::fromLatin1(k)]->setText(v);
    };
    const bool cim = weightWritesShown();
    m_form->setRowVisible(m_figures[QStringLiteral("Weight writes")], cim);
    // Shown only while the schedule has blocked leaves (set again below).
    m_form->setRowVisible(m_figures[QStringLiteral("Blocked leaves")], false);
    m_form->setRowVisible(m_figures[QStringLiteral("DRAM layouts")], false);
    if (!have) {
        for (auto* l : m_figures)
            l->setText(QStringLiteral("-"));
        m_bars->data()->clear();
        m_segments->setRowCount(0);
        m_plot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    // An invalid tree has no figures of its own: the last valid schedule's stay, marked as
    // such, instead of "0 J / 0 cycles".
    const bool fallback = !e->valid && m_doc->lastValidEvaluation();
    set("Validity",
        e->valid ? tr("valid")
                 : QStringLiteral("<span style='color:#c62828'>%1</span>%2")
                       .arg(QString::fromStdString(e->reason).toHtmlEscaped(),
                            fallback ? tr("<br><i>figures below: the last valid schedule</i>")
                                     : QString()));
    if (fallback) e = m_doc->lastValidEvaluation();
    if (!e->valid) {
        for (auto it = m_figures.begin(); it != m_figures.end(); ++it)
            if (it.key() != QLatin1String("Validity")) it.value()->setText(QStringLiteral("-"));
        m_bars->data()->clear();
        m_segments->setRowCount(0);
        m_plot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    set("Energy", energyText(e->energy.total()));
    const double ghz = m_doc->hardware()->clockGHz;
    set("Delay", timeText(e->delay, ghz));
    refreshSimulated();
    set("Objective", QStringLiteral("%1  (E^%2 D^%3)")
                         .arg(sci(e->cost))
                         .arg(e->objective.n)
                         .arg(e->objective.m));
    set("Utilisation", QStringLiteral("%1 %").arg(e->utilisation * 100, 0, 'f', 1));
    set("DRAM bytes", bytesText(e->dramBytes));
    set("DRAM layouts", layoutPlanText(*e));
    m_form->setRowVisible(m_figures[QStringLiteral("DRAM layouts")], e->layouts.active);
    set("Blocked leaves", blockedLeavesText(e->blockedLeaves, e->blockingDramBytes));
    m_form->setRowVisible(m_figures[QStringLiteral("Blocked leaves")], e->blockedLeaves > 0);
    set("NoC hop-bytes", bytesText(e->nocHopBytes));
    const bool chiplets = m_doc->hardware()->chiplets.count() > 1;
    m_form->setRowVisible(m_figures[QStringLiteral("Inter-chiplet")], chiplets);
    if (chiplets) set("Inter-chiplet", bytesText(e->interChipletHopBytes));
    if (cim)
        set("Weight writes", tr("%1, %2 programmings (default loop order: %3)")
                                 .arg(energyText(e->energy.weightWrite))
                                 .arg(QLocale().toString(qlonglong(e->weightProgrammings)))
                                 .arg(QLocale().toString(qlonglong(e->weightProgrammingsDefault))));

    // One prefix for the axis, chosen from the largest part (units policy: joules); a
    // compute-in-memory template adds its crossbar writes as a fifth bar, a template with
    // in-tile storage levels one bar per level, named as the template names it.
    std::vector<double> parts = {e->energy.dram, e->energy.noc, e->energy.mac, e->energy.buffer};
    QStringList labels = {tr("DRAM"), tr("NoC"), tr("MAC"), tr("Buffer")};
    if (cim) {
        parts.push_back(e->energy.weightWrite);
        labels << tr("Weight write");
    }
    const auto& levels = m_doc->hardware()->levels;
    for (size_t i = 0; i < levels.size() && i < e->energy.levels.size(); ++i) {
        parts.push_back(e->energy.levels[i]);
        labels << QString::fromStdString(levels[i].name);
    }
    const double top = std::max(1e-3, *std::max_element(parts.begin(), parts.end()));
    const EnergyScale sc = energyScale(top);
    QVector<double> vals, keys;
    for (double p : parts) {
        vals << p * sc.factor;
        keys << double(keys.size() + 1);
    }
    if (labels != m_barLabels) { // the bars come and go with the template
        m_barLabels = labels;
        auto ticker = QSharedPointer<QCPAxisTickerText>::create();
        for (int i = 0; i < labels.size(); ++i)
            ticker->addTick(i + 1, labels[i]);
        m_plot->yAxis->setTicker(ticker);
        m_plot->yAxis->setRange(0.4, labels.size() + 0.6);
    }
    m_bars->setData(keys, vals, true);
    m_plot->xAxis->setLabel(tr("energy (%1)").arg(sc.unit));
    m_plot->xAxis->setRange(0, top * sc.factor * 1.12);
    m_plot->replot(QCustomPlot::rpQueuedReplot);

    const RATree& t = fallback ? m_doc->lastValidTree() : m_doc->tree();
    const Network& net = *m_doc->network();
    const auto segs = segmentFigures(*e, t, net);
    const QStringList names = displayLayerNames(net);
    m_segments->setRowCount(int(segs.size()));
    for (int i = 0; i < int(segs.size()); ++i) {
        const SegmentFigures& sg = segs[size_t(i)];
        const RANode& n = t.node(sg.node);
        const QString name = n.type == NodeType::Leaf ? names.value(n.layer)
                                                      : QStringLiteral("%1 %2")
                                                            .arg(QString::fromStdString(sg.path))
                                                            .arg(QLatin1String(toString(n.type)));
        m_segments->setItem(i, 0, item(name));
        m_segments->setItem(i, 1, item(QString::number(sg.layers), true));
        auto* time = item(timeText(sg.time, ghz), true);
        time->setToolTip(tr("%1 invocation(s) of %2")
                             .arg(sg.invocations)
                             .arg(timeText(sg.timePerInvocation, ghz)));
        m_segments->setItem(i, 2, time);
        m_segments->setItem(i, 3, item(energyText(sg.energy), true));
        m_segments->setItem(i, 4, item(QString::fromLatin1(toString(sg.bound))));
        m_segments->setItem(i, 5, item(timeText(sg.start, ghz), true));
        m_segments->setItem(i, 6, item(timeText(sg.share, ghz), true));
    }
    m_segments->resizeColumnsToContents();
}

} // namespace tilescope::ui
