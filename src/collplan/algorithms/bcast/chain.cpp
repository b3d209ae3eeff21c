// bcast/chain -- the pipelined chain broadcast: the message cut into k segments that flow down the chain
// root -> root + 1 -> ... -> root + P - 1.
//
// Source:        Open MPI coll/tuned ompi_coll_base_bcast_intra_pipeline (the chain of fan-out 1, "pipeline")
//                with a segment size; Thakur, Rabenseifner, Gropp (IJHPCA 2005) discuss the pipelined chain.
// Preconditions: any P >= 1, any root; segments k = 1..4096; any topology (consecutive ranks: one hop on a ring
//                or line).
// Rounds:        P - 2 + k pipeline steps. Rank root + j (j = 1..P-1) posts the k receives from root + j - 1 at
//                once and forwards segment s to root + j + 1 as soon as segment s has arrived and segment s - 1
//                has been sent (Open MPI's blocking sends); the root sends the k segments one after another.
// Cost:          (P - 2 + k) (alpha + n/k beta), least at k = sqrt((P - 2) n beta / alpha)   [Hockney;
//                n = message bytes]. `candidates` prices the powers of two around that k over the size range
//                (bcast/pipeline.hpp). `bound`, under any model: each of the root's sends waits for the one
//                before it (and its port), and the last segment then crosses P - 1 links, each forwarded once
//                received: (k - 1) max(send done, port busy) + the P - 1 links' receive times, of n/k bytes.
// Memory:        no scratch; the message is S = k segments of out (m = n / k).
// Example:       P = 3, root 1, k = 2: rank 1 sends out[0], then out[1], to 2; rank 2 receives out[0] and out[1]
//                from 1 and forwards each to 0; rank 0 receives them from 2.
#include "collplan/algorithms/bcast/pipeline.hpp"

#include <algorithm>
#include <vector>

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    const int P = p.ranks;
    const auto k = static_cast<uint32_t>(p.params.integer("segments"));
    Schedule s(Collective::bcast, P, 0, k, 0, p.only_rank);
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        const int j = (r - p.root + P) % P;  // position in the chain
        const int prev = (r - 1 + P) % P, next = (r + 1) % P;
        std::vector<uint32_t> recvs;
        if (j > 0)
            for (uint32_t seg = 0; seg < k; ++seg) recvs.push_back(b.recv(prev, 0, {Segment(Buf::out, seg, 1)}));
        if (j == P - 1) continue;
        uint32_t last = 0;
        for (uint32_t seg = 0; seg < k; ++seg) {
            std::vector<uint32_t> deps;
            if (j > 0) deps.push_back(recvs[seg]);
            if (seg > 0) deps.push_back(last);
            const Segment data(Buf::out, seg, 1);
            last = b.send(next, 0, std::span(&data, 1), deps);
        }
    }
    return s;
}

double bound(const Problem& p, const Model& model, double size_bytes) {
    const int P = p.ranks;
    if (P < 2) return 0;
    const double m = size_bytes / static_cast<double>(p.params.integer("segments"));
    auto link = [&](int j) {  // the j-th link of the chain
        const int from = (p.root + j) % P;
        return model.message(m, p.topology.distance(from, (from + 1) % P));
    };
    const MessageTime first = link(0);
    double t = static_cast<double>(p.params.integer("segments") - 1) * std::max(first.send_done, first.send_busy);
    for (int j = 0; j + 1 < P; ++j) t += link(j).recv_done;
    return t;
}

const Registration reg{{
    .name = "bcast/chain",
    .collective = Collective::bcast,
    .summary = "pipelined chain root -> root+1 -> ...: the message in k segments, P - 2 + k steps",
    .source = "Open MPI coll/tuned pipeline (chain) bcast; Thakur, Rabenseifner, Gropp (IJHPCA 2005)",
    .params = {pipeline_segments_param()},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"ring", "line", "full"},
    .sweep_params = {{{"segments", "1"}}, {{"segments", "3"}}, {}},
    .candidates = [](const CandidateQuery& q) { return pipeline_candidates(q, q.ranks - 1); },
    .bound = bound,
}};

}  // namespace
}  // namespace collplan
