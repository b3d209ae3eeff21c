// barrier/dissemination -- the n-way dissemination barrier.
//
// Source:        Hensgen, Finkel, Manber, "Two algorithms for barrier synchronization" (IJPP 1988); End,
//                Yahyapour, Simmendinger, Alrutz, "Adaption of the n-way dissemination algorithm for GASPI
//                split-phase allreduce" (INFOCOMP 2015), sec. III, eq. (1).
// Preconditions: any P >= 1; radix n in 1..64; any topology.
// Rounds:        R = ceil(log_{n+1} P). In round l = 1..R rank p sends a zero-byte message to p + i (n+1)^(l-1)
//                mod P and receives one from p - j (n+1)^(l-1) mod P, i, j = 1..n. When P is small the n peers
//                may repeat or wrap onto p: only distinct peers other than p are used (the same offsets on both
//                sides, so sends and receives still match). Each round is one group.
// Cost:          R alpha with n messages in flight per rank (n ports); R n alpha on a one-port node   [Hockney]
// Memory:        none; in = out = tmp = 0 blocks.
// Example:       P = 5, n = 2: round 1 (offsets 1, 2): rank 0 sends to 1, 2 and receives from 4, 3;
//                round 2 (offsets 3, 6 mod 5 = 1): rank 0 sends to 3, 1 and receives from 2, 4.
#include "collplan/algorithms/registry.hpp"

#include <algorithm>
#include <vector>

namespace collplan {
namespace {

// Distinct nonzero offsets i * d mod P, i = 1..n, in order of i.
std::vector<int> round_offsets(int P, int n, int64_t d) {
    std::vector<int> offs;
    for (int i = 1; i <= n; ++i) {
        const auto off = static_cast<int>((i * d) % P);
        if (off != 0 && std::find(offs.begin(), offs.end(), off) == offs.end()) offs.push_back(off);
    }
    return offs;
}

Schedule generate(const Problem& p) {
    const int P = p.ranks;
    const int n = static_cast<int>(p.params.integer("n"));
    Schedule s(Collective::barrier, P, 0, 0, 0);
    std::vector<std::vector<int>> rounds;
    for (int64_t d = 1; d < P; d *= n + 1) rounds.push_back(round_offsets(P, n, d));
    const std::span<const Segment> none;
    for (int r = 0; r < P; ++r) {
        RankBuilder b(s, r);
        for (const auto& offs : rounds) {
            b.fence();
            for (int off : offs) b.send((r + off) % P, 0, none);
            for (int off : offs) b.recv((r - off + P) % P, 0, none);
        }
    }
    return s;
}

const Registration reg{{
    .name = "barrier/dissemination",
    .collective = Collective::barrier,
    .summary = "ceil(log_{n+1} P) rounds, each rank notifies n peers at distances i (n+1)^(l-1)",
    .source = "Hensgen, Finkel, Manber (IJPP 1988); End et al. (INFOCOMP 2015)",
    .params = {{"n", ParamKind::integer, "1", 1, 64, "radix: messages sent per round"}},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"full"},
    .sweep_params = {{{"n", "1"}}, {{"n", "2"}}, {{"n", "3"}}, {{"n", "4"}}, {{"n", "5"}}, {{"n", "6"}}, {{"n", "7"}}},
}};

}  // namespace
}  // namespace collplan
