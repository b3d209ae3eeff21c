// The one loop: every registered algorithm, every applicable P up to 40 on its topology families, every
// parameter set and reduction operation it claims -- all verified by the symbolic verifier.
#include <gtest/gtest.h>

#include "collplan/verify/sweep.hpp"

namespace collplan {
namespace {

TEST(AllAlgorithms, RegistryIsNotEmptyAndNamesAreCanonical) {
    const auto& all = Registry::get().all();
    ASSERT_GE(all.size(), 9u);
    for (const Algorithm& a : all) {
        EXPECT_EQ(a.name.rfind(std::string(to_string(a.collective)) + "/", 0), 0u) << a.name;
        EXPECT_FALSE(a.summary.empty()) << a.name;
        EXPECT_FALSE(a.source.empty()) << a.name;
        EXPECT_TRUE(a.generate) << a.name;
    }
}

TEST(AllAlgorithms, EveryCaseVerifies) {
    for (const Algorithm& a : Registry::get().all()) {
        if (a.collective == Collective::alltoallv) continue;
        const auto cases = sweep_cases(a, 40);
        EXPECT_GE(cases.size(), 5u) << a.name << " verifies almost nowhere";
        for (const SweepCase& c : cases) {
            const VerifyResult v = run_case(c);
            EXPECT_TRUE(v.ok) << a.name << " P=" << c.ranks << " " << c.topology << " " << c.op << ": " << v.reason
                              << ": " << v.message;
        }
    }
}

TEST(AllAlgorithms, UnknownNamesAndParametersAreRefused) {
    EXPECT_THROW(Registry::get().find("allgather/nope"), Error);
    try {
        make_schedule("alltoall/bruck", 8, Topology::full(8), {{"k", "1"}});
        FAIL() << "k=1 accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("k=1"), std::string::npos) << e.what();
    }
    EXPECT_THROW(make_schedule("alltoall/bruck", 8, Topology::full(8), {{"radix", "2"}}), Error);
    EXPECT_THROW(make_schedule("alltoall/bruck", 8, Topology::full(9)), Error);  // rank count mismatch
    EXPECT_THROW(make_schedule("allgather/recursive_doubling", 6, Topology::full(6)), Error);  // declines
}

}  // namespace
}  // namespace collplan
