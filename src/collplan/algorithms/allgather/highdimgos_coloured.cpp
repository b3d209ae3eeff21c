// allgather/highdimgos_coloured -- highdimgos' : the all-port variant of highdimgos with d colours.
//
// Source:        Juurlink, Rao, Sibeyn, "Gossiping on meshes and tori", IEEE TPDS 9(6), 1998, end of sec. 4.3
//                (highdimgos'): every PU's l flits are split into d colours of l/d flits; colour c performs its
//                phase f along axis (c + f) mod d, so at any time the d colours use d different axes.
// Preconditions: line, ring, mesh or torus of any sides. Each rank's contribution is split into d chunks (the
//                schedule has d input blocks; out block r*d + c is colour c of rank r). algs/a/b/k as highdimgos.
// Rounds:        d phases per colour, all colours at once; the ops of colour c along axis (c+f) mod d share the
//                steps of the other colours (all-port: distinct ports per axis and direction).
// Cost:          the startup time of highdimgos, the transfer time divided by d: e.g. approach 11 on an n x n torus
//                2 floor(n/2) r + floor(n/2)(1 + n)/2 units (Lemma 6). With sides of different length the colours'
//                phases overlap on one axis and share its ports.
// Memory:        no scratch; works in the output buffer. One rank's program still runs the whole gossip
//                (every line's transfers; see gossip_common.hpp).
// Example:       torus:3x3, algs=1: colour 0 runs rows then columns and colour 1 columns then rows, each on
//                half-blocks; steps 0 and 1 each carry both colours.
#include "collplan/algorithms/allgather/gossip_common.hpp"
#include "collplan/algorithms/allgather/gossip_tune.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    const int d = gossip::grid_dims(p.topology);
    return gossip::highdimgos(p, gossip::phase_choices(p, d), d, false, gossip::oneport_param(p));
}

const Registration reg{{
    .name = "allgather/highdimgos_coloured",
    .collective = Collective::allgather,
    .summary = "gossip highdimgos': d colours, colour c starts on axis c (all-port)",
    .source = "Juurlink, Rao, Sibeyn, Gossiping on meshes and tori, IEEE TPDS 1998, sec. 4.3",
    .params = gossip::highdimgos_specs(),
    .applies = [](const Problem& p) { return gossip::grid_applies(p, 1, 8); },
    .generate = generate,
    .default_topologies = {"torus2d", "mesh2d", "torus3d", "mesh3d"},  // on rings and lines it is highdimgos
    .sweep_params = {{}, {{"algs", "2"}, {"oneport", "1"}}},
}};

}  // namespace
}  // namespace collplan
