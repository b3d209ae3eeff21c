// reduce_scatter/pairwise -- pairwise exchange: in step i every rank sends rank r + i its part and receives its
// own part from rank r - i, which it combines at once.
//
// Source:        MPICH MPIR_Reduce_scatter_intra_pairwise (chosen for commutative operations and long
//                messages); Thakur, Rabenseifner, Gropp, "Optimization of collective communication operations in
//                MPICH" (IJHPCA 2005), sec. 4.4.
// Preconditions: any P >= 1, any counts (zeros too); any topology; commutative operations only
//                (needs_commutative): rank r combines x_{r-1}, x_{r-2}, ... into x_r, wrapping past rank 0.
// Rounds:        P - 1; in step i (1 <= i < P) rank r sends in[r + i] (counts[r + i] units) to r + i, receives
//                counts[r] units from r - i into tmp and then reduces tmp into out (indices mod P). Empty parts
//                are not sent; a rank whose own part is empty receives nothing.
// Cost:          (P - 1) alpha + (n - counts[r]) m beta sent by rank r + (P - 1) counts[r] m gamma, n = sum of
//                counts   [Hockney; every step pays the larger of the two messages]
// Memory:        tmp of 1 block (counts[r] units). in = P blocks (block j: counts[j] units), out = 1 block.
// Example:       P = 3, counts = (1, 2, 1), rank 1: copy in[1] -> out (2 units); step 1: send in[2] (1 unit) to
//                2, recv tmp (2 units) from 0, out = tmp (+) out; step 2: send in[0] (1 unit) to 0, recv tmp
//                from 2, out = tmp (+) out = x_2 (+) (x_0 (+) x_1).
// Consistency:   rank-consistent (each result block is computed on one rank only).
#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    const int P = p.ranks;
    const auto U = static_cast<uint32_t>(P);
    Schedule s(Collective::reduce_scatter, P, U, 1, 1, p.only_rank);
    s.needs_commutative = true;
    s.rank_consistent = true;
    const Segment out(Buf::out, 0, 1), tmp(Buf::tmp, 0, 1);
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        const uint64_t own = p.counts[static_cast<size_t>(r)];
        const Segment mine(Buf::in, static_cast<uint32_t>(r), 1);
        if (own) b.copy({&mine, 1}, {&out, 1}, {}, own);
        for (int i = 1; i < P; ++i) {
            const int to = (r + i) % P, from = (r - i + P) % P;
            const Segment part(Buf::in, static_cast<uint32_t>(to), 1);
            b.fence();
            if (const uint64_t u = p.counts[static_cast<size_t>(to)]) b.send(to, 0, {&part, 1}, {}, u);
            if (own == 0) continue;
            b.recv(from, 0, {&tmp, 1}, {}, own);
            b.fence();
            b.reduce({&tmp, 1}, {&out, 1}, {}, 0, own);  // x_from (+) (what out holds)
        }
    }
    return s;
}

const Registration reg{{
    .name = "reduce_scatter/pairwise",
    .collective = Collective::reduce_scatter,
    .summary = "P-1 steps, rank r sends r+i its part and reduces the part from r-i at once (commutative ops)",
    .source = "MPICH MPIR_Reduce_scatter_intra_pairwise; Thakur, Rabenseifner, Gropp (IJHPCA 2005)",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"full"},
    .mpi_default = true,
    .symmetry = cyclic_if_even,
}};

}  // namespace
}  // namespace collplan
