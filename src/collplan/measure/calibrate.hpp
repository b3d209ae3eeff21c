// Measurement kernels of `collplan calibrate`: the timed loops behind the machine parameters, in C++ so that the
// ~1 us cost of a Python call does not swamp shared-memory latencies. The fitting (python/collplan/calibrate.py)
// and the command (python/collplan/commands/calibrate.py) are in Python; docs/calibration.md explains the methods.
//
// Every kernel runs `warmup` untimed iterations first, then returns `samples` times in seconds, each the mean of
// `batch` consecutive iterations (one clock read per sample: std::chrono::steady_clock). The point-to-point
// kernels run between this rank and `peer`: the lower rank of the pair is the initiator and gets the samples,
// the peer gets an empty vector (the receiver's half of `overhead` is sent to the initiator at the end). Both
// ranks of the pair must call the same kernel with the same arguments; other ranks must not take part.
//
//   pingpong     round trip of `bytes` there and back (MPI_Send / MPI_Recv), per iteration
//   burst        `count` back-to-back MPI_Send of `bytes` to the peer, which receives them all and answers with a
//                0-byte ack; the time from the first send to the ack (Kielmann et al. 2000: the gap from the
//                saturation of a burst; count = 1 gives the reference one-way + ack)
//   exchange     `count` messages of `bytes` each way between this rank and the peer at once (MPI_Irecv and
//                MPI_Isend of all of them, then MPI_Waitall), per iteration; both ranks get samples. Run by k
//                pairs at the same time it gives what a host moves with 2k streams (calibrate's host channel,
//                after the max-rate model of Gropp, Olson, Samfass 2016)
//   overhead     the time spent inside MPI_Send (sender) and inside MPI_Recv of a message that has already
//                arrived (receiver: it first waits `delay_s`), per message (Kielmann et al. 2000: o_s(m), o_r(m))
//   reduce_local MPI_Reduce_local(src, dst, bytes / 8, MPI_DOUBLE, MPI_SUM): what the executor does for a reduce op
//   copy         memmove of `bytes` between two buffers: what the executor does for a copy op
//   barrier      MPI_Barrier on the whole communicator (every rank calls it and gets its own samples)
//   timer        the cost of one clock read (the resolution floor of every sample)
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

namespace collplan::mpi {

struct Repeat {
    int samples = 100;  // timed samples returned
    int batch = 1;      // iterations per sample (the sample is their mean)
    int warmup = 10;    // untimed iterations before the first sample
};

struct OverheadSamples {
    std::vector<double> send_s;  // time inside MPI_Send, per message (initiator)
    std::vector<double> recv_s;  // time inside MPI_Recv of an arrived message (peer's, sent to the initiator)
};

std::vector<double> pingpong(MPI_Comm comm, int peer, uint64_t bytes, Repeat r);
std::vector<double> burst(MPI_Comm comm, int peer, uint64_t bytes, int count, Repeat r);
std::vector<double> exchange(MPI_Comm comm, int peer, uint64_t bytes, int count, Repeat r);
OverheadSamples overhead(MPI_Comm comm, int peer, uint64_t bytes, double delay_s, Repeat r);
std::vector<double> reduce_local(uint64_t bytes, Repeat r);
std::vector<double> copy(uint64_t bytes, Repeat r);
std::vector<double> barrier(MPI_Comm comm, Repeat r);
std::vector<double> timer(Repeat r);

}  // namespace collplan::mpi
