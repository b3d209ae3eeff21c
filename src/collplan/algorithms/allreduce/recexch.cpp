// allreduce/recexch -- recursive exchange (k-nomial recursive multiplying) allreduce, exact for non-commutative
// operations.
//
// Source:        MPICH MPIR_Allreduce_intra_recexch (the whole-vector variant); Sack, Gropp, "Collective
//                algorithms for multiported torus networks" (ACM TOPC 2015), recursive multiplying. The fold of
//                the extra ranks below is this file's own (MPICH folds differently); it keeps rank order.
// Preconditions: any P >= 1; radix k = 2..32; any topology; any operation (needs_commutative = false).
// Rounds:        d = floor(log_k P) exchange steps, plus 2 when P != k^d. Fold: with P' = k^d and r = P - P',
//                the first r + ceil(r / (k-1)) ranks form groups of up to k consecutive ranks; the last rank of
//                each group receives the vectors of the others (its left neighbours) and combines them in rank
//                order; the P' survivors get new ranks 0..P'-1 in rank order. Step s = 0..d-1: a survivor
//                exchanges its vector with the k-1 survivors whose new rank differs from its own only in base-k
//                digit s, and combines the k vectors v_0 .. v_{k-1} (v_t from the survivor with digit t) left to
//                right, ((v_0 (+) v_1) (+) v_2) (+) ..., whatever its own digit: a survivor with digit d first
//                accumulates v_0 .. v_{d-1} in the tmp block of v_0, then adds its own vector and those above it
//                (k - 1 reductions in every case). Afterwards it holds a contiguous, ordered interval of k^(s+1)
//                new ranks, as the same expression as every other survivor of its group. Unfold: the survivors
//                send the result back to the ranks they absorbed.
// Cost:          d [ (k-1) (alpha + n beta) + (k-1) n gamma ] on one port (d [alpha + n beta + (k-1) n gamma] with
//                k-1 ports), plus 2 (alpha + n beta) + (k-1) n gamma when P != k^d   [Hockney; n = vector bytes]
// Memory:        tmp of k-1 blocks (the received vectors); one segment: in = out = 1 block.
// Example:       P = 10, k = 3 (P' = 9, r = 1): rank 1 absorbs x0 (x0 (+) x1) and becomes new rank 0, ranks 2..9
//                new ranks 1..8; step 0: new ranks {0,1,2} exchange, step 1: {0,3,6}; rank 1 sends the result to 0.
//                P = 3, k = 3, rank 2 (digit 2): tmp[0] = tmp[0] (+) tmp[1] = x0 (+) x1, out = tmp[0] (+) x2:
//                ((x0 (+) x1) (+) x2), as on ranks 0 and 1.
// Consistency:   rank-consistent: every survivor of a step's group computes the same left-to-right expression;
//                a fold group's vector is combined by its survivor only.
#include "collplan/algorithms/registry.hpp"

#include <algorithm>

namespace collplan {
namespace {

struct Fold {
    int k = 2, pk = 1, steps = 0, groups = 0, folded = 0;  // folded = ranks in groups (r + groups)
    Fold(int P, int radix) : k(radix) {
        while (static_cast<int64_t>(pk) * k <= P) pk *= k, ++steps;
        const int rem = P - pk;
        groups = (rem + k - 2) / (k - 1);
        folded = rem + groups;
    }
    int survivor_of(int r) const { return r >= folded ? r : std::min((r / k + 1) * k, folded) - 1; }
    bool absorbed(int r) const { return survivor_of(r) != r; }
    int first_of_group(int r) const { return r >= folded ? r : r / k * k; }  // r a survivor
    int new_rank(int r) const { return r >= folded ? r - folded + groups : r / k; }
    int real_rank(int nr) const { return nr >= groups ? nr - groups + folded : std::min((nr + 1) * k, folded) - 1; }
};

// Step s of the exchange: send to the k-1 partners, receive v_t into tmp, combine ((v_0 (+) v_1) (+) ...) (+)
// v_{k-1} left to right; our own v_digit is in out.
void exchange(RankBuilder& b, const Fold& f, int nr, int64_t place) {
    const Segment out(Buf::out, 0, 1);
    const int digit = static_cast<int>(nr / place % f.k);
    auto partner = [&](int t) { return f.real_rank(static_cast<int>(nr + (t - digit) * place)); };
    auto got = [&](int t) { return Segment(Buf::tmp, static_cast<uint32_t>(t < digit ? t : t - 1), 1); };  // v_t
    b.fence();
    for (int t = 0; t < f.k; ++t)
        if (t != digit) b.send(partner(t), 0, {out});
    for (int t = 0; t < f.k; ++t)
        if (t != digit) b.recv(partner(t), 0, {got(t)});
    for (int t = 1; t < digit; ++t) b.fence().reduce({got(t)}, {got(0)}, {}, opflag::reverse);  // v_0 .. v_t
    if (digit > 0) b.fence().reduce({got(0)}, {out});  // (v_0 .. v_{digit-1}) (+) v_digit
    for (int t = digit + 1; t < f.k; ++t) b.fence().reduce({got(t)}, {out}, {}, opflag::reverse);
}

void build_rank(Schedule& s, const Fold& f, int r) {
    RankBuilder b(s, r);
    const Segment in(Buf::in, 0, 1), out(Buf::out, 0, 1);
    if (f.absorbed(r)) {
        b.send(f.survivor_of(r), 0, {in});
        b.recv(f.survivor_of(r), 0, {out});
        return;
    }
    b.copy({in}, {out});
    const int first = f.first_of_group(r);
    for (int q = first; q < r; ++q) b.recv(q, 0, {Segment(Buf::tmp, static_cast<uint32_t>(q - first), 1)});
    for (int q = r - 1; q >= first; --q) {  // x_q (+) (x_{q+1} .. x_r), right to left
        b.fence();
        b.reduce({Segment(Buf::tmp, static_cast<uint32_t>(q - first), 1)}, {out});
    }
    int64_t place = 1;
    for (int step = 0; step < f.steps; ++step, place *= f.k) exchange(b, f, f.new_rank(r), place);
    b.fence();
    for (int q = first; q < r; ++q) b.send(q, 0, {out});
}

Schedule generate(const Problem& p) {
    const Fold f(p.ranks, static_cast<int>(p.params.integer("k")));
    Schedule s(Collective::allreduce, p.ranks, 1, 1, static_cast<uint32_t>(f.k - 1), p.only_rank);
    s.needs_commutative = false;
    s.rank_consistent = true;
    for (int r : p.build_ranks()) build_rank(s, f, r);
    return s;
}

const Registration reg{{
    .name = "allreduce/recexch",
    .collective = Collective::allreduce,
    .summary = "recursive exchange, radix k: floor(log_k P) whole-vector exchanges among k (+2 fold steps), ordered",
    .source = "MPICH MPIR_Allreduce_intra_recexch; Sack, Gropp (ACM TOPC 2015)",
    .params = {{"k", ParamKind::integer, "2", 2, 32, "radix: group size of each exchange step"}},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"full"},
    .sweep_params = {{{"k", "2"}}, {{"k", "3"}}, {{"k", "4"}}, {{"k", "5"}}, {{"k", "8"}}},
    .candidates = [](const CandidateQuery& q) { return range_candidates("k", 2, std::clamp(q.ranks, 2, 8)); },
    .symmetry = [](const Problem& p) { return p.params.integer("k") == 2 ? xor_symmetry(p) : Symmetry::none; },
}};

}  // namespace
}  // namespace collplan
