// allgather/approach22 -- approach 2 along the rows, then approach 2 along the columns, two colours.
//
// Source:        Juurlink, Rao, Sibeyn, "Gossiping on meshes and tori", IEEE TPDS 9(6), 1998, sec. 5.1 (approach ij =
//                highdimgos' with approach i in the first phase and approach j in the second; Lemma 6, Table 2) and
//                sec. 7 (Figure 6, the 8x8 Paragon; one-port with horizontal and vertical messages interleaved).
// Preconditions: 2-D mesh or torus of any sides (a torus side >= 3 wraps; approach 2 ignores the wrap-around). Each
//                rank's contribution is split into 2 colours (2 input blocks), colour 0 goes rows first, colour 1
//                columns first.
// Rounds:        2 ceil(log_3 n0) + 2 ceil(log_3 n1) steps.
// Cost:          T'_22 = 2 (2 r + n/2) log_3 n + ... ~ (4 r + n (n+1)/2) log_3 n units on an n x n torus (Lemma 6).
// Memory:        no scratch; works in the output buffer. One rank's program still runs the whole gossip
//                (every line's transfers; see gossip_common.hpp).
// Example:       mesh:3x3: concentrate each row's colour 0 in its middle PU (1 step), disseminate (1 step), then
//                the same along the columns with whole rows.
#include "collplan/algorithms/allgather/gossip_common.hpp"
#include "collplan/algorithms/allgather/gossip_tune.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    gossip::PhaseChoice first{2, {}}, second{2, {}};
    first.circ.radix = second.circ.radix = gossip::radix_param(p);
    return gossip::highdimgos(p, {first, second}, 2, false, gossip::oneport_param(p));
}

const Registration reg{{
    .name = "allgather/approach22",
    .collective = Collective::allgather,
    .summary = "gossip approach 22: approach 2 along rows then columns, two colours",
    .source = "Juurlink, Rao, Sibeyn, Gossiping on meshes and tori, IEEE TPDS 1998, sec. 5.1",
    .params = {gossip::radix_spec(), gossip::oneport_spec()},
    .applies = [](const Problem& p) { return gossip::grid_applies(p, 2, 2); },
    .generate = generate,
    .default_topologies = {"torus2d", "mesh2d"},
    .sweep_params = {{}, {{"radix", "2"}}},
}};

}  // namespace
}  // namespace collplan
