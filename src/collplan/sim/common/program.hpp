// Streaming a rank's program for the simulators: the cursor knows only the active dependency group (docs/
// schedule.md: an op may start when every op of the earlier groups and every op of its explicit dependency list
// has completed), so the memory it needs is bounded by the largest group, not by the length of the schedule.
//
// Layout: simulators of 65,536 ranks touch one cursor per step of every rank, so a cursor is small (one cache line
// for TimedCursor) and holds the program's op array itself; the bookkeeping of explicit dependencies inside a group
// lives out of line and is made only for programs that have explicit dependencies at all.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "collplan/schedule/schedule.hpp"
#include "collplan/sim/common/time.hpp"

namespace collplan::sim {

class RankCursor {
public:
    RankCursor() = default;
    explicit RankCursor(const RankProgram& prog);

    // Opens the first group; appends the ops that are ready to `ready` in program order.
    void start(std::vector<uint32_t>& ready);
    // Op k (of the active group) completed: appends the ops this makes ready, in program order (dependents inside
    // the group, or the free ops of the next group once the whole group has completed).
    void complete(uint32_t k, std::vector<uint32_t>& ready);
    bool finished() const { return remaining_ == 0 && group_end_ >= size_; }
    uint32_t size() const { return size_; }
    const Op& op(uint32_t k) const { return ops_[k]; }
    const Op* ops() const { return ops_; }
    const Segment* segs() const { return segs_; }
    // The units op k moves (Schedule::op(r, k).units without the bounds checks).
    uint64_t units(uint32_t k) const;
    uint32_t group_begin() const { return group_begin_; }
    uint32_t group_end() const { return group_end_; }
    uint32_t remaining() const { return remaining_; }
    size_t memory_bytes() const;
    bool group_has_deps() const { return group_deps_; }  // explicit dependencies inside the active group
    std::span<const uint32_t> deps_of(uint32_t k) const { return deps(k); }
    // When each op of the active group completed (Time::never() if not yet); only while group_has_deps().
    Time* group_done() { return g_->done.data(); }
    const Time* group_done() const { return g_->done.data(); }

private:
    struct GroupDeps {  // made only for programs with explicit dependencies or explicit units
        const RankProgram* prog = nullptr;
        std::vector<uint32_t> pending;             // per op of the group: in-group deps not yet complete
        std::vector<uint32_t> offset, dependents;  // CSR over the group: the ops waiting for each op
        std::vector<Time> done;                    // per op of the group: when it completed (for TimedCursor)
    };
    std::span<const uint32_t> deps(uint32_t k) const;
    void open(uint32_t begin, std::vector<uint32_t>& ready);
    void build_group_deps();

    const Op* ops_ = nullptr;
    const Segment* segs_ = nullptr;
    uint32_t size_ = 0, num_segs_ = 0, group_begin_ = 0, group_end_ = 0, remaining_ = 0;
    bool any_deps_ = false;    // the program has explicit dependencies
    bool any_units_ = false;   // the program has explicit units
    bool group_deps_ = false;  // ... and some of them point into the active group (then g_ holds their state)
    std::unique_ptr<GroupDeps> g_;
};

// A cursor that also knows when each op of the active group completed, so that a newly ready op gets the right
// ready time: the latest completion among its in-group dependencies and the ops of the earlier groups.
class alignas(64) TimedCursor {
public:
    TimedCursor() = default;
    explicit TimedCursor(const RankProgram& prog) : c_(prog) {}
    void start(std::vector<uint32_t>& ready);
    // Op k completed at `done`: appends the ops this makes ready (program order).
    void complete(uint32_t k, Time done, std::vector<uint32_t>& ready);
    Time ready_time(uint32_t k) const {  // for an op of the active group that is ready
        return c_.group_has_deps() ? ready_time_with_deps(k) : open_;
    }
    bool finished() const { return c_.finished(); }
    const RankCursor& cursor() const { return c_; }
    const Op& op(uint32_t k) const { return c_.op(k); }
    uint64_t units(uint32_t k) const { return c_.units(k); }
    Time last_done() const { return latest_; }
    size_t memory_bytes() const { return c_.memory_bytes(); }

private:
    Time ready_time_with_deps(uint32_t k) const;

    Time open_ = Time::zero();    // the latest completion of the earlier groups
    Time latest_ = Time::zero();  // the latest completion so far
    RankCursor c_;
};
static_assert(sizeof(TimedCursor) == 64, "a timed cursor is one cache line");

}  // namespace collplan::sim
