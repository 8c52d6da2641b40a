// The sweep viewer (File > Open sweep database, docs/gui.md): energy against delay of every
// point of a sweep database (log-log), the Pareto front of the points shown, filters by
// model, batch and a hardware parameter, colour by a chosen parameter, the point under the
// mouse in a tooltip; double-clicking a point asks the main window to open it.
#pragma once

#include "core/sweeptable.h"

#include <QWidget>
#include <vector>

class QComboBox;
class QLabel;
class QCustomPlot;
class QCPGraph;

namespace tilescope::ui {

class SweepView : public QWidget {
    Q_OBJECT
  public:
    SweepView(SweepTable table, const QString& path, QWidget* parent = nullptr);

    const SweepTable& table() const { return m_table; }
    QString path() const { return m_path; }
    // The filters and the colour as the combo boxes set them (tests use these too).
    void setFilter(const QString& parameter, const QString& value);
    void setColourBy(const QString& parameter);
    QString colourBy() const;
    int shownCount() const { return int(m_shown.size()); } // valid points on the plot
    int failedCount() const { return m_failed; }           // filtered rows without a result
    int paretoCount() const { return m_paretoCount; }
    int colourClassCount() const { return int(m_graphs.size()); }
    // The row nearest a pixel of the plot within `radius` pixels, else -1.
    int rowAt(const QPointF& pixel, double radius = 8) const;
    QPointF pixelOf(int row) const;
    QString describe(int row) const; // the tooltip text
    QCustomPlot* plot() const { return m_plot; }
    // What double-clicking row i does.
    void activate(int row);

  signals:
    void openPointRequested(const tilescope::SweepRow& row, const QString& databasePath);

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    void fillCombo(QComboBox* box, const QString& parameter, const QString& anyText);
    void rebuild();

    SweepTable m_table;
    QString m_path;
    QComboBox *m_model, *m_batch, *m_hwParam, *m_hwValue, *m_colour;
    QLabel* m_status;
    QCustomPlot* m_plot;
    std::vector<QCPGraph*> m_graphs;
    QCPGraph* m_front = nullptr;
    std::vector<int> m_shown; // rows on the plot
    int m_failed = 0, m_paretoCount = 0;
};

} // namespace tilescope::ui
