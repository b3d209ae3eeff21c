// allgather/recursive_doubling -- recursive doubling (butterfly) allgather.
//
// Source:        MPICH MPIR_Allgather_intra_recursive_doubling; Thakur, Rabenseifner, Gropp, "Optimization of
//                collective communication operations in MPICH" (IJHPCA 2005), sec. 4.1.
// Preconditions: P = 2^d (d >= 0); any topology (on a hypercube every exchange is one hop).
// Rounds:        log2 P; in round i (mask 2^i) rank r exchanges with r XOR 2^i: it sends the 2^i blocks of the
//                aligned range it has collected, out[(r >> i) << i ..+2^i], and receives the partner's range.
// Cost:          log2(P) alpha + (P - 1) m beta   [Hockney]
// Memory:        no scratch; works in the output buffer.
// Example:       P = 4, rank 1: copy in[0] -> out[1]; round 0: send out[1] to 0, recv out[0] from 0;
//                round 1: send out[0..1] to 3, recv out[2..3] from 3.
#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

bool is_power_of_two(int p) { return p > 0 && (p & (p - 1)) == 0; }

Schedule generate(const Problem& p) {
    const int P = p.ranks;
    Schedule s(Collective::allgather, P, 1, static_cast<uint32_t>(P), 0, p.only_rank);
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        b.copy({Segment(Buf::in, 0, 1)}, {Segment(Buf::out, static_cast<uint32_t>(r), 1)});
        for (int mask = 1; mask < P; mask <<= 1) {
            const int partner = r ^ mask;
            const auto mine = static_cast<uint32_t>(r & ~(mask - 1));
            const auto theirs = static_cast<uint32_t>(partner & ~(mask - 1));
            const auto count = static_cast<uint32_t>(mask);
            b.fence();
            b.send(partner, 0, {Segment(Buf::out, mine, count)});
            b.recv(partner, 0, {Segment(Buf::out, theirs, count)});
        }
    }
    return s;
}

std::string applies(const Problem& p) {
    if (is_power_of_two(p.ranks)) return "";
    return "P=" + std::to_string(p.ranks) + " is not a power of two (use allgather/bruck or allgather/ring)";
}

const Registration reg{{
    .name = "allgather/recursive_doubling",
    .collective = Collective::allgather,
    .summary = "log2 P rounds, partners r XOR 2^i exchange doubling ranges (P = 2^d only)",
    .source = "MPICH MPIR_Allgather_intra_recursive_doubling; Thakur, Rabenseifner, Gropp (IJHPCA 2005)",
    .params = {},
    .applies = applies,
    .generate = generate,
    .default_topologies = {"hypercube", "full"},
    .symmetry = xor_symmetry,
}};

}  // namespace
}  // namespace collplan
