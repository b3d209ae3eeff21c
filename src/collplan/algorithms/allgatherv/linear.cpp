// allgatherv/linear -- every rank sends its contribution (counts[r] units) to every other rank directly.
//
// Source:        Open MPI coll/basic ompi_coll_basic_allgatherv_intra (as gatherv + bcast there; here direct);
//                the baseline of the ring and Bruck allgatherv.
// Preconditions: any P >= 1, any counts (zeros too); any topology.
// Rounds:        1; every rank sends P - 1 messages and receives P - 1 (empty contributions are not sent).
// Cost:          (P - 1) alpha + (n - counts[r]) m beta received by rank r, n = sum of counts   [Hockney]
// Memory:        no scratch. in = 1 block (counts[r] units), out = P blocks (block q: counts[q] units).
// Example:       P = 2, counts = (2, 1): rank 0 copies in[0] -> out[0] (2 units), sends in[0] to 1, receives
//                out[1] (1 unit) from 1.
#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    const int P = p.ranks;
    Schedule s(Collective::allgatherv, P, 1, static_cast<uint32_t>(P), 0, p.only_rank);
    const Segment in(Buf::in, 0, 1);
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        const uint64_t own = p.counts[static_cast<size_t>(r)];
        const Segment at(Buf::out, static_cast<uint32_t>(r), 1);
        if (own) b.copy({&in, 1}, {&at, 1}, {}, own);
        for (int k = 1; k < P; ++k) {
            const int to = (r + k) % P, from = (r - k + P) % P;
            const Segment got(Buf::out, static_cast<uint32_t>(from), 1);
            if (own) b.send(to, 0, {&in, 1}, {}, own);
            if (const uint64_t u = p.counts[static_cast<size_t>(from)]) b.recv(from, 0, {&got, 1}, {}, u);
        }
    }
    return s;
}

const Registration reg{{
    .name = "allgatherv/linear",
    .collective = Collective::allgatherv,
    .summary = "every rank sends its contribution to every other rank directly",
    .source = "Open MPI coll/basic allgatherv (direct form)",
    .params = {},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"full"},
    .symmetry = cyclic_if_even,  // rank r sends to r + k and receives from r - k in step k
}};

}  // namespace
}  // namespace collplan
