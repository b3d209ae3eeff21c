// reduce/linear -- every rank sends its vector to the root, which combines them one at a time in rank order.
//
// Source:        Open MPI coll/basic ompi_coll_basic_reduce_lin_intra (receives from the highest rank down, so
//                that the result is x_0 (+) (x_1 (+) (... (+) x_{P-1})) for any operation).
// Preconditions: any P >= 1, any root; any topology; any operation (non-commutative ones too).
// Rounds:        P - 1 at the root (one receive and one reduction each; one scratch block serialises them).
// Cost:          (P - 1) (alpha + m beta + m gamma)   [Hockney]
// Memory:        tmp of 1 block at the root. S = 1: in = 1 block; out = 1 block at the root only.
// Example:       P = 3, root 0: rank 0 receives out = x2 from 2, then tmp = x1 from 1 and out = x1 (+) out, then
//                out = x0 (+) out; ranks 1 and 2 send in[0] to 0.
// Consistency:   rank-consistent (one rank computes the result).
#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    const int P = p.ranks;
    Schedule s(Collective::reduce, P, 1, 1, 1, p.only_rank);
    s.rank_consistent = true;
    const Segment in(Buf::in, 0, 1), out(Buf::out, 0, 1), tmp(Buf::tmp, 0, 1);
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        if (r != p.root) {
            b.send(p.root, 0, {in});
            continue;
        }
        if (P - 1 == r) b.copy({in}, {out});
        else b.recv(P - 1, 0, {out});
        for (int q = P - 2; q >= 0; --q) {
            b.fence();
            if (q == r) {
                b.reduce({in}, {out});
                continue;
            }
            b.recv(q, 0, {tmp});
            b.fence();
            b.reduce({tmp}, {out});  // x_q (+) (x_{q+1} (+) ...)
        }
    }
    return s;
}

const Registration reg{{
    .name = "reduce/linear",
    .collective = Collective::reduce,
    .summary = "every rank sends to the root, which reduces in rank order (any operation)",
    .source = "Open MPI coll/basic (linear reduce)",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"full"},
}};

}  // namespace
}  // namespace collplan
