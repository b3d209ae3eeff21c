// MPICH's binomial tree over ranks relative to a root, shared by the rooted tree algorithms (bcast/binomial, the
// scatter of bcast/scatter_*_allgather, gather/binomial, scatter/binomial).
//
// Relative rank v = (rank - root) mod P. The parent of v > 0 is v - lowbit(v) (lowbit = its lowest set bit); the
// children of v are v + 2^j for every 2^j < lowbit(v) (the root: every 2^j < P) with v + 2^j < P. The subtree of
// v is the contiguous relative range [v, v + span(v)), span(v) = min(lowbit(v), P - v) (the root: P).
// Example, P = 6: 0 -> {4, 2, 1}, 2 -> {3}, 4 -> {5}; span(4) = 2, span(2) = 2, span(1) = 1.
#pragma once
#include <algorithm>
#include <vector>

#include "collplan/schedule/schedule.hpp"

namespace collplan {

struct BinomialTree {
    int P, root;
    BinomialTree(int ranks, int root_rank) : P(ranks), root(root_rank) {}

    int rel(int rank) const { return (rank - root + P) % P; }
    int real(int v) const { return (v + root) % P; }
    // Lowest set bit of v; for the root (v = 0) the smallest power of two >= P.
    int lowbit(int v) const {
        if (v != 0) return v & -v;
        int m = 1;
        while (m < P) m <<= 1;
        return m;
    }
    int parent(int v) const { return v - lowbit(v); }  // v > 0
    int span(int v) const { return std::min(lowbit(v), P - v); }
    // The largest subtree below the root (the scratch a non-root needs for its subtree's blocks, plus its own).
    int max_child_span() const {
        int best = 0;
        for (int m = 1; m < P; m <<= 1) best = std::max(best, span(m));
        return best;
    }
    // Masks 2^j of v's children (v + 2^j < P), largest first: the order MPICH sends in.
    std::vector<int> child_masks(int v) const {
        std::vector<int> masks;
        for (int m = lowbit(v) >> 1; m > 0; m >>= 1)
            if (v + m < P) masks.push_back(m);
        return masks;
    }
};

// Blocks [first, first + count) of a buffer of `total` blocks read cyclically (first < total, count <= total):
// one segment, or two when the range wraps past the end (what MPICH's root describes with a struct datatype).
inline std::vector<Segment> cyclic_segments(Buf b, uint32_t first, uint32_t count, uint32_t total) {
    if (count == 0) return {};
    if (first + count <= total) return {Segment(b, first, count)};
    return {Segment(b, first, total - first), Segment(b, 0, first + count - total)};
}

}  // namespace collplan
