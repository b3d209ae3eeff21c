// reduce_scatter_block/nway_dissemination -- the n-way dissemination pattern as a reduce-scatter: ceil(log_{n+1}
// P) rounds, in round k rank r sends to r + i (n+1)^k and receives from r - i (n+1)^k, i = 1..n.
//
// Source:        the seed's idea: End, Yahyapour, Simmendinger, Alrutz, "Adaption of the n-way dissemination
//                algorithm for GASPI split-phase allreduce" (INFOCOMP 2015) -- its peers, carried over to a
//                reduce-scatter (Hensgen, Finkel, Manber's dissemination pattern with radix n + 1; for n = 1 the
//                data movement of Bruck et al.'s reduce-scatter). Derived here, not in the paper: the blocks each
//                message carries, below.
// Preconditions: any P >= 1, radix n = 1..64; any topology; commutative operation (a block's partial results
//                combine ranks by the digits of their distance, not in rank order). Unlike the allreduce of the
//                paper, no adaption is needed for P != (n+1)^k: every contribution x_s[j] travels one path (from
//                s to j by the base-(n+1) digits of its distance (j - s) mod P, lowest first), so it is counted
//                exactly once -- there is no last round that reaches a rank twice.
// Rounds:        R = ceil(log_{n+1} P). Before round k rank r holds the partial results of the blocks j whose
//                distance d = (j - r) mod P has its k lowest digits zero; in round k it sends those with digit
//                k = i to r + i (n+1)^k (a message per i that some d < P has: i (n+1)^k < P) and combines what it
//                receives from r - i (n+1)^k into the blocks it keeps.
// Cost:          n R alpha + (P - 1) m beta + (P - 1) m gamma   [Hockney, one port: the n sends of a round
//                serialise; each distance d >= 1 is sent once, at its lowest nonzero digit]. For n = 1 that is
//                recursive halving's cost at P = 2^d without its fold elsewhere; with n sends in flight at once
//                (LogGP, several ports) a round costs about one latency, R = log_{n+1} P of them.
// Memory:        tmp of P - 1 blocks (each received block gets its own; a block's first reduction keeps the
//                result where it was received, so nothing is copied but x_r[r] into out). S = 1: in = P, out = 1.
// Example:       P = 3, n = 1, rank 0: out = x0[0]; round 0 (d = 1): send in[1] to 1, recv tmp[0] = x2[0] from 2,
//                out = tmp[0] (+) out; round 1 (d = 2): send in[2] to 2, recv tmp[1] = x1[0] from 1, out = tmp[1]
//                (+) out.
// Consistency:   rank-consistent (each result block is computed on one rank only).
#include "collplan/algorithms/registry.hpp"

#include <algorithm>
#include <vector>

namespace collplan {
namespace {

void build_rank(Schedule& s, int r, int n) {
    const int P = s.ranks();
    const int base = n + 1;
    RankBuilder b(s, r);
    const auto at = [](Buf buf, int j) { return Segment(buf, static_cast<uint32_t>(j), 1); };
    // Where the partial result of block j is: in[j] until something was combined into it.
    std::vector<Segment> loc(static_cast<size_t>(P));
    for (int j = 0; j < P; ++j) loc[static_cast<size_t>(j)] = at(Buf::in, j);
    loc[static_cast<size_t>(r)] = at(Buf::out, 0);
    b.copy({at(Buf::in, r)}, {loc[static_cast<size_t>(r)]});
    int slot = 0;  // next free tmp block
    for (long long step = 1; step < P; step *= base) {
        // The distances d < P with lower digits zero and digit k = i, per i (the same set on every rank).
        std::vector<std::vector<int>> dist(static_cast<size_t>(n) + 1);
        for (long long d = step; d < P; d += step)
            if (const auto i = static_cast<size_t>((d / step) % base); i != 0) dist[i].push_back(static_cast<int>(d));
        b.fence();
        struct Message {
            int i, from;
            std::vector<Segment> slots;
        };
        std::vector<Message> incoming;
        for (int i = 1; i <= n; ++i) {
            const auto& ds = dist[static_cast<size_t>(i)];
            if (ds.empty()) continue;
            const int to = static_cast<int>((r + i * step) % P), from = static_cast<int>((r - (i * step) % P + P) % P);
            std::vector<Segment> data;
            for (int d : ds) data.push_back(loc[static_cast<size_t>((r + d) % P)]);
            b.send(to, 0, data);
            std::vector<Segment> slots;
            for (size_t q = 0; q < ds.size(); ++q) slots.push_back(at(Buf::tmp, slot++));
            b.recv(from, 0, slots);
            incoming.push_back({i, from, std::move(slots)});
        }
        for (const Message& msg : incoming) {
            b.fence();  // messages of one round may carry the same block (from different senders)
            const auto& ds = dist[static_cast<size_t>(msg.i)];
            for (size_t q = 0; q < ds.size(); ++q) {
                const auto j = static_cast<size_t>((msg.from + ds[q]) % P);
                const Segment got = msg.slots[q];
                if (loc[j].buf() == Buf::in) {  // the first contribution: keep the result where it arrived
                    b.reduce({loc[j]}, {got});
                    loc[j] = got;
                } else {
                    b.reduce({got}, {loc[j]});
                }
            }
        }
    }
}

Schedule generate(const Problem& p) {
    const int n = static_cast<int>(p.params.integer("n"));
    const auto U = static_cast<uint32_t>(p.ranks);
    Schedule s(Collective::reduce_scatter_block, p.ranks, U, 1, std::max(1u, U - 1), p.only_rank);
    s.needs_commutative = true;
    s.rank_consistent = true;
    for (int r : p.build_ranks()) build_rank(s, r, n);
    return s;
}

const Registration reg{{
    .name = "reduce_scatter_block/nway_dissemination",
    .collective = Collective::reduce_scatter_block,
    .summary = "ceil(log_{n+1} P) rounds of n messages to r + i (n+1)^k; P-1 blocks per rank, any P (commutative)",
    .source = "n-way dissemination (End, Yahyapour, Simmendinger, Alrutz, INFOCOMP 2015) as a reduce-scatter",
    .params = {{"n", ParamKind::integer, "1", 1, 64, "radix: messages per round"}},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"full"},
    .sweep_params = {{{"n", "1"}}, {{"n", "2"}}, {{"n", "3"}}, {{"n", "7"}}},
    .candidates = [](const CandidateQuery& q) { return range_candidates("n", 1, std::clamp(q.ranks - 1, 1, 7)); },
    .symmetry = cyclic_symmetry,
}};

}  // namespace
}  // namespace collplan
