// bench_generate -- how long generating a large schedule takes and how much memory it holds.
//
// Usage: bench_generate [P]            (default P = 4096)
//        bench_generate --per-rank [L] (default L = 20)
// Whole schedule:
//   Line 1: generation of alltoall/pairwise for P ranks on full:P -- wall time, total ops, Schedule::memory_bytes(),
//           peak resident set size of the process (getrusage ru_maxrss) measured right after generation.
//   Line 2: to_text of alltoall/pairwise for P = 256 -- wall time and text size.
// --per-rank: what one MPI rank builds (make_schedule with only_rank = P/2 + 1, the runtime's path) for the default
//   algorithm of each collective (collplan.mpi.DEFAULT_ALGORITHMS) and P = 2^10 .. 2^L: a Markdown table of wall
//   time (best of 3), ops and Schedule::memory_bytes(); alltoallv/async (every rank sends to 8 others) only while
//   its P x P count matrix, which the runtime gathers on every call, fits in 1 GiB (P <= 2^13).
// Built when COLLPLAN_BENCH=ON; prints to stdout and writes no files.
#include <sys/resource.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include <algorithm>

#include "collplan/algorithms/registry.hpp"
#include "collplan/schedule/text.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double peak_rss_mib() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return static_cast<double>(ru.ru_maxrss) / 1024.0;  // Linux reports KiB
}

int parse_ranks(int argc, char** argv) {
    if (argc < 2) return 4096;
    int p = 0;
    const char* end = argv[1] + std::strlen(argv[1]);
    auto r = std::from_chars(argv[1], end, p);
    if (r.ec != std::errc() || r.ptr != end || p < 1)
        throw collplan::Error("number of ranks '" + std::string(argv[1]) + "' invalid (allowed: an integer >= 1)");
    return p;
}

void bench_generate(const std::string& name, int P) {
    const auto t0 = Clock::now();
    const collplan::Schedule s = collplan::make_schedule(name, P, collplan::Topology::full(P));
    const double t = seconds_since(t0);
    const double mem = static_cast<double>(s.memory_bytes());
    std::printf("generate %s P=%d: %.3f s, %zu ops, memory_bytes %zu (%.1f MiB), peak RSS %.1f MiB\n", name.c_str(), P,
                t, s.total_ops(), s.memory_bytes(), mem / (1024.0 * 1024.0), peak_rss_mib());
}

void bench_text(const std::string& name, int P) {
    const collplan::Schedule s = collplan::make_schedule(name, P, collplan::Topology::full(P));
    const auto t0 = Clock::now();
    const std::string text = collplan::to_text(s);
    const double t = seconds_since(t0);
    std::printf("to_text %s P=%d: %.3f s, %zu ops, %zu bytes of text\n", name.c_str(), P, t, s.total_ops(),
                text.size());
}

}  // namespace

void bench_per_rank(int max_log2) {
    std::printf("| algorithm | P | ops of one rank | memory_bytes | generation |\n|---|---|---|---|---|\n");
    for (const char* name : {"allgather/ring", "alltoall/pairwise", "allreduce/recursive_doubling",
                             "barrier/dissemination", "alltoallv/async"}) {
        const bool v = std::string(name) == "alltoallv/async";
        for (int l = 10; l <= (v ? std::min(max_log2, 13) : max_log2); ++l) {
            const int P = 1 << l, me = P / 2 + 1;
            std::vector<uint64_t> matrix;
            if (v) {
                matrix.assign(static_cast<size_t>(P) * P, 0);
                for (int i = 0; i < P; ++i)
                    for (int k = 1; k <= 8; ++k) matrix[static_cast<size_t>(i) * P + (i + k * k) % P] = 1;
            }
            double best = 1e30;
            size_t ops = 0, bytes = 0;
            for (int rep = 0; rep < 3; ++rep) {
                const auto t0 = Clock::now();
                const collplan::Schedule s = collplan::make_schedule(name, P, collplan::Topology::full(P), {}, matrix, me);
                best = std::min(best, seconds_since(t0));
                ops = s.num_ops(me);
                bytes = s.memory_bytes();
            }
            std::printf("| %s | 2^%d | %zu | %.1f KiB | %.3f ms |\n", name, l, ops, static_cast<double>(bytes) / 1024.0, best * 1e3);
            std::fflush(stdout);
        }
    }
}

int main(int argc, char** argv) {
    try {
        if (argc >= 2 && std::string(argv[1]) == "--per-rank") {
            bench_per_rank(argc >= 3 ? parse_ranks(argc - 1, argv + 1) : 20);
            return 0;
        }
        const std::string name = "alltoall/pairwise";
        bench_generate(name, parse_ranks(argc, argv));
        bench_text(name, 256);
    } catch (const collplan::Error& e) {
        std::fprintf(stderr, "bench_generate: %s\n", e.what());
        return 2;
    }
    return 0;
}
