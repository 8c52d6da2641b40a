// Runs tilescope-cli (the TILESCOPE_CLI define) for the CLI tests: exit status (-1 on a
// crash or time-out), stdout and stderr.
#pragma once

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStringList>
#include <QTemporaryDir>
#include <QTest>

namespace tilescope::test {

struct CliRun {
    int status = -1;
    QString out, err;
};

inline CliRun runCli(const QStringList& args, int timeoutMs = 120000) {
    QProcess p;
    p.start(QStringLiteral(TILESCOPE_CLI), args);
    CliRun r;
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.err = QStringLiteral("tilescope-cli did not finish");
        return r;
    }
    r.status = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

// `compare SAMPLE --hw HW --batch 8 --iterations 40 --json`: the JSON document, or an
// empty object with the reason in `error` (status, stderr) when the run failed.
inline QJsonObject compareJson(const QString& sample, const QString& hw, QString* error) {
    QTemporaryDir dir;
    const QString out = dir.filePath(QStringLiteral("compare.json"));
    const CliRun r =
        runCli({QStringLiteral("compare"),
                QStringLiteral(TILESCOPE_SAMPLES "/models/") + sample + QStringLiteral(".onnx"),
                QStringLiteral("--hw"), hw, QStringLiteral("--batch"), QStringLiteral("8"),
                QStringLiteral("--iterations"), QStringLiteral("40"), QStringLiteral("--json"), out,
                QStringLiteral("--quiet")},
               600000);
    QFile f(out);
    if (r.status != 0 || !f.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("exit %1: %2").arg(r.status).arg(r.err);
        return {};
    }
    return QJsonDocument::fromJson(f.readAll()).object();
}

// A user error: exit 1, and stderr is one line that names the file and the reason.
inline void expectUserError(const CliRun& r, const QString& file, const QString& reason) {
    QCOMPARE(r.status, 1);
    const QStringList lines = r.err.trimmed().split('\n');
    QVERIFY2(lines.size() == 1, qPrintable(r.err));
    QVERIFY2(lines[0].contains(file), qPrintable(r.err));
    QVERIFY2(lines[0].contains(reason, Qt::CaseInsensitive), qPrintable(r.err));
}

} // namespace tilescope::test
