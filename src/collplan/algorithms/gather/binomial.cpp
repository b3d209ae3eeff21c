// gather/binomial -- the binomial-tree gather over ranks relative to the root: each rank forwards its whole
// subtree's blocks to its parent in one message.
//
// Source:        MPICH MPIR_Gather_intra_binomial; Thakur, Rabenseifner, Gropp, "Optimization of collective
//                communication operations in MPICH" (IJHPCA 2005), sec. 4.3.
// Preconditions: any P >= 1, any root; any topology.
// Rounds:        ceil(log2 P). With relative rank v = (rank - root) mod P (algorithms/binomial.hpp), v receives
//                from its children v + 2^j (2^j < lowbit(v), smallest first) their subtrees' blocks
//                [v + 2^j, v + 2^j + span), then sends its own block and all those to v - lowbit(v) in one
//                message. The root receives ceil(log2 P) messages straight into out (a subtree that wraps past
//                out's end is two segments, as MPICH's struct datatype), P - 1 blocks in all.
// Cost:          ceil(log2 P) alpha + (P-1)/P n beta at the root   [Hockney; n = P m the bytes gathered]
// Memory:        tmp of max_child_span - 1 blocks at non-roots (<= P/2): v's subtree without its own block,
//                relative block v + i at tmp[i - 1]; in = 1 block, out = P blocks at the root only.
// Example:       P = 6, root 0: 1 -> 0 in[0]; 3 -> 2 in[0]; 5 -> 4 in[0]; 2 receives tmp[0] from 3, sends
//                {in[0], tmp[0]} to 0; 4 likewise with 5; 0 copies in[0] -> out[0], receives out[1] from 1,
//                out[2..3] from 2, out[4..5] from 4.
#include "collplan/algorithms/binomial.hpp"
#include "collplan/algorithms/registry.hpp"

#include <algorithm>
#include <vector>

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    const int P = p.ranks;
    const BinomialTree t(P, p.root);
    const auto uP = static_cast<uint32_t>(P);
    const auto tmp_blocks = static_cast<uint32_t>(std::max(0, t.max_child_span() - 1));
    Schedule s(Collective::gather, P, 1, uP, tmp_blocks, p.only_rank);
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        const int v = t.rel(r);
        std::vector<int> masks = t.child_masks(v);
        std::reverse(masks.begin(), masks.end());  // MPICH receives the smallest subtree first
        if (v == 0) b.copy({Segment(Buf::in, 0, 1)}, {Segment(Buf::out, static_cast<uint32_t>(r), 1)});
        for (int mask : masks) {
            const int u = v + mask;
            const auto n = static_cast<uint32_t>(t.span(u));
            b.fence();
            if (v == 0)
                b.recv(t.real(u), 0, cyclic_segments(Buf::out, static_cast<uint32_t>(t.real(u)), n, uP));
            else
                b.recv(t.real(u), 0, {Segment(Buf::tmp, static_cast<uint32_t>(mask - 1), n)});
        }
        if (v == 0) continue;
        std::vector<Segment> data{Segment(Buf::in, 0, 1)};
        if (t.span(v) > 1) data.push_back(Segment(Buf::tmp, 0, static_cast<uint32_t>(t.span(v) - 1)));
        b.fence();
        b.send(t.real(t.parent(v)), 0, data);
    }
    return s;
}

const Registration reg{{
    .name = "gather/binomial",
    .collective = Collective::gather,
    .summary = "binomial tree towards the root: ceil(log2 P) rounds, subtrees forwarded in one message",
    .source = "MPICH MPIR_Gather_intra_binomial; Thakur, Rabenseifner, Gropp (IJHPCA 2005)",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"hypercube", "full"},
    .mpi_default = true,
}};

}  // namespace
}  // namespace collplan
