// Exports for the main window, the paths a user writes files by: images of the S-T graph,
// the NoC heatmap and every chart (a chart's data also as CSV); the tables as CSV;
// reports, trees and timelines from the document; and the test-chip program folder,
// generated off the GUI thread.
#pragma once

#include "core/backgroundjob.h"
#include "pipeline/export.h"

#include <QHash>
#include <QObject>
#include <QPointer>
#include <QString>

class QAbstractItemModel;
class QCustomPlot;
class QWidget;

namespace tilescope::ui {

class Document;
class NocHeatmapView;
class SearchController;
class StGraphView;

class ExportController : public QObject {
    Q_OBJECT
  public:
    // Images are drawn by `st` and `heatmap`; reports carry the last results of `search`;
    // dialogs open over `window`.
    ExportController(Document* doc, StGraphView* st, NocHeatmapView* heatmap,
                     const SearchController* search, QWidget* window);

    // Export by kind: "st" / "heatmap" (png, svg, pdf by suffix), "html", "json",
    // "tree-text", "tree-json", "trace"; "chart:NAME" (png, svg, pdf, or its data for csv)
    // and "table:NAME" (csv) for the charts and tables registered below.
    bool exportTo(const QString& kind, const QString& path);
    // Charts and tables a user can export (the main window registers its panels').
    void addChart(const QString& name, QCustomPlot* plot);
    void addTable(const QString& name, QAbstractItemModel* model);
    // A save dialog with `filter`, then exportTo; a name without a suffix takes the chosen
    // filter's (or `suffix`).
    void exportDialog(const QString& kind, const QString& filter, const QString& suffix);
    // Generates the program for the current tree off the GUI thread and writes the test-chip
    // folder (exportProgram: atomic, validated) in the given formats (program.bin alone by
    // default); testChipExported reports the outcome.
    void exportForTestChip(const QString& dir, const ProgramFormats& formats = {});
    // File > Export for test chip: a folder, then the formats (ProgramFormatsDialog).
    void exportForTestChipDialog();

  signals:
    void testChipExported(bool ok, const QString& message);
    void errorOccurred(const QString& title, const QString& message);
    void statusMessage(const QString& text, int timeoutMs);

  private:
    QString reportHtml();

    Document* m_doc;
    StGraphView* m_st;
    NocHeatmapView* m_heatmap;
    const SearchController* m_search;
    QWidget* m_window;
    BackgroundJob m_exportJob{this}; // a test-chip export; busy() refuses a second one
    ProgramFormats m_exportFormats;  // the formats last chosen for a test-chip export
    QString m_exportFolder;          // the folder last written by a test-chip export
    QHash<QString, QPointer<QCustomPlot>> m_charts;
    QHash<QString, QPointer<QAbstractItemModel>> m_tables;
};

} // namespace tilescope::ui
