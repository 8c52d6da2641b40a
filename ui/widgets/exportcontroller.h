// Exports for the main window, the three paths a user writes files by: images of the S-T
// graph and the NoC heatmap; reports, trees and timelines from the document; and the
// test-chip program folder, generated off the GUI thread.
#pragma once

#include "core/backgroundjob.h"
#include "pipeline/export.h"

#include <QObject>
#include <QString>

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
    // "tree-text", "tree-json", "trace".
    bool exportTo(const QString& kind, const QString& path);
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
};

} // namespace tilescope::ui
