#include "core/treediff.h"

#include "core/layernames.h"

#include <QHash>
#include <algorithm>

namespace tilescope::ui {

namespace {
// A node's identity across trees: its kind and the layers under it.
QString signature(const RATree& t, int id) {
    auto layers = t.layersUnder(id);
    std::sort(layers.begin(), layers.end());
    QString s = QString::fromLatin1(toString(t.node(id).type)) + QLatin1Char(':');
    for (int l : layers)
        s += QString::number(l) + QLatin1Char(',');
    return s;
}
QHash<QString, int> index(const RATree& t) {
    QHash<QString, int> out;
    for (int i = 0; i < t.size(); ++i)
        if (t.attached(i)) out.insert(signature(t, i), i);
    return out;
}
} // namespace

const char* toString(TreeDiffRow::Kind k) {
    switch (k) {
    case TreeDiffRow::Added:
        return "added";
    case TreeDiffRow::Removed:
        return "removed";
    case TreeDiffRow::Moved:
        return "moved";
    case TreeDiffRow::Changed:
        return "changed";
    }
    return "?";
}

QString TreeDiff::summary() const {
    if (rows.empty()) return QStringLiteral("identical");
    return QStringLiteral("%1 added, %2 removed, %3 moved, %4 changed")
        .arg(added)
        .arg(removed)
        .arg(moved)
        .arg(changed);
}

TreeDiff diffTrees(const RATree& a, const Evaluation* ea, const RATree& b, const Evaluation* eb,
                   const Network& net) {
    TreeDiff d;
    if (a.empty() || b.empty()) return d;
    const QStringList names = displayLayerNames(net);
    const QHash<QString, int> ia = index(a), ib = index(b);
    auto describe = [&](const RATree& t, int id) {
        const RANode& n = t.node(id);
        if (n.type == NodeType::Leaf) return names.value(n.layer);
        const auto layers = t.layersUnder(id);
        return QStringLiteral("%1 cut over %2 .. %3 (%4 layers)")
            .arg(QLatin1String(toString(n.type)), names.value(layers.front()),
                 names.value(layers.back()))
            .arg(layers.size());
    };
    auto figures = [](const Evaluation* e, const RATree& t, int id) -> const NodeFigures* {
        if (!e || id < 0 || e->nodes.size() != size_t(t.size())) return nullptr;
        return &e->nodes[size_t(id)];
    };
    auto push = [&](TreeDiffRow r) {
        const NodeFigures* fa = figures(ea, a, r.nodeA);
        const NodeFigures* fb = figures(eb, b, r.nodeB);
        if ((r.nodeA < 0 || fa) && (r.nodeB < 0 || fb) && (fa || fb)) {
            r.hasFigures = true;
            r.energyDelta = (fb ? fb->energy : 0) - (fa ? fa->energy : 0);
            r.timeDelta = (fb ? fb->time : 0) - (fa ? fa->time : 0);
        }
        switch (r.kind) {
        case TreeDiffRow::Added:
            ++d.added;
            break;
        case TreeDiffRow::Removed:
            ++d.removed;
            break;
        case TreeDiffRow::Moved:
            ++d.moved;
            break;
        case TreeDiffRow::Changed:
            ++d.changed;
            break;
        }
        d.rows.push_back(std::move(r));
    };
    // In pre-order of the first tree, then the additions in pre-order of the second.
    for (int i = 0; i < a.size(); ++i) {
        if (!a.attached(i)) continue;
        const QString sig = signature(a, i);
        const int j = ib.value(sig, -1);
        if (j < 0) {
            push({TreeDiffRow::Removed, i, -1, describe(a, i), {}});
            continue;
        }
        const RANode& na = a.node(i);
        const RANode& nb = b.node(j);
        if (na.parent >= 0 && nb.parent >= 0 &&
            signature(a, na.parent) != signature(b, nb.parent)) {
            push({TreeDiffRow::Moved, i, j, describe(a, i),
                  QStringLiteral("from %1 to %2")
                      .arg(QString::fromStdString(a.pathOf(i)),
                           QString::fromStdString(b.pathOf(j)))});
        } else if (na.isCut() && (na.subBatch != nb.subBatch || na.batch != nb.batch)) {
            push({TreeDiffRow::Changed, i, j, describe(a, i),
                  QStringLiteral("batch/sub-batches %1/%2 -> %3/%4")
                      .arg(na.batch)
                      .arg(na.subBatch)
                      .arg(nb.batch)
                      .arg(nb.subBatch)});
        }
    }
    for (int j = 0; j < b.size(); ++j)
        if (b.attached(j) && !ia.contains(signature(b, j)))
            push({TreeDiffRow::Added, -1, j, describe(b, j), {}});
    return d;
}

} // namespace tilescope::ui
