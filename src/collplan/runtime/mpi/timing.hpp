// Timing collectives under MPI, for `collplan plan --evaluator measure`, `collplan run` and bench/mpi: the same
// discipline everywhere (OSU-style): untimed warm-up calls, then repetitions of `iters` calls between barriers,
// each repetition's figure being the slowest rank's mean time per call.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "collplan/schedule/schedule.hpp"

namespace collplan::mpi {

// `warmup` untimed calls of fn, then `reps` repetitions of `iters` calls; returns the slowest rank's mean time
// per call of each repetition (seconds), the same vector on every rank. Collective over comm.
std::vector<double> time_calls(MPI_Comm comm, const std::function<void()>& fn, int iters, int warmup, int reps);

// The MPI library's own collective, as collplan sizes it: allgather `bytes` per rank, alltoall `bytes` per
// destination (both MPI_BYTE), allreduce `count` elements of `type` with `op`, barrier. Throws Error when the
// library refuses or a count does not fit an int.
void native_collective(Collective c, const void* send, void* recv, uint64_t bytes, uint64_t count, MPI_Datatype type,
                       MPI_Op op, MPI_Comm comm);

}  // namespace collplan::mpi
