#include "widgets/sessioncontroller.h"

#include "core/autosaver.h"
#include "core/document.h"
#include "core/qstrings.h"
#include "core/reportbuilder.h"
#include "core/session.h"
#include "model/model_loader.h"
#include "widgets/searchcontroller.h"
#include "widgets/searchpanel.h"

#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QLocale>
#include <QMenu>
#include <QMessageBox>
#include <QSettings>
#include <QUndoStack>

namespace tilescope::ui {

namespace {
constexpr int kMaxRecent = 10;
const QString kRecentKey = QStringLiteral("recentFiles");

// Open session lists *.tilescope.json and *.json: a name typed without that suffix ("s1")
// gets it, or the saved session would be invisible to the dialog that opens it.
QString withSessionSuffix(const QString& path) {
    if (path.endsWith(QLatin1String(".json"), Qt::CaseInsensitive)) return path;
    return path + QStringLiteral(".tilescope.json");
}
} // namespace

SessionController::SessionController(Document* doc, SearchPanel* panel,
                                     const SearchController* search, QWidget* window)
    : QObject(window), m_doc(doc), m_panel(panel), m_search(search), m_window(window) {
    m_autosave = new AutoSaver([this](const QString& p) { return makeSession().save(p); },
                               [this] { return isModified(); }, this);
    connect(m_autosave, &AutoSaver::failed, this, [this](const QString& msg) {
        emit statusMessage(tr("Autosave failed: %1").arg(msg), 15000);
    });
    connect(m_doc, &Document::documentReset, this, [this](bool undoable) {
        // Opening a model or session resets this flag after the fact. A batch or hardware
        // change is an undo step (the undo stack's clean state tracks it), except without a
        // model, where there is nothing to undo.
        if (!undoable) m_dirtyInputs = true;
        noteModified();
    });
    connect(m_doc->undoStack(), &QUndoStack::indexChanged, this, &SessionController::noteModified);
}

bool SessionController::isModified() const {
    return m_doc->hasModel() && (m_dirtyInputs || !m_doc->undoStack()->isClean());
}

void SessionController::noteModified() {
    m_autosave->documentChanged();
    emit modifiedChanged(isModified());
}

void SessionController::documentFromFiles() {
    m_sessionPath.clear();
    m_dirtyInputs = false;
    noteModified();
    emit titleChanged();
}

bool SessionController::confirmDiscard(const QString& question) {
    if (!m_interactive || !isModified()) return true;
    const auto answer = QMessageBox::question(
        m_window, tr("Unsaved changes"), question,
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    return answer == QMessageBox::Discard || (answer == QMessageBox::Save && saveToSessionFile());
}

bool SessionController::confirmOpening(const QString& what) {
    return confirmDiscard(tr("The schedule has changes that are not saved in a session. Save "
                             "them before opening %1?")
                              .arg(what));
}

bool SessionController::openSessionAsking(const QString& path) {
    // A file that is no session is reported before asking to save the current work.
    if (auto s = Session::load(path); !s) {
        emit errorOccurred(tr("Open session"), qs(s.error().message));
        return false;
    }
    return confirmOpening(QFileInfo(path).fileName()) && openSession(path);
}

void SessionController::openSessionDialog() {
    const QString p = QFileDialog::getOpenFileName(
        m_window, tr("Open session"), {}, tr("Tilescope sessions (*.tilescope.json *.json)"));
    if (!p.isEmpty()) openSessionAsking(p);
}

bool SessionController::saveToSessionFile() {
    QString p = m_sessionPath;
    if (p.isEmpty())
        p = QFileDialog::getSaveFileName(m_window, tr("Save session"), {},
                                         tr("Tilescope sessions (*.tilescope.json)"));
    return !p.isEmpty() && saveSession(p);
}

void SessionController::saveSessionAsDialog() {
    const QString p = QFileDialog::getSaveFileName(m_window, tr("Save session"), {},
                                                   tr("Tilescope sessions (*.tilescope.json)"));
    if (!p.isEmpty()) saveSession(p);
}

bool SessionController::saveSession(const QString& typedPath) {
    const QString path = withSessionSuffix(typedPath);
    if (!m_doc->hasModel()) {
        emit errorOccurred(tr("Save session"), tr("Nothing to save: open a model first"));
        return false;
    }
    if (auto err = makeSession().save(path)) {
        emit errorOccurred(tr("Save session"), qs(err->message));
        return false;
    }
    m_dirtyInputs = false;
    m_doc->undoStack()->setClean();
    m_autosave->discard(); // saved: nothing left to recover
    noteModified();
    m_sessionPath = path;
    addRecent(QStringLiteral("session"), QFileInfo(path).absoluteFilePath());
    emit statusMessage(tr("Saved %1").arg(path), 5000);
    return true;
}

Session SessionController::makeSession() const {
    Session s;
    s.modelPath = m_doc->modelPath();
    s.modelSha256 = m_doc->modelSha256();
    s.dims = m_doc->network()->dims;
    s.keptOnChip = keptOnChipJson(*m_doc->network());
    s.hardware = hardwareToJson(*m_doc->hardware());
    s.hardwareSource = m_doc->hardwareSource();
    s.batch = m_doc->batch();
    s.objective = m_doc->objective();
    s.layouts = m_doc->layouts();
    const RATree& t = m_doc->tree();
    s.treeText = treeToText(t, *m_doc->network());
    for (int i = 0; i < t.size(); ++i)
        if (t.node(i).pinned && t.attached(i)) s.pinned << qs(t.pathOf(i));
    s.search = m_panel->settings();
    s.results = ReportBuilder(*m_doc, m_search->lastSearch(), m_search->lastCompare()).json();
    return s;
}

bool SessionController::openSession(const QString& path) {
    return loadSession(path, true);
}

bool SessionController::loadSession(const QString& path, bool remember) {
    auto fail = [&](const std::string& msg) {
        emit errorOccurred(tr("Open session"), qs(msg));
        return false;
    };
    auto s = Session::load(path);
    if (!s) return fail(s.error().message);
    auto in = s->resolve(path);
    if (!in) return fail(in.error().message);
    if (auto err = m_doc->restore(in->net, s->modelPath, s->modelSha256, in->hw,
                                  s->hardwareSource.isEmpty() ? qs(in->hw.name) : s->hardwareSource,
                                  s->batch, s->objective, in->tree, s->layouts))
        return fail(path.toStdString() + ": tree: " + err->message);
    m_panel->setSettings(s->search);
    m_panel->setObjective(s->objective);
    // A recovered session is unsaved work (remember == false): it keeps no file name and
    // stays modified until saved.
    m_dirtyInputs = !remember;
    noteModified();
    if (!remember) {
        emit titleChanged();
        return true;
    }
    m_sessionPath = path;
    addRecent(QStringLiteral("session"), QFileInfo(path).absoluteFilePath());
    emit statusMessage(tr("Opened session %1").arg(path), 5000);
    return true;
}

bool SessionController::restoreRecovery() {
    const QString path = m_autosave->recoveryPath();
    if (!loadSession(path, false)) return false;
    // The file now stands for this window's unsaved work: a clean exit or a save removes it.
    m_autosave->takeOver();
    qInfo("tilescope: restored the unsaved session from %s", qPrintable(path));
    emit statusMessage(tr("Restored the unsaved session from %1").arg(path), 10000);
    return true;
}

bool SessionController::offerRecovery() {
    if (!m_autosave->hasRecovery()) return false;
    const QString mode = qEnvironmentVariable("TILESCOPE_RECOVERY_AUTO");
    bool accept = mode == QLatin1String("accept");
    if (mode.isEmpty()) {
        if (!m_interactive) return false; // leave it for an interactive start
        const QFileInfo fi(m_autosave->recoveryPath());
        accept = QMessageBox::question(
                     m_window, tr("Restore unsaved work?"),
                     tr("Tilescope did not exit cleanly last time. Restore the unsaved session "
                        "autosaved at %1?\n\n(Discard deletes it.)")
                         .arg(QLocale().toString(fi.lastModified(), QLocale::ShortFormat)),
                     QMessageBox::Yes | QMessageBox::Discard, QMessageBox::Yes) == QMessageBox::Yes;
    }
    if (!accept) {
        m_autosave->discard();
        return false;
    }
    return restoreRecovery();
}

void SessionController::addRecent(const QString& kind, const QString& path) {
    QSettings settings;
    QStringList list = settings.value(kRecentKey).toStringList();
    const QString entry = kind + QLatin1Char(':') + path;
    list.removeAll(entry);
    list.prepend(entry);
    while (list.size() > kMaxRecent)
        list.removeLast();
    settings.setValue(kRecentKey, list);
    rebuildRecentMenu();
    emit titleChanged();
}

void SessionController::setRecentMenu(QMenu* menu) {
    m_recentMenu = menu;
    rebuildRecentMenu();
}

void SessionController::rebuildRecentMenu() {
    if (!m_recentMenu) return;
    m_recentMenu->clear();
    const QStringList list = QSettings().value(kRecentKey).toStringList();
    emit recentChanged(list);
    for (const QString& entry : list) {
        const int colon = entry.indexOf(QLatin1Char(':'));
        const QString kind = entry.left(colon), path = entry.mid(colon + 1);
        QAction* a = m_recentMenu->addAction(
            QStringLiteral("%1  (%2)").arg(QFileInfo(path).fileName(), kind));
        a->setToolTip(path);
        connect(a, &QAction::triggered, this,
                [this, kind, path] { emit openRecentRequested(kind, path); });
    }
    m_recentMenu->setEnabled(!list.isEmpty());
    if (!list.isEmpty()) {
        m_recentMenu->addSeparator();
        m_recentMenu->addAction(tr("Clear list"), this, [this] {
            QSettings().remove(kRecentKey);
            rebuildRecentMenu();
        });
    }
}

} // namespace tilescope::ui
