// alltoall/bruck -- Bruck's radix-k index all-to-all (store-and-forward, few large messages).
//
// Source:        Bruck, Ho, Kipnis, Upfal, Weathersby, "Efficient algorithms for all-to-all communications in
//                multiport message-passing systems" (IEEE TPDS 1997), sec. 4 (index algorithm, radix r);
//                MPICH MPIR_Alltoall_intra_brucks (radix 2).
// Preconditions: any P >= 1; radix k >= 2; any topology.
// Rounds:        sum over digit positions x (k^x < P) of #{z = 1..k-1 : z k^x < P}, i.e. (k-1) ceil(log_k P)
//                when P is a power of k, fewer otherwise. Phase 1 rotates locally: tmp[j] = in[(r + j) mod P].
//                Round (x, z): send every tmp[j] whose base-k digit x equals z to (r + z k^x) mod P and receive
//                the same positions from (r - z k^x) mod P (into a packed staging area, copied back at the start
//                of the next round; two staging areas alternate so the copy-back overlaps the next receive).
//                Afterwards tmp[j] holds the block rank (r - j) mod P sent to r; phase 3 copies
//                out[(r - j) mod P] = tmp[j] (a rotation and a reversal).
// Cost:          R alpha + (sum over rounds of the blocks sent) m beta, R as above; for P = k^d:
//                (k-1) d alpha + (k-1) d (P/k) m beta   [Hockney; plus local copies]
// Memory:        tmp of P + 2 B blocks, B = the largest number of blocks sent in one round. The schedule holds
//                O(P) segments per rank (block sets are strided runs; the final reversal is P segments):
//                about 0.54 GB for P = 4096, k = 2 (0.13 MB per rank).
// Example:       P = 3, k = 2, rank 0: tmp = (in[0], in[1], in[2]); round (0,1): send tmp[1] to 1, recv from 2
//                into stage; round (1,1): copy stage -> tmp[1]; send tmp[2] to 2, recv from 1 into stage';
//                copy stage' -> tmp[2]; out[0] = tmp[0], out[2] = tmp[1], out[1] = tmp[2].
#include "collplan/algorithms/registry.hpp"

#include <algorithm>
#include <vector>

namespace collplan {
namespace {

struct Round {
    int64_t dist;                 // z k^x
    std::vector<Segment> blocks;  // positions j < P with digit x == z, as runs in tmp
    uint32_t count;               // number of blocks
};

// Runs of j in [0, P) whose digit x (weight w = k^x) equals z: [q k w + z w, +w) for q = 0, 1, ...
Round make_round(int64_t P, int64_t k, int64_t w, int64_t z) {
    Round rd{z * w, {}, 0};
    for (int64_t start = z * w; start < P; start += k * w) {
        const auto n = static_cast<uint32_t>(std::min(w, P - start));
        rd.blocks.emplace_back(Buf::tmp, static_cast<uint32_t>(start), n);
        rd.count += n;
    }
    return rd;
}

std::vector<Round> make_rounds(int64_t P, int64_t k) {
    std::vector<Round> rounds;
    for (int64_t w = 1; w < P; w *= k)
        for (int64_t z = 1; z < k && z * w < P; ++z) rounds.push_back(make_round(P, k, w, z));
    return rounds;
}

// out[(r - j) mod P] = tmp[j] for every j.
void unrotate(RankBuilder& b, uint32_t P, uint32_t r, std::span<const uint32_t> deps) {
    std::vector<Segment> dst;
    dst.reserve(P);
    for (uint32_t j = 0; j < P; ++j) dst.emplace_back(Buf::out, (r + P - j) % P, 1);
    const Segment src(Buf::tmp, 0, P);
    b.copy(std::span(&src, 1), dst, deps);
}

void build_rank(Schedule& s, int r, const std::vector<Round>& rounds, uint32_t stage_blocks) {
    const int P = s.ranks();
    const auto uP = static_cast<uint32_t>(P), ur = static_cast<uint32_t>(r);
    RankBuilder b(s, r);
    std::vector<Segment> rot{Segment(Buf::in, ur, uP - ur)};
    if (r > 0) rot.emplace_back(Buf::in, 0, ur);
    const Segment all_tmp(Buf::tmp, 0, uP);
    b.copy(rot, std::span(&all_tmp, 1));
    for (size_t t = 0; t < rounds.size(); ++t) {
        const Round& rd = rounds[t];
        b.fence();
        std::vector<uint32_t> deps;
        if (t > 0) {  // copy back the previous round's staged blocks before sending from tmp
            const Round& prev = rounds[t - 1];
            const Segment staged(Buf::tmp, uP + static_cast<uint32_t>((t - 1) % 2) * stage_blocks, prev.count);
            deps.push_back(b.copy(std::span(&staged, 1), prev.blocks));
        }
        const Segment stage(Buf::tmp, uP + static_cast<uint32_t>(t % 2) * stage_blocks, rd.count);
        b.send(static_cast<int>((r + rd.dist) % P), 0, rd.blocks, deps);
        b.recv(static_cast<int>((r - rd.dist % P + P) % P), 0, std::span(&stage, 1));
    }
    b.fence();
    std::vector<uint32_t> deps;
    if (!rounds.empty()) {
        const Round& last = rounds.back();
        const Segment staged(Buf::tmp, uP + static_cast<uint32_t>((rounds.size() - 1) % 2) * stage_blocks, last.count);
        deps.push_back(b.copy(std::span(&staged, 1), last.blocks));
    }
    unrotate(b, uP, ur, deps);
}

Schedule generate(const Problem& p) {
    const int P = p.ranks;
    const long long k = p.params.integer("k");
    const std::vector<Round> rounds = make_rounds(P, k);
    uint32_t stage_blocks = 0;
    for (const Round& rd : rounds) stage_blocks = std::max(stage_blocks, rd.count);
    Schedule s(Collective::alltoall, P, static_cast<uint32_t>(P), static_cast<uint32_t>(P),
               static_cast<uint32_t>(P) + 2 * stage_blocks, p.only_rank);
    for (int r : p.build_ranks()) build_rank(s, r, rounds, stage_blocks);
    return s;
}

const Registration reg{{
    .name = "alltoall/bruck",
    .collective = Collective::alltoall,
    .summary = "(k-1) ceil(log_k P) rounds, blocks forwarded by base-k digits of their distance",
    .source = "Bruck et al. (IEEE TPDS 1997); MPICH MPIR_Alltoall_intra_brucks",
    .params = {{"k", ParamKind::integer, "2", 2, 1 << 20, "radix: digits of the block distance in base k"}},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"full"},
    .sweep_params = {{{"k", "2"}}, {{"k", "3"}}, {{"k", "4"}}, {{"k", "5"}}, {{"k", "7"}}},
    // k = P is the direct exchange in P - 1 rounds; radices beyond 16 are only worth it for tiny P
    .candidates = [](const CandidateQuery& q) { return range_candidates("k", 2, std::min(q.ranks, 16)); },
    .symmetry = cyclic_symmetry,
}};

}  // namespace
}  // namespace collplan
