// The Layers table (docs/gui.md): one row per leaf of the document's tree with its time,
// energy, the bytes it moves across its tile group's boundary and its I/O lower bound,
// whether it works in blocks (and the DRAM that adds), then what it moves between its
// buffers and arrays and the bound at that level, all from engine/report/layers.h (the
// result JSON's "layers" read the same function). Qt::UserRole holds each cell's number
// for sorting; Qt::UserRole + 1 the leaf's node id.
#pragma once

#include "report/layers.h"

#include <QAbstractTableModel>
#include <QStringList>
#include <map>
#include <string>
#include <vector>

namespace tilescope::ui {

class Document;

class LayersModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    // The bound comparison first: a narrow dock shows name, ratio, moved bytes and bound.
    enum Column {
        Name,
        Ratio,
        Dram,
        Bound,
        Time,
        Energy,
        NocIn,
        NocOut,
        Compulsory,
        Tiles,
        // Temporal blocking (docs/cost-model.md §2b): what a leaf's blocks split, empty when
        // its slice fits; the DRAM bytes the blocking adds over the run.
        Blocks,
        BlockingDram,
        // The array level (docs/cost-model.md §2a "Two levels"): buffer <-> array bytes.
        ArrayRatio,
        ArrayBytes,
        ArrayBound,
        // DRAM layouts and runs (docs/cost-model.md §4b): present only while the evaluation
        // plans layouts (a template with a run model); the inputs' layouts read from DRAM,
        // the output's when stored there ("(pinned)" when pinned), the runs over the run and
        // the run efficiency (DRAM bytes / bytes the DRAM is held for).
        InLayout,
        OutLayout,
        DramRuns,
        RunEfficiency,
        ColumnCount
    };
    static constexpr int SortRole = Qt::UserRole;
    static constexpr int NodeRole = Qt::UserRole + 1;

    explicit LayersModel(Document* doc, QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

    const std::vector<LayerFigures>& figures() const { return m_rows; }
    int rowOfNode(int node) const; // -1 when the node is not a leaf row
    // The current tree is invalid: the rows are the last valid schedule's, shown faded.
    bool stale() const { return m_stale; }
    // The rows' evaluation plans DRAM layouts: the layout columns are there.
    bool layoutsActive() const { return m_layouts; }
    // The tensor a row's output is in DRAM as (the layer's name), empty when not stored there.
    std::string outputTensor(int row) const;

  private:
    void refresh();
    QString layoutText(const LayerFigures& f, int column) const;
    Document* m_doc;
    std::vector<LayerFigures> m_rows;
    QStringList m_names; // display names per layer (core/layernames.h)
    bool m_stale = false;
    bool m_layouts = false;
    std::map<std::string, DramLayout> m_pins; // of the rows' evaluation
};

} // namespace tilescope::ui
