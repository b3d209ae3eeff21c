// collplan::Job -- what one job (a command, an API call) may use and how it is told to stop.
//
// Memory. Every long computation estimates the memory it needs from its inputs before it allocates (the IR's bytes
// per op are known, schedule.hpp) and refuses with one line naming the need and the limit:
//   "verify of alltoall/pairwise at P=1000000 needs about 48GiB (limit 12GiB, --max-memory)".
// The limit defaults to a quarter of the machine's physical memory: room for the job beside the rest of the machine
// (a 24 GiB workstation: 6 GiB; the largest bench/ simulations need about 0.3 GiB).
//
// Cancellation. Long loops (verify, estimate, the simulators, schedule generation, sweeps, tuning) call
// CancelPoll::tick() once per unit of work; every 4096 ticks it calls Job::cancel, which throws to stop the job.
// The Python bindings pass a check that runs Python's signal handlers, so Ctrl-C ends a run within milliseconds.
//
// A Job is passed down by const reference; nothing here is global.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "collplan/common/error.hpp"

namespace collplan {

// A job refused for the memory it would need (an Error like any other; a sweep that records generator errors as
// failures lets this one through).
class MemoryLimitError : public Error {
public:
    using Error::Error;
};

uint64_t physical_memory_bytes();     // sysconf(_SC_PHYS_PAGES) * page size; 0 when unknown
uint64_t default_max_memory_bytes();  // a quarter of physical memory (4 GiB when unknown)

struct Job {
    uint64_t max_memory_bytes = default_max_memory_bytes();
    std::function<void()> cancel;     // throws to stop the job (e.g. on Ctrl-C); empty: never stops

    // Throws MemoryLimitError "<what> needs about <bytes> (limit <max>, --max-memory)" when bytes exceed the limit.
    void require_memory(double bytes, const std::string& what) const;
    void check_cancel() const {
        if (cancel) cancel();
    }
};

// The job used when a caller gives none: the default limit, never cancelled.
const Job& default_job();

// Calls job.check_cancel() once per 4096 units of work: cheap enough for the innermost loop of an event
// simulation. A loop over ranks ticks with the rank's op count.
class CancelPoll {
public:
    explicit CancelPoll(const Job& job) : job_(job) {}
    void tick(uint64_t work = 1) {
        if ((n_ += work) >= 4096) n_ = 0, job_.check_cancel();
    }

private:
    const Job& job_;
    uint64_t n_ = 0;
};

}  // namespace collplan
