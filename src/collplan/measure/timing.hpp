// Timing collectives under MPI, for `collplan plan --evaluator measure`, `collplan run` and bench/mpi: the same
// discipline everywhere, that of the standard MPI micro-benchmarks (OSU's osu_allreduce & co., and
// bench/latency/latency.c): untimed warm-up calls; then each call is timed alone (MPI_Wtime around it) and followed
// by an MPI_Barrier outside the timed region; a rank's figure is its mean over the timed calls, and the figure
// reported is the average over the ranks (OSU's "Avg Latency"). Back-to-back calls without the barrier overlap
// (a rank starts the next call while its partner finishes this one) and read up to 25 % lower than such a
// benchmark at 64 B - 16 KiB; with it, the planner's native figure is the benchmark's.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "collplan/schedule/schedule.hpp"

namespace collplan::mpi {

// `warmup` untimed calls of fn, then `reps` repetitions of `iters` timed calls; returns, per repetition, the
// average over ranks of each rank's mean time per call (seconds), the same vector on every rank. Collective over
// comm.
std::vector<double> time_calls(MPI_Comm comm, const std::function<void()>& fn, int iters, int warmup, int reps);

// What the MPI library's own collective needs besides its buffers, as collplan sizes it (collectives.hpp).
struct NativeShape {
    // Collectives of bytes (MPI_BYTE): allgather and gather -- bytes per rank; alltoall -- per destination;
    // scatter -- per rank; bcast -- the message.
    uint64_t bytes = 0;
    // Reductions: elements of `type` -- allreduce and reduce: the vector; reduce_scatter_block: each rank's block.
    uint64_t count = 0;
    MPI_Datatype type = MPI_BYTE;
    MPI_Op op = MPI_SUM;
    int root = 0;  // bcast, reduce, gather, scatter
    // allgatherv: P counts and displacements in bytes; reduce_scatter: P counts in elements of `type`.
    std::vector<uint64_t> counts, displs;
};

// The MPI library's own collective (MPI_Bcast, MPI_Reduce_scatter, ...) on these buffers. Throws Error when the
// library refuses or a count does not fit an int.
void native_collective(Collective c, const void* send, void* recv, const NativeShape& shape, MPI_Comm comm);

// The same for allgather `bytes` per rank, alltoall `bytes` per destination, allreduce `count` elements of `type`
// with `op`, barrier (bench/mpi's form).
void native_collective(Collective c, const void* send, void* recv, uint64_t bytes, uint64_t count, MPI_Datatype type,
                       MPI_Op op, MPI_Comm comm);

}  // namespace collplan::mpi
