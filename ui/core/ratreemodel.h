// The RA tree as a QAbstractItemModel (one row per node, the root as the single top-level
// row). It holds a copy of the document's tree and evaluation and resets when they change;
// edits (drag and drop, the pinned check box) become commands on the Document.
#pragma once

#include "eval/evaluation.h"
#include "hw/mesh.h"
#include "model/network.h"
#include "tree/ratree.h"

#include <QAbstractItemModel>
#include <QIcon>
#include <memory>

namespace tilescope::ui {

class Document;

class RATreeModel : public QAbstractItemModel {
    Q_OBJECT
  public:
    // InTile: of Energy, the in-tile storage levels' (empty without levels in the template).
    enum Column { Name, Layers, Tiles, Batch, Npt, Time, Energy, Pinned, InTile, ColumnCount };
    enum Roles { NodeIdRole = Qt::UserRole + 1, NodePathRole };
    static constexpr const char* kMimeType = "application/x-tilescope-node-path";

    explicit RATreeModel(Document* doc, QObject* parent = nullptr);

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    // The template lists in-tile storage levels (the InTile column has figures).
    bool hasLevels() const { return m_hasLevels; }
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

    Qt::DropActions supportedDropActions() const override;
    Qt::DropActions supportedDragActions() const override;
    QStringList mimeTypes() const override;
    QMimeData* mimeData(const QModelIndexList& indexes) const override;
    bool canDropMimeData(const QMimeData* data, Qt::DropAction action, int row, int column,
                         const QModelIndex& parent) const override;
    bool dropMimeData(const QMimeData* data, Qt::DropAction action, int row, int column,
                      const QModelIndex& parent) override;

    int nodeId(const QModelIndex& index) const;
    QModelIndex indexOfNode(int node, int column = 0) const;
    const RATree& tree() const { return m_tree; }

  public slots:
    void refresh(); // copy the document's tree and evaluation again

  private:
    static QString keptText(const Layer& l, bool brief);
    // The tile ids of a node's group, in snake order.
    std::vector<int> tilesOf(int node) const;
    QString tileText(int node) const;
    bool fixedApplies(int node) const;
    // On a template with chiplets, the chiplets a node's tiles lie on ("chiplet 2",
    // "chiplets 0, 1"); empty on a single chip.
    QString chipletText(int node) const;
    QIcon typeIcon(NodeType t) const;
    // Where a node's Time and Energy come from: the document's evaluation, or while the
    // current tree is invalid the last valid one (the same leaf, or the cut at the same
    // path over the same layers), shown faded. Null evaluation when there is none.
    struct FigureSource {
        const Evaluation* eval = nullptr;
        const RATree* tree = nullptr;
        int node = -1;
        bool stale = false;
    };
    FigureSource figureSource(int id) const;
    // The Time / Energy cell's tooltip: the run's figure and one invocation's.
    QString scopeTip(const FigureSource& src, int column) const;

    QStringList m_names; // short unique layer names (layernames.h)
    Document* m_doc;
    std::shared_ptr<const Network> m_net;
    std::shared_ptr<const Evaluation> m_eval;
    RATree m_tree;
    std::shared_ptr<const Evaluation> m_lastValid; // while m_eval is invalid
    RATree m_lastValidTree;
    mutable QIcon m_icons[3];
    // The mesh of a template with chiplets (chipletText()), none on a single chip.
    std::shared_ptr<const Mesh> m_chiplets;
    bool m_hasLevels = false; // the template lists in-tile storage levels (InTile column)
};

} // namespace tilescope::ui
