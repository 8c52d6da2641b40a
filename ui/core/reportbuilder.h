// The report of the current schedule for people (HTML) and tools (JSON): figures of the
// document's evaluation, per-segment bounds, the last search and the LS/LP/SA comparison.
#pragma once

#include "core/searchsnapshot.h"

#include <QString>
#include <nlohmann/json.hpp>

namespace tilescope::ui {

class Document;

class ReportBuilder {
  public:
    ReportBuilder(const Document& doc, OutcomePtr lastSearch, ComparePtr compare);

    nlohmann::json json() const;
    QString html() const;

  private:
    const Document& m_doc;
    OutcomePtr m_search;
    ComparePtr m_compare;
};

} // namespace tilescope::ui
