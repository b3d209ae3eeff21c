// allgather/highdimgos -- d-dimensional gossip as one 1-D gossip per axis, with a choice of 1-D algorithm per phase.
//
// Source:        Juurlink, Rao, Sibeyn, "Gossiping on meshes and tori", IEEE TPDS 9(6), 1998, sec. 4.3 (algorithm
//                highdimgos, Theorem 3).
// Preconditions: line, ring, mesh or torus of any sides (side 1 and 2 allowed; a torus side >= 3 wraps). algs: one
//                1-D algorithm per phase -- 1 approach 1, 2 approach 2, 3 circgos with a, b, k per phase ("x,y,.."
//                lists; the last entry repeats; auto = chosen for the packet size of that phase and the ratio r).
// Rounds:        d phases; in phase f every line along axis f runs the chosen 1-D gossip on packets of l n^f flits
//                (every PU of the line holds the data of an n^f sub-array), so after phase d-1 every PU holds all.
// Cost:          T_hdg = sum_f T'_alg(n_f, r) with the transfer unit of phase f multiplied by n_0 ... n_(f-1); with
//                approach 1 everywhere sum_f floor(n/2)(r + n^f). Uniaxial: one axis busy at a time.
// Memory:        no scratch; works in the output buffer. One rank's program still runs the whole gossip
//                (every line's transfers; see gossip_common.hpp).
// Example:       torus:3x3, algs=1: phase 0: every row runs approach 1 on single blocks (1 step); phase 1: every
//                column runs approach 1 on its PUs' rows of 3 blocks (1 step).
#include "collplan/algorithms/allgather/gossip_common.hpp"
#include "collplan/algorithms/allgather/gossip_tune.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    return gossip::highdimgos(p, gossip::phase_choices(p, 1), 1, false, gossip::oneport_param(p));
}

const Registration reg{{
    .name = "allgather/highdimgos",
    .collective = Collective::allgather,
    .summary = "gossip highdimgos: one 1-D gossip per axis (approach 1, approach 2 or circgos per phase)",
    .source = "Juurlink, Rao, Sibeyn, Gossiping on meshes and tori, IEEE TPDS 1998, sec. 4.3",
    .params = gossip::highdimgos_specs(),
    .applies = [](const Problem& p) { return gossip::grid_applies(p, 1, 8); },
    .generate = generate,
    .default_topologies = {"ring", "line", "torus2d", "mesh2d", "torus3d"},
    .sweep_params = {{}, {{"algs", "2,1"}}, {{"algs", "3"}, {"a", "1"}, {"b", "2"}, {"k", "2"}}},
}};

}  // namespace
}  // namespace collplan
