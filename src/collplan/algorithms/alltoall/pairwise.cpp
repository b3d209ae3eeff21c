// alltoall/pairwise -- pairwise exchange all-to-all (one partner per step).
//
// Source:        MPICH MPIR_Alltoall_intra_pairwise; Thakur, Rabenseifner, Gropp, "Optimization of collective
//                communication operations in MPICH" (IJHPCA 2005), sec. 4.3.
// Preconditions: any P >= 1; any topology.
// Rounds:        P - 1; step k = 1..P-1 is one group (a sendrecv). P = 2^d: rank r exchanges with r XOR k
//                (send in[r^k], recv out[r^k]); otherwise it sends in[(r + k) mod P] to r + k and receives
//                out[(r - k) mod P] from r - k. The local block in[r] -> out[r] is copied in the first group.
// Cost:          (P - 1) (alpha + m beta)   [Hockney]
// Memory:        no scratch. Schedule size: 2P - 1 ops per rank (P = 4096: 33.5 million ops, about 0.94 GB, for
//                all ranks; the MPI runtime builds only its own rank's 8191).
// Example:       P = 3, rank 0: copy in[0] -> out[0]; step 1: send in[1] to 1, recv out[2] from 2;
//                step 2: send in[2] to 2, recv out[1] from 1.
#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

bool is_power_of_two(int p) { return p > 0 && (p & (p - 1)) == 0; }

void reserve(Schedule& s, int rank, size_t ops) {
    RankProgram& prog = s.program_mut(rank);
    prog.ops.reserve(ops);
    prog.segs.reserve(ops + 1);  // one segment per send/recv, two for the copy
}

Schedule generate(const Problem& p) {
    const int P = p.ranks;
    const bool xor_partners = is_power_of_two(P);
    Schedule s(Collective::alltoall, P, static_cast<uint32_t>(P), static_cast<uint32_t>(P), 0, p.only_rank);
    for (int r : p.build_ranks()) {
        reserve(s, r, 2 * static_cast<size_t>(P) - 1);
        RankBuilder b(s, r);
        const auto ur = static_cast<uint32_t>(r);
        b.copy({Segment(Buf::in, ur, 1)}, {Segment(Buf::out, ur, 1)});
        for (int k = 1; k < P; ++k) {
            const int to = xor_partners ? r ^ k : (r + k) % P;
            const int from = xor_partners ? r ^ k : (r - k + P) % P;
            if (k > 1) b.fence();
            b.send(to, 0, {Segment(Buf::in, static_cast<uint32_t>(to), 1)});
            b.recv(from, 0, {Segment(Buf::out, static_cast<uint32_t>(from), 1)});
        }
    }
    return s;
}

const Registration reg{{
    .name = "alltoall/pairwise",
    .collective = Collective::alltoall,
    .summary = "P-1 sendrecv steps, partner r XOR k (P = 2^d) or r+k / r-k",
    .source = "MPICH MPIR_Alltoall_intra_pairwise; Thakur, Rabenseifner, Gropp (IJHPCA 2005)",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"ring", "full"},
    .mpi_default = true,
    .symmetry = [](const Problem& p) { return xor_symmetry(p) == Symmetry::xor_ ? Symmetry::xor_ : Symmetry::cyclic; },
}};

}  // namespace
}  // namespace collplan
