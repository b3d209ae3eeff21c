// allreduce/ring -- ring reduce-scatter followed by ring allgather (bandwidth-optimal for large vectors).
//
// Source:        Patarasuk, Yuan, "Bandwidth optimal all-reduce algorithms for clusters of workstations"
//                (JPDC 2009); MPICH MPIR_Allreduce_intra_ring; the ring allreduce of Baidu / Horovod / NCCL.
// Preconditions: any P >= 1; any topology (neighbours on a ring or line embed with one hop); commutative
//                operation (segment s is reduced in the rotated order x_s, x_{s+1}, ..., x_{s-1}).
// Rounds:        2 (P - 1). Reduce-scatter step k = 0..P-2: rank i sends out[(i - k) mod P] (step 0: in[i]) to
//                i + 1, receives segment (i - k - 1) mod P from i - 1 into tmp, copies in -> out for that segment
//                and reduces tmp into it (no copy before the first message); afterwards rank i holds
//                the full segment (i + 1) mod P. Allgather step k: send out[(i + 1 - k) mod P] to i + 1, receive
//                out[(i - k) mod P] from i - 1.
// Cost:          2 (P - 1) alpha + 2 (P - 1)/P n beta + (P - 1)/P n gamma, n = P m the vector size   [Hockney]
// Memory:        tmp of 1 segment. S = P segments: in = out = P blocks.
// Example:       P = 2, rank 0: send in[0] to 1, recv tmp = x1[1] from 1; out[1] = x0[1], out[1] = x1[1] (+) out[1];
//                send out[1] to 1, recv out[0] (= x0 (+) x1 seg 0) from 1.
// Consistency:   rank-consistent: each segment is reduced once, along the ring, and the allgather only copies it.
#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

void build_rank(Schedule& s, int r) {
    const int P = s.ranks();
    const auto seg = [P](int i) { return static_cast<uint32_t>(((i % P) + P) % P); };
    RankBuilder b(s, r);
    const int right = (r + 1) % P, left = (r - 1 + P) % P;
    const Segment tmp(Buf::tmp, 0, 1);
    if (P == 1) b.copy({Segment(Buf::in, 0, 1)}, {Segment(Buf::out, 0, 1)});
    // Nothing is copied before the first message: step 0 sends the rank's own segment straight from `in` (it is
    // never reduced here), and each segment reaches `out` just before the step that reduces into it -- in the
    // calls that advance a non-blocking run, not in its start.
    for (int k = 0; k < P - 1; ++k) {
        const uint32_t into = seg(r - k - 1);
        b.fence();
        b.send(right, 0, {Segment(k == 0 ? Buf::in : Buf::out, seg(r - k), 1)});
        b.recv(left, 0, {tmp});
        b.fence();
        b.copy({Segment(Buf::in, into, 1)}, {Segment(Buf::out, into, 1)});
        b.fence();
        b.reduce({tmp}, {Segment(Buf::out, into, 1)});
    }
    for (int k = 0; k < P - 1; ++k) {
        b.fence();
        b.send(right, 0, {Segment(Buf::out, seg(r + 1 - k), 1)});
        b.recv(left, 0, {Segment(Buf::out, seg(r - k), 1)});
    }
}

Schedule generate(const Problem& p) {
    const auto S = static_cast<uint32_t>(p.ranks);
    Schedule s(Collective::allreduce, p.ranks, S, S, 1, p.only_rank);
    s.needs_commutative = true;
    s.rank_consistent = true;
    for (int r : p.build_ranks()) build_rank(s, r);
    return s;
}

const Registration reg{{
    .name = "allreduce/ring",
    .collective = Collective::allreduce,
    .summary = "ring reduce-scatter + ring allgather over P segments, 2(P-1) rounds (commutative ops)",
    .source = "Patarasuk, Yuan (JPDC 2009); MPICH MPIR_Allreduce_intra_ring",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"ring", "full"},
    .symmetry = cyclic_symmetry,
}};

}  // namespace
}  // namespace collplan
