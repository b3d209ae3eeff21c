// allgather/approach21 -- approach 2 along the rows, then approach 1 along the columns, two colours.
//
// Source:        Juurlink, Rao, Sibeyn, "Gossiping on meshes and tori", IEEE TPDS 9(6), 1998, sec. 5.1 (approach ij =
//                highdimgos' with approach i in the first phase and approach j in the second; Lemma 6, Table 2) and
//                sec. 7 (Figure 6, the 8x8 Paragon; one-port with horizontal and vertical messages interleaved).
// Preconditions: 2-D mesh or torus of any sides (a torus side >= 3 wraps; approach 2 ignores the wrap-around). Each
//                rank's contribution is split into 2 colours (2 input blocks), colour 0 goes rows first, colour 1
//                columns first.
// Rounds:        2 ceil(log_3 n) concentration/dissemination steps of phase 1, then floor(n/2) steps of approach 1
//                on whole rows (colour 1 the other way round).
// Cost:          T'_21 = 2 r log_3 n + (n/2) log_3 n + floor(n/2)(r + n/2) units on an n x n torus (Lemma 6, half
//                transfer per colour).
// Memory:        no scratch; works in the output buffer. One rank's program still runs the whole gossip
//                (every line's transfers; see gossip_common.hpp).
// Example:       torus:3x3: step 0 the row ends send their colour-0 half to the middle PU, step 1 it sends back
//                what each lacks, step 2 the columns exchange their rows (colour 1 mirrored).
#include "collplan/algorithms/allgather/gossip_common.hpp"
#include "collplan/algorithms/allgather/gossip_tune.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    gossip::PhaseChoice first{2, {}}, second{1, {}};
    first.circ.radix = second.circ.radix = gossip::radix_param(p);
    return gossip::highdimgos(p, {first, second}, 2, false, gossip::oneport_param(p));
}

const Registration reg{{
    .name = "allgather/approach21",
    .collective = Collective::allgather,
    .summary = "gossip approach 21: approach 2 along rows, approach 1 along columns, two colours",
    .source = "Juurlink, Rao, Sibeyn, Gossiping on meshes and tori, IEEE TPDS 1998, sec. 5.1",
    .params = {gossip::radix_spec(), gossip::oneport_spec()},
    .applies = [](const Problem& p) { return gossip::grid_applies(p, 2, 2); },
    .generate = generate,
    .default_topologies = {"torus2d", "mesh2d"},
    .sweep_params = {{}, {{"oneport", "1"}}},
}};

}  // namespace
}  // namespace collplan
