// Bounded readers and memory refusals (src/collplan/common/job.hpp): a schedule text declaring more than the
// limit allows, a wisdom file that never ends, and the verifier's estimate are refused before allocating.
#include <gtest/gtest.h>

#include "collplan/algorithms/registry.hpp"
#include "collplan/runtime/wisdom.hpp"
#include "collplan/schedule/text.hpp"
#include "collplan/verify/verify.hpp"

namespace collplan {
namespace {

Job small_job(uint64_t bytes) {
    Job j;
    j.max_memory_bytes = bytes;
    return j;
}

TEST(Limits, ParametersBeyond64BitsNameTheAllowedRange) {
    // "k=<huge>" said only "is not an integer"; now every bad value names the range, like an out-of-range one
    const Topology t = Topology::parse("full:8");
    for (const char* k : {"99999999999999999999999", "x", "2.5"}) {
        try {
            (void)make_schedule("allreduce/recexch", 8, t, {{"k", k}});
            ADD_FAILURE() << k << " accepted";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("(allowed: an integer 2.."), std::string::npos) << e.what();
        }
    }
}

TEST(Limits, WisdomReaderStopsAtItsBound) {
    try {
        load_wisdom("/dev/zero", 1 << 20);
        FAIL() << "read /dev/zero";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("larger than"), std::string::npos) << e.what();
    }
}

TEST(Limits, ScheduleTextRefusesWhatExceedsTheLimit) {
    const std::string text = to_text(make_schedule("allgather/ring", 64, Topology::full(64)));
    EXPECT_NO_THROW(from_text(text));
    EXPECT_THROW(from_text(text, small_job(1024)), MemoryLimitError);
}

TEST(Limits, VerifyRefusesHugeDeclaredBuffers) {
    Schedule s(Collective::alltoall, 1, 1, 1, (1u << 30) - 1);
    try {
        verify(s, {}, small_job(uint64_t{1} << 30));
        FAIL() << "verified";
    } catch (const MemoryLimitError& e) {
        EXPECT_NE(std::string(e.what()).find("needs about 8.00GiB (limit 1.00GiB"), std::string::npos) << e.what();
    }
}

TEST(Limits, MakeScheduleEstimatesBeforeGenerating) {
    EXPECT_THROW(make_schedule("alltoall/pairwise", 100000, Topology::full(100000), {}, {}, Schedule::kAllRanks,
                               small_job(uint64_t{256} << 20)),
                 MemoryLimitError);
    const double est = schedule_memory_estimate("alltoall/pairwise", 256, Topology::full(256));
    const Schedule s = make_schedule("alltoall/pairwise", 256, Topology::full(256));
    EXPECT_GT(est, 0.5 * static_cast<double>(s.memory_bytes()));
    EXPECT_LT(est, 2.0 * static_cast<double>(s.memory_bytes()));
    // a root unlike the other ranks (it sends to all of them) is counted once, not for every rank
    for (int root : {0, 1000}) {
        const Schedule linear = make_schedule("bcast/linear", 4096, Topology::full(4096), {}, Inputs({}, root));
        const double e = schedule_memory_estimate("bcast/linear", 4096, Topology::full(4096), {}, Inputs({}, root));
        EXPECT_GT(e, 0.5 * static_cast<double>(linear.memory_bytes())) << root;
        EXPECT_LT(e, 2.0 * static_cast<double>(linear.memory_bytes())) << root;
    }
}

TEST(Limits, CancelStopsVerify) {
    Job j;
    int calls = 0;
    j.cancel = [&] {
        if (++calls == 2) throw std::runtime_error("cancelled");
    };
    const Schedule s = make_schedule("alltoall/pairwise", 128, Topology::full(128));
    EXPECT_THROW(verify(s, {}, j), std::runtime_error);
    EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace collplan
