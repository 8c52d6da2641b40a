#include "widgets/dimensionsdialog.h"

#include <QDialogButtonBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>
#include <limits>

namespace tilescope::ui {

namespace {

QString settingsKey(const std::string& name) {
    return QStringLiteral("dimensions/") + QString::fromStdString(name);
}

} // namespace

DimensionsDialog::DimensionsDialog(const QString& model, const std::vector<FreeDimension>& dims,
                                   QWidget* parent)
    : QDialog(parent) {
    setWindowTitle(tr("Free dimensions of %1").arg(QFileInfo(model).fileName()));
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(
        tr("The export left these dimensions symbolic. Give each a size to schedule the model "
           "at (the batch is not among them: it is set on its own). The CLI takes the same as "
           "--dim "
           "NAME=VALUE."),
        this);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    auto* form = new QFormLayout;
    QSettings settings;
    for (const FreeDimension& d : dims) {
        auto* box = new QSpinBox(this);
        box->setRange(1, std::numeric_limits<int>::max());
        box->setValue(settings.value(settingsKey(d.name), 1).toInt());
        box->setObjectName(QString::fromStdString(d.name));
        box->setToolTip(tr("Size of '%1' (input '%2', axis %3)")
                            .arg(QString::fromStdString(d.name), QString::fromStdString(d.input))
                            .arg(d.axis));
        form->addRow(tr("%1 (input '%2', axis %3)")
                         .arg(QString::fromStdString(d.name), QString::fromStdString(d.input))
                         .arg(d.axis),
                     box);
        m_boxes.push_back({d.name, box});
    }
    layout->addLayout(form);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &DimensionsDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &DimensionsDialog::reject);
    layout->addWidget(buttons);
}

std::map<std::string, std::int64_t> DimensionsDialog::bindings() const {
    std::map<std::string, std::int64_t> out;
    for (const auto& [name, box] : m_boxes)
        out[name] = box->value();
    return out;
}

QSpinBox* DimensionsDialog::spinBox(const QString& name) const {
    for (const auto& [n, box] : m_boxes)
        if (QString::fromStdString(n) == name) return box;
    return nullptr;
}

void DimensionsDialog::accept() {
    QSettings settings;
    for (const auto& [name, box] : m_boxes)
        settings.setValue(settingsKey(name), box->value());
    QDialog::accept();
}

} // namespace tilescope::ui
