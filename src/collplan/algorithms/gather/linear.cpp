// gather/linear -- every rank sends its contribution straight to the root.
//
// Source:        MPICH MPIR_Gather_intra_linear (used for large messages on some paths); Open MPI coll/basic
//                ompi_coll_basic_gather_intra.
// Preconditions: any P >= 1, any root; any topology.
// Rounds:        1; the root receives P - 1 messages (a one-port root serialises them).
// Cost:          (P - 1) (alpha + m beta) at a one-port root   [Hockney]
// Memory:        no scratch. in = 1 block, out = P blocks at the root only (MPI: recvbuf significant at root).
// Example:       P = 3, root 0: rank 0 copies in[0] -> out[0], receives out[1] from 1 and out[2] from 2; ranks 1
//                and 2 send in[0] to 0.
#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    const int P = p.ranks;
    Schedule s(Collective::gather, P, 1, static_cast<uint32_t>(P), 0, p.only_rank);
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        if (r != p.root) {
            b.send(p.root, 0, {Segment(Buf::in, 0, 1)});
            continue;
        }
        b.copy({Segment(Buf::in, 0, 1)}, {Segment(Buf::out, static_cast<uint32_t>(r), 1)});
        for (int k = 1; k < P; ++k) {
            const int q = (p.root + k) % P;
            b.recv(q, 0, {Segment(Buf::out, static_cast<uint32_t>(q), 1)});
        }
    }
    return s;
}

const Registration reg{{
    .name = "gather/linear",
    .collective = Collective::gather,
    .summary = "every rank sends its block straight to the root",
    .source = "MPICH MPIR_Gather_intra_linear; Open MPI coll/basic",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"full"},
}};

}  // namespace
}  // namespace collplan
