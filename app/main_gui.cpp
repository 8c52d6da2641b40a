// tilescope: the desktop application. Everything lives in ui/; this only parses the
// command line (tilescope [MODEL] [--hw HW|preset] [--batch B] [--session FILE]
// [--tree FILE] [--run] [--sweep DB]) and offers to restore the work a crash left behind.
#include "core/document.h"
#include "widgets/mainwindow.h"
#include "widgets/searchcontroller.h"
#include "widgets/sessioncontroller.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QTimer>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    // QGuiApplication takes "-session ID" (X11 session management) out of argv, so our
    // --session FILE is picked out first.
    QString sessionFile;
    std::vector<char*> args;
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        if ((a == "--session" || a == "-session") && i + 1 < argc) {
            sessionFile = QString::fromLocal8Bit(argv[++i]);
            continue;
        }
        if (a.rfind("--session=", 0) == 0) {
            sessionFile = QString::fromLocal8Bit(argv[i] + 10);
            continue;
        }
        args.push_back(argv[i]);
    }
    int qargc = int(args.size());
    args.push_back(nullptr);
    QApplication app(qargc, args.data());
    QApplication::setOrganizationName(QStringLiteral("Tilescope"));
    QApplication::setApplicationName(QStringLiteral("Tilescope"));
    QApplication::setApplicationVersion(QStringLiteral(TILESCOPE_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("tilescope"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/tilescope.svg")));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Schedule explorer for DNN inference on tiled accelerators"));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("model"),
                                 QStringLiteral("Model to open (.onnx or .json)"),
                                 QStringLiteral("[MODEL]"));
    const QCommandLineOption hw(
        QStringLiteral("hw"),
        QStringLiteral(
            "Hardware template file or preset (edge, cloud, testchip, cim, chiplet, wafer)"),
        QStringLiteral("HW"));
    const QCommandLineOption batch(QStringLiteral("batch"),
                                   QStringLiteral("Batch size B (default 8)"), QStringLiteral("B"));
    const QCommandLineOption session(
        QStringLiteral("session"), QStringLiteral("Session file to open"), QStringLiteral("FILE"));
    const QCommandLineOption tree(
        QStringLiteral("tree"),
        QStringLiteral("Tree file (text or JSON) to apply to the model, as an undoable edit"),
        QStringLiteral("FILE"));
    const QCommandLineOption run(QStringLiteral("run"), QStringLiteral("Start the search at once"));
    const QCommandLineOption sweep(QStringLiteral("sweep"),
                                   QStringLiteral("Sweep database to open in the sweep viewer"),
                                   QStringLiteral("DB"));
    parser.addOptions({hw, batch, session, tree, run, sweep});
    parser.process(app);

    tilescope::ui::MainWindow w;
    // Inputs that change the tree come before the model so it is evaluated once.
    if (parser.isSet(batch)) {
        bool ok = false;
        const int b = parser.value(batch).toInt(&ok);
        if (!ok || b < 1) {
            std::fprintf(stderr, "tilescope: --batch: '%s' is not a positive integer\n",
                         qPrintable(parser.value(batch)));
            return 2;
        }
        w.setBatch(b);
    }
    w.show();
    // Unsaved work from a crashed run comes first: restoring it replaces the inputs given
    // on this command line (the user chose the older work over them).
    if (w.sessions()->offerRecovery()) {
        if (parser.isSet(run))
            QTimer::singleShot(0, w.searchControl(), &tilescope::ui::SearchController::start);
        return app.exec();
    }
    if (parser.isSet(hw)) w.openHardware(parser.value(hw));
    if (!sessionFile.isEmpty())
        w.sessions()->openSession(sessionFile);
    else if (!parser.positionalArguments().isEmpty())
        w.openModel(parser.positionalArguments().front());
    if (parser.isSet(tree)) w.importTree(parser.value(tree));
    if (parser.isSet(sweep)) w.openSweepDatabase(parser.value(sweep));
    if (parser.isSet(run))
        QTimer::singleShot(0, w.searchControl(), &tilescope::ui::SearchController::start);
    return app.exec();
}
