// The metrics panel: the energy breakdown as a small bar chart, the headline figures of
// the document's evaluation (and the simulated program's delay beside it; the leaves working
// in blocks when some do; on compute-in-memory tiles the crossbar programming energy and
// counts), the dominant bound per segment, and LS / LP / SA side by side once a comparison
// has run.
#pragma once

#include "core/searchsnapshot.h"
#include "eval/evaluation.h"

#include <QWidget>

class QCustomPlot;
class QCPBars;
class QFormLayout;
class QLabel;
class QTableWidget;
class QPushButton;

namespace tilescope::ui {

class Document;
class ProgramRunner;
class ProgramRun;

class MetricsPanel : public QWidget {
    Q_OBJECT
  public:
    explicit MetricsPanel(Document* doc, QWidget* parent = nullptr);

    void setCompare(ComparePtr compare);
    // Shows the simulated program's delay beside the estimate, with a warning when they
    // disagree by more than the tolerance (sim/fidelity.h).
    void setProgramRunner(ProgramRunner* runner);
    static QString simulatedFigure(const ProgramRun& run); // the "Simulated" row for a run
    // The "DRAM layouts" row (a template with a run model): the plan's DRAM cycles and its
    // gain over the best single layout for every tensor.
    static QString layoutPlanText(const Evaluation& e);
    void setCompareRunning(bool running);
    QCustomPlot* energyPlot() const { return m_plot; }
    QString figureText(const QString& key) const; // a label's text (tests)
    // The "Weight writes" row (crossbar programming energy and counts) shows only for a
    // compute-in-memory template.
    bool weightWritesShown() const;
    // Whether the figure's row is on screen (rows such as "Inter-chiplet" come and go
    // with the template; tests).
    bool figureShown(const QString& key) const;

  signals:
    void compareRequested();

  private:
    void refresh();
    void refreshSimulated();

    Document* m_doc;
    QCustomPlot* m_plot;
    QCPBars* m_bars;
    QMap<QString, QLabel*> m_figures;
    QFormLayout* m_form;
    // Energy bars: DRAM, NoC, MAC, Buffer (+ Weight write on CIM, + the in-tile levels).
    QStringList m_barLabels = {QStringLiteral("DRAM"), QStringLiteral("NoC"), QStringLiteral("MAC"),
                               QStringLiteral("Buffer")};
    QTableWidget* m_segments;
    QTableWidget* m_compare;
    QPushButton* m_compareButton;
    ComparePtr m_lastCompare;
    ProgramRunner* m_programs = nullptr;
};

} // namespace tilescope::ui
