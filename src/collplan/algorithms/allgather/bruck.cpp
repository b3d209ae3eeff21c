// allgather/bruck -- Bruck's concatenation allgather (dissemination pattern, any P).
//
// Source:        Bruck, Ho, Kipnis, Upfal, Weathersby, "Efficient algorithms for all-to-all communications in
//                multiport message-passing systems" (IEEE TPDS 1997), sec. 3 (index-free concatenation);
//                MPICH MPIR_Allgather_intra_brucks.
// Preconditions: any P >= 1; any topology.
// Rounds:        ceil(log2 P); in round k (d = 2^k) rank r sends its first min(d, P - d) collected blocks
//                tmp[0..] to r - d and receives as many into tmp[d..] from r + d. Afterwards tmp[j] holds the
//                block of rank (r + j) mod P; one final copy rotates tmp into out (out[(r + j) mod P] = tmp[j]).
// Cost:          ceil(log2 P) alpha + (P - 1) m beta   [Hockney; plus a local copy of P m bytes]
// Memory:        tmp of P blocks (the rotated collection buffer).
// Example:       P = 3, rank 1: copy in[0] -> tmp[0]; round 0: send tmp[0] to 0, recv tmp[1] from 2;
//                round 1 (d = 2, 1 block): send tmp[0] to 2, recv tmp[2] from 0;
//                copy tmp[0..1] -> out[1..2], tmp[2] -> out[0].
#include "collplan/algorithms/registry.hpp"

#include <algorithm>
#include <vector>

namespace collplan {
namespace {

// out[(r + j) mod P] = tmp[j] for all j: at most two runs.
void rotate_into_out(RankBuilder& b, uint32_t P, uint32_t r) {
    std::vector<Segment> dst{Segment(Buf::out, r, P - r)};
    if (r > 0) dst.emplace_back(Buf::out, 0, r);
    const Segment src(Buf::tmp, 0, P);
    b.copy(std::span(&src, 1), dst);
}

Schedule generate(const Problem& p) {
    const int P = p.ranks;
    const auto uP = static_cast<uint32_t>(P);
    Schedule s(Collective::allgather, P, 1, uP, uP, p.only_rank);
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        if (P == 1) {
            b.copy({Segment(Buf::in, 0, 1)}, {Segment(Buf::out, 0, 1)});
            continue;
        }
        b.copy({Segment(Buf::in, 0, 1)}, {Segment(Buf::tmp, 0, 1)});
        for (int d = 1; d < P; d <<= 1) {
            const auto count = static_cast<uint32_t>(std::min(d, P - d));
            b.fence();
            b.send((r - d + P) % P, 0, {Segment(Buf::tmp, 0, count)});
            b.recv((r + d) % P, 0, {Segment(Buf::tmp, static_cast<uint32_t>(d), count)});
        }
        b.fence();
        rotate_into_out(b, uP, static_cast<uint32_t>(r));
    }
    return s;
}

const Registration reg{{
    .name = "allgather/bruck",
    .collective = Collective::allgather,
    .summary = "ceil(log2 P) rounds for any P, rank r sends its first min(2^k, P-2^k) blocks to r-2^k",
    .source = "Bruck et al. (IEEE TPDS 1997); MPICH MPIR_Allgather_intra_brucks",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"ring", "full"},
    .symmetry = cyclic_symmetry,
}};

}  // namespace
}  // namespace collplan
