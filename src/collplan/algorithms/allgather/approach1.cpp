// allgather/approach1 -- every PU's packet travels left and right around the ring (the gossip paper's approach 1).
//
// Source:        Juurlink, Rao, Sibeyn, "Gossiping on meshes and tori", IEEE TPDS 9(6), 1998, sec. 4.1 (approach 1)
//                and sec. 7 (the one-port version measured on the Paragon).
// Preconditions: ring:P or line:P, any P >= 1. oneport=1: a PU sends or receives one message at a time; the
//                messages of a step then run in black/white slots (even PUs send while odd ones receive).
// Rounds:        floor(P/2) steps on a ring, P-1 on a linear array. In step s PU i receives the packet of PU i-s
//                from its left and that of PU i+s from its right; on an even ring the packet at distance P/2 comes
//                from the right only. Each step is a group of <= 2 sends and 2 receives (ports: see
//                gossip_common.hpp).
// Cost:          T1 = floor(n/2) (t_s + l t_l), i.e. floor(n/2) (r + 1) units of l t_l (Lemma 4). oneport=1: each
//                step takes 4 slots on an even ring, about 2 n (r + 1).
// Memory:        no scratch; works in the output buffer. One rank's program still runs the whole gossip
//                (every line's transfers; see gossip_common.hpp).
// Example:       ring:4, PU 0: step 0 sends b_0 to 1 and 3, receives b_3 from 3 and b_1 from 1; step 1 receives b_2
//                from 1 (the + side), sends nothing.
#include "collplan/algorithms/allgather/gossip_common.hpp"
#include "collplan/algorithms/allgather/gossip_tune.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    return gossip::highdimgos(p, {gossip::PhaseChoice{1, {}}}, 1, false, gossip::oneport_param(p));
}

const Registration reg{{
    .name = "allgather/approach1",
    .collective = Collective::allgather,
    .summary = "gossip approach 1: every packet travels both ways around the ring, floor(P/2) steps",
    .source = "Juurlink, Rao, Sibeyn, Gossiping on meshes and tori, IEEE TPDS 1998, sec. 4.1",
    .params = {gossip::oneport_spec()},
    .applies = [](const Problem& p) { return gossip::grid_applies(p, 1, 1); },
    .generate = generate,
    .default_topologies = {"ring", "line"},
    .sweep_params = {{}, {{"oneport", "1"}}},
}};

}  // namespace
}  // namespace collplan
