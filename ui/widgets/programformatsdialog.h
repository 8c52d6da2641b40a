// "Export for test chip": the program folder (typed, created when new, or chosen with
// Browse) and its formats (docs/cli.md "--formats"): a checkbox per encoding, program.bin
// alone by default; OK needs a folder and at least one format.
#pragma once

#include "pipeline/export.h"

#include <QDialog>

class QCheckBox;
class QLineEdit;
class QPushButton;

namespace tilescope::ui {

class ProgramFormatsDialog : public QDialog {
    Q_OBJECT
  public:
    explicit ProgramFormatsDialog(const ProgramFormats& initial = {}, QWidget* parent = nullptr,
                                  const QString& folder = {});
    ProgramFormats formats() const;
    QString folder() const; // absolute; empty when none was given
    QLineEdit* folderEdit() const { return m_folder; }
    QCheckBox* checkBox(const QString& name) const; // "bin", "txt", "json", "ir" (tests)
    QPushButton* okButton() const { return m_ok; }

  private:
    void update();
    QCheckBox* m_bin;
    QCheckBox* m_txt;
    QCheckBox* m_json;
    QCheckBox* m_ir;
    QLineEdit* m_folder;
    QPushButton* m_ok;
};

} // namespace tilescope::ui
