// alltoall/standard_exchange -- Standard Exchange (SE) on a hypercube: d steps of 2^(d-1) blocks with a shuffle.
//
// Source:        Nicol & Bokhari, "Optimal multiphase complete exchange on circuit-switched hypercube
//                architectures" (SIGMETRICS 1994), sec. 2.3; after Johnsson & Ho (ref. 5).
// Preconditions: P = 2^d (any d >= 0); any topology (neighbours on hypercube:d).
// Rounds:        d steps j = d-1 .. 0, each: optional global barrier (parameter barrier, the paper's Q(d)), send
//                the half of the list whose bit j differs from the rank's to r XOR 2^j and receive the partner's
//                half, then one local copy of all 2^d blocks (the shuffle) that restores the order (multiphase
//                exchange with the partition 1,1,...,1). A block from i to j travels popcount(i XOR j) times.
// Cost:          d (lambda + 2^(d-1) m tau + delta + 2^d m rho + Q(d))   [circuit model, sec. 2.3]
// Memory:        tmp of 2P blocks (a staging area for the received half and the next list); 2d + d ops of
//                communication and copy per rank, the copy with up to 2^d segments.
// Example:       d = 1, rank 0: barrier; send in[1] to 1, recv tmp[1] from 1; copy in[0],tmp[1] -> out[0],out[1].
#include <vector>

#include "collplan/algorithms/alltoall/exchange_common.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    const std::vector<int> ones(static_cast<size_t>(exchange::cube_dimension(p.ranks)), 1);
    return exchange::multiphase(p, ones, p.params.integer("barrier") != 0);
}

const Registration reg{{
    .name = "alltoall/standard_exchange",
    .collective = Collective::alltoall,
    .summary = "Standard Exchange: d steps of 2^(d-1) blocks, each followed by a shuffle (P = 2^d)",
    .source = "Nicol & Bokhari (SIGMETRICS 1994) sec. 2.3; Johnsson & Ho (SIAM J. Matrix Anal. Appl. 1988)",
    .params = {exchange::barrier_param()},
    .applies = exchange::needs_power_of_two,
    .generate = generate,
    .default_topologies = {"hypercube", "full"},
    .sweep_params = {{{"barrier", "1"}}, {{"barrier", "0"}}},
    .symmetry = xor_symmetry,
}};

}  // namespace
}  // namespace collplan
