#include "widgets/axisfit.h"

#include <QFontMetricsF>
#include <QPointer>
#include <algorithm>
#include <qcustomplot.h>

namespace tilescope::ui {

namespace {

constexpr const char* kPreferred = "tilescopePreferredTickCount";

// The label's extent along the axis, in pixels. "b" (beautiful) formats draw "1.5e+04" as
// 1.5·10 with a raised, smaller exponent.
double labelExtent(const QCPAxis* axis, const QString& text) {
    const QFontMetricsF fm(axis->tickLabelFont());
    if (axis->orientation() == Qt::Vertical)
        return fm.height() * (axis->numberFormat().contains(QLatin1Char('b')) ? 1.25 : 1.0);
    if (axis->numberFormat().contains(QLatin1Char('b'))) {
        const qsizetype e = text.indexOf(QLatin1Char('e'));
        if (e >= 0) {
            QString exponent = text.mid(e + 1);
            exponent.remove(QLatin1Char('+'));
            while (exponent.size() > 1 && (exponent.startsWith(QLatin1Char('0')) ||
                                           exponent.startsWith(QLatin1String("-0"))))
                exponent.remove(exponent.startsWith(QLatin1Char('-')) ? 1 : 0, 1);
            return fm.horizontalAdvance(text.left(e) + QStringLiteral("·10")) +
                   0.75 * fm.horizontalAdvance(exponent);
        }
    }
    return fm.horizontalAdvance(text);
}

bool crowded(const QCPAxis* axis, const QVector<double>& ticks, const QVector<QString>& labels,
             int gapPx) {
    const QCPRange range = axis->range();
    double prevEnd = 0;
    bool first = true;
    // Pixels grow downwards on vertical axes: walk them in pixel order.
    QVector<std::pair<double, double>> spans; // centre, half extent
    for (int i = 0; i < ticks.size() && i < labels.size(); ++i) {
        if (!range.contains(ticks[i]) || labels[i].isEmpty()) continue;
        spans.push_back({axis->coordToPixel(ticks[i]), labelExtent(axis, labels[i]) / 2});
    }
    std::sort(spans.begin(), spans.end());
    for (const auto& [centre, half] : spans) {
        if (!first && centre - half < prevEnd + gapPx) return true;
        prevEnd = centre + half;
        first = false;
    }
    return false;
}

// The largest tick count up to the axis's preferred one whose labels are not crowded.
int fittedCount(QCPAxis* axis) {
    const int preferred = axis->property(kPreferred).toInt();
    QSharedPointer<QCPAxisTicker> ticker = axis->ticker();
    const QChar format =
        axis->numberFormat().isEmpty() ? QLatin1Char('g') : axis->numberFormat()[0];
    const int keep = ticker->tickCount();
    int chosen = 1;
    for (int n = preferred; n >= 1; --n) {
        ticker->setTickCount(n);
        QVector<double> ticks;
        QVector<QString> labels;
        ticker->generate(axis->range(), axis->parentPlot()->locale(), format,
                         axis->numberPrecision(), ticks, nullptr, &labels);
        if (!crowded(axis, ticks, labels, 6)) {
            chosen = n;
            break;
        }
    }
    ticker->setTickCount(keep);
    return chosen;
}

} // namespace

bool tickLabelsCrowded(const QCPAxis* axis, int gapPx) {
    return crowded(axis, axis->tickVector(), axis->tickVectorLabels(), gapPx);
}

void fitAxisTicks(QCustomPlot* plot) {
    for (QCPAxisRect* rect : plot->axisRects())
        for (QCPAxis* axis : rect->axes())
            if (!axis->property(kPreferred).isValid())
                axis->setProperty(kPreferred, axis->ticker()->tickCount());
    // After the layout the axes have their final geometry; a count that changes needs one
    // more replot to take effect (tick vectors are built during the layout).
    QObject::connect(plot, &QCustomPlot::afterLayout, plot, [p = QPointer<QCustomPlot>(plot)] {
        if (!p) return;
        bool changed = false;
        for (QCPAxisRect* rect : p->axisRects())
            for (QCPAxis* axis : rect->axes()) {
                if (!axis->visible() || !axis->tickLabels() ||
                    !axis->property(kPreferred).isValid())
                    continue;
                const int n = fittedCount(axis);
                if (n != axis->ticker()->tickCount()) {
                    axis->ticker()->setTickCount(n);
                    changed = true;
                }
            }
        // Guard against a see-saw (fewer labels -> other margins -> more room -> ...): at
        // most two corrective replots in a row.
        const int streak = changed ? p->property("tilescopeTickFitStreak").toInt() + 1 : 0;
        p->setProperty("tilescopeTickFitStreak", streak);
        if (changed && streak <= 2) p->replot(QCustomPlot::rpQueuedReplot);
    });
}

} // namespace tilescope::ui
