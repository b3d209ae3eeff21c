// alltoallv/async -- AC, asynchronous communication: every receive and every send posted at once.
//
// Source:        Wang, Lin, Ranka, "Distributed scheduling of unstructured collective communication on the
//                CM-5" (1993), sec. 3.1, Fig. 2 (Asynchronous_Send_Receive).
// Preconditions: any P >= 1; a P x P communication matrix COM (row = source, units of m bytes); any topology.
// Rounds:        one group per rank: the diagonal copy (if COM(r,r) > 0), a recv from every source of column r,
//                then a send to every destination of row r in a random order (parameter seed). Nothing stops
//                several senders from hitting the same receiver at once: node contention decides the time.
// Cost:          no scheduling cost. With one receive port per node, at least
//                max_i (messages of row i or column i) * alpha + max(row, column units) m beta; the order in which
//                the ports serve the messages (the estimate: first come, first served) adds the contention.
// Memory:        no scratch; one op per message at each end (2 * nnz(COM) ops in all). One rank's program: its
//                row's and column's messages, but it replays the shuffles of the ranks before it (O(r P) reads).
// Example:       P = 3, COM = [[0,2,0],[1,0,3],[0,4,0]]: rank 1 posts recv from 0 (2 units) and from 2
//                (4 units), then sends to 0 (1 unit) and 2 (3 units) in a seeded random order.
#include "collplan/algorithms/alltoallv/unstructured_common.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    const int P = p.ranks;
    alltoallv::Rng rng(static_cast<uint64_t>(p.params.integer("seed")));
    Schedule s(Collective::alltoallv, P, static_cast<uint32_t>(P), static_cast<uint32_t>(P), 0, p.only_rank);
    auto destinations = [&](int r) {  // row r's destinations in the seeded random order
        std::vector<int> dsts;
        for (int q = 0; q < P; ++q)
            if (q != r && p.counts[static_cast<size_t>(r) * P + q]) dsts.push_back(q);
        rng.shuffle(dsts);
        return dsts;
    };
    // One random stream for all ranks: a rank's order depends on the shuffles of the ranks before it.
    for (int r = 0, first = *p.build_ranks().begin(); r < first; ++r) destinations(r);
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        alltoallv::copy_diagonal(b, p, r);
        for (int q = 0; q < P; ++q)
            if (const uint64_t u = p.counts[static_cast<size_t>(q) * P + r]; u && q != r)
                b.recv(q, 0, std::vector<Segment>{Segment(Buf::out, static_cast<uint32_t>(q), 1)}, {}, u);
        for (int q : destinations(r))
            b.send(q, 0, std::vector<Segment>{Segment(Buf::in, static_cast<uint32_t>(q), 1)}, {},
                   p.counts[static_cast<size_t>(r) * P + q]);
    }
    return s;
}

const Registration reg{{
    .name = "alltoallv/async",
    .collective = Collective::alltoallv,
    .summary = "AC: every message posted at once, sends in random order (node contention unmanaged)",
    .source = "Wang, Lin, Ranka, Distributed scheduling of unstructured collective communication on the CM-5 (1993), sec. 3.1",
    .params = {alltoallv::seed_param()},
    .applies = alltoallv::applies_matrix,
    .generate = generate,
}};

}  // namespace
}  // namespace collplan
