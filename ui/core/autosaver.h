// Crash recovery (nothing lost): while the document has unsaved changes, the session is
// written to a recovery file at a fixed interval (atomically, through the caller's session
// writer); a clean exit or a save removes it, and the next start offers to restore it.
// TILESCOPE_RECOVERY_DIR and TILESCOPE_AUTOSAVE_MS override the folder and the interval
// (tests; a user who wants the file elsewhere).
#pragma once

#include "util/result.h"

#include <QObject>
#include <QString>
#include <QTimer>
#include <functional>
#include <optional>

namespace tilescope::ui {

class AutoSaver : public QObject {
    Q_OBJECT
  public:
    // save writes the session to the given path atomically; isModified says whether there
    // is anything a crash would lose.
    AutoSaver(std::function<std::optional<Error>(const QString&)> save,
              std::function<bool()> isModified, QObject* parent = nullptr);

    static QString recoveryDir();   // TILESCOPE_RECOVERY_DIR, else the app data location
    static int defaultIntervalMs(); // TILESCOPE_AUTOSAVE_MS, else 30 s
    QString recoveryPath() const;
    bool hasRecovery() const;
    int intervalMs() const { return m_timer.interval(); }

  public slots:
    void documentChanged(); // something changed since the last autosave
    // Writes now if there is something to save, removes the file if there is nothing;
    // returns false only when a write failed.
    bool tick();
    void discard(); // the work is saved or deliberately dropped: no recovery file
    // A clean exit: removes the file if this process wrote it or restored from it (one
    // left by a crash that was never offered to the user stays for the next start).
    void release();
    void takeOver() { m_owns = true; } // the recovery file was restored into this process

  signals:
    void saved(const QString& path);
    void failed(const QString& message);

  private:
    std::function<std::optional<Error>(const QString&)> m_save;
    std::function<bool()> m_isModified;
    QTimer m_timer;
    bool m_pending = false; // changed since the file was last written
    bool m_reportedFailure = false;
    bool m_owns = false; // the file on disk is this process's
};

} // namespace tilescope::ui
