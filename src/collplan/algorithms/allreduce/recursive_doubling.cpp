// allreduce/recursive_doubling -- recursive doubling allreduce for any P, exact for non-commutative operations.
//
// Source:        MPICH MPIR_Allreduce_intra_recursive_doubling; Thakur, Rabenseifner, Gropp, "Optimization of
//                collective communication operations in MPICH" (IJHPCA 2005), sec. 4.5.
// Preconditions: any P >= 1; any topology; any operation (commutativity not needed).
// Rounds:        log2 P' exchange rounds, P' = largest power of two <= P, plus 2 when P != P': with r = P - P',
//                among ranks 0..2r-1 every even rank sends x to rank + 1, which reduces x_{rank-1} (+) x_rank,
//                and sits out until it receives the result back after the doubling. The P' survivors
//                (new ranks: odd i < 2r -> i/2, i >= 2r -> i - r) exchange their whole vector with new rank
//                XOR 2^k; the operand from the lower ranks is always the left one, so every partial result is a
//                contiguous, ordered interval of ranks.
// Cost:          P = P': log2 P (alpha + m beta + m gamma); otherwise
//                (log2 P' + 2) (alpha + m beta) + (log2 P' + 1) m gamma   [Hockney; m = vector size]
// Memory:        tmp of 1 block (the received vector). One segment: in = out = tmp = 1 block.
// Example:       P = 3 (P' = 2, r = 1): rank 0 sends x0 to 1; rank 1: out = x0 (+) x1; ranks 1 and 2 exchange:
//                rank 1: out = out (+) x2, rank 2: out = (x0 (+) x1) (+) x2; rank 1 sends the result to 0.
#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

// MPICH's fold of P ranks onto P' = 2^d survivors.
struct Fold {
    int pof2 = 1, rem = 0;
    explicit Fold(int P) {
        while (pof2 * 2 <= P) pof2 *= 2;
        rem = P - pof2;
    }
    bool sits_out(int r) const { return r < 2 * rem && r % 2 == 0; }
    bool absorbs(int r) const { return r < 2 * rem && r % 2 == 1; }
    int new_rank(int r) const { return r < 2 * rem ? r / 2 : r - rem; }
    int real_rank(int nr) const { return nr < rem ? 2 * nr + 1 : nr + rem; }
};

void build_rank(Schedule& s, const Fold& f, int r) {
    RankBuilder b(s, r);
    const Segment in(Buf::in, 0, 1), out(Buf::out, 0, 1), tmp(Buf::tmp, 0, 1);
    if (f.sits_out(r)) {
        b.send(r + 1, 0, {in});
        b.recv(r + 1, 0, {out});
        return;
    }
    b.copy({in}, {out});
    if (f.absorbs(r)) {
        b.recv(r - 1, 0, {tmp});
        b.fence();
        b.reduce({tmp}, {out});  // x_{r-1} (+) x_r
    }
    const int nr = f.new_rank(r);
    for (int mask = 1; mask < f.pof2; mask <<= 1) {
        const int partner = f.real_rank(nr ^ mask);
        b.fence();
        b.send(partner, 0, {out});
        b.recv(partner, 0, {tmp});
        b.fence();
        b.reduce({tmp}, {out}, {}, partner < r ? 0 : opflag::reverse);
    }
    if (f.absorbs(r)) {
        b.fence();
        b.send(r - 1, 0, {out});
    }
}

Schedule generate(const Problem& p) {
    Schedule s(Collective::allreduce, p.ranks, 1, 1, 1);
    s.needs_commutative = false;
    const Fold f(p.ranks);
    for (int r = 0; r < p.ranks; ++r) build_rank(s, f, r);
    return s;
}

const Registration reg{{
    .name = "allreduce/recursive_doubling",
    .collective = Collective::allreduce,
    .summary = "log2 P' whole-vector exchanges (+2 steps when P is not a power of two), order-preserving",
    .source = "MPICH MPIR_Allreduce_intra_recursive_doubling; Thakur, Rabenseifner, Gropp (IJHPCA 2005)",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"hypercube", "full"},
}};

}  // namespace
}  // namespace collplan
