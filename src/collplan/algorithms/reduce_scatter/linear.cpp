// reduce_scatter/linear -- reduce_scatter_block/linear with a count per rank: every rank sends the counts[j]
// elements of rank j's part to rank j, which combines the P contributions in rank order.
//
// Source:        the direct reduce-scatter; the baseline of MPICH's MPI_Reduce_scatter algorithms.
// Preconditions: any P >= 1, any counts (zeros too); any topology; any operation.
// Rounds:        1 exchange with every rank whose part is not empty, then P - 1 reductions.
// Cost:          sum over j != r of (alpha + counts[j] m beta) sent by rank r, (P - 1) counts[r] m gamma
// Memory:        tmp of P blocks (block q holds counts[r] units). in = P blocks (block j: counts[j] units), out = 1.
// Example:       P = 2, counts = (1, 3): rank 0 sends in[1] (3 units) to 1, receives tmp[1] (1 unit) from 1;
//                out = tmp[1]; out = in[0] (+) out.
// Consistency:   rank-consistent (each result block is computed on one rank only).
#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    const int P = p.ranks;
    const auto U = static_cast<uint32_t>(P);
    Schedule s(Collective::reduce_scatter, P, U, 1, U, p.only_rank);
    s.rank_consistent = true;
    const Segment out(Buf::out, 0, 1);
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        const uint64_t own = p.counts[static_cast<size_t>(r)];
        const auto mine = [&](int q) { return q == r ? Segment(Buf::in, static_cast<uint32_t>(r), 1)
                                                     : Segment(Buf::tmp, static_cast<uint32_t>(q), 1); };
        for (int k = 1; k < P; ++k) {
            const int to = (r + k) % P, from = (r - k + P) % P;
            const Segment part(Buf::in, static_cast<uint32_t>(to), 1), got(Buf::tmp, static_cast<uint32_t>(from), 1);
            if (const uint64_t u = p.counts[static_cast<size_t>(to)]) b.send(to, 0, {&part, 1}, {}, u);
            if (own) b.recv(from, 0, {&got, 1}, {}, own);
        }
        if (own == 0) continue;
        b.fence();
        const Segment last = mine(P - 1);
        b.copy({&last, 1}, {&out, 1}, {}, own);
        for (int q = P - 2; q >= 0; --q) {
            b.fence();
            const Segment src = mine(q);
            b.reduce({&src, 1}, {&out, 1}, {}, 0, own);  // x_q (+) (x_{q+1} (+) ...)
        }
    }
    return s;
}

const Registration reg{{
    .name = "reduce_scatter/linear",
    .collective = Collective::reduce_scatter,
    .summary = "each rank sends rank j its counts[j] elements; j reduces them in rank order (any operation)",
    .source = "direct reduce-scatter; the baseline of MPICH's reduce_scatter algorithms",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"full"},
    .symmetry = cyclic_if_even,  // rank r sends to r + k and receives from r - k in step k
}};

}  // namespace
}  // namespace collplan
