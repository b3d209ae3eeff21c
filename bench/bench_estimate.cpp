// The estimate evaluator's walk (not a test): generation, partner matching and one walk per size, each timed.
//   bench_estimate ALGORITHM TOPOLOGY MODEL SIZE... [--threads N] [--one-rank]
// (--one-rank: rank 0's program alone, for an algorithm whose symmetry lets it stand for every rank)
// e.g. bench_estimate bcast/scatter_recursive_doubling_allgather full:65536 \
//          hockney:alpha=1.6us,beta=0.3125ns/B,gamma=0.2ns/B,rho=0.1ns/B 8B 64KiB 1MiB
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "collplan/algorithms/registry.hpp"
#include "collplan/common/units.hpp"
#include "collplan/model/estimate.hpp"

using namespace collplan;

static double cpu_now() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

int main(int argc, char** argv) {
    if (argc < 5) {
        std::fprintf(stderr, "usage: %s ALGORITHM TOPOLOGY MODEL SIZE... [--threads N] [--one-rank]\n", argv[0]);
        return 2;
    }
    int threads = 1, only_rank = Schedule::kAllRanks;
    std::vector<double> sizes;
    for (int i = 4; i < argc; ++i) {
        if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = std::atoi(argv[++i]);
        else if (std::strcmp(argv[i], "--one-rank") == 0) only_rank = 0;
        else sizes.push_back(static_cast<double>(parse_size_bytes(argv[i])));
    }
    try {
        const Topology topo = Topology::parse(argv[2]);
        const auto model = parse_model(argv[3]);
        double c0 = cpu_now();
        const Schedule s = make_schedule(argv[1], topo.nodes(), topo, {}, {}, only_rank);
        double c1 = cpu_now();
        std::printf("%s on %s: %zu ops, generated in %.3f s CPU\n", argv[1], argv[2], s.total_ops(), c1 - c0);
        // each size alone (matching + walk), then all sizes in one call (one matching)
        std::vector<Estimate> alone;
        for (double n : sizes) {
            c0 = cpu_now();
            alone.push_back(estimate(s, topo, *model, n));
            std::printf("%.0f B alone: %.3f s CPU (matching + walk)\n", n, cpu_now() - c0);
        }
        c0 = cpu_now();
        const auto all = estimate(s, topo, *model, sizes, default_job(), threads);
        c1 = cpu_now();
        std::printf("all %zu sizes in one call: %.3f s CPU\n", sizes.size(), c1 - c0);
        for (size_t i = 0; i < sizes.size(); ++i) {
            std::printf("exact: %.0f B: %.17g s (rank %d)\n", sizes[i], all[i].time_s, all[i].critical_rank);
            if (alone[i].time_s != all[i].time_s) std::printf("MISMATCH between the two calls\n");
        }
    } catch (const Error& e) {
        std::fprintf(stderr, "bench_estimate: %s\n", e.what());
        return 2;
    }
    return 0;
}
