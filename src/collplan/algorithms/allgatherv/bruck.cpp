// allgatherv/bruck -- Bruck's concatenation allgather with contributions of any size: ceil(log2 P) rounds, each
// rank doubling the run of consecutive ranks' contributions it holds.
//
// Source:        MPICH MPIR_Allgatherv_intra_brucks (MPICH's choice for short messages and any P); Bruck, Ho,
//                Kipnis, Upfal, Weathersby, "Efficient algorithms for all-to-all communications in multiport
//                message-passing systems" (IEEE TPDS 1997), sec. 3. The uniform form is allgather/bruck.
// Preconditions: any P >= 1, any counts (zeros too); any topology.
// Rounds:        ceil(log2 P); in round k (d = 2^k) rank r sends its first min(d, P - d) collected blocks
//                tmp[0..] to r - d and receives as many into tmp[d..] from r + d; tmp[j] holds the contribution
//                of rank (r + j) mod P, and a message's units are the sum of its contributions' counts (empty
//                contributions are left out, an all-empty message is not sent). One final copy rotates tmp into
//                out (out[(r + j) mod P] = tmp[j]).
// Cost:          ceil(log2 P) alpha + (n - counts[r]) m beta received by rank r, n = sum of counts   [Hockney;
//                plus local copies of n m bytes]
// Memory:        tmp of P blocks (the rotated collection buffer; tmp[j]: counts[(r + j) mod P] units).
// Example:       P = 3, counts = (1, 2, 0), rank 1: copy in[0] -> tmp[0] (2 units); round 0: send tmp[0] to 0,
//                recv nothing from 2 (its contribution is empty); round 1 (d = 2, 1 block): send tmp[0] to 2,
//                recv tmp[2] (1 unit) from 0; copy tmp[0] -> out[1], tmp[2] -> out[0].
#include "collplan/algorithms/registry.hpp"
#include "collplan/algorithms/runs.hpp"

#include <algorithm>

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    const int P = p.ranks;
    const auto uP = static_cast<uint32_t>(P);
    Schedule s(Collective::allgatherv, P, 1, uP, P > 1 ? uP : 0, p.only_rank);
    const Segment in(Buf::in, 0, 1);
    const auto units = [&](int q) { return p.counts[static_cast<size_t>(q % P)]; };
    // tmp[lo..hi) of rank r (tmp[j]: rank r + j's contribution), without the empty ones.
    const auto collected = [&](int r, int lo, int hi) {
        Runs x;
        for (int j = lo; j < hi; ++j) x.add(Buf::tmp, static_cast<uint32_t>(j), units(r + j));
        return x;
    };
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        if (P == 1) {
            const Segment at(Buf::out, 0, 1);
            if (units(0)) b.copy({&in, 1}, {&at, 1}, {}, units(0));
            continue;
        }
        const Segment first(Buf::tmp, 0, 1);
        if (units(r)) b.copy({&in, 1}, {&first, 1}, {}, units(r));
        for (int d = 1; d < P; d <<= 1) {
            const int count = std::min(d, P - d);
            const Runs give = collected(r, 0, count);
            const Runs got = collected(r, d, d + count);  // rank r + d's tmp[0..count)
            b.fence();
            if (!give.empty()) b.send((r - d + P) % P, 0, give.segs, {}, give.units);
            if (!got.empty()) b.recv((r + d) % P, 0, got.segs, {}, got.units);
        }
        // out[(r + j) mod P] = tmp[j]
        const Runs src = collected(r, 0, P);
        Runs dst;
        for (int j = 0; j < P; ++j) dst.add(Buf::out, static_cast<uint32_t>((r + j) % P), units(r + j));
        b.fence();
        if (!src.empty()) b.copy(src.segs, dst.segs, {}, src.units);
    }
    return s;
}

const Registration reg{{
    .name = "allgatherv/bruck",
    .collective = Collective::allgatherv,
    .summary = "ceil(log2 P) rounds for any P, rank r sends its first min(2^k, P-2^k) contributions to r-2^k",
    .source = "MPICH MPIR_Allgatherv_intra_brucks; Bruck et al. (IEEE TPDS 1997)",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"ring", "full"},
    .symmetry = cyclic_if_even,
}};

}  // namespace
}  // namespace collplan
