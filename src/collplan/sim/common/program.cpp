#include "collplan/sim/common/program.hpp"

namespace collplan::sim {

RankCursor::RankCursor(const RankProgram& prog)
    : ops_(prog.ops.data()), segs_(prog.segs.data()), size_(static_cast<uint32_t>(prog.ops.size())),
      num_segs_(static_cast<uint32_t>(prog.segs.size())), any_deps_(!prog.deps.empty()), any_units_(!prog.units.empty()) {
    if (any_deps_ || any_units_) g_ = std::make_unique<GroupDeps>(), g_->prog = &prog;
}

uint64_t RankCursor::units(uint32_t k) const {
    if (any_units_) return g_->prog->units[k];
    const Op& o = ops_[k];
    if (o.kind == OpKind::calc) return static_cast<uint32_t>(o.aux);
    const uint32_t end = k + 1 < size_ ? ops_[k + 1].seg_begin : num_segs_;
    const uint32_t n = o.kind == OpKind::copy || o.kind == OpKind::reduce ? static_cast<uint32_t>(o.aux) : end - o.seg_begin;
    return block_count(std::span<const Segment>(segs_ + o.seg_begin, n));
}

std::span<const uint32_t> RankCursor::deps(uint32_t k) const {
    const RankProgram& p = *g_->prog;
    const uint32_t end = k + 1 < size_ ? ops_[k + 1].dep_begin : static_cast<uint32_t>(p.deps.size());
    return std::span<const uint32_t>(p.deps.data() + ops_[k].dep_begin, end - ops_[k].dep_begin);
}

size_t RankCursor::memory_bytes() const {
    if (!g_) return 0;
    return (g_->pending.capacity() + g_->offset.capacity() + g_->dependents.capacity()) * 4 +
           g_->done.capacity() * sizeof(Time) + sizeof(GroupDeps);
}

void RankCursor::start(std::vector<uint32_t>& ready) {
    group_begin_ = group_end_ = remaining_ = 0;
    if (size_ > 0) open(0, ready);
}

void RankCursor::open(uint32_t begin, std::vector<uint32_t>& ready) {
    uint32_t end = begin + 1;
    while (end < size_ && !ops_[end].fence()) ++end;
    group_begin_ = begin;
    group_end_ = end;
    remaining_ = end - begin;
    if (any_deps_) build_group_deps();
    for (uint32_t k = begin; k < end; ++k)
        if (!group_deps_ || g_->pending[k - begin] == 0) ready.push_back(k);
}

// Fills the pending counts and dependents for the explicit deps that point into the active group (deps on earlier
// groups are complete already); leaves group_deps_ false when the group has none.
void RankCursor::build_group_deps() {
    const uint32_t b = group_begin_, n = group_end_ - b;
    group_deps_ = false;
    for (uint32_t k = b; k < group_end_ && !group_deps_; ++k)
        for (uint32_t d : deps(k)) group_deps_ = group_deps_ || d >= b;
    if (!group_deps_) return;
    std::vector<uint32_t>& pending = g_->pending;
    std::vector<uint32_t>& offset = g_->offset;
    pending.assign(n, 0);
    g_->done.assign(n, Time::never());
    offset.assign(n + 1, 0);
    for (uint32_t k = b; k < group_end_; ++k)
        for (uint32_t d : deps(k))
            if (d >= b) ++pending[k - b], ++offset[d - b + 1];
    for (uint32_t i = 0; i < n; ++i) offset[i + 1] += offset[i];
    g_->dependents.resize(offset[n]);
    std::vector<uint32_t> fill(offset.begin(), offset.end() - 1);
    for (uint32_t k = b; k < group_end_; ++k)
        for (uint32_t d : deps(k))
            if (d >= b) g_->dependents[fill[d - b]++] = k - b;
}

void RankCursor::complete(uint32_t k, std::vector<uint32_t>& ready) {
    if (group_deps_) {
        const uint32_t rel = k - group_begin_;
        for (uint32_t x = g_->offset[rel]; x < g_->offset[rel + 1]; ++x)
            if (--g_->pending[g_->dependents[x]] == 0) ready.push_back(group_begin_ + g_->dependents[x]);
    }
    if (--remaining_ == 0 && group_end_ < size_) open(group_end_, ready);
}

}  // namespace collplan::sim

namespace collplan::sim {

void TimedCursor::start(std::vector<uint32_t>& ready) { c_.start(ready); }

void TimedCursor::complete(uint32_t k, Time done, std::vector<uint32_t>& ready) {
    const uint32_t begin = c_.group_begin();
    if (c_.group_has_deps()) c_.group_done()[k - begin] = done;
    latest_ = max(latest_, done);
    c_.complete(k, ready);
    if (c_.group_begin() != begin) open_ = latest_;  // the group completed and the next one opened
}

Time TimedCursor::ready_time_with_deps(uint32_t k) const {
    Time t = open_;
    const uint32_t begin = c_.group_begin();
    for (uint32_t d : c_.deps_of(k))
        if (d >= begin) t = max(t, c_.group_done()[d - begin]);
    return t;
}

}  // namespace collplan::sim
