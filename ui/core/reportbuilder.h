// The report of the current schedule for people (HTML) and tools (JSON): figures of the
// document's evaluation, per-segment bounds, the last search and the LS/LP/SA comparison.
#pragma once

#include "core/searchsnapshot.h"

#include <QList>
#include <QString>
#include <nlohmann/json.hpp>

namespace tilescope::ui {

class Document;

class ReportBuilder {
  public:
    ReportBuilder(const Document& doc, OutcomePtr lastSearch, ComparePtr compare);

    nlohmann::json json() const;
    QString html() const;
    // Figures embedded in the HTML (data: URLs, the file stays self-contained): PNG or SVG
    // bytes with a caption, in order (MainWindow adds the S-T graph and the heatmap).
    void addFigure(const QString& caption, const QByteArray& bytes, const QString& mimeType);

  private:
    struct Figure {
        QString caption;
        QByteArray bytes;
        QString mime;
    };
    QList<Figure> m_figures;
    const Document& m_doc;
    OutcomePtr m_search;
    ComparePtr m_compare;
};

} // namespace tilescope::ui
