// The complete-exchange family's schedule builders (see exchange_common.hpp and docs/exchange.md).
//
// Multiphase layout. Before a phase every rank holds a list of P blocks, the Standard-Exchange order: once the
// bits in a set S of rank bits have been spanned, rank p holds the block from s to t for the s that agree with p
// outside S and the t that agree with p on S; its position is the "key" (t's bits outside S, s's bits on S)
// rotated left by |S| bits, so the bits the next phase spans are the top bits of the position. A phase spanning
// d_i bits therefore sends each partner a contiguous effective block of S = 2^(d-d_i) blocks (the positions whose
// top bits are the partner's) and receives the partner's into the same positions of a staging area; the shuffle
// then moves position x = b S + y to y 2^d_i + b (a rotation of the position by d_i bits, i.e. the transpose of a
// 2^d_i x S matrix) into the next list. After the last phase the key is the source rank: the list is the output.
#include "collplan/algorithms/alltoall/exchange_common.hpp"

#include <vector>

namespace collplan::exchange {
namespace {

// Appends a segment, merging it into the previous one when it continues it.
void append(std::vector<Segment>& segs, Buf buf, uint32_t first, uint32_t count) {
    if (!segs.empty() && segs.back().buf() == buf && segs.back().first() + segs.back().count == first)
        segs.back().count += count;
    else
        segs.emplace_back(buf, first, count);
}

struct Area {
    Buf buf;
    uint32_t offset;
};

// One phase of rank p: spans rank bits [stop, stop + di); reads the list in `cur`, stages received blocks in
// tmp[0, P), writes the shuffled list to `next`.
void build_phase(RankBuilder& b, uint32_t P, int d, uint32_t p, int stop, int di, Area cur, Area next, bool barrier) {
    const uint32_t D = 1u << di, S = 1u << (d - di), pb = (p >> stop) & (D - 1);
    if (barrier) {
        b.fence();
        b.barrier();
    }
    for (uint32_t j = 1; j < D; ++j) {
        const uint32_t q = p ^ (j << stop), qb = pb ^ j;
        b.fence();
        b.send(static_cast<int>(q), 0, {Segment(cur.buf, cur.offset + qb * S, S)});
        b.recv(static_cast<int>(q), 0, {Segment(Buf::tmp, qb * S, S)});
    }
    std::vector<Segment> src, dst;
    for (uint32_t x = 0; x < D; ++x)
        append(src, x == pb ? cur.buf : Buf::tmp, x == pb ? cur.offset + x * S : x * S, S);
    for (uint32_t x = 0; x < P; ++x) append(dst, next.buf, next.offset + (x % S) * D + x / S, 1);
    b.fence();
    b.copy(src, dst);
}

}  // namespace

int cube_dimension(int P) {
    if (P < 1 || (P & (P - 1)) != 0) return -1;
    int d = 0;
    while ((1 << d) < P) ++d;
    return d;
}

std::string needs_power_of_two(const Problem& p) {
    if (cube_dimension(p.ranks) < 0) return "needs P = 2^d ranks (a hypercube), got P=" + std::to_string(p.ranks);
    return "";
}

ParamSpec barrier_param() {
    return {"barrier", ParamKind::integer, "1", 0, 1,
            "1: a global barrier before every phase (the paper's Q(d), needed by the iPSC/860's FORCED messages)"};
}

Schedule direct_exchange(const Problem& p, bool barrier) {
    const int P = p.ranks;
    const auto uP = static_cast<uint32_t>(P);
    Schedule s(Collective::alltoall, P, uP, uP, 0, p.only_rank);
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        const auto ur = static_cast<uint32_t>(r);
        if (barrier && P > 1) b.barrier();
        for (int k = 1; k < P; ++k) {
            const auto q = static_cast<uint32_t>(r ^ k);
            b.fence();
            b.send(r ^ k, 0, {Segment(Buf::in, q, 1)});
            b.recv(r ^ k, 0, {Segment(Buf::out, q, 1)});
        }
        b.copy({Segment(Buf::in, ur, 1)}, {Segment(Buf::out, ur, 1)});  // during the last step
    }
    return s;
}

Schedule multiphase(const Problem& p, std::span<const int> partition, bool barrier) {
    const int P = p.ranks, d = cube_dimension(P);
    const auto uP = static_cast<uint32_t>(P);
    Schedule s(Collective::alltoall, P, uP, uP, 2 * uP, p.only_rank);
    const size_t k = partition.size();
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        if (k == 0) b.copy({Segment(Buf::in, 0, 1)}, {Segment(Buf::out, 0, 1)});  // P = 1
        Area cur{Buf::in, 0};
        int top = d;
        for (size_t i = 0; i < k; ++i) {
            const Area next = (k - 1 - i) % 2 == 0 ? Area{Buf::out, 0} : Area{Buf::tmp, uP};
            top -= partition[i];
            build_phase(b, uP, d, static_cast<uint32_t>(r), top, partition[i], cur, next, barrier && P > 1);
            cur = next;
        }
    }
    return s;
}

}  // namespace collplan::exchange
