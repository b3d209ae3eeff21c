// allgather/approach2 -- concentrate all data in one PU by factors of three, then disseminate by reversing.
//
// Source:        Juurlink, Rao, Sibeyn, "Gossiping on meshes and tori", IEEE TPDS 9(6), 1998, sec. 4.1 (approach 2);
//                sec. 7 for the one-port Paragon version, which concentrates by factors of two.
// Preconditions: ring:P or line:P, any P >= 1 (the wrap-around is not used). radix 3 (default) or 2 (default with
//                oneport=1).
// Rounds:        2 ceil(log_radix P): in concentration step h the roots of the subtrees of height h-1 send all they
//                hold to the root of their group of `radix` subtrees (the middle one for radix 3); dissemination
//                replays the steps in reverse order, each root sending a sub-root what it lacks.
// Cost:          T2 = sum_h (r + 3^(h-1)) + log_3 n (r + n) ~ (2 r + n) log_3 n units of l t_l (Lemma 4; collplan
//                sends a sub-root only what it lacks, n (1 - 3^-h) instead of n). oneport=1: 2 ceil(log_2 n) steps
//                of one message each.
// Memory:        no scratch; works in the output buffer. One rank's program still runs the whole gossip
//                (every line's transfers; see gossip_common.hpp).
// Example:       line:3: step 0 PUs 0 and 2 send b_0, b_2 to PU 1; step 1 PU 1 sends b_1,b_2 to 0 and b_0,b_1 to 2.
#include "collplan/algorithms/allgather/gossip_common.hpp"
#include "collplan/algorithms/allgather/gossip_tune.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    gossip::PhaseChoice ch{2, {}};
    ch.circ.radix = gossip::radix_param(p);
    return gossip::highdimgos(p, {ch}, 1, false, gossip::oneport_param(p));
}

const Registration reg{{
    .name = "allgather/approach2",
    .collective = Collective::allgather,
    .summary = "gossip approach 2: concentrate into one PU by factors of 3, then disseminate in reverse",
    .source = "Juurlink, Rao, Sibeyn, Gossiping on meshes and tori, IEEE TPDS 1998, sec. 4.1",
    .params = {gossip::radix_spec(), gossip::oneport_spec()},
    .applies = [](const Problem& p) { return gossip::grid_applies(p, 1, 1); },
    .generate = generate,
    .default_topologies = {"ring", "line"},
    .sweep_params = {{}, {{"radix", "2"}}, {{"oneport", "1"}}},
}};

}  // namespace
}  // namespace collplan
