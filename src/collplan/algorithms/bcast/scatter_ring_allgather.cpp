// bcast/scatter_ring_allgather -- van de Geijn's broadcast: binomial scatter of P segments, then a ring allgather.
//
// Source:        Barnett, Gupta, Payne, Shuler, van de Geijn, Watts, "Interprocessor collective communication
//                library (InterCom)" (SHPCC 1994); Thakur, Rabenseifner, Gropp, "Optimization of collective
//                communication operations in MPICH" (IJHPCA 2005), sec. 4.2; MPICH
//                MPIR_Bcast_intra_scatter_ring_allgather (its choice for long messages or non-power-of-two P).
// Preconditions: any P >= 1, any root; any topology (the ring's neighbours r +- 1 embed in a ring with one hop).
// Rounds:        ceil(log2 P) scatter rounds (bcast/scatter.hpp: relative rank v ends with segment v), then P - 1
//                ring steps: in step i = 1..P-1 rank r sends segment (v - i + 1) mod P to r + 1 and receives
//                segment (v - i) mod P from r - 1.
// Cost:          ceil(log2 P) alpha + (P-1)/P n beta (scatter) + (P - 1) (alpha + n/P beta) (ring)
//                ~ (log2 P + P - 1) alpha + 2 (P-1)/P n beta   [Hockney; n = message bytes, P = 2^d]
// Memory:        no scratch; the message is S = P segments of out (m = n / P).
// Example:       P = 3, root 0: scatter: 0 sends out[2] to 2, then out[1] to 1; ring step 1: r sends out[r] to
//                r + 1, receives out[r-1] from r - 1; step 2: r sends out[r-1], receives out[r-2].
#include "collplan/algorithms/bcast/scatter.hpp"
#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    const int P = p.ranks;
    const BinomialTree t(P, p.root);
    const auto S = static_cast<uint32_t>(P);
    Schedule s(Collective::bcast, P, 0, S, 0, p.only_rank);
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        bcast_binomial_scatter(b, t, r);
        const int v = t.rel(r), right = (r + 1) % P, left = (r - 1 + P) % P;
        for (int i = 1; i < P; ++i) {
            b.fence();
            b.send(right, 0, {Segment(Buf::out, static_cast<uint32_t>((v - i + 1 + P) % P), 1)});
            b.recv(left, 0, {Segment(Buf::out, static_cast<uint32_t>((v - i + P) % P), 1)});
        }
    }
    return s;
}

const Registration reg{{
    .name = "bcast/scatter_ring_allgather",
    .collective = Collective::bcast,
    .summary = "binomial scatter of P segments, then a ring allgather (van de Geijn; MPICH long messages)",
    .source = "Barnett et al. (SHPCC 1994); Thakur, Rabenseifner, Gropp (IJHPCA 2005); MPICH",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"ring", "full"},
}};

}  // namespace
}  // namespace collplan
