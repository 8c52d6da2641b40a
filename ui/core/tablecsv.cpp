#include "core/tablecsv.h"

#include <QAbstractItemModel>

namespace tilescope::ui {

QByteArray csvLine(const QStringList& fields) {
    QStringList out;
    for (QString f : fields) {
        if (f.contains(QLatin1Char(',')) || f.contains(QLatin1Char('"')) ||
            f.contains(QLatin1Char('\n'))) {
            f.replace(QLatin1String("\""), QLatin1String("\"\""));
            f = QLatin1Char('"') + f + QLatin1Char('"');
        }
        out << f;
    }
    return out.join(QLatin1Char(',')).toUtf8() + "\r\n";
}

QByteArray tableCsv(const QAbstractItemModel& model) {
    QByteArray csv;
    QStringList header;
    for (int c = 0; c < model.columnCount(); ++c)
        header << model.headerData(c, Qt::Horizontal, Qt::DisplayRole).toString();
    csv += csvLine(header);
    for (int r = 0; r < model.rowCount(); ++r) {
        QStringList row;
        for (int c = 0; c < model.columnCount(); ++c)
            row << model.index(r, c).data(Qt::DisplayRole).toString();
        csv += csvLine(row);
    }
    return csv;
}

} // namespace tilescope::ui
