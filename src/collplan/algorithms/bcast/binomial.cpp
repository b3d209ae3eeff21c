// bcast/binomial -- the binomial-tree broadcast over ranks relative to the root.
//
// Source:        MPICH MPIR_Bcast_intra_binomial; Thakur, Rabenseifner, Gropp, "Optimization of collective
//                communication operations in MPICH" (IJHPCA 2005), sec. 4.2 (short messages).
// Preconditions: any P >= 1, any root; any topology.
// Rounds:        ceil(log2 P). With relative rank v = (rank - root) mod P (algorithms/binomial.hpp), v > 0
//                receives the message from v - lowbit(v), then sends it to v + 2^j for 2^j < lowbit(v), largest
//                first; the root sends to 2^j for every 2^j < P. The root sends ceil(log2 P) messages; v > 0 at most
//                log2 lowbit(v) (its children below P).
// Cost:          ceil(log2 P) (alpha + n beta)   [Hockney; n = message bytes]
// Memory:        no scratch; the message is S = 1 block of out (bcast has no in: the root's out holds it).
// Example:       P = 6, root 2 (v = rank - 2 mod 6): rank 2 sends out[0] to v 4, 2, 1 = ranks 0, 4, 3;
//                rank 4 (v 2) receives from 2 and sends to v 3 = rank 5; rank 0 (v 4) receives from 2 and sends
//                to v 5 = rank 1.
#include "collplan/algorithms/binomial.hpp"
#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    const BinomialTree t(p.ranks, p.root);
    Schedule s(Collective::bcast, p.ranks, 0, 1, 0, p.only_rank);
    const Segment msg(Buf::out, 0, 1);
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        const int v = t.rel(r);
        if (v != 0) b.recv(t.real(t.parent(v)), 0, {msg});
        for (int mask : t.child_masks(v)) {
            b.fence();
            b.send(t.real(v + mask), 0, {msg});
        }
    }
    return s;
}

const Registration reg{{
    .name = "bcast/binomial",
    .collective = Collective::bcast,
    .summary = "binomial tree rooted at the root: ceil(log2 P) rounds of the whole message",
    .source = "MPICH MPIR_Bcast_intra_binomial; Thakur, Rabenseifner, Gropp (IJHPCA 2005)",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"hypercube", "full"},
    .mpi_default = true,
}};

}  // namespace
}  // namespace collplan
