// The selection shared by every linked view (tree, S-T graph, NoC heatmap): views write
// it and follow its signal, never each other. The node is kept by its layers and path too,
// so the selection survives an edit that renumbers the tree.
#pragma once

#include "tree/ratree.h"

#include <QObject>
#include <QString>

namespace tilescope::ui {

class SelectionState : public QObject {
    Q_OBJECT
  public:
    explicit SelectionState(QObject* parent = nullptr);

    int node() const { return m_node; }     // node id in the document's current tree, or -1
    QString path() const { return m_path; } // "/0/2", empty when nothing is selected

  public slots:
    void select(int node, const QString& path);
    void clear();
    // The document's tree changed: find the same node again, by the layers under it (a
    // moved or wrapped node keeps them, where following the path would jump to whatever
    // took its old place), else by path, else drop the selection.
    void remap(const tilescope::RATree& tree);

  signals:
    void changed(int node);

  private:
    int m_node = -1;
    QString m_path;
    RATree m_tree; // the tree m_node refers to (the last one remap() saw)
};

} // namespace tilescope::ui
