// The metrics panel: the energy breakdown as a small bar chart, the headline figures of
// the document's evaluation, the dominant bound per segment, and LS / LP / SA side by
// side once a comparison has run.
#pragma once

#include "core/searchsnapshot.h"

#include <QWidget>

class QCustomPlot;
class QCPBars;
class QLabel;
class QTableWidget;
class QPushButton;

namespace tilescope::ui {

class Document;

class MetricsPanel : public QWidget {
    Q_OBJECT
public:
    explicit MetricsPanel(Document* doc, QWidget* parent = nullptr);

    void setCompare(ComparePtr compare);
    void setCompareRunning(bool running);
    QCustomPlot* energyPlot() const { return m_plot; }
    QString figureText(const QString& key) const; // a label's text (tests)

signals:
    void compareRequested();

private:
    void refresh();

    Document* m_doc;
    QCustomPlot* m_plot;
    QCPBars* m_bars;
    QMap<QString, QLabel*> m_figures;
    QTableWidget* m_segments;
    QTableWidget* m_compare;
    QPushButton* m_compareButton;
    ComparePtr m_lastCompare;
};

} // namespace tilescope::ui
