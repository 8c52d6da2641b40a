#include "core/programmodel.h"

#include "core/layernames.h"

#include <QBrush>
#include <QColor>
#include <QFont>
#include <QLocale>
#include <algorithm>

namespace tilescope::ui {

namespace {
QString endpoint(std::int32_t e) {
    return e == kDram ? QStringLiteral("DRAM") : QStringLiteral("T%1").arg(e);
}
} // namespace

ProgramModel::ProgramModel(QObject* parent) : QAbstractTableModel(parent) {}

void ProgramModel::setRun(std::shared_ptr<const ProgramRun> run) {
    beginResetModel();
    m_run = std::move(run);
    m_simIndex.prepare(0, 0);
    m_layerNames.clear();
    if (m_run && m_run->codegen) {
        QStringList full;
        for (const std::string& n : m_run->codegen->program.layers)
            full << QString::fromStdString(n);
        m_layerNames = shortLayerNames(full);
        const auto& tl = m_run->fine.timeline;
        std::uint32_t maxId = 0;
        for (const auto& iv : tl)
            maxId = std::max(maxId, iv.id);
        m_simIndex.prepare(tl.size(), maxId);
        for (size_t i = 0; i < tl.size(); ++i)
            m_simIndex.emplace(tl[i].id, i);
    }
    rebuildRows();
    endResetModel();
}

void ProgramModel::setTile(int tile) {
    if (tile == m_tile) return;
    beginResetModel();
    m_tile = tile;
    rebuildRows();
    endResetModel();
}

void ProgramModel::setLayers(const QSet<int>& layers) {
    if (layers == m_layers) return;
    if (m_filter) {
        beginResetModel();
        m_layers = layers;
        rebuildRows();
        endResetModel();
        return;
    }
    // Same rows, other highlight: repaint rather than reset so the view keeps its scroll.
    m_layers = layers;
    if (!m_rows.empty())
        emit dataChanged(index(0, 0), index(int(m_rows.size()) - 1, ColumnCount - 1));
}

void ProgramModel::setFilterToLayers(bool on) {
    if (on == m_filter) return;
    beginResetModel();
    m_filter = on;
    rebuildRows();
    endResetModel();
}

void ProgramModel::rebuildRows() {
    m_rows.clear();
    if (!m_run || !m_run->codegen) return;
    for (const TileProgram& t : m_run->codegen->program.tiles) {
        if (m_tile != kAllTiles && t.id != m_tile) continue;
        for (const Instruction& ins : t.instructions)
            if (!m_filter || m_layers.contains(ins.layer)) m_rows.push_back(&ins);
    }
    // All tiles: one listing in id order (the generator's issue order across tiles).
    if (m_tile == kAllTiles)
        std::sort(m_rows.begin(), m_rows.end(),
                  [](const Instruction* a, const Instruction* b) { return a->id < b->id; });
}

int ProgramModel::rowOfInstruction(quint32 id) const {
    for (size_t r = 0; r < m_rows.size(); ++r)
        if (m_rows[r]->id == id) return int(r);
    return -1;
}

const Instruction* ProgramModel::instructionAt(int row) const {
    return row >= 0 && row < int(m_rows.size()) ? m_rows[size_t(row)] : nullptr;
}

bool ProgramModel::isHighlighted(int row) const {
    const Instruction* ins = instructionAt(row);
    return ins && m_layers.contains(ins->layer);
}

int ProgramModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int ProgramModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ProgramModel::data(const QModelIndex& idx, int role) const {
    if (!checkIndex(idx, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Instruction& ins = *m_rows[size_t(idx.row())];
    if (role == LayerRole) return ins.layer;
    if (role == InstructionIdRole) return ins.id;
    if (role == Qt::BackgroundRole)
        return m_layers.contains(ins.layer) && !m_filter ? QBrush(QColor(255, 236, 160))
                                                         : QVariant();
    if (role == Qt::TextAlignmentRole) {
        const int c = idx.column();
        if (c == Id || c == Tile || c == Bytes || c == SimStart || c == SimEnd)
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    }
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole && role != Qt::EditRole) return {};
    const size_t sim = m_simIndex.find(ins.id);
    const SimInterval* iv = sim == IdIndex::npos ? nullptr : &m_run->fine.timeline[sim];
    switch (idx.column()) {
    case Id:
        return ins.id;
    case Tile:
        return ins.tile;
    case EngineCol: // a compute-in-memory core's own stream names its core
        return ins.core >= 0
                   ? tr("%1 (core %2)").arg(QLatin1String(toString(ins.engine()))).arg(ins.core)
                   : QString::fromLatin1(toString(ins.engine()));
    case OpCol:
        return QString::fromLatin1(toString(ins.op));
    case Layer:
        if (role == Qt::ToolTipRole && ins.layer >= 0 &&
            ins.layer < int(m_run->codegen->program.layers.size()))
            return QString::fromStdString(m_run->codegen->program.layers[size_t(ins.layer)]);
        return ins.layer >= 0 && ins.layer < m_layerNames.size() ? m_layerNames[ins.layer]
                                                                 : QStringLiteral("-");
    case Bytes:
        return role == Qt::DisplayRole ? QLocale().toString(qulonglong(ins.bytes))
                                       : QVariant(qulonglong(ins.bytes));
    case Route: {
        if (ins.op == Op::Compute || ins.op == Op::Program) return QStringLiteral("-");
        QStringList dst;
        for (std::int32_t d : ins.destinations())
            dst << endpoint(d);
        return endpoint(ins.src) + QStringLiteral(" \u2192 ") + dst.join(QLatin1Char(','));
    }
    case Deps: {
        QStringList deps;
        for (const Dep& d : ins.deps)
            deps << QStringLiteral("%1@%2").arg(d.id).arg(d.stage);
        return deps.join(QStringLiteral(", "));
    }
    case SimStart:
    case SimEnd: {
        // Whole cycles with digit grouping, as the bytes column ("1,875,460", not
        // "1.87546e+06"); the number itself under EditRole.
        if (!iv) return {};
        const double c = idx.column() == SimStart ? iv->start : iv->end;
        return role == Qt::DisplayRole ? QVariant(QLocale().toString(c, 'f', 0)) : QVariant(c);
    }
    }
    return {};
}

QVariant ProgramModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* names[] = {"id",        "tile",   "engine",         "op",
                                  "layer",     "bytes",  "src \u2192 dst", "deps (id@stage)",
                                  "sim start", "sim end"};
    return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

} // namespace tilescope::ui
