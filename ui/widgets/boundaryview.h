// The DRAM boundary view (docs/gui.md): N random valid trees sampled in the background
// (engine/search/sampling.h), plotted as delay against energy, each point coloured by its
// DRAM-time ratio (DRAM bytes / DRAM bandwidth / delay: 1 = the tree waits on DRAM alone);
// the DRAM boundary line (delay = DRAM bytes / bandwidth) and the live search's best-so-far
// path over them. Clicking a point loads its tree (undoable); hovering shows its depth.
#pragma once

#include "search/sampling.h"

#include <QWidget>
#include <atomic>
#include <memory>
#include <stop_token>
#include <vector>

class QCustomPlot;
class QCPGraph;
class QCPCurve;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QLabel;
class QTimer;

namespace tilescope::ui {

class Document;
class BackgroundJob;

class BoundaryView : public QWidget {
    Q_OBJECT
  public:
    explicit BoundaryView(Document* doc, QWidget* parent = nullptr);
    ~BoundaryView() override;

    QCustomPlot* plot() const { return m_plot; }
    void setSampleCount(int n);
    void startSampling();
    void cancelSampling();
    bool sampling() const;
    const std::vector<TreeSample>& samples() const { return m_samples; }
    // Loads sample i's tree into the document (one undo step), as a click on its point.
    void activate(int i);
    // Index of the sample nearest a widget position within a few pixels, or -1.
    int sampleAt(const QPoint& pos) const;
    // A live search's best so far (energy, delay), appended to its path; clearPath()
    // starts a new one.
    void addSearchPoint(double energyPj, double delayCycles);
    void clearPath();
    int pathPoints() const;

  signals:
    void adoptRequested(const RATree& tree, const QString& label);
    void samplingFinished(); // the samples are on the plot (tests wait for it)

  private:
    void showSamples(std::vector<TreeSample> samples);
    void rebuild();
    void rescale();
    void hover(const QPoint& pos);
    Document* m_doc;
    QCustomPlot* m_plot;
    std::vector<QCPGraph*> m_bins; // one graph per DRAM-time ratio band
    QCPGraph* m_boundary = nullptr;
    QCPCurve* m_path = nullptr;
    QCPGraph* m_current = nullptr;
    QSpinBox* m_count;
    QPushButton* m_start;
    QPushButton* m_cancel;
    QProgressBar* m_progress;
    QLabel* m_status;
    QTimer* m_poll;
    std::unique_ptr<BackgroundJob> m_job;
    std::shared_ptr<std::atomic<int>> m_done;
    std::stop_source m_stop;
    bool m_running = false;
    std::vector<TreeSample> m_samples;
    int m_pathCount = 0;
    double m_sampleSeconds = 0;
};

} // namespace tilescope::ui
