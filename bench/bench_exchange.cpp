// bench_exchange -- the complete-exchange family at scale: generation, verification and memory of Direct,
// Standard and Multiphase exchange on hypercube:10 (P = 1024), A2AT on torus:16x16 and torus:64x64 (P = 4096,
// generation only), and the speed of the multiphase optimiser.
//
// Usage: bench_exchange          (built when COLLPLAN_BENCH=ON; prints to stdout, writes no files)
// Each line: what, total ops, Schedule::memory_bytes(), generation and verification wall times.
#include <chrono>
#include <cstdio>
#include <map>
#include <string>

#include "collplan/algorithms/registry.hpp"
#include "collplan/model/link_load.hpp"
#include "collplan/algorithms/alltoall/multiphase_opt.hpp"
#include "collplan/verify/verify.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void run(const std::string& alg, const std::string& topo, const std::map<std::string, std::string>& params,
         bool check) {
    const collplan::Topology t = collplan::Topology::parse(topo);
    const auto t0 = Clock::now();
    const collplan::Schedule s = collplan::make_schedule(alg, t.nodes(), t, params);
    const double gen = seconds_since(t0);
    double ver = -1;
    bool ok = true;
    if (check) {
        const auto t1 = Clock::now();
        ok = collplan::verify(s).ok;
        ver = seconds_since(t1);
    }
    const auto t2 = Clock::now();
    const uint64_t busiest = collplan::link_loads(s, t).max_units;
    const double loads = seconds_since(t2);
    std::printf("%-28s %-14s %-16s ops %10zu  mem %8.1f MiB  generate %6.3f s  verify %s  link loads %6.3f s "
                "(busiest %llu)\n",
                alg.c_str(), topo.c_str(), params.empty() ? "-" : params.begin()->second.c_str(), s.total_ops(),
                static_cast<double>(s.memory_bytes()) / (1 << 20), gen,
                check ? (std::to_string(ver).substr(0, 6) + " s" + (ok ? "" : " FAILED")).c_str() : "-", loads,
                static_cast<unsigned long long>(busiest));
}

}  // namespace

int main() {
    try {
        run("alltoall/direct_exchange", "hypercube:10", {}, true);
        run("alltoall/standard_exchange", "hypercube:10", {}, true);
        run("alltoall/multiphase", "hypercube:10", {{"partition", "5,5"}}, true);
        run("alltoall/multiphase", "hypercube:10", {{"partition", "3,3,4"}}, true);
        run("alltoall/a2at", "torus:16x16", {}, true);
        run("alltoall/a2at", "torus:64x64", {}, false);
        const auto t0 = Clock::now();
        size_t entries = 0;
        for (int rep = 0; rep < 100; ++rep)
            for (int d = 1; d <= 62; ++d) entries += collplan::threshold_table(collplan::ipsc860_costs(d), d).size();
        std::printf("threshold_table for d = 1..62, 100 times: %.3f s (%zu entries)\n", seconds_since(t0), entries);
        const auto t1 = Clock::now();
        int evaluations = 0;
        for (int i = 0; i < 100000; ++i)
            evaluations += collplan::optimal_partition(collplan::ipsc860_costs(20), 20, 1 + i % 1000).evaluations;
        std::printf("optimal_partition d = 20, 100000 sizes: %.3f s (%.2f evaluations each)\n", seconds_since(t1),
                    evaluations / 100000.0);
    } catch (const collplan::Error& e) {
        std::fprintf(stderr, "bench_exchange: %s\n", e.what());
        return 2;
    }
    return 0;
}
