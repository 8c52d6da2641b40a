// The energy-delay trade-off plot: every schedule the user has seen as a point, energy
// against delay (log-log). Search history (each snapshot's current tree) as small grey
// dots, the bests of search segments and the LS / LP / DP-LP / SA comparison as labelled
// markers, the document's schedule as a ring. Clicking a marker that carries a tree adopts
// it (one undo step, through adoptRequested).
#pragma once

#include "tree/ratree.h"

#include <QWidget>
#include <vector>

class QCustomPlot;
class QCPGraph;

namespace tilescope::ui {

class TradeoffView : public QWidget {
    Q_OBJECT
  public:
    explicit TradeoffView(QWidget* parent = nullptr);

    void clear();        // new inputs: nothing on the plot is comparable any more
    void clearHistory(); // a new search starts
    void addHistory(double energyPj, double delayCycles);
    // A point with a tree: clicking it adopts `tree`. Points with the same label replace
    // each other ("search best" moves as the search improves).
    void setCandidate(const QString& label, const RATree& tree, double energyPj,
                      double delayCycles);
    void setCurrent(double energyPj, double delayCycles, bool valid);

    int candidateCount() const { return int(m_candidates.size()); }
    int historyCount() const;
    // Adopts candidate i as a click does (tests).
    void activate(int i);
    QCustomPlot* plot() const { return m_plot; }

  signals:
    void adoptRequested(const tilescope::RATree& tree, const QString& label);

  private:
    struct Candidate {
        QString label;
        RATree tree;
        double energy = 0, delay = 0;
    };
    void rebuild();

    QCustomPlot* m_plot;
    QCPGraph* m_history;
    QCPGraph* m_marks;
    QCPGraph* m_current;
    std::vector<Candidate> m_candidates;
};

} // namespace tilescope::ui
