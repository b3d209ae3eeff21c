// reduce_scatter_block/pairwise -- P - 1 exchange steps: in step k rank r sends block r + k of its vector to
// rank r + k and receives its own block from rank r - k, which it combines at once.
//
// Source:        Thakur, Rabenseifner, Gropp, "Optimization of collective communication operations in MPICH"
//                (IJHPCA 2005), sec. 4.6; MPICH MPIR_Reduce_scatter_block_intra_pairwise.
// Preconditions: any P >= 1; any topology; any operation. MPICH folds every received block into one accumulator,
//                which yields the rotation x_{r+1} .. x_{P-1} x_0 .. x_r and so needs a commutative operation;
//                here the blocks from ranks below r (arriving r-1, r-2, .., 0) are prepended to x_r in out, and
//                those from ranks above r (arriving P-1, P-2, .., r+1) to a second accumulator, which is appended
//                to out at the end: the same P - 1 reductions, rank order kept (needs_commutative = false).
// Rounds:        P - 1 (MPICH's blocking sendrecv per step: step k+1 starts after step k's reduction).
// Cost:          (P - 1) (alpha + m beta + m gamma), n = P m   [Hockney]
// Memory:        tmp of 2 blocks (the receive block and the upper accumulator). S = 1: in = P blocks, out = 1.
// Example:       P = 3, rank 1: out = x1[1]; step 1: send in[2] to 2, recv tmp[0] = x0[1] from 0, out = tmp[0]
//                (+) out; step 2: send in[0] to 0, recv tmp[1] = x2[1] from 2; out = out (+) tmp[1].
// Consistency:   rank-consistent (each result block is computed on one rank only).
#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

void build_rank(Schedule& s, int r) {
    const int P = s.ranks();
    RankBuilder b(s, r);
    const Segment out(Buf::out, 0, 1), rbuf(Buf::tmp, 0, 1), upper(Buf::tmp, 1, 1);
    b.copy({Segment(Buf::in, static_cast<uint32_t>(r), 1)}, {out});
    for (int k = 1; k < P; ++k) {
        const int to = (r + k) % P, from = (r - k + P) % P;
        b.fence();
        b.send(to, 0, {Segment(Buf::in, static_cast<uint32_t>(to), 1)});
        if (from == P - 1) {  // the first block from above starts the upper accumulator
            b.recv(from, 0, {upper});
            continue;
        }
        b.recv(from, 0, {rbuf});
        b.fence();
        b.reduce({rbuf}, {from < r ? out : upper});  // x_from (+) (the ranks above it)
    }
    if (r < P - 1) {
        b.fence();
        b.reduce({upper}, {out}, {}, opflag::reverse);  // (x_0 .. x_r) (+) (x_{r+1} .. x_{P-1})
    }
}

Schedule generate(const Problem& p) {
    const auto U = static_cast<uint32_t>(p.ranks);
    Schedule s(Collective::reduce_scatter_block, p.ranks, U, 1, 2, p.only_rank);
    s.needs_commutative = false;
    s.rank_consistent = true;
    for (int r : p.build_ranks()) build_rank(s, r);
    return s;
}

const Registration reg{{
    .name = "reduce_scatter_block/pairwise",
    .collective = Collective::reduce_scatter_block,
    .summary = "P-1 steps: send block r+k to r+k, receive from r-k and combine (rank order kept, any op)",
    .source = "Thakur, Rabenseifner, Gropp (IJHPCA 2005); MPICH",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"full", "ring"},
    .mpi_default = true,
}};

}  // namespace
}  // namespace collplan
