#include "collplan/sim/common/program.hpp"

namespace collplan::sim {

std::span<const uint32_t> RankCursor::deps(uint32_t k) const {
    const RankProgram& p = *prog_;
    const uint32_t end = k + 1 < p.ops.size() ? p.ops[k + 1].dep_begin : static_cast<uint32_t>(p.deps.size());
    return std::span<const uint32_t>(p.deps.data() + p.ops[k].dep_begin, end - p.ops[k].dep_begin);
}

void RankCursor::start(std::vector<uint32_t>& ready) {
    group_begin_ = group_end_ = remaining_ = 0;
    if (size() > 0) open(0, ready);
}

void RankCursor::open(uint32_t begin, std::vector<uint32_t>& ready) {
    const auto& ops = prog_->ops;
    uint32_t end = begin + 1;
    while (end < ops.size() && !ops[end].fence()) ++end;
    group_begin_ = begin;
    group_end_ = end;
    remaining_ = end - begin;
    build_group_deps();
    for (uint32_t k = begin; k < end; ++k)
        if (pending_.empty() || pending_[k - begin] == 0) ready.push_back(k);
}

// Fills pending_/dependents_ for the explicit deps that point into the active group (deps on earlier groups are
// complete already); leaves them empty when the group has none.
void RankCursor::build_group_deps() {
    const uint32_t b = group_begin_, n = group_end_ - b;
    pending_.clear();
    bool any = false;
    for (uint32_t k = b; k < group_end_ && !any; ++k)
        for (uint32_t d : deps(k)) any = any || d >= b;
    if (!any) return;
    pending_.assign(n, 0);
    offset_.assign(n + 1, 0);
    for (uint32_t k = b; k < group_end_; ++k)
        for (uint32_t d : deps(k))
            if (d >= b) ++pending_[k - b], ++offset_[d - b + 1];
    for (uint32_t i = 0; i < n; ++i) offset_[i + 1] += offset_[i];
    dependents_.resize(offset_[n]);
    std::vector<uint32_t> fill(offset_.begin(), offset_.end() - 1);
    for (uint32_t k = b; k < group_end_; ++k)
        for (uint32_t d : deps(k))
            if (d >= b) dependents_[fill[d - b]++] = k - b;
}

void RankCursor::complete(uint32_t k, std::vector<uint32_t>& ready) {
    if (!pending_.empty()) {
        const uint32_t rel = k - group_begin_;
        for (uint32_t x = offset_[rel]; x < offset_[rel + 1]; ++x)
            if (--pending_[dependents_[x]] == 0) ready.push_back(group_begin_ + dependents_[x]);
    }
    if (--remaining_ == 0 && group_end_ < size()) open(group_end_, ready);
}

}  // namespace collplan::sim

namespace collplan::sim {

void TimedCursor::start(std::vector<uint32_t>& ready) {
    c_.start(ready);
    if (c_.group_has_deps()) done_.assign(c_.group_end() - c_.group_begin(), Time::never());
}

void TimedCursor::complete(uint32_t k, Time done, std::vector<uint32_t>& ready) {
    const uint32_t begin = c_.group_begin();
    if (c_.group_has_deps()) done_[k - begin] = done;
    latest_ = max(latest_, done);
    c_.complete(k, ready);
    if (c_.group_begin() != begin) {  // the group completed and the next one opened
        open_ = latest_;
        if (c_.group_has_deps()) done_.assign(c_.group_end() - c_.group_begin(), Time::never());
    }
}

Time TimedCursor::ready_time(uint32_t k) const {
    if (!c_.group_has_deps()) return open_;  // nothing inside the group to wait for
    Time t = open_;
    const uint32_t begin = c_.group_begin();
    for (uint32_t d : c_.deps_of(k))
        if (d >= begin) t = max(t, done_[d - begin]);
    return t;
}

}  // namespace collplan::sim
