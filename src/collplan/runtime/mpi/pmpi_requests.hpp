// The requests of the PMPI library's non-blocking (MPI_Iallreduce, ...) and persistent (MPI_Allreduce_init +
// MPI_Start) collectives: what pmpi.cpp (the interceptors of the collectives) and pmpi_requests.cpp (MPI_Start,
// the completion calls, progress) share. Internal to libcollplan_pmpi.so.
//
// The handle. The program gets a request of the MPI library itself that stays active and incomplete, for the MPI
// library too, until the schedule has completed: a non-blocking call's is a generalized request (MPI_Grequest_start,
// completed by MPI_Grequest_complete; its query function gives the status); a persistent call's, which generalized
// requests cannot be, an inactive receive of an empty message from this process to itself on a private duplicate
// of MPI_COMM_SELF (MPI_Recv_init, a tag of its own), started by MPI_Start and completed by the library's empty
// message to itself. So MPI_Waitall, MPI_Testany, MPI_Waitsome, ... on arrays that mix them with point-to-point
// requests keep MPI's own semantics, and a completion call the library did not see could not report one complete
// early. The interposed completion calls advance the schedules and write into the returned status what the MPI
// library's own collective request gives (MPI_SOURCE, MPI_TAG: captured once from an MPI_Ibarrier /
// MPI_Barrier_init on MPI_COMM_SELF; the count is 0 and not cancelled, as there).
#pragma once
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "collplan/runtime/mpi/collectives.hpp"

// MPI-4 persistent collectives: MPICH 4+ (MPI_VERSION 4+), Open MPI 5 (which says MPI_VERSION 3 but has them).
#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define COLLPLAN_PERSISTENT_COLLECTIVES 1
#else
#define COLLPLAN_PERSISTENT_COLLECTIVES 0
#endif

namespace collplan::mpi::pmpi {

// With MPI_THREAD_MULTIPLE every interceptor that touches the library's state holds this lock (recursive: a
// blocking schedule's own MPI_Waitall may advance the non-blocking ones).
extern bool g_locking;
extern std::recursive_mutex g_mu;
struct MaybeLock {
    bool on;
    explicit MaybeLock(bool l) : on(l) {
        if (on) g_mu.lock();
    }
    ~MaybeLock() {
        if (on) g_mu.unlock();
    }
};

// What one run of a schedule needs beside the plan: the request and the staging buffers of non-contiguous data.
// A blocking call shape keeps one; every non-blocking call in flight and every persistent request has its own.
struct Slot {
    std::unique_ptr<Request> req;
    std::vector<char> packed_in, packed_out;
    std::vector<uint64_t> v[4];  // alltoallv: send bytes, send displs, recv bytes, recv displs
};
struct SlotPool {
    std::vector<std::unique_ptr<Slot>> spare;
};

enum Kind : uint8_t { kBlocking, kNonblocking, kPersistent };

struct CollRequest {
    MPI_Request handle = MPI_REQUEST_NULL;  // the program's request (as created: what the lookups compare)
    MPI_Comm comm = MPI_COMM_NULL;          // the program's communicator (its error handler)
    int fn = 0;                             // pmpi.cpp's Fn
    int tag = 0;                            // persistent: of the empty message on the MPI_COMM_SELF duplicate
    bool persistent = false;
    enum State : uint8_t { idle, running, signalled } state = idle;
    bool user_freed = false;                // MPI_Request_free while running: dropped when it completes
    int error = MPI_SUCCESS;                // the run failed (after the communicator's error handler returned)
    std::unique_ptr<Slot> slot;
    std::shared_ptr<SlotPool> pool;         // where the slot goes back to
    std::shared_ptr<void> owner;            // keeps the decision (pmpi.cpp's Entry) alive
    std::function<void()> finish;           // after the schedule: copy out of staging into the program's buffers
    std::function<int(CollRequest&)> launch;  // persistent: what MPI_Start runs
};

// Collplan requests started and not yet returned complete to the program; the interposed completion calls pass
// straight to PMPI_ while it is 0 (one load and branch). g_live: every collplan request that exists (MPI_Start,
// MPI_Request_free, MPI_Cancel look handles up only then).
extern std::atomic<int> g_outstanding, g_live;

// A new request whose handle goes to *out: non-blocking ones are started (outstanding), persistent ones idle.
// Returns null with rc set when the MPI library refused the handle.
CollRequest* new_request(MPI_Comm comm, int fn, bool persistent, MPI_Request* out, int& rc);
// The schedule of c (bound, started by the caller) runs: from now on the completion calls advance it.
void running(CollRequest& c);
// Nothing to run (no data on any rank) or the run is over: completes the request for the MPI library.
void complete(CollRequest& c);
// The run could not be started: the request completes with this error (after the error handler).
void fail(CollRequest& c, int error);
// A request that could not be handed to the program (its launch failed at once): freed.
void discard(CollRequest* c);

// COLLPLAN_PROGRESS=thread: a thread advances the schedules (MPI_THREAD_MULTIPLE only; else a warning, once).
void progress_init(int provided, int world_rank);
// At MPI_Finalize: stops the thread, and completes the runs still going (requests the program freed while they ran).
void progress_finalize();

}  // namespace collplan::mpi::pmpi
