// MPI for `tilescope-cli sweep` (docs/sweep.md, "MPI"): rank 0 alone writes the database,
// the other ranks send it their rows. Without TILESCOPE_HAVE_MPI only launchedSize() does
// anything, so that sweep can refuse to run every point once per rank.
#pragma once

#include <optional>
#include <string>

namespace tilescope::cli::mpi {

bool built();
// The world size mpirun announces in the environment (Open MPI, MPICH/Hydra); 1 without.
int launchedSize();

struct World {
    int rank = 0, size = 1;
};
// MPI_Init_thread with MPI_THREAD_FUNNELED: only the main thread calls MPI; sweep's worker
// threads compute and hand their rows to it.
World init();
void finalize();
// Collective: the largest `value` over all ranks (did any rank fail?).
int maxOverRanks(int value);
// Collective: rank 0's `data` on every rank.
void broadcast(std::string& data);
// To rank 0.
void send(int tag, const std::string& data);
struct Message {
    int source = 0, tag = 0;
    std::string data;
};
// Rank 0: a message that has arrived, if any (does not wait).
std::optional<Message> poll();
[[noreturn]] void abort(int code);

constexpr int kRowTag = 1;  // data: one sweepRowToJson
constexpr int kDoneTag = 2; // data: empty; the rank has sent all its rows

} // namespace tilescope::cli::mpi
