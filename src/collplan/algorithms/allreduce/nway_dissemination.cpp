// allreduce/nway_dissemination -- the n-way dissemination allreduce with the adapted last round, exact for
// every P; forward=contributions: the rank-consistent variant that forwards the individual contributions.
//
// Source:        End, Yahyapour, Simmendinger, Alrutz, "Adaption of the n-way dissemination algorithm for GASPI
//                split-phase allreduce" (INFOCOMP 2015), sec. III-IV: eq. (1) peers, eq. (5)-(8) data boundaries
//                and the 5-tuple, Theorem 1. The dissemination pattern: Hensgen, Finkel, Manber (IJPP 1988);
//                Hoefler et al., "Fast barrier synchronization for InfiniBand" (IPDPS 2006). forward=contributions:
//                the same peers carrying Bruck's concatenation (Bruck, Ho, Kipnis, Upfal, Weathersby, IEEE TPDS
//                1997; the paper's sec. II points to Bruck's k-port algorithms); the variant is collplan's own.
// Preconditions: any P >= 1; radix n = 1..64 (or auto: the n of best_dissemination_n under auto_model for a
//                vector of auto_size bytes, n <= 7; best_contributions_n with forward=contributions); any
//                topology; commutative operation (every window wraps around P-1 -> 0). takeout=inverse needs
//                an operation with an inverse when the plan takes something out (Schedule::needs_inverse says
//                so); keep and none work for any commutative op.
//                forward=contributions: any operation, commutative or not (takeout does not apply).
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
//                forward=contributions (forward=partial is the default): the same k rounds and peers, but a rank
//                forwards the contributions it holds one by one instead of their reduction. Before round l it
//                holds H = (n+1)^(l-1) of them, x_p .. x_{p-H+1} in tmp[0 .. H); it sends tmp[0 .. c_j) to
//                p + j H and receives c_j = min(H, P - j H) into tmp[j H ..] from p - j H, for j = 1..n while
//                j H < P (so nothing arrives twice: (P - 1) blocks received in all). Then every rank reduces
//                x_0 (+) x_1 (+) ... (+) x_{P-1} left to right in rank order -- the same expression on every
//                rank (Schedule::rank_consistent: floating-point results are bitwise equal) and exact for
//                non-commutative operations. No inverse, no take-out.
// Cost:          sum over rounds of [ (ceil(m_l / ports) - 1) g' + T(n_bytes) + r_l n_bytes gamma ], m_l = n for
//                l < k and the plan's message count in round k, r_l the reductions (n, + extra for keep),
//                T the message time and g' its port occupancy (LogGP: 2o + L + (n_bytes-1)G and max(g, (n_bytes-1)G);
//                Hockney: alpha + n_bytes beta). Exactly: nway_cost.hpp, nway_cost().
//                forward=contributions: round l has m_l <= n messages of c_j blocks (at most (n+1)^(l-1) n_bytes),
//                (P - 1) n_bytes sent and received per rank in all, then (P - 1) n_bytes gamma of reductions and
//                2 n_bytes rho of copies. Hockney with n ports and P = (n+1)^k: k alpha + (P - 1)/n n_bytes beta
//                + (P - 1) n_bytes gamma; one port: (sum_l m_l) alpha + (P - 1) n_bytes (beta + gamma).
//                nway_cost.hpp, nway_contributions_cost().
// Memory:        tmp of max(n, m_k) receive blocks + one per kept prefix (+1 rest accumulator with keep);
//                one segment: in = out = 1 block (the whole vector). forward=contributions: tmp of P blocks (P n_bytes).
//                One rank's program is built alone; the last-round plan is global, its fallback O(P) time and memory.
// Example:       P = 8, n = 2 (k = 2, W = 3): 5-tuple (s=2, l_snd=1, l_rcv=B, j_snd=1): round 1 rank 0 gets
//                x7, x6; round 2 it gets x5 (+) x4 (+) x3 from rank 5 and only x2 (+) x1 from rank 2, which
//                kept that prefix in round 1 -- no x0 twice (the paper's Figure 1). P = 9: plain rounds.
//                forward=contributions, P = 5, n = 2 (k = 2), rank 0: tmp[0] = x0; round 1 (H = 1): send tmp[0] to
//                1 and 2, receive x4 into tmp[1] from 4 and x3 into tmp[2] from 3; round 2 (H = 3): send tmp[0..1]
//                = x0, x4 to 3 (c_1 = min(3, 5 - 3) = 2; j = 2 would reach 6 >= P), receive tmp[3..4] = x2, x1
//                from 2; out = (((x0 (+) x1) (+) x2) (+) x3) (+) x4, as on every rank.
// Consistency:   forward=partial is not rank-consistent (each rank's windows start at itself and wrap at a
//                different place; takeout=inverse subtracts partial results back out); forward=contributions is
//                (Algorithm::rank_consistent_params).
#include <algorithm>

#include "collplan/algorithms/allreduce/nway_common.hpp"
#include "collplan/algorithms/registry.hpp"
#include "collplan/common/units.hpp"
#include "collplan/algorithms/allreduce/nway_cost.hpp"

namespace collplan {
namespace {

// forward=contributions (true) or partial (false).
bool forwards_contributions(const Problem& p) {
    const std::string& f = p.params.text("forward");
    if (f != "partial" && f != "contributions")
        throw Error("forward '" + f + "' is invalid (allowed: partial, contributions)");
    return f == "contributions";
}

int radix(const Problem& p, bool contributions, nway::TakeOut t) {
    if (!p.params.is_auto("n")) return static_cast<int>(p.params.integer("n"));
    const std::string& spec = p.params.text("auto_model");
    const auto model = parse_model(spec.empty() ? kDefaultDisseminationModel : spec);
    const double size = parse_size_bytes(p.params.text("auto_size"));
    return contributions ? best_contributions_n(p.ranks, *model, size)
                         : best_dissemination_n(p.ranks, *model, size, kDisseminationMaxN, t);
}

Schedule generate(const Problem& p) {
    const bool contributions = forwards_contributions(p);
    const nway::TakeOut t = nway::parse_takeout(p.params.text("takeout"));
    const int n = radix(p, contributions, t);
    return contributions ? nway::contributions_schedule(p.ranks, n, p.only_rank)
                         : nway::adapted_schedule(p.ranks, n, t, p.only_rank);
}

std::vector<std::map<std::string, std::string>> sweep() {
    std::vector<std::map<std::string, std::string>> out;
    for (const char* t : {"keep", "inverse", "none"})
        for (int n = 1; n <= 7; ++n) out.push_back({{"n", std::to_string(n)}, {"takeout", t}});
    out.push_back({{"n", "auto"}});
    for (int n = 1; n <= 7; ++n) out.push_back({{"n", std::to_string(n)}, {"forward", "contributions"}});
    out.push_back({{"n", "auto"}, {"forward", "contributions"}});
    return out;
}

const Registration reg{{
    .name = "allreduce/nway_dissemination",
    .collective = Collective::allreduce,
    .summary = "ceil(log_{n+1} P) rounds, all ranks busy; last round adapted (5-tuple) so every x_i counts once",
    .source = "End, Yahyapour, Simmendinger, Alrutz (INFOCOMP 2015); Hensgen, Finkel, Manber (IJPP 1988)",
    .params = {{"n", ParamKind::integer, "auto", 1, 64, "radix: messages per round (auto: best by model, <= 7)"},
               {"takeout", ParamKind::text, "keep", 0, 0,
                "how the receiver removes a double contribution: inverse, keep or none (forward=partial)"},
               {"forward", ParamKind::text, "partial", 0, 0,
                "what the rounds carry: partial (reductions) or contributions (rank-consistent, any op, P blocks tmp)"},
               {"auto_model", ParamKind::text, "", 0, 0, "model spec for n=auto (empty: the documented LogGP default)"},
               {"auto_size", ParamKind::text, "8B", 0, 0, "vector size for n=auto"}},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"full"},
    .sweep_params = sweep(),
    // the paper times n = 1..7 at the first call; more than P - 1 peers per round repeat ranks
    .candidates = [](const CandidateQuery& q) { return range_candidates("n", 1, std::clamp(q.ranks - 1, 1, 7)); },
    .rank_consistent_params = {{"forward", "contributions"}},
    .symmetry = cyclic_symmetry,
}};

}  // namespace
}  // namespace collplan
