// The first page a user sees while no model is open: open a sample
// model with a hardware preset in one click, the recent files, and a cheat sheet of the
// shortcuts. MainWindow shows it in place of the S-T graph until a model is loaded.
#pragma once

#include <QWidget>

class QComboBox;
class QListWidget;
class QPushButton;
class QSpinBox;

namespace tilescope::ui {

class WelcomePage : public QWidget {
    Q_OBJECT
  public:
    // The folder holding models/*.onnx: TILESCOPE_SAMPLES_DIR, next to the binary in `binDir`
    // (../share/tilescope/samples as the package installs it, ../../samples in a build tree)
    // or the source tree's.
    static QString samplesDir(const QString& binDir = QString());
    // Lists the sample models of `samples` (a folder holding models/*.onnx).
    explicit WelcomePage(QWidget* parent = nullptr, const QString& samples = samplesDir());

    // Recent files as MainWindow stores them ("kind:path").
    void setRecent(const QStringList& entries);
    QPushButton* sampleButton() const { return m_openSample; }
    QComboBox* sampleBox() const { return m_sample; }
    QComboBox* presetBox() const { return m_preset; } // the preset's name as item data
    QSpinBox* batchBox() const { return m_batch; }

  signals:
    void openSampleRequested(const QString& modelPath, const QString& preset, int batch, bool run);
    void openModelRequested();
    void openSessionRequested();
    void recentRequested(const QString& kind, const QString& path);
    void guideRequested();

  private:
    QComboBox* m_sample;
    QComboBox* m_preset;
    QSpinBox* m_batch;
    QPushButton* m_openSample;
    QListWidget* m_recent;
};

} // namespace tilescope::ui
