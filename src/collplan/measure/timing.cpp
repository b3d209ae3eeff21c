// See timing.hpp.
#include "collplan/measure/timing.hpp"

#include <string>

#include "collplan/runtime/mpi/check.hpp"

namespace collplan::mpi {

std::vector<double> time_calls(MPI_Comm comm, const std::function<void()>& fn, int iters, int warmup, int reps) {
    if (iters < 1 || warmup < 0 || reps < 1)
        throw Error("timing: iters " + std::to_string(iters) + ", warmup " + std::to_string(warmup) + ", reps " +
                    std::to_string(reps) + " (allowed: iters >= 1, warmup >= 0, reps >= 1)");
    int P = 1;
    MPI_Comm_size(comm, &P);
    for (int i = 0; i < warmup; ++i) fn(), MPI_Barrier(comm);
    std::vector<double> out;
    for (int r = 0; r < reps; ++r) {
        double sum = 0, total = 0;
        for (int i = 0; i < iters; ++i) {
            const double t0 = MPI_Wtime();
            fn();
            sum += MPI_Wtime() - t0;
            MPI_Barrier(comm);
        }
        const double mine = sum / iters;
        MPI_Allreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
        out.push_back(total / P);
    }
    return out;
}

namespace {

// P int counts (allgatherv, reduce_scatter), each within MPI's limit.
std::vector<int> ints(const std::vector<uint64_t>& v, size_t P, const char* what) {
    if (v.size() != P)
        throw Error(std::string("timing: ") + what + " has " + std::to_string(v.size()) + " entries (allowed: one per rank, " +
                    std::to_string(P) + ")");
    std::vector<int> out;
    for (uint64_t x : v) out.push_back(as_int(x, what));
    return out;
}

}  // namespace

void native_collective(Collective c, const void* send, void* recv, const NativeShape& s, MPI_Comm comm) {
    int P = 1;
    MPI_Comm_size(comm, &P);
    const int n = as_int(describe(c).reduction ? s.count : s.bytes,
                         describe(c).mpi_name.data());
    switch (c) {
        case Collective::allgather:
            return check(MPI_Allgather(send, n, MPI_BYTE, recv, n, MPI_BYTE, comm), "MPI_Allgather");
        case Collective::alltoall:
            return check(MPI_Alltoall(send, n, MPI_BYTE, recv, n, MPI_BYTE, comm), "MPI_Alltoall");
        case Collective::allreduce: return check(MPI_Allreduce(send, recv, n, s.type, s.op, comm), "MPI_Allreduce");
        case Collective::barrier: return check(MPI_Barrier(comm), "MPI_Barrier");
        case Collective::bcast: return check(MPI_Bcast(recv, n, MPI_BYTE, s.root, comm), "MPI_Bcast");
        case Collective::gather:
            return check(MPI_Gather(send, n, MPI_BYTE, recv, n, MPI_BYTE, s.root, comm), "MPI_Gather");
        case Collective::scatter:
            return check(MPI_Scatter(send, n, MPI_BYTE, recv, n, MPI_BYTE, s.root, comm), "MPI_Scatter");
        case Collective::reduce: return check(MPI_Reduce(send, recv, n, s.type, s.op, s.root, comm), "MPI_Reduce");
        case Collective::reduce_scatter_block:
            return check(MPI_Reduce_scatter_block(send, recv, n, s.type, s.op, comm), "MPI_Reduce_scatter_block");
        case Collective::reduce_scatter: {
            const std::vector<int> counts = ints(s.counts, static_cast<size_t>(P), "MPI_Reduce_scatter counts");
            return check(MPI_Reduce_scatter(send, recv, counts.data(), s.type, s.op, comm), "MPI_Reduce_scatter");
        }
        case Collective::allgatherv: {
            const std::vector<int> counts = ints(s.counts, static_cast<size_t>(P), "MPI_Allgatherv counts");
            const std::vector<int> displs = ints(s.displs, static_cast<size_t>(P), "MPI_Allgatherv displacements");
            int me = 0;
            MPI_Comm_rank(comm, &me);
            return check(MPI_Allgatherv(send, counts[static_cast<size_t>(me)], MPI_BYTE, recv, counts.data(), displs.data(),
                                        MPI_BYTE, comm), "MPI_Allgatherv");
        }
        case Collective::alltoallv:
            throw Error("timing: no native call for alltoallv here (its counts and displacements: time it from Python)");
    }
    throw Error(std::string("timing: unknown collective ") + to_string(c));
}

void native_collective(Collective c, const void* send, void* recv, uint64_t bytes, uint64_t count, MPI_Datatype type,
                       MPI_Op op, MPI_Comm comm) {
    NativeShape s;
    s.bytes = bytes, s.count = count, s.type = type, s.op = op;
    native_collective(c, send, recv, s, comm);
}

}  // namespace collplan::mpi
