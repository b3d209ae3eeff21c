// reduce/rabenseifner -- recursive-halving reduce-scatter + binomial gather of the segments to the root.
//
// Source:        Rabenseifner, "Optimization of collective reduction operations" (ICCS 2004); Thakur,
//                Rabenseifner, Gropp, "Optimization of collective communication operations in MPICH" (IJHPCA
//                2005), sec. 4.4; MPICH MPIR_Reduce_intra_reduce_scatter_gather.
// Preconditions: any P >= 1, any root; any topology; any operation: the reduce-scatter is allreduce/rabenseifner's
//                (allreduce/halving.hpp, distance-1 partners first, lower interval on the left) and the gather
//                only moves finished segments, so non-commutative operations are exact (needs_commutative =
//                false; MPICH uses the algorithm for predefined operations only).
// Rounds:        2 log2 P', P' = largest power of two <= P, plus 1 when P != P' (the fold), plus 1 more when the
//                root sits out. Fold (allreduce/fold.hpp; MPICH's reduce folds odd ranks onto even ones instead, so
//                its root 0 never sits out): with r = P - P', the even ranks below 2r send their vector to rank + 1
//                and sit out. Reduce-scatter over P' segments: new rank i ends owning segment bitreverse(i).
//                Gather, the halving replayed backwards (mask P'/2 down to 1): of each pair the rank whose mask
//                bit differs from the root's new rank sends everything it owns to the other and stops. A root that
//                sat out takes the place of its partner rank + 1, which sends it its segment first (MPICH does
//                the same with new rank 0).
// Cost:          P = P': 2 log2 P alpha + 2 (P-1)/P n beta + (P-1)/P n gamma, n = S m the vector size; otherwise
//                add alpha + n beta + n gamma for the fold (and alpha + n/P' beta when the root sat out) [Hockney]
// Memory:        tmp of 2S blocks (off the root, the accumulator and the receive area). S = P' segments: in = S
//                blocks, out = S blocks at the root only.
// Example:       P = 4 (S = 4), root 0: the halving as in allreduce/rabenseifner leaves rank i with segment
//                bitreverse(i): 0 -> 0, 1 -> 2, 2 -> 1, 3 -> 3; gather mask 2: rank 2 sends tmp[1] to 0 (out[1]),
//                rank 3 sends tmp[3] to 1 (tmp[3]); mask 1: rank 1 sends tmp[2..3] to 0, which now has out[0..3].
// Consistency:   rank-consistent (only the root has the result).
#include "collplan/algorithms/allreduce/halving.hpp"
#include "collplan/algorithms/registry.hpp"

#include <algorithm>

namespace collplan {
namespace {

// The binomial gather of the owned ranges to the root's new rank `newroot`; `sub` is the real rank that plays
// newroot (the root itself when it sat out).
void gather(RankBuilder& b, const Fold& f, int nr, const HalvingRounds& h, Buf acc, int newroot, int sub) {
    SegmentRange mine = h.owned;
    int mask = f.pof2 / 2;
    for (auto it = h.given.rbegin(); it != h.given.rend(); ++it, mask >>= 1) {
        const int pnr = nr ^ mask;
        const int partner = pnr == newroot ? sub : f.real_rank(pnr);
        b.fence();
        if ((pnr & mask) == (newroot & mask)) {
            b.send(partner, 0, {mine.seg(acc)});
            return;
        }
        b.recv(partner, 0, {it->seg(acc)});
        mine = SegmentRange{std::min(mine.lo, it->lo), std::max(mine.hi, it->hi)};
    }
}

void build_rank(Schedule& s, const Fold& f, int r, int root) {
    RankBuilder b(s, r);
    const auto S = static_cast<uint32_t>(f.pof2);
    const Segment in(Buf::in, 0, S);
    const bool root_out = f.sits_out(root);
    const int newroot = f.new_rank(root_out ? root + 1 : root);
    if (f.sits_out(r)) {
        b.send(r + 1, 0, {in});
        if (r != root) return;
        // Take the place of rank + 1 in the gather: its segment first.
        const HalvingRounds h = halving_rounds(f.pof2, newroot, S);
        b.recv(r + 1, 0, {h.owned.seg(Buf::out)});
        gather(b, f, newroot, h, Buf::out, newroot, root);
        return;
    }
    const Buf acc = r == root ? Buf::out : Buf::tmp;
    f.fold_in(b, r, in, Segment(acc, 0, S), Segment(Buf::tmp, S, S));
    const HalvingRounds h = halving_reduce_scatter(b, f, r, S, acc, S, acc);
    if (root_out && r == root + 1) {
        b.fence();
        b.send(root, 0, {h.owned.seg(acc)});
        return;
    }
    gather(b, f, f.new_rank(r), h, acc, newroot, root_out ? root : f.real_rank(newroot));
}

Schedule generate(const Problem& p) {
    const Fold f(p.ranks);
    const auto S = static_cast<uint32_t>(f.pof2);
    Schedule s(Collective::reduce, p.ranks, S, S, 2 * S, p.only_rank);
    s.needs_commutative = false;
    s.rank_consistent = true;
    for (int r : p.build_ranks()) build_rank(s, f, r, p.root);
    return s;
}

const Registration reg{{
    .name = "reduce/rabenseifner",
    .collective = Collective::reduce,
    .summary = "recursive-halving reduce-scatter + binomial gather to the root over P' segments, order-preserving",
    .source = "Rabenseifner (ICCS 2004); Thakur, Rabenseifner, Gropp (IJHPCA 2005); MPICH",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"hypercube", "full"},
}};

}  // namespace
}  // namespace collplan
