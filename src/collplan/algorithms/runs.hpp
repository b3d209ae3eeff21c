// The blocks of an op over items of different sizes (allgatherv, reduce_scatter: Schedule::counts), without the
// empty ones: an empty item need not travel, and a block that never received one must not be read. Consecutive
// blocks of one buffer merge into one segment; `units` is the op's explicit size.
#pragma once
#include <vector>

#include "collplan/schedule/schedule.hpp"

namespace collplan {

struct Runs {
    std::vector<Segment> segs;
    uint64_t units = 0;

    // Adds block `block` of `b` holding an item of `u` units (nothing when u = 0).
    void add(Buf b, uint32_t block, uint64_t u) {
        if (u == 0) return;
        units += u;
        if (!segs.empty() && segs.back().buf() == b && segs.back().first() + segs.back().count == block)
            ++segs.back().count;
        else
            segs.emplace_back(b, block, 1);
    }
    bool empty() const { return units == 0; }
};

}  // namespace collplan
