#include "widgets/comparesessionsdialog.h"

#include "core/bytestext.h"
#include "core/layernames.h"
#include "core/session.h"
#include "core/treediff.h"
#include "eval/evaluator.h"
#include "widgets/axisfit.h"
#include "widgets/diffpanel.h"
#include "widgets/stgraphplottable.h"

#include <QFileInfo>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <qcustomplot.h>

namespace tilescope::ui {

CompareSessionsDialog::CompareSessionsDialog(QWidget* parent)
    : QDialog(parent), m_summary(new QLabel(this)), m_table(makeDiffTable(this)) {
    setObjectName(QStringLiteral("compareSessionsDialog"));
    setWindowTitle(tr("Compare sessions (A/B)"));
    auto* lay = new QVBoxLayout(this);
    auto* vsplit = new QSplitter(Qt::Vertical, this);
    auto* hsplit = new QSplitter(Qt::Horizontal, vsplit);
    for (size_t i = 0; i < m_sides.size(); ++i) {
        auto* pane = new QWidget(hsplit);
        auto* pl = new QVBoxLayout(pane);
        pl->setContentsMargins(0, 0, 0, 0);
        Side& s = m_sides[i];
        s.title = new QLabel(pane);
        s.title->setTextInteractionFlags(Qt::TextSelectableByMouse);
        s.metrics = new QLabel(pane);
        s.metrics->setWordWrap(true);
        s.metrics->setTextInteractionFlags(Qt::TextSelectableByMouse);
        s.plot = new QCustomPlot(pane);
        s.plot->setObjectName(i == 0 ? QStringLiteral("comparePlotA")
                                     : QStringLiteral("comparePlotB"));
        s.plot->setMinimumSize(300, 220);
        s.plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
        s.plot->axisRect()->setRangeDrag(Qt::Horizontal);
        s.plot->axisRect()->setRangeZoom(Qt::Horizontal);
        s.plot->xAxis->setLabel(tr("time (cycles)"));
        s.plot->xAxis->setNumberFormat(QStringLiteral("gb"));
        s.plot->xAxis->setNumberPrecision(3);
        s.plot->xAxis->ticker()->setTickCount(4);
        s.plot->yAxis->setLabel(tr("tile"));
        s.plot->yAxis->setRangeReversed(true);
        s.plot->yAxis->grid()->setVisible(false);
        s.rects = new StGraphPlottable(s.plot->xAxis, s.plot->yAxis);
        fitAxisTicks(s.plot);
        pl->addWidget(s.title);
        pl->addWidget(s.metrics);
        pl->addWidget(s.plot, 1);
        hsplit->addWidget(pane);
    }
    auto* bottom = new QWidget(vsplit);
    auto* bl = new QVBoxLayout(bottom);
    bl->setContentsMargins(0, 0, 0, 0);
    m_summary->setObjectName(QStringLiteral("compareSummary"));
    m_summary->setWordWrap(true);
    bl->addWidget(m_summary);
    bl->addWidget(m_table, 1);
    vsplit->addWidget(hsplit);
    vsplit->addWidget(bottom);
    vsplit->setStretchFactor(0, 3);
    vsplit->setStretchFactor(1, 2);
    lay->addWidget(vsplit);
    linkAxes();
    resize(1180, 720);
}

void CompareSessionsDialog::linkAxes() {
    // One time axis: a zoom or pan in either graph moves the other.
    for (size_t i = 0; i < m_sides.size(); ++i) {
        QCustomPlot* other = m_sides[1 - i].plot;
        connect(m_sides[i].plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
                [this, other](const QCPRange& r) {
                    if (m_syncing) return;
                    m_syncing = true;
                    other->xAxis->setRange(r);
                    other->replot(QCustomPlot::rpQueuedReplot);
                    m_syncing = false;
                });
    }
}

bool CompareSessionsDialog::open(const QString& pathA, const QString& pathB) {
    struct Loaded {
        Session session;
        Session::Inputs in;
        std::shared_ptr<const Evaluation> eval;
    };
    std::array<Loaded, 2> loaded;
    const std::array<QString, 2> paths{pathA, pathB};
    for (size_t i = 0; i < 2; ++i) {
        auto s = Session::load(paths[i]);
        if (!s) {
            m_error = QString::fromStdString(s.error().message);
            return false;
        }
        auto in = s->resolve(paths[i]);
        if (!in) {
            m_error = QString::fromStdString(in.error().message);
            return false;
        }
        EvalOptions opt;
        opt.objective = s->objective;
        opt.layouts = s->layouts; // each session's own choice
        opt.detail = true;        // the intervals the S-T graph is made of
        loaded[i].eval =
            std::make_shared<const Evaluation>(evaluate(*in->net, in->hw, in->tree, s->batch, opt));
        loaded[i].session = std::move(s).value();
        loaded[i].in = std::move(in).value();
    }
    m_error.clear();
    double end = 0;
    for (size_t i = 0; i < 2; ++i) {
        const Loaded& l = loaded[i];
        Side& s = m_sides[i];
        const Evaluation& e = *l.eval;
        s.title->setText(tr("<b>%1</b> %2")
                             .arg(i == 0 ? QStringLiteral("A") : QStringLiteral("B"),
                                  QFileInfo(paths[i]).fileName().toHtmlEscaped()));
        const QString inputs = tr("%1 on %2, batch %3")
                                   .arg(QFileInfo(l.session.modelPath).fileName(),
                                        QString::fromStdString(l.in.hw.name))
                                   .arg(l.session.batch);
        s.metrics->setText(
            e.valid ? tr("%1\nenergy %2, delay %3, objective %4 (E^%5 D^%6)")
                          .arg(inputs, energyText(e.energy.total()),
                               timeText(e.delay, l.in.hw.clockGHz))
                          .arg(objectiveText(e.cost))
                          .arg(l.session.objective.n)
                          .arg(l.session.objective.m)
                    : tr("%1\ninvalid: %2").arg(inputs, QString::fromStdString(e.reason)));
        auto layout = e.valid
                          ? StLayout::build(l.eval, l.in.hw.tiles(), displayLayerNames(*l.in.net),
                                            StRowOrder::forHardware(l.in.hw))
                          : nullptr;
        if (layout) end = std::max(end, layout->endCycle());
        s.rects->setLayout(layout);
        s.plot->yAxis->setRange(-0.5, l.in.hw.tiles() - 0.5);
        setTileTicker(s.plot->yAxis, l.in.hw.tiles());
    }
    for (Side& s : m_sides) {
        m_syncing = true; // both get the same range here
        s.plot->xAxis->setRange(0, std::max(1.0, end * 1.01));
        m_syncing = false;
        s.plot->replot();
    }
    const Loaded &a = loaded[0], &b = loaded[1];
    m_table->setRowCount(0);
    if (a.session.modelSha256 != b.session.modelSha256 || a.session.batch != b.session.batch) {
        m_summary->setText(tr("A and B schedule different models or batches: no tree diff."));
        return true;
    }
    const TreeDiff d = diffTrees(a.in.tree, a.eval.get(), b.in.tree, b.eval.get(), *a.in.net);
    m_summary->setText(d.identical() ? tr("Tree diff B against A: identical trees")
                                     : tr("Tree diff B against A: %1").arg(d.summary()));
    fillDiffTable(m_table, d);
    return true;
}

QString CompareSessionsDialog::metricsText(int side) const {
    return m_sides[size_t(side)].metrics->text();
}

QString CompareSessionsDialog::diffSummary() const {
    return m_summary->text();
}

} // namespace tilescope::ui
