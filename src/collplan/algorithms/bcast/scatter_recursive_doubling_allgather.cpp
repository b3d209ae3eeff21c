// bcast/scatter_recursive_doubling_allgather -- van de Geijn's broadcast: binomial scatter of P segments, then a
// recursive-doubling allgather over the relative ranks.
//
// Source:        Barnett, Gupta, Payne, Shuler, van de Geijn, Watts, "Interprocessor collective communication
//                library (InterCom)" (SHPCC 1994); Thakur, Rabenseifner, Gropp, "Optimization of collective
//                communication operations in MPICH" (IJHPCA 2005), sec. 4.2; MPICH
//                MPIR_Bcast_intra_scatter_recursive_doubling_allgather (its choice for medium messages, P = 2^d).
// Preconditions: any P >= 1, any root; any topology (on a hypercube every exchange is one hop when root = 0).
// Rounds:        ceil(log2 P) scatter rounds (bcast/scatter.hpp: relative rank v ends with segment v), then
//                ceil(log2 P) exchange steps, plus the repair sends below when P != 2^d. Step i (mask M = 2^i):
//                v exchanges with w = v XOR M, sending the segments of its aligned group [v/M*M, +M) and
//                receiving w's group (both clipped to P). MPICH's repair for P != 2^d: when w's group lies past
//                P (w >= P for some members of v's group), the group members that did exchange (the first
//                c = P - g - M of the group [g, g + M)) pass the upper group's segments [g + M, P) on to the
//                others along a binomial tree inside the group, masks M/2, M/4, ..., 1.
// Cost:          2 log2 P alpha + 2 (P-1)/P n beta for P = 2^d   [Hockney; n = message bytes]
// Memory:        no scratch; the message is S = P segments of out (m = n / P).
// Example:       P = 5, root 0: scatter: 0 -> 4 out[4], 0 -> 2 out[2..3], 0 -> 1 out[1], 2 -> 3 out[3];
//                step M = 1: 0 <-> 1, 2 <-> 3; M = 2: 0 <-> 2 (out[0..1] for out[2..3]), 1 <-> 3; M = 4: 0 <-> 4
//                (out[0..3] for out[4]), then the repair inside group [0, 4) (c = 1): 0 -> 2, 0 -> 1, 2 -> 3,
//                each out[4].
#include "collplan/algorithms/bcast/scatter.hpp"
#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

// The segments of relative ranks [lo, min(hi, P)).
Segment group(int lo, int hi, int P) {
    return Segment(Buf::out, static_cast<uint32_t>(lo), static_cast<uint32_t>(std::min(hi, P) - lo));
}

// MPICH's repair: the first `done` members of the group [g, g + M) hold the upper group's segments [g + M, P);
// they pass them on along a binomial tree inside the group.
void repair(RankBuilder& b, const BinomialTree& t, int v, int g, int M) {
    const int P = t.P, done = P - g - M;
    if (done <= 0) return;
    const Segment upper = group(g + M, P, P);
    for (int half = M / 2; half > 0; half /= 2) {
        const int sub = v / (2 * half) * (2 * half);  // v's group of 2 * half inside [g, g + M)
        const int w = v ^ half;
        const bool has = v < sub + done, w_has = w < sub + done;
        if (w > v && has && !w_has) {
            b.fence();
            b.send(t.real(w), 0, {upper});
        } else if (w < v && w_has && !has) {
            b.fence();
            b.recv(t.real(w), 0, {upper});
        }
    }
}

Schedule generate(const Problem& p) {
    const int P = p.ranks;
    const BinomialTree t(P, p.root);
    const auto S = static_cast<uint32_t>(P);
    Schedule s(Collective::bcast, P, 0, S, 0, p.only_rank);
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        bcast_binomial_scatter(b, t, r);
        const int v = t.rel(r);
        for (int M = 1; M < P; M *= 2) {
            const int w = v ^ M, g = v / M * M, wg = w / M * M;
            if (w < P) {
                b.fence();
                b.send(t.real(w), 0, {group(g, g + M, P)});
                b.recv(t.real(w), 0, {group(wg, wg + M, P)});
            }
            if (wg + M > P) repair(b, t, v, g, M);
        }
    }
    return s;
}

const Registration reg{{
    .name = "bcast/scatter_recursive_doubling_allgather",
    .collective = Collective::bcast,
    .summary = "binomial scatter of P segments, then a recursive-doubling allgather (van de Geijn; MPICH medium)",
    .source = "Barnett et al. (SHPCC 1994); Thakur, Rabenseifner, Gropp (IJHPCA 2005); MPICH",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"hypercube", "full"},
}};

}  // namespace
}  // namespace collplan
