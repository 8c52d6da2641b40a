// Runs a list of sweep points on J threads (docs/sweep.md, "--jobs"): the workers only
// compute; every row comes back on the calling thread, which stores or forwards it.
#pragma once

#include "sweep/sweep.h"

#include <cstddef>
#include <functional>
#include <stop_token>
#include <vector>

namespace tilescope {

// Points `todo` (indices into `points`) are taken in order by `jobs` worker threads, each
// running runSweepPoint. `onRow` runs on the calling thread, one row at a time, in order of
// completion; `onIdle` runs there too, at least every `idleSeconds` while points are in
// flight (progress, message passing). A row whose search the stop token cut short is not
// delivered (it is not the point's result); after a stop the call returns once the running
// points have ended.
void runSweepPoints(const SweepSpec& spec, const std::vector<SweepPoint>& points,
                    const std::vector<std::size_t>& todo, int jobs,
                    const std::function<void(SweepRow&&)>& onRow,
                    const std::function<void()>& onIdle, std::stop_token stop = {},
                    double idleSeconds = 0.2);

// The points of shard `shard` of `shards`: every point whose index mod shards is shard
// (deterministic over the expanded list, so shards started apart agree).
std::vector<std::size_t> shardPoints(std::size_t count, int shard, int shards);

} // namespace tilescope
