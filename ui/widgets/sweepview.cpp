#include "widgets/sweepview.h"

#include "util/units.h"
#include "widgets/axisfit.h"
#include "widgets/energydelayaxes.h"
#include "widgets/palette.h"

#include <QComboBox>
#include <QEvent>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QToolTip>
#include <QVBoxLayout>
#include <cmath>
#include <qcustomplot.h>

namespace tilescope::ui {

namespace {

bool numericValues(const QStringList& values) {
    for (const QString& v : values) {
        bool ok = false;
        v.toDouble(&ok);
        if (!ok) return false;
    }
    return true;
}

} // namespace

SweepView::SweepView(SweepTable table, const QString& path, QWidget* parent)
    : QWidget(parent, Qt::Window), m_table(std::move(table)), m_path(path),
      m_model(new QComboBox(this)), m_batch(new QComboBox(this)), m_hwParam(new QComboBox(this)),
      m_hwValue(new QComboBox(this)), m_colour(new QComboBox(this)), m_status(new QLabel(this)),
      m_plot(new QCustomPlot(this)) {
    setObjectName(QStringLiteral("sweepView"));
    setWindowTitle(tr("Sweep %1").arg(QFileInfo(path).fileName()));
    resize(900, 620);

    fillCombo(m_model, QStringLiteral("model"), tr("all models"));
    fillCombo(m_batch, QStringLiteral("batch"), tr("all batches"));
    // One filter over the hardware variants, a varied hardware key or a free dimension.
    m_hwParam->addItem(tr("hardware"), QStringLiteral("hardware"));
    for (const QString& p : m_table.parameters())
        if (p.startsWith(QStringLiteral("dims."))) m_hwParam->addItem(p, p);
    for (const QString& p : m_table.hardwareParameters())
        m_hwParam->addItem(p, p);
    fillCombo(m_hwValue, QStringLiteral("hardware"), tr("any"));
    for (const QString& p : m_table.parameters())
        if (p != QLatin1String("search")) m_colour->addItem(p, p);
    if (m_colour->count() == 0) m_colour->addItem(tr("hardware"), QStringLiteral("hardware"));
    // The first hardware key that varies says most about a design-space sweep.
    const QStringList hwKeys = m_table.hardwareParameters();
    const int first = m_colour->findData(hwKeys.isEmpty() ? QStringLiteral("hardware") : hwKeys[0]);
    if (first >= 0) m_colour->setCurrentIndex(first);
    // Variant names grow with every varied key: the boxes stay narrow, the lists show them whole.
    for (QComboBox* box : {m_model, m_batch, m_hwParam, m_hwValue, m_colour}) {
        box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        box->setMinimumContentsLength(box == m_batch ? 8 : 16);
    }

    auto* filters = new QHBoxLayout;
    filters->addWidget(new QLabel(tr("Model"), this));
    filters->addWidget(m_model);
    filters->addWidget(new QLabel(tr("Batch"), this));
    filters->addWidget(m_batch);
    filters->addWidget(new QLabel(tr("Parameter"), this));
    filters->addWidget(m_hwParam);
    filters->addWidget(new QLabel(QStringLiteral("="), this));
    filters->addWidget(m_hwValue);
    filters->addSpacing(12);
    filters->addWidget(new QLabel(tr("Colour by"), this));
    filters->addWidget(m_colour);
    filters->addStretch(1);
    auto* lay = new QVBoxLayout(this);
    lay->addLayout(filters);
    lay->addWidget(m_plot, 1);
    lay->addWidget(m_status);

    setEnergyDelayAxes(m_plot, 5);
    m_plot->legend->setVisible(true);
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    m_plot->legend->setFont(small);
    // Top left: energy grows with delay across a sweep, so that corner stays empty.
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    fitAxisTicks(m_plot);
    m_plot->setMouseTracking(true);
    m_plot->installEventFilter(this);
    m_plot->setToolTip(QString()); // the hover tooltip is per point

    connect(m_model, &QComboBox::currentIndexChanged, this, [this] {
        m_table.setFilter(QStringLiteral("model"), m_model->currentData().toString());
        rebuild();
    });
    connect(m_batch, &QComboBox::currentIndexChanged, this, [this] {
        m_table.setFilter(QStringLiteral("batch"), m_batch->currentData().toString());
        rebuild();
    });
    connect(m_hwParam, &QComboBox::currentIndexChanged, this, [this] {
        // One parameter filter at a time: the old parameter's filter goes with it.
        for (int i = 0; i < m_hwParam->count(); ++i)
            m_table.setFilter(m_hwParam->itemData(i).toString(), QString());
        const QSignalBlocker block(m_hwValue);
        fillCombo(m_hwValue, m_hwParam->currentData().toString(), tr("any"));
        rebuild();
    });
    connect(m_hwValue, &QComboBox::currentIndexChanged, this, [this] {
        m_table.setFilter(m_hwParam->currentData().toString(), m_hwValue->currentData().toString());
        rebuild();
    });
    connect(m_colour, &QComboBox::currentIndexChanged, this, [this] { rebuild(); });
    rebuild();
}

void SweepView::fillCombo(QComboBox* box, const QString& parameter, const QString& anyText) {
    box->clear();
    box->addItem(anyText, QString());
    for (const QString& v : m_table.values(parameter))
        box->addItem(v, v);
    box->setEnabled(box->count() > 2);
}

void SweepView::setFilter(const QString& parameter, const QString& value) {
    if (parameter == QLatin1String("model") || parameter == QLatin1String("batch")) {
        QComboBox* box = parameter == QLatin1String("model") ? m_model : m_batch;
        box->setCurrentIndex(std::max(0, box->findData(value)));
        return;
    }
    const int p = m_hwParam->findData(parameter);
    if (p < 0) return;
    m_hwParam->setCurrentIndex(p);
    m_hwValue->setCurrentIndex(std::max(0, m_hwValue->findData(value)));
}

void SweepView::setColourBy(const QString& parameter) {
    const int i = m_colour->findData(parameter);
    if (i >= 0) m_colour->setCurrentIndex(i);
}

QString SweepView::colourBy() const {
    return m_colour->currentData().toString();
}

void SweepView::rebuild() {
    m_plot->clearGraphs();
    m_graphs.clear();
    m_shown.clear();
    m_failed = 0;
    const std::vector<int> rows = m_table.filtered();
    const QString by = colourBy();
    const QStringList classes = m_table.values(by);
    const bool ordered = numericValues(classes) && classes.size() > 1;
    std::vector<QCPGraph*> byClass(size_t(classes.size()), nullptr);
    for (int k = 0; k < classes.size(); ++k) {
        const QColor c =
            ordered ? heatColor(0.1 + 0.8 * k / double(classes.size() - 1)) : layerColor(k);
        QCPGraph* g = m_plot->addGraph();
        g->setLineStyle(QCPGraph::lsNone);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c.darker(130), c, 8));
        g->setName(by + QStringLiteral(" ") + classes[k]);
        g->setSelectable(QCP::stNone);
        byClass[size_t(k)] = g;
    }
    for (int i : rows) {
        const SweepRow& r = m_table.row(i);
        if (!r.valid || !(r.energyPj > 0) || !(r.delayCycles > 0)) {
            ++m_failed;
            continue;
        }
        const int k = int(classes.indexOf(m_table.value(i, by)));
        if (k >= 0) byClass[size_t(k)]->addData(r.delayCycles, r.energyPj);
        m_shown.push_back(i);
    }
    for (QCPGraph* g : byClass) {
        if (g->dataCount() == 0) {
            m_plot->removeGraph(g);
            continue;
        }
        m_graphs.push_back(g);
    }
    // The Pareto front of what is shown: a step line through the non-dominated points.
    const std::vector<int> front = m_table.paretoFront(rows);
    m_paretoCount = int(front.size());
    m_front = m_plot->addGraph();
    m_front->setName(tr("Pareto front"));
    m_front->setLineStyle(QCPGraph::lsStepLeft);
    m_front->setPen(QPen(QColor(90, 90, 90), 1.2, Qt::DashLine));
    m_front->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(QColor(30, 30, 30), 1.5), Qt::NoBrush, 12));
    m_front->setSelectable(QCP::stNone);
    for (int i : front)
        m_front->addData(m_table.row(i).delayCycles, m_table.row(i).energyPj);
    if (front.empty()) m_front->removeFromLegend();

    if (!m_shown.empty()) {
        double x0 = INFINITY, x1 = 0, y0 = INFINITY, y1 = 0;
        for (int i : m_shown) {
            x0 = std::min(x0, m_table.row(i).delayCycles);
            x1 = std::max(x1, m_table.row(i).delayCycles);
            y0 = std::min(y0, m_table.row(i).energyPj);
            y1 = std::max(y1, m_table.row(i).energyPj);
        }
        m_plot->xAxis->setRange(x0 / 1.4, x1 * 1.4);
        m_plot->yAxis->setRange(y0 / 1.4, y1 * 1.4);
    }
    m_status->setText(tr("%1 of %2 points shown, %3 on the Pareto front%4. Hover a point for its "
                         "figures; double-click opens its schedule.")
                          .arg(m_shown.size())
                          .arg(m_table.size())
                          .arg(m_paretoCount)
                          .arg(m_failed
                                   ? tr("; %1 without a valid schedule (not plotted)").arg(m_failed)
                                   : QString()));
    m_plot->replot();
}

QPointF SweepView::pixelOf(int row) const {
    const SweepRow& r = m_table.row(row);
    return {m_plot->xAxis->coordToPixel(r.delayCycles), m_plot->yAxis->coordToPixel(r.energyPj)};
}

int SweepView::rowAt(const QPointF& pixel, double radius) const {
    int best = -1;
    double bestD = radius * radius;
    for (int i : m_shown) {
        const QPointF d = pixelOf(i) - pixel;
        const double dd = d.x() * d.x() + d.y() * d.y();
        if (dd <= bestD) {
            bestD = dd;
            best = i;
        }
    }
    return best;
}

QString SweepView::describe(int i) const {
    const SweepRow& r = m_table.row(i);
    QString s =
        tr("%1 on %2, batch %3, E^%4 x D^%5, seed %6")
            .arg(m_table.value(i, QStringLiteral("model")), QString::fromStdString(r.hwName))
            .arg(r.batch)
            .arg(r.objectiveN)
            .arg(r.objectiveM)
            .arg(qulonglong(r.seed));
    s += QLatin1Char('\n') + tr("energy %1, delay %2 cycles, cost %3")
                                 .arg(QString::fromStdString(formatEnergy(r.energyPj)))
                                 .arg(r.delayCycles, 0, 'g', 6)
                                 .arg(r.cost, 0, 'g', 6);
    s += QLatin1Char('\n') + tr("DRAM %1, NoC %2 hop-bytes, search %3 s (%4)")
                                 .arg(QString::fromStdString(formatBytes(r.dramBytes)))
                                 .arg(QString::fromStdString(formatBytes(r.nocHopBytes)))
                                 .arg(r.elapsedS, 0, 'f', 2)
                                 .arg(QString::fromStdString(r.mode));
    QStringList dims; // every binding of the row, varied or not
    if (auto bound = sweepRowDims(r, r.point))
        for (const auto& [name, size] : *bound)
            dims << QString::fromStdString(name + " " + std::to_string(size));
    if (!dims.isEmpty()) s += QLatin1Char('\n') + tr("dimensions: %1").arg(dims.join(", "));
    s += QLatin1Char('\n') + tr("point %1").arg(QString::fromStdString(r.point.substr(0, 16)));
    return s;
}

void SweepView::activate(int row) {
    if (row < 0 || row >= m_table.size()) return;
    emit openPointRequested(m_table.row(row), m_path);
}

bool SweepView::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_plot) {
        if (event->type() == QEvent::MouseMove) {
            auto* me = static_cast<QMouseEvent*>(event);
            const int i = rowAt(me->position());
            if (i >= 0)
                QToolTip::showText(me->globalPosition().toPoint(), describe(i), m_plot);
            else
                QToolTip::hideText();
        } else if (event->type() == QEvent::MouseButtonDblClick) {
            auto* me = static_cast<QMouseEvent*>(event);
            const int i = rowAt(me->position());
            if (i >= 0) {
                activate(i);
                return true;
            }
        }
    }
    return QWidget::eventFilter(watched, event);
}

} // namespace tilescope::ui
