// The Instructions panel (docs/method.md §5, §6): the program generated for the document's current
// tree, per tile or for all tiles, with its simulated start / end, and a summary comparing
// the replay with the evaluator (instructions, DRAM bytes, delay, deadlock freedom,
// fine- vs coarse-grained speed-up), and a chart of the DRAM bandwidth the replay has in use
// over time (where it idles, the program waits for something else). It follows the shared
// ProgramRunner and SelectionState and never calls another view.
#pragma once

#include "core/programrun.h"

#include <QWidget>
#include <memory>

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QLabel;
class QTableView;

namespace tilescope::ui {

class Document;
class SelectionState;
class ProgramRunner;
class ProgramModel;

class InstructionsPanel : public QWidget {
    Q_OBJECT
  public:
    InstructionsPanel(Document* doc, SelectionState* selection, ProgramRunner* runner,
                      QWidget* parent = nullptr);

    ProgramModel* model() const { return m_model; }
    QTableView* view() const { return m_view; }
    QComboBox* tileSelector() const { return m_tiles; }
    QCheckBox* filterBox() const { return m_filter; }
    QString summaryText() const;
    // The DRAM bandwidth in use over the replay (graph 0, SimResult::dramInUse, steps) and the
    // template's bandwidth (graph 1); hidden without a replay.
    QCustomPlot* dramPlot() const { return m_dram; }
    bool hasDramChart() const { return m_chartData; } // drawn; shown where there is room

    // The summary line of a run (also used by the status bar after an export).
    static QString summarize(const ProgramRun& run);

  protected:
    // A short panel (the bottom dock at 1280x800) gives the listing the DRAM chart's room.
    void resizeEvent(QResizeEvent* e) override;
    void fitChart(); // the DRAM chart shown only with a replay and room for the listing

  private:
    void showRun(std::shared_ptr<const ProgramRun> run);
    void selectionChanged(int node);
    void rowActivated(int row);
    void rebuildTileSelector(int tiles);
    void showDram(const ProgramRun& run);

    Document* m_doc;
    SelectionState* m_selection;
    ProgramRunner* m_runner;
    ProgramModel* m_model;
    QComboBox* m_tiles;
    QCheckBox* m_filter;
    QTableView* m_view;
    QLabel* m_summary;
    QCustomPlot* m_dram;
    bool m_chartData = false; // the current run has DRAM use to draw
    bool m_selecting = false; // our own row click is echoing back through the selection
};

} // namespace tilescope::ui
