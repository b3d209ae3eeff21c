#include "collplan/verify/rank_sets.hpp"

#include <algorithm>
#include <bit>

#include "collplan/common/error.hpp"

namespace collplan {

namespace {
constexpr uint32_t kFree = ~0u;  // an empty slot of the hash table
}

RankSets::RankSets(int ranks) : P_(static_cast<uint32_t>(ranks)) {
    if (ranks < 0) throw Error("RankSets: " + std::to_string(ranks) + " ranks (allowed: >= 0)");
    table_.assign(64, kFree);
    intern();  // id 0 = kEmpty: scratch_ is empty
}

uint64_t RankSets::hash_of(std::span<const RankRange> r) const {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ r.size();
    for (const RankRange& x : r) h = (h ^ (uint64_t{x.lo} << 32 | x.hi)) * 0xff51afd7ed558ccdull, h ^= h >> 29;
    return h;
}

uint32_t RankSets::intern() {
    if (2 * (off_.size() + 1) > table_.size()) grow();
    const uint64_t h = hash_of(scratch_);
    const size_t mask = table_.size() - 1;
    size_t i = (h * 0x9e3779b97f4a7c15ull) >> (64 - std::countr_zero(table_.size()));
    for (; table_[i] != kFree; i = (i + 1) & mask) {
        const uint32_t id = table_[i];
        if (hash_[id] == static_cast<uint32_t>(h) && count_[id] == scratch_.size() &&
            std::equal(scratch_.begin(), scratch_.end(), pool_.begin() + static_cast<ptrdiff_t>(off_[id])))
            return id;
    }
    if (off_.size() >= kNone) throw Error("the verifier's rank sets exceed 2^32 distinct sets");
    const auto id = static_cast<uint32_t>(off_.size());
    off_.push_back(pool_.size());
    count_.push_back(static_cast<uint32_t>(scratch_.size()));
    hash_.push_back(static_cast<uint32_t>(h));
    pool_.insert(pool_.end(), scratch_.begin(), scratch_.end());
    return table_[i] = id;
}

void RankSets::grow() {
    table_.assign(2 * table_.size(), kFree);
    const size_t mask = table_.size() - 1;
    for (uint32_t id = 0; id < off_.size(); ++id) {
        size_t i = (hash_of(ranges(id)) * 0x9e3779b97f4a7c15ull) >> (64 - std::countr_zero(table_.size()));
        while (table_[i] != kFree) i = (i + 1) & mask;
        table_[i] = id;
    }
}

void RankSets::append(RankRange r) {
    if (r.lo >= r.hi) return;
    if (!scratch_.empty() && r.lo <= scratch_.back().hi) {
        scratch_.back().hi = std::max(scratch_.back().hi, r.hi);
        return;
    }
    scratch_.push_back(r);
}

uint32_t RankSets::range(uint32_t lo, uint32_t hi) {
    scratch_.clear();
    append({lo, std::min(hi, P_)});
    return intern();
}

uint32_t RankSets::unite(uint32_t a, uint32_t b, uint32_t* first_common) {
    const auto A = ranges(a), B = ranges(b);
    if (first_common) {
        *first_common = kNone;
        for (size_t i = 0, j = 0; i < A.size() && j < B.size();) {
            const uint32_t lo = std::max(A[i].lo, B[j].lo), hi = std::min(A[i].hi, B[j].hi);
            if (lo < hi) {
                *first_common = lo;
                break;
            }
            A[i].hi < B[j].hi ? ++i : ++j;
        }
    }
    if (a == b || b == kEmpty) return a;
    if (a == kEmpty) return b;
    scratch_.clear();
    for (size_t i = 0, j = 0; i < A.size() || j < B.size();)
        append(j == B.size() || (i < A.size() && A[i].lo < B[j].lo) ? A[i++] : B[j++]);
    return intern();
}

uint32_t RankSets::remove(uint32_t a, uint32_t b, uint32_t* first_absent) {
    const auto A = ranges(a), B = ranges(b);
    if (first_absent) {  // the lowest rank of B outside every interval of A
        *first_absent = kNone;
        size_t i = 0;
        for (const RankRange& x : B) {
            uint32_t r = x.lo;
            while (r < x.hi) {
                while (i < A.size() && A[i].hi <= r) ++i;
                if (i == A.size() || A[i].lo > r) break;
                r = A[i].hi;
            }
            if (r < x.hi) {
                *first_absent = r;
                break;
            }
        }
    }
    scratch_.clear();
    size_t j = 0;
    for (const RankRange& x : A) {  // x minus every interval of B
        uint32_t lo = x.lo;
        while (j < B.size() && B[j].hi <= lo) ++j;
        for (size_t k = j; k < B.size() && B[k].lo < x.hi; ++k) {
            append({lo, std::min(B[k].lo, x.hi)});
            lo = std::max(lo, B[k].hi);
        }
        append({lo, x.hi});
    }
    return intern();
}

uint32_t RankSets::first_missing(uint32_t id) const {
    uint32_t r = 0;
    for (const RankRange& x : ranges(id)) {
        if (x.lo > r) return r;
        r = x.hi;
    }
    return r < P_ ? r : kNone;
}

bool RankSets::contains(uint32_t id, uint32_t r) const {
    const auto R = ranges(id);
    const auto it = std::upper_bound(R.begin(), R.end(), r, [](uint32_t v, const RankRange& x) { return v < x.hi; });
    return it != R.end() && it->lo <= r;
}

uint32_t RankSets::moved(uint32_t id, Symmetry sym, uint32_t j) {
    if (j == 0 || sym == Symmetry::none || id == kEmpty) return id;
    scratch2_.clear();
    for (const RankRange& x : ranges(id)) {
        if (sym == Symmetry::cyclic) {  // [lo + j, hi + j) mod P: one interval, or two where it wraps
            const uint64_t lo = uint64_t{x.lo} + j, hi = uint64_t{x.hi} + j;
            if (lo >= P_) {
                scratch2_.push_back({static_cast<uint32_t>(lo - P_), static_cast<uint32_t>(hi - P_)});
            } else if (hi > P_) {
                scratch2_.push_back({static_cast<uint32_t>(lo), P_});
                scratch2_.push_back({0, static_cast<uint32_t>(hi - P_)});
            } else {
                scratch2_.push_back({static_cast<uint32_t>(lo), static_cast<uint32_t>(hi)});
            }
            continue;
        }
        // XOR j: an aligned block of 2^k ranks stays one; split the interval into the largest aligned blocks
        for (uint32_t lo = x.lo; lo < x.hi;) {
            uint32_t size = lo ? uint32_t{1} << std::countr_zero(lo) : std::bit_floor(x.hi);
            while (size > x.hi - lo) size >>= 1;
            const uint32_t to = (lo ^ j) & ~(size - 1);
            scratch2_.push_back({to, to + size});
            lo += size;
        }
    }
    std::sort(scratch2_.begin(), scratch2_.end(), [](const RankRange& a, const RankRange& b) { return a.lo < b.lo; });
    scratch_.clear();
    for (const RankRange& x : scratch2_) append(x);
    return intern();
}

size_t RankSets::memory_bytes() const {
    return pool_.capacity() * sizeof(RankRange) + off_.capacity() * 8 + (count_.capacity() + hash_.capacity()) * 4 +
           table_.capacity() * 4 + (scratch_.capacity() + scratch2_.capacity()) * sizeof(RankRange);
}

}  // namespace collplan
