// reduce_scatter/recursive_halving -- recursive halving over the parts: in each round a rank and its partner
// split the range of parts they still hold, each sends the half the other keeps and reduces the half it keeps.
//
// Source:        MPICH MPIR_Reduce_scatter_intra_recursive_halving (commutative operations, short and medium
//                messages); Thakur, Rabenseifner, Gropp, "Optimization of collective communication operations in
//                MPICH" (IJHPCA 2005), sec. 4.4.
// Preconditions: any P >= 1, any counts (zeros too); any topology; commutative operations only
//                (needs_commutative: partners are paired with the largest distance first, so a reduction joins
//                contributions that are not adjacent in rank order).
// Rounds:        log2 P', P' = largest power of two <= P, plus 2 when P != P'. With r = P - P', the even ranks
//                below 2r send their whole input to rank + 1 (which reduces it, x_{i-1} (+) x_i) and sit out;
//                survivors get new ranks (odd i < 2r -> i/2, i >= 2r -> i - r; allreduce/fold.hpp), and new part
//                j is old parts 2j, 2j+1 (j < r) or old part j + r. Round with mask = P'/2, P'/4, ..., 1:
//                partner new rank XOR mask; the lower new rank keeps the lower half of the current range of
//                new parts. The range shrinks to the rank's own new part; odd ranks below 2r then send part
//                i - 1 to rank i - 1. Messages carry the sum of their parts' counts; empty ones are not sent.
// Cost:          P = P', equal counts: log2 P alpha + (P-1)/P n (beta + gamma), n = sum of counts m; otherwise
//                add 2 alpha + n beta + n gamma for the fold   [Hockney] (plus a local copy of n)
// Memory:        tmp of 2P blocks: tmp[0..P) the running results (block j: part j), tmp[P..2P) the receive
//                buffer. in = P blocks (block j: counts[j] units), out = 1 block.
// Example:       P = 3, counts = (1, 2, 1); rank 0 sits out: send in[0..2] (4 units) to 1, recv out (1 unit)
//                from 1. Rank 1 (new 0; new part 0 = old parts 0..1): copy in[0..2] -> tmp[0..2]; recv tmp[3..5]
//                from 0; tmp[0..2] = tmp[3..5] (+) tmp[0..2]; mask 1 with rank 2: send tmp[2] (1 unit), recv
//                tmp[3..4] (3 units), tmp[0..1] = tmp[3..4] (+) tmp[0..1]; copy tmp[1] -> out; send tmp[0] to 0.
// Consistency:   rank-consistent (each part is reduced on one rank only; the fold's last message copies it).
#include "collplan/algorithms/allreduce/fold.hpp"
#include "collplan/algorithms/registry.hpp"
#include "collplan/algorithms/runs.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    const int P = p.ranks;
    const auto U = static_cast<uint32_t>(P);
    Schedule s(Collective::reduce_scatter, P, U, 1, P > 1 ? 2 * U : 0, p.only_rank);
    s.needs_commutative = true;
    s.rank_consistent = true;
    const Fold f(P);
    const Segment out(Buf::out, 0, 1);
    const auto units = [&](int part) { return p.counts[static_cast<size_t>(part)]; };
    // Blocks [lo, hi) of `b`, from block `base` on, without the empty parts.
    const auto runs = [&](Buf b, uint32_t base, int lo, int hi) {
        Runs x;
        for (int j = lo; j < hi; ++j) x.add(b, base + static_cast<uint32_t>(j), units(j));
        return x;
    };
    const auto first_part = [&](int nj) { return nj < f.rem ? 2 * nj : nj + f.rem; };  // of new part nj
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        const Segment own(Buf::tmp, static_cast<uint32_t>(r), 1);
        if (P == 1) {
            const Segment in(Buf::in, 0, 1);
            if (units(0)) b.copy({&in, 1}, {&out, 1}, {}, units(0));
            continue;
        }
        if (f.sits_out(r)) {
            if (const Runs all = runs(Buf::in, 0, 0, P); !all.empty()) b.send(r + 1, 0, all.segs, {}, all.units);
            if (units(r)) b.recv(r + 1, 0, {&out, 1}, {}, units(r));
            continue;
        }
        if (const Runs all = runs(Buf::in, 0, 0, P); !all.empty())
            b.copy(all.segs, runs(Buf::tmp, 0, 0, P).segs, {}, all.units);
        if (f.absorbs(r)) {
            if (const Runs got = runs(Buf::tmp, U, 0, P); !got.empty()) {
                b.recv(r - 1, 0, got.segs, {}, got.units);
                b.fence();
                b.reduce(got.segs, runs(Buf::tmp, 0, 0, P).segs, {}, 0, got.units);  // x_{r-1} (+) x_r
            }
        }
        const int nr = f.new_rank(r);
        int send_idx = 0, recv_idx = 0, last_idx = f.pof2;  // ranges of new parts
        for (int mask = f.pof2 / 2; mask > 0; mask /= 2) {
            const int nd = nr ^ mask, peer = f.real_rank(nd);
            int give_lo, give_hi, keep_lo, keep_hi;
            if (nr < nd) {
                send_idx = recv_idx + mask;
                give_lo = send_idx, give_hi = last_idx, keep_lo = recv_idx, keep_hi = send_idx;
            } else {
                recv_idx = send_idx + mask;
                give_lo = send_idx, give_hi = recv_idx, keep_lo = recv_idx, keep_hi = last_idx;
            }
            const auto part_range = [&](Buf buf, uint32_t base, int lo, int hi) {
                return runs(buf, base, first_part(lo), hi == f.pof2 ? P : first_part(hi));
            };
            const Runs give = part_range(Buf::tmp, 0, give_lo, give_hi);
            const Runs got = part_range(Buf::tmp, U, keep_lo, keep_hi);
            b.fence();
            if (!give.empty()) b.send(peer, 0, give.segs, {}, give.units);
            if (!got.empty()) {
                b.recv(peer, 0, got.segs, {}, got.units);
                b.fence();
                b.reduce(got.segs, part_range(Buf::tmp, 0, keep_lo, keep_hi).segs, {}, 0, got.units);
            }
            send_idx = recv_idx;
            last_idx = recv_idx + mask;
        }
        b.fence();
        if (units(r)) b.copy({&own, 1}, {&out, 1}, {}, units(r));
        if (f.absorbs(r) && units(r - 1)) {
            const Segment theirs(Buf::tmp, static_cast<uint32_t>(r - 1), 1);
            b.send(r - 1, 0, {&theirs, 1}, {}, units(r - 1));
        }
    }
    return s;
}

const Registration reg{{
    .name = "reduce_scatter/recursive_halving",
    .collective = Collective::reduce_scatter,
    .summary = "log2 P rounds halving the range of parts with partner r XOR 2^k; folds non-powers of two (commutative ops)",
    .source = "MPICH MPIR_Reduce_scatter_intra_recursive_halving; Thakur, Rabenseifner, Gropp (IJHPCA 2005)",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"full", "hypercube"},
    .symmetry = [](const Problem& p) { return cyclic_if_even(p) == Symmetry::none ? Symmetry::none : xor_symmetry(p); },
}};

}  // namespace
}  // namespace collplan
