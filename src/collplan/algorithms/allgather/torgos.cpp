// allgather/torgos -- 2-D gossip with bridgeheads on the diagonals of a x a submeshes (invariant 1 of the paper).
//
// Source:        Juurlink, Rao, Sibeyn, "Gossiping on meshes and tori", IEEE TPDS 9(6), 1998, sec. 5.2 (algorithm
//                torgos(n, a, b), Lemma 7, invariant 1, Table 2) and sec. 7 (torgos(2, 2, 1) on the 8x8 Paragon).
//                Phase 4a's packet count k and the round factor for spacings that are not powers of b are derived
//                (the extraction lost them): k as in circgos, the factor as round_factor() in gossip_common.hpp.
// Preconditions: 2-D torus or mesh n0 x n1; g = n0/a is the initial spacing. Torus: a divides n0 and g divides n1.
//                Mesh: g = ceil(n0/a) <= n0, n1. colours = 1 (uniaxial) or 2 (0 = 2, the default: colour c takes
//                axis c as its rows, halving the transfer time). a, b, k "auto": the small program's choice for r.
// Rounds:        PU (x0, x1) is a bridgehead while x0 - x1 = 0 mod g. 1: each row concentrates its segments of g
//                PUs into their bridgehead (ceil(log_3 g) steps); 2: the bridgeheads of a row gossip (floor(a/2)
//                steps) -- every bridgehead knows its row; 3: the bridgeheads of a column gossip (floor(a/2) steps
//                of packets of n) -- now the diagonal of every g x g submesh knows everything (invariant 1: a
//                bridgehead of row x1 holds the rows = x1 mod g). 4: rounds while g > 1: g' = g/f (f = b when b
//                divides g): 4a the old bridgeheads of each row stream their data in k packets to the new ones
//                (floor((f+k-1)/2) steps, as circgos phase 3); 4b the bridgeheads of each column gossip among the f
//                classes (floor(f/2) steps of packets of n a b^t).
// Cost:          T_tg = T_con(n/a) + floor(a/2)(2r + n/a + n) + sum over rounds of floor((b+k-1)/2)(r + m/k) +
//                floor(b/2)(r + m), m = the data of a bridgehead (Lemma 7; divided by 2 in the transfer terms with
//                two colours). On a mesh the gossips take a-1 and b-1 steps.
// Memory:        no scratch; works in the output buffer. One rank's program still runs the whole gossip
//                (every line's transfers; see gossip_common.hpp).
// Example:       torus:4x4, a=2, b=2, k=1, colours=1: bridgeheads (0,0),(2,0),(1,1),(3,1),(0,2),..; step 0 each
//                row's pairs concentrate, step 1 the two bridgeheads of a row exchange pairs, step 2 those of a
//                column exchange rows, then one round: step 3 every bridgehead sends its two rows to its new row
//                neighbour, step 4 column neighbours exchange pairs of rows.
#include "collplan/algorithms/allgather/gossip_common.hpp"
#include "collplan/algorithms/allgather/gossip_tune.hpp"

namespace collplan {
namespace {

std::string applies(const Problem& p) {
    std::string why = gossip::grid_applies(p, 2, 2);
    if (!why.empty()) return why;
    return gossip::diagonal_applies(p.topology, gossip::diag_params_for_applies(p, false));
}

Schedule generate(const Problem& p) { return gossip::diagonal_gossip(p, gossip::diag_params(p, false)); }

const Registration reg{{
    .name = "allgather/torgos",
    .collective = Collective::allgather,
    .summary = "gossip torgos(n,a,b,k): bridgeheads on the diagonals of g x g submeshes, multiplied by b per round",
    .source = "Juurlink, Rao, Sibeyn, Gossiping on meshes and tori, IEEE TPDS 1998, sec. 5.2",
    .params = {{"a", ParamKind::integer, "auto", 1, 1 << 20, "bridgeheads per row (spacing g = n0/a)"},
               {"b", ParamKind::integer, "auto", 2, 1 << 20, "factor by which the bridgeheads multiply per round"},
               {"k", ParamKind::integer, "auto", 1, 1 << 20, "packets per bridgehead broadcast (phase 4a)"},
               {"colours", ParamKind::integer, "0", 0, 2, "1: uniaxial; 2 (or 0): colour c uses axis c as rows"},
               gossip::ratio_spec(), gossip::radix_spec(), gossip::oneport_spec()},
    .applies = applies,
    .generate = generate,
    .default_topologies = {"torus2d", "mesh2d"},
    .sweep_params = {{},
                     {{"a", "1"}, {"b", "2"}, {"k", "1"}, {"colours", "1"}},
                     {{"a", "2"}, {"b", "3"}, {"k", "2"}, {"oneport", "1"}}},
    .candidates = [](const CandidateQuery& q) { return gossip::diagonal_candidates(q, false); },
}};

}  // namespace
}  // namespace collplan
