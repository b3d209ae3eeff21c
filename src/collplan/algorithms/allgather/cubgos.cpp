// allgather/cubgos -- d-dimensional gossip with bridgeheads on generalised diagonals (invariant 2 of the paper).
//
// Source:        Juurlink, Rao, Sibeyn, "Gossiping on meshes and tori", IEEE TPDS 9(6), 1998, sec. 6 (definition 1 of
//                the d-dimensional diagonal, lemma 8, algorithm cubgos(n, a, b), lemma 9, invariant 2, theorem 4,
//                Table 3). The extraction lost equation (4); derived from the definition (a subset of the unit cube
//                whose orthogonal projections onto every bounding hyperplane are bijective) and the readable 2-D
//                case "{(0,0)} and the points with x0 + x1 = 1": D_d = {x in [0,1)^d : x_0 + ... + x_(d-1) integer},
//                on the grid {x : sum x_i = 0 mod n}. Every axis-parallel line meets it exactly once (the "towers"
//                of figure 4), which is what the algorithm needs.
// Preconditions: d-dimensional torus or mesh, d >= 2, sides n0 x n1 x ...; g = n0/a. Torus: a divides n0 and g
//                divides every side. Mesh: g = ceil(n0/a) <= every side. colours = 1 (uniaxial) or d (0 = d, the
//                default, cubgos': colour c takes axis c as its rows and the others in cyclic order). a, b, k
//                "auto": the small program's choice for the ratio r.
// Rounds:        a PU is a bridgehead while sum x_i = 0 mod g. 1: rows (lines along x0) concentrate segments of g
//                into their bridgehead; 2: the bridgeheads of a row gossip (floor(a/2) steps); 3: d-1 rounds of
//                floor(a/2) steps, round i along x_i with packets of n a^(i-1) -- every bridgehead now holds the n
//                a^(d-1) data of the rows congruent to its own mod g (invariant 2). 4: rounds while g > 1 (g' = g/f,
//                f = b when it divides g): 4a new bridgeheads in every row get the old ones' data in k packets
//                (floor((f+k-1)/2) steps); 4b d-1 sub-phases of floor(f/2) steps, sub-phase i along x_i.
// Cost:          T_cg = T_con(n/a) + floor(a/2)(d r + n/a + n + n a + ... + n a^(d-2)) + sum over rounds of
//                floor((b+k-1)/2)(r + m/k) + sum_i floor(b/2)(r + m b^(i-1)), m = a bridgehead's data (Lemma 9;
//                transfer terms divided by d with d colours, Theorem 4).
// Memory:        no scratch; works in the output buffer. One rank's program still runs the whole gossip
//                (every line's transfers; see gossip_common.hpp).
// Example:       torus:3x3x3, a=3 (g=1), colours=1: every PU is a bridgehead: rows gossip (1 step), then along x1 with rows of
//                3 blocks (1 step), then along x2 with planes of 9 blocks (1 step) -- approach 111.
#include "collplan/algorithms/allgather/gossip_common.hpp"
#include "collplan/algorithms/allgather/gossip_tune.hpp"

namespace collplan {
namespace {

std::string applies(const Problem& p) {
    std::string why = gossip::grid_applies(p, 2, 8);
    if (!why.empty()) return why;
    return gossip::diagonal_applies(p.topology, gossip::diag_params_for_applies(p, true));
}

Schedule generate(const Problem& p) { return gossip::diagonal_gossip(p, gossip::diag_params(p, true)); }

const Registration reg{{
    .name = "allgather/cubgos",
    .collective = Collective::allgather,
    .summary = "gossip cubgos(n,a,b,k): bridgeheads on d-dimensional generalised diagonals (sum x_i = 0 mod g)",
    .source = "Juurlink, Rao, Sibeyn, Gossiping on meshes and tori, IEEE TPDS 1998, sec. 6",
    .params = {{"a", ParamKind::integer, "auto", 1, 1 << 20, "bridgeheads per row (spacing g = n0/a)"},
               {"b", ParamKind::integer, "auto", 2, 1 << 20, "factor by which the bridgeheads multiply per round"},
               {"k", ParamKind::integer, "auto", 1, 1 << 20, "packets per bridgehead broadcast (phase 4a)"},
               {"colours", ParamKind::integer, "0", 0, 8, "1: uniaxial; d (or 0): colour c uses axis c as rows"},
               gossip::ratio_spec(), gossip::radix_spec(), gossip::oneport_spec()},
    .applies = applies,
    .generate = generate,
    .default_topologies = {"torus2d", "mesh2d", "torus3d", "mesh3d"},
    .sweep_params = {{},
                     {{"a", "1"}, {"b", "2"}, {"k", "1"}, {"colours", "1"}},
                     {{"a", "2"}, {"b", "2"}, {"k", "3"}}},
    .candidates = [](const CandidateQuery& q) { return gossip::diagonal_candidates(q, true); },
}};

}  // namespace
}  // namespace collplan
