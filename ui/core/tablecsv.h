// A table model as CSV (RFC 4180): the header row, then one row per model row, the cells
// as the view shows them (Qt::DisplayRole). The Layers and Instructions tables export this.
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

class QAbstractItemModel;

namespace tilescope::ui {

// One CSV line: fields quoted where they hold a comma, a quote or a line break.
QByteArray csvLine(const QStringList& fields);
QByteArray tableCsv(const QAbstractItemModel& model);

} // namespace tilescope::ui
