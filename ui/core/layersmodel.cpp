#include "core/layersmodel.h"

#include "core/bytestext.h"
#include "core/document.h"
#include "core/layernames.h"

#include <QBrush>
#include <QColor>
#include <QLocale>

namespace tilescope::ui {

LayersModel::LayersModel(Document* doc, QObject* parent) : QAbstractTableModel(parent), m_doc(doc) {
    connect(doc, &Document::treeChanged, this, &LayersModel::refresh);
    connect(doc, &Document::documentReset, this, &LayersModel::refresh);
    refresh();
}

void LayersModel::refresh() {
    beginResetModel();
    m_rows.clear();
    const auto e = m_doc->evaluation();
    m_names.clear();
    if (m_doc->hasModel()) m_names = displayLayerNames(*m_doc->network());
    m_stale = false;
    m_layouts = false;
    m_pins.clear();
    auto layoutsOf = [this](const Evaluation& ev) {
        m_layouts = ev.layouts.active;
        m_pins = ev.layouts.choice.pins;
    };
    if (m_doc->hasModel() && e && e->valid) {
        m_rows = layerFigures(*e, m_doc->tree(), *m_doc->network(), *m_doc->hardware());
        layoutsOf(*e);
    } else if (const auto last = m_doc->hasModel() && e ? m_doc->lastValidEvaluation() : nullptr) {
        // An invalid edit: the last valid schedule's rows, faded, rather than an empty
        // table; each row points at its layer's leaf in the current tree for the selection.
        m_rows = layerFigures(*last, m_doc->lastValidTree(), *m_doc->network(), *m_doc->hardware());
        layoutsOf(*last);
        for (LayerFigures& f : m_rows)
            f.node = m_doc->tree().leafOf(f.layer);
        m_stale = true;
    }
    endResetModel();
}

int LayersModel::rowOfNode(int node) const {
    for (size_t i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].node == node) return int(i);
    return -1;
}

std::string LayersModel::outputTensor(int row) const {
    if (row < 0 || row >= int(m_rows.size()) || m_rows[size_t(row)].outputLayout.empty()) return {};
    return m_rows[size_t(row)].name;
}

int LayersModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int LayersModel::columnCount(const QModelIndex& parent) const {
    // Without a layout plan the table is what it always was: the layout columns are absent.
    return parent.isValid() ? 0 : m_layouts ? ColumnCount : InLayout;
}

QVariant LayersModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= int(m_rows.size())) return {};
    const LayerFigures& f = m_rows[size_t(index.row())];
    if (role == NodeRole) return f.node;
    auto number = [&]() -> double {
        switch (index.column()) {
        case Tiles:
            return f.tiles;
        case Time:
            return f.time;
        case Energy:
            return f.energy;
        case Dram:
            return f.dramBytes;
        case NocIn:
            return f.nocBytesIn;
        case NocOut:
            return f.nocBytesOut;
        case Bound:
            return f.ioLowerBoundBytes;
        case Compulsory:
            return f.compulsoryBytes;
        case Ratio:
            return f.ratio;
        case ArrayRatio:
            return f.arrayRatio;
        case ArrayBytes:
            return f.arrayBytes;
        case ArrayBound:
            return f.arrayLowerBoundBytes;
        case Blocks:
            return f.blocks;
        case BlockingDram:
            return f.blockingDramBytes;
        case DramRuns:
            return f.dramRuns;
        case RunEfficiency:
            return f.runEfficiency;
        default:
            return 0;
        }
    };
    if (role == SortRole) {
        if (index.column() == Name) return index.row(); // tree order
        if (index.column() == InLayout || index.column() == OutLayout)
            return layoutText(f, index.column());
        return number();
    }
    if (role == Qt::ForegroundRole && m_stale) return QBrush(QColor(0x9e, 0x9e, 0x9e));
    const bool textColumn = index.column() == Name || index.column() == Blocks ||
                            index.column() == InLayout || index.column() == OutLayout;
    if (role == Qt::TextAlignmentRole && !textColumn) return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && index.column() >= InLayout) {
        return tr("%1: %2 DRAM runs over the run; %3 % of the time the DRAM is held for it "
                  "moves its bytes (the rest: bursts' padding and each run's overhead)")
            .arg(QString::fromStdString(f.name))
            .arg(f.dramRuns, 0, 'f', 0)
            .arg(f.runEfficiency * 100, 0, 'f', 1);
    }
    const bool blockingColumn = index.column() == Blocks || index.column() == BlockingDram;
    if (role == Qt::ToolTipRole && blockingColumn) {
        if (f.blocks <= 1)
            return tr("%1: its slice fits its tiles' buffers, one block per tile")
                .arg(QString::fromStdString(f.name));
        return tr("%1: %2; blocking adds %3 of DRAM traffic over the run")
            .arg(QString::fromStdString(f.name), QString::fromStdString(f.blockingReason),
                 bytesText(f.blockingDramBytes));
    }
    if (role == Qt::ToolTipRole) {
        return tr("%1: moves %2 across its %3-tile group's boundary (DRAM %4, NoC in %5, out "
                  "%6); lower bound %7 (compulsory %8, pebble bound %9). Between its buffers "
                  "and arrays: %10, lower bound %11")
            .arg(QString::fromStdString(f.name), bytesText(f.movedBytes))
            .arg(f.tiles)
            .arg(bytesText(f.dramBytes), bytesText(f.nocBytesIn), bytesText(f.nocBytesOut),
                 bytesText(f.ioLowerBoundBytes), bytesText(f.compulsoryBytes),
                 bytesText(f.pebbleBoundBytes), bytesText(f.arrayBytes),
                 bytesText(f.arrayLowerBoundBytes));
    }
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
    case Name:
        return f.layer < int(m_names.size()) ? m_names[f.layer] : QString::fromStdString(f.name);
    case Tiles:
        return f.tiles;
    case Time:
        return cyclesText(f.time);
    case Energy:
        return energyText(f.energy);
    case Ratio:
        return f.ioLowerBoundBytes > 0 ? QString::number(f.ratio, 'f', 2) : tr("-");
    case ArrayRatio:
        return f.arrayLowerBoundBytes > 0 ? QString::number(f.arrayRatio, 'f', 2) : tr("-");
    case Blocks: // empty when the slice fits: blocked leaves stand out in the column
        return f.blocks > 1 ? QString::fromStdString(f.blocking) : QString();
    case BlockingDram:
        return f.blockingDramBytes > 0 ? QStringLiteral("+") + bytesText(f.blockingDramBytes)
                                       : QString();
    case InLayout:
    case OutLayout:
        return layoutText(f, index.column());
    case DramRuns:
        return QLocale().toString(f.dramRuns, 'f', 0);
    case RunEfficiency:
        return QStringLiteral("%1 %").arg(f.runEfficiency * 100, 0, 'f', 1);
    default:
        return bytesText(number());
    }
}

QString LayersModel::layoutText(const LayerFigures& f, int column) const {
    if (column == InLayout) {
        // One entry per input, "-" for those not read from DRAM (on chip, from a neighbour).
        QStringList parts;
        for (const std::string& l : f.inputLayouts)
            parts << (l.empty() ? QStringLiteral("-") : QString::fromStdString(l));
        return parts.join(QStringLiteral(", "));
    }
    if (f.outputLayout.empty()) return QStringLiteral("-");
    const QString out = QString::fromStdString(f.outputLayout);
    return m_pins.count(f.name) ? tr("%1 (pinned)").arg(out) : out;
}

QVariant LayersModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal) return {};
    static const char* names[] = {
        QT_TR_NOOP("Layer"),       QT_TR_NOOP("Ratio"),      QT_TR_NOOP("DRAM"),
        QT_TR_NOOP("Bound"),       QT_TR_NOOP("Time"),       QT_TR_NOOP("Energy"),
        QT_TR_NOOP("NoC in"),      QT_TR_NOOP("NoC out"),    QT_TR_NOOP("Compulsory"),
        QT_TR_NOOP("Tiles"),       QT_TR_NOOP("Blocks"),     QT_TR_NOOP("Blocking DRAM"),
        QT_TR_NOOP("Array ratio"), QT_TR_NOOP("Array"),      QT_TR_NOOP("Array bound"),
        QT_TR_NOOP("In layout"),   QT_TR_NOOP("Out layout"), QT_TR_NOOP("DRAM runs"),
        QT_TR_NOOP("Run eff.")};
    static const char* tips[] = {
        QT_TR_NOOP("The leaf's layer, in tree order"),
        QT_TR_NOOP("(DRAM + NoC in + NoC out) / bound: 1 is at the bound"),
        QT_TR_NOOP("DRAM bytes: inputs read, outputs stored, weights"),
        QT_TR_NOOP("I/O lower bound for its tile group: max(compulsory, pebble bound), "
                   "docs/cost-model.md"),
        QT_TR_NOOP("Invocation time x invocations"),
        QT_TR_NOOP("Energy of the leaf over the whole run"),
        QT_TR_NOOP("Bytes of the NoC pieces it receives"),
        QT_TR_NOOP("Bytes of the NoC pieces its consumers receive from it"),
        QT_TR_NOOP("Bytes that must cross the group's boundary at least once"),
        QT_TR_NOOP("Tiles of the leaf's group"),
        QT_TR_NOOP("Temporal blocking: a leaf whose slice does not fit its tiles' buffers works "
                   "through it in blocks, two resident at a time, inputs read and output "
                   "stored through DRAM or, in a streaming chain, passed on chip block by block "
                   "(docs/cost-model.md); empty when it fits. The cell's "
                   "tooltip says why"),
        QT_TR_NOOP("DRAM bytes the blocking adds over the whole run (part of DRAM): halo rows "
                   "and operand B read again per block"),
        QT_TR_NOOP("Array / array bound: 1 is at the bound"),
        QT_TR_NOOP("Bytes between its tiles' global buffers and their PE arrays / vector "
                   "units (what its buffer energy is charged for)"),
        QT_TR_NOOP("Least any mapping on its group moves between buffers and arrays: every "
                   "operand once, or the pebble bound of the arrays' local storage, "
                   "docs/cost-model.md"),
        QT_TR_NOOP("DRAM layout of each input read from DRAM, in input order; - for an input "
                   "that comes on chip"),
        QT_TR_NOOP("DRAM layout of its output when stored to DRAM (planned, the global choice, "
                   "or pinned: right-click to pin or unpin); - when it stays on chip"),
        QT_TR_NOOP("Contiguous DRAM runs its transfers make over the whole run"),
        QT_TR_NOOP("Run efficiency: its DRAM bytes over the bytes the DRAM is held for (bursts' "
                   "padding and each run's overhead added); 100 % without DRAM traffic")};
    if (section < 0 || section >= ColumnCount) return {};
    if (role == Qt::DisplayRole) return tr(names[section]);
    if (role == Qt::ToolTipRole) return tr(tips[section]);
    return {};
}

} // namespace tilescope::ui
