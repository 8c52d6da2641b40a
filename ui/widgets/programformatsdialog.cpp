#include "widgets/programformatsdialog.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace tilescope::ui {

ProgramFormatsDialog::ProgramFormatsDialog(const ProgramFormats& initial, QWidget* parent,
                                           const QString& folder)
    : QDialog(parent) {
    setWindowTitle(tr("Export for test chip"));
    // A typed path is taken as it is and created when new: a folder chooser refuses a
    // folder that does not exist yet ("Directory not found").
    m_folder = new QLineEdit(folder, this);
    m_folder->setObjectName(QStringLiteral("programFolder"));
    m_folder->setPlaceholderText(tr("Folder to write (created when new)"));
    m_folder->setToolTip(tr("The program folder: an existing one has its program files "
                            "replaced; a new one is created"));
    auto* browse = new QPushButton(tr("Browse..."), this);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString d = QFileDialog::getExistingDirectory(
            this, tr("Export for test chip: program folder"), m_folder->text());
        if (!d.isEmpty()) m_folder->setText(d);
    });
    connect(m_folder, &QLineEdit::textChanged, this, &ProgramFormatsDialog::update);
    auto* folderRow = new QHBoxLayout;
    folderRow->addWidget(new QLabel(tr("Folder"), this));
    folderRow->addWidget(m_folder, 1);
    folderRow->addWidget(browse);
    auto* box = new QGroupBox(tr("Write"), this);
    m_bin = new QCheckBox(tr("program.bin (compact binary; what simulate reads)"), box);
    m_txt = new QCheckBox(tr("program.txt (readable listing)"), box);
    m_json = new QCheckBox(tr("program.json"), box);
    m_ir = new QCheckBox(tr("ir.json (workloads)"), box);
    m_bin->setChecked(initial.bin);
    m_txt->setChecked(initial.txt);
    m_json->setChecked(initial.json);
    m_ir->setChecked(initial.ir);
    auto* inner = new QVBoxLayout(box);
    for (QCheckBox* c : {m_bin, m_txt, m_json, m_ir}) {
        inner->addWidget(c);
        connect(c, &QCheckBox::toggled, this, &ProgramFormatsDialog::update);
    }
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    m_ok = buttons->button(QDialogButtonBox::Ok);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(folderRow);
    layout->addWidget(box);
    layout->addWidget(new QLabel(tr("hw.json is always written."), this));
    layout->addWidget(buttons);
    update();
}

ProgramFormats ProgramFormatsDialog::formats() const {
    ProgramFormats f;
    f.bin = m_bin->isChecked();
    f.txt = m_txt->isChecked();
    f.json = m_json->isChecked();
    f.ir = m_ir->isChecked();
    return f;
}

QCheckBox* ProgramFormatsDialog::checkBox(const QString& name) const {
    if (name == QLatin1String("bin")) return m_bin;
    if (name == QLatin1String("txt")) return m_txt;
    if (name == QLatin1String("json")) return m_json;
    if (name == QLatin1String("ir")) return m_ir;
    return nullptr;
}

QString ProgramFormatsDialog::folder() const {
    const QString typed = QDir::fromNativeSeparators(m_folder->text().trimmed());
    return typed.isEmpty() ? QString() : QDir::cleanPath(QDir::current().absoluteFilePath(typed));
}

void ProgramFormatsDialog::update() {
    m_ok->setEnabled(formats().any() && !folder().isEmpty());
}

} // namespace tilescope::ui
