// The tree diff (A = the document's tree, B = another schedule): the search's best tree
// (preview before adopting) or a saved tree file (A/B compare). A summary line with both
// trees' energy and delay, one row per added / removed / moved / changed node with its
// energy and time change, and "Adopt B" (one undo step).
#pragma once

#include "tree/ratree.h"

#include <QWidget>
#include <memory>

class QLabel;
class QPushButton;
class QTableWidget;

namespace tilescope::ui {

class Document;
struct TreeDiff;

// The diff's table (change, node, detail, energy and time B-A), shared with the A/B
// compare of two sessions.
QTableWidget* makeDiffTable(QWidget* parent);
void fillDiffTable(QTableWidget* table, const TreeDiff& d);

class DiffPanel : public QWidget {
    Q_OBJECT
  public:
    explicit DiffPanel(Document* doc, QWidget* parent = nullptr);

    // B: a tree of the document's inputs and where it came from ("search best", a file).
    void setOther(const RATree& tree, const QString& source);
    void clearOther();
    bool hasOther() const { return m_haveOther; }
    QString summary() const;
    int rowCount() const;
    QTableWidget* table() const { return m_table; }

  signals:
    void adoptRequested(const tilescope::RATree& tree, const QString& label);

  private:
    void refresh();

    Document* m_doc;
    QLabel* m_summary;
    QTableWidget* m_table;
    QPushButton* m_adopt;
    RATree m_other;
    QString m_source;
    bool m_haveOther = false;
};

} // namespace tilescope::ui
