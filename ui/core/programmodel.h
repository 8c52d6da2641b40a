// The Instructions panel's model: one row per instruction of the chosen tile (or of every
// tile), with its simulated start and end. It holds the ProgramRun it shows; the selected
// node's layers are highlighted, or with the filter on are the only rows.
#pragma once

#include "codegen/idindex.h"
#include "core/programrun.h"

#include <QAbstractTableModel>
#include <QSet>
#include <memory>
#include <vector>

namespace tilescope::ui {

class ProgramModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    enum Column {
        Id,
        Tile,
        EngineCol,
        OpCol,
        Layer,
        Bytes,
        Route,
        Deps,
        SimStart,
        SimEnd,
        ColumnCount
    };
    enum Role { LayerRole = Qt::UserRole + 1, InstructionIdRole };
    static constexpr int kAllTiles = -1;

    explicit ProgramModel(QObject* parent = nullptr);

    void setRun(std::shared_ptr<const ProgramRun> run);
    std::shared_ptr<const ProgramRun> run() const { return m_run; }
    void setTile(int tile); // kAllTiles or a tile id
    int tile() const { return m_tile; }
    // The selected node's layers: highlighted, and with filtering on the only rows shown.
    void setLayers(const QSet<int>& layers);
    void setFilterToLayers(bool on);
    bool filterToLayers() const { return m_filter; }
    // Row of the instruction with this id, or -1 when it is not shown.
    int rowOfInstruction(quint32 id) const;
    const Instruction* instructionAt(int row) const;
    bool isHighlighted(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

  private:
    void rebuildRows();

    std::shared_ptr<const ProgramRun> m_run;
    std::vector<const Instruction*> m_rows;
    IdIndex m_simIndex; // instruction id -> timeline interval
    QStringList m_layerNames;
    QSet<int> m_layers;
    int m_tile = kAllTiles;
    bool m_filter = false;
};

} // namespace tilescope::ui
