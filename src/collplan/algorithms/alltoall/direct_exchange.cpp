// alltoall/direct_exchange -- Direct Exchange (DE) on a hypercube: 2^d - 1 pairwise steps, partner r XOR k.
//
// Source:        Nicol & Bokhari, "Optimal multiphase complete exchange on circuit-switched hypercube
//                architectures" (SIGMETRICS 1994), sec. 2.2; after Schmiermund & Seidel and Seidel (refs. 7, 9).
// Preconditions: P = 2^d (any d >= 0); any topology. On hypercube:d with e-cube routing every step is free of
//                link contention (each directed link carries at most one message per step).
// Rounds:        2^d - 1 steps after an optional global barrier (parameter barrier, the paper's Q(d)); step
//                k = 1..2^d-1: send in[r^k] to r^k, receive out[r^k] from r^k. The local block is copied during the
//                last step. Every block travels exactly once: the least volume, the most start-ups.
// Cost:          (2^d - 1)(lambda + m tau + delta) + Q(d)   [circuit model, sec. 2.2; the analytic estimate equals
//                it while the local copy m rho fits in one step]
// Memory:        no scratch; P (2P - 1) ops plus one barrier per rank (2P per rank).
// Example:       d = 2, rank 1: barrier; step 1: send in[0] to 0, recv out[0]; step 2: send in[3] to 3, recv
//                out[3]; step 3: send in[2] to 2, recv out[2], copy in[1] -> out[1].
#include "collplan/algorithms/alltoall/exchange_common.hpp"

namespace collplan {
namespace {

const Registration reg{{
    .name = "alltoall/direct_exchange",
    .collective = Collective::alltoall,
    .summary = "Direct Exchange: 2^d-1 contention-free steps with partner r XOR k (P = 2^d)",
    .source = "Nicol & Bokhari (SIGMETRICS 1994) sec. 2.2",
    .params = {exchange::barrier_param()},
    .applies = exchange::needs_power_of_two,
    .generate = [](const Problem& p) { return exchange::direct_exchange(p, p.params.integer("barrier") != 0); },
    .default_topologies = {"hypercube", "full"},
    .sweep_params = {{{"barrier", "1"}}, {{"barrier", "0"}}},
    .symmetry = xor_symmetry,
}};

}  // namespace
}  // namespace collplan
