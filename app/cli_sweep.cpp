// sweep and sweep-merge (docs/sweep.md): argument checking, the shard / rank split, progress
// on stderr and the summary on stdout. The spec, the points, one point's run and the
// database are engine/sweep's; MPI is cli_mpi's.
#include "cli_commands.h"
#include "cli_mpi.h"
#include "sweep/sweep.h"
#include "sweep/sweeprunner.h"
#include "sweep/sweepstore.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace tilescope::cli {

namespace {

struct Shard {
    int index = 0, count = 1;
};

// "I/N": shard I (0-based) of N.
Shard parseShard(const std::string& v) {
    Shard s;
    const auto slash = v.find('/');
    const auto bad = [&] {
        return UsageError{"--shard expects I/N with 0 <= I < N (e.g. 0/4), got '" + v + "'"};
    };
    if (slash == std::string::npos) throw bad();
    try {
        size_t a = 0, b = 0;
        const std::string i = v.substr(0, slash), n = v.substr(slash + 1);
        s.index = std::stoi(i, &a);
        s.count = std::stoi(n, &b);
        if (a != i.size() || b != n.size()) throw bad();
    } catch (const UsageError&) {
        throw;
    } catch (...) {
        throw bad();
    }
    if (s.count < 1 || s.index < 0 || s.index >= s.count) throw bad();
    return s;
}

// Points done / total, failures and the ETA: a bar redrawn in place on a terminal, a line
// per point otherwise (logs of a batch job), nothing with --quiet.
class SweepProgress {
  public:
    SweepProgress(std::size_t total, bool quiet)
        : m_total(total), m_quiet(quiet), m_tty(isatty(fileno(stderr)) != 0),
          m_start(std::chrono::steady_clock::now()) {}

    void row(const SweepRow& r) {
        ++m_done;
        if (!r.valid) ++m_failed;
        if (std::isfinite(r.elapsedS)) m_searchSeconds += r.elapsedS;
        if (m_quiet) return;
        if (m_tty) {
            draw();
        } else {
            std::fprintf(
                stderr, "sweep: %zu/%zu points, %zu failed, %.1fs, ETA %s: %s %s b%d: %s\n", m_done,
                m_total, m_failed, elapsed(), eta().c_str(),
                (shortName(r.model) + (r.dims.empty() ? "" : " " + r.dims)).c_str(),
                r.hwName.c_str(), r.batch,
                r.valid ? ("cost " + number(r.cost)).c_str() : ("failed: " + r.reason).c_str());
            std::fflush(stderr);
        }
    }
    void tick() {
        if (!m_quiet && m_tty) draw();
    }
    void finish() {
        if (!m_quiet && m_tty) {
            draw();
            std::fputc('\n', stderr);
        }
    }
    std::size_t done() const { return m_done; }
    std::size_t failed() const { return m_failed; }
    double searchSeconds() const { return m_searchSeconds; }
    double elapsed() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    }

  private:
    static std::string shortName(const std::string& path) {
        const auto slash = path.find_last_of('/');
        return slash == std::string::npos ? path : path.substr(slash + 1);
    }
    static std::string number(double d) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.6g", d);
        return buf;
    }
    std::string eta() const {
        if (m_done == 0) return "?";
        if (m_done >= m_total) return "0s";
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.0fs",
                      elapsed() / double(m_done) * double(m_total - m_done));
        return buf;
    }
    void draw() {
        constexpr int width = 24;
        const double frac = m_total ? double(m_done) / double(m_total) : 1.0;
        std::string bar(size_t(frac * width + 0.5), '#');
        bar.resize(width, '.');
        std::fprintf(stderr, "\rsweep [%s] %zu/%zu points  %zu failed  %.0fs  ETA %s   ",
                     bar.c_str(), m_done, m_total, m_failed, elapsed(), eta().c_str());
        std::fflush(stderr);
    }

    std::size_t m_total, m_done = 0, m_failed = 0;
    bool m_quiet, m_tty;
    std::chrono::steady_clock::time_point m_start;
    double m_searchSeconds = 0;
};

std::string joinIndices(const std::vector<std::size_t>& v) {
    std::ostringstream s;
    for (std::size_t i : v)
        s << i << ' ';
    return s.str();
}

std::vector<std::size_t> splitIndices(const std::string& text) {
    std::istringstream s(text);
    std::vector<std::size_t> v;
    std::size_t i;
    while (s >> i)
        v.push_back(i);
    return v;
}

// --jobs: worker threads per process, 1 without the option.
int parseJobs(const Args& a) {
    int jobs = 1;
    if (!a.has("--jobs")) return jobs;
    const std::string v = a.get("--jobs");
    size_t used = 0;
    try {
        jobs = std::stoi(v, &used);
    } catch (...) {
        used = 0;
    }
    if (used == 0 || used != v.size() || jobs < 1 || jobs > 4096)
        throw UsageError{"--jobs expects a whole number from 1 to 4096, got '" + v + "'"};
    return jobs;
}

// The points of `mine` the store does not hold yet, as joinIndices text ("!" and the
// error when the store cannot be read); `already` counts the ones it holds.
std::string missingPoints(SweepStore& store, const std::vector<SweepPoint>& points,
                          const std::vector<std::size_t>& mine, std::size_t& already) {
    auto have = store.points();
    if (!have) return "!" + have.error().message;
    std::vector<std::size_t> todo;
    for (std::size_t i : mine)
        if (have->count(points[i].key))
            ++already;
        else
            todo.push_back(i);
    return joinIndices(todo);
}

} // namespace

int runSweep(const Args& a) {
    if (a.positional.size() != 1) throw UsageError{"expected exactly one SPEC argument"};
    if (!a.has("--db") || a.get("--db").empty()) throw UsageError{"--db is required"};
    const std::string specPath = a.positional[0], dbPath = a.get("--db");
    const int jobs = parseJobs(a);
    const Shard shard = a.has("--shard") ? parseShard(a.get("--shard")) : Shard{};
    const bool quiet = a.has("--quiet");

    // Under mpirun without MPI support every rank would run every point: refuse.
    const int launched = mpi::launchedSize();
    if (launched > 1 && !mpi::built())
        return userError("this tilescope-cli was built without MPI but runs as one of " +
                         std::to_string(launched) +
                         " MPI ranks; rebuild with MPI (packaging/debian-deps.sh installs it) or "
                         "split the sweep with --shard I/N");
    const bool useMpi = launched > 1;
    const mpi::World world = useMpi ? mpi::init() : mpi::World{};
    const bool root = world.rank == 0;
    // Every rank reads the spec; one that cannot (a file missing on its node) stops all.
    auto spec = loadSweepSpec(specPath);
    const int specFailed = mpi::maxOverRanks(spec ? 0 : 1);
    if (specFailed) {
        if (!spec)
            userError((world.size > 1 ? "rank " + std::to_string(world.rank) + ": " : "") +
                      spec.error().message);
        if (useMpi) mpi::finalize();
        return 1;
    }
    const std::vector<SweepPoint> points = expandSweep(*spec);
    const std::vector<std::size_t> mine = shardPoints(points.size(), shard.index, shard.count);

    // Rank 0 opens the database and decides what is missing; the ranks split that.
    std::unique_ptr<SweepStore> store;
    std::string todoText;
    std::size_t already = 0;
    if (root) {
        auto s = SweepStore::open(dbPath);
        if (!s) {
            todoText = "!" + s.error().message;
        } else {
            store = std::move(s).value();
            todoText = missingPoints(*store, points, mine, already);
        }
    }
    if (useMpi) mpi::broadcast(todoText);
    if (!todoText.empty() && todoText[0] == '!') {
        if (root) userError(todoText.substr(1));
        if (useMpi) mpi::finalize();
        return 1;
    }
    const std::vector<std::size_t> todo = splitIndices(todoText);
    std::vector<std::size_t> ours; // this rank's share: every size-th missing point
    for (std::size_t k = 0; k < todo.size(); ++k)
        if (int(k % std::size_t(world.size)) == world.rank) ours.push_back(todo[k]);

    SweepProgress progress(todo.size(), quiet || !root);
    Interruptible stop;
    int status = 0;
    auto store1 = [&](const SweepRow& r) {
        if (status) return;
        if (auto ok = store->insert(r); !ok) {
            status = userError(ok.error().message);
            stop.source.request_stop();
            if (useMpi) mpi::abort(1); // the other ranks cannot write anywhere else
            return;
        }
        progress.row(r);
    };
    int ranksDone = 0;
    auto receive = [&] {
        while (auto m = mpi::poll()) {
            if (m->tag == mpi::kDoneTag) {
                ++ranksDone;
                continue;
            }
            auto j = nlohmann::json::parse(m->data, nullptr, false);
            auto row = sweepRowFromJson(j);
            if (!row) {
                status =
                    userError("rank " + std::to_string(m->source) + ": " + row.error().message);
                continue;
            }
            store1(*row);
        }
    };
    const auto t0 = std::chrono::steady_clock::now();
    runSweepPoints(
        *spec, points, ours, jobs,
        [&](SweepRow&& r) {
            if (root)
                store1(r);
            else
                mpi::send(mpi::kRowTag, sweepRowToJson(r).dump());
        },
        [&] {
            stop.poll();
            if (root) {
                if (useMpi) receive();
                progress.tick();
            }
        },
        stop.source.get_token());
    if (useMpi) {
        if (root) {
            while (ranksDone < world.size - 1) {
                receive();
                stop.poll();
                progress.tick();
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
        } else {
            mpi::send(mpi::kDoneTag, "");
        }
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const bool interrupted = stop.poll();
    if (root) {
        progress.finish();
        const std::size_t run = progress.done();
        const int workers = jobs * world.size;
        std::printf("sweep %s: %zu points", specPath.c_str(), points.size());
        if (shard.count > 1)
            std::printf(", shard %d/%d has %zu", shard.index, shard.count, mine.size());
        std::printf("; %zu already in %s, %zu run now (%zu failed) in %.2f s", already,
                    dbPath.c_str(), run, progress.failed(), wall);
        if (world.size > 1) std::printf(" on %d MPI ranks", world.size);
        std::printf("\n");
        if (run > 0)
            std::printf("search %.2f s summed over %d worker(s); overhead %.3f s per point "
                        "(worker time beyond the search)\n",
                        progress.searchSeconds(), workers,
                        std::max(0.0, wall * std::min<double>(workers, double(run)) -
                                          progress.searchSeconds()) /
                            double(run));
        if (interrupted)
            std::fprintf(stderr,
                         "tilescope-cli: interrupted; %zu of %zu points are missing, "
                         "rerun to finish\n",
                         todo.size() - run, todo.size());
    }
    if (useMpi) mpi::finalize();
    if (status) return status;
    return interrupted ? 130 : 0;
}

int runSweepMerge(const Args& a) {
    if (a.positional.size() < 2)
        throw UsageError{"expected OUT.sqlite and at least one shard database to merge"};
    auto out = SweepStore::open(a.positional[0]);
    if (!out) return userError(out.error().message);
    for (std::size_t i = 1; i < a.positional.size(); ++i) {
        auto c = (*out)->mergeFrom(a.positional[i]);
        if (!c) return userError(c.error().message);
        std::printf("%s: %lld rows added, %lld already in %s", a.positional[i].c_str(), c->added,
                    c->duplicates, a.positional[0].c_str());
        if (c->conflicting)
            std::printf(" (%lld of them with a different cost: kept the first)", c->conflicting);
        std::printf("\n");
    }
    auto n = (*out)->points();
    if (!n) return userError(n.error().message);
    std::printf("%s: %zu points\n", a.positional[0].c_str(), n->size());
    return 0;
}

} // namespace tilescope::cli
