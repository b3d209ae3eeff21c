// alltoallv/linear_permutation -- LP: in step k every rank exchanges with a fixed partner, k = 1..P-1.
//
// Source:        Wang, Lin, Ranka, "Distributed scheduling of unstructured collective communication on the
//                CM-5" (1993), sec. 3.2, Fig. 3 (Linear_Permutation).
// Preconditions: any P >= 1; a P x P communication matrix; any topology.
// Rounds:        P - 1 phases. P = 2^q: in phase k rank i exchanges with i XOR k (a pairwise exchange, the
//                paper's scheme). P not a power of two (the paper only says it "can easily be extended"): in
//                phase k rank i sends to (i + k) mod P and receives from (i - k) mod P -- still one send and one
//                receive per rank per phase (a permutation), P - 1 phases. (XOR partners over the next power of
//                two would also be correct but need up to 2P - 3 phases, most of them half idle.) A rank sends
//                only where COM(i, j) > 0 and receives only where COM(j, i) > 0; it skips phases with neither.
// Cost:          sum over phases k of the largest message of phase k (alpha + m_k beta); scheduling cost
//                O(P) per rank (the partner of each step).
// Memory:        no scratch.
// Example:       P = 4, phase 1 pairs (0,1),(2,3); phase 2 (0,2),(1,3); phase 3 (0,3),(1,2).
#include "collplan/algorithms/alltoallv/unstructured_common.hpp"

namespace collplan {

namespace {

bool is_power_of_two(int P) { return (P & (P - 1)) == 0; }
// Rank i's destination in phase k (its source in phase k is the rank whose destination it is).
int destination(int P, bool pow2, int i, int k) { return pow2 ? i ^ k : (i + k) % P; }
int source(int P, bool pow2, int i, int k) { return pow2 ? i ^ k : (i - k + P) % P; }

// The schedule of plan_linear_permutation, built rank by rank: O(P) per rank instead of the whole plan.
Schedule generate(const Problem& p) {
    const int P = p.ranks;
    const bool pow2 = is_power_of_two(P);
    const auto at = [&](int i, int j) { return p.counts[static_cast<size_t>(i) * P + j]; };
    Schedule s(Collective::alltoallv, P, static_cast<uint32_t>(P), static_cast<uint32_t>(P), 0, p.only_rank);
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        alltoallv::copy_diagonal(b, p, r);
        for (int k = 1; k < P; ++k) {
            const int to = destination(P, pow2, r, k), from = source(P, pow2, r, k);
            const uint64_t send = at(r, to), recv = at(from, r);
            if (!send && !recv) continue;
            b.fence();
            const Segment data(Buf::in, static_cast<uint32_t>(to), 1), into(Buf::out, static_cast<uint32_t>(from), 1);
            const auto receive = [&] {
                if (recv) b.recv(from, 0, std::span(&into, 1), {}, recv);
            };
            // phased_schedule's order: a phase lists its transfers by source rank, from's before r's or after
            if (from < r) receive();
            if (send) b.send(to, 0, std::span(&data, 1), {}, send);
            if (from > r) receive();
        }
    }
    return s;
}

}  // namespace

alltoallv::PhasePlan alltoallv::plan_linear_permutation(std::span<const uint64_t> m, int P) {
    if (std::string why = check_matrix(m, P); !why.empty()) throw Error(why);
    const bool pow2 = is_power_of_two(P);
    PhasePlan plan;
    plan.work = static_cast<uint64_t>(P > 1 ? P - 1 : 0);  // one partner computation per step and rank
    for (int k = 1; k < P; ++k) {
        Phase phase;
        for (int i = 0; i < P; ++i) {
            const int j = destination(P, pow2, i, k);
            if (const uint64_t u = m[static_cast<size_t>(i) * P + j]) phase.push_back({i, j, u});
        }
        plan.phases.push_back(std::move(phase));
    }
    return plan;
}

namespace {

const Registration reg{{
    .name = "alltoallv/linear_permutation",
    .collective = Collective::alltoallv,
    .summary = "LP: P-1 fixed permutations, partner i XOR k (P = 2^q) or i+k / i-k",
    .source = "Wang, Lin, Ranka, Distributed scheduling of unstructured collective communication on the CM-5 (1993), sec. 3.2",
    .params = {},
    .applies = alltoallv::applies_matrix,
    .generate = generate,
}};

}  // namespace
}  // namespace collplan
