// allgatherv/ring -- the ring allgather with contributions of any size: every contribution travels P - 1 hops
// to the right, each rank forwarding what it received in the step before.
//
// Source:        MPICH MPIR_Allgatherv_intra_ring (MPICH's choice for long messages); Thakur, Rabenseifner,
//                Gropp, "Optimization of collective communication operations in MPICH" (IJHPCA 2005), sec. 4.1.
//                MPICH also cuts each message into pipeline chunks of MPIR_CVAR_ALLGATHERV_PIPELINE_MSG_SIZE;
//                this schedule sends each contribution whole.
// Preconditions: any P >= 1, any counts (zeros too); any topology (neighbours on a ring or line embed with one
//                hop).
// Rounds:        P - 1; in step k rank r sends out[(r - k) mod P] to r + 1 and receives out[(r - k - 1) mod P]
//                from r - 1. Empty contributions are not sent.
// Cost:          (P - 1) alpha + (n - counts[r]) m beta received by rank r, n = sum of counts   [Hockney; with
//                uneven counts each step waits for the largest contribution on the move]
// Memory:        no scratch; works in the output buffer. in = 1 block (counts[r] units), out = P blocks.
// Example:       P = 3, counts = (2, 0, 1), rank 0: copy in[0] -> out[0] (2 units); step 0: send out[0] to 1,
//                recv out[2] (1 unit) from 2; step 1: (out[2] only, out[1] is empty) send out[2] to 1.
#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    const int P = p.ranks;
    Schedule s(Collective::allgatherv, P, 1, static_cast<uint32_t>(P), 0, p.only_rank);
    const Segment in(Buf::in, 0, 1);
    const auto units = [&](int q) { return p.counts[static_cast<size_t>(q)]; };
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        const Segment at(Buf::out, static_cast<uint32_t>(r), 1);
        if (units(r)) b.copy({&in, 1}, {&at, 1}, {}, units(r));
        const int right = (r + 1) % P, left = (r - 1 + P) % P;
        for (int k = 0; k + 1 < P; ++k) {
            const int give = (r - k + P) % P, take = (r - k - 1 + 2 * P) % P;
            const Segment sent(Buf::out, static_cast<uint32_t>(give), 1), got(Buf::out, static_cast<uint32_t>(take), 1);
            b.fence();
            if (units(give)) b.send(right, 0, {&sent, 1}, {}, units(give));
            if (units(take)) b.recv(left, 0, {&got, 1}, {}, units(take));
        }
    }
    return s;
}

const Registration reg{{
    .name = "allgatherv/ring",
    .collective = Collective::allgatherv,
    .summary = "P-1 steps, each rank forwards to its right neighbour the contribution it received last",
    .source = "MPICH MPIR_Allgatherv_intra_ring; Thakur, Rabenseifner, Gropp (IJHPCA 2005)",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"ring", "full"},
    .mpi_default = true,
    .symmetry = cyclic_if_even,
}};

}  // namespace
}  // namespace collplan
