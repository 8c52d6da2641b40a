#include "core/autosaver.h"

#include <QDir>
#include <QFile>
#include <QStandardPaths>

namespace tilescope::ui {

AutoSaver::AutoSaver(std::function<std::optional<Error>(const QString&)> save,
                     std::function<bool()> isModified, QObject* parent)
    : QObject(parent), m_save(std::move(save)), m_isModified(std::move(isModified)) {
    m_timer.setInterval(defaultIntervalMs());
    connect(&m_timer, &QTimer::timeout, this, &AutoSaver::tick);
    m_timer.start();
}

QString AutoSaver::recoveryDir() {
    const QString env = qEnvironmentVariable("TILESCOPE_RECOVERY_DIR");
    if (!env.isEmpty()) return env;
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
}

int AutoSaver::defaultIntervalMs() {
    bool ok = false;
    const int ms = qEnvironmentVariableIntValue("TILESCOPE_AUTOSAVE_MS", &ok);
    return ok && ms > 0 ? ms : 30000;
}

QString AutoSaver::recoveryPath() const {
    return QDir(recoveryDir()).filePath(QStringLiteral("recovery.tilescope.json"));
}

bool AutoSaver::hasRecovery() const {
    return QFile::exists(recoveryPath());
}

void AutoSaver::documentChanged() {
    m_pending = true;
}

bool AutoSaver::tick() {
    if (!m_isModified()) {
        // Back at the saved state (undo to it, a save, a fresh model): nothing to recover.
        if (m_owns && hasRecovery()) discard();
        m_pending = false;
        return true;
    }
    // An unchanged document was already written: do not rewrite the same bytes every tick.
    if (!m_pending && m_owns && hasRecovery()) return true;
    QDir().mkpath(recoveryDir());
    if (auto err = m_save(recoveryPath())) {
        // Report once per failure streak: a read-only data folder must not spam the user.
        if (!m_reportedFailure) emit failed(QString::fromStdString(err->message));
        m_reportedFailure = true;
        return false;
    }
    m_reportedFailure = false;
    m_pending = false;
    m_owns = true;
    emit saved(recoveryPath());
    return true;
}

void AutoSaver::discard() {
    QFile::remove(recoveryPath());
    m_pending = false;
    m_owns = false;
}

void AutoSaver::release() {
    if (m_owns) discard();
    m_timer.stop();
}

} // namespace tilescope::ui
