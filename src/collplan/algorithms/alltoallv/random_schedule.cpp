// alltoallv/random_schedule -- RS_N: decompose COM into partial permutations chosen at random.
//
// Source:        Wang, Lin, Ranka, "Distributed scheduling of unstructured collective communication on the
//                CM-5" (1993), sec. 3.3, Fig. 4 (Random_Scheduling_Node); the algorithm and its analysis are in
//                Ranka, Wang, "Static and runtime scheduling of unstructured communication" (1993), ref. [11].
// Preconditions: any P >= 1; a P x P communication matrix; any topology. Every rank needs the whole COM (a
//                global concatenate, see Generate_Recv in docs/unstructured.md) and computes the same schedule.
// Rounds:        phases until every message is sent; expected about d + log2 d for d messages per row and
//                column (the paper: bounded by d + log d; 5.54, 18.56, 34.2 phases for d = 4, 16, 31 on 32
//                nodes). Each phase: the rows in a random order; row i scans its remaining destinations (the
//                compressed matrix CCOM) cyclically from a random position and takes the first whose column is
//                still free in this phase. Nothing is split. Randomness from the parameter seed.
// Cost:          sum over phases of (alpha + largest message of the phase * beta); no node contention.
//                Scheduling: O(P ln d + P) per phase on every rank (work = entries probed).
// Memory:        the compressed matrix, nnz(COM) entries; no scratch buffer. One rank's program still computes
//                the whole plan (every rank's phases, O(nnz) transfers) and keeps only its own messages.
// Example:       COM with rows 0: {1, 2}, 1: {0, 2}, 2: {0, 1}: e.g. phase 1 {0->1, 1->2, 2->0},
//                phase 2 {0->2, 1->0, 2->1} (which one depends on the seed).
#include <algorithm>

#include "collplan/algorithms/alltoallv/unstructured_common.hpp"

namespace collplan {

alltoallv::PhasePlan alltoallv::plan_random(std::span<const uint64_t> m, int P, uint64_t seed) {
    if (std::string why = check_matrix(m, P); !why.empty()) throw Error(why);
    Rng rng(seed);
    std::vector<std::vector<int>> ccom(static_cast<size_t>(P));  // remaining destinations per row
    size_t left = 0;
    for (int i = 0; i < P; ++i)
        for (int j = 0; j < P; ++j)
            if (i != j && m[static_cast<size_t>(i) * P + j]) ccom[i].push_back(j), ++left;
    std::vector<int> rows(static_cast<size_t>(P));
    for (int i = 0; i < P; ++i) rows[i] = i;
    std::vector<size_t> col_used(static_cast<size_t>(P), ~size_t{0});
    PhasePlan plan;
    while (left > 0) {
        const size_t t = plan.phases.size();
        Phase phase;
        rng.shuffle(rows);
        plan.work += static_cast<uint64_t>(P);
        for (int i : rows) {
            std::vector<int>& dst = ccom[i];
            if (dst.empty()) continue;
            const size_t start = rng.below(dst.size());
            for (size_t k = 0; k < dst.size(); ++k) {
                const size_t at = (start + k) % dst.size();
                ++plan.work;
                if (col_used[dst[at]] == t) continue;
                col_used[dst[at]] = t;
                phase.push_back({i, dst[at], m[static_cast<size_t>(i) * P + dst[at]]});
                dst[at] = dst.back();
                dst.pop_back();
                --left;
                break;
            }
        }
        plan.phases.push_back(std::move(phase));
    }
    return plan;
}

namespace {

const Registration reg{{
    .name = "alltoallv/random_schedule",
    .collective = Collective::alltoallv,
    .summary = "RS_N: random partial permutations, about d + log d contention-free phases",
    .source = "Wang, Lin, Ranka (CM-5, 1993) sec. 3.3; Ranka, Wang, Static and runtime scheduling of unstructured communication (1993)",
    .params = {alltoallv::seed_param()},
    .applies = alltoallv::applies_matrix,
    .generate = [](const Problem& p) {
        const auto seed = static_cast<uint64_t>(p.params.integer("seed"));
        return alltoallv::phased_schedule(p, alltoallv::plan_random(p.counts, p.ranks, seed));
    },
}};

}  // namespace
}  // namespace collplan
