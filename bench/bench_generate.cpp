// bench_generate -- how long generating a large schedule takes and how much memory it holds.
//
// Usage: bench_generate [P]   (default P = 4096)
// Line 1: generation of alltoall/pairwise for P ranks on full:P -- wall time, total ops, Schedule::memory_bytes(),
//         peak resident set size of the process (getrusage ru_maxrss) measured right after generation.
// Line 2: to_text of alltoall/pairwise for P = 256 -- wall time and text size.
// Built when COLLPLAN_BENCH=ON; prints to stdout and writes no files.
#include <sys/resource.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

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

int main(int argc, char** argv) {
    try {
        const std::string name = "alltoall/pairwise";
        bench_generate(name, parse_ranks(argc, argv));
        bench_text(name, 256);
    } catch (const collplan::Error& e) {
        std::fprintf(stderr, "bench_generate: %s\n", e.what());
        return 2;
    }
    return 0;
}
