// allgather/circgos -- the gossip paper's intermixed algorithm: concentrate into a bridgeheads, gossip among
// them, then multiply the bridgeheads by b per round with k pipelined packets.
//
// Source:        Juurlink, Rao, Sibeyn, "Gossiping on meshes and tori", IEEE TPDS 9(6), 1998, sec. 4.2 (algorithm
//                circgos(n, a, b), Lemma 5, Theorem 2, Table 1) and sec. 7 (parameters a1 = a, a2 = b, k on the
//                Paragon). The packet count k of phase 3 is the paper's; its extraction lost the step count of a
//                round, derived here (see Rounds).
// Preconditions: ring:P or line:P, any P >= 1; 1 <= a <= P, b >= 2, k >= 1 ("auto": chosen by the paper's
//                "small program" for the ratio r, see gossip_tune.hpp and `collplan tune`).
// Rounds:        phase 1: the a segments of ~P/a PUs concentrate into their middle PU (the bridgehead) by factors
//                of 3 (ceil(log_3(P/a)) steps); phase 2: the bridgeheads gossip like approach 1 (floor(a/2) steps on
//                a ring, a-1 on a line); phase 3: ceil(log_b(P/a)) rounds; in each, b-1 new bridgeheads are placed
//                in every gap and the old ones stream their data in k packets into the gap from both sides --
//                rightwards in order, leftwards in reverse order; new bridgehead i of the gap takes packet j from
//                the left at step i+j-1 or from the right at step (b-i)+(k-j), whichever is earlier, so a round
//                takes floor((b+k-1)/2) steps. A linear array's end gaps are fed from one side.
// Cost:          T_cg = T_con(n/a) + floor(a/2) (r + n/a) + ceil(log_b(n/a)) floor((b+k-1)/2) (r + n/k) units of
//                l t_l, with T_con(L) = sum_h (r + 3^(h-1)) (Lemma 5 with the rounding of the construction).
//                circgos(n, n, .) is approach 1; circgos(n, 3, 3, 1) saves one step of r + n over approach 2.
// Memory:        no scratch; works in the output buffer. One rank's program still runs the whole gossip
//                (every line's transfers; see gossip_common.hpp).
// Example:       ring:9, a=3, b=3, k=1: PUs 1, 4, 7 concentrate {0,1,2}, {3,4,5}, {6,7,8} (1 step), exchange their
//                triples both ways (1 step), then feed their neighbours 0, 2, 3, 5, 6, 8 with all 9 blocks (1 step).
#include "collplan/algorithms/allgather/gossip_common.hpp"
#include "collplan/algorithms/allgather/gossip_tune.hpp"

namespace collplan {
namespace {

Schedule generate(const Problem& p) {
    const int n = p.topology.dims()[0];
    gossip::PhaseChoice ch{3, gossip::circ_params(p, n, gossip::wraps(p.topology, 0), 1.0, 0)};
    return gossip::highdimgos(p, {ch}, 1, false, gossip::oneport_param(p));
}

std::string applies(const Problem& p) {
    std::string why = gossip::grid_applies(p, 1, 1);
    if (!why.empty()) return why;
    const int a = gossip::list_param(p, "a", 0);
    if (a > p.ranks) return "a=" + std::to_string(a) + " bridgeheads exceed P=" + std::to_string(p.ranks);
    return "";
}

const Registration reg{{
    .name = "allgather/circgos",
    .collective = Collective::allgather,
    .summary = "gossip circgos(n,a,b,k): concentrate into a bridgeheads, gossip, multiply bridgeheads by b per round",
    .source = "Juurlink, Rao, Sibeyn, Gossiping on meshes and tori, IEEE TPDS 1998, sec. 4.2",
    .params = {{"a", ParamKind::integer, "auto", 1, 1 << 20, "number of bridgeheads"},
               {"b", ParamKind::integer, "auto", 2, 1 << 20, "factor by which the bridgeheads multiply per round"},
               {"k", ParamKind::integer, "auto", 1, 1 << 20, "packets per bridgehead broadcast in a round"},
               gossip::ratio_spec(), gossip::radix_spec(), gossip::oneport_spec()},
    .applies = applies,
    .generate = generate,
    .default_topologies = {"ring", "line"},
    .sweep_params = {{},
                     {{"a", "1"}, {"b", "2"}, {"k", "1"}},
                     {{"a", "3"}, {"b", "3"}, {"k", "1"}},
                     {{"a", "2"}, {"b", "4"}, {"k", "3"}},
                     {{"a", "1"}, {"b", "5"}, {"k", "7"}},
                     {{"a", "2"}, {"b", "3"}, {"k", "2"}, {"oneport", "1"}}},
    .candidates = gossip::circgos_candidates,
}};

}  // namespace
}  // namespace collplan
