// Session handling for the main window: the session file (open, save, the name in the
// title), unsaved changes (asked about before they are lost), crash recovery through the
// autosaver, and the recent-files list (the File menu's and the welcome page's).
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

class QMenu;
class QWidget;

namespace tilescope::ui {

class AutoSaver;
class Document;
class SearchController;
class SearchPanel;
class Session;

class SessionController : public QObject {
    Q_OBJECT
  public:
    // Dialogs open over `window`; the session records the search settings of `panel` and the
    // last results of `search`.
    SessionController(Document* doc, SearchPanel* panel, const SearchController* search,
                      QWidget* window);

    // Non-interactive (tests): unsaved changes are dropped without asking and a recovery
    // file is left for an interactive start.
    void setInteractive(bool on) { m_interactive = on; }
    QString sessionPath() const { return m_sessionPath; }
    bool isModified() const; // unsaved changes a crash would lose
    AutoSaver* autoSaver() const { return m_autosave; }

    bool openSession(const QString& path);
    // With unsaved changes, asks first (Save, Discard or Cancel); false if the user
    // cancelled or the open failed.
    bool openSessionAsking(const QString& path);
    void openSessionDialog();
    // Saves to `path`, with ".tilescope.json" added when it has no .json suffix.
    bool saveSession(const QString& path);
    // Save to the current session file, asking for one if there is none; false if the
    // user cancelled or the save failed (the error was shown).
    bool saveToSessionFile();
    void saveSessionAsDialog();

    // Unsaved changes: Save / Discard / Cancel; true when the caller may go on.
    bool confirmDiscard(const QString& question);
    bool confirmOpening(const QString& what); // confirmDiscard before opening `what`

    // Crash recovery: true when a recovery file was found and restored. Asks the user unless
    // TILESCOPE_RECOVERY_AUTO is "accept" or "reject" (tests, scripted starts).
    bool offerRecovery();
    bool restoreRecovery(); // restores without asking

    // The document was rebuilt from files it can be read from again (a model, a sweep
    // point): no session file, nothing unsaved yet.
    void documentFromFiles();
    // Recent files: "kind:path" entries, newest first, kept in QSettings.
    void addRecent(const QString& kind, const QString& path);
    void setRecentMenu(QMenu* menu); // filled now and whenever the list changes

  signals:
    void modifiedChanged(bool modified);
    void titleChanged(); // the session file or the inputs shown in the title changed
    void recentChanged(const QStringList& entries);
    void openRecentRequested(const QString& kind, const QString& path);
    void errorOccurred(const QString& title, const QString& message);
    void statusMessage(const QString& text, int timeoutMs);

  private:
    Session makeSession() const;
    bool loadSession(const QString& path, bool remember);
    void noteModified();
    void rebuildRecentMenu();

    Document* m_doc;
    SearchPanel* m_panel;
    const SearchController* m_search;
    QWidget* m_window;
    AutoSaver* m_autosave;
    QMenu* m_recentMenu = nullptr;
    QString m_sessionPath;
    bool m_interactive = true;
    // Inputs changed by hand (batch, hardware) or a recovered session: unsaved even though
    // the undo stack, cleared by those changes, is clean.
    bool m_dirtyInputs = false;
};

} // namespace tilescope::ui
