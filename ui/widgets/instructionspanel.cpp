#include "widgets/instructionspanel.h"

#include "core/bytestext.h"
#include "core/document.h"
#include "core/programmodel.h"
#include "core/programrunner.h"
#include "core/selectionstate.h"
#include "sim/fidelity.h"
#include "widgets/axisfit.h"
#include "widgets/unitticker.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLocale>
#include <QResizeEvent>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <qcustomplot.h>

namespace tilescope::ui {

namespace {
double pct(double a, double b) {
    return b > 0 ? 100.0 * (a - b) / b : 0.0;
}
} // namespace

InstructionsPanel::InstructionsPanel(Document* doc, SelectionState* selection,
                                     ProgramRunner* runner, QWidget* parent)
    : QWidget(parent), m_doc(doc), m_selection(selection), m_runner(runner),
      m_model(new ProgramModel(this)), m_tiles(new QComboBox(this)),
      m_filter(new QCheckBox(tr("Only the selected node"), this)), m_view(new QTableView(this)),
      m_summary(new QLabel(this)), m_dram(new QCustomPlot(this)) {
    setObjectName(QStringLiteral("instructionsPanel"));
    m_tiles->setObjectName(QStringLiteral("instructionsTile"));
    m_filter->setObjectName(QStringLiteral("instructionsFilter"));
    m_view->setObjectName(QStringLiteral("instructionsView"));
    m_summary->setObjectName(QStringLiteral("instructionsSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Tile:"), this));
    top->addWidget(m_tiles);
    top->addWidget(m_filter);
    top->addStretch(1);
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(2, 2, 2, 2);
    lay->addLayout(top);
    lay->addWidget(m_summary);
    // The chart above the table in a splitter: in a short dock (1280x800) the table keeps
    // its header and a few rows and the chart gives way, rather than the other way round.
    auto* split = new QSplitter(Qt::Vertical, this);
    split->setObjectName(QStringLiteral("instructionsSplit"));
    split->setChildrenCollapsible(false);
    split->addWidget(m_dram);
    split->addWidget(m_view);
    split->setStretchFactor(1, 1);
    lay->addWidget(split, 1);
    m_view->setMinimumHeight(m_view->horizontalHeader()->sizeHint().height() +
                             4 * (m_view->fontMetrics().height() + 4) + 4);

    m_dram->setObjectName(QStringLiteral("instructionsDram"));
    m_dram->setMinimumHeight(fontMetrics().height() * 5);
    m_dram->setMaximumHeight(fontMetrics().height() * 10);
    m_dram->setToolTip(
        tr("The DRAM bandwidth the replay has in use over time (bytes/cycle), against the "
           "template's (dashed). Where it drops while the program runs, the DRAM waits for "
           "the program, not the program for the DRAM (docs/isa.md, \"Perfetto trace\")."));
    m_dram->xAxis->setLabel(tr("time (cycles)"));
    // "2·10⁵" as on the S-T graph and the search plot, not "200000".
    setLinearUnitAxis(m_dram->xAxis, LogUnitTicker::Quantity::Number);
    m_dram->yAxis->setLabel(tr("DRAM B/cycle"));
    auto* use = m_dram->addGraph();
    use->setLineStyle(QCPGraph::lsStepLeft);
    use->setPen(QPen(QColor(21, 101, 192), 1.5));
    use->setBrush(QColor(21, 101, 192, 60));
    auto* cap = m_dram->addGraph();
    cap->setPen(QPen(QColor(120, 120, 120), 1, Qt::DashLine));
    fitAxisTicks(m_dram);
    m_dram->hide();

    m_view->setModel(m_model);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setAlternatingRowColors(true);
    m_view->verticalHeader()->hide();
    // Tens of thousands of rows: fixed row heights keep scrolling cheap.
    m_view->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 4);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->setWordWrap(false);
    const int w = m_view->fontMetrics().horizontalAdvance(QLatin1Char('0'));
    const int widths[] = {7, 5, 8, 8, 16, 11, 14, 20, 10, 10};
    for (int c = 0; c < ProgramModel::ColumnCount; ++c)
        m_view->setColumnWidth(c, widths[c] * w + 12);

    m_tiles->addItem(tr("All tiles"), ProgramModel::kAllTiles);
    connect(m_tiles, &QComboBox::currentIndexChanged, this,
            [this](int i) { m_model->setTile(m_tiles->itemData(i).toInt()); });
    connect(m_filter, &QCheckBox::toggled, m_model, &ProgramModel::setFilterToLayers);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& cur) { rowActivated(cur.row()); });
    connect(m_runner, &ProgramRunner::runReady, this, &InstructionsPanel::showRun);
    connect(m_runner, &ProgramRunner::runStarted, this, [this] {
        if (!m_model->run())
            m_summary->setText(tr("Generating the program..."));
        else
            m_summary->setText(summarize(*m_model->run()) + tr("  (regenerating...)"));
    });
    connect(m_doc, &Document::documentReset, this,
            [this] { rebuildTileSelector(m_doc->hardware()->tiles()); });
    connect(m_selection, &SelectionState::changed, this, &InstructionsPanel::selectionChanged);
    rebuildTileSelector(m_doc->hardware() ? m_doc->hardware()->tiles() : 0);
    m_summary->setText(tr("No program yet: open a model"));
    if (auto run = m_runner->current()) showRun(run);
}

void InstructionsPanel::resizeEvent(QResizeEvent* e) {
    QWidget::resizeEvent(e);
    fitChart();
}

// The listing keeps its header and about six rows; the chart shows (when there is a replay
// to draw) once the panel is tall enough for both, the summary at its wrapped height (its
// tooltip and docs/gui.md say what it draws). Checked on every resize and every new run:
// a run's longer summary takes room without resizing the panel.
void InstructionsPanel::fitChart() {
    const int row = m_view->verticalHeader()->defaultSectionSize();
    const int summary =
        std::max(m_summary->height(), m_summary->heightForWidth(m_summary->width()));
    const bool room = height() >= summary + 10 * row + fontMetrics().height() * 8;
    const bool show = m_chartData && room;
    if (m_dram->isVisibleTo(this) != show) m_dram->setVisible(show);
}

void InstructionsPanel::rebuildTileSelector(int tiles) {
    if (m_tiles->count() == tiles + 1) return;
    const QSignalBlocker block(m_tiles);
    const int keep = m_tiles->currentData().toInt();
    m_tiles->clear();
    m_tiles->addItem(tr("All tiles"), ProgramModel::kAllTiles);
    for (int t = 0; t < tiles; ++t)
        m_tiles->addItem(tr("Tile %1").arg(t), t);
    const int i = m_tiles->findData(keep);
    m_tiles->setCurrentIndex(i < 0 ? 0 : i);
    m_model->setTile(m_tiles->currentData().toInt());
}

QString InstructionsPanel::summarize(const ProgramRun& run) {
    if (!run.codegen) return tr("No program: %1").arg(run.error);
    const QLocale loc;
    const auto& p = run.codegen->program;
    QString s = tr("%1 instructions on %2 tiles | DRAM bytes: program %3 vs schedule %4 (%5%)")
                    .arg(loc.toString(qulonglong(p.instructionCount())))
                    .arg(p.tiles.size())
                    .arg(bytesText(double(run.codegen->programDramBytes)))
                    .arg(bytesText(run.scheduleDramBytes))
                    .arg(QString::asprintf("%+.3f", pct(double(run.codegen->programDramBytes),
                                                        run.scheduleDramBytes)));
    if (!run.error.isEmpty())
        return s + QStringLiteral(" | ") + tr("not replayed: %1").arg(run.error);
    const ModelAgreement agree = modelAgreement(run.fine.delay, run.evaluatorDelay);
    s += tr(" | delay: simulated %1 vs evaluator %2 (ratio %3)")
             .arg(cyclesText(run.fine.delay), cyclesText(run.evaluatorDelay))
             .arg(run.evaluatorDelay > 0 ? QString::number(agree.ratio, 'f', 3) : tr("n/a"));
    if (!agree.agrees)
        s += tr(" | WARNING: the program and the estimate differ by more than %1%")
                 .arg(100 * kModelTolerance, 0, 'f', 0);
    s += run.fine.deadlockFree ? tr(" | deadlock-free")
                               : tr(" | DEADLOCK: %1").arg(QString::fromStdString(run.fine.stuck));
    s += tr(" | fine vs coarse dependencies: speed-up %1x").arg(run.speedUp(), 0, 'f', 3);
    return s;
}

QString InstructionsPanel::summaryText() const {
    return m_summary->text();
}

void InstructionsPanel::showRun(std::shared_ptr<const ProgramRun> run) {
    if (run->codegen) rebuildTileSelector(int(run->codegen->program.tiles.size()));
    m_model->setRun(run);
    m_summary->setText(summarize(*run));
    showDram(*run);
    const bool agrees = !run->ok() || modelAgreement(run->fine.delay, run->evaluatorDelay).agrees;
    m_summary->setStyleSheet(run->ok() && run->fine.deadlockFree && agrees
                                 ? QString()
                                 : QStringLiteral("color: #b00020"));
    selectionChanged(m_selection->node());
}

void InstructionsPanel::showDram(const ProgramRun& run) {
    const auto& use = run.fine.dramInUse;
    m_chartData = run.ok() && !use.empty() && run.fine.delay > 0;
    fitChart();
    if (!m_chartData) return;
    QVector<double> keys, values;
    for (const auto& [from, bytesPerCycle] : use) {
        keys.push_back(from);
        values.push_back(bytesPerCycle);
    }
    m_dram->graph(0)->setData(keys, values, true);
    m_dram->graph(1)->setData({0.0, run.fine.delay}, {run.dramBytesPerCycle, run.dramBytesPerCycle},
                              true);
    m_dram->xAxis->setRange(0, std::max(run.fine.delay, keys.back()));
    m_dram->yAxis->setRange(
        0, 1.1 * std::max(run.dramBytesPerCycle, *std::max_element(values.begin(), values.end())));
    m_dram->replot();
}

void InstructionsPanel::selectionChanged(int node) {
    QSet<int> layers;
    const RATree& tree = m_doc->tree();
    if (node >= 0 && node < tree.size())
        for (int l : tree.layersUnder(node))
            layers.insert(l);
    m_model->setLayers(layers);
    if (m_selecting || layers.isEmpty()) return;
    // Bring the node's first instruction into view without making it the current row
    // (that would select its leaf and narrow a cut's selection).
    for (int r = 0; r < m_model->rowCount(); ++r)
        if (m_model->isHighlighted(r) || m_model->filterToLayers()) {
            m_view->scrollTo(m_model->index(r, 0), QAbstractItemView::PositionAtTop);
            break;
        }
}

void InstructionsPanel::rowActivated(int row) {
    const Instruction* ins = m_model->instructionAt(row);
    if (!ins) return;
    const RATree& tree = m_doc->tree();
    const int leaf = tree.leafOf(ins->layer);
    if (leaf < 0 || leaf == m_selection->node()) return;
    m_selecting = true;
    m_selection->select(leaf, QString::fromStdString(tree.pathOf(leaf)));
    m_selecting = false;
}

} // namespace tilescope::ui
