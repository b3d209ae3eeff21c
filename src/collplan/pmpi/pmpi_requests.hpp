// The requests of the PMPI library's non-blocking (MPI_Iallreduce, ...) and persistent (MPI_Allreduce_init +
// MPI_Start) collectives: what pmpi.cpp (the interceptors of the collectives) and pmpi_requests.cpp (MPI_Start,
// the completion calls, progress) share. Internal to libcollplan_pmpi.so.
//
// The handle. The program gets an MPI_Request value of collplan's own that the MPI library never sees: an index
// into the library's table of requests, written where MPI puts no valid handle (MPICH's int handles: a value whose
// kind bits say "invalid", 0x1c000000 + index; Open MPI's pointers: a non-canonical address, 0xc011 << 48 + index
// << 4). Every MPI call that takes a request is interposed -- MPI_Wait, MPI_Test, MPI_Waitall/any/some,
// MPI_Testall/any/some, MPI_Request_get_status(_any/_all/_some), MPI_Request_free, MPI_Cancel, MPI_Start(all),
// MPI_Request_c2f -- and, for an array that mixes collplan's requests with the MPI library's, hands the library a
// copy with MPI_REQUEST_NULL in collplan's places and merges the two answers with MPI's semantics (docs/runtime.md,
// "Non-blocking and persistent collectives"). Creating, completing and freeing such a request costs no MPI call
// (a generalized request cost ~500 instructions in MPI_Grequest_start and the MPI library's wait on it).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "collplan/runtime/mpi/collectives.hpp"
#include "collplan/runtime/mpi/features.hpp"

namespace collplan::mpi::pmpi {

// An MPI handle (a pointer in Open MPI, an int in MPICH) as the key of the library's tables.
template <class H>
uint64_t handle_key(H h) {
    uint64_t k = 0;
    std::memcpy(&k, &h, sizeof(h) < sizeof(k) ? sizeof(h) : sizeof(k));
    return k;
}

// With MPI_THREAD_MULTIPLE every interceptor that touches the library's state holds this lock (recursive: a
// blocking schedule's own MPI_Testall may advance the non-blocking ones).
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
    uint32_t index = 0;                     // in the table; the program's handle encodes it
    MPI_Comm comm = MPI_COMM_NULL;          // the program's communicator (its error handler)
    bool persistent = false;
    bool live = false;                      // the program may hold the handle (not freed)
    // idle: a persistent request not started (MPI's "inactive"); running: its schedule runs; signalled: the run is
    // over, and the next completion call that names it returns it.
    enum State : uint8_t { idle, running, signalled } state = idle;
    bool user_freed = false;                // MPI_Request_free while running: dropped when it completes
    int error = MPI_SUCCESS;                // the run failed (after the communicator's error handler returned)
    // The decision's run: a record keeps them when it is returned, for the next request of the same decision
    // (release_slot() gives the slot back to its pool; MPI_Finalize drops them all).
    std::unique_ptr<Slot> slot;
    std::shared_ptr<SlotPool> pool;         // where the slot goes back to
    std::shared_ptr<void> owner;            // keeps the decision (pmpi.cpp's Entry) alive
    std::function<void()> finish;           // after the schedule: copy out of staging into the program's buffers
    std::function<int(CollRequest&)> launch;  // persistent: what MPI_Start runs
    std::shared_ptr<const void> args;       // a vector call's copied count and displacement arrays (until freed)
    // The derived datatypes and user operation the request uses (null where predefined or none): held from the
    // call until the request is freed (hold()).
    MPI_Datatype types[2] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
    MPI_Op op = MPI_OP_NULL;
};

// MPI lets a program free a derived datatype or a user operation while a non-blocking or persistent operation that
// uses it is pending: MPI_Type_free and MPI_Op_free only mark it, and it goes when the operation no longer needs
// it (MPI 4.1, MPI_TYPE_FREE and MPI_OP_FREE). collplan's runs use the handles until their requests are freed (packing, MPI_Reduce_local),
// so the library interposes both calls: the program's handle becomes null at once, and the object is freed when
// the last request that holds it lets it go. The caller passes only derived datatypes and user operations (null
// for the rest). (Records of the holds are kept by
// handle; a held handle cannot be reused by the MPI library, so the key stays unique while it is held.)
void hold(CollRequest& c, MPI_Datatype send_type, MPI_Datatype recv_type, MPI_Op op);
// Called when the program frees a datatype or operation (held or not): pmpi.cpp forgets the decisions keyed by the
// handle (a later object may get the same handle).
void forget_handle(MPI_Datatype t, MPI_Op op);
extern bool g_forget;  // some decisions are cached (pmpi.cpp, after MPI_Init): MPI_Type_free/MPI_Op_free call forget_handle

// A new request whose handle goes to *out: non-blocking ones are running (the caller starts the schedule),
// persistent ones idle.
CollRequest* new_request(MPI_Comm comm, bool persistent, MPI_Request* out);
// The schedule of c (bound, started by the caller) runs: from now on the completion calls advance it.
void running(CollRequest& c);
// Nothing to run (no data on any rank) or the run is over: the next completion call returns the request.
void complete(CollRequest& c);
// The run could not be started: the request completes with this error (after the error handler).
void fail(CollRequest& c, int error);
// A request that could not be handed to the program (its launch failed at once): freed.
void discard(CollRequest* c);
// c's slot back to its pool, and c's decision let go (the record is about to serve another decision).
void release_slot(CollRequest& c);

// The Fortran handle of a request and back (MPI_Request_c2f/f2c, the Fortran entry points of fortran.cpp). Where
// MPI's handles are ints (MPICH) the handle is its own Fortran handle; where they are pointers (Open MPI, whose
// Fortran handles are indexes >= 0 into a table) collplan's request i is INT_MIN + i. Everything else is the MPI
// library's.
MPI_Fint request_c2f(MPI_Request r);
MPI_Request request_f2c(MPI_Fint f);

// COLLPLAN_PROFILE's recorder (profile.hpp) watches the program's recorded non-blocking and persistent requests: while
// on (g_watch_requests), the request calls leave their pass-through (as while collplan's own requests are live) and
// report what they return, start or free. Called with g_mu held (or by the only thread).
extern bool g_watch_requests;
void watch_requests(bool on);

// COLLPLAN_PROGRESS=thread: a thread advances the schedules (MPI_THREAD_MULTIPLE only; else a warning, once).
void progress_init(int provided, int world_rank);
// At MPI_Finalize: stops the thread, completes the runs still going (requests the program freed while they ran),
// and lets the returned records' decisions go.
void progress_finalize();

}  // namespace collplan::mpi::pmpi
