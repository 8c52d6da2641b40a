#include "core/searchworker.h"

#include "pipeline/compare.h"

#include <atomic>
#include <chrono>
#include <cmath>

namespace tilescope::ui {

namespace detail {
// Signals are emitted where their receivers live and handed straight on (direct
// connections): nothing is copied by Qt's queued-connection machinery on the worker
// thread, and once the worker is gone its connections are gone with it.
class SearchWorkerRelay : public CallReceiver {
    Q_OBJECT
  signals:
    void snapshotReady(tilescope::ui::SnapshotPtr snapshot);
    void outcomeReady(tilescope::ui::OutcomePtr outcome);
    void compareReady(tilescope::ui::ComparePtr outcome);
    void stateChanged(quint64 generation, tilescope::ui::RunState state, const QString& message);
};
} // namespace detail

namespace {
// The best over all segments of a run: an edit or a pin restarts the engine from the edited
// tree, whose own best starts worse, and the run's best so far must not be lost. Written
// between segments only, read by the progress callback.
struct RunBest {
    std::optional<RATree> tree;
    std::shared_ptr<const RATree> shared; // the same tree, for the snapshots
    Evaluation eval;

    void offer(const SearchResult& r) {
        if (!r.best.valid || (tree && !(r.best.cost < eval.cost))) return;
        tree = r.bestTree;
        shared = std::make_shared<const RATree>(r.bestTree);
        eval = r.best;
    }
};

// The engine's progress report as a snapshot, with the run's best where it beats the
// segment's own; the caller sets the run-wide counts and times.
std::shared_ptr<SearchSnapshot> progressSnapshot(const Progress& p, const RunBest& runBest) {
    auto s = std::make_shared<SearchSnapshot>();
    s->temperature = p.temperature;
    s->currentCost = p.currentCost;
    s->energy = p.energy;
    s->delay = p.delay;
    s->bestCost = p.bestCost;
    s->bestEnergy = p.bestEnergy;
    s->bestDelay = p.bestDelay;
    s->bestTree = p.bestTree;
    if (runBest.tree && (p.bestCost <= 0 || runBest.eval.cost < p.bestCost)) {
        s->bestCost = runBest.eval.cost;
        s->bestEnergy = runBest.eval.energy.total();
        s->bestDelay = runBest.eval.delay;
        s->bestTree = runBest.shared;
    }
    s->acceptanceRate = p.acceptanceRate;
    s->phase = QString::fromStdString(p.phase);
    return s;
}

// Active seconds and what is left: of the time budget when timed, else extrapolated from the
// iterations done of the total.
void setTimes(SearchSnapshot& s, double active, bool timed, double budgetSeconds) {
    s.activeSeconds = active;
    if (timed) {
        s.secondsLeft = std::max(0.0, budgetSeconds - active);
        s.etaSeconds = s.secondsLeft;
    } else if (s.iteration > 0) {
        s.etaSeconds = active * double(s.total - s.iteration) / double(s.iteration);
    }
}

// A segment's outcome: the engine's result comes later; the best is the run's when there
// is one.
std::shared_ptr<SearchOutcome> segmentOutcome(quint64 generation,
                                              std::shared_ptr<const Network> net,
                                              const SearchResult& res, const RunBest& runBest) {
    auto out = std::make_shared<SearchOutcome>();
    out->generation = generation;
    out->net = std::move(net);
    out->stopped = res.stopped;
    out->bestTree = runBest.tree ? *runBest.tree : res.bestTree;
    out->best = runBest.tree ? runBest.eval : res.best;
    return out;
}

// The snapshot that closes a segment: its outcome's best as both current and best, nothing
// left to estimate; the caller sets the run-wide counts and times.
std::shared_ptr<SearchSnapshot> segmentEndSnapshot(const SearchOutcome& out, const RunBest& runBest,
                                                   double acceptRate) {
    auto snap = std::make_shared<SearchSnapshot>();
    snap->currentCost = snap->bestCost = out.best.cost;
    snap->energy = snap->bestEnergy = out.best.energy.total();
    snap->delay = snap->bestDelay = out.best.delay;
    snap->bestTree = runBest.shared;
    snap->acceptanceRate = acceptRate;
    snap->etaSeconds = 0;
    return snap;
}
} // namespace

SearchWorker::SearchWorker(QObject* parent)
    : QObject(parent), m_relay(new detail::SearchWorkerRelay) {
    // Still needed: QSignalSpy and queued connections made by users store the arguments.
    qRegisterMetaType<SnapshotPtr>();
    qRegisterMetaType<OutcomePtr>();
    qRegisterMetaType<ComparePtr>();
    qRegisterMetaType<RunState>();
    using R = detail::SearchWorkerRelay;
    connect(m_relay, &R::snapshotReady, this, &SearchWorker::snapshotReady, Qt::DirectConnection);
    connect(m_relay, &R::outcomeReady, this, &SearchWorker::outcomeReady, Qt::DirectConnection);
    connect(m_relay, &R::compareReady, this, &SearchWorker::compareReady, Qt::DirectConnection);
    connect(m_relay, &R::stateChanged, this, &SearchWorker::stateChanged, Qt::DirectConnection);
}

SearchWorker::~SearchWorker() {
    disconnect(m_relay, nullptr, this, nullptr);
    // Results still queued to the relay are delivered to nobody, then it goes.
    postCall(m_relay, [r = m_relay] { r->deleteLater(); });
}

bool SearchWorker::event(QEvent* e) {
    return CallEvent::deliver(e) || QObject::event(e);
}

void SearchWorker::startRun(std::shared_ptr<const RunRequest> request) {
    postCall(this, [this, r = std::move(request)] { run(r); });
}

void SearchWorker::startCompare(std::shared_ptr<const RunRequest> request) {
    postCall(this, [this, r = std::move(request)] { compare(r); });
}

void SearchWorker::sendSnapshot(SnapshotPtr snapshot) {
    postCall(m_relay, [r = m_relay, s = std::move(snapshot)] { emit r->snapshotReady(s); });
}

void SearchWorker::sendOutcome(OutcomePtr outcome) {
    postCall(m_relay, [r = m_relay, o = std::move(outcome)] { emit r->outcomeReady(o); });
}

void SearchWorker::sendCompare(ComparePtr outcome) {
    postCall(m_relay, [r = m_relay, o = std::move(outcome)] { emit r->compareReady(o); });
}

void SearchWorker::sendState(quint64 generation, RunState state, const QString& message) {
    postCall(m_relay, [r = m_relay, generation, state, message] {
        emit r->stateChanged(generation, state, message);
    });
}

bool SearchWorker::busy() const {
    std::lock_guard lock(m_mutex);
    return m_busy;
}

void SearchWorker::requestPause(bool paused) {
    std::lock_guard lock(m_mutex);
    m_paused = paused;
    m_cv.notify_all();
}

void SearchWorker::requestStop() {
    std::lock_guard lock(m_mutex);
    m_stopAll = true;
    m_paused = false;
    m_segmentStop.request_stop();
    m_cv.notify_all();
}

void SearchWorker::requestReplaceTree(const RATree& tree) {
    std::lock_guard lock(m_mutex);
    if (!m_busy) return;
    m_pending = tree;
    m_segmentStop.request_stop();
    m_cv.notify_all();
}

void SearchWorker::requestAdoptBest() {
    std::lock_guard lock(m_mutex);
    if (!m_busy) return;
    m_adopt = true;
    m_segmentStop.request_stop();
    m_cv.notify_all();
}

void SearchWorker::beginRun() {
    std::lock_guard lock(m_mutex);
    m_busy = true;
    m_paused = false;
    m_stopAll = false;
    m_adopt = false;
    m_pending.reset();
    m_pausedSeconds = 0;
}

// Called from the progress callback, i.e. between two iterations of a chain: the search
// simply does not advance while we wait here.
void SearchWorker::waitWhilePaused(quint64 generation) {
    std::unique_lock lock(m_mutex);
    if (!m_paused) return;
    const auto t0 = std::chrono::steady_clock::now();
    lock.unlock();
    sendState(generation, RunState::Paused, tr("Paused"));
    lock.lock();
    m_cv.wait(lock, [&] { return !m_paused || m_stopAll || m_pending || m_adopt; });
    m_pausedSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const bool stillRunning = !m_stopAll;
    lock.unlock();
    if (stillRunning) sendState(generation, RunState::Running, tr("Running"));
}

void SearchWorker::run(std::shared_ptr<const RunRequest> req) {
    beginRun();
    const quint64 gen = req->generation;
    SearchConfig cfg = req->config;
    cfg.progressInterval = 0.1; // ~10 snapshots per second
    // A time budget counts active seconds (pauses excluded) over all segments; an
    // iteration budget counts iterations per chain.
    const bool timed = cfg.seconds > 0;
    const double budgetSeconds = cfg.seconds;
    long long perChain = 1;
    if (!timed) {
        auto n = iterationBudget(cfg, req->net->layers.size());
        if (!n) {
            endRun(gen, nullptr, RunState::Failed, QString::fromStdString(n.error().message));
            return;
        }
        perChain = *n;
    }
    long long total = perChain * cfg.chains;
    long long donePerChain = 0, doneAll = 0;
    int segment = 0;
    QElapsedTimer clock;
    clock.start();
    sendState(gen, RunState::Running, tr("Running"));

    auto activeSeconds_locked = [&] {
        return double(clock.nsecsElapsed()) * 1e-9 - m_pausedSeconds;
    };
    auto activeSeconds = [&] {
        std::lock_guard lock(m_mutex);
        return activeSeconds_locked();
    };

    RunState endState = RunState::Finished;
    QString endMessage = tr("Finished");
    SnapshotPtr last;
    // The engine's deadline is wall time: a timed segment is ended by a pause and the run
    // continues from its best for the time left once resumed.
    std::atomic<bool> pausedOut{false};
    RunBest runBest;
    while (true) {
        if (timed)
            cfg.seconds = std::max(0.05, budgetSeconds - activeSeconds());
        else
            cfg.iterations = perChain - donePerChain;
        pausedOut = false;
        std::stop_source src = beginSegment();
        const long long offset = doneAll;
        auto progress = [&](const Progress& p) {
            if (p.final) return; // the run's own final snapshot is sent below
            if (timed) {
                std::lock_guard lock(m_mutex);
                if (m_paused) {
                    pausedOut = true;
                    src.request_stop();
                    return;
                }
            } else {
                waitWhilePaused(gen);
            }
            auto s = progressSnapshot(p, runBest);
            s->generation = gen;
            s->iteration = offset + p.iteration;
            s->total = timed ? offset + p.total : total;
            s->segment = segment;
            setTimes(*s, activeSeconds(), timed, budgetSeconds);
            sendSnapshot(s);
        };
        auto res = runSearch(*req->net, *req->hw, cfg, progress, src.get_token());
        if (!res) {
            endState = RunState::Failed;
            endMessage = QString::fromStdString(res.error().message);
            if (segment > 0)
                endMessage =
                    tr("search stopped: the edited tree cannot be searched: %1").arg(endMessage);
            break;
        }
        runBest.offer(*res);
        doneAll += res->iterationsRun;
        donePerChain += res->iterationsRun / std::max(1, cfg.chains);
        if (timed) total = doneAll;

        auto out = segmentOutcome(gen, req->net, *res, runBest);

        auto snap = segmentEndSnapshot(*out, runBest, res->stats.acceptRate);
        snap->generation = gen;
        snap->iteration = doneAll;
        snap->total = total;
        snap->segment = segment;
        snap->activeSeconds = activeSeconds();
        if (timed) snap->secondsLeft = std::max(0.0, budgetSeconds - snap->activeSeconds);
        last = snap;

        std::unique_lock lock(m_mutex);
        const bool adopt = std::exchange(m_adopt, false);
        out->adopt = adopt;
        // The last outcome of a stopped run: its result, marked final.
        auto sendStopped = [&] {
            out->final = true;
            out->result = std::move(res).value();
            sendOutcome(out);
            endState = RunState::Stopped;
            endMessage = tr("Stopped");
        };
        if (m_stopAll) {
            lock.unlock();
            sendStopped();
            break;
        }
        const bool budgetLeft =
            timed ? activeSeconds_locked() < budgetSeconds - 0.05 : donePerChain < perChain;
        if (timed && pausedOut && !m_pending && !adopt) {
            // Paused: wait here (not inside the engine, whose clock would run on), then
            // continue from the best with the time left.
            lock.unlock();
            waitWhilePaused(gen);
            lock.lock();
            if (!m_stopAll) {
                cfg.initialTree = res->bestTree;
                cfg.pinned.clear();
                lock.unlock();
                out->result = std::move(res).value();
                sendOutcome(out);
                continue;
            }
            lock.unlock();
            sendStopped();
            break;
        }
        if (budgetLeft && (m_pending || adopt)) {
            // Continue from the user's tree, or from the best when adopting it.
            cfg.initialTree = m_pending ? *m_pending : out->bestTree;
            cfg.pinned.clear(); // pins travel inside the tree
            m_pending.reset();
            lock.unlock();
            out->result = std::move(res).value();
            sendOutcome(out);
            ++segment;
            continue;
        }
        m_pending.reset();
        lock.unlock();
        out->final = true;
        out->result = std::move(res).value();
        sendOutcome(out);
        break;
    }
    endRun(gen, last, endState, endMessage);
}

std::stop_source SearchWorker::beginSegment() {
    std::stop_source src;
    std::lock_guard lock(m_mutex);
    m_segmentStop = src;
    // An adopt or an edit that arrived between two segments (e.g. right after a resume)
    // stopped the previous stop source: honour it now, not at the run's end.
    if (m_stopAll || m_adopt || m_pending) src.request_stop();
    return src;
}

void SearchWorker::endRun(quint64 generation, const SnapshotPtr& last, RunState state,
                          const QString& message) {
    if (last) {
        auto fin = std::make_shared<SearchSnapshot>(*last);
        fin->final = true;
        sendSnapshot(fin);
    }
    {
        std::lock_guard lock(m_mutex);
        m_busy = false;
        m_paused = false;
    }
    sendState(generation, state, message);
}

void SearchWorker::compare(std::shared_ptr<const RunRequest> req) {
    beginRun();
    const quint64 gen = req->generation;
    auto out = std::make_shared<CompareOutcome>();
    out->generation = gen;
    CompareHooks hooks;
    QString modeText;  // "Compare: lp (2/5)"
    std::string phase; // of the running mode, as last shown
    // A stop source per mode: an edit or "adopt" during a comparison ends the running mode
    // only; Stop ends the comparison.
    hooks.beforeMode = [&](SearchMode m, std::size_t i,
                           std::size_t n) -> std::optional<std::stop_token> {
        std::stop_source src;
        {
            std::lock_guard lock(m_mutex);
            m_segmentStop = src;
            if (m_stopAll) return std::nullopt;
        }
        modeText = tr("Compare: %1 (%2/%3)")
                       .arg(QString::fromLatin1(toString(m)))
                       .arg(qulonglong(i + 1))
                       .arg(qulonglong(n));
        phase.clear();
        sendState(gen, RunState::Running, modeText);
        return src.get_token();
    };
    // The phase of the running mode in the status line (on a large mesh the start trees
    // and baselines take a while).
    hooks.progress = [&](SearchMode, const Progress& p) {
        if (!p.final && p.phase != phase) {
            phase = p.phase;
            sendState(gen, RunState::Running,
                      modeText + QStringLiteral(", ") + QString::fromStdString(phase));
        }
        waitWhilePaused(gen);
    };
    CompareOptions options;
    options.stopAtFirstError = false; // a failed baseline is a row of its own
    options.progressInterval = 0.25;
    for (CompareRun& run : compareStrategies(*req->net, *req->hw, req->config, hooks, options)) {
        CompareOutcome::Row row;
        row.mode = run.mode;
        row.seconds = run.wallSeconds;
        if (run.result) {
            row.ok = true;
            row.best = run.result->bestTree;
            row.eval = run.result->best;
        } else {
            row.error = QString::fromStdString(run.error.message);
        }
        out->rows.push_back(std::move(row));
    }
    bool stopped;
    {
        std::lock_guard lock(m_mutex);
        stopped = m_stopAll;
        m_busy = false;
        m_paused = false;
    }
    out->stopped = stopped;
    sendCompare(out);
    sendState(gen, stopped ? RunState::Stopped : RunState::Finished,
              stopped ? tr("Compare stopped") : tr("Compare finished"));
}

} // namespace tilescope::ui

#include "searchworker.moc"
