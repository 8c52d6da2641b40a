#include "widgets/treepanel.h"

#include "core/document.h"
#include "core/ratreemodel.h"
#include "core/selectionstate.h"

#include <QAction>
#include <QHeaderView>
#include <QMenu>
#include <QTreeView>
#include <QVBoxLayout>
#include <algorithm>
#include <functional>

namespace tilescope::ui {

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
    m_view->setContextMenuPolicy(Qt::ActionsContextMenu);
    m_view->header()->setSectionResizeMode(QHeaderView::Interactive);
    // The figures a user compares come right after the name, so a narrow dock (1280x800)
    // shows name, time, energy and pin rather than name, layers and tiles.
    QHeaderView* h = m_view->header();
    int to = h->visualIndex(RATreeModel::Name);
    for (int c : {RATreeModel::Time, RATreeModel::Energy, RATreeModel::Pinned, RATreeModel::Batch})
        h->moveSection(h->visualIndex(c), ++to);
    h->resizeSection(RATreeModel::Name, 140);
    h->resizeSection(RATreeModel::Time, 96);
    h->resizeSection(RATreeModel::Energy, 70);
    h->resizeSection(RATreeModel::Tiles, 110);
    h->resizeSection(RATreeModel::InTile, 70);
    for (int c : {RATreeModel::Layers, RATreeModel::Batch, RATreeModel::Pinned})
        h->resizeSection(c, 56);

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

void TreePanel::resizeEvent(QResizeEvent* e) {
    QWidget::resizeEvent(e);
    QHeaderView* h = m_view->header();
    const int rest = h->sectionSize(RATreeModel::Time) + h->sectionSize(RATreeModel::Energy) +
                     h->sectionSize(RATreeModel::Pinned) + 4;
    h->resizeSection(RATreeModel::Name, std::max(140, m_view->viewport()->width() - rest));
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

} // namespace tilescope::ui
