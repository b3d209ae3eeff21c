// reduce_scatter_block/ring -- ring reduce-scatter: P - 1 steps, each rank passes one partial block to its right
// neighbour, which adds its own contribution.
//
// Source:        the first half of allreduce/ring (Patarasuk, Yuan, "Bandwidth optimal all-reduce algorithms for
//                clusters of workstations", JPDC 2009; MPICH MPIR_Allreduce_intra_ring), with the blocks rotated
//                so that rank r ends with its own block r.
// Preconditions: any P >= 1; any topology (neighbours on a ring or line embed with one hop); commutative
//                operation (block j is combined along the ring starting at rank j + 1, in the rotated order
//                x_{j+1}, .., x_{P-1}, x_0, .., x_j).
// Rounds:        P - 1. Step k = 0..P-2: rank r sends the partial of block (r - k - 1) mod P to r + 1 (its own
//                contribution in step 0), receives the partial of block (r - k - 2) mod P from r - 1 and appends
//                its own contribution; the last step's block is r, received into out.
// Cost:          (P - 1) (alpha + m beta + m gamma), n = P m   [Hockney]
// Memory:        tmp of 2 blocks (the partial being sent and the one being received alternate). S = 1: in = P
//                blocks, out = 1 block.
// Example:       P = 3, rank 0: step 0: send in[2] to 1, recv tmp[0] = x2[1] from 2, tmp[0] = tmp[0] (+) x0[1];
//                step 1: send tmp[0] to 1, recv out = x1[0] (+) x2[0] from 2, out = out (+) x0[0].
// Consistency:   rank-consistent (each result block is computed along one path only).
#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

void build_rank(Schedule& s, int r) {
    const int P = s.ranks();
    const auto blk = [P](int j) { return static_cast<uint32_t>(((j % P) + P) % P); };
    RankBuilder b(s, r);
    const Segment out(Buf::out, 0, 1);
    if (P == 1) {
        b.copy({Segment(Buf::in, 0, 1)}, {out});
        return;
    }
    const int right = (r + 1) % P, left = (r - 1 + P) % P;
    Segment partial(Buf::in, blk(r - 1), 1);  // what step k sends
    for (int k = 0; k < P - 1; ++k) {
        const bool last = k == P - 2;
        const Segment into = last ? out : Segment(Buf::tmp, static_cast<uint32_t>(k % 2), 1);
        b.fence();
        b.send(right, 0, {partial});
        b.recv(left, 0, {into});
        b.fence();
        b.reduce({Segment(Buf::in, blk(r - k - 2), 1)}, {into}, {}, opflag::reverse);  // (ring so far) (+) x_r
        partial = into;
    }
}

Schedule generate(const Problem& p) {
    const auto U = static_cast<uint32_t>(p.ranks);
    Schedule s(Collective::reduce_scatter_block, p.ranks, U, 1, 2, p.only_rank);
    s.needs_commutative = true;
    s.rank_consistent = true;
    for (int r : p.build_ranks()) build_rank(s, r);
    return s;
}

const Registration reg{{
    .name = "reduce_scatter_block/ring",
    .collective = Collective::reduce_scatter_block,
    .summary = "ring reduce-scatter, P-1 neighbour steps of one block (commutative ops)",
    .source = "Patarasuk, Yuan (JPDC 2009); the first half of MPICH's ring allreduce",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"ring", "full"},
    .symmetry = cyclic_symmetry,
}};

}  // namespace
}  // namespace collplan
