#include "widgets/searchcontroller.h"

#include "core/document.h"
#include "core/livebestpreview.h"
#include "core/searchworker.h"
#include "widgets/boundaryview.h"
#include "widgets/diffpanel.h"
#include "widgets/metricspanel.h"
#include "widgets/searchpanel.h"
#include "widgets/tradeoffview.h"

#include <QUndoStack>

namespace tilescope::ui {

SearchController::SearchController(Document* doc, const Views& views, QObject* parent)
    : QObject(parent), m_doc(doc), m_views(views), m_worker(new SearchWorker) {
    SearchPanel* panel = m_views.panel;
    connect(panel, &SearchPanel::startRequested, this, &SearchController::start);
    connect(panel, &SearchPanel::pauseRequested, this, &SearchController::pause);
    connect(panel, &SearchPanel::stopRequested, this, &SearchController::stop);
    connect(panel, &SearchPanel::adoptRequested, this, &SearchController::adoptBest);
    connect(panel, &SearchPanel::objectiveEdited, m_doc, &Document::setObjective);
    connect(m_views.metrics, &MetricsPanel::compareRequested, this, &SearchController::runCompare);
    connect(m_doc, &Document::documentReset, this, &SearchController::inputsReset);
    // Every accepted edit, undo and redo moves the undo index: that is what a running
    // search must hear about (it continues from the edited tree, pins included).
    connect(m_doc->undoStack(), &QUndoStack::indexChanged, this, [this] {
        if (m_running && m_forwardEdits) {
            m_worker->requestReplaceTree(m_doc->tree());
            emit statusMessage(tr("The search continues from the edited tree"), 5000);
        }
    });

    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    m_thread.setObjectName(QStringLiteral("search"));
    m_thread.start();
    connectWorker();
    panel->setCanStart(m_doc->hasModel());
}

SearchController::~SearchController() {
    shutdown();
}

void SearchController::shutdown() {
    if (!m_thread.isRunning()) return; // done before: the worker went with its thread
    m_worker->requestStop();
    m_thread.quit();
    m_thread.wait();
}

void SearchController::inputsReset() {
    // A new model, hardware or batch makes every search result meaningless: the panel
    // forgets the last run (its plot, best line and result) so nothing stale can be adopted.
    QString why = tr("The inputs changed: start a search for this schedule");
    if (m_running || m_comparing) {
        ++m_generation;
        m_worker->requestStop();
        m_running = m_comparing = false;
        why = tr("Stopped: the inputs changed");
        m_views.metrics->setCompareRunning(false);
    }
    m_lastSearch.reset();
    m_lastCompare.reset();
    m_views.tradeoff->clear();
    m_views.boundary->clearPath();
    m_views.liveBest->clear();
    m_views.panel->forgetRun(m_doc->hasModel() ? why : QString());
    m_views.panel->setObjective(m_doc->objective());
    m_views.panel->setCanStart(m_doc->hasModel());
}

void SearchController::connectWorker() {
    connect(m_worker, &SearchWorker::snapshotReady, this, &SearchController::showSnapshot);
    connect(m_worker, &SearchWorker::outcomeReady, this, &SearchController::takeOutcome);
    connect(m_worker, &SearchWorker::stateChanged, this, &SearchController::followState);
    connect(m_worker, &SearchWorker::compareReady, this, &SearchController::takeCompare);
}

void SearchController::showSnapshot(const SnapshotPtr& s) {
    if (s->generation != m_generation) return; // a run we no longer show
    m_views.panel->addSnapshot(*s);
    if (!s->final) m_views.tradeoff->addHistory(s->energy, s->delay);
    if (!s->final) m_views.boundary->addSearchPoint(s->bestEnergy, s->bestDelay);
    if (!s->final && m_liveBestShown) m_views.liveBest->offer(s->bestTree);
}

void SearchController::takeOutcome(const OutcomePtr& o) {
    if (o->generation != m_generation || o->net != m_doc->network()) return;
    m_lastSearch = o;
    m_views.panel->setAdoptEnabled(true);
    // Preview before adopting: the diff against the best so far.
    if (o->best.valid && !o->adopt) m_views.diff->setOther(o->bestTree, tr("search best"));
    if (o->best.valid)
        m_views.tradeoff->setCandidate(tr("search best (seed %1)").arg(o->result.seed), o->bestTree,
                                       o->best.energy.total(), o->best.delay);
    if (o->adopt) {
        m_views.liveBest->clear(); // the best is now the document's own tree
        // The worker already continues from this tree: do not send it back.
        m_forwardEdits = false;
        // A refusal reaches the status bar through Document::editRefused.
        static_cast<void>(m_doc->adoptTree(o->bestTree, tr("Adopt best")));
        m_forwardEdits = true;
    }
}

void SearchController::followState(quint64 generation, RunState state, const QString& message) {
    if (generation != m_generation) return;
    if (m_comparing) {
        emit statusMessage(message, 5000);
        return;
    }
    m_views.panel->setProperty("paused", state == RunState::Paused);
    m_views.panel->setRunState(state, message);
    const bool wasRunning = m_running;
    m_running = state == RunState::Running || state == RunState::Paused;
    if (!wasRunning || m_running) return;
    m_views.liveBest->clear();
    if (state == RunState::Failed) {
        emit errorOccurred(tr("Search"), message);
    } else {
        const QString summary = resultSummary();
        m_views.panel->setSummary(summary);
        emit statusMessage(tr("Search %1; \"Adopt best\" makes its best tree the document's")
                               .arg(message.toLower()),
                           8000);
    }
    emit searchFinished();
}

QString SearchController::resultSummary() const {
    // How much the search gained over the schedule it started from, and whether running it
    // again gives the same: a time budget depends on the machine's speed.
    if (!m_lastSearch || !m_lastSearch->best.valid) return {};
    QString text;
    const double best = m_lastSearch->best.cost;
    if (m_startCost > 0 && best > 0)
        text = best < m_startCost
                   ? tr("The best is %1x better than the schedule the search started from.")
                         .arg(m_startCost / best, 0, 'g', 4)
                   : tr("The search found nothing better than the schedule it started from.");
    if (m_lastSearch->result.config.repeatBlocks) {
        const BlockRepetition& b = m_lastSearch->result.repetition;
        text += (text.isEmpty() ? QString() : QStringLiteral(" ")) +
                (b.active() ? tr("Repeated blocks: %1, each scheduled as the first (marked "
                                 "\u2261 in the tree).")
                                  .arg(QString::fromStdString(b.describe()))
                            : tr("Repeat blocks: the model holds no repeated block."));
    }
    if (m_lastSearch->result.config.seconds > 0)
        text += (text.isEmpty() ? QString() : QStringLiteral(" ")) +
                tr("A time budget makes runs unrepeatable; set Seconds to 0 (beta iterations) "
                   "to get the same result for the same seed.");
    return text;
}

void SearchController::takeCompare(const ComparePtr& c) {
    if (c->generation != m_generation) return;
    m_comparing = false;
    m_lastCompare = c;
    m_views.metrics->setCompare(c);
    for (const auto& r : c->rows)
        if (r.ok && r.eval.valid)
            m_views.tradeoff->setCandidate(r.mode == SearchMode::Set
                                               ? QStringLiteral("SA")
                                               : QString::fromLatin1(toString(r.mode)).toUpper(),
                                           r.best, r.eval.energy.total(), r.eval.delay);
    m_views.metrics->setCompareRunning(false);
    emit compareFinished();
}

std::shared_ptr<RunRequest> SearchController::makeRequest() {
    auto req = std::make_shared<RunRequest>();
    req->generation = ++m_generation;
    req->net = m_doc->network();
    req->hw = m_doc->hardware();
    req->config = m_views.panel->settings();
    req->config.objective = m_doc->objective();
    req->config.layouts = m_doc->layouts();
    req->config.totalBatch = m_doc->batch();
    return req;
}

void SearchController::start() {
    if (!m_doc->hasModel()) {
        emit errorOccurred(tr("Search"), tr("Open a model first"));
        return;
    }
    if (m_running || m_comparing || m_worker->busy()) return;
    auto req = makeRequest();
    // Continue from the document's tree when it is a valid start in this space (the
    // restricted LS / LP spaces start from their own default trees).
    if (m_doc->evaluation()->valid &&
        (req->config.mode == SearchMode::Set || req->config.mode == SearchMode::Random ||
         req->config.mode == SearchMode::Genetic))
        req->config.initialTree = m_doc->tree();
    m_views.panel->clearHistory();
    m_views.tradeoff->clearHistory();
    m_views.boundary->clearPath();
    m_views.panel->setAdoptEnabled(false);
    m_lastSearch.reset();
    m_startCost = m_doc->evaluation()->valid ? m_doc->evaluation()->cost : 0;
    m_running = true;
    m_views.panel->setRunState(RunState::Running, tr("Starting..."));
    m_worker->startRun(req);
}

void SearchController::pause(bool paused) {
    if (m_running) m_worker->requestPause(paused);
}

void SearchController::togglePause() {
    pause(!m_views.panel->property("paused").toBool());
}

void SearchController::stop() {
    if (m_running || m_comparing) m_worker->requestStop();
}

void SearchController::adoptBest() {
    if (m_running) {
        m_worker->requestAdoptBest();
        return;
    }
    if (!m_lastSearch) {
        emit statusMessage(tr("No search result to adopt yet"), 5000);
        return;
    }
    // A refusal reaches the status bar through Document::editRefused.
    static_cast<void>(m_doc->adoptTree(m_lastSearch->bestTree, tr("Adopt best")));
}

void SearchController::runCompare() {
    if (!m_doc->hasModel()) {
        emit errorOccurred(tr("Compare"), tr("Open a model first"));
        return;
    }
    if (m_running || m_comparing || m_worker->busy()) {
        emit statusMessage(tr("Compare: stop the running search first"), 5000);
        return;
    }
    auto req = makeRequest();
    m_comparing = true;
    m_views.metrics->setCompareRunning(true);
    m_worker->startCompare(req);
}

} // namespace tilescope::ui
