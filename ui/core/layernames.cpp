#include "core/layernames.h"

#include <QStringList>

namespace tilescope::ui {

QString shortLayerName(const QString& name) {
    QStringList parts = name.split(QLatin1Char('/'), Qt::SkipEmptyParts);
    if (parts.isEmpty()) return name;
    // An op-type suffix starts with an upper-case letter and has no digits or dots
    // ("Conv", "MaxPool", "Add"); the interesting part of the name is before it.
    if (parts.size() > 1) {
        const QString& last = parts.last();
        bool opLike = !last.isEmpty() && last.front().isUpper();
        for (QChar c : last)
            if (c.isDigit() || c == QLatin1Char('.') || c == QLatin1Char('_')) opLike = false;
        if (opLike) parts.removeLast();
    }
    if (parts.size() >= 2 && parts[1].startsWith(parts[0])) parts.removeFirst();
    if (parts.size() > 2) parts = parts.mid(parts.size() - 2);
    return parts.join(QLatin1Char('/'));
}

QString rectLabel(const QString& shortName, int firstSample, int lastSample) {
    return QStringLiteral("%1[%2,%3]").arg(shortName).arg(firstSample).arg(lastSample);
}

} // namespace tilescope::ui
