// Chart export to PNG, SVG or PDF (chosen by the file suffix), or its data as CSV. Everything is
// rendered to memory first and written with writeFileAtomic, so a failed export leaves no half
// file.
#pragma once

#include <QByteArray>
#include <QSize>
#include <QString>
#include <functional>

class QPaintDevice;
class QCustomPlot;

namespace tilescope::ui {

// paint(device, size) draws the chart on device at the given logical size.
// Returns an empty string on success, else the one-line error (file + reason).
QString exportPainting(const QString& path, QSize size,
                       const std::function<void(QPaintDevice*, QSize)>& paint);
QString exportPlot(QCustomPlot* plot, const QString& path);
// Every graph's points as CSV: series, x, y, with the axes' labels in the header.
QByteArray plotCsv(QCustomPlot* plot);
// Writes text atomically; the error names the file.
QString writeTextFile(const QString& path, const QByteArray& contents);

} // namespace tilescope::ui
