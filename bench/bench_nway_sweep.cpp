// The full correctness sweep of the n-way dissemination family: allreduce/nway_dissemination for every P in 1..Pmax and n in 1..7,
// with each take-out (keep, inverse, none), verified exactly-once with a sum by the symbolic verifier. Also counts
// the P without a 5-tuple per n and the most last-round messages the fallback needs.
//   build/bench/bench_nway_sweep [Pmax=1024]
// Exit code 1 if any case fails. Results are recorded in bench/README.md.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "collplan/algorithms/allreduce/nway_common.hpp"
#include "collplan/algorithms/registry.hpp"
#include "collplan/verify/verify.hpp"

using namespace collplan;

int main(int argc, char** argv) {
    const int pmax = argc > 1 ? std::atoi(argv[1]) : 1024;
    const auto t0 = std::chrono::steady_clock::now();
    long cases = 0, failed = 0;
    std::printf("%-8s %2s %9s %9s %14s %14s %9s\n", "takeout", "n", "cases", "no-tuple", "max-msgs-last",
                "over-n (P)", "seconds");
    for (const char* t : {"keep", "inverse", "none"}) {
        for (int n = 1; n <= 7; ++n) {
            const auto t1 = std::chrono::steady_clock::now();
            int no_tuple = 0, max_msgs = 0, over_n = 0;
            for (int P = 1; P <= pmax; ++P) {
                const Schedule s = make_schedule("allreduce/nway_dissemination", P, Topology::full(P),
                                                 {{"n", std::to_string(n)}, {"takeout", t}});
                const VerifyResult v = verify(s, verify_options_for_op("sum"));
                ++cases;
                if (!v.ok) {
                    ++failed;
                    std::printf("FAILED P=%d n=%d takeout=%s: %s: %s\n", P, n, t, v.reason.c_str(), v.message.c_str());
                }
                const nway::Plan plan = nway::make_plan(P, n, nway::parse_takeout(t));
                if (P > 1 && !plan.tuple) ++no_tuple;
                const int m = static_cast<int>(plan.last.prefix.size());
                max_msgs = std::max(max_msgs, m);
                over_n += m > n;
            }
            const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
            std::printf("%-8s %2d %9d %9d %14d %14d %9.2f\n", t, n, pmax, no_tuple, max_msgs, over_n, sec);
            std::fflush(stdout);
        }
    }
    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%ld cases, %ld failed, %.1f s\n", cases, failed, total);
    return failed ? 1 : 0;
}
