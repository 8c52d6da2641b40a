#include "core/ratreemodel.h"

#include "core/bytestext.h"
#include "core/document.h"
#include "core/layernames.h"
#include "report/node_scope.h"

#include <QBrush>
#include <QColor>
#include <QFont>
#include <QMimeData>
#include <QPainter>
#include <QPixmap>
#include <algorithm>

namespace tilescope::ui {

RATreeModel::RATreeModel(Document* doc, QObject* parent) : QAbstractItemModel(parent), m_doc(doc) {
    connect(doc, &Document::treeChanged, this, &RATreeModel::refresh);
    connect(doc, &Document::documentReset, this, &RATreeModel::refresh);
    refresh();
}

void RATreeModel::refresh() {
    beginResetModel();
    m_net = m_doc->network();
    m_eval = m_doc->evaluation();
    m_tree = m_net ? m_doc->tree() : RATree{};
    m_lastValid = m_eval && !m_eval->valid ? m_doc->lastValidEvaluation() : nullptr;
    m_lastValidTree = m_lastValid ? m_doc->lastValidTree() : RATree{};
    m_names = m_net ? displayLayerNames(*m_net) : QStringList();
    m_chiplets.reset();
    m_hasLevels = false;
    if (const auto hw = m_doc->hardware()) {
        m_hasLevels = !hw->levels.empty();
        auto mesh = std::make_shared<const Mesh>(*hw);
        if (mesh->hasChiplets()) m_chiplets = std::move(mesh);
    }
    endResetModel();
}

int RATreeModel::nodeId(const QModelIndex& index) const {
    if (!index.isValid()) return -1;
    return int(index.internalId());
}

QModelIndex RATreeModel::indexOfNode(int node, int column) const {
    if (node < 0 || node >= m_tree.size()) return {};
    const int row = node == m_tree.root ? 0 : m_tree.childIndex(node);
    if (row < 0) return {};
    return createIndex(row, column, quintptr(node));
}

QModelIndex RATreeModel::index(int row, int column, const QModelIndex& parent) const {
    if (row < 0 || column < 0 || column >= ColumnCount) return {};
    if (!parent.isValid()) {
        if (m_tree.empty() || row != 0) return {};
        return createIndex(0, column, quintptr(m_tree.root));
    }
    if (parent.column() != 0) return {};
    const RANode& p = m_tree.node(nodeId(parent));
    if (row >= int(p.children.size())) return {};
    return createIndex(row, column, quintptr(p.children[size_t(row)]));
}

QModelIndex RATreeModel::parent(const QModelIndex& child) const {
    if (!child.isValid()) return {};
    const int p = m_tree.node(nodeId(child)).parent;
    if (p < 0) return {};
    return indexOfNode(p, 0);
}

int RATreeModel::rowCount(const QModelIndex& parent) const {
    if (!parent.isValid()) return m_tree.empty() ? 0 : 1;
    if (parent.column() != 0) return 0;
    return int(m_tree.node(nodeId(parent)).children.size());
}

int RATreeModel::columnCount(const QModelIndex&) const {
    return ColumnCount;
}

std::vector<int> RATreeModel::tilesOf(int node) const {
    std::vector<int> tiles;
    if (!m_eval || size_t(node) >= m_eval->nodes.size()) return tiles;
    const NodeFigures& f = m_eval->nodes[size_t(node)];
    for (int p = f.tileBegin; p < f.tileBegin + f.tileCount && p < int(m_eval->tileOrder.size());
         ++p)
        tiles.push_back(m_eval->tileOrder[size_t(p)]);
    return tiles;
}

QString RATreeModel::tileText(int node) const {
    if (!m_eval || size_t(node) >= m_eval->nodes.size()) return {};
    QStringList ids;
    for (int t : tilesOf(node))
        ids << QString::number(t);
    if (ids.size() > 12) ids = ids.mid(0, 12) << QStringLiteral("...");
    const QString chips = chipletText(node);
    // A count fixed by hand or by the chiplet baseline (RANode::tiles): whether it applies.
    const int asked = m_tree.node(node).tiles;
    const QString fixed = asked <= 0           ? QString()
                          : fixedApplies(node) ? tr(" fixed")
                                               : tr(" (asks %1)").arg(asked);
    return QStringLiteral("%1%2: %3%4")
        .arg(m_eval->nodes[size_t(node)].tileCount)
        .arg(fixed, ids.join(QLatin1Char(',')),
             chips.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(chips));
}

// Whether an S-cut child's fixed tile count is the one it runs on (RATree::fixedTiles, the
// evaluator's rule, docs/method.md §8).
bool RATreeModel::fixedApplies(int node) const {
    const int parent = m_tree.node(node).parent;
    if (parent < 0 || !m_eval || size_t(parent) >= m_eval->nodes.size()) return false;
    std::vector<int> counts;
    return m_tree.fixedTiles(parent, m_eval->nodes[size_t(parent)].tileCount, counts);
}

QString RATreeModel::chipletText(int node) const {
    if (!m_chiplets) return {};
    std::vector<int> chips = tilesOf(node);
    if (chips.empty()) return {};
    for (int& t : chips)
        t = m_chiplets->chipletOf(t);
    std::sort(chips.begin(), chips.end());
    chips.erase(std::unique(chips.begin(), chips.end()), chips.end());
    QStringList ids;
    for (int c : chips)
        ids << QString::number(c);
    return (chips.size() == 1 ? tr("chiplet %1") : tr("chiplets %1"))
        .arg(ids.join(QStringLiteral(", ")));
}

QIcon RATreeModel::typeIcon(NodeType t) const {
    QIcon& icon = m_icons[int(t)];
    if (!icon.isNull()) return icon;
    // Drawn rather than loaded so the model needs no resource file: a coloured badge
    // with the node kind's letter.
    QPixmap pm(32, 32);
    pm.fill(Qt::transparent);
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    const QColor c = t == NodeType::S   ? QColor(0x2e, 0x7d, 0x32)
                     : t == NodeType::T ? QColor(0x15, 0x65, 0xc0)
                                        : QColor(0x75, 0x75, 0x75);
    p.setBrush(c);
    p.setPen(Qt::NoPen);
    if (t == NodeType::Leaf)
        p.drawEllipse(QRectF(4, 4, 24, 24));
    else
        p.drawRoundedRect(QRectF(2, 2, 28, 28), 6, 6);
    QFont f;
    f.setBold(true);
    f.setPixelSize(20);
    p.setFont(f);
    p.setPen(Qt::white);
    p.drawText(QRectF(0, 0, 32, 32), Qt::AlignCenter,
               t == NodeType::S   ? QStringLiteral("S")
               : t == NodeType::T ? QStringLiteral("T")
                                  : QStringLiteral("L"));
    p.end();
    icon = QIcon(pm);
    return icon;
}

// What a layer keeps on chip across runs (docs/cost-model.md §6, "Kept on chip"): its
// weights, its inputs kept on chip (a decoder's KV cache), by name or, `brief`, as "W" and
// "in"; empty when nothing.
QString RATreeModel::keptText(const Layer& l, bool brief) {
    QStringList what;
    if (l.weightsResident) what << (brief ? QStringLiteral("W") : tr("weights"));
    for (const LayerInput& in : l.inputs)
        if (in.resident) {
            if (!brief)
                what << QString::fromStdString(in.networkInput);
            else if (!what.contains(QStringLiteral("in")))
                what << QStringLiteral("in");
        }
    return what.join(QStringLiteral(", "));
}

QVariant RATreeModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || !m_net) return {};
    const int id = nodeId(index);
    const RANode& n = m_tree.node(id);
    const NodeFigures* f =
        m_eval && size_t(id) < m_eval->nodes.size() ? &m_eval->nodes[size_t(id)] : nullptr;
    const bool invalidHere = m_eval && !m_eval->valid && m_eval->invalidNode == id;
    const bool figureColumn = index.column() == Time || index.column() == Energy;
    const FigureSource src = figureColumn ? figureSource(id) : FigureSource{};

    switch (role) {
    case NodeIdRole:
        return id;
    case NodePathRole:
        return QString::fromStdString(m_tree.pathOf(id));
    case Qt::ForegroundRole:
        if (invalidHere) return QBrush(QColor(0xc6, 0x28, 0x28));
        if (src.stale) return QBrush(QColor(0x9e, 0x9e, 0x9e)); // faded, as on the S-T graph
        if (n.tied) return QBrush(QColor(0x37, 0x47, 0x8f));    // a repeated block's copy
        return {};
    case Qt::BackgroundRole:
        if (invalidHere) return QBrush(QColor(0xff, 0xeb, 0xee));
        return {};
    case Qt::ToolTipRole:
        if (figureColumn && src.eval) return scopeTip(src, index.column());
        if (invalidHere || (id == m_tree.root && m_eval && !m_eval->valid))
            return QStringLiteral("Invalid: %1").arg(QString::fromStdString(m_eval->reason));
        if (n.tied)
            return tr("A copy of the first repeated block (%1): scheduled as that block is; "
                      "edit the first block and every copy follows")
                .arg(QString::fromStdString(m_tree.pathOf(id)));
        if (f && n.type == NodeType::Leaf) {
            const QString kept = keptText(m_net->layers[size_t(n.layer)], false);
            return QStringLiteral("%1\npartition %2%3\n%4%5")
                .arg(QString::fromStdString(m_net->layers[size_t(n.layer)].name),
                     QString::fromStdString(f->partition),
                     f->namedPartition ? tr(" (named in the tree)") : QString(),
                     QString::fromStdString(f->mapping),
                     kept.isEmpty() ? QString() : tr("\nkept on chip across runs: %1").arg(kept));
        }
        return QString::fromStdString(m_tree.pathOf(id));
    case Qt::DecorationRole:
        if (index.column() == Name) return typeIcon(n.type);
        return {};
    case Qt::CheckStateRole:
        if (index.column() == Pinned) return n.pinned ? Qt::Checked : Qt::Unchecked;
        return {};
    case Qt::TextAlignmentRole:
        if ((index.column() >= Layers && index.column() <= Energy && index.column() != Tiles) ||
            index.column() == InTile)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case Qt::DisplayRole:
        break;
    default:
        return {};
    }

    switch (index.column()) {
    case Name:
        // The short unique name (layernames.h): the whole ONNX path does not fit a narrow
        // dock and its informative part is in the middle; the tooltip has it all.
        // A repeated block's copy is marked: it follows the first block.
        if (n.tied) {
            const QString what = n.type == NodeType::Leaf ? m_names.value(n.layer)
                                 : n.type == NodeType::S  ? tr("S cut")
                                                          : tr("T cut");
            return QStringLiteral("\u2261 %1").arg(what);
        }
        if (n.type == NodeType::Leaf) {
            // What the leaf keeps on chip across runs (a decode step's weights or KV cache),
            // short: the dock is narrow and elides the middle; the tooltip names it all.
            const QString kept = keptText(m_net->layers[size_t(n.layer)], true);
            return kept.isEmpty() ? m_names.value(n.layer)
                                  : QStringLiteral("%1 [%2]").arg(m_names.value(n.layer), kept);
        }
        {
            // An S cut's children on a template with chiplets (the chiplet baseline's
            // regions) say where they sit; the Tiles column has it for every node.
            const QString kind = n.type == NodeType::S ? tr("S cut") : tr("T cut");
            const bool region = n.parent >= 0 && m_tree.node(n.parent).type == NodeType::S;
            const QString chips = region ? chipletText(id) : QString();
            return chips.isEmpty() ? kind : QStringLiteral("%1 (%2)").arg(kind, chips);
        }
    case Layers:
        return int(m_tree.layersUnder(id).size());
    case Tiles:
        return tileText(id);
    case Batch:
        if (n.isCut()) return QStringLiteral("%1/%2").arg(n.batch).arg(n.subBatch);
        return QString::number(n.batch);
    case Npt:
        return f ? cyclesText(f->npt) : QVariant();
    case Time:
        // The header names the unit ("Cycles (run)", on two lines): the narrow dock keeps
        // the number.
        return src.eval ? cyclesText(runTimeOf(*src.eval, *src.tree, src.node))
                              .remove(QStringLiteral(" cycles"))
                        : QVariant();
    case Energy:
        return src.eval ? energyText(runEnergyOf(*src.eval, src.node)) : QVariant();
    case Pinned:
        return {};
    case InTile:
        return f && m_hasLevels ? energyText(f->inTileEnergy) : QVariant();
    }
    return {};
}

RATreeModel::FigureSource RATreeModel::figureSource(int id) const {
    if (m_eval && m_eval->valid && size_t(id) < m_eval->nodes.size())
        return {m_eval.get(), &m_tree, id, false};
    if (!m_lastValid || m_lastValidTree.empty()) return {};
    const RANode& n = m_tree.node(id);
    int other = -1;
    if (n.type == NodeType::Leaf) {
        other = m_lastValidTree.leafOf(n.layer);
    } else {
        other = m_lastValidTree.nodeAtPath(m_tree.pathOf(id));
        if (other >= 0 && (m_lastValidTree.node(other).type != n.type ||
                           m_lastValidTree.layersUnder(other) != m_tree.layersUnder(id)))
            other = -1;
    }
    if (other < 0 || size_t(other) >= m_lastValid->nodes.size()) return {};
    return {m_lastValid.get(), &m_lastValidTree, other, true};
}

QString RATreeModel::scopeTip(const FigureSource& src, int column) const {
    // Both scopes with the conversion between them (report/node_scope.h), so the cell's
    // figure can be matched with any view's: the Layers table and the reports show the run.
    const Evaluation& e = *src.eval;
    const RATree& t = *src.tree;
    const int k = invocationsOf(t, src.node);
    const int b = t.node(src.node).batch;
    const QString stale = src.stale ? tr("Last valid schedule: ") : QString();
    if (column == Time)
        return stale +
               tr("%1 over the run: %2 per invocation of %3 samples x %4 invocations")
                   .arg(cyclesText(runTimeOf(e, t, src.node)),
                        timeText(invocationTimeOf(e, src.node), m_doc->hardware()->clockGHz))
                   .arg(b)
                   .arg(k);
    return stale + tr("%1 over the run: %2 per invocation of %3 samples x %4 invocations")
                       .arg(energyText(runEnergyOf(e, src.node)),
                            energyText(invocationEnergyOf(e, t, src.node)))
                       .arg(b)
                       .arg(k);
}

QVariant RATreeModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
    static const char* names[] = {
        QT_TR_NOOP("Node"),          QT_TR_NOOP("Layers"), QT_TR_NOOP("Tiles"),
        QT_TR_NOOP("b/sb"),          QT_TR_NOOP("NPT"),    QT_TR_NOOP("Cycles\n(run)"),
        QT_TR_NOOP("Energy\n(run)"), QT_TR_NOOP("Pin"),    QT_TR_NOOP("In-tile\n(run)")};
    static const char* tips[] = {
        QT_TR_NOOP("S cut: its children run at the same time on disjoint tiles (a pipeline). "
                   "T cut: its children run one after another on the same tiles. Leaf: one "
                   "layer; [W] after its name: its weights stay on chip across runs, [in]: "
                   "some of its inputs do (a decode step's KV cache)"),
        QT_TR_NOOP("Layers under the node"),
        QT_TR_NOOP("Tiles of the node's group: count, then the tile numbers (snake order, as "
                   "on the NoC heatmap). \"fixed\": an S cut's child on the count it was given "
                   "(N); \"asks n\": a count given but not applied, as the cut's other children "
                   "have none or the counts do not add up to its tiles"),
        QT_TR_NOOP("Batch / sub-batches: samples per invocation b; for a cut also its "
                   "sub-batch count sb: the cut runs its children sb times on b / sb samples "
                   "([ and ] change it)"),
        QT_TR_NOOP("Normalised processing time: cycles per sample on one tile, the work the "
                   "tile allocation balances"),
        QT_TR_NOOP("Time in cycles. Scope: the whole run (all samples), as in the Layers "
                   "table and the reports: time of one invocation x invocations; pipelined "
                   "invocations overlap, so this can exceed the delay. The tooltip gives one "
                   "invocation"),
        QT_TR_NOOP("Scope: the whole run (all samples), as in the Layers table and the "
                   "reports. The tooltip gives one invocation"),
        QT_TR_NOOP("Pinned: the search never changes this node or its subtree (P)"),
        QT_TR_NOOP("Of Energy, the in-tile storage levels' (the template's levels: activation, "
                   "weight and output buffers inside the tile). Scope: the whole run")};
    if (role == Qt::DisplayRole) return tr(names[section]);
    if (role == Qt::ToolTipRole) return tr(tips[section]);
    return {};
}

Qt::ItemFlags RATreeModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) return Qt::ItemIsDropEnabled;
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    const int id = nodeId(index);
    if (id != m_tree.root) f |= Qt::ItemIsDragEnabled;
    if (m_tree.node(id).isCut()) f |= Qt::ItemIsDropEnabled;
    if (index.column() == Pinned) f |= Qt::ItemIsUserCheckable;
    return f;
}

bool RATreeModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (!index.isValid() || index.column() != Pinned || role != Qt::CheckStateRole) return false;
    const bool pin = value.toInt() == Qt::Checked;
    // The document resets this model on success; no dataChanged needed here.
    return !m_doc->setPinned(nodeId(index), pin);
}

Qt::DropActions RATreeModel::supportedDropActions() const {
    return Qt::MoveAction;
}
Qt::DropActions RATreeModel::supportedDragActions() const {
    return Qt::MoveAction;
}

QStringList RATreeModel::mimeTypes() const {
    return {QString::fromLatin1(kMimeType)};
}

QMimeData* RATreeModel::mimeData(const QModelIndexList& indexes) const {
    // One node per drag: the engine's move takes one subtree.
    for (const QModelIndex& i : indexes) {
        if (!i.isValid()) continue;
        auto* md = new QMimeData;
        md->setData(QString::fromLatin1(kMimeType),
                    QByteArray::fromStdString(m_tree.pathOf(nodeId(i))));
        return md;
    }
    return nullptr;
}

bool RATreeModel::canDropMimeData(const QMimeData* data, Qt::DropAction action, int, int,
                                  const QModelIndex& parent) const {
    if (!data || !data->hasFormat(QString::fromLatin1(kMimeType)) || action != Qt::MoveAction)
        return false;
    if (!parent.isValid()) return false;
    const int target = nodeId(parent);
    const int node = m_tree.nodeAtPath(data->data(QString::fromLatin1(kMimeType)).toStdString());
    return node >= 0 && m_tree.node(target).isCut() && !m_tree.contains(node, target);
}

bool RATreeModel::dropMimeData(const QMimeData* data, Qt::DropAction action, int row, int column,
                               const QModelIndex& parent) {
    if (!canDropMimeData(data, action, row, column, parent)) return false;
    const int target = nodeId(parent);
    const int node = m_tree.nodeAtPath(data->data(QString::fromLatin1(kMimeType)).toStdString());
    const int position = row < 0 ? int(m_tree.node(target).children.size()) : row;
    // The document resets this model on success, so the view must not remove the source
    // rows itself; returning false after a successful move keeps it from trying.
    // A refusal reaches the status bar through Document::editRefused.
    static_cast<void>(m_doc->move(node, target, position));
    return false;
}

} // namespace tilescope::ui
