#include "widgets/stgraphview.h"

#include "core/backgroundjob.h"
#include "core/bytestext.h"
#include "core/document.h"
#include "core/layernames.h"
#include "core/livebestpreview.h"
#include "core/programrun.h"
#include "core/programrunner.h"
#include "core/selectionstate.h"
#include "report/layers.h"
#include "report/node_scope.h"
#include "widgets/axisfit.h"
#include "widgets/palette.h"
#include "widgets/plotexport.h"
#include "widgets/stgraphplottable.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QListView>
#include <QStandardItemModel>
#include <QToolTip>
#include <QVBoxLayout>
#include <QWheelEvent>
#include <climits>
#include <qcustomplot.h>

namespace tilescope::ui {

StGraphView::StGraphView(Document* doc, SelectionState* selection, QWidget* parent)
    : QWidget(parent), m_doc(doc), m_selection(selection), m_plot(new QCustomPlot(this)),
      m_timelineBox(new QComboBox(this)), m_colourBox(new QComboBox(this)) {
    setObjectName(QStringLiteral("stGraph"));
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    lay->setSpacing(0);
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(6, 2, 6, 2);
    bar->addWidget(new QLabel(tr("Timeline:"), this));
    m_timelineBox->setObjectName(QStringLiteral("stTimeline"));
    m_timelineBox->addItem(tr("Evaluator"));
    m_timelineBox->addItem(tr("Simulated program"));
    m_timelineBox->addItem(tr("Both (evaluator above, simulator below)"));
    m_timelineBox->setToolTip(
        tr("The simulator replays the generated instructions: compute as full rows, "
           "loads as thin bars at the top of a row, stores / sends at the bottom"));
    m_timelineBox->setEnabled(false); // until a program runner is attached
    bar->addWidget(m_timelineBox);
    bar->addSpacing(12);
    bar->addWidget(new QLabel(tr("Colour:"), this));
    m_colourBox->setObjectName(QStringLiteral("stColouring"));
    m_colourBox->addItem(tr("Layer"));
    m_colourBox->addItem(tr("Efficiency (moved / bound)"));
    m_colourBox->setToolTip(
        tr("Efficiency: each leaf's bytes across its tile group's boundary (DRAM + NoC in + "
           "out) over its I/O lower bound; green at the bound, amber at 2x, red at 4x and "
           "above, grey without a bound (Layers table)"));
    // A colouring with a tooltip of its own, shown over its entry in the list.
    auto addColouring = [this](const QString& text, const QString& tip) {
        m_colourBox->addItem(text);
        m_colourBox->setItemData(m_colourBox->count() - 1, tip, Qt::ToolTipRole);
    };
    addColouring(
        tr("Programming time (CIM)"),
        tr("Compute-in-memory tiles: the share of each leaf's time spent writing weights into "
           "its crossbars, pale blue (none) to deep magenta (all); grey for leaves without "
           "crossbar weights and on MAC-array templates"));
    addColouring(
        tr("Efficiency, buffers <-> arrays"),
        tr("Each leaf's bytes between its tiles' buffers and their PE arrays / vector units over "
           "the least any mapping of it on its group moves (docs/cost-model.md §2a, \"Two "
           "levels\"); positive for every leaf, so in-place leaves get a colour too: green at "
           "the bound, amber at 2x, red at 4x and above"));
    addColouring(tr("DRAM run efficiency"),
                 tr("Templates with a DRAM run model: each leaf's DRAM bytes over the bytes the "
                    "DRAM is held for (bursts' padding and each run's overhead added), on the "
                    "efficiency scale: green at 100 %, amber at 50 %, red at 25 % and below; "
                    "grey without DRAM traffic (Layers table, Run eff.)"));
    connect(m_colourBox, &QComboBox::currentIndexChanged, this,
            [this](int i) { setColouring(Colouring(i)); });
    bar->addWidget(m_colourBox);
    bar->addStretch(1);
    lay->addLayout(bar);
    // What the colours and the halves of a row mean, under the choices that set them; it
    // takes no width of its own (the docks beside the graph keep theirs at 1280x800).
    m_key = new QLabel(this);
    m_key->setObjectName(QStringLiteral("stColourKey"));
    m_key->setTextFormat(Qt::RichText);
    m_key->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_key->setWordWrap(true); // a second line rather than a cut one in a narrow panel
    m_key->setContentsMargins(6, 0, 6, 2);
    lay->addWidget(m_key);
    m_banner = new QLabel(this);
    m_banner->setObjectName(QStringLiteral("stInvalidBanner"));
    m_banner->setWordWrap(true);
    m_banner->setStyleSheet(
        QStringLiteral("QLabel{color:#c62828;background:#ffebee;padding:3px 6px}"));
    m_banner->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_banner->hide();
    lay->addWidget(m_banner);
    lay->addWidget(m_plot, 1);
    m_plot->setObjectName(QStringLiteral("stGraphPlot"));
    m_plot->setFocusPolicy(Qt::StrongFocus);
    m_plot->setMouseTracking(true);
    m_plot->setNoAntialiasingOnDrag(true);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    fitAxisTicks(m_plot);
    m_plot->axisRect()->setRangeDrag(Qt::Horizontal | Qt::Vertical);
    m_plot->axisRect()->setRangeZoom(Qt::Horizontal);
    m_plot->xAxis->setLabel(tr("time (cycles)"));
    m_plot->xAxis->setNumberFormat(QStringLiteral("gb"));
    m_plot->xAxis->setNumberPrecision(3);
    // Few enough ticks that "1.25·10⁶" labels never touch.
    m_plot->xAxis->ticker()->setTickCount(5);
    m_plot->yAxis->setLabel(tr("tile"));
    m_plot->yAxis->setRangeReversed(true); // tile 0 on top, like a listing
    m_plot->yAxis->grid()->setVisible(false);
    m_rects = new StGraphPlottable(m_plot->xAxis, m_plot->yAxis);
    m_sim = new StGraphPlottable(m_plot->xAxis, m_plot->yAxis);
    m_sim->setVisible(false);
    m_ghost = new StGraphPlottable(m_plot->xAxis, m_plot->yAxis);
    m_ghost->setGhost(true);
    m_ghost->setVisible(false);
    m_ghost->setSelectable(QCP::stNone);
    // The overlay's legend sits inside the plot (top right): a label in the bar above
    // would widen the panel and squeeze the docks beside it at 1280x800.
    m_liveBestLegend = new QCPItemText(m_plot);
    m_liveBestLegend->setObjectName(QStringLiteral("stLiveBestLegend"));
    m_liveBestLegend->position->setType(QCPItemPosition::ptAxisRectRatio);
    m_liveBestLegend->position->setCoords(1, 0);
    m_liveBestLegend->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
    m_liveBestLegend->setText(tr("blue dashed: the search's best so far"));
    m_liveBestLegend->setColor(QColor(21, 101, 192));
    m_liveBestLegend->setBrush(QColor(255, 255, 255, 225));
    m_liveBestLegend->setPadding(QMargins(4, 2, 4, 2));
    m_liveBestLegend->setClipToAxisRect(true);
    m_liveBestLegend->setVisible(false);
    connect(m_timelineBox, &QComboBox::currentIndexChanged, this,
            [this](int i) { setTimeline(Timeline(i)); });
    m_plot->installEventFilter(this);

    connect(m_plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) { hover(e->pos()); });
    connect(m_plot, &QCustomPlot::mousePress, this,
            [this](QMouseEvent* e) { m_pressPos = e->pos(); });
    connect(m_plot, &QCustomPlot::mouseRelease, this, [this](QMouseEvent* e) {
        if ((e->pos() - m_pressPos).manhattanLength() > 4 || e->button() != Qt::LeftButton) return;
        StGraphPlottable* which = nullptr;
        const int i = hitAt(e->pos(), &which);
        if (i < 0) {
            m_selection->clear();
            return;
        }
        const RATree& tree = which == m_sim ? m_simTree : m_tree;
        const int node = which->shownLayout()->rects()[size_t(i)].node;
        if (node >= 0 && node < tree.size())
            m_selection->select(node, QString::fromStdString(tree.pathOf(node)));
    });
    connect(m_plot, &QCustomPlot::mouseDoubleClick, this,
            [this](QMouseEvent* e) { expandRowAt(e->pos()); });
    // The tile axis says when its rows follow the snake order and when they are groups of
    // tiles (the grouping follows the zoom).
    connect(m_plot, &QCustomPlot::beforeReplot, this, [this] {
        const auto layout = m_rects->layout();
        const int g = layout ? m_rects->rowTiles() : 1;
        QString label = layout && layout->rowOrder().snake() ? tr("tile, snake order") : tr("tile");
        if (g > 1) label += tr(" (rows of %1 tiles)").arg(g);
        if (m_plot->yAxis->label() != label) m_plot->yAxis->setLabel(label);
    });
    connect(m_doc, &Document::documentReset, this, [this] {
        m_rescalePending = true;
        updateOfferedColourings();
    });
    updateOfferedColourings();
    connect(m_doc, &Document::treeChanged, this, [this] { documentChanged(false); });
    connect(m_selection, &SelectionState::changed, this, &StGraphView::selectionChanged);
    documentChanged(true);
}

QString StGraphView::bannerText() const {
    return m_banner->isVisible() || !m_banner->text().isEmpty() ? m_banner->text() : QString();
}

void StGraphView::setColouring(Colouring c) {
    m_colouring = c;
    if (m_colourBox->currentIndex() != int(c)) m_colourBox->setCurrentIndex(int(c));
    applyColouring();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

bool StGraphView::colouringOffered(Colouring c) const {
    if (c != Colouring::DramRuns) return true;
    return dramRunModel(*m_doc->hardware()).active();
}

void StGraphView::updateOfferedColourings() {
    // The entry stays in the list (its index is the Colouring) but is hidden and disabled
    // where it has nothing to show; a template without a run model falls back to Layer.
    auto* items = qobject_cast<QStandardItemModel*>(m_colourBox->model());
    auto* list = qobject_cast<QListView*>(m_colourBox->view());
    const bool offered = colouringOffered(Colouring::DramRuns);
    if (QStandardItem* item = items ? items->item(int(Colouring::DramRuns)) : nullptr)
        item->setEnabled(offered);
    if (list) list->setRowHidden(int(Colouring::DramRuns), !offered);
    if (!offered && m_colouring == Colouring::DramRuns) setColouring(Colouring::Layer);
}

void StGraphView::applyColouring() {
    std::vector<QColor> colors;
    const auto eval = m_doc->evaluation();
    const bool array = m_colouring == Colouring::ArrayEfficiency;
    if ((m_colouring == Colouring::Efficiency || array) && m_doc->hasModel() && eval &&
        eval->valid) {
        colors.assign(m_doc->network()->layers.size(), efficiencyColor(0));
        for (const LayerFigures& f :
             layerFigures(*eval, m_doc->tree(), *m_doc->network(), *m_doc->hardware()))
            colors[size_t(f.layer)] = efficiencyColor(array ? f.arrayRatio : f.ratio);
    }
    if (m_colouring == Colouring::DramRuns && m_doc->hasModel() && eval && eval->valid) {
        // Held / moved on the efficiency scale: 100 % is 1x (green), 25 % is 4x (red).
        colors.assign(m_doc->network()->layers.size(), efficiencyColor(0));
        for (const LayerFigures& f :
             layerFigures(*eval, m_doc->tree(), *m_doc->network(), *m_doc->hardware()))
            if (f.dramBytes > 0 && f.runEfficiency > 0)
                colors[size_t(f.layer)] = efficiencyColor(1 / f.runEfficiency);
    }
    if (m_colouring == Colouring::Programming && m_doc->hasModel() && eval && eval->valid) {
        colors.assign(m_doc->network()->layers.size(), programmingColor(-1));
        const RATree& t = m_doc->tree();
        for (int id = 0; id < t.size() && size_t(id) < eval->nodes.size(); ++id) {
            const RANode& nd = t.node(id);
            const NodeFigures& f = eval->nodes[size_t(id)];
            if (nd.type == NodeType::Leaf && f.weightProgrammings > 0 && f.time > 0)
                colors[size_t(nd.layer)] = programmingColor(f.writeCycles / f.time);
        }
    }
    m_rects->setLayerColors(std::move(colors));
    updateKey();
}

namespace {
QString swatch(const QColor& c) {
    return QStringLiteral("<span style=\"color:%1\">&#9632;</span>").arg(c.name());
}
} // namespace

QString StGraphView::keyText() const {
    return m_key->text();
}

void StGraphView::updateKey() {
    QString key;
    QString tip;
    switch (m_colouring) {
    case Colouring::Layer: {
        const int layers = m_doc->hasModel() ? int(m_doc->network()->layers.size()) : 0;
        QString swatches;
        for (int l = 0; l < std::min(layers, 8); ++l)
            swatches += swatch(layerColor(l));
        key = tr("%1 one colour per layer (hover here for each layer's)").arg(swatches);
        if (layers > 0) {
            const QStringList names = displayLayerNames(*m_doc->network());
            tip = QStringLiteral("<table>");
            for (int l = 0; l < layers; ++l)
                tip += QStringLiteral("<tr><td>%1</td><td>%2</td></tr>")
                           .arg(swatch(layerColor(l)), names.value(l).toHtmlEscaped());
            tip += QStringLiteral("</table>");
        }
        break;
    }
    case Colouring::Efficiency:
    case Colouring::ArrayEfficiency:
        key = tr("moved / bound: %1 1x (at the bound) %2 2x %3 4x and above %4 no bound")
                  .arg(swatch(efficiencyColor(1)), swatch(efficiencyColor(2)),
                       swatch(efficiencyColor(4)), swatch(efficiencyColor(0)));
        break;
    case Colouring::DramRuns:
        key = tr("DRAM run efficiency: %1 100 % %2 50 % %3 25 % and below %4 no DRAM traffic")
                  .arg(swatch(efficiencyColor(1)), swatch(efficiencyColor(2)),
                       swatch(efficiencyColor(4)), swatch(efficiencyColor(0)));
        break;
    case Colouring::Programming:
        key = tr("time writing crossbars: %1 none %2 half %3 all %4 no crossbar weights")
                  .arg(swatch(programmingColor(0)), swatch(programmingColor(0.5)),
                       swatch(programmingColor(1)), swatch(programmingColor(-1)));
        break;
    }
    if (m_timeline == Timeline::Both)
        key += tr(" | each row: upper half the estimate (evaluator), lower half the replay "
                  "(simulated program)");
    else if (m_timeline == Timeline::Simulated)
        key += tr(" | the replay of the generated program (simulator)");
    m_key->setText(key);
    m_key->setToolTip(tip);
}

bool StGraphView::hasLayout() const {
    return m_rects->layout() != nullptr;
}

void StGraphView::documentChanged(bool reset) {
    if (reset) m_rescalePending = true;
    if (!m_doc->hasModel()) return;
    // Laying out tens of thousands of rectangles (tile runs, sorting) happens on the
    // thread pool; a layout overtaken by a newer edit is dropped.
    const quint64 rev = m_doc->revision();
    auto eval = m_doc->evaluation();
    RATree tree = m_doc->tree();
    // An invalid tree has no rectangles: the last valid schedule stays, faded, under the
    // reason, instead of a blank graph.
    const bool fallback = eval && !eval->valid && m_doc->lastValidEvaluation();
    if (fallback) {
        eval = m_doc->lastValidEvaluation();
        tree = m_doc->lastValidTree();
    }
    m_banner->setText(
        eval && !m_doc->evaluation()->valid
            ? tr("Invalid schedule: %1%2")
                  .arg(QString::fromStdString(m_doc->evaluation()->reason),
                       fallback ? tr("\nShowing the last valid schedule, faded.") : QString())
            : QString());
    m_banner->setVisible(!m_banner->text().isEmpty());
    const int tiles = m_doc->hardware()->tiles();
    StRowOrder rows = StRowOrder::forHardware(*m_doc->hardware());
    const QStringList names = displayLayerNames(*m_doc->network());
    // The job helper drops a layout overtaken by a newer edit (ui/core/backgroundjob.h).
    m_layoutJob.run(
        rev, [eval, tiles, names, rows] { return StLayout::build(eval, tiles, names, rows); },
        [this, tree, fallback](std::shared_ptr<const StLayout> layout, quint64) {
            m_rects->setFaded(fallback);
            showLayout(std::move(layout), tree, m_rescalePending);
            m_rescalePending = false;
        });
}

void StGraphView::showLayout(std::shared_ptr<const StLayout> layout, const RATree& tree,
                             bool rescale) {
    m_tree = tree;
    const int tiles = layout->tiles();
    // A view showing the whole schedule follows it when its length changes (an adopted
    // tree is often much shorter); a zoomed-in view stays where it is.
    if (auto old = m_rects->layout(); old && old->endCycle() > 0) {
        const QCPRange x = m_plot->xAxis->range();
        if (x.lower <= 1 && x.upper >= old->endCycle() * 0.999 &&
            std::abs(layout->endCycle() - old->endCycle()) > old->endCycle() * 1e-6)
            rescale = true;
    }
    m_rects->setLayout(std::move(layout));
    applyColouring();
    setTileTicker(m_plot->yAxis, tiles);
    if (rescale) resetZoom();
    selectionChanged(m_selection->node());
    emit layoutReady();
}

void StGraphView::setProgramRunner(ProgramRunner* runner) {
    connect(runner, &ProgramRunner::runReady, this, &StGraphView::programReady);
    m_timelineBox->setEnabled(true);
    if (auto run = runner->current()) programReady(run);
}

void StGraphView::programReady(std::shared_ptr<const ProgramRun> run) {
    if (!run->ok() || !m_doc->hasModel()) {
        m_sim->setLayout(nullptr);
        m_plot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    // The runner hands over runs of the current revision only, so the document's tree is
    // the one the program came from.
    const quint64 rev = run->revision;
    const int tiles = m_doc->hardware()->tiles();
    const QStringList names = displayLayerNames(*m_doc->network());
    RATree tree = m_doc->tree();
    StRowOrder rows = StRowOrder::forHardware(*m_doc->hardware());
    m_simJob.run(
        rev,
        [run, tiles, names, tree, rows] {
            return StLayout::fromSimulation(run, tiles, names, tree, rows);
        },
        [this, tree](std::shared_ptr<const StLayout> layout, quint64 stamp) {
            if (stamp != m_doc->revision()) return;
            m_simTree = tree;
            m_sim->setLayout(std::move(layout));
            selectionChanged(m_selection->node());
            emit simulatedLayoutReady();
        });
}

void StGraphView::setLiveBest(std::shared_ptr<const LiveBest> best) {
    m_ghost->setLayout(best ? best->layout : nullptr);
    updateLiveBestVisibility();
}

void StGraphView::setShowLiveBest(bool on) {
    m_showLiveBest = on;
    updateLiveBestVisibility();
}

void StGraphView::updateLiveBestVisibility() {
    // The live best is an evaluator layout: not drawn over the simulated timeline alone.
    const bool on = m_showLiveBest && m_ghost->layout() && m_timeline != Timeline::Simulated;
    m_ghost->setVisible(on);
    m_liveBestLegend->setVisible(on);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void StGraphView::setTimeline(Timeline t) {
    m_timeline = t;
    if (m_timelineBox->currentIndex() != int(t)) m_timelineBox->setCurrentIndex(int(t));
    m_rects->setVisible(t != Timeline::Simulated);
    m_sim->setVisible(t != Timeline::Evaluator);
    m_ghost->setBand(0, t == Timeline::Both ? 0.5 : 1); // the evaluator's band
    updateLiveBestVisibility();
    m_rects->setBand(0, t == Timeline::Both ? 0.5 : 1);
    m_sim->setBand(t == Timeline::Both ? 0.5 : 0, 1);
    updateKey();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

int StGraphView::hitAt(const QPoint& pos, StGraphPlottable** which) const {
    // In "both" each row's lower half belongs to the simulator.
    const bool lower = m_timeline == Timeline::Both && m_rects->layout() && [&] {
        // The lower half of the row (of the group's row when rows are grouped).
        const double g = m_rects->rowTiles();
        const double u = (m_rects->mapping().yToTile(pos.y()) + 0.5) / g;
        return u - std::floor(u) >= 0.5;
    }();
    StGraphPlottable* p = m_timeline == Timeline::Simulated || lower ? m_sim : m_rects;
    *which = p;
    return p->layout() ? p->rectAt(pos) : -1;
}

void StGraphView::resetZoom() {
    bool found = false;
    QCPRange k = m_rects->getKeyRange(found);
    bool simFound = false;
    if (m_sim->visible()) {
        const QCPRange s = m_sim->getKeyRange(simFound);
        if (simFound)
            k = found ? QCPRange(std::min(k.lower, s.lower), std::max(k.upper, s.upper)) : s;
    }
    if (m_ghost->visible()) { // the live best may run longer than the current schedule
        bool ghostFound = false;
        const QCPRange g = m_ghost->getKeyRange(ghostFound);
        if (ghostFound && (found || simFound)) k.upper = std::max(k.upper, g.upper);
    }
    if (found || simFound)
        m_plot->xAxis->setRange(k.lower, k.upper + std::max(1.0, k.size() * 0.01));
    const QCPRange v = m_rects->getValueRange(found);
    if (found) m_plot->yAxis->setRange(v);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void StGraphView::selectionChanged(int node) {
    std::vector<bool> leaves;
    if (node >= 0 && node < m_tree.size() && !m_selection->path().isEmpty() &&
        m_tree.nodeAtPath(m_selection->path().toStdString()) == node) {
        leaves.assign(size_t(m_tree.size()), false);
        for (int layer : m_tree.layersUnder(node)) {
            const int leaf = m_tree.leafOf(layer);
            if (leaf >= 0) leaves[size_t(leaf)] = true;
        }
    }
    m_rects->setHighlight(leaves);
    // The simulated rectangles carry leaves of the program's tree: same ids when it is
    // the current tree (the runner only delivers current runs).
    std::vector<bool> simLeaves;
    if (!leaves.empty() && m_simTree.size() == m_tree.size()) simLeaves = leaves;
    m_sim->setHighlight(std::move(simLeaves));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void StGraphView::hover(const QPoint& pos) {
    StGraphPlottable* which = nullptr;
    const int i = hitAt(pos, &which);
    if (i < 0) {
        QToolTip::hideText();
        return;
    }
    QToolTip::showText(m_plot->mapToGlobal(pos), rectToolTip(*which->shownLayout(), i), m_plot);
}

QString StGraphView::rowGroupText(const StLayout& layout, const StRect& r) const {
    if (layout.rowTiles() <= 1) return {};
    const int w = m_doc->hardware() ? m_doc->hardware()->meshX : layout.tiles();
    // The part of the mesh the row's tiles span.
    int x0 = w, x1 = -1, y0 = layout.tiles(), y1 = -1;
    for (int row = r.tile0; row <= r.tile1; ++row) {
        const int t = layout.tileOfRow(row);
        x0 = std::min(x0, t % w), x1 = std::max(x1, t % w);
        y0 = std::min(y0, t / w), y1 = std::max(y1, t / w);
    }
    const QString on =
        layout.simulated() ? tr("on one of them") : tr("on %1 of them").arg(r.covered);
    return tr("<i>rows %1-%2: %3 tiles in x %4-%5, y %6-%7, %8; zoom in (Ctrl+wheel, "
              "double-click) for single tiles</i><br>")
        .arg(r.tile0)
        .arg(r.tile1)
        .arg(r.tile1 - r.tile0 + 1)
        .arg(x0)
        .arg(x1)
        .arg(y0)
        .arg(y1)
        .arg(on);
}

// The leaf's figures in both scopes (report/node_scope.h), each named: the run's are the
// tree's and the Layers table's, word for word; one invocation's are the tree's tooltip's.
QString StGraphView::leafScopeText(const Evaluation& e, int node) const {
    if (node < 0 || node >= m_tree.size() || size_t(node) >= e.nodes.size()) return {};
    const double ghz = m_doc->hardware()->clockGHz;
    return tr("<br>leaf, per invocation (%1 samples): %2, %3<br>leaf, total over the run "
              "(%4 invocations): %5, %6")
        .arg(m_tree.node(node).batch)
        .arg(timeText(invocationTimeOf(e, node), ghz),
             energyText(invocationEnergyOf(e, m_tree, node)))
        .arg(invocationsOf(m_tree, node))
        .arg(cyclesText(runTimeOf(e, m_tree, node)), energyText(runEnergyOf(e, node)));
}

QString StGraphView::rectToolTip(const StLayout& layout, int i) const {
    const StRect& r = layout.rects()[size_t(i)];
    const QString group = rowGroupText(layout, r);
    if (layout.simulated()) {
        const auto& names = layout.run()->codegen->program.layers;
        const QString layer = r.layer >= 0 && r.layer < int(names.size())
                                  ? QString::fromStdString(names[size_t(r.layer)])
                                  : QStringLiteral("-");
        const SimInterval* iv = nullptr;
        for (const SimInterval& s : layout.run()->fine.timeline)
            if (s.id == r.instruction) iv = &s;
        return group + tr("<b>simulated %1</b> #%2<br>%3<br>tile %4<br>cycles %5 - %6: %7")
                           .arg(iv ? QString::fromLatin1(toString(iv->op)) : QString())
                           .arg(r.instruction)
                           .arg(layer.toHtmlEscaped())
                           .arg(iv ? iv->tile : layout.tileOfRow(r.tile0))
                           .arg(r.start, 0, 'f', 0)
                           .arg(r.end, 0, 'f', 0)
                           .arg(timeText(r.end - r.start, m_doc->hardware()->clockGHz));
    }
    const BusyInterval& iv = layout.evaluation().intervals[size_t(r.interval)];
    const auto& net = m_doc->network();
    const QString layer = net && r.layer >= 0 && r.layer < int(net->layers.size())
                              ? QString::fromStdString(net->layers[size_t(r.layer)].name)
                              : QString::number(r.layer);
    QStringList tiles;
    const auto runs = StLayout::tileRuns(layout.evaluation().tileOrder, iv.tileBegin, iv.tileCount);
    for (auto [a, b] : runs)
        tiles << (a == b ? QString::number(a) : QStringLiteral("%1-%2").arg(a).arg(b));
    // A group of hundreds of tiles on a large mesh: where it lies rather than every run.
    if (runs.size() > 8 && m_doc->hardware()) {
        const int w = m_doc->hardware()->meshX;
        int x0 = w, x1 = -1, y0 = INT_MAX, y1 = -1, n = 0;
        for (auto [a, b] : runs)
            for (int t = a; t <= b; ++t, ++n) {
                x0 = std::min(x0, t % w), x1 = std::max(x1, t % w);
                y0 = std::min(y0, t / w), y1 = std::max(y1, t / w);
            }
        tiles = QStringList{tr("%1 in x %2-%3, y %4-%5").arg(n).arg(x0).arg(x1).arg(y0).arg(y1)};
    }
    QString text = group + tr("<b>%1</b><br>this rectangle: samples %2..%3, cycles %4 - %5: "
                              "%6, energy %7<br>tiles %8")
                               .arg(layer.toHtmlEscaped())
                               .arg(iv.firstSample)
                               .arg(iv.lastSample)
                               .arg(iv.start, 0, 'f', 0)
                               .arg(iv.end, 0, 'f', 0)
                               .arg(timeText(iv.end - iv.start, m_doc->hardware()->clockGHz),
                                    energyText(iv.energy), tiles.join(QStringLiteral(", ")));
    text += leafScopeText(layout.evaluation(), iv.node);
    // A hatched rectangle: what its leaf's blocks split (the Layers table says why).
    if (layout.blocksOf(r) > 1) {
        const NodeFigures& f = layout.evaluation().nodes[size_t(r.node)];
        text += tr("<br>%1 per tile, +%2 DRAM over the run")
                    .arg(QString::fromStdString(f.blocking).toHtmlEscaped(),
                         bytesText(f.runBlockingDramBytes));
    }
    return text + layoutsText(layout.evaluation(), r.layer);
}

QString StGraphView::layoutsText(const Evaluation& e, int layer) const {
    if (!e.layouts.active || !m_doc->hasModel()) return {};
    for (const LayerFigures& f : layerFigures(e, m_tree, *m_doc->network(), *m_doc->hardware())) {
        if (f.layer != layer) continue;
        QStringList ins;
        for (const std::string& l : f.inputLayouts)
            ins << (l.empty() ? QStringLiteral("-") : QString::fromStdString(l));
        return tr("<br>DRAM layouts: in %1, out %2; %3 runs over the run, run efficiency %4 %")
            .arg(ins.isEmpty() ? QStringLiteral("-") : ins.join(QStringLiteral(", ")),
                 f.outputLayout.empty() ? QStringLiteral("-")
                                        : QString::fromStdString(f.outputLayout))
            .arg(f.dramRuns, 0, 'f', 0)
            .arg(f.runEfficiency * 100, 0, 'f', 1);
    }
    return {};
}

void StGraphView::zoomBy(double factor) {
    m_plot->xAxis->scaleRange(factor, m_plot->xAxis->range().center());
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void StGraphView::zoomRowsBy(double factor, double aroundTile) {
    const auto layout = m_rects->layout();
    if (!layout) return;
    QCPRange r = m_plot->yAxis->range();
    r = QCPRange(aroundTile + (r.lower - aroundTile) * factor,
                 aroundTile + (r.upper - aroundTile) * factor);
    // Never beyond all the tiles, never below one tile.
    const double lo = -0.5, hi = layout->tiles() - 0.5;
    if (r.size() >= hi - lo) r = QCPRange(lo, hi);
    if (r.size() < 1) r = QCPRange(aroundTile - 0.5, aroundTile + 0.5);
    if (r.lower < lo) r += lo - r.lower;
    if (r.upper > hi) r -= r.upper - hi;
    m_plot->yAxis->setRange(r);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void StGraphView::expandRowAt(const QPoint& pos) {
    const auto layout = m_rects->layout();
    const int g = layout ? m_rects->rowTiles() : 1;
    if (g <= 1) return;
    const int tile = m_rects->mapping().tileAtY(pos.y(), layout->tiles());
    if (tile < 0) return;
    // The group's tiles fill the plot: each its own row again.
    const int first = tile / g * g, last = std::min(layout->tiles(), first + g) - 1;
    m_plot->yAxis->setRange(first - 0.5, last + 0.5);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void StGraphView::panBy(double fraction) {
    const double d = m_plot->xAxis->range().size() * fraction;
    m_plot->xAxis->moveRange(d);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

bool StGraphView::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_plot && event->type() == QEvent::Wheel &&
        static_cast<QWheelEvent*>(event)->modifiers().testFlag(Qt::ControlModifier)) {
        // Ctrl+wheel zooms the tile axis: grouped rows expand into single tiles.
        auto* w = static_cast<QWheelEvent*>(event);
        const double at = m_rects->mapping().yToTile(w->position().y());
        zoomRowsBy(w->angleDelta().y() > 0 ? 0.7 : 1 / 0.7, at);
        return true;
    }
    if (watched == m_plot && event->type() == QEvent::KeyPress) {
        auto* k = static_cast<QKeyEvent*>(event);
        switch (k->key()) {
        case Qt::Key_Plus:
        case Qt::Key_Equal:
            zoomBy(0.7);
            return true;
        case Qt::Key_Minus:
            zoomBy(1 / 0.7);
            return true;
        case Qt::Key_Left:
            panBy(-0.15);
            return true;
        case Qt::Key_Right:
            panBy(0.15);
            return true;
        case Qt::Key_Home:
        case Qt::Key_0:
            resetZoom();
            return true;
        default:
            break;
        }
    }
    return QWidget::eventFilter(watched, event);
}

QString StGraphView::exportTo(const QString& path) {
    // The selection's dimming and the live best are not part of an exported figure.
    for (StGraphPlottable* p : {m_rects, m_sim})
        p->setHighlightSuppressed(true);
    const bool ghost = m_ghost->visible();
    m_ghost->setVisible(false);
    m_liveBestLegend->setVisible(false);
    const QString err = exportPlot(m_plot, path);
    for (StGraphPlottable* p : {m_rects, m_sim})
        p->setHighlightSuppressed(false);
    m_ghost->setVisible(ghost);
    m_liveBestLegend->setVisible(ghost);
    return err;
}

} // namespace tilescope::ui
