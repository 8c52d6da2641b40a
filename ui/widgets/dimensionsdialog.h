// The sizes of a model's free dimensions (docs/import.md "Free dimensions"), asked when a
// model whose export left them symbolic is opened: a spin box per dimension, named with the
// input and axis it is on, each starting at the size last given to that name.
#pragma once

#include "model/onnx_import.h"

#include <QDialog>
#include <map>
#include <string>
#include <vector>

class QSpinBox;

namespace tilescope::ui {

class DimensionsDialog : public QDialog {
    Q_OBJECT
  public:
    DimensionsDialog(const QString& model, const std::vector<FreeDimension>& dims,
                     QWidget* parent = nullptr);
    // The sizes as the importer takes them (ImportOptions::dims); remembered for next time.
    std::map<std::string, std::int64_t> bindings() const;
    QSpinBox* spinBox(const QString& name) const; // tests
    void accept() override;

  private:
    std::vector<std::pair<std::string, QSpinBox*>> m_boxes;
};

} // namespace tilescope::ui
