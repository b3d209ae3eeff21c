// allgather/approach11 -- approach 1 along the rows, then approach 1 along the columns, two colours.
//
// Source:        Juurlink, Rao, Sibeyn, "Gossiping on meshes and tori", IEEE TPDS 9(6), 1998, sec. 5.1 (approach ij =
//                highdimgos' with approach i in the first phase and approach j in the second; Lemma 6, Table 2) and
//                sec. 7 (Figure 6, the 8x8 Paragon; one-port with horizontal and vertical messages interleaved).
// Preconditions: 2-D mesh or torus of any sides (a torus side >= 3 wraps; approach 2 ignores the wrap-around). Each
//                rank's contribution is split into 2 colours (2 input blocks), colour 0 goes rows first, colour 1
//                columns first.
//                colouring=nodes: instead of splitting the data, the packet of a PU with even x0+x1 (white)
//                goes rows first and that of an odd PU (black) columns first (the Paragon's black/white nodes).
// Rounds:        floor(n0/2) + floor(n1/2) steps on a torus (n0-1 + n1-1 on a mesh); in the first phase colour 0
//                pipelines single half-blocks along the rows while colour 1 does so along the columns; in the second
//                phase the packets are whole rows (columns) of half-blocks.
// Cost:          T'_11 = floor(n/2)(r + 1/2) + floor(n/2)(r + n/2) = floor(n/2)(2r + (n+1)/2) units on an n x n torus
//                (Lemma 6). oneport=1: about 8 slots per step.
// Memory:        no scratch; works in the output buffer. One rank's program still runs the whole gossip
//                (every line's transfers; see gossip_common.hpp).
// Example:       torus:3x3: step 0: every PU sends colour 0 of its block to both row neighbours and colour 1 to
//                both column neighbours; step 1: it forwards its row's colour 0 (3 half-blocks) along the column
//                and its column's colour 1 along the row.
#include "collplan/algorithms/allgather/gossip_common.hpp"
#include "collplan/algorithms/allgather/gossip_tune.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    gossip::PhaseChoice first{1, {}}, second{1, {}};
    first.circ.radix = second.circ.radix = gossip::radix_param(p);
    const std::string& how = p.params.text("colouring");
    if (how != "data" && how != "nodes")
        throw Error("parameter colouring='" + how + "' (allowed: data, nodes)");
    return gossip::highdimgos(p, {first, second}, 2, how == "nodes", gossip::oneport_param(p));
}

const Registration reg{{
    .name = "allgather/approach11",
    .collective = Collective::allgather,
    .summary = "gossip approach 11: approach 1 along rows then columns, two colours (all-port)",
    .source = "Juurlink, Rao, Sibeyn, Gossiping on meshes and tori, IEEE TPDS 1998, sec. 5.1",
    .params = {{"colouring", ParamKind::text, "data", 0, 0,
                "data: split every packet into two colours; nodes: black/white PUs (the Paragon's approach 11)"},
               gossip::radix_spec(), gossip::oneport_spec()},
    .applies = [](const Problem& p) { return gossip::grid_applies(p, 2, 2); },
    .generate = generate,
    .default_topologies = {"torus2d", "mesh2d"},
    .sweep_params = {{}, {{"colouring", "nodes"}, {"oneport", "1"}}},
}};

}  // namespace
}  // namespace collplan
