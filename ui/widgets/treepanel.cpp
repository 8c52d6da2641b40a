#include "widgets/treepanel.h"

#include "core/document.h"
#include "core/ratreemodel.h"
#include "core/selectionstate.h"
#include "report/mapping_json.h"
#include "util/units.h"

#include <QAction>
#include <QHeaderView>
#include <QInputDialog>
#include <QMenu>
#include <QStyle>
#include <QTreeView>
#include <QVBoxLayout>
#include <algorithm>
#include <functional>

namespace tilescope::ui {

namespace {
// The columns kept in view at any width: name, time, energy, batch/sb and pin.
constexpr RATreeModel::Column kFirstColumns[] = {RATreeModel::Name, RATreeModel::Time,
                                                 RATreeModel::Energy, RATreeModel::Batch,
                                                 RATreeModel::Pinned};
constexpr int kMinNameWidth = 100;
} // namespace

TreePanel::TreePanel(Document* doc, SelectionState* selection, QWidget* parent)
    : QWidget(parent), m_doc(doc), m_selection(selection), m_model(new RATreeModel(doc, this)),
      m_view(new QTreeView(this)) {
    setObjectName(QStringLiteral("treePanel"));
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    lay->addWidget(m_view);
    m_view->setObjectName(QStringLiteral("treeView"));
    m_view->setModel(m_model);
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setDragEnabled(true);
    m_view->setAcceptDrops(true);
    m_view->setDropIndicatorShown(true);
    m_view->setDragDropMode(QAbstractItemView::InternalMove);
    m_view->setDefaultDropAction(Qt::MoveAction);
    m_view->setUniformRowHeights(true);
    m_view->setAlternatingRowColors(true);
    // Short layer names keep their ends ("layer4.2/conv2" -> "lay...conv2") in a narrow dock.
    m_view->setTextElideMode(Qt::ElideMiddle);
    m_view->setContextMenuPolicy(Qt::ActionsContextMenu);
    m_view->header()->setSectionResizeMode(QHeaderView::Interactive);
    // The figures a user compares and edits come right after the name, so a narrow dock
    // (1280x800) shows name, time, energy, the sub-batch count and the pin box; layers,
    // NPT and tiles follow where there is room (every header has a tooltip).
    QHeaderView* h = m_view->header();
    int to = h->visualIndex(RATreeModel::Name);
    for (int c : kFirstColumns)
        if (c != RATreeModel::Name) h->moveSection(h->visualIndex(c), ++to);
    for (int c : {RATreeModel::Layers, RATreeModel::Npt, RATreeModel::Tiles})
        h->moveSection(h->visualIndex(c), ++to);
    fitColumns();
    connect(m_model, &QAbstractItemModel::modelReset, this, &TreePanel::fitColumns);

    auto add = [&](const QString& text, const QKeySequence& key, const QString& tip, auto fn) {
        auto* a = new QAction(text, this);
        a->setShortcut(key);
        a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        a->setToolTip(tip);
        connect(a, &QAction::triggered, this, fn);
        m_view->addAction(a);
        m_actions << a;
        return a;
    };
    add(tr("Wrap in S cut"), QKeySequence(Qt::Key_S),
        tr("Group the selected consecutive siblings under a new S cut"),
        [this] { wrapSelection(true); });
    add(tr("Wrap in T cut"), QKeySequence(Qt::Key_T),
        tr("Group the selected consecutive siblings under a new T cut"),
        [this] { wrapSelection(false); });
    add(tr("Dissolve cut"), QKeySequence(Qt::Key_D),
        tr("Remove the cut; its children take its place"), [this] { dissolveSelected(); });
    add(tr("Flip S/T"), QKeySequence(Qt::Key_F), tr("Turn an S cut into a T cut or back"),
        [this] { flipSelected(); });
    add(tr("More sub-batches"), QKeySequence(Qt::Key_BracketRight),
        tr("Next divisor of the cut's batch"), [this] { stepSubBatchSelected(+1); });
    add(tr("Fewer sub-batches"), QKeySequence(Qt::Key_BracketLeft),
        tr("Previous divisor of the cut's batch"), [this] { stepSubBatchSelected(-1); });
    add(tr("Pin / unpin"), QKeySequence(Qt::Key_P),
        tr("The search never changes a pinned node or its subtree"),
        [this] { togglePinSelected(); });
    add(tr("Tile count..."), QKeySequence(Qt::Key_N),
        tr("Fix the tile count of a child of an S cut (0: the allocation decides). The counts "
           "apply when every child of the cut has one and they add up to the cut's tiles"),
        [this] { askTilesSelected(); });
    add(tr("Partition..."), QKeySequence(Qt::Key_A),
        tr("Run the selected leaf on another of its alternative partitions (each costed for "
           "the leaf alone under the objective; the mapper's choice first)"),
        [this] { askPartitionSelected(); });

    connect(m_view->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this](const QModelIndex& cur) {
                if (m_syncing) return;
                const int node = m_model->nodeId(cur);
                m_selection->select(node, cur.isValid()
                                              ? cur.data(RATreeModel::NodePathRole).toString()
                                              : QString());
            });
    connect(m_selection, &SelectionState::changed, this, &TreePanel::followSelection);
    // A reset (every edit) collapses the view; keep what the user had open.
    connect(m_model, &QAbstractItemModel::modelAboutToBeReset, this, [this] {
        m_expanded.clear();
        std::function<void(const QModelIndex&)> walk = [&](const QModelIndex& parent) {
            for (int r = 0; r < m_model->rowCount(parent); ++r) {
                const QModelIndex i = m_model->index(r, 0, parent);
                if (m_view->isExpanded(i)) {
                    m_expanded.insert(i.data(RATreeModel::NodePathRole).toString());
                    walk(i);
                }
            }
        };
        walk({});
    });
    connect(m_model, &QAbstractItemModel::modelReset, this, [this] {
        if (m_firstReset || m_expanded.isEmpty()) {
            m_view->expandToDepth(0);
            m_firstReset = false;
        } else {
            for (const QString& p : std::as_const(m_expanded)) {
                const int id = m_model->tree().nodeAtPath(p.toStdString());
                if (id >= 0) m_view->setExpanded(m_model->indexOfNode(id), true);
            }
        }
    });
    connect(m_doc, &Document::documentReset, this, [this] {
        m_firstReset = true;
        m_view->expandToDepth(0);
    });
    m_view->expandToDepth(0);
}

void TreePanel::fitColumns() {
    // Each figure column as wide as its widest value or its header, whichever is more; the
    // name column takes what is left of the width, at least kMinNameWidth.
    QHeaderView* h = m_view->header();
    const QFontMetrics fm = h->fontMetrics();
    const int pad = fm.horizontalAdvance(QStringLiteral("mm")) * 3 / 4;
    std::vector<int> widest(RATreeModel::ColumnCount, 0);
    std::function<void(const QModelIndex&)> walk = [&](const QModelIndex& parent) {
        for (int r = 0; r < m_model->rowCount(parent); ++r) {
            for (int c = 0; c < RATreeModel::ColumnCount; ++c)
                widest[size_t(c)] =
                    std::max(widest[size_t(c)],
                             fm.horizontalAdvance(m_model->index(r, c, parent).data().toString()));
            walk(m_model->index(r, 0, parent));
        }
    };
    walk({});
    // Tile lists run long: the count and the first few ids, the tooltip has them all.
    widest[RATreeModel::Tiles] = std::min(widest[RATreeModel::Tiles],
                                          fm.horizontalAdvance(QStringLiteral("16: 0,1,2,3,4...")));
    widest[RATreeModel::Pinned] = m_view->style()->pixelMetric(QStyle::PM_IndicatorWidth);
    // The in-tile levels' share only where the template lists levels.
    m_view->setColumnHidden(RATreeModel::InTile, !m_model->hasLevels());
    for (int c = 0; c < RATreeModel::ColumnCount; ++c) {
        if (c == RATreeModel::Name) continue;
        int header = 0; // a header may have two lines: its longer one
        for (const QString& line :
             m_model->headerData(c, Qt::Horizontal).toString().split(QLatin1Char('\n')))
            header = std::max(header, fm.horizontalAdvance(line));
        h->resizeSection(c, std::max(header, widest[size_t(c)]) + pad);
    }
    fitNameColumn();
}

void TreePanel::fitNameColumn() {
    QHeaderView* h = m_view->header();
    int all = 0, first = 0;
    for (int c = 0; c < RATreeModel::ColumnCount; ++c) {
        if (c == RATreeModel::Name || h->isSectionHidden(c)) continue;
        all += h->sectionSize(c);
        if (std::find(std::begin(kFirstColumns), std::end(kFirstColumns), c) !=
            std::end(kFirstColumns))
            first += h->sectionSize(c);
    }
    const int room = m_view->viewport()->width() - 2;
    // All columns when the name keeps its minimum; else the first ones, the rest scroll.
    const int rest = room - all >= kMinNameWidth ? all : first;
    h->resizeSection(RATreeModel::Name, std::max(kMinNameWidth, room - rest));
}

void TreePanel::resizeEvent(QResizeEvent* e) {
    QWidget::resizeEvent(e);
    fitNameColumn();
}

void TreePanel::followSelection(int node) {
    const QModelIndex i = m_model->indexOfNode(node);
    if (m_view->currentIndex() == i) return;
    m_syncing = true;
    if (i.isValid()) {
        for (QModelIndex p = i.parent(); p.isValid(); p = p.parent())
            m_view->setExpanded(p, true);
        m_view->selectionModel()->setCurrentIndex(i, QItemSelectionModel::ClearAndSelect |
                                                         QItemSelectionModel::Rows);
        m_view->scrollTo(i);
    } else {
        m_view->selectionModel()->clearSelection();
    }
    m_syncing = false;
}

QList<int> TreePanel::selectedNodes() const {
    QList<int> out;
    for (const QModelIndex& i : m_view->selectionModel()->selectedRows(0))
        out << m_model->nodeId(i);
    if (out.isEmpty() && m_view->currentIndex().isValid())
        out << m_model->nodeId(m_view->currentIndex());
    return out;
}

int TreePanel::currentNode() const {
    const QList<int> s = selectedNodes();
    return s.isEmpty() ? -1 : s.front();
}

std::optional<Error> TreePanel::report(const QString& reason) {
    emit message(reason);
    return Error{reason.toStdString()};
}

std::optional<Error> TreePanel::wrapSelection(bool sCut) {
    QList<int> nodes = selectedNodes();
    const RATree& t = m_doc->tree();
    if (nodes.isEmpty())
        return report(tr("Wrap: select one node or a run of consecutive siblings"));
    const int parent = t.node(nodes.front()).parent;
    if (parent < 0) return report(tr("Wrap refused: the root cannot be wrapped"));
    std::vector<int> idx;
    for (int n : nodes) {
        if (t.node(n).parent != parent)
            return report(tr("Wrap refused: the selected nodes are not siblings"));
        idx.push_back(t.childIndex(n));
    }
    std::sort(idx.begin(), idx.end());
    if (idx.back() - idx.front() + 1 != int(idx.size()))
        return report(tr("Wrap refused: the selected siblings are not consecutive"));
    // Refusals from the document reach the status bar through Document::editRefused.
    return m_doc->wrap(parent, idx.front(), int(idx.size()), sCut ? NodeType::S : NodeType::T);
}

std::optional<Error> TreePanel::dissolveSelected() {
    const int n = currentNode();
    if (n < 0) return report(tr("Dissolve: select a cut"));
    return m_doc->dissolve(n);
}

std::optional<Error> TreePanel::flipSelected() {
    const int n = currentNode();
    if (n < 0) return report(tr("Flip: select a cut"));
    return m_doc->flip(n);
}

std::optional<Error> TreePanel::stepSubBatchSelected(int direction) {
    const int n = currentNode();
    if (n < 0) return report(tr("Sub-batches: select a cut"));
    return m_doc->stepSubBatch(n, direction);
}

std::optional<Error> TreePanel::togglePinSelected() {
    const int n = currentNode();
    if (n < 0) return report(tr("Pin: select a node"));
    return m_doc->setPinned(n, !m_doc->tree().node(n).pinned);
}

std::optional<Error> TreePanel::setTilesSelected(int tiles) {
    const int n = currentNode();
    if (n < 0) return report(tr("Tile count: select a child of an S cut"));
    return m_doc->setTiles(n, tiles);
}

QList<TreePanel::PartitionOption> TreePanel::partitionOptions() const {
    QList<PartitionOption> out;
    const int n = currentNode();
    const auto ev = m_doc->evaluation();
    if (n < 0 || m_doc->tree().node(n).isCut() || !ev || size_t(n) >= ev->tileCounts.size())
        return out;
    const RANode& nd = m_doc->tree().node(n);
    // What `mapping` reports of the leaf's alternatives (the same figures).
    const LayerMappingReport r =
        layerMapping(*m_doc->network(), *m_doc->hardware(), nd.layer, ev->tileCounts[size_t(n)],
                     nd.batch, m_doc->objective().n, m_doc->objective().m);
    for (size_t i = 0; i < r.alternatives.size(); ++i) {
        const auto& a = r.alternatives[i];
        PartitionOption o;
        if (i > 0) o.factors = a.factors;
        o.text = tr("%1: %2, %3%4")
                     .arg(QString::fromStdString(a.label))
                     .arg(QString::fromStdString(formatEnergy(a.energy)))
                     .arg(QString::fromStdString(formatCycles(a.cycles)))
                     .arg(i == 0 ? tr(" (the mapper's choice)") : QString());
        out << o;
    }
    return out;
}

std::optional<Error> TreePanel::setPartitionSelected(const PartitionFactors& p) {
    const int n = currentNode();
    if (n < 0 || m_doc->tree().node(n).isCut()) return report(tr("Partition: select a leaf"));
    return m_doc->setPartition(n, p);
}

void TreePanel::askPartitionSelected() {
    const QList<PartitionOption> options = partitionOptions();
    if (options.size() < 2) {
        report(tr("Partition: select a leaf with more than one partition that fits its tiles"));
        return;
    }
    const RATree& t = m_doc->tree();
    const int n = currentNode();
    QStringList items;
    int current = 0;
    for (int i = 0; i < options.size(); ++i) {
        items << options[i].text;
        if (i > 0 && options[i].factors == t.node(n).partition) current = i;
    }
    bool ok = false;
    const QString picked = QInputDialog::getItem(
        this, tr("Partition"),
        tr("Partition of %1 on its tiles (each costed for the leaf alone; the tree's cost "
           "decides):")
            .arg(QString::fromStdString(t.pathOf(n))),
        items, current, false, &ok);
    if (ok) setPartitionSelected(options[int(items.indexOf(picked))].factors);
}

void TreePanel::askTilesSelected() {
    const int n = currentNode();
    if (n < 0) {
        report(tr("Tile count: select a child of an S cut"));
        return;
    }
    const RATree& t = m_doc->tree();
    const int parent = t.node(n).parent;
    const int cutTiles =
        parent >= 0 && m_doc->evaluation() && size_t(parent) < m_doc->evaluation()->nodes.size()
            ? m_doc->evaluation()->nodes[size_t(parent)].tileCount
            : m_doc->hardware()->tiles();
    bool ok = false;
    const int tiles = QInputDialog::getInt(
        this, tr("Tile count"),
        tr("Tiles of %1 (0: the allocation decides; the counts apply when every child of the "
           "cut has one and they add up to its %2 tiles):")
            .arg(QString::fromStdString(t.pathOf(n)))
            .arg(cutTiles),
        t.node(n).tiles, 0, std::max(1, m_doc->hardware()->tiles()), 1, &ok);
    if (ok) setTilesSelected(tiles);
}

} // namespace tilescope::ui
