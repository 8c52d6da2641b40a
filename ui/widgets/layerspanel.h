// The Layers table (docs/gui.md): every leaf's time, energy, DRAM and NoC bytes against its
// I/O lower bound, sortable by any column; clicking a row selects the leaf in every view
// (the shared SelectionState), and a selection made elsewhere highlights its row. For a
// template with a run model it also sets the DRAM layouts (docs/gui.md): the global choice
// and a pin of the selected leaf's output tensor, from its context menu or the main menus.
#pragma once

#include <QWidget>

class QTableView;
class QSortFilterProxyModel;
class QLabel;
class QMenu;
class QAction;
class QActionGroup;

namespace tilescope {
struct Evaluation;
}

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
    // "Pin output layout": the four layouts (the pinned one ticked) and Unpin, for the
    // selected leaf's output; enabled while it is stored to DRAM under a run model.
    QMenu* pinMenu() const { return m_pinMenu; }
    // "DRAM layouts": auto (planned) or one layout for every tensor; enabled with a run model.
    QMenu* layoutsMenu() const { return m_layoutsMenu; }

  private:
    void selectionChanged(int node);
    void updateSummary();
    QString layoutsSummary(const Evaluation& e) const;
    void updateLayoutActions();
    void buildLayoutMenus();
    Document* m_doc;
    SelectionState* m_selection;
    LayersModel* m_model;
    QSortFilterProxyModel* m_proxy;
    QTableView* m_view;
    QLabel* m_summary;
    QMenu* m_pinMenu = nullptr;
    QMenu* m_layoutsMenu = nullptr;
    QActionGroup* m_pinGroup = nullptr;
    QActionGroup* m_choiceGroup = nullptr;
    QAction* m_unpin = nullptr;
    bool m_syncing = false;
};

} // namespace tilescope::ui
