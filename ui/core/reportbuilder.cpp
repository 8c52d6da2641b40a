#include "core/reportbuilder.h"

#include "core/bytestext.h"
#include "core/document.h"
#include "core/layernames.h"
#include "report/result_json.h"
#include "report/segments.h"

#include <QDateTime>
#include <QLocale>

namespace tilescope::ui {

using nlohmann::json;

ReportBuilder::ReportBuilder(const Document& doc, OutcomePtr lastSearch, ComparePtr compare)
    : m_doc(doc), m_search(std::move(lastSearch)), m_compare(std::move(compare)) {}

json ReportBuilder::json() const {
    nlohmann::json j = nlohmann::json::object();
    if (!m_doc.hasModel()) return j;
    ResultContext ctx;
    ctx.modelPath = m_doc.modelPath().toStdString();
    ctx.modelSha256 = m_doc.modelSha256().toStdString();
    ctx.hw = m_doc.hardware().get();
    ctx.batch = m_doc.batch();
    j = evaluationResultJson(*m_doc.evaluation(), m_doc.tree(), *m_doc.network(), ctx);
    if (m_search) {
        ResultContext sc = ctx;
        sc.seed = m_search->result.seed;
        sc.iterations = m_search->result.iterations;
        sc.elapsedSeconds = m_search->result.elapsedSeconds;
        j["last_search"] =
            searchResultJson(m_search->result, m_search->result.best, *m_search->net, sc);
    }
    if (m_compare) {
        nlohmann::json rows = nlohmann::json::object();
        for (const auto& r : m_compare->rows) {
            const char* key = r.mode == SearchMode::Set ? "sa" : toString(r.mode);
            if (!r.ok) {
                rows[key] = {{"error", r.error.toStdString()}};
                continue;
            }
            rows[key] = {{"energy_pj", r.eval.energy.total()},
                         {"delay_cycles", r.eval.delay},
                         {"cost", r.eval.cost},
                         {"seconds", r.seconds},
                         {"tree", treeToText(r.best, *m_doc.network())}};
        }
        j["compare"] = rows;
    }
    return j;
}

namespace {
QString esc(const QString& s) {
    return s.toHtmlEscaped();
}
QString num(double v) {
    return QString::number(v, 'g', 5);
}
} // namespace

void ReportBuilder::addFigure(const QString& caption, const QByteArray& bytes,
                              const QString& mimeType) {
    m_figures.push_back({caption, bytes, mimeType});
}

QString ReportBuilder::html() const {
    QString h;
    h += QStringLiteral(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Tilescope report</title>"
        "<style>body{font-family:sans-serif;margin:2em;max-width:70em}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px "
        "8px;text-align:right}"
        "th{background:#eee}td.l,th.l{text-align:left}pre{background:#f6f6f6;padding:1em}"
        ".bad{color:#c62828}</style></head><body>\n");
    h += QStringLiteral("<h1>Tilescope report</h1>\n");
    if (!m_doc.hasModel()) return h + QStringLiteral("<p>No model loaded.</p></body></html>\n");
    const Evaluation& e = *m_doc.evaluation();
    const Network& net = *m_doc.network();
    const Hardware& hw = *m_doc.hardware();
    h += QStringLiteral("<p>Model <code>%1</code> (sha256 <code>%2</code>), %3 layers; hardware %4 "
                        "(%5x%6 tiles, %7 GHz); "
                        "batch %8; objective E<sup>%9</sup> D<sup>%10</sup>; generated %11.</p>\n")
             .arg(esc(m_doc.modelPath()), m_doc.modelSha256().left(16))
             .arg(net.layers.size())
             .arg(esc(QString::fromStdString(hw.name)))
             .arg(hw.meshX)
             .arg(hw.meshY)
             .arg(hw.clockGHz)
             .arg(m_doc.batch())
             .arg(m_doc.objective().n)
             .arg(m_doc.objective().m)
             .arg(QDateTime::currentDateTime().toString(Qt::ISODate));
    if (!e.valid)
        h += QStringLiteral("<p class=\"bad\">Invalid schedule: %1</p>\n")
                 .arg(esc(QString::fromStdString(e.reason)));
    // The units policy (engine/util/units.h): the same text as the metrics panel shows.
    h += QStringLiteral("<h2>Figures</h2><table>\n");
    auto row = [&](const QString& k, const QString& v) {
        h += QStringLiteral("<tr><th class=\"l\">%1</th><td>%2</td></tr>\n").arg(k, v);
    };
    const double ghz = hw.clockGHz;
    row(QStringLiteral("Energy"), energyText(e.energy.total()));
    row(QStringLiteral("&nbsp;DRAM"), energyText(e.energy.dram));
    row(QStringLiteral("&nbsp;NoC"), energyText(e.energy.noc));
    row(QStringLiteral("&nbsp;MAC"), energyText(e.energy.mac));
    row(QStringLiteral("&nbsp;Buffers"), energyText(e.energy.buffer));
    for (size_t i = 0; i < hw.levels.size() && i < e.energy.levels.size(); ++i) // in-tile levels
        row(QStringLiteral("&nbsp;%1").arg(esc(QString::fromStdString(hw.levels[i].name))),
            energyText(e.energy.levels[i]));
    if (hw.arch == TileArch::Cim) { // compute-in-memory: crossbar writes (docs/cost-model.md §8)
        row(QStringLiteral("&nbsp;Weight writes"), energyText(e.energy.weightWrite));
        row(QStringLiteral("Crossbar programmings"),
            QStringLiteral("%1 (default loop order: %2)")
                .arg(QLocale().toString(qlonglong(e.weightProgrammings)),
                     QLocale().toString(qlonglong(e.weightProgrammingsDefault))));
    }
    row(QStringLiteral("Delay"), timeText(e.delay, ghz));
    row(QStringLiteral("Objective E^n D^m"), num(e.cost));
    row(QStringLiteral("Utilisation"), QStringLiteral("%1 %").arg(e.utilisation * 100, 0, 'f', 1));
    row(QStringLiteral("DRAM bytes"), bytesText(e.dramBytes));
    if (e.blockedLeaves > 0)
        row(QStringLiteral("Blocked leaves"),
            blockedLeavesText(e.blockedLeaves, e.blockingDramBytes));
    row(QStringLiteral("NoC hop-bytes"), bytesText(e.nocHopBytes));
    h += QStringLiteral("</table>\n");

    for (const Figure& f : m_figures)
        h += QStringLiteral("<figure><img alt=\"%1\" style=\"max-width:100%\" "
                            "src=\"data:%2;base64,%3\"><figcaption>%1</figcaption></figure>\n")
                 .arg(esc(f.caption), f.mime, QString::fromLatin1(f.bytes.toBase64()));

    const RATree& t = m_doc.tree();
    const QStringList names = displayLayerNames(net);
    h += QStringLiteral(
        "<h2>Segments</h2><table id=\"segments\"><tr><th class=\"l\">segment</th>"
        "<th class=\"l\">type</th><th>layers</th><th>time</th><th>energy</th><th>DRAM</th>"
        "<th class=\"l\">bound</th><th>starts</th><th>adds to delay</th></tr>\n");
    for (const SegmentFigures& sg : segmentFigures(e, t, net)) {
        const RANode& n = t.node(sg.node);
        const QString name = n.type == NodeType::Leaf ? names.value(n.layer)
                                                      : QStringLiteral("%1 %2")
                                                            .arg(QString::fromStdString(sg.path))
                                                            .arg(QLatin1String(toString(n.type)));
        h += QStringLiteral("<tr><td class=\"l\">%1</td><td "
                            "class=\"l\">%2</td><td>%3</td><td>%4</td><td>%5</td><td>%6</td><td "
                            "class=\"l\">%7</td><td>%8</td><td>%9</td></tr>\n")
                 .arg(esc(name), QString::fromLatin1(toString(n.type)))
                 .arg(sg.layers)
                 .arg(timeText(sg.time, ghz), energyText(sg.energy), bytesText(sg.dramBytes),
                      QString::fromLatin1(toString(sg.bound)), timeText(sg.start, ghz),
                      timeText(sg.share, ghz));
    }
    h += QStringLiteral("</table>\n");

    if (m_compare && !m_compare->rows.empty()) {
        h += QStringLiteral(
            "<h2>SA versus LS, LP and DP-LP</h2><table><tr><th class=\"l\">space</th>"
            "<th>energy</th><th>delay</th><th>objective</th><th>EDP</th><th>vs SA</th></tr>\n");
        double sa = 0;
        for (const auto& r : m_compare->rows)
            if (r.ok && r.mode == SearchMode::Set) sa = r.eval.cost;
        for (const auto& r : m_compare->rows) {
            const QString name = r.mode == SearchMode::Set
                                     ? QStringLiteral("SA")
                                     : QString::fromLatin1(toString(r.mode)).toUpper();
            if (!r.ok) {
                h += QStringLiteral(
                         "<tr><td class=\"l\">%1</td><td class=\"l\" colspan=\"5\">%2</td></tr>\n")
                         .arg(name, esc(r.error));
                continue;
            }
            h += QStringLiteral("<tr><td "
                                "class=\"l\">%1</td><td>%2</td><td>%3</td><td>%4</td><td>%5</"
                                "td><td>%6</td></tr>\n")
                     .arg(name, energyText(r.eval.energy.total()), cyclesText(r.eval.delay),
                          num(r.eval.cost), num(edpOf(r.eval)),
                          sa > 0 ? QStringLiteral("%1x").arg(r.eval.cost / sa, 0, 'f', 3)
                                 : QString());
        }
        h += QStringLiteral("</table>\n");
    }
    if (m_search) {
        const SearchResult& r = m_search->result;
        const QString budget = r.config.seconds > 0
                                   ? QStringLiteral("time budget %1 s").arg(r.config.seconds)
                                   : QStringLiteral("beta %1").arg(r.config.beta);
        h += QStringLiteral(
                 "<h2>Last search</h2><p>mode %1, seed %2, %3, T0 %4, alpha %5, %6 chain(s), "
                 "%7 iterations per chain, %8 s; start cost %9, best %10.</p>\n")
                 .arg(QString::fromLatin1(toString(r.config.mode)))
                 .arg(r.seed)
                 .arg(budget)
                 .arg(r.config.t0)
                 .arg(r.config.alpha)
                 .arg(r.config.chains)
                 .arg(r.iterations)
                 .arg(r.elapsedSeconds, 0, 'f', 2)
                 .arg(num(r.initialEval.cost), num(r.best.cost));
    }
    h += QStringLiteral("<h2>RA tree</h2><pre>%1</pre>\n")
             .arg(esc(QString::fromStdString(treeToText(t, net))));
    h += QStringLiteral("</body></html>\n");
    return h;
}

} // namespace tilescope::ui
