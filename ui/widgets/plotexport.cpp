#include "widgets/plotexport.h"

#include "core/tablecsv.h"
#include "util/fileio.h"

#include <QBuffer>
#include <QByteArray>
#include <QFileInfo>
#include <QImage>
#include <QPageSize>
#include <QPdfWriter>
#include <QSvgGenerator>
#include <qcustomplot.h>

namespace tilescope::ui {

QString writeTextFile(const QString& path, const QByteArray& contents) {
    if (auto err = writeFileAtomic(path.toStdString(), contents.toStdString()))
        return QString::fromStdString(err->message);
    return {};
}

QString exportPainting(const QString& path, QSize size,
                       const std::function<void(QPaintDevice*, QSize)>& paint) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    if (suffix == QLatin1String("png")) {
        // Twice the screen size: exported charts end up in slides and papers.
        QImage img(size * 2, QImage::Format_ARGB32_Premultiplied);
        img.setDevicePixelRatio(2.0);
        img.fill(Qt::white);
        paint(&img, size);
        if (!img.save(&buffer, "PNG")) return path + QStringLiteral(": PNG encoding failed");
    } else if (suffix == QLatin1String("svg")) {
        QSvgGenerator svg;
        svg.setOutputDevice(&buffer);
        svg.setSize(size);
        svg.setViewBox(QRect(QPoint(0, 0), size));
        svg.setTitle(QStringLiteral("Tilescope"));
        paint(&svg, size);
    } else if (suffix == QLatin1String("pdf")) {
        QPdfWriter pdf(&buffer);
        pdf.setResolution(72); // one device pixel = one point: the chart keeps its layout
        pdf.setPageSize(QPageSize(QSizeF(size), QPageSize::Point));
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        pdf.setCreator(QStringLiteral("Tilescope"));
        paint(&pdf, size);
    } else {
        return path +
               QStringLiteral(": unknown export format '%1' (use .png, .svg or .pdf)").arg(suffix);
    }
    buffer.close();
    if (bytes.isEmpty()) return path + QStringLiteral(": nothing was rendered");
    return writeTextFile(path, bytes);
}

QString exportPlot(QCustomPlot* plot, const QString& path) {
    const QSize size = plot->size().isEmpty() ? QSize(1200, 700) : plot->size();
    return exportPainting(path, size, [plot](QPaintDevice* dev, QSize s) {
        QCPPainter painter(dev);
        // Vector outputs keep cosmetic pens thin (QCP::epAllowCosmetic in savePdf).
        painter.setMode(QCPPainter::pmVectorized, dev->devType() != QInternal::Image);
        painter.setMode(QCPPainter::pmNoCaching);
        plot->toPainter(&painter, s.width(), s.height());
    });
}

QByteArray plotCsv(QCustomPlot* plot) {
    QByteArray csv = csvLine({QStringLiteral("series"), QStringLiteral("x axis"),
                              QStringLiteral("x"), QStringLiteral("y axis"), QStringLiteral("y")});
    auto number = [](double v) { return QString::number(v, 'g', 10); };
    for (int i = 0; i < plot->plottableCount(); ++i) {
        const QCPAbstractPlottable* p = plot->plottable(i);
        const QString name = p->name().isEmpty() ? QStringLiteral("series %1").arg(i) : p->name();
        const QString xl = p->keyAxis()->label(), yl = p->valueAxis()->label();
        // A bar chart's keys are categories: their tick text ("DRAM") rather than 1, 2, ...
        const auto text = p->keyAxis()->ticker().dynamicCast<QCPAxisTickerText>();
        auto key = [&](double k) {
            return text && text->ticks().contains(k) ? text->ticks().value(k) : number(k);
        };
        auto rows = [&](const auto& data) {
            for (auto it = data->constBegin(); it != data->constEnd(); ++it)
                csv += csvLine({name, xl, key(it->mainKey()), yl, number(it->mainValue())});
        };
        if (auto* g = qobject_cast<const QCPGraph*>(p))
            rows(g->data());
        else if (auto* b = qobject_cast<const QCPBars*>(p))
            rows(b->data());
        else if (auto* c = qobject_cast<const QCPCurve*>(p))
            rows(c->data());
    }
    return csv;
}

} // namespace tilescope::ui
