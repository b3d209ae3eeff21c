// See timing.hpp.
#include "collplan/runtime/mpi/timing.hpp"

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

void native_collective(Collective c, const void* send, void* recv, uint64_t bytes, uint64_t count, MPI_Datatype type,
                       MPI_Op op, MPI_Comm comm) {
    switch (c) {
        case Collective::allgather: {
            const int n = as_int(bytes, "allgather message");
            return check(MPI_Allgather(send, n, MPI_BYTE, recv, n, MPI_BYTE, comm), "MPI_Allgather");
        }
        case Collective::alltoall: {
            const int n = as_int(bytes, "alltoall message");
            return check(MPI_Alltoall(send, n, MPI_BYTE, recv, n, MPI_BYTE, comm), "MPI_Alltoall");
        }
        case Collective::allreduce:
            return check(MPI_Allreduce(send, recv, as_int(count, "allreduce count"), type, op, comm), "MPI_Allreduce");
        case Collective::barrier: return check(MPI_Barrier(comm), "MPI_Barrier");
        default: throw Error(std::string("timing: no native call for ") + to_string(c) + " (allowed: allgather, alltoall, allreduce, barrier)");
    }
}

}  // namespace collplan::mpi
