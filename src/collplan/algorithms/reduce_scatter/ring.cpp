// reduce_scatter/ring -- the ring reduce-scatter with parts of any size: each part travels once around the ring,
// every rank adding its contribution, and ends at its owner.
//
// Source:        the reduce-scatter half of the ring allreduce (Patarasuk, Yuan, "Bandwidth optimal all-reduce
//                algorithms for clusters of workstations", JPDC 2009; MPICH MPIR_Allreduce_intra_ring), here
//                with one part per rank of counts[j] units (MPICH's ring reduce-scatter inside its allreduce
//                also splits the vector unevenly).
// Preconditions: any P >= 1, any counts (zeros too); any topology (neighbours on a ring or line embed with one
//                hop); commutative operations only (needs_commutative): part j collects x_{j+1}, ..., x_{P-1},
//                x_0, ..., x_j in ring order.
// Rounds:        P - 1; in step k (0 <= k < P - 1) rank r sends part (r - k - 1) mod P to r + 1 -- in[] at
//                step 0, the running partial afterwards -- and receives part (r - k - 2) mod P from r - 1, to
//                which it adds in[] of that part (tmp = tmp (+) x_r); the last one received is its own part,
//                out = tmp (+) x_r. Empty parts are neither sent nor combined.
// Cost:          (P - 1) alpha + (n - counts[r]) m beta + (n - counts[r - 1]) m gamma at rank r, n = sum of
//                counts   [Hockney] (it sends every part but its own, combines every part but r - 1's)
// Memory:        tmp of 2 blocks (the partial received, the partial being sent). in = P blocks, out = 1.
// Example:       P = 3, counts = (1, 2, 1), rank 0: copy in[0] -> out; step 0: send in[2] (1 unit) to 1, recv
//                tmp[0] (part 1, 2 units) from 2, tmp[0] = tmp[0] (+) in[1]; step 1: send tmp[0] to 1, recv
//                tmp[1] (part 0) from 2; out = tmp[1] (+) out = (x_1 (+) x_2) (+) x_0.
// Consistency:   rank-consistent (each result block is computed on one rank only).
#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    const int P = p.ranks;
    const auto U = static_cast<uint32_t>(P);
    Schedule s(Collective::reduce_scatter, P, U, 1, P > 1 ? 2 : 0, p.only_rank);
    s.needs_commutative = true;
    s.rank_consistent = true;
    const Segment out(Buf::out, 0, 1);
    const auto units = [&](int part) { return p.counts[static_cast<size_t>(part)]; };
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        const int right = (r + 1) % P, left = (r - 1 + P) % P;
        const Segment mine(Buf::in, static_cast<uint32_t>(r), 1);
        if (units(r)) b.copy({&mine, 1}, {&out, 1}, {}, units(r));
        for (int k = 0; k + 1 < P; ++k) {
            const int give = (r - k - 1 + 2 * P) % P, take = (r - k - 2 + 2 * P) % P;
            const Segment sent = k == 0 ? Segment(Buf::in, static_cast<uint32_t>(give), 1)
                                        : Segment(Buf::tmp, static_cast<uint32_t>((k - 1) % 2), 1);
            const Segment got(Buf::tmp, static_cast<uint32_t>(k % 2), 1);
            b.fence();
            if (units(give)) b.send(right, 0, {&sent, 1}, {}, units(give));
            if (units(take) == 0) continue;
            b.recv(left, 0, {&got, 1}, {}, units(take));
            b.fence();
            if (take == r) {
                b.reduce({&got, 1}, {&out, 1}, {}, 0, units(r));  // (x_{r+1} (+) ... (+) x_{r-1}) (+) x_r
            } else {
                const Segment x(Buf::in, static_cast<uint32_t>(take), 1);
                b.reduce({&x, 1}, {&got, 1}, {}, opflag::reverse, units(take));  // partial (+) x_r
            }
        }
    }
    return s;
}

const Registration reg{{
    .name = "reduce_scatter/ring",
    .collective = Collective::reduce_scatter,
    .summary = "P-1 steps, each part travels once around the ring gathering every contribution (commutative ops)",
    .source = "ring reduce-scatter of the ring allreduce (Patarasuk, Yuan JPDC 2009; MPICH allreduce ring)",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"ring", "full"},
    .symmetry = cyclic_if_even,
}};

}  // namespace
}  // namespace collplan
