// The search panel: start / pause / resume / stop, the annealing settings (seed, budget in
// seconds or beta, T0, alpha, objective exponents n and m, mode, chains), a progress bar
// with the time left, "Adopt
// best", and the live plot of current / best objective, E and D, temperature and
// acceptance rate against the iteration, fed by the worker's snapshots.
#pragma once

#include "core/searchsnapshot.h"

#include <QWidget>
#include <utility>
#include <vector>

class QCustomPlot;
class QCPAbstractItem;
class QCPGraph;
class QSpinBox;
class QDoubleSpinBox;
class QComboBox;
class QCheckBox;
class QPushButton;
class QProgressBar;
class QLabel;

namespace tilescope::ui {

class SearchPanel : public QWidget {
    Q_OBJECT
  public:
    explicit SearchPanel(QWidget* parent = nullptr);

    // seed, seconds, beta, t0, alpha, objective, mode, chains
    SearchConfig settings() const;
    void setSettings(const SearchConfig& c);
    Objective objective() const;
    void setObjective(const Objective& o);

    void setRunState(RunState s, const QString& message);
    void addSnapshot(const SearchSnapshot& s);
    void clearHistory();
    // The inputs changed: the last run's plot, best line, status and result go, and the
    // panel says why (a stale "Best so far" would be read as this schedule's).
    void forgetRun(const QString& why);
    // A finished search left a result to adopt. While a run is active "Adopt best" is
    // always available (the worker adopts its best so far).
    void setAdoptEnabled(bool on);
    // Start needs a model.
    void setCanStart(bool on);
    bool adoptEnabled() const;
    // The best-so-far line: kept while paused.
    QString bestText() const;
    // The line under it once a search has ended (gain over the start, repeatability).
    void setSummary(const QString& text);
    QString summaryText() const;
    QCustomPlot* plot() const { return m_plot; }
    int pointCount() const;
    // The vertical lines that say why the temperature starts again (a restart after an
    // edit or a resume, the next phase or chain), with their labels.
    QStringList restartMarks() const;
    // The hover text over a restart line at a plot position: why the temperature starts
    // high again there; empty away from the lines.
    QString markTipAt(const QPoint& pos) const;

  signals:
    void startRequested();
    void pauseRequested(bool paused);
    void stopRequested();
    void adoptRequested();
    void objectiveEdited(const tilescope::Objective& o);

  private:
    // The live plot: objective, E and D, T and acceptance in three strips over the iteration.
    void buildPlot();
    // A dashed vertical line across the three strips at iteration x, labelled `why`.
    void markRestart(double x, const QString& why);
    QSpinBox* m_seed;
    QDoubleSpinBox *m_seconds, *m_beta, *m_t0, *m_alpha, *m_n, *m_m;
    QComboBox* m_mode;
    QSpinBox* m_chains;
    QCheckBox* m_repeat;           // SearchConfig::repeatBlocks
    QCheckBox* m_partitions;       // SearchConfig::partitions
    QCheckBox* m_choosePartitions; // SearchConfig::choosePartitions
    QPushButton *m_start, *m_pause, *m_stop, *m_adopt;
    QProgressBar* m_progress;
    QLabel* m_status;
    QLabel* m_bestLabel;
    QLabel* m_summary;
    QCustomPlot* m_plot;
    QCPGraph *m_cur, *m_best, *m_energy, *m_delay, *m_temp, *m_accept;
    RunState m_state = RunState::Idle;
    bool m_paused = false;
    bool m_haveResult = false;
    double m_maxIteration = 0; // the largest iteration plotted since the history was cleared
    int m_lastSegment = 0;     // of the last plotted snapshot: a change is a restart
    QString m_lastPhase;
    double m_lastTemperature = 0; // it only falls within a chain: a rise is the next one
    QList<QCPAbstractItem*> m_marks;
    std::vector<std::pair<double, QString>> m_markWhy; // each line's iteration and label
    bool m_resumed = false; // resumed from a pause, not yet plotted since
    bool m_canStart = true;
    void updateButtons();
    bool m_settingObjective = false;
};

} // namespace tilescope::ui
