// MPI benchmarks of the runtime (not tests; results recorded in bench/mpi/README.md). Run under mpirun:
//
//   bench_mpi_<abi> compare  COLLECTIVE [max_bytes]   OSU-style: every applicable algorithm vs the MPI library's
//                                                     own collective, 8 B .. max_bytes (x4 steps), in one run
//   bench_mpi_<abi> overhead [max_bytes]              executor vs hand-written MPI code of the same algorithm
//                                                     (allgather ring, allreduce recursive doubling)
//   bench_mpi_<abi> noncontig [max_bytes]             packing vs hindexed datatypes for non-contiguous messages
//
// Time per call = mean over the iterations of the slowest rank (MPI_MAX of each rank's mean), after a warm-up;
// the best of three such repetitions (the machine these were recorded on is shared).
// Sizes as in collplan: allgather bytes per rank, alltoall bytes per destination, allreduce the vector (doubles).
#include <mpi.h>

#include <cstdio>
#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "collplan/algorithms/registry.hpp"
#include "collplan/runtime/mpi/collectives.hpp"
#include "collplan/measure/timing.hpp"

using namespace collplan;
using namespace collplan::mpi;

namespace {

int P = 1, me = 0;

// Fewer iterations when the ranks oversubscribe the cores (every message then waits for a context switch).
int iterations(uint64_t bytes) {
    const int n = bytes <= 8192 ? 1000 : bytes <= 131072 ? 100 : 20;
    return P > static_cast<int>(std::thread::hardware_concurrency()) ? std::max(3, n / 20) : n;
}

// The machine is shared: the best of three repetitions (each: mean over the iterations, slowest rank).
double time_it(const std::function<void()>& fn, uint64_t bytes) {
    const int iters = iterations(bytes);
    const std::vector<double> reps = time_calls(MPI_COMM_WORLD, fn, iters, std::max(3, iters / 10), 3);
    return *std::min_element(reps.begin(), reps.end());
}

std::vector<uint64_t> sizes(uint64_t max_bytes) {
    std::vector<uint64_t> s;
    for (uint64_t n = 8; n <= max_bytes; n *= 4) s.push_back(n);
    if (s.back() != max_bytes) s.push_back(max_bytes);
    return s;
}

struct Bufs {
    std::vector<char> send, recv;
};

Bufs buffers(Collective c, uint64_t n) {
    Bufs b;
    const size_t in = c == Collective::allgather ? n : c == Collective::alltoall ? n * P : n;
    const size_t out = c == Collective::allreduce ? n : n * P;
    b.send.assign(in, 1);
    b.recv.assign(out, 0);
    return b;
}

std::unique_ptr<Request> make(Collective c, const std::string& alg, Bufs& b, uint64_t n,
                              Noncontig mode = Noncontig::automatic) {
    const Choice ch{alg, {}, mode};
    if (c == Collective::allreduce)
        return reduction_init(c, b.send.data(), b.recv.data(), n / 8, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, ch);
    if (c == Collective::barrier) return barrier_init(MPI_COMM_WORLD, ch);
    return bytes_init(c, b.send.data(), b.recv.data(), n, 0, MPI_COMM_WORLD, ch);  // allgather, alltoall
}

void native(Collective c, Bufs& b, uint64_t n) {
    native_collective(c, b.send.data(), b.recv.data(), n, n / 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

bool runtime_schedule_ok(const std::string& name, Collective c) {
    try {
        runtime_schedule(c, P, Choice{name, {}, Noncontig::automatic});
        return true;
    } catch (const Error&) {
        return false;
    }
}

void compare(Collective c, uint64_t max_bytes) {
    std::vector<std::string> algs;
    for (const Algorithm* a : Registry::get().for_collective(c))
        if (runtime_schedule_ok(a->name, c)) algs.push_back(a->name);
    if (me == 0) {
        std::printf("| size | native | best collplan | best/native |");
        for (const auto& a : algs) std::printf(" %s |", a.c_str());
        std::printf("\n|---:|---:|---|---:|");
        for (size_t i = 0; i < algs.size(); ++i) std::printf("---:|");
        std::printf("\n");
    }
    for (uint64_t n : c == Collective::barrier ? std::vector<uint64_t>{0} : sizes(max_bytes)) {
        Bufs b = buffers(c, n);
        const double tn = time_it([&] { native(c, b, n); }, n);
        std::vector<double> t;
        for (const auto& a : algs) {
            auto req = make(c, a, b, n);
            t.push_back(time_it([&] { req->start(); req->wait(); }, n));
        }
        size_t best = 0;
        for (size_t i = 1; i < t.size(); ++i)
            if (t[i] < t[best]) best = i;
        if (me != 0) continue;
        std::printf("| %llu | %.2f | %s | %.2f |", static_cast<unsigned long long>(n), tn * 1e6, algs[best].c_str(), t[best] / tn);
        for (double x : t) std::printf(" %.2f |", x * 1e6);
        std::printf("\n");
        std::fflush(stdout);
    }
}

// Hand-written equivalents of two schedules (same messages, same order, same waits).
void ring_allgather(const char* in, char* out, uint64_t n) {
    std::memcpy(out + me * n, in, n);
    const int right = (me + 1) % P, left = (me - 1 + P) % P;
    for (int k = 0; k < P - 1; ++k) {
        const int sb = (me - k + P) % P, rb = (me - k - 1 + 2 * P) % P;
        MPI_Request r[2];
        MPI_Isend(out + sb * n, static_cast<int>(n), MPI_BYTE, right, 0, MPI_COMM_WORLD, &r[0]);
        MPI_Irecv(out + rb * n, static_cast<int>(n), MPI_BYTE, left, 0, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    }
}

void recursive_doubling_allreduce(const double* in, double* out, double* tmp, int count) {  // P = 2^k
    std::memcpy(out, in, sizeof(double) * count);
    for (int mask = 1; mask < P; mask <<= 1) {
        MPI_Request r[2];
        MPI_Isend(out, count, MPI_DOUBLE, me ^ mask, 0, MPI_COMM_WORLD, &r[0]);
        MPI_Irecv(tmp, count, MPI_DOUBLE, me ^ mask, 0, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        MPI_Reduce_local(tmp, out, count, MPI_DOUBLE, MPI_SUM);
    }
}

void overhead(uint64_t max_bytes) {
    const bool pow2 = (P & (P - 1)) == 0;
    if (me == 0) std::printf("| size | ring allgather: hand-written | collplan | overhead | recursive-doubling allreduce: hand-written | collplan | overhead |\n|---:|---:|---:|---:|---:|---:|---:|\n");
    for (uint64_t n : sizes(max_bytes)) {
        Bufs g = buffers(Collective::allgather, n), r = buffers(Collective::allreduce, n);
        std::vector<double> tmp(n / 8 + 1);
        const double th = time_it([&] { ring_allgather(g.send.data(), g.recv.data(), n); }, n);
        auto rq = make(Collective::allgather, "allgather/ring", g, n);
        const double tc = time_it([&] { rq->start(); rq->wait(); }, n);
        double rh = 0, rc = 0;
        if (pow2) {
            auto* in = reinterpret_cast<double*>(r.send.data());
            auto* out = reinterpret_cast<double*>(r.recv.data());
            rh = time_it([&] { recursive_doubling_allreduce(in, out, tmp.data(), static_cast<int>(n / 8)); }, n);
            auto rr = make(Collective::allreduce, "allreduce/recursive_doubling", r, n);
            rc = time_it([&] { rr->start(); rr->wait(); }, n);
        }
        if (me != 0) continue;
        std::printf("| %llu | %.2f | %.2f | %+.1f%% |", static_cast<unsigned long long>(n), th * 1e6, tc * 1e6, (tc / th - 1) * 100);
        if (pow2) std::printf(" %.2f | %.2f | %+.1f%% |\n", rh * 1e6, rc * 1e6, (rc / rh - 1) * 100);
        else std::printf(" - | - | - |\n");
        std::fflush(stdout);
    }
}

// Non-contiguous messages: alltoall/bruck sends the blocks whose index has bit k set -- several chunks per
// message -- packed through a staging buffer or described by an hindexed datatype.
void noncontig(uint64_t max_bytes) {
    if (me == 0) std::printf("| size | alltoall/bruck, pack | datatype | datatype/pack |\n|---:|---:|---:|---:|\n");
    for (uint64_t n : sizes(max_bytes)) {
        Bufs b = buffers(Collective::alltoall, n);
        auto rp = make(Collective::alltoall, "alltoall/bruck", b, n, Noncontig::pack);
        auto rd = make(Collective::alltoall, "alltoall/bruck", b, n, Noncontig::datatype);
        const double tp = time_it([&] { rp->start(); rp->wait(); }, n);
        const double td = time_it([&] { rd->start(); rd->wait(); }, n);
        if (me == 0) std::printf("| %llu | %.2f | %.2f | %.2f |\n", static_cast<unsigned long long>(n), tp * 1e6, td * 1e6, td / tp);
        std::fflush(stdout);
    }
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const std::string what = argc > 1 ? argv[1] : "";
    int rc = 0;
    try {
        if (what == "compare" && argc > 2) {
            compare(parse_collective(argv[2]), argc > 3 ? std::stoull(argv[3]) : (1u << 20));
        } else if (what == "noncontig") {
            noncontig(argc > 2 ? std::stoull(argv[2]) : (1u << 20));
        } else if (what == "overhead") {
            overhead(argc > 2 ? std::stoull(argv[2]) : (1u << 20));
        } else {
            if (me == 0) std::fprintf(stderr, "usage: bench_mpi compare COLLECTIVE [max_bytes] | overhead [max_bytes] | noncontig [max_bytes]\n");
            rc = 2;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_mpi: %s\n", e.what());
        rc = 1;
    }
    MPI_Finalize();
    return rc;
}
