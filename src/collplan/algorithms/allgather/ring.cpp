// allgather/ring -- the ring (pipeline) allgather.
//
// Source:        MPICH MPIR_Allgather_intra_ring; Thakur, Rabenseifner, Gropp, "Optimization of collective
//                communication operations in MPICH" (IJHPCA 2005), sec. 4.1. Also the gossip paper's
//                "approach 1" in one direction.
// Preconditions: any P >= 1; any topology (neighbours on a ring or line embed with one hop).
// Rounds:        P - 1; in round k rank i sends block (i - k) mod P to i + 1 and receives block (i - k - 1) mod P
//                from i - 1.
// Cost:          (P - 1) (alpha + m beta)   [Hockney]
// Memory:        no scratch; works in the output buffer.
// Example:       P = 3, rank 0: copy in[0] -> out[0]; round 0: send out[0] to 1, recv out[2] from 2;
//                round 1: send out[2] to 1, recv out[1] from 2.
#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    const int P = p.ranks;
    Schedule s(Collective::allgather, P, 1, static_cast<uint32_t>(P), 0, p.only_rank);
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        b.copy({Segment(Buf::in, 0, 1)}, {Segment(Buf::out, static_cast<uint32_t>(r), 1)});
        const int right = (r + 1) % P, left = (r - 1 + P) % P;
        for (int k = 0; k < P - 1; ++k) {
            const auto send_block = static_cast<uint32_t>((r - k + P) % P);
            const auto recv_block = static_cast<uint32_t>((r - k - 1 + 2 * P) % P);
            b.fence();
            b.send(right, 0, {Segment(Buf::out, send_block, 1)});
            b.recv(left, 0, {Segment(Buf::out, recv_block, 1)});
        }
    }
    return s;
}

const Registration reg{{
    .name = "allgather/ring",
    .collective = Collective::allgather,
    .summary = "P-1 rounds, each rank passes one block to its right neighbour",
    .source = "MPICH MPIR_Allgather_intra_ring; Thakur, Rabenseifner, Gropp (IJHPCA 2005)",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"ring", "full"},
    .mpi_default = true,
    .symmetry = cyclic_symmetry,
}};

}  // namespace
}  // namespace collplan
