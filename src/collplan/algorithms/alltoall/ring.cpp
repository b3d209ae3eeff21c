// alltoall/ring -- the shifted-ring all-to-all: in step k every rank sends to the rank k places to its right.
//
// Source:        the "ring" baseline of the A2AT study (IPSJ SIG-HPC 2010-HPC-126 No.14; its text is unreadable, the
//                algorithm is the usual shifted exchange); Open MPI's coll_tuned "pairwise" alltoall uses the same
//                partners for every P, MPICH's pairwise alltoall for P not a power of two.
// Preconditions: any P >= 1; any topology. On a torus with row-major ranks every step is a shift by the same
//                offset, so each ring carries traffic in one direction only (what makes it the slow baseline of
//                the A2AT study).
// Rounds:        P - 1; step k = 1..P-1 is one group: send in[(r + k) mod P] to (r + k) mod P, receive
//                out[(r - k) mod P] from (r - k) mod P. The local block in[r] -> out[r] is copied in step 1.
// Cost:          (P - 1) (alpha + m beta)   [Hockney; link contention is the simulators' business]
// Memory:        no scratch; P (2P - 1) ops, 2P - 1 per rank.
// Example:       P = 3, rank 0: copy in[0] -> out[0]; step 1: send in[1] to 1, recv out[2] from 2;
//                step 2: send in[2] to 2, recv out[1] from 1.
#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    const int P = p.ranks;
    const auto uP = static_cast<uint32_t>(P);
    Schedule s(Collective::alltoall, P, uP, uP, 0, p.only_rank);
    for (int r : p.build_ranks()) {
        RankProgram& prog = s.program_mut(r);
        prog.ops.reserve(2 * static_cast<size_t>(P) - 1);
        prog.segs.reserve(2 * static_cast<size_t>(P));
        RankBuilder b(s, r);
        const auto ur = static_cast<uint32_t>(r);
        b.copy({Segment(Buf::in, ur, 1)}, {Segment(Buf::out, ur, 1)});
        for (int k = 1; k < P; ++k) {
            const int to = (r + k) % P, from = (r - k + P) % P;
            if (k > 1) b.fence();
            b.send(to, 0, {Segment(Buf::in, static_cast<uint32_t>(to), 1)});
            b.recv(from, 0, {Segment(Buf::out, static_cast<uint32_t>(from), 1)});
        }
    }
    return s;
}

const Registration reg{{
    .name = "alltoall/ring",
    .collective = Collective::alltoall,
    .summary = "P-1 shift steps: step k sends to r+k and receives from r-k",
    .source = "ring baseline of the A2AT study (IPSJ SIG-HPC 2010); Open MPI coll_tuned pairwise",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"ring", "torus2d", "full"},
    .symmetry = cyclic_symmetry,
}};

}  // namespace
}  // namespace collplan
