// Sets of ranks in intervals, hash-consed: the verifier's "which contributions does this block hold" and "which
// ranks has this op heard from".
//
// A set is stored once, as its sorted intervals [lo, hi) (disjoint and not touching), and named by an id; equal sets
// have equal ids. The classic algorithms keep their sets in few intervals: recursive doubling's partial results are
// aligned intervals, a ring's and a dissemination's are cyclic ones (two intervals at most), recursive halving's
// are cosets of a subgroup of the ranks (2^k intervals, but shared by every block of a rank, so stored once). A
// bitset per block (P bits for each of P x blocks) is what this replaces: at P = 10^6 it would need P^2 / 8 bytes
// per block and rank -- 125 GB -- where these sets take tens of bytes each.
//
// Memory: per distinct set, 24 bytes plus 8 bytes per interval, plus the hash table (8 bytes per set at most half
// full). Every operation costs the intervals of its operands.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "collplan/schedule/schedule.hpp"

namespace collplan {

struct RankRange {
    uint32_t lo, hi;  // [lo, hi)
    bool operator==(const RankRange&) const = default;
};

class RankSets {
public:
    static constexpr uint32_t kEmpty = 0;    // the id of the empty set
    static constexpr uint32_t kNone = ~0u;   // "no such rank" (first_common, first_absent, first_missing)

    // Ranks 0 .. ranks-1.
    explicit RankSets(int ranks);

    uint32_t single(uint32_t r) { return range(r, r + 1); }
    uint32_t range(uint32_t lo, uint32_t hi);  // [lo, hi); empty when lo >= hi
    std::span<const RankRange> ranges(uint32_t id) const {
        return {pool_.data() + off_[id], count_[id]};
    }
    // a | b. `first_common` (when not null) gets the lowest rank in both, or kNone.
    uint32_t unite(uint32_t a, uint32_t b, uint32_t* first_common = nullptr);
    // a \ b. `first_absent` (when not null) gets the lowest rank of b that is not in a, or kNone.
    uint32_t remove(uint32_t a, uint32_t b, uint32_t* first_absent = nullptr);
    // The lowest rank in [0, ranks) that is not in the set, or kNone.
    uint32_t first_missing(uint32_t id) const;
    bool contains(uint32_t id, uint32_t r) const;
    // The image of the set under the group element that takes rank 0 to rank j (schedule/symmetry.hpp: act).
    uint32_t moved(uint32_t id, Symmetry sym, uint32_t j);
    size_t size() const { return off_.size(); }  // distinct sets so far
    size_t memory_bytes() const;

private:
    uint32_t intern();  // the set in scratch_
    uint64_t hash_of(std::span<const RankRange> r) const;
    void grow();
    void append(RankRange r);  // to scratch_, joining a range that touches the last one

    uint32_t P_;
    std::vector<RankRange> pool_;  // every set's intervals, one after the other
    std::vector<uint64_t> off_;    // id -> first interval in pool_
    std::vector<uint32_t> count_;  // id -> number of intervals
    std::vector<uint32_t> hash_;   // id -> the low 32 bits of its hash
    std::vector<uint32_t> table_;  // ids at the slot of their hash (open addressing, at most half full)
    std::vector<RankRange> scratch_, scratch2_;
};

}  // namespace collplan
