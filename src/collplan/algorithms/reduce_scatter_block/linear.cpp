// reduce_scatter_block/linear -- every rank sends block j of its vector to rank j, which combines the P
// contributions in rank order.
//
// Source:        the direct reduce-scatter (every pair exchanges once); MPICH's pairwise reduce_scatter without
//                its step order; the baseline for recursive halving and the ring.
// Preconditions: any P >= 1; any topology; any operation (non-commutative ones too).
// Rounds:        1 exchange with every other rank, then P - 1 reductions.
// Cost:          (P - 1) (alpha + m beta) + (P - 1) m gamma   [Hockney, one port: sends serialise]
// Memory:        tmp of P blocks. S = 1: in = P blocks (block j goes to rank j), out = 1 block.
// Example:       P = 2, rank 0: send in[1] to 1, receive tmp[1] = x1[0] from 1; out = tmp[1]; out = in[0] (+) out.
// Consistency:   rank-consistent (each result block is computed on one rank only).
#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    const int P = p.ranks;
    const auto U = static_cast<uint32_t>(P);
    Schedule s(Collective::reduce_scatter_block, P, U, 1, U, p.only_rank);
    s.rank_consistent = true;
    const Segment out(Buf::out, 0, 1);
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        const auto mine = [&](int q) { return q == r ? Segment(Buf::in, static_cast<uint32_t>(r), 1)
                                                     : Segment(Buf::tmp, static_cast<uint32_t>(q), 1); };
        for (int k = 1; k < P; ++k) {
            const int to = (r + k) % P, from = (r - k + P) % P;
            b.send(to, 0, {Segment(Buf::in, static_cast<uint32_t>(to), 1)});
            b.recv(from, 0, {Segment(Buf::tmp, static_cast<uint32_t>(from), 1)});
        }
        b.fence();
        b.copy({mine(P - 1)}, {out});
        for (int q = P - 2; q >= 0; --q) {
            b.fence();
            b.reduce({mine(q)}, {out});  // x_q (+) (x_{q+1} (+) ...)
        }
    }
    return s;
}

const Registration reg{{
    .name = "reduce_scatter_block/linear",
    .collective = Collective::reduce_scatter_block,
    .summary = "each rank sends block j to rank j, which reduces the P blocks in rank order (any operation)",
    .source = "direct reduce-scatter; the baseline of MPICH's reduce_scatter algorithms",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"full"},
    .symmetry = cyclic_symmetry,
}};

}  // namespace
}  // namespace collplan
