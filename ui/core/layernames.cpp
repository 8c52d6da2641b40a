#include "core/layernames.h"

#include <QHash>
#include <QStringList>

namespace tilescope::ui {

namespace {
// The informative parts of an ONNX path, outermost first.
QStringList nameParts(const QString& name) {
    QStringList parts = name.split(QLatin1Char('/'), Qt::SkipEmptyParts);
    if (parts.isEmpty()) return {name};
    // An op-type suffix starts with an upper-case letter and has no digits or dots
    // ("Conv", "MaxPool", "Add"); the interesting part of the name is before it.
    if (parts.size() > 1) {
        const QString& last = parts.last();
        bool opLike = !last.isEmpty() && last.front().isUpper();
        for (QChar c : last)
            if (c.isDigit() || c == QLatin1Char('.') || c == QLatin1Char('_')) opLike = false;
        if (opLike) parts.removeLast();
    }
    // A part that only repeats the start of the next one ("layer1" before "layer1.0",
    // "downsample" before "downsample.0") says nothing.
    QStringList out;
    for (int i = 0; i < parts.size(); ++i)
        if (i + 1 >= parts.size() || !parts[i + 1].startsWith(parts[i])) out << parts[i];
    return out;
}
QString lastParts(const QStringList& parts, int k) {
    return parts.mid(std::max<qsizetype>(0, parts.size() - k)).join(QLatin1Char('/'));
}
} // namespace

QString shortLayerName(const QString& name) {
    return lastParts(nameParts(name), 2);
}

QStringList shortLayerNames(const QStringList& names) {
    QList<QStringList> parts;
    parts.reserve(names.size());
    for (const QString& n : names)
        parts << nameParts(n);
    QList<int> depth(names.size(), 2);
    QStringList out(names.size());
    // Lengthen the names that collide until they differ or are whole.
    for (int round = 0; round < 64; ++round) {
        QHash<QString, QList<int>> seen;
        for (int i = 0; i < names.size(); ++i) {
            out[i] = lastParts(parts[i], depth[i]);
            seen[out[i]] << i;
        }
        bool grew = false;
        for (const QList<int>& group : std::as_const(seen)) {
            if (group.size() < 2) continue;
            for (int i : group)
                if (depth[i] < parts[i].size()) {
                    ++depth[i];
                    grew = true;
                }
        }
        if (!grew) break;
    }
    return out;
}

QStringList displayLayerNames(const Network& net) {
    QStringList full;
    full.reserve(qsizetype(net.layers.size()));
    for (const Layer& l : net.layers)
        full << QString::fromStdString(l.name);
    return shortLayerNames(full);
}

QString rectLabel(const QString& shortName, int firstSample, int lastSample) {
    return QStringLiteral("%1[%2,%3]").arg(shortName).arg(firstSample).arg(lastSample);
}

} // namespace tilescope::ui
