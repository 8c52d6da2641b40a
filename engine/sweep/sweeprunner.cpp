#include "sweep/sweeprunner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace tilescope {

void runSweepPoints(const SweepSpec& spec, const std::vector<SweepPoint>& points,
                    const std::vector<std::size_t>& todo, int jobs,
                    const std::function<void(SweepRow&&)>& onRow,
                    const std::function<void()>& onIdle, std::stop_token stop, double idleSeconds) {
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<SweepRow> done;
    std::size_t finished = 0; // rows delivered or dropped, under mutex
    std::atomic<std::size_t> next{0};

    auto work = [&] {
        while (!stop.stop_requested()) {
            const std::size_t i = next.fetch_add(1);
            if (i >= todo.size()) return;
            bool stopped = false;
            SweepRow row = runSweepPoint(spec, points[todo[i]], stop, &stopped);
            std::lock_guard lock(mutex);
            if (!stopped) done.push_back(std::move(row));
            ++finished;
            ready.notify_one();
        }
    };
    const int n = int(std::clamp<std::size_t>(std::size_t(std::max(jobs, 1)), 1,
                                              std::max<std::size_t>(todo.size(), 1)));
    std::vector<std::jthread> workers;
    for (int t = 0; t < n; ++t)
        workers.emplace_back(work);

    auto lastIdle = std::chrono::steady_clock::now();
    const auto interval = std::chrono::duration<double>(idleSeconds);
    while (true) {
        std::unique_lock lock(mutex);
        ready.wait_for(lock, interval, [&] { return !done.empty(); });
        std::deque<SweepRow> batch;
        batch.swap(done);
        const bool running = finished < todo.size();
        lock.unlock();
        for (SweepRow& r : batch)
            if (onRow) onRow(std::move(r));
        if (onIdle && std::chrono::steady_clock::now() - lastIdle >= interval) {
            lastIdle = std::chrono::steady_clock::now();
            onIdle();
        }
        if (!running) break;
        if (stop.stop_requested()) {
            // Workers end after their running point; join them, then deliver what is left.
            for (auto& w : workers)
                w.join();
            workers.clear();
            lock.lock();
            batch.swap(done);
            lock.unlock();
            for (SweepRow& r : batch)
                if (onRow) onRow(std::move(r));
            break;
        }
    }
    for (auto& w : workers)
        if (w.joinable()) w.join();
}

std::vector<std::size_t> shardPoints(std::size_t count, int shard, int shards) {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < count; ++i)
        if (shards <= 1 || int(i % std::size_t(shards)) == shard) out.push_back(i);
    return out;
}

} // namespace tilescope
