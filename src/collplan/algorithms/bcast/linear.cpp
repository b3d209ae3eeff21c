// bcast/linear -- the root sends the whole message to every other rank.
//
// Source:        Open MPI coll/basic ompi_coll_basic_bcast_lin_intra; the baseline every tree improves on.
// Preconditions: any P >= 1, any root; any topology.
// Rounds:        1 at the others, P - 1 sends at the root (posted together; a one-port root serialises them).
// Cost:          (P - 1) (alpha + m beta) at a one-port root   [Hockney]
// Memory:        no scratch; the message is S = 1 block of out (bcast has no in: the root's out holds it).
// Example:       P = 3, root 1: rank 1 sends out[0] to 0 and to 2; ranks 0 and 2 receive out[0] from 1.
#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    const int P = p.ranks;
    Schedule s(Collective::bcast, P, 0, 1, 0, p.only_rank);
    const Segment msg(Buf::out, 0, 1);
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        if (r != p.root) {
            b.recv(p.root, 0, {msg});
            continue;
        }
        for (int k = 1; k < P; ++k) b.send((p.root + k) % P, 0, {msg});
    }
    return s;
}

const Registration reg{{
    .name = "bcast/linear",
    .collective = Collective::bcast,
    .summary = "the root sends the message to each rank in turn",
    .source = "Open MPI coll/basic (linear bcast)",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"full"},
}};

}  // namespace
}  // namespace collplan
