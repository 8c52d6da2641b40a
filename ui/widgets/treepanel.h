// The RA tree panel: a QTreeView over RATreeModel with drag and drop (move a leaf or cut
// onto a cut), and the edit actions (wrap in S / T cut, dissolve, flip, sub-batches up /
// down, pin) on its context menu, with shortcuts. It follows and writes the shared
// SelectionState; every edit is a command on the Document.
#pragma once

#include "tree/ratree.h"
#include "util/result.h"

#include <QSet>
#include <QWidget>
#include <optional>

class QTreeView;
class QAction;

namespace tilescope::ui {

class Document;
class RATreeModel;
class SelectionState;

class TreePanel : public QWidget {
    Q_OBJECT
  public:
    TreePanel(Document* doc, SelectionState* selection, QWidget* parent = nullptr);

    QTreeView* view() const { return m_view; }
    RATreeModel* model() const { return m_model; }
    QList<QAction*> editActions() const { return m_actions; }

    // The actions' work, callable directly (tests); they return the refusal reason.
    std::optional<Error> wrapSelection(bool sCut);
    std::optional<Error> dissolveSelected();
    std::optional<Error> flipSelected();
    std::optional<Error> stepSubBatchSelected(int direction);
    std::optional<Error> togglePinSelected();
    // The selected S-cut child's fixed tile count (0 releases it to the allocation).
    std::optional<Error> setTilesSelected(int tiles);
    // The selected leaf's alternative partitions on the tiles it has (the mapper's choice
    // first), each with its label and what it costs the leaf alone; empty without a leaf
    // or an evaluation.
    struct PartitionOption {
        PartitionFactors factors{}; // all 0 for the mapper's choice
        QString text;
    };
    QList<PartitionOption> partitionOptions() const;
    std::optional<Error> setPartitionSelected(const PartitionFactors& p);

  signals:
    void message(const QString& text); // refusals and hints for the status bar

  protected:
    // The name column takes what the other columns leave of the width.
    void resizeEvent(QResizeEvent* e) override;

  private:
    void askTilesSelected();     // the Tile count... action: a dialog, then setTilesSelected
    void askPartitionSelected(); // the Partition... action: a list, then setPartitionSelected
    // Figure columns as wide as their contents, the name column the rest.
    void fitColumns();
    void fitNameColumn();
    QList<int> selectedNodes() const;
    int currentNode() const;
    void followSelection(int node);
    std::optional<Error> report(const QString& reason);

    Document* m_doc;
    SelectionState* m_selection;
    RATreeModel* m_model;
    QTreeView* m_view;
    QList<QAction*> m_actions;
    QSet<QString> m_expanded; // paths expanded before a model reset
    bool m_syncing = false;
    bool m_firstReset = true;
};

} // namespace tilescope::ui
