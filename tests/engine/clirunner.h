// Runs tilescope-cli (the TILESCOPE_CLI define) for the CLI tests: exit status (-1 on a
// crash or time-out), stdout and stderr.
#pragma once

#include <QProcess>
#include <QStringList>

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

} // namespace tilescope::test
