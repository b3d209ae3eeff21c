// allreduce/nway_dissemination_plain -- the unadapted n-way dissemination allreduce (idempotent operations only).
//
// Source:        End, Yahyapour, Simmendinger, Alrutz, "Adaption of the n-way dissemination algorithm for GASPI
//                split-phase allreduce" (INFOCOMP 2015), sec. III, eq. (1)-(2) and Table I; Hoefler et al.,
//                "Fast barrier synchronization for InfiniBand" (IPDPS 2006).
// Preconditions: any P >= 1; radix n = 1..64; any topology; idempotent and commutative operation (max, min,
//                band, bor): unless W = (n+1)^(k-1) divides P, every rank combines more than P contributions
//                (eq. 4), some of them twice -- Schedule::idempotent_only. The verifier rejects it for sum (e.g.
//                P = 8, n = 2: S_0^2 = (x0 x7 x6)(x5 x4 x3)(x2 x1 x0), eq. 3). (When W divides P the repeated
//                and wrapped offsets are dropped and the result is exact: Theorem 1's case 3.)
// Rounds:        k = ceil(log_{n+1} P). Round l = 1..k: rank p sends its partial result S_p^(l-1) to
//                p + j (n+1)^(l-1) and combines the n it receives from p - j (n+1)^(l-1), j = 1..n (eq. 2);
//                offsets that repeat or wrap onto p mod P (P < (n+1)^l) are used once / not at all.
// Cost:          k [ (ceil(n / ports) - 1) g' + T(n_bytes) + n n_bytes gamma ]   (T, g' as in nway_dissemination)
// Memory:        tmp of n blocks (the received partial results); one segment: in = out = 1 block.
// Example:       P = 9, n = 2: rank 0 gets x8, x7 (S_0^1 = x0 x8 x7), then S_6^1, S_3^1: every x once.
//                P = 8: S_0^2 = S_0^1 S_5^1 S_2^1 holds x0 twice.
// Consistency:   not rank-consistent, and no variant is: each rank's windows start at itself (S_0^1 = x0 x8 x7,
//                S_1^1 = x1 x0 x8); allreduce/nway_dissemination forward=contributions is the consistent one.
#include <algorithm>

#include "collplan/algorithms/allreduce/nway_common.hpp"
#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

const Registration reg{{
    .name = "allreduce/nway_dissemination_plain",
    .collective = Collective::allreduce,
    .summary = "unadapted n-way dissemination: ceil(log_{n+1} P) rounds, may count twice (idempotent ops only)",
    .source = "End, Yahyapour, Simmendinger, Alrutz (INFOCOMP 2015), sec. III; Hoefler et al. (IPDPS 2006)",
    .params = {{"n", ParamKind::integer, "2", 1, 64, "radix: messages per round"}},
    .applies = [](const Problem&) { return std::string(); },
    .generate = [](const Problem& p) {
        return nway::plain_schedule(p.ranks, static_cast<int>(p.params.integer("n")), p.only_rank);
    },
    .default_topologies = {"full"},
    .sweep_params = {{{"n", "1"}}, {{"n", "2"}}, {{"n", "3"}}, {{"n", "4"}}, {{"n", "5"}}, {{"n", "6"}}, {{"n", "7"}}},
    .candidates = [](const CandidateQuery& q) { return range_candidates("n", 1, std::clamp(q.ranks - 1, 1, 7)); },
    .symmetry = cyclic_symmetry,
}};

}  // namespace
}  // namespace collplan
