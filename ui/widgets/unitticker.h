// Tick labels in the units policy (core/bytestext.h) for chart axes: "20 mJ",
// "2.5 M cycles", "3·10⁷" for a bare number. LogUnitTicker for logarithmic axes, each label
// distinct from its neighbours (a log axis inside one decade otherwise repeats "2·10⁷ 2·10⁷
// 3·10⁷"); LinearUnitTicker for linear ones (energy in joules with a prefix, not pJ at 10¹⁰).
#pragma once

#include <QString>
#include <qcustomplot.h>

namespace tilescope::ui {

class LogUnitTicker : public QCPAxisTickerLog {
  public:
    // What the axis's values are: the label of a tick is formatted accordingly.
    enum class Quantity { Energy, Cycles, Number };
    explicit LogUnitTicker(Quantity q) : m_quantity(q) {}
    // The label of `value` with `significant` digits (at least 3 for units, 1 for numbers).
    QString label(double value, int significant) const;

  protected:
    QVector<QString> createLabelVector(const QVector<double>& ticks, const QLocale& locale,
                                       QChar formatChar, int precision) override;

  private:
    Quantity m_quantity;
};

// A logarithmic axis labelled by LogUnitTicker with `tickCount` major ticks.
void setLogUnitAxis(QCPAxis* axis, LogUnitTicker::Quantity q, int tickCount);

class LinearUnitTicker : public QCPAxisTicker {
  public:
    explicit LinearUnitTicker(LogUnitTicker::Quantity q) : m_labels(q) {}

  protected:
    QString getTickLabel(double tick, const QLocale& locale, QChar formatChar,
                         int precision) override;

  private:
    LogUnitTicker m_labels; // the same labels, three significant digits
};

// A linear axis labelled by LinearUnitTicker, keeping the axis's tick count.
void setLinearUnitAxis(QCPAxis* axis, LogUnitTicker::Quantity q);

} // namespace tilescope::ui
