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

// The MPI library's own collective, as collplan sizes it: allgather `bytes` per rank, alltoall `bytes` per
// destination (both MPI_BYTE), allreduce `count` elements of `type` with `op`, barrier. Throws Error when the
// library refuses or a count does not fit an int.
void native_collective(Collective c, const void* send, void* recv, uint64_t bytes, uint64_t count, MPI_Datatype type,
                       MPI_Op op, MPI_Comm comm);

}  // namespace collplan::mpi
