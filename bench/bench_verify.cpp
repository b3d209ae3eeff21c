// bench_verify -- the verifier at scale: CPU time and peak memory of generating and verifying one schedule.
//
// Usage: bench_verify ALGORITHM P [whole|symmetry] [MAX_MEMORY_GIB]
//   whole     generate every rank's program, then verify (verify.hpp)                       (the default)
//   symmetry  verify from rank 0's program, every other rank's compared with rank 0's moved (sweep.hpp:
//             verify_by_symmetry); needs a symmetric allgather, alltoall or barrier
// Prints one line: algorithm, P, mode, ops, result, the CPU seconds of generation and of verification (for
// `symmetry` they are one), and the peak resident set size (getrusage ru_maxrss: the schedule included).
// Built when COLLPLAN_BENCH=ON; writes no files. bench/README.md, "The verifier at scale", has the figures.
#include <sys/resource.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

#include "collplan/algorithms/registry.hpp"
#include "collplan/verify/sweep.hpp"

using namespace collplan;

namespace {

double cpu_s() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

double peak_rss_mib() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return static_cast<double>(ru.ru_maxrss) / 1024.0;  // Linux reports KiB
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s ALGORITHM P [whole|symmetry] [MAX_MEMORY_GIB]\n", argv[0]);
        return 2;
    }
    const std::string name = argv[1], mode = argc > 3 ? argv[3] : "whole";
    const int P = std::atoi(argv[2]);
    Job job;
    if (argc > 4) job.max_memory_bytes = static_cast<uint64_t>(std::atof(argv[4]) * (1ull << 30));
    try {
        const Topology topo = Topology::full(P);
        const Algorithm& a = Registry::get().find(name);
        const VerifyOptions opt = describe(a.collective).reduction ? verify_options_for_op("sum") : VerifyOptions{};
        const double c0 = cpu_s();
        VerifyResult r;
        double gen = 0;
        size_t ops = 0;
        if (mode == "symmetry") {
            r = verify_by_symmetry(name, P, topo, {}, opt, job);
            ops = make_schedule(name, P, topo, {}, {}, 0, job).total_ops() * static_cast<size_t>(P);
        } else if (mode == "whole") {
            const Schedule s = make_schedule(name, P, topo, {}, {}, Schedule::kAllRanks, job);
            gen = cpu_s() - c0;
            ops = s.total_ops();
            r = verify(s, opt, job);
        } else {
            std::fprintf(stderr, "mode '%s' is unknown (allowed: whole, symmetry)\n", mode.c_str());
            return 2;
        }
        const double total = cpu_s() - c0;
        std::printf("%s P=%d %s: %zu ops, %s, generate %.2f s CPU, verify %.2f s CPU, peak RSS %.0f MiB\n",
                    name.c_str(), P, mode.c_str(), ops, r.ok ? "ok" : (r.reason + ": " + r.message).c_str(), gen,
                    total - gen, peak_rss_mib());
        return r.ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::printf("%s P=%d %s: refused: %s (after %.2f s CPU, peak RSS %.0f MiB)\n", name.c_str(), P, mode.c_str(),
                    e.what(), cpu_s(), peak_rss_mib());
        return 1;
    }
}
