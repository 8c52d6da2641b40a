#include "widgets/layerspanel.h"

#include "core/bytestext.h"
#include "core/document.h"
#include "core/layersmodel.h"
#include "core/selectionstate.h"
#include "report/layers.h"

#include <QActionGroup>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

namespace tilescope::ui {

LayersPanel::LayersPanel(Document* doc, SelectionState* selection, QWidget* parent)
    : QWidget(parent), m_doc(doc), m_selection(selection), m_model(new LayersModel(doc, this)),
      m_proxy(new QSortFilterProxyModel(this)), m_view(new QTableView(this)),
      m_summary(new QLabel(this)) {
    setObjectName(QStringLiteral("layersPanel"));
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(2, 2, 2, 2);
    m_summary->setObjectName(QStringLiteral("layersSummary"));
    m_summary->setWordWrap(true);
    lay->addWidget(m_summary);
    lay->addWidget(m_view, 1);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(LayersModel::SortRole);
    m_view->setObjectName(QStringLiteral("layersTable"));
    m_view->setModel(m_proxy);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(LayersModel::Name, Qt::AscendingOrder);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->verticalHeader()->hide();
    m_view->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_view->horizontalHeader()->setSectionResizeMode(LayersModel::Name, QHeaderView::Interactive);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->setColumnWidth(LayersModel::Name, 150);
    m_view->setTextElideMode(Qt::ElideLeft);
    m_view->setAlternatingRowColors(true);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& cur) {
                if (m_syncing || !cur.isValid()) return;
                const int node = cur.data(LayersModel::NodeRole).toInt();
                m_selection->select(node, QString::fromStdString(m_doc->tree().pathOf(node)));
            });
    connect(m_selection, &SelectionState::changed, this, &LayersPanel::selectionChanged);
    connect(m_model, &QAbstractItemModel::modelReset, this, [this] {
        updateSummary();
        selectionChanged(m_selection->node());
        updateLayoutActions();
    });
    buildLayoutMenus();
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_view, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        // Only a template with a run model has anything to offer here.
        if (!m_layoutsMenu->isEnabled()) return;
        QMenu menu;
        menu.addMenu(m_pinMenu);
        menu.addMenu(m_layoutsMenu);
        menu.exec(m_view->viewport()->mapToGlobal(pos));
    });
    updateSummary();
    updateLayoutActions();
}

void LayersPanel::buildLayoutMenus() {
    m_pinMenu = new QMenu(tr("Pin output &layout"), this);
    m_pinMenu->setObjectName(QStringLiteral("pinLayoutMenu"));
    m_pinGroup = new QActionGroup(this);
    m_pinGroup->setExclusionPolicy(QActionGroup::ExclusionPolicy::ExclusiveOptional);
    m_layoutsMenu = new QMenu(tr("DRAM &layouts"), this);
    m_layoutsMenu->setObjectName(QStringLiteral("dramLayoutsMenu"));
    m_choiceGroup = new QActionGroup(this);
    QAction* planned = m_layoutsMenu->addAction(tr("auto (planned)"));
    planned->setData(QStringLiteral("auto"));
    planned->setCheckable(true);
    m_choiceGroup->addAction(planned);
    for (DramLayout l : kLayouts) {
        const QString name = QString::fromLatin1(layoutName(l));
        QAction* pin = m_pinMenu->addAction(name);
        pin->setData(name);
        pin->setCheckable(true);
        m_pinGroup->addAction(pin);
        QAction* all = m_layoutsMenu->addAction(tr("%1 for every tensor").arg(name));
        all->setData(name);
        all->setCheckable(true);
        m_choiceGroup->addAction(all);
    }
    m_pinMenu->addSeparator();
    m_unpin = m_pinMenu->addAction(tr("&Unpin (planned again)"));
    connect(m_pinGroup, &QActionGroup::triggered, this, [this](QAction* a) {
        const std::string tensor = m_model->outputTensor(m_model->rowOfNode(m_selection->node()));
        if (!tensor.empty())
            m_doc->pinLayout(tensor, layoutFromName(a->data().toString().toStdString()));
        updateLayoutActions(); // a refused pin keeps the old tick
    });
    connect(m_unpin, &QAction::triggered, this, [this] {
        const std::string tensor = m_model->outputTensor(m_model->rowOfNode(m_selection->node()));
        if (!tensor.empty()) m_doc->pinLayout(tensor, std::nullopt);
    });
    connect(m_choiceGroup, &QActionGroup::triggered, this, [this](QAction* a) {
        const auto c = layoutChoiceFromName(a->data().toString().toStdString());
        if (!c) return;
        LayoutChoice next = m_doc->layouts();
        next.planned = c->planned;
        next.fixed = c->fixed;
        m_doc->setLayouts(next, tr("DRAM layouts: %1").arg(a->data().toString()));
    });
    connect(m_selection, &SelectionState::changed, this, &LayersPanel::updateLayoutActions);
    connect(m_doc, &Document::documentReset, this, &LayersPanel::updateLayoutActions);
}

void LayersPanel::updateLayoutActions() {
    const bool runModel = dramRunModel(*m_doc->hardware()).active();
    const LayoutChoice& c = m_doc->layouts();
    // Templates without a run model show none of it, in the menus either.
    m_layoutsMenu->setEnabled(runModel);
    m_layoutsMenu->menuAction()->setVisible(runModel);
    m_pinMenu->menuAction()->setVisible(runModel);
    const QString choice = QString::fromStdString(layoutChoiceName(c));
    for (QAction* a : m_choiceGroup->actions())
        a->setChecked(a->data().toString() == choice);
    const std::string tensor = m_model->outputTensor(m_model->rowOfNode(m_selection->node()));
    const bool pinnable = runModel && m_model->layoutsActive() && !tensor.empty();
    m_pinMenu->setEnabled(pinnable);
    const auto pin = c.pins.find(tensor);
    const QString pinned =
        pin == c.pins.end() ? QString() : QString::fromLatin1(layoutName(pin->second));
    for (QAction* a : m_pinGroup->actions())
        a->setChecked(pinnable && a->data().toString() == pinned);
    m_unpin->setEnabled(pinnable && !pinned.isEmpty());
}

void LayersPanel::selectionChanged(int node) {
    const int row = m_model->rowOfNode(node);
    m_syncing = true;
    if (row < 0) {
        m_view->clearSelection();
    } else {
        const QModelIndex idx = m_proxy->mapFromSource(m_model->index(row, 0));
        m_view->setCurrentIndex(idx);
        m_view->scrollTo(idx);
    }
    m_syncing = false;
}

void LayersPanel::updateSummary() {
    auto e = m_doc->evaluation();
    QString lead;
    if (m_model->stale()) {
        lead = tr("<b>The current tree is invalid</b> (%1): the last valid schedule, faded. ")
                   .arg(QString::fromStdString(e->reason).toHtmlEscaped());
        e = m_doc->lastValidEvaluation();
    }
    if (!m_doc->hasModel() || !e || !e->valid) {
        m_summary->setText(tr("No valid schedule: nothing to bound."));
        return;
    }
    double moved = 0, bound = 0, array = 0, arrayBound = 0;
    int over = 0;
    for (const LayerFigures& f : m_model->figures()) {
        moved += f.movedBytes;
        bound += f.ioLowerBoundBytes;
        over += f.ratio > 2;
        array += f.arrayBytes;
        arrayBound += f.arrayLowerBoundBytes;
    }
    const Bytes compulsory =
        compulsoryDramBytes(*m_doc->network(), *m_doc->hardware(), m_doc->batch());
    m_summary->setText(
        lead +
        tr("DRAM %1 (compulsory %2, %3x); leaves move %4 against bounds of %5; %6 of %7 "
           "leaves move more than twice their bound. Buffers <-> arrays: %8 against %9.")
            .arg(bytesText(e->dramBytes), bytesText(compulsory))
            .arg(compulsory > 0 ? e->dramBytes / compulsory : 0.0, 0, 'f', 2)
            .arg(bytesText(moved), bytesText(bound))
            .arg(over)
            .arg(m_model->figures().size())
            .arg(bytesText(array), bytesText(arrayBound)) +
        (e->blockedLeaves > 0 ? tr(" Blocked leaves %1 (Blocks column).")
                                    .arg(blockedLeavesText(e->blockedLeaves, e->blockingDramBytes))
                              : QString()) +
        layoutsSummary(*e));
}

QString LayersPanel::layoutsSummary(const Evaluation& e) const {
    if (!e.layouts.active) return {};
    // The layout columns sit at the table's right end: say here that they are there and
    // what they add up to (the leaves' DRAM bytes over what the DRAM is held for).
    double bytes = 0, held = 0;
    for (const LayerFigures& f : m_model->figures()) {
        bytes += f.dramBytes;
        held += f.runEfficiency > 0 ? f.dramBytes / f.runEfficiency : 0;
    }
    const auto& c = e.layouts.choice;
    return tr(" DRAM layouts %1%2: runs %3 % efficient overall (Out layout, Run eff.; "
              "right-click a row to pin its output's layout).")
        .arg(QString::fromStdString(layoutChoiceName(c)),
             c.pins.empty() ? QString() : tr(", %n pinned", nullptr, int(c.pins.size())))
        .arg(held > 0 ? bytes / held * 100 : 100.0, 0, 'f', 1);
}

} // namespace tilescope::ui
