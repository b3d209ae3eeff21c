// reduce_scatter_block/recursive_halving -- log2 P' rounds, each exchanging half of what a rank still holds with
// a partner at halving distance.
//
// Source:        Thakur, Rabenseifner, Gropp, "Optimization of collective communication operations in MPICH"
//                (IJHPCA 2005), sec. 4.6; MPICH MPIR_Reduce_scatter_block_intra_recursive_halving.
// Preconditions: any P >= 1; any topology; commutative operation (the first round combines ranks P'/2 apart, so
//                a partial result is not an interval of ranks; MPICH asserts commutativity too).
// Rounds:        log2 P', P' = largest power of two <= P, plus 2 when P != P'. Fold (allreduce/fold.hpp, as
//                MPICH): with r = P - P', the even ranks below 2r send all P blocks to rank + 1 and sit out; the
//                odd one reduces them and works for both, so new rank i stands for the blocks of ranks
//                [lo(i), lo(i+1)), lo(i) = 2i for i < r, else i + r. Round with mask = P'/2, P'/4, ..., 1: the
//                partner is new rank XOR mask; of the new ranks [a, a + 2 mask) both hold, the lower keeps the
//                blocks of [a, a + mask) and sends those of the upper half, the upper the reverse; each reduces
//                what it receives into what it keeps. At the end each survivor returns its left neighbour's block.
// Cost:          P = P': log2 P alpha + (P-1)/P n beta + (P-1)/P n gamma, n = P m   [Hockney]; otherwise add
//                2 alpha + (n + m) beta + n gamma for the fold.
// Memory:        tmp of 2P blocks (the accumulator and the receive area; MPICH: the same). S = 1: in = P blocks
//                (block j is for rank j), out = 1 block.
// Example:       P = 4, rank 1: mask 2 with 3: send in[2..3], recv tmp[0..1], tmp[0..1] = in[0..1] (+) tmp[0..1];
//                mask 1 with 0: send tmp[0], recv tmp[5], tmp[1] = tmp[5] (+) tmp[1]; out = tmp[1].
// Consistency:   rank-consistent (each result block is computed on one rank only).
#include "collplan/algorithms/allreduce/fold.hpp"
#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

void build_rank(Schedule& s, const Fold& f, int r) {
    const int P = s.ranks();
    const auto U = static_cast<uint32_t>(P);
    RankBuilder b(s, r);
    const auto blk = [](Buf buf, int lo, int hi) {
        return Segment(buf, static_cast<uint32_t>(lo), static_cast<uint32_t>(hi - lo));
    };
    const Segment out(Buf::out, 0, 1);
    if (P == 1) {
        b.copy({Segment(Buf::in, 0, 1)}, {out});
        return;
    }
    if (f.sits_out(r)) {
        b.send(r + 1, 0, {Segment(Buf::in, 0, U)});
        b.recv(r + 1, 0, {out});
        return;
    }
    // acc = tmp[0, P): the partial results; tmp[P, 2P): the receive area (block j at P + j).
    Buf cur = Buf::in;  // where the rank's partial results are: its input until it has reduced anything
    if (f.absorbs(r)) {
        b.recv(r - 1, 0, {Segment(Buf::tmp, 0, U)});
        b.fence();
        b.reduce({Segment(Buf::in, 0, U)}, {Segment(Buf::tmp, 0, U)}, {}, opflag::reverse);  // x_{r-1} (+) x_r
        cur = Buf::tmp;
    }
    const auto lo = [&](int i) { return i < f.rem ? 2 * i : i + f.rem; };  // first block of new rank i
    const int nr = f.new_rank(r);
    int a = 0;  // the rank still holds the blocks of new ranks [a, a + 2 mask)
    for (int mask = f.pof2 / 2; mask > 0; mask >>= 1) {
        const int partner = f.real_rank(nr ^ mask);
        const bool lower = (nr & mask) == 0;
        const int keep_a = lower ? a : a + mask, give_a = lower ? a + mask : a;
        const Segment keep = blk(Buf::tmp, lo(keep_a), lo(keep_a + mask));
        // The first reduction of a rank without a fold writes straight into acc: acc = x_r (+) received.
        const Segment recv = cur == Buf::in ? keep : blk(Buf::tmp, P + lo(keep_a), P + lo(keep_a + mask));
        b.fence();
        b.send(partner, 0, {blk(cur, lo(give_a), lo(give_a + mask))});
        b.recv(partner, 0, {recv});
        b.fence();
        b.reduce({cur == Buf::in ? blk(Buf::in, lo(keep_a), lo(keep_a + mask)) : recv}, {keep});
        cur = Buf::tmp;
        a = keep_a;
    }
    b.fence();
    b.copy({Segment(Buf::tmp, static_cast<uint32_t>(r), 1)}, {out});
    if (f.absorbs(r)) b.send(r - 1, 0, {Segment(Buf::tmp, static_cast<uint32_t>(r - 1), 1)});
}

Schedule generate(const Problem& p) {
    const Fold f(p.ranks);
    const auto U = static_cast<uint32_t>(p.ranks);
    Schedule s(Collective::reduce_scatter_block, p.ranks, U, 1, 2 * U, p.only_rank);
    s.needs_commutative = true;
    s.rank_consistent = true;
    for (int r : p.build_ranks()) build_rank(s, f, r);
    return s;
}

const Registration reg{{
    .name = "reduce_scatter_block/recursive_halving",
    .collective = Collective::reduce_scatter_block,
    .summary = "log2 P' rounds exchanging half of the remaining blocks at halving distance (commutative ops)",
    .source = "Thakur, Rabenseifner, Gropp (IJHPCA 2005); MPICH",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"hypercube", "full"},
    .symmetry = xor_symmetry,
}};

}  // namespace
}  // namespace collplan
