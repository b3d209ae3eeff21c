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
//                digit s, and combines the k vectors in digit order (lower digits on the left): afterwards it
//                holds a contiguous, ordered interval of k^(s+1) new ranks. Unfold: the survivors send the
//                result back to the ranks they absorbed.
// Cost:          d [ (k-1) (alpha + n beta) + (k-1) n gamma ] on one port (d [alpha + n beta + (k-1) n gamma] with
//                k-1 ports), plus 2 (alpha + n beta) + (k-1) n gamma when P != k^d   [Hockney; n = vector bytes]
// Memory:        tmp of k-1 blocks (the received vectors); one segment: in = out = 1 block.
// Example:       P = 10, k = 3 (P' = 9, r = 1): rank 1 absorbs x0 (x0 (+) x1) and becomes new rank 0, ranks 2..9
//                new ranks 1..8; step 0: new ranks {0,1,2} exchange, step 1: {0,3,6}; rank 1 sends the result to 0.
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

// Step s of the exchange: send to the k-1 partners, receive into tmp, combine in digit order.
void exchange(RankBuilder& b, const Fold& f, int nr, int64_t place) {
    const Segment out(Buf::out, 0, 1);
    const int digit = static_cast<int>(nr / place % f.k);
    std::vector<int> partners;  // digits other than ours, in increasing order
    for (int t = 0; t < f.k; ++t)
        if (t != digit) partners.push_back(t);
    auto partner = [&](int t) { return f.real_rank(static_cast<int>(nr + (t - digit) * place)); };
    b.fence();
    for (int t : partners) b.send(partner(t), 0, {out});
    for (size_t i = 0; i < partners.size(); ++i)
        b.recv(partner(partners[i]), 0, {Segment(Buf::tmp, static_cast<uint32_t>(i), 1)});
    for (size_t i = 0; i < partners.size(); ++i)  // higher digits: out = out (+) v, increasing
        if (partners[i] > digit) {
            b.fence();
            b.reduce({Segment(Buf::tmp, static_cast<uint32_t>(i), 1)}, {out}, {}, opflag::reverse);
        }
    for (size_t i = partners.size(); i-- > 0;)  // lower digits: out = v (+) out, decreasing
        if (partners[i] < digit) {
            b.fence();
            b.reduce({Segment(Buf::tmp, static_cast<uint32_t>(i), 1)}, {out});
        }
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
    Schedule s(Collective::allreduce, p.ranks, 1, 1, static_cast<uint32_t>(f.k - 1));
    s.needs_commutative = false;
    for (int r = 0; r < p.ranks; ++r) build_rank(s, f, r);
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
}};

}  // namespace
}  // namespace collplan
