// A/B compare of two saved sessions (a preview before adopting): both schedules'
// S-T graphs side by side on one time axis (zooming or panning one moves the other), the
// figures of each, and the tree diff when both schedule the same model and batch.
#pragma once

#include "core/stlayout.h"

#include <QDialog>
#include <array>
#include <memory>

class QCustomPlot;
class QLabel;
class QTableWidget;

namespace tilescope::ui {

class StGraphPlottable;

class CompareSessionsDialog : public QDialog {
    Q_OBJECT
  public:
    explicit CompareSessionsDialog(QWidget* parent = nullptr);

    // Reads and evaluates both sessions; false, with errorText(), when either cannot be
    // read (the dialog then shows nothing of them).
    bool open(const QString& pathA, const QString& pathB);
    QString errorText() const { return m_error; }

    // side 0 = A, 1 = B.
    QCustomPlot* plot(int side) const { return m_sides[size_t(side)].plot; }
    StGraphPlottable* plottable(int side) const { return m_sides[size_t(side)].rects; }
    QString metricsText(int side) const;
    QString diffSummary() const;
    QTableWidget* diffTable() const { return m_table; }

  private:
    struct Side {
        QLabel* title = nullptr;
        QLabel* metrics = nullptr;
        QCustomPlot* plot = nullptr;
        StGraphPlottable* rects = nullptr;
    };
    void linkAxes();

    std::array<Side, 2> m_sides;
    QLabel* m_summary;
    QTableWidget* m_table;
    QString m_error;
    bool m_syncing = false;
};

} // namespace tilescope::ui
