// allreduce/rabenseifner -- recursive-halving reduce-scatter + recursive-doubling allgather.
//
// Source:        Rabenseifner, "Optimization of collective reduction operations" (ICCS 2004); Thakur,
//                Rabenseifner, Gropp, "Optimization of collective communication operations in MPICH" (IJHPCA
//                2005), sec. 4.5; MPICH MPIR_Allreduce_intra_reduce_scatter_allgather.
// Preconditions: any P >= 1; any topology; any operation: partners are paired with the distance-1 bit first
//                (MPICH's order), so every reduction joins two adjacent rank intervals with the lower one as the
//                left operand -- exact for non-commutative operations (needs_commutative = false).
// Rounds:        2 log2 P', P' = largest power of two <= P, plus 2 when P != P'. With r = P - P', the even ranks
//                below 2r send their whole vector to rank + 1 (which reduces it) and sit out; survivors get new
//                ranks (odd i < 2r -> i/2, i >= 2r -> i - r). Reduce-scatter round k (mask 2^k): partner new rank
//                XOR 2^k; each splits its current segment range in halves, the lower new rank keeps the lower
//                half, sends the other half and reduces the received half into it. The allgather replays the
//                rounds backwards, exchanging the ranges. Finally the result goes back to the even ranks.
// Cost:          P = P': 2 log2 P alpha + 2 (P-1)/P n beta + (P-1)/P n gamma, n = S m the vector size;
//                otherwise add 2 alpha + 2 n beta + n gamma   [Hockney]
// Memory:        tmp of S blocks (S/2 suffice when P = P'). S = P' segments: in = out = P' blocks.
// Example:       P = 4 (S = 4), rank 2: round 0 with 3: send in[2..3], recv tmp[0..1], then out[0..1] = in[0..1],
//                out[0..1] = out[0..1] (+) tmp; round 1 with 0: send out[0], recv tmp[0], out[1] = tmp (+) out[1];
//                allgather: with 0: send out[1], recv out[0]; with 3: send out[0..1], recv out[2..3].
// Consistency:   rank-consistent: each segment is reduced by one rank only; the allgather and the fold copy it.
#include "collplan/algorithms/allreduce/halving.hpp"
#include "collplan/algorithms/registry.hpp"

#include <algorithm>
#include <vector>

namespace collplan {
namespace {

void allgather(RankBuilder& b, const Fold& f, int r, SegmentRange mine,
               const std::vector<SegmentRange>& given) {
    const int nr = f.new_rank(r);
    int mask = f.pof2 / 2;
    for (auto it = given.rbegin(); it != given.rend(); ++it, mask >>= 1) {
        const int partner = f.real_rank(nr ^ mask);
        b.fence();
        b.send(partner, 0, {mine.seg(Buf::out)});
        b.recv(partner, 0, {it->seg(Buf::out)});
        mine = SegmentRange{std::min(mine.lo, it->lo), std::max(mine.hi, it->hi)};
    }
}

void build_rank(Schedule& s, const Fold& f, int r) {
    RankBuilder b(s, r);
    const auto S = static_cast<uint32_t>(f.pof2);
    const Segment in(Buf::in, 0, S), out(Buf::out, 0, S), tmp(Buf::tmp, 0, S);
    // A rank outside the fold sends its first half straight from `in` and copies only the half it keeps, after
    // that exchange (halving.hpp): nothing is copied before the first message.
    const bool direct = !f.sits_out(r) && !f.absorbs(r) && f.pof2 > 1;
    if (!direct && !f.fold_in(b, r, in, out, tmp)) return;
    const HalvingRounds h = halving_reduce_scatter(b, f, r, S, Buf::out, 0, direct ? Buf::in : Buf::out);
    allgather(b, f, r, h.owned, h.given);
    f.fold_out(b, r, out);
}

Schedule generate(const Problem& p) {
    const Fold f(p.ranks);
    const auto S = static_cast<uint32_t>(f.pof2);
    Schedule s(Collective::allreduce, p.ranks, S, S, S, p.only_rank);
    s.needs_commutative = false;
    s.rank_consistent = true;
    for (int r : p.build_ranks()) build_rank(s, f, r);
    return s;
}

const Registration reg{{
    .name = "allreduce/rabenseifner",
    .collective = Collective::allreduce,
    .summary = "recursive-halving reduce-scatter + recursive-doubling allgather over P' segments, order-preserving",
    .source = "Rabenseifner (ICCS 2004); Thakur, Rabenseifner, Gropp (IJHPCA 2005); MPICH",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"hypercube", "full"},
    .symmetry = xor_symmetry,
}};

}  // namespace
}  // namespace collplan
