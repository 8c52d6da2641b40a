// The S-T graph panel: x = cycles, y = tile id. Rectangles are laid out off the GUI
// thread when the document changes; hover shows a rectangle's figures, a click selects
// its leaf in the shared SelectionState, the wheel / drag / keys zoom and pan. Ctrl+wheel
// zooms the tile axis: rows too thin to read are drawn as groups of tiles (StLayout::grouped)
// that expand as they grow, and a double-click expands the group under the cursor.
#pragma once

#include "core/backgroundjob.h"
#include "core/stlayout.h"
#include "tree/ratree.h"

#include <QWidget>
#include <memory>

class QCustomPlot;
class QCPItemText;
class QComboBox;
class QLabel;

namespace tilescope::ui {

class Document;
class SelectionState;
class StGraphPlottable;
class ProgramRunner;
class ProgramRun;
struct LiveBest;

class StGraphView : public QWidget {
    Q_OBJECT
  public:
    StGraphView(Document* doc, SelectionState* selection, QWidget* parent = nullptr);

    QCustomPlot* plot() const { return m_plot; }
    // The red line above the graph while the tree is invalid (empty when valid).
    QString bannerText() const;
    // The key under the choices (HTML): what the colours say and, with both timelines,
    // which half of a row is the estimate and which the replay; its tooltip lists every
    // layer's colour.
    QString keyText() const;
    StGraphPlottable* plottable() const { return m_rects; }
    // What the graph shows: the evaluator's intervals, the simulator's replay of the
    // generated program, or both (each tile row split: evaluator above, simulator below).
    enum class Timeline { Evaluator, Simulated, Both };
    void setTimeline(Timeline t);
    Timeline timeline() const { return m_timeline; }
    // Rectangle colours: one per layer, or each leaf's efficiency, its moved bytes / its
    // I/O lower bound (engine/report/layers.h; green at the bound, red at 4x and above),
    // or on compute-in-memory tiles the share of its time spent writing crossbars, or the
    // efficiency at the array level (its buffer <-> array bytes / their bound), or with a
    // DRAM run model each leaf's run efficiency (report/layers.h LayerFigures::runEfficiency)
    // on the efficiency scale (the bytes the DRAM is held for / the bytes).
    enum class Colouring { Layer, Efficiency, Programming, ArrayEfficiency, DramRuns };
    void setColouring(Colouring c);
    Colouring colouring() const { return m_colouring; }
    // Whether the colour list offers `c`: DRAM run efficiency only for a template with a
    // run model; the others always.
    bool colouringOffered(Colouring c) const;
    StGraphPlottable* simulatedPlottable() const { return m_sim; }
    // The shared program (Instructions panel) whose replay the simulated timeline draws.
    void setProgramRunner(ProgramRunner* runner);
    // Shows a layout directly (the benchmark; normally layouts come from the document).
    void showLayout(std::shared_ptr<const StLayout> layout, const RATree& tree, bool rescale);
    bool hasLayout() const;
    QString exportTo(const QString& path);
    // The running search's best, drawn translucent and outlined over the current schedule
    // (null removes it); shown while setShowLiveBest(true) (the default).
    void setLiveBest(std::shared_ptr<const LiveBest> best);
    void setShowLiveBest(bool on);
    bool showLiveBest() const { return m_showLiveBest; }
    StGraphPlottable* liveBestPlottable() const { return m_ghost; }
    QCPItemText* liveBestLegend() const { return m_liveBestLegend; }
    // The hover text of rectangle `i` of `layout` (HTML): the rectangle's samples, cycles,
    // energy and tiles, its leaf's time and energy per invocation and over the run (each
    // scope named, the run's as the tree and the Layers table show them) and, for a leaf
    // working in blocks, what the blocks split.
    // On grouped rows it first names the row's tiles and how many of them the rectangle covers.
    QString rectToolTip(const StLayout& layout, int i) const;
    // Scales the tile axis by `factor` around the tile coordinate `aroundTile`.
    void zoomRowsBy(double factor, double aroundTile);
    // Zooms the tile axis onto the group of tiles under a plot position (nothing when rows
    // are single tiles).
    void expandRowAt(const QPoint& pos);

  public slots:
    void resetZoom();

  signals:
    void layoutReady(); // a new layout is on screen (tests wait for it)
    void simulatedLayoutReady();

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    void documentChanged(bool reset);
    void selectionChanged(int node);
    void hover(const QPoint& pos);
    void zoomBy(double factor);
    void programReady(std::shared_ptr<const ProgramRun> run);
    int hitAt(const QPoint& pos, StGraphPlottable** which) const;
    void panBy(double fraction);
    void updateLiveBestVisibility();
    QString rowGroupText(const StLayout& layout, const StRect& r) const;
    QString leafScopeText(const Evaluation& e, int node) const;
    // With a DRAM run model: the leaf's layouts, runs and run efficiency (layerFigures).
    QString layoutsText(const Evaluation& e, int layer) const;

    Document* m_doc;
    SelectionState* m_selection;
    QCustomPlot* m_plot;
    StGraphPlottable* m_rects;
    StGraphPlottable* m_sim;
    StGraphPlottable* m_ghost; // the live best (LiveBestPreview), over m_rects
    bool m_showLiveBest = true;
    QCPItemText* m_liveBestLegend = nullptr; // the overlay's legend, in the plot
    QComboBox* m_timelineBox;
    QComboBox* m_colourBox;
    Colouring m_colouring = Colouring::Layer;
    void applyColouring();
    void updateKey();
    void updateOfferedColourings();
    QLabel* m_key = nullptr;    // the colour key (keyText)
    QLabel* m_banner = nullptr; // the reason an invalid tree is not drawn
    Timeline m_timeline = Timeline::Evaluator;
    RATree m_simTree; // the tree the simulated program was generated from
    RATree m_tree;    // the tree the current layout was made from (node ids of its rects)
    BackgroundJob m_layoutJob{this}; // evaluator layouts; a newer one drops older ones
    BackgroundJob m_simJob{this};    // simulated-program layouts
    bool m_rescalePending = true;
    QPoint m_pressPos;
};

} // namespace tilescope::ui
