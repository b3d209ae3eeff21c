// barrier/dissemination -- the n-way dissemination barrier, with the adapted last round.
//
// Source:        Hensgen, Finkel, Manber, "Two algorithms for barrier synchronization" (IJPP 1988); Hoefler,
//                Mehlan, Mietke, Rehm, "Fast barrier synchronization for InfiniBand" (IPDPS 2006); End,
//                Yahyapour, Simmendinger, Alrutz, "Adaption of the n-way dissemination algorithm for GASPI
//                split-phase allreduce" (INFOCOMP 2015), sec. III eq. (1) and sec. V (the adaption of the last
//                round also speeds up the barrier).
// Preconditions: any P >= 1; radix n in 1..64; any topology.
// Rounds:        k = ceil(log_{n+1} P). In round l = 1..k rank p sends a zero-byte message to p + i (n+1)^(l-1)
//                mod P and receives one from p - j (n+1)^(l-1) mod P, i, j = 1..n (eq. 1). When P is small the
//                n peers may repeat or wrap onto p: only distinct peers other than p are used (the same offsets
//                on both sides, so sends and receives still match). adapt=1 (default): after k - 1 rounds p has
//                heard (transitively) from its W = (n+1)^(k-1) left-hand neighbours, so the last round needs only
//                the ceil((P - W) / W) senders p - W, p - 2W, ... (P = 10, n = 2: one message instead of two);
//                adapt=0 sends all n. Each round is one group.
// Cost:          sum over rounds of (ceil(m_l / ports) - 1) g' + T(0), m_l = n except the adapted last round
//                [T, g' the zero-byte message time and port occupancy; k alpha with n ports under Hockney]
// Memory:        none; in = out = tmp = 0 blocks.
// Example:       P = 5, n = 2: round 1 (offsets 1, 2): rank 0 sends to 1, 2 and receives from 4, 3;
//                round 2 (W = 3, ceil(2/3) = 1 message, offset 3): rank 0 sends to 3 and receives from 2.
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
    Schedule s(Collective::barrier, P, 0, 0, 0, p.only_rank);
    std::vector<std::vector<int>> rounds;
    int64_t d = 1;
    for (; d * (n + 1) < P; d *= n + 1) rounds.push_back(round_offsets(P, n, d));
    if (d < P) {  // the last round; d = W
        const auto needed = static_cast<int>((P - d + d - 1) / d);
        rounds.push_back(round_offsets(P, p.params.integer("adapt") ? std::min(n, needed) : n, d));
    }
    const std::span<const Segment> none;
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        for (const auto& offs : rounds) {
            b.fence();
            for (int off : offs) b.send((r + off) % P, 0, none);
            for (int off : offs) b.recv((r - off + P) % P, 0, none);
        }
    }
    return s;
}

std::vector<std::map<std::string, std::string>> sweep() {
    std::vector<std::map<std::string, std::string>> out;
    for (const char* adapt : {"1", "0"})
        for (int n = 1; n <= 7; ++n) out.push_back({{"n", std::to_string(n)}, {"adapt", adapt}});
    return out;
}

const Registration reg{{
    .name = "barrier/dissemination",
    .collective = Collective::barrier,
    .summary = "ceil(log_{n+1} P) rounds, each rank notifies n peers at distances i (n+1)^(l-1)",
    .source = "Hensgen, Finkel, Manber (IJPP 1988); End et al. (INFOCOMP 2015)",
    .params = {{"n", ParamKind::integer, "1", 1, 64, "radix: messages sent per round"},
               {"adapt", ParamKind::integer, "1", 0, 1, "1: the last round sends only ceil((P - W) / W) messages"}},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"full"},
    .sweep_params = sweep(),
    .candidates = [](const CandidateQuery& q) { return range_candidates("n", 1, std::clamp(q.ranks - 1, 1, 7)); },
    .mpi_default = true,
    .symmetry = cyclic_symmetry,
}};

}  // namespace
}  // namespace collplan
