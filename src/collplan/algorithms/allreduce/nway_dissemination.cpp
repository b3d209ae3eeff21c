// allreduce/nway_dissemination -- the n-way dissemination allreduce with the adapted last round, exact for
// every P.
//
// Source:        End, Yahyapour, Simmendinger, Alrutz, "Adaption of the n-way dissemination algorithm for GASPI
//                split-phase allreduce" (INFOCOMP 2015), sec. III-IV: eq. (1) peers, eq. (5)-(8) data boundaries
//                and the 5-tuple, Theorem 1. The dissemination pattern: Hensgen, Finkel, Manber (IJPP 1988);
//                Hoefler et al., "Fast barrier synchronization for InfiniBand" (IPDPS 2006).
// Preconditions: any P >= 1; radix n = 1..64 (or auto: the n of best_dissemination_n under auto_model for a
//                vector of auto_size bytes, n <= 7); any topology; commutative operation (every window wraps
//                around P-1 -> 0). takeout=inverse needs an operation with an inverse when the plan takes
//                something out (Schedule::needs_inverse says so); keep and none work for any commutative op.
// Rounds:        k = ceil(log_{n+1} P), every rank sends and receives in every round. Rounds 1..k-1: rank p
//                sends its partial result to p + j (n+1)^(l-1) and reduces the ones of p - j (n+1)^(l-1),
//                j = 1..n. After them p holds its window of W = (n+1)^(k-1) contributions x_p .. x_{p-W+1}.
//                Last round (nway_common.hpp): with a 5-tuple (s, l_snd, l_rcv, j_snd, j_rcv) of eq. (8),
//                P = s W + T - U, senders p - W .. p - (s-1) W send their windows, sender p - s W only its
//                prefix of T contributions (its partial result up to data boundary g^s_{l_snd}[j_snd]), and p
//                takes out its own prefix of U (boundary g_{l_rcv}[j_rcv]) -- by the inverse operation
//                (takeout=inverse) or by having kept the rest of its window apart since the round it was made
//                (takeout=keep); Theorem 1's cases 3 and 4 need no take-out. Where no 5-tuple exists
//                (e.g. P = 13, n = 1; P = 40, n = 2), the fallback writes P - W + U as the fewest prefixes,
//                sent by senders at distances W, W + T_1, ...; it may post more than n messages in round k.
// Cost:          sum over rounds of [ (ceil(m_l / ports) - 1) g' + T(n_bytes) + r_l n_bytes gamma ], m_l = n for
//                l < k and the plan's message count in round k, r_l the reductions (n, + extra for keep),
//                T the message time and g' its port occupancy (LogGP: 2o + L + (n_bytes-1)G and max(g, (n_bytes-1)G);
//                Hockney: alpha + n_bytes beta). Exactly: model/dissemination.hpp, nway_cost().
// Memory:        tmp of max(n, m_k) receive blocks + one per kept prefix (+1 rest accumulator with keep);
//                one segment: in = out = 1 block (the whole vector).
// Example:       P = 8, n = 2 (k = 2, W = 3): 5-tuple (s=2, l_snd=1, l_rcv=B, j_snd=1): round 1 rank 0 gets
//                x7, x6; round 2 it gets x5 (+) x4 (+) x3 from rank 5 and only x2 (+) x1 from rank 2, which
//                kept that prefix in round 1 -- no x0 twice (the paper's Figure 1). P = 9: plain rounds.
#include <algorithm>

#include "collplan/algorithms/allreduce/nway_common.hpp"
#include "collplan/algorithms/registry.hpp"
#include "collplan/common/units.hpp"
#include "collplan/model/dissemination.hpp"

namespace collplan {
namespace {

int radix(const Problem& p) {
    if (!p.params.is_auto("n")) return static_cast<int>(p.params.integer("n"));
    const std::string& spec = p.params.text("auto_model");
    const auto model = parse_model(spec.empty() ? kDefaultDisseminationModel : spec);
    const nway::TakeOut t = nway::parse_takeout(p.params.text("takeout"));
    return best_dissemination_n(p.ranks, *model, parse_size_bytes(p.params.text("auto_size")), kDisseminationMaxN, t);
}

Schedule generate(const Problem& p) {
    return nway::adapted_schedule(p.ranks, radix(p), nway::parse_takeout(p.params.text("takeout")));
}

std::vector<std::map<std::string, std::string>> sweep() {
    std::vector<std::map<std::string, std::string>> out;
    for (const char* t : {"keep", "inverse", "none"})
        for (int n = 1; n <= 7; ++n) out.push_back({{"n", std::to_string(n)}, {"takeout", t}});
    out.push_back({{"n", "auto"}});
    return out;
}

const Registration reg{{
    .name = "allreduce/nway_dissemination",
    .collective = Collective::allreduce,
    .summary = "ceil(log_{n+1} P) rounds, all ranks busy; last round adapted (5-tuple) so every x_i counts once",
    .source = "End, Yahyapour, Simmendinger, Alrutz (INFOCOMP 2015); Hensgen, Finkel, Manber (IJPP 1988)",
    .params = {{"n", ParamKind::integer, "auto", 1, 64, "radix: messages per round (auto: best by model, <= 7)"},
               {"takeout", ParamKind::text, "keep", 0, 0,
                "how the receiver removes a double contribution: inverse, keep or none"},
               {"auto_model", ParamKind::text, "", 0, 0, "model spec for n=auto (empty: the documented LogGP default)"},
               {"auto_size", ParamKind::text, "8B", 0, 0, "vector size for n=auto"}},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"full"},
    .sweep_params = sweep(),
    // the paper times n = 1..7 at the first call; more than P - 1 peers per round repeat ranks
    .candidates = [](const CandidateQuery& q) { return range_candidates("n", 1, std::clamp(q.ranks - 1, 1, 7)); },
}};

}  // namespace
}  // namespace collplan
