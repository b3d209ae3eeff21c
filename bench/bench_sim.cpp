// Simulator benchmarks (not tests): wall time, events and peak memory of one simulation.
//   bench_sim FIDELITY ALGORITHM TOPOLOGY SIZE [NETWORK-SPEC] [MODEL-SPEC] [PARAMS]
// e.g. bench_sim packet alltoall/a2at torus:8x8 1MiB
//      bench_sim packet alltoall/a2at torus:8x8 1MiB "...,pacing=load,arbitration=fcfs" "" sync=barrier
//      bench_sim loggp allreduce/recursive_doubling full:65536 1MiB
// Prints the generation and simulation times separately; run under /usr/bin/time -v for the peak RSS.
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "collplan/algorithms/registry.hpp"
#include "collplan/common/units.hpp"
#include "collplan/sim/simulate.hpp"

using namespace collplan;

// A digest of the per-rank times and per-link statistics, to check that two builds give identical results.
static uint64_t digest(const sim::SimResult& r) {
    uint64_t h = 1469598103934665603ull;
    auto mix = [&](double x) {
        uint64_t v;
        std::memcpy(&v, &x, sizeof v);
        h = (h ^ v) * 1099511628211ull;
    };
    for (double x : r.rank_time_s) mix(x);
    for (double x : r.link_busy_s) mix(x);
    for (uint64_t x : r.link_bytes) mix(static_cast<double>(x));
    mix(static_cast<double>(r.messages));
    mix(static_cast<double>(r.packets));
    return h;
}

int main(int argc, char** argv) {
    if (argc < 5) {
        std::fprintf(stderr, "usage: %s FIDELITY ALGORITHM TOPOLOGY SIZE [NETWORK] [MODEL] [PARAMS k=v,...]\n", argv[0]);
        return 2;
    }
    const std::string a2at_net = "ports=4,mtu=2KiB,header=32B,flit=16B,link_bw=4GB/s,link_latency=10ns,"
                                 "router_latency=16ns,buffer=8KiB,vcs=2,overhead=200ns";
    const std::string net = argc > 5 ? argv[5] : a2at_net;
    const std::string model = argc > 6 && argv[6][0] ? argv[6] : "hockney:alpha=200ns,beta=0.25ns/B,ports=4";
    std::map<std::string, std::string> params;  // the algorithm's parameters, "k=v,k=v"
    for (std::string rest = argc > 7 ? argv[7] : ""; !rest.empty();) {
        const size_t comma = std::min(rest.find(','), rest.size()), eq = rest.find('=');
        if (eq < comma) params[rest.substr(0, eq)] = rest.substr(eq + 1, comma - eq - 1);
        rest.erase(0, std::min(comma + 1, rest.size()));
    }
    try {
        const Topology topo = Topology::parse(argv[3]);
        auto t0 = std::chrono::steady_clock::now();
        const Schedule s = make_schedule(argv[2], topo.nodes(), topo, params);
        auto t1 = std::chrono::steady_clock::now();
        const std::clock_t c1 = std::clock();
        sim::SimOptions opt;
        opt.fidelity = sim::parse_fidelity(argv[1]);
        opt.size_bytes = static_cast<double>(parse_size_bytes(argv[4]));
        const sim::SimResult r = sim::simulate(s, topo, *parse_model(model), sim::parse_net_params(net), opt);
        auto t2 = std::chrono::steady_clock::now();
        const double cpu = static_cast<double>(std::clock() - c1) / CLOCKS_PER_SEC;
        const double gen = std::chrono::duration<double>(t1 - t0).count(), run = std::chrono::duration<double>(t2 - t1).count();
        std::printf("%s %s on %s, %s: simulated %.6g s; %zu ops, schedule %.1f MiB generated in %.3f s; simulation %.3f s "
                    "wall, %.3f s CPU, %llu events (%.3g events per CPU second), %llu messages, %llu packets, "
                    "state %.1f MiB\n",
                    argv[1], argv[2], argv[3], argv[4], r.time_s, s.total_ops(), s.memory_bytes() / 1048576.0, gen, run, cpu,
                    static_cast<unsigned long long>(r.events), static_cast<double>(r.events) / cpu,
                    static_cast<unsigned long long>(r.messages), static_cast<unsigned long long>(r.packets),
                    r.state_bytes / 1048576.0);
        std::printf("exact: time %.15g s, results digest %016llx\n", r.time_s, static_cast<unsigned long long>(digest(r)));
    } catch (const Error& e) {
        std::fprintf(stderr, "bench_sim: %s\n", e.what());
        return 2;
    }
    return 0;
}
