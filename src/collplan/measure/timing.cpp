// See timing.hpp.
#include "collplan/measure/timing.hpp"

#include <climits>
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

// P int counts (allgatherv, reduce_scatter), each within MPI's limit; `what` names them in an error ("MPI_Allgatherv
// counts"), built only then (this runs inside the timed loop).
std::vector<int> ints(const std::vector<uint64_t>& v, size_t P, const char* fn, const char* what) {
    if (v.size() != P)
        throw Error(std::string("timing: ") + fn + " " + what + " has " + std::to_string(v.size()) +
                    " entries (allowed: one per rank, " + std::to_string(P) + ")");
    std::vector<int> out;
    for (uint64_t x : v) out.push_back(x <= INT_MAX ? static_cast<int>(x) : as_int(x, (std::string(fn) + " " + what).c_str()));
    return out;
}

// One call of the MPI library's collective `fn` per argument shape of runtime/mpi/collectives.def (the overload is
// picked by fn's signature): bytes of MPI_BYTE, or count elements of s.type with s.op; n is that number.
struct Native {
    const void* send;
    void* recv;
    const NativeShape& s;
    MPI_Comm comm;
    int n;
    const char* name;

    int size() const {
        int P = 1;
        MPI_Comm_size(comm, &P);
        return P;
    }
    // bytes: allgather, alltoall
    void operator()(int (*fn)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm)) const {
        check(fn(send, n, MPI_BYTE, recv, n, MPI_BYTE, comm), name);
    }
    // bytes_root: gather, scatter
    void operator()(int (*fn)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm)) const {
        check(fn(send, n, MPI_BYTE, recv, n, MPI_BYTE, s.root, comm), name);
    }
    // bcast
    void operator()(int (*fn)(void*, int, MPI_Datatype, int, MPI_Comm)) const {
        check(fn(recv, n, MPI_BYTE, s.root, comm), name);
    }
    // reduction: allreduce, reduce_scatter_block
    void operator()(int (*fn)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm)) const {
        check(fn(send, recv, n, s.type, s.op, comm), name);
    }
    // reduction_root: reduce
    void operator()(int (*fn)(const void*, void*, int, MPI_Datatype, MPI_Op, int, MPI_Comm)) const {
        check(fn(send, recv, n, s.type, s.op, s.root, comm), name);
    }
    // reduce_scatter: P counts of elements
    void operator()(int (*fn)(const void*, void*, const int[], MPI_Datatype, MPI_Op, MPI_Comm)) const {
        const std::vector<int> counts = ints(s.counts, static_cast<size_t>(size()), name, "counts");
        check(fn(send, recv, counts.data(), s.type, s.op, comm), name);
    }
    // allgatherv: P counts and displacements in bytes
    void operator()(int (*fn)(const void*, int, MPI_Datatype, void*, const int[], const int[], MPI_Datatype,
                              MPI_Comm)) const {
        const size_t P = static_cast<size_t>(size());
        const std::vector<int> counts = ints(s.counts, P, name, "counts"), displs = ints(s.displs, P, name, "displacements");
        int me = 0;
        MPI_Comm_rank(comm, &me);
        check(fn(send, counts[static_cast<size_t>(me)], MPI_BYTE, recv, counts.data(), displs.data(), MPI_BYTE, comm),
              name);
    }
    // alltoallv
    void operator()(int (*)(const void*, const int[], const int[], MPI_Datatype, void*, const int[], const int[],
                            MPI_Datatype, MPI_Comm)) const {
        throw Error("timing: no native call for alltoallv here (its counts and displacements: time it from Python)");
    }
    // barrier
    void operator()(int (*fn)(MPI_Comm)) const { check(fn(comm), name); }
};

}  // namespace

void native_collective(Collective c, const void* send, void* recv, const NativeShape& s, MPI_Comm comm) {
    const CollectiveInfo& info = describe(c);
    const Native call{send, recv, s, comm, as_int(info.reduction ? s.count : s.bytes, info.mpi_name.data()),
                      info.mpi_name.data()};
    switch (c) {
#define X(id, Spelling, args) \
    case Collective::id: return call(MPI_##Spelling);
#include "collplan/runtime/mpi/collectives.def"
#undef X
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
