#include "widgets/unitticker.h"

#include "core/bytestext.h"

#include <cmath>

namespace tilescope::ui {

namespace {
// "20.0 mJ" -> "20 mJ": an axis label needs no trailing zeros.
QString trimmed(QString s) {
    const qsizetype space = s.indexOf(QLatin1Char(' '));
    QString number = space < 0 ? s : s.left(space);
    const QString rest = space < 0 ? QString() : s.mid(space);
    if (number.contains(QLatin1Char('.'))) {
        while (number.endsWith(QLatin1Char('0')))
            number.chop(1);
        if (number.endsWith(QLatin1Char('.'))) number.chop(1);
    }
    return number + rest;
}

QString superscript(int n) {
    static const QChar digits[] = {u'⁰', u'¹', u'²', u'³', u'⁴', u'⁵', u'⁶', u'⁷', u'⁸', u'⁹'};
    QString s = n < 0 ? QStringLiteral("⁻") : QString();
    for (const QChar c : QString::number(std::abs(n)))
        s += digits[c.digitValue()];
    return s;
}
} // namespace

QString LogUnitTicker::label(double value, int significant) const {
    switch (m_quantity) {
    case Quantity::Energy:
        return trimmed(QString::fromStdString(formatEngineering(value * 1e-12, "J", significant)));
    case Quantity::Cycles: // "20 M cycles", as formatCycles writes them
        return trimmed(QString::fromStdString(formatEngineering(value, "", significant))) +
               QStringLiteral(" cycles");
    case Quantity::Number:
        break;
    }
    if (value <= 0 || !std::isfinite(value)) return QString::number(value);
    const int exponent = int(std::floor(std::log10(value) + 1e-9));
    const double mantissa = value / std::pow(10.0, exponent);
    const QString m = QString::number(mantissa, 'f', std::max(0, significant - 1));
    const QString power = QStringLiteral("10") + superscript(exponent);
    if (std::abs(mantissa - 1.0) < 1e-9 && significant <= 1) return power;
    return trimmed(m) + QStringLiteral("·") + power;
}

QVector<QString> LogUnitTicker::createLabelVector(const QVector<double>& ticks, const QLocale&,
                                                  QChar, int) {
    // The fewest digits that tell every pair of neighbouring ticks apart.
    QVector<QString> labels;
    for (int significant = 1; significant <= 6; ++significant) {
        labels.clear();
        for (double t : ticks)
            labels << label(t, significant);
        bool distinct = true;
        for (qsizetype i = 1; i < labels.size(); ++i)
            distinct &= labels[i] != labels[i - 1];
        if (distinct) break;
    }
    return labels;
}

QString LinearUnitTicker::getTickLabel(double tick, const QLocale&, QChar, int) {
    if (std::abs(tick) < 1e-300) return QStringLiteral("0");
    return m_labels.label(tick, 3);
}

void setLinearUnitAxis(QCPAxis* axis, LogUnitTicker::Quantity q) {
    auto t = QSharedPointer<LinearUnitTicker>::create(q);
    t->setTickCount(axis->ticker()->tickCount());
    axis->setTicker(t);
    axis->setNumberFormat(QStringLiteral("g"));
}

void setLogUnitAxis(QCPAxis* axis, LogUnitTicker::Quantity q, int tickCount) {
    axis->setScaleType(QCPAxis::stLogarithmic);
    auto t = QSharedPointer<LogUnitTicker>::create(q);
    t->setSubTickCount(8);
    t->setTickCount(tickCount);
    axis->setTicker(t);
    // Labels are plain text now ("b" would typeset an "e" exponent the labels no longer have).
    axis->setNumberFormat(QStringLiteral("g"));
}

} // namespace tilescope::ui
