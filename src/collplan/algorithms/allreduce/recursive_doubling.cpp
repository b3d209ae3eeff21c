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
//                rank 1: out = out (+) x2, rank 2 (sends x2 from `in`, then out = x2): out = (x0 (+) x1) (+) x2;
//                rank 1 sends the result to 0. A rank outside the fold copies in -> out only after its first
//                exchange (not before it), so a non-blocking start posts messages at once.
// Consistency:   rank-consistent (Schedule::rank_consistent): the two partners of a step hold the same expression
//                for their intervals and both compute (lower) (+) (upper); folded ranks get the result sent.
#include "collplan/algorithms/allreduce/fold.hpp"
#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

void build_rank(Schedule& s, const Fold& f, int r) {
    RankBuilder b(s, r);
    const Segment in(Buf::in, 0, 1), out(Buf::out, 0, 1), tmp(Buf::tmp, 0, 1);
    // A rank outside the fold sends its own vector in the first exchange straight from `in` and copies it to `out`
    // only once that exchange is done: a non-blocking run's start then posts its messages without copying the
    // vector first, and the copy happens in the calls that advance the run (overlapped with the program's work).
    const bool direct = !f.sits_out(r) && !f.absorbs(r) && f.pof2 > 1;
    if (!direct && !f.fold_in(b, r, in, out, tmp)) return;
    const int nr = f.new_rank(r);
    for (int mask = 1; mask < f.pof2; mask <<= 1) {
        const int partner = f.real_rank(nr ^ mask);
        const bool first = direct && mask == 1;
        b.fence();
        b.send(partner, 0, {first ? in : out});
        b.recv(partner, 0, {tmp});
        b.fence();
        if (first) {
            b.copy({in}, {out});
            b.fence();
        }
        b.reduce({tmp}, {out}, {}, partner < r ? 0 : opflag::reverse);
    }
    f.fold_out(b, r, out);
}

Schedule generate(const Problem& p) {
    Schedule s(Collective::allreduce, p.ranks, 1, 1, 1, p.only_rank);
    s.needs_commutative = false;
    s.rank_consistent = true;  // both partners compute (lower interval) (+) (upper interval)
    const Fold f(p.ranks);
    for (int r : p.build_ranks()) build_rank(s, f, r);
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
    .mpi_default = true,
    .symmetry = xor_symmetry,
}};

}  // namespace
}  // namespace collplan
