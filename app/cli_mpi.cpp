#include "cli_mpi.h"

#include <cstdlib>
#include <string>

#ifdef TILESCOPE_HAVE_MPI
#include <mpi.h>
#endif

namespace tilescope::cli::mpi {

int launchedSize() {
    for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS"})
        if (const char* v = std::getenv(var)) {
            const int n = std::atoi(v);
            if (n > 0) return n;
        }
    return 1;
}

#ifdef TILESCOPE_HAVE_MPI

namespace {
bool g_active = false; // init() ran: otherwise every call is the one-process no-op
}

bool built() {
    return true;
}

World init() {
    g_active = true;
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    World w;
    MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &w.size);
    return w;
}

void finalize() {
    if (!g_active) return;
    g_active = false;
    MPI_Finalize();
}

int maxOverRanks(int value) {
    int out = value;
    if (!g_active) return out;
    MPI_Allreduce(&value, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return out;
}

void broadcast(std::string& data) {
    if (!g_active) return;
    unsigned long long n = data.size();
    MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    data.resize(size_t(n));
    if (n > 0) MPI_Bcast(data.data(), int(n), MPI_CHAR, 0, MPI_COMM_WORLD);
}

void send(int tag, const std::string& data) {
    if (!g_active) return;
    MPI_Send(data.data(), int(data.size()), MPI_CHAR, 0, tag, MPI_COMM_WORLD);
}

std::optional<Message> poll() {
    if (!g_active) return std::nullopt;
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (!flag) return std::nullopt;
    int count = 0;
    MPI_Get_count(&st, MPI_CHAR, &count);
    Message m;
    m.source = st.MPI_SOURCE;
    m.tag = st.MPI_TAG;
    m.data.resize(size_t(count));
    MPI_Recv(m.data.data(), count, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    return m;
}

void abort(int code) {
    if (g_active) MPI_Abort(MPI_COMM_WORLD, code);
    std::exit(code);
}

#else // built without MPI: one process is the whole world

bool built() {
    return false;
}
World init() {
    return {};
}
void finalize() {}
int maxOverRanks(int value) {
    return value;
}
void broadcast(std::string&) {}
void send(int, const std::string&) {}
std::optional<Message> poll() {
    return std::nullopt;
}
void abort(int code) {
    std::exit(code);
}

#endif

} // namespace tilescope::cli::mpi
