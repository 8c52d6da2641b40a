// The user guide (docs/user-guide.md, a resource of the binary): its contents as a list of
// headings beside the text, a search box (Enter finds the next match), and closing from
// the keyboard with Esc or Ctrl+W, as F1 and Help > User guide open it.
#pragma once

#include <QDialog>

class QLineEdit;
class QListWidget;
class QTextBrowser;

namespace tilescope::ui {

class UserGuideDialog : public QDialog {
    Q_OBJECT
  public:
    explicit UserGuideDialog(QWidget* parent = nullptr);

    QListWidget* contents() const { return m_contents; }
    QTextBrowser* text() const { return m_text; }
    QLineEdit* searchBox() const { return m_search; }
    // Moves to the next occurrence of `word` (from the top after the last); false if none.
    bool find(const QString& word);
    // Scrolls to the heading at `row` of the contents.
    void showSection(int row);

  private:
    QListWidget* m_contents;
    QTextBrowser* m_text;
    QLineEdit* m_search;
};

} // namespace tilescope::ui
