// The PMPI library's recorder (COLLPLAN_PROFILE=DIR): every collective call of every rank, its completion where
// it is non-blocking or persistent, and a per-peer summary of the point-to-point messages it sent, into
// DIR/collplan.<world rank>.prof (the format: docs/profile.md). What pmpi.cpp (the collectives), pmpi_requests.cpp
// (the completion calls, MPI_Start, the blocking sends) and profile.cpp (buffers, communicators, the file) share.
//
// Cost: with COLLPLAN_PROFILE unset, nothing (the collectives' one pass-through branch reads g_watch, which is
// false; the request calls pass through on g_live alone, which watch_requests() raises while requests are watched). Recording: two clock reads and one
// record of 96 bytes per call, formatted and written when the buffer (8,192 records) fills and at MPI_Finalize
// (bench/README.md, "Drop-in overhead").
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "collplan/pmpi/pmpi_requests.hpp"

namespace collplan::mpi::pmpi {

extern bool g_profile;  // COLLPLAN_PROFILE set and the rank's file open (after MPI_Init)

// Inside a recorded collective call or MPI_Start: the sends of collplan's schedules are not the program's.
extern thread_local bool t_profile_inside __attribute__((tls_model("initial-exec")));
struct ProfileInside {
    bool was;
    explicit ProfileInside(bool on) : was(t_profile_inside) { t_profile_inside = was || on; }
    ~ProfileInside() { t_profile_inside = was; }
};

// The communicator of a call as the recorder knows it (its size and this rank's rank: the local group's for an
// inter-communicator).
struct ProfileComm {
    int size = 0, rank = 0;
    bool inter = false;
};

// One call line (docs/profile.md, "call"), filled by the interceptor's description of its arguments.
struct ProfileCall {
    Collective f{};
    Kind kind = kBlocking;
    int root = -1;
    uint64_t bytes = 0;
    int64_t type_size = 0;
    bool contiguous = true;
    MPI_Op op = MPI_OP_NULL;       // reductions only
    std::vector<uint64_t> values;  // per member (allgatherv, reduce_scatter, alltoallv)
    int64_t enter_ns = 0;
};

// Now, in ns of the monotonic clock.
int64_t profile_now();
// The time MPI_Init was entered (called first thing in MPI_Init and MPI_Init_thread).
void profile_init_entered();
// This host's name, as the profile's `host` line gives it (one word).
std::string profile_host();
// After MPI_Init's agreement: opens DIR/collplan.<rank>.prof when COLLPLAN_PROFILE is set, times counting from
// zero_ns (profile_now's clock: pmpi.cpp's after_init hands every rank on rank 0's host rank 0's reading, so their
// times agree exactly; elsewhere the rank's own reading at the end of the agreement). A directory or file that
// cannot be written: a warning on stderr, and this rank records nothing.
void profile_open(int64_t zero_ns, const std::string& host);
// At MPI_Finalize (before the MPI library's): the point-to-point summary, the last records and the end line.
void profile_close();

// The communicator of a call about to be recorded (looked up, or learnt now); false: not recorded (MPI_COMM_NULL).
bool profile_comm(MPI_Comm comm, ProfileComm& out);
// The call returned (rc): its line. Non-blocking (req: the program's request) -- its completion is watched;
// persistent init -- its MPI_Start calls are recorded.
void profile_record(MPI_Comm comm, ProfileCall& call, int rc, const MPI_Request* req);

// The request calls. `before`: the requests a completion call was given (n of them); `completed`: which of them it
// returned -- all (MPI_Wait, MPI_Waitall, and MPI_Test/MPI_Testall with flag), one index (MPI_Waitany/Testany), or
// a list (MPI_Waitsome/Testsome).
class ProfileWatch {
  public:
    ProfileWatch(int n, const MPI_Request* reqs);
    void all();
    void index(int i);
    void some(int count, const int* indices);

  private:
    int64_t enter_ = 0;
    std::vector<uint64_t> keys_;  // the requests given (their handles' keys), by position
};
// MPI_Start/MPI_Startall of recorded persistent requests: each a start line, its completion watched.
void profile_started(int n, const MPI_Request* reqs, int64_t enter_ns);
// MPI_Request_free of a recorded request: forgotten.
void profile_freed(const MPI_Request* req);
// A point-to-point send of count elements of t to dst of comm (counted per peer, in MPI_COMM_WORLD's ranks).
void profile_sent(MPI_Comm comm, int dst, int64_t count, MPI_Datatype t);

}  // namespace collplan::mpi::pmpi
