// scatter/binomial -- the binomial-tree scatter over ranks relative to the root: each rank receives its whole
// subtree's blocks from its parent in one message and passes the children's parts on.
//
// Source:        MPICH MPIR_Scatter_intra_binomial; Thakur, Rabenseifner, Gropp, "Optimization of collective
//                communication operations in MPICH" (IJHPCA 2005), sec. 4.3.
// Preconditions: any P >= 1, any root; any topology.
// Rounds:        ceil(log2 P). With relative rank v = (rank - root) mod P (algorithms/binomial.hpp), v receives
//                the blocks of [v, v + span(v)) from v - lowbit(v) -- its own into out[0], the rest into tmp --
//                then sends child v + 2^j (2^j < lowbit(v), largest first) the blocks of its subtree. The root
//                sends ceil(log2 P) messages straight from in (a subtree that wraps past in's end is two segments;
//                MPICH copies in to a rotated tmp first when root != 0), P - 1 blocks in all, then copies its own.
//                MPICH receives a forwarding rank's own block into tmp and copies it out; here it lands in out[0].
// Cost:          ceil(log2 P) alpha + (P-1)/P n beta at the root   [Hockney; n = P m the bytes scattered]
// Memory:        tmp of max_child_span - 1 blocks at non-roots (<= P/2): relative block v + i at tmp[i - 1];
//                in = P blocks at the root only, out = 1 block.
// Example:       P = 6, root 0: 0 sends in[4..5] to 4, in[2..3] to 2, in[1] to 1, copies in[0] -> out[0];
//                2 receives {out[0], tmp[0]} and sends tmp[0] to 3; 4 likewise to 5; 1, 3, 5 receive out[0].
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
    Schedule s(Collective::scatter, P, uP, 1, tmp_blocks, p.only_rank);
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        const int v = t.rel(r);
        if (v != 0) {
            std::vector<Segment> data{Segment(Buf::out, 0, 1)};
            if (t.span(v) > 1) data.push_back(Segment(Buf::tmp, 0, static_cast<uint32_t>(t.span(v) - 1)));
            b.recv(t.real(t.parent(v)), 0, data);
        }
        for (int mask : t.child_masks(v)) {
            const int u = v + mask;
            const auto n = static_cast<uint32_t>(t.span(u));
            b.fence();
            if (v == 0)
                b.send(t.real(u), 0, cyclic_segments(Buf::in, static_cast<uint32_t>(t.real(u)), n, uP));
            else
                b.send(t.real(u), 0, {Segment(Buf::tmp, static_cast<uint32_t>(mask - 1), n)});
        }
        if (v == 0) b.copy({Segment(Buf::in, static_cast<uint32_t>(r), 1)}, {Segment(Buf::out, 0, 1)});
    }
    return s;
}

const Registration reg{{
    .name = "scatter/binomial",
    .collective = Collective::scatter,
    .summary = "binomial tree from the root: ceil(log2 P) rounds, subtrees' blocks sent in one message",
    .source = "MPICH MPIR_Scatter_intra_binomial; Thakur, Rabenseifner, Gropp (IJHPCA 2005)",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"hypercube", "full"},
    .mpi_default = true,
}};

}  // namespace
}  // namespace collplan
