// scatter/linear -- the root sends every rank its block directly.
//
// Source:        Open MPI coll/basic ompi_coll_basic_scatter_intra; MPICH's linear scatter.
// Preconditions: any P >= 1, any root; any topology.
// Rounds:        1; the root sends P - 1 messages (a one-port root serialises them).
// Cost:          (P - 1) (alpha + m beta) at a one-port root   [Hockney]
// Memory:        no scratch. in = P blocks at the root only (MPI: sendbuf significant at root), out = 1 block.
// Example:       P = 3, root 2: rank 2 sends in[0] to 0, in[1] to 1 and copies in[2] -> out[0]; ranks 0 and 1
//                receive out[0] from 2.
#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    const int P = p.ranks;
    Schedule s(Collective::scatter, P, static_cast<uint32_t>(P), 1, 0, p.only_rank);
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        if (r != p.root) {
            b.recv(p.root, 0, {Segment(Buf::out, 0, 1)});
            continue;
        }
        for (int k = 1; k < P; ++k) {
            const int q = (p.root + k) % P;
            b.send(q, 0, {Segment(Buf::in, static_cast<uint32_t>(q), 1)});
        }
        b.copy({Segment(Buf::in, static_cast<uint32_t>(r), 1)}, {Segment(Buf::out, 0, 1)});
    }
    return s;
}

const Registration reg{{
    .name = "scatter/linear",
    .collective = Collective::scatter,
    .summary = "the root sends each rank its block directly",
    .source = "Open MPI coll/basic; MPICH linear scatter",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"full"},
}};

}  // namespace
}  // namespace collplan
