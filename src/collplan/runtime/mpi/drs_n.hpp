// drs_n -- Distributed Random Scheduling avoiding Node contention, as a runtime protocol (not a static schedule).
//
// Source:  Wang, Lin, Ranka, "Distributed scheduling of unstructured collective communication on the CM-5",
//          sec. 4 and Figure 5. The paper's Active-Messages test-and-set of the receiver's busy_lock becomes an
//          MPI-3 one-sided atomic: MPI_Compare_and_swap on a window holding one busy flag per rank.
// Protocol (alltoallv interface: this rank's counts and displacements, in bytes):
//   1. every rank pre-posts a receive for each nonzero incoming message (Generate_Recv is the recv counts the
//      alltoallv interface already gives; the paper computes them with a global concatenate or count messages);
//   2. repeat until every outgoing message is sent: pick the next destination of a random order (seeded by the
//      rank), compare-and-swap its flag FREE -> BUSY; if it was FREE, send the message, wait for the send to
//      complete, and set the flag back to FREE; if it was BUSY, go on to the next destination (retry later);
//   3. wait for all receives.
// Hence every rank receives at most one message at a time (the test-and-set messages aside). The message to
// oneself is a copy. The window is created once per DrsN object (collective) and reused by every call.
// Cost:    per message one atomic round trip and one reset on top of the transfer; retries when receivers are
//          busy. Memory: one int per rank (the window).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

namespace collplan::mpi {

struct DrsNStats {
    uint64_t attempts = 0;   // compare-and-swap operations issued
    uint64_t busy = 0;       // ... that found the receiver busy
    uint64_t messages = 0;   // messages sent (to other ranks)
};

class DrsN {
public:
    explicit DrsN(MPI_Comm comm, uint64_t seed = 1);  // collective over comm
    ~DrsN();
    DrsN(const DrsN&) = delete;
    DrsN& operator=(const DrsN&) = delete;

    // One alltoallv; every rank calls it (counts and displacements in bytes, P entries each).
    DrsNStats alltoallv(const void* send, const uint64_t* send_bytes, const uint64_t* send_displs, void* recv,
                        const uint64_t* recv_bytes, const uint64_t* recv_displs);

private:
    MPI_Comm comm_ = MPI_COMM_NULL;
    MPI_Win win_ = MPI_WIN_NULL;
    int* flags_ = nullptr;
    int rank_ = 0, size_ = 1;
    uint64_t seed_, calls_ = 0;
};

}  // namespace collplan::mpi
