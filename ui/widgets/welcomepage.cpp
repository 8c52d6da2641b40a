#include "widgets/welcomepage.h"

#include "hw/hardware.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QGridLayout>
#include <QGroupBox>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace tilescope::ui {

QString WelcomePage::samplesDir(const QString& binDir) {
    QStringList candidates;
    const QString env = qEnvironmentVariable("TILESCOPE_SAMPLES_DIR");
    if (!env.isEmpty()) candidates << env;
    const QString app = binDir.isEmpty() ? QCoreApplication::applicationDirPath() : binDir;
    candidates << app + QStringLiteral("/../share/tilescope/samples")
               << app + QStringLiteral("/../../samples");
#ifdef TILESCOPE_SOURCE_SAMPLES
    candidates << QStringLiteral(TILESCOPE_SOURCE_SAMPLES);
#endif
    for (const QString& c : candidates)
        if (QFileInfo(c + QStringLiteral("/models")).isDir()) return QDir(c).absolutePath();
    return {};
}

WelcomePage::WelcomePage(QWidget* parent, const QString& samples) : QWidget(parent) {
    setObjectName(QStringLiteral("welcomePage"));
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(24, 16, 24, 16);
    auto* title = new QLabel(tr("<h2>Welcome to Tilescope</h2>"
                                "<p>Open a model and a hardware template, watch the annealing "
                                "search improve the schedule, edit the RA tree by hand and "
                                "export the program for the test chip.</p>"),
                             this);
    title->setWordWrap(true);
    outer->addWidget(title);

    // Start and Recent in one column, the shortcuts beside them: fits the centre of a
    // 1280x800 window next to the docks.
    auto* row = new QGridLayout;
    outer->addLayout(row, 1);

    // 1. Start: a sample with a preset, one click.
    auto* start = new QGroupBox(tr("Start"), this);
    auto* sl = new QGridLayout(start);
    m_sample = new QComboBox(start);
    m_sample->setObjectName(QStringLiteral("welcomeSample"));
    const QString dir = samples;
    const QStringList models =
        dir.isEmpty() ? QStringList()
                      : QDir(dir + QStringLiteral("/models"))
                            .entryList({QStringLiteral("*.onnx"), QStringLiteral("*.json")},
                                       QDir::Files, QDir::Name);
    for (const QString& m : models)
        m_sample->addItem(QFileInfo(m).completeBaseName(), dir + QStringLiteral("/models/") + m);
    const int resnet = m_sample->findText(QStringLiteral("resnet50"));
    if (resnet >= 0) m_sample->setCurrentIndex(resnet);
    m_preset = new QComboBox(start);
    m_preset->setObjectName(QStringLiteral("welcomePreset"));
    // Each preset with its mesh, so the choice says what it is ("cloud (12x12)").
    for (const std::string& p : presetNames()) {
        Hardware hw;
        const QString name = QString::fromStdString(p);
        m_preset->addItem(presetHardware(p, hw)
                              ? QStringLiteral("%1 (%2x%3)").arg(name).arg(hw.meshX).arg(hw.meshY)
                              : name,
                          name);
    }
    m_batch = new QSpinBox(start);
    m_batch->setObjectName(QStringLiteral("welcomeBatch"));
    m_batch->setRange(1, 4096);
    m_batch->setValue(8);
    m_batch->setToolTip(tr("Samples per run (the batch B); File > Set batch changes it later"));
    auto* run = new QCheckBox(tr("Start the search at once"), start);
    run->setChecked(true);
    m_openSample = new QPushButton(tr("Open sample"), start);
    m_openSample->setObjectName(QStringLiteral("welcomeOpenSample"));
    m_openSample->setDefault(true);
    m_openSample->setEnabled(m_sample->count() > 0);
    if (m_sample->count() == 0) m_openSample->setToolTip(tr("No samples folder found"));
    connect(m_openSample, &QPushButton::clicked, this, [this, run] {
        emit openSampleRequested(m_sample->currentData().toString(),
                                 m_preset->currentData().toString(), m_batch->value(),
                                 run->isChecked());
    });
    auto* openModel = new QPushButton(tr("Open model..."), start);
    auto* openSession = new QPushButton(tr("Open session..."), start);
    connect(openModel, &QPushButton::clicked, this, &WelcomePage::openModelRequested);
    connect(openSession, &QPushButton::clicked, this, &WelcomePage::openSessionRequested);
    sl->addWidget(new QLabel(tr("Sample model:"), start), 0, 0);
    sl->addWidget(m_sample, 0, 1);
    sl->addWidget(new QLabel(tr("Hardware:"), start), 1, 0);
    sl->addWidget(m_preset, 1, 1);
    sl->addWidget(new QLabel(tr("Batch:"), start), 2, 0);
    sl->addWidget(m_batch, 2, 1);
    sl->addWidget(run, 3, 0, 1, 2);
    sl->addWidget(m_openSample, 4, 0, 1, 2);
    sl->addWidget(openModel, 5, 0);
    sl->addWidget(openSession, 5, 1);
    sl->setRowStretch(6, 1);
    row->addWidget(start, 0, 0);

    // 2. Recent files.
    auto* recent = new QGroupBox(tr("Recent"), this);
    auto* rl = new QVBoxLayout(recent);
    m_recent = new QListWidget(recent);
    m_recent->setObjectName(QStringLiteral("welcomeRecent"));
    connect(m_recent, &QListWidget::itemActivated, this, [this](QListWidgetItem* it) {
        emit recentRequested(it->data(Qt::UserRole).toString(),
                             it->data(Qt::UserRole + 1).toString());
    });
    rl->addWidget(m_recent);
    row->addWidget(recent, 1, 0);

    // 3. The shortcuts.
    auto* keys = new QGroupBox(tr("Shortcuts"), this);
    auto* kl = new QVBoxLayout(keys);
    auto* sheet =
        new QLabel(tr("<table cellspacing='3'>"
                      "<tr><td><b>F5</b></td><td>start the search</td></tr>"
                      "<tr><td><b>F6</b></td><td>pause / resume</td></tr>"
                      "<tr><td><b>Shift+F5</b></td><td>stop</td></tr>"
                      "<tr><td colspan='2'><i>in the RA tree:</i></td></tr>"
                      "<tr><td><b>S</b> / <b>T</b></td><td>wrap in an S / T cut</td></tr>"
                      "<tr><td><b>D</b></td><td>dissolve a cut</td></tr>"
                      "<tr><td><b>F</b></td><td>flip S / T</td></tr>"
                      "<tr><td><b>]</b> / <b>[</b></td><td>more / fewer sub-batches</td></tr>"
                      "<tr><td><b>P</b></td><td>pin / unpin</td></tr>"
                      "<tr><td><b>N</b></td><td>an S cut's child's tile count</td></tr>"
                      "<tr><td><b>Ctrl+Z</b></td><td>undo (also hardware, batch)</td></tr>"
                      "<tr><td><b>Ctrl+0</b></td><td>reset the S-T zoom</td></tr>"
                      "<tr><td><b>F1</b></td><td>the user guide</td></tr></table>"),
                   keys);
    sheet->setObjectName(QStringLiteral("welcomeShortcuts"));
    kl->addWidget(sheet);
    kl->addStretch();
    auto* guide = new QPushButton(tr("User guide (F1)"), keys);
    connect(guide, &QPushButton::clicked, this, &WelcomePage::guideRequested);
    kl->addWidget(guide);
    row->addWidget(keys, 0, 1, 2, 1);
    row->setColumnStretch(0, 1);
    row->setColumnStretch(1, 1);
}

void WelcomePage::setRecent(const QStringList& entries) {
    m_recent->clear();
    for (const QString& entry : entries) {
        const int colon = entry.indexOf(QLatin1Char(':'));
        const QString kind = entry.left(colon), path = entry.mid(colon + 1);
        auto* it = new QListWidgetItem(
            QStringLiteral("%1  (%2)").arg(QFileInfo(path).fileName(), kind), m_recent);
        it->setToolTip(path);
        it->setData(Qt::UserRole, kind);
        it->setData(Qt::UserRole + 1, path);
    }
    if (entries.isEmpty()) {
        auto* it = new QListWidgetItem(tr("Nothing yet: sessions you save appear here"), m_recent);
        it->setFlags(Qt::NoItemFlags);
    }
}

} // namespace tilescope::ui
