// The Layers table (docs/gui.md): every leaf's time, energy, DRAM and NoC bytes against its
// I/O lower bound, sortable by any column; clicking a row selects the leaf in every view
// (the shared SelectionState), and a selection made elsewhere highlights its row.
#pragma once

#include <QWidget>

class QTableView;
class QSortFilterProxyModel;
class QLabel;

namespace tilescope::ui {

class Document;
class SelectionState;
class LayersModel;

class LayersPanel : public QWidget {
    Q_OBJECT
  public:
    LayersPanel(Document* doc, SelectionState* selection, QWidget* parent = nullptr);
    QTableView* view() const { return m_view; }
    LayersModel* model() const { return m_model; }
    QSortFilterProxyModel* proxy() const { return m_proxy; }

  private:
    void selectionChanged(int node);
    void updateSummary();
    Document* m_doc;
    SelectionState* m_selection;
    LayersModel* m_model;
    QSortFilterProxyModel* m_proxy;
    QTableView* m_view;
    QLabel* m_summary;
    bool m_syncing = false;
};

} // namespace tilescope::ui
