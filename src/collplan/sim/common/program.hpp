// Streaming a rank's program for the simulators: the cursor knows only the active dependency group (docs/
// schedule.md: an op may start when every op of the earlier groups and every op of its explicit dependency list
// has completed), so the memory it needs is bounded by the largest group, not by the length of the schedule.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "collplan/schedule/schedule.hpp"
#include "collplan/sim/common/time.hpp"

namespace collplan::sim {

class RankCursor {
public:
    RankCursor() = default;
    explicit RankCursor(const RankProgram& prog) : prog_(&prog) {}

    // Opens the first group; appends the ops that are ready to `ready` in program order.
    void start(std::vector<uint32_t>& ready);
    // Op k (of the active group) completed: appends the ops this makes ready, in program order (dependents inside
    // the group, or the free ops of the next group once the whole group has completed).
    void complete(uint32_t k, std::vector<uint32_t>& ready);
    bool finished() const { return remaining_ == 0 && group_end_ >= size(); }
    uint32_t size() const { return prog_ ? static_cast<uint32_t>(prog_->ops.size()) : 0; }
    uint32_t group_begin() const { return group_begin_; }
    uint32_t group_end() const { return group_end_; }
    uint32_t remaining() const { return remaining_; }
    size_t memory_bytes() const { return (pending_.capacity() + offset_.capacity() + dependents_.capacity()) * 4; }
    bool group_has_deps() const { return !pending_.empty(); }  // explicit dependencies inside the active group

private:
    std::span<const uint32_t> deps(uint32_t k) const;
    void open(uint32_t begin, std::vector<uint32_t>& ready);
    void build_group_deps();

    const RankProgram* prog_ = nullptr;
    uint32_t group_begin_ = 0, group_end_ = 0, remaining_ = 0;
    std::vector<uint32_t> pending_;              // per op of the group: in-group deps not yet complete (or empty)
    std::vector<uint32_t> offset_, dependents_;  // CSR over the group: the ops waiting for each op

public:
    std::span<const uint32_t> deps_of(uint32_t k) const { return deps(k); }
};

// A cursor that also knows when each op of the active group completed, so that a newly ready op gets the right
// ready time: the latest completion among its in-group dependencies and the ops of the earlier groups.
class TimedCursor {
public:
    TimedCursor() = default;
    explicit TimedCursor(const RankProgram& prog) : c_(prog) {}
    void start(std::vector<uint32_t>& ready);
    // Op k completed at `done`: appends the ops this makes ready (program order).
    void complete(uint32_t k, Time done, std::vector<uint32_t>& ready);
    Time ready_time(uint32_t k) const;  // for an op of the active group that is ready
    bool finished() const { return c_.finished(); }
    const RankCursor& cursor() const { return c_; }
    Time last_done() const { return latest_; }
    size_t memory_bytes() const { return c_.memory_bytes() + done_.capacity() * sizeof(Time); }
    void prefetch() const { __builtin_prefetch(done_.data()); }

private:
    RankCursor c_;
    std::vector<Time> done_;     // per op of the active group (only when the group has in-group dependencies)
    Time open_ = Time::zero();   // the latest completion of the earlier groups
    Time latest_ = Time::zero(); // the latest completion so far
};

}  // namespace collplan::sim
