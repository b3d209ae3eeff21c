// drs_n runtime protocol. See drs_n.hpp.
#include "collplan/runtime/mpi/drs_n.hpp"

#include <algorithm>
#include <cstring>
#include <random>

#include "collplan/runtime/mpi/check.hpp"

namespace collplan::mpi {
namespace {

constexpr int kFree = 0, kBusy = 1, kTag = 7;

int count_of(uint64_t bytes) { return as_int(bytes, "drs_n message"); }

}  // namespace

DrsN::DrsN(MPI_Comm comm, uint64_t seed) : seed_(seed) {
    check(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    check(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, comm_, &flags_, &win_), "MPI_Win_allocate");
    check(MPI_Win_lock_all(0, win_), "MPI_Win_lock_all");
    *flags_ = kFree;
    MPI_Win_sync(win_);
    MPI_Barrier(comm_);
}

DrsN::~DrsN() {
    int fin = 0;
    MPI_Finalized(&fin);
    if (fin) return;
    MPI_Win_unlock_all(win_);
    MPI_Win_free(&win_);
    MPI_Comm_free(&comm_);
}

DrsNStats DrsN::alltoallv(const void* send, const uint64_t* send_bytes, const uint64_t* send_displs, void* recv,
                          const uint64_t* recv_bytes, const uint64_t* recv_displs) {
    DrsNStats st;
    std::vector<MPI_Request> recvs;
    for (int i = 0; i < size_; ++i)  // step 1: Generate_Recv -- pre-post every incoming message
        if (i != rank_ && recv_bytes[i] > 0) {
            recvs.emplace_back();
            check(MPI_Irecv(static_cast<char*>(recv) + recv_displs[i], count_of(recv_bytes[i]), MPI_BYTE, i, kTag,
                            comm_, &recvs.back()), "MPI_Irecv");
        }
    if (send_bytes[rank_] > 0)
        std::memcpy(static_cast<char*>(recv) + recv_displs[rank_], static_cast<const char*>(send) + send_displs[rank_],
                    send_bytes[rank_]);
    std::vector<int> todo;
    for (int j = 0; j < size_; ++j)
        if (j != rank_ && send_bytes[j] > 0) todo.push_back(j);
    std::mt19937_64 rng(seed_ * 1000003u + static_cast<uint64_t>(rank_) * 7919u + calls_++);
    std::shuffle(todo.begin(), todo.end(), rng);
    const int busy = kBusy, free_flag = kFree;
    for (size_t k = 0; !todo.empty();) {  // step 2
        if (k >= todo.size()) k = 0;
        const int dst = todo[k];
        int old = kBusy;
        ++st.attempts;
        check(MPI_Compare_and_swap(&busy, &free_flag, &old, MPI_INT, dst, 0, win_), "MPI_Compare_and_swap");
        check(MPI_Win_flush(dst, win_), "MPI_Win_flush");
        if (old != kFree) {
            ++st.busy;
            ++k;  // receiver busy: try the next destination, come back later
            // Drive our own receives meanwhile: a shared-memory window's atomics make no message progress, and
            // the sender holding that flag may be waiting for us to take its (rendezvous) message -- without
            // this, ranks spinning here and ranks waiting on their sends livelock (seen under Open MPI osc/sm).
            int all_done = 0;
            check(MPI_Testall(static_cast<int>(recvs.size()), recvs.data(), &all_done, MPI_STATUSES_IGNORE),
                  "MPI_Testall");
            continue;
        }
        MPI_Request r;
        check(MPI_Isend(static_cast<const char*>(send) + send_displs[dst], count_of(send_bytes[dst]), MPI_BYTE, dst,
                        kTag, comm_, &r), "MPI_Isend");
        check(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
        int ignored = 0;
        check(MPI_Fetch_and_op(&free_flag, &ignored, MPI_INT, dst, 0, MPI_REPLACE, win_), "MPI_Fetch_and_op");
        check(MPI_Win_flush(dst, win_), "MPI_Win_flush");
        ++st.messages;
        todo.erase(todo.begin() + static_cast<long>(k));  // k now names the next destination
    }
    check(MPI_Waitall(static_cast<int>(recvs.size()), recvs.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");  // step 3
    return st;
}

}  // namespace collplan::mpi
