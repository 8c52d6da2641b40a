// The formats of an "Export for test chip" folder (docs/cli.md "--formats"): a checkbox
// per encoding, program.bin alone by default; OK needs at least one.
#pragma once

#include "pipeline/export.h"

#include <QDialog>

class QCheckBox;
class QPushButton;

namespace tilescope::ui {

class ProgramFormatsDialog : public QDialog {
    Q_OBJECT
  public:
    explicit ProgramFormatsDialog(const ProgramFormats& initial = {}, QWidget* parent = nullptr);
    ProgramFormats formats() const;
    QCheckBox* checkBox(const QString& name) const; // "bin", "txt", "json", "ir" (tests)
    QPushButton* okButton() const { return m_ok; }

  private:
    void update();
    QCheckBox* m_bin;
    QCheckBox* m_txt;
    QCheckBox* m_json;
    QCheckBox* m_ir;
    QPushButton* m_ok;
};

} // namespace tilescope::ui
