// alltoall/scattered -- batched linear all-to-all: post a batch of receives and sends, wait for all, repeat.
//
// Source:        MPICH MPIR_Alltoall_intra_scattered (the medium-message algorithm; batch size
//                MPIR_CVAR_ALLTOALL_THROTTLE, default 32); Thakur, Rabenseifner, Gropp, "Optimization of collective
//                communication operations in MPICH" (IJHPCA 2005), sec. 4.3.
// Preconditions: any P >= 1; any topology; batch b >= 1, or 0 for no throttling (all P at once).
// Rounds:        ceil(P / b) batches; batch i covers distances j = i b .. min(P, (i+1) b) - 1: receive out[(r+j) mod P]
//                from r + j and send in[(r-j) mod P] to r - j (distance 0 is the local copy in[r] -> out[r]).
//                Every send and receive of a batch may proceed at once (the "scattered" destinations spread the
//                load over the receivers); the batch ends with a wait for all of them.
// Cost:          ceil(P/b) batches of up to b messages; with one port (P - 1)(alpha + m beta)   [Hockney], with
//                k >= b ports ceil(P/b) (alpha + m beta)
// Memory:        no scratch; P (2P - 1) ops, 2P - 1 per rank.
// Example:       P = 3, b = 2, rank 0: batch 0: copy in[0] -> out[0], recv out[1] from 1, send in[2] to 2;
//                batch 1: recv out[2] from 2, send in[1] to 1.
#include <algorithm>

#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    const int P = p.ranks;
    const long long b = p.params.integer("batch") == 0 ? P : p.params.integer("batch");
    const auto uP = static_cast<uint32_t>(P);
    Schedule s(Collective::alltoall, P, uP, uP, 0, p.only_rank);
    for (int r : p.build_ranks()) {
        s.program_mut(r).ops.reserve(2 * static_cast<size_t>(P) - 1);
        RankBuilder rb(s, r);
        for (long long start = 0; start < P; start += b) {
            rb.fence();
            for (long long j = start; j < std::min<long long>(P, start + b); ++j) {
                const auto from = static_cast<uint32_t>((r + j) % P);
                if (j == 0) rb.copy({Segment(Buf::in, from, 1)}, {Segment(Buf::out, from, 1)});
                else rb.recv(static_cast<int>(from), 0, {Segment(Buf::out, from, 1)});
            }
            for (long long j = std::max<long long>(start, 1); j < std::min<long long>(P, start + b); ++j) {
                const auto to = static_cast<uint32_t>((r - j % P + P) % P);
                rb.send(static_cast<int>(to), 0, {Segment(Buf::in, to, 1)});
            }
        }
    }
    return s;
}

const Registration reg{{
    .name = "alltoall/scattered",
    .collective = Collective::alltoall,
    .summary = "batches of b non-blocking receives and sends (to r-j, from r+j), a wait after each batch",
    .source = "MPICH MPIR_Alltoall_intra_scattered; Thakur, Rabenseifner, Gropp (IJHPCA 2005)",
    .params = {{"batch", ParamKind::integer, "32", 0, 1 << 20, "messages per batch (MPICH's throttle); 0 = all"}},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"full", "ring"},
    .sweep_params = {{{"batch", "32"}}, {{"batch", "1"}}, {{"batch", "3"}}, {{"batch", "0"}}},
    .symmetry = cyclic_symmetry,
}};

}  // namespace
}  // namespace collplan
