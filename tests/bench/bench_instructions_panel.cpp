// The Instructions panel after adopting a schedule: opens MODEL on HW at BATCH in
// the main window (offscreen), waits for the panel's program of the default tree, then
// imports TREE (what adopting does: one undoable edit) and times the regeneration until the
// panel shows the new program; prints resident memory (VmRSS) and its peak (VmHWM) at each
// step, and again after undoing back to the default tree.
//
//   QT_QPA_PLATFORM=offscreen bench_instructions_panel --tree TREE_OR_RESULT.json
//       [--model samples/models/transformer12.onnx] [--hw cloud] [--batch 64]
#include "core/document.h"
#include "core/programrun.h"
#include "core/programrunner.h"
#include "widgets/mainwindow.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <cstdio>
#include <malloc.h>
#include <string>

using namespace tilescope::ui;

namespace {

double statusMiB(const char* key) {
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly)) return -1;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (line.startsWith(key))
            return line.mid(int(qstrlen(key))).trimmed().split(' ')[0].toDouble() / 1024;
    return -1;
}

// Waits until the runner holds a finished run for the document's current tree.
bool waitRun(MainWindow& w, int timeoutMs) {
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < timeoutMs) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
        if (w.programRunner()->current() && !w.programRunner()->busy()) return true;
        QTest::qWait(20);
    }
    return false;
}

void report(const char* what, double seconds) {
    std::printf("%-34s %7.2f s   RSS %7.1f MiB   peak %7.1f MiB\n", what, seconds,
                statusMiB("VmRSS:"), statusMiB("VmHWM:"));
    std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QString model = QStringLiteral(TILESCOPE_SAMPLES "/models/transformer12.onnx");
    QString hw = QStringLiteral("cloud"), tree;
    int batch = 64;
    const QStringList args = app.arguments();
    for (int i = 1; i + 1 < args.size(); i += 2) {
        if (args[i] == QLatin1String("--model"))
            model = args[i + 1];
        else if (args[i] == QLatin1String("--hw"))
            hw = args[i + 1];
        else if (args[i] == QLatin1String("--batch"))
            batch = args[i + 1].toInt();
        else if (args[i] == QLatin1String("--tree"))
            tree = args[i + 1];
        else {
            std::fprintf(stderr, "bench_instructions_panel: unknown option %s\n",
                         qPrintable(args[i]));
            return 2;
        }
    }
    if (tree.isEmpty()) {
        std::fprintf(
            stderr,
            "usage: bench_instructions_panel --tree TREE [--model M] [--hw H] [--batch B]\n");
        return 2;
    }
    QStandardPaths::setTestModeEnabled(true);
    QTemporaryDir recovery;
    qputenv("TILESCOPE_RECOVERY_DIR", recovery.path().toUtf8());
    MainWindow w;
    w.setInteractive(false);
    w.resize(1280, 800);
    w.show();
    report("window", 0);
    QElapsedTimer t;
    t.start();
    if (!w.openHardware(hw) || !w.setBatch(batch) || !w.openModel(model)) {
        std::fprintf(stderr, "bench_instructions_panel: %s\n", qPrintable(w.lastError()));
        return 1;
    }
    if (!waitRun(w, 600000)) return 1;
    report("default tree: program shown", t.elapsed() / 1000.0);
    t.restart();
    if (!w.importTree(tree)) {
        std::fprintf(stderr, "bench_instructions_panel: %s\n", qPrintable(w.lastError()));
        return 1;
    }
    if (!waitRun(w, 600000)) return 1;
    const auto run = w.programRunner()->current();
    std::printf("adopted tree: %zu instructions%s\n",
                run->codegen ? run->codegen->program.instructionCount() : size_t(0),
                run->ok() ? "" : " (error)");
    report("adopted tree: program shown", t.elapsed() / 1000.0);
    QTest::qWait(1000);
    report("adopted tree: 1 s later", t.elapsed() / 1000.0);
    t.restart();
    w.document()->undoStack()->undo();
    if (!waitRun(w, 600000)) return 1;
    QTest::qWait(1000);
    report("undo: default tree again (+1 s)", t.elapsed() / 1000.0);
    if (qEnvironmentVariableIsSet("BENCH_TRIM")) {
        malloc_trim(0);
        report("after an extra malloc_trim", t.elapsed() / 1000.0);
        std::printf("runner last: %zu instructions, use count %ld\n",
                    w.programRunner()->last()->codegen->program.instructionCount(),
                    w.programRunner()->last().use_count());
    }
    return 0;
}
