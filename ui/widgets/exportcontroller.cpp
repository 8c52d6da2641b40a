#include "widgets/exportcontroller.h"

#include "core/bytestext.h"
#include "core/document.h"
#include "core/qstrings.h"
#include "core/reportbuilder.h"
#include "core/tablecsv.h"
#include "pipeline/program_flow.h"
#include "report/trace_json.h"
#include "tree/tree_json.h"
#include "util/fileio.h"
#include "widgets/nocheatmapview.h"
#include "widgets/plotexport.h"
#include "widgets/programformatsdialog.h"
#include "widgets/searchcontroller.h"
#include "widgets/stgraphview.h"

#include <QAbstractItemModel>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLocale>
#include <QTemporaryDir>
#include <qcustomplot.h>

namespace tilescope::ui {

namespace {
// What the off-thread test-chip export reports back.
struct TestChipExport {
    QString error;
    size_t instructions = 0;
    std::uint64_t programDram = 0;
    double scheduleDram = 0;
};
} // namespace

ExportController::ExportController(Document* doc, StGraphView* st, NocHeatmapView* heatmap,
                                   const SearchController* search, QWidget* window)
    : QObject(window), m_doc(doc), m_st(st), m_heatmap(heatmap), m_search(search),
      m_window(window) {}

void ExportController::addChart(const QString& name, QCustomPlot* plot) {
    m_charts.insert(name, plot);
}

void ExportController::addTable(const QString& name, QAbstractItemModel* model) {
    m_tables.insert(name, model);
}

bool ExportController::exportTo(const QString& kind, const QString& path) {
    if (!m_doc->hasModel()) {
        emit errorOccurred(tr("Export"), tr("Nothing to export: open a model first"));
        return false;
    }
    QString err;
    const Network& net = *m_doc->network();
    const QString name = kind.section(QLatin1Char(':'), 1);
    const bool csv =
        QFileInfo(path).suffix().compare(QLatin1String("csv"), Qt::CaseInsensitive) == 0;
    if (kind.startsWith(QLatin1String("chart:")) && m_charts.value(name))
        err = csv ? writeTextFile(path, plotCsv(m_charts.value(name)))
                  : exportPlot(m_charts.value(name), path);
    else if (kind.startsWith(QLatin1String("table:")) && m_tables.value(name))
        err = writeTextFile(path, tableCsv(*m_tables.value(name)));
    else if (kind == QLatin1String("st"))
        err = m_st->exportTo(path);
    else if (kind == QLatin1String("heatmap"))
        err = m_heatmap->exportTo(path);
    else if (kind == QLatin1String("html"))
        err = writeTextFile(path, reportHtml().toUtf8());
    else if (kind == QLatin1String("json"))
        err = writeTextFile(path,
                            QByteArray::fromStdString(ReportBuilder(*m_doc, m_search->lastSearch(),
                                                                    m_search->lastCompare())
                                                          .json()
                                                          .dump(2) +
                                                      "\n"));
    else if (kind == QLatin1String("tree-text"))
        err = writeTextFile(path, QByteArray::fromStdString(treeToText(m_doc->tree(), net)));
    else if (kind == QLatin1String("tree-json"))
        err = writeTextFile(path, QByteArray::fromStdString(treeToJson(m_doc->tree(), net) + "\n"));
    else if (kind == QLatin1String("trace"))
        err =
            writeTextFile(path, QByteArray::fromStdString(traceEventJson(
                                    *m_doc->evaluation(), net, *m_doc->hardware(), m_doc->tree())));
    else
        err = tr("unknown export kind '%1'").arg(kind);
    if (!err.isEmpty()) {
        emit errorOccurred(tr("Export"), err);
        return false;
    }
    emit statusMessage(tr("Exported %1").arg(path), 5000);
    return true;
}

QString ExportController::reportHtml() {
    // The report carries the S-T graph and the heatmap as the views draw them, so a reader
    // sees what the user saw; rendered through the export path (2x PNG, no selection) into a
    // scratch folder and embedded.
    ReportBuilder report(*m_doc, m_search->lastSearch(), m_search->lastCompare());
    QTemporaryDir tmp;
    if (tmp.isValid()) {
        auto embed = [&](const QString& caption, const QString& file, auto render) {
            const QString p = tmp.filePath(file);
            if (!render(p).isEmpty()) return;
            QFile f(p);
            if (f.open(QIODevice::ReadOnly))
                report.addFigure(caption, f.readAll(), QStringLiteral("image/png"));
        };
        embed(tr("S-T graph: time (cycles) against tile id"), QStringLiteral("st.png"),
              [this](const QString& p) { return m_st->exportTo(p); });
        embed(tr("NoC heatmap: tile busy fraction and link traffic"), QStringLiteral("noc.png"),
              [this](const QString& p) { return m_heatmap->exportTo(p); });
    }
    return report.html();
}

void ExportController::exportDialog(const QString& kind, const QString& filter,
                                    const QString& suffix) {
    QFileDialog dlg(m_window, tr("Export"), {}, filter);
    dlg.setAcceptMode(QFileDialog::AcceptSave);
    dlg.setDefaultSuffix(suffix);
    if (dlg.exec() != QDialog::Accepted || dlg.selectedFiles().isEmpty()) return;
    QString path = dlg.selectedFiles().front();
    // The chosen filter decides the format when the name has no suffix of its own.
    if (QFileInfo(path).suffix().isEmpty()) {
        const QString f = dlg.selectedNameFilter();
        const int a = f.indexOf(QLatin1String("*.")), b = f.indexOf(QLatin1Char(')'), a);
        if (a >= 0 && b > a) path += f.mid(a + 1, b - a - 1);
    }
    exportTo(kind, path);
}

void ExportController::exportForTestChipDialog() {
    // One dialog for the folder and the formats; a typed folder that does not exist yet is
    // created by the export (the folder chooser alone would refuse it).
    if (m_exportFolder.isEmpty())
        m_exportFolder = QDir::home().filePath(QStringLiteral("tilescope-program"));
    ProgramFormatsDialog ask(m_exportFormats, m_window, m_exportFolder);
    ask.setObjectName(QStringLiteral("testChipExportDialog"));
    if (ask.exec() != QDialog::Accepted) return;
    m_exportFormats = ask.formats();
    m_exportFolder = ask.folder();
    exportForTestChip(m_exportFolder, m_exportFormats);
}

void ExportController::exportForTestChip(const QString& dir, const ProgramFormats& formats) {
    if (!m_doc->hasModel()) {
        const QString msg = tr("Nothing to export: open a model first");
        emit errorOccurred(tr("Export for test chip"), msg);
        emit testChipExported(false, msg);
        return;
    }
    if (m_exportJob.busy()) {
        emit statusMessage(tr("An export for the test chip is already running"), 5000);
        return;
    }
    emit statusMessage(tr("Generating the program for %1...").arg(dir), 0);
    // A context of its own: the document's belongs to the GUI thread.
    auto net = m_doc->network();
    auto hw = m_doc->hardware();
    const RATree tree = m_doc->tree();
    const int batch = m_doc->batch();
    const EvalOptions eo = m_doc->evalOptions(false);
    const std::string model = QFileInfo(m_doc->modelPath()).fileName().toStdString();
    const std::string out = dir.toStdString();
    auto work = [net, hw, tree, batch, eo, model, out, formats] {
        TestChipExport r;
        EvalContext ctx(*net, *hw);
        CodegenOptions co;
        co.withIr = formats.ir;
        auto gen = buildProgram(ctx, tree, batch, eo, model, co);
        if (!gen) {
            r.error = qs(out + ": " + gen.error().message);
            return r;
        }
        if (auto e = exportProgram(out, *gen, *net, *hw, formats)) {
            r.error = qs(e->message);
            return r;
        }
        r.instructions = gen->program.instructionCount();
        r.programDram = gen->programDramBytes;
        r.scheduleDram = gen->layout.evaluation.dramBytes;
        return r;
    };
    // The export reports its outcome whatever was edited meanwhile: the stamp is unused.
    m_exportJob.run(
        m_doc->revision(), std::move(work), [this, dir](const TestChipExport& r, quint64) {
            if (!r.error.isEmpty()) {
                emit errorOccurred(tr("Export for test chip"), r.error);
                emit testChipExported(false, r.error);
                return;
            }
            const QLocale loc;
            const QString msg =
                tr("Exported %1: %2 instructions, DRAM bytes %3 (schedule %4, %5%)")
                    .arg(dir, loc.toString(qulonglong(r.instructions)),
                         bytesText(double(r.programDram)), bytesText(r.scheduleDram))
                    .arg(r.scheduleDram > 0
                             ? 100.0 * (double(r.programDram) - r.scheduleDram) / r.scheduleDram
                             : 0.0,
                         0, 'f', 3);
            emit statusMessage(msg, 15000);
            emit testChipExported(true, msg);
        });
}

} // namespace tilescope::ui
