// Rabenseifner's recursive-halving reduce-scatter over the P' = 2^k survivors of MPICH's fold (fold.hpp), shared
// by allreduce/rabenseifner (followed by a recursive-doubling allgather) and reduce/rabenseifner (followed by a
// binomial gather to the root). Partners are paired with the distance-1 bit first (MPICH's order), so every
// reduction joins two adjacent rank intervals with the lower one on the left: exact for non-commutative operations.
#pragma once
#include <vector>

#include "collplan/algorithms/allreduce/fold.hpp"

namespace collplan {

// Segments [lo, hi) of the vector.
struct SegmentRange {
    uint32_t lo, hi;
    Segment seg(Buf b) const { return Segment(b, lo, hi - lo); }
};

// The ranges of new rank nr's halving rounds over segments [0, S): in round k (mask 2^k) the lower new rank of
// the pair nr, nr XOR 2^k keeps the lower half of what it holds and gives the other half to its partner.
struct HalvingRounds {
    std::vector<SegmentRange> kept, given;  // per round
    SegmentRange owned;                     // what the rank holds at the end (every segment when P' = 1)
};
inline HalvingRounds halving_rounds(int pof2, int nr, uint32_t S) {
    HalvingRounds h{{}, {}, SegmentRange{0, S}};
    for (int mask = 1; mask < pof2; mask <<= 1) {
        const SegmentRange mine = h.owned;
        const uint32_t mid = (mine.lo + mine.hi) / 2;
        const bool lower = (nr & mask) == 0;
        h.kept.push_back(lower ? SegmentRange{mine.lo, mid} : SegmentRange{mid, mine.hi});
        h.given.push_back(lower ? SegmentRange{mid, mine.hi} : SegmentRange{mine.lo, mid});
        h.owned = h.kept.back();
    }
    return h;
}

// Rank r's halving rounds over S segments: send the given half from `acc`, receive the kept half into tmp from
// block `tmp_first` on and reduce it into acc (the lower rank's interval on the left). With `first` other than
// acc, acc does not hold the rank's vector yet: the first round sends its given half straight from `first` and,
// once that exchange is done, copies only the kept half into acc -- no copy of the whole vector before the first
// message (a non-blocking start posts at once), and half the copying.
inline HalvingRounds halving_reduce_scatter(RankBuilder& b, const Fold& f, int r, uint32_t S, Buf acc,
                                            uint32_t tmp_first, Buf first) {
    const int nr = f.new_rank(r);
    HalvingRounds h = halving_rounds(f.pof2, nr, S);
    for (size_t k = 0; k < h.kept.size(); ++k) {
        const int partner = f.real_rank(nr ^ (1 << k));
        const SegmentRange keep = h.kept[k];
        const bool direct = k == 0 && first != acc;
        b.fence();
        b.send(partner, 0, {h.given[k].seg(direct ? first : acc)});
        b.recv(partner, 0, {Segment(Buf::tmp, tmp_first, keep.hi - keep.lo)});
        b.fence();
        if (direct) {
            b.copy({keep.seg(first)}, {keep.seg(acc)});
            b.fence();
        }
        b.reduce({Segment(Buf::tmp, tmp_first, keep.hi - keep.lo)}, {keep.seg(acc)}, {},
                 partner < r ? 0 : opflag::reverse);
    }
    return h;
}

}  // namespace collplan
