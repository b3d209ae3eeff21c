// Rank symmetry (schedule/symmetry.hpp): every declaration holds on the whole schedule, and the estimate of rank 0's
// program alone equals the whole walk's to the bit where symmetric_estimate_refusal lets it stand for every rank.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collplan/algorithms/registry.hpp"
#include "collplan/model/estimate.hpp"
#include "collplan/schedule/symmetry.hpp"
#include "collplan/schedule/text.hpp"
#include "collplan/verify/verify.hpp"

namespace collplan {
namespace {

const std::vector<std::string> kModels = {
    "hockney:alpha=1us,beta=1ns/B,gamma=0.2ns/B,rho=0.1ns/B",
    "hockney:alpha=1us,beta=1ns/B,ports=2",
    "loggp:L=2us,o=1.5us,g=1us,G=0.5ns/B,cpu=1,gamma=0.3ns/B",
    "circuit:lambda=177.5us,tau=0.394us/B,delta=51.5us,rho=0.54us/B,q=750us",
    "wormhole:startup=30us,flit=8B,flit_time=10ns,hop_time=40ns"};

std::vector<uint64_t> even_counts(const Algorithm& a, int P) {
    return a.collective == Collective::allgatherv || a.collective == Collective::reduce_scatter
               ? std::vector<uint64_t>(static_cast<size_t>(P), 3) : std::vector<uint64_t>{};
}

TEST(Symmetry, DeclarationsHoldAndOneRankEstimatesEqualTheWholeWalk) {
    int checked = 0, compared = 0;
    for (const Algorithm& a : Registry::get().all()) {
        if (a.collective == Collective::alltoallv) continue;
        for (int P : {2, 3, 4, 6, 7, 8, 12, 16}) {
            const Topology full = Topology::full(P);
            Schedule whole(Collective::allgather, 1, 1, 1, 0);
            try {
                whole = make_schedule(a.name, P, full, {}, even_counts(a, P));
            } catch (const Error&) {
                continue;  // does not apply at this P
            }
            if (whole.symmetry == Symmetry::none) continue;
            ++checked;
            EXPECT_EQ(check_symmetry(whole, whole.symmetry), "") << a.name << " P=" << P;
            const Schedule one = make_schedule(a.name, P, full, {}, even_counts(a, P), 0);
            EXPECT_EQ(one.symmetry, whole.symmetry);
            for (const std::string& spec : kModels) {
                const auto model = parse_model(spec);
                ASSERT_EQ(symmetric_estimate_refusal(one.symmetry, full, *model), "");
                for (double size : {0.0, 100.0, 65536.0, 3e6}) {
                    const Estimate w = estimate(whole, full, *model, size), o = estimate(one, full, *model, size);
                    EXPECT_EQ(w.time_s, o.time_s) << a.name << " P=" << P << " " << spec << " size " << size;
                    EXPECT_EQ(w.critical_rank, o.critical_rank);
                    ++compared;
                }
            }
        }
    }
    EXPECT_GT(checked, 100);
    EXPECT_GT(compared, 2000);
}

TEST(Symmetry, CheckNamesTheFirstRankThatDiffers) {
    const Topology full = Topology::full(5);
    EXPECT_EQ(check_symmetry(make_schedule("allgather/ring", 5, full), Symmetry::cyclic), "");
    EXPECT_EQ(check_symmetry(make_schedule("bcast/binomial", 5, full), Symmetry::cyclic), "rank 1 has 1 ops, rank 0 3");
    Schedule s = make_schedule("allgather/ring", 5, full);
    s.program_mut(3).ops[1].peer = 1;  // rank 3's first send goes to 1 instead of 4
    EXPECT_EQ(check_symmetry(s, Symmetry::cyclic), "rank 3 op 1: peer 1, expected 4");
    EXPECT_THROW(check_symmetry(s, Symmetry::xor_), Error);  // P = 5 is no power of two
    EXPECT_EQ(parse_symmetry("xor"), Symmetry::xor_);
    EXPECT_THROW(parse_symmetry("mirror"), Error);
}

TEST(Symmetry, TheTextKeepsTheClaimAndTheVerifierChecksIt) {
    const Topology full = Topology::full(8);
    Schedule s = make_schedule("allreduce/recursive_doubling", 8, full);
    ASSERT_EQ(s.symmetry, Symmetry::xor_);
    EXPECT_EQ(from_text(to_text(s)), s);
    EXPECT_TRUE(verify(s).ok);
    s.symmetry = Symmetry::cyclic;  // a false claim
    const VerifyResult v = verify(s);
    EXPECT_FALSE(v.ok);
    EXPECT_EQ(v.reason, "asymmetric");
    EXPECT_EQ(v.message, "the schedule declares cyclic symmetry but rank 1 op 0: peer 0, expected 2");
}

TEST(Symmetry, OneRankEstimateRefusesWhatBreaksTheSymmetry) {
    const Topology full = Topology::full(8), torus = Topology::parse("torus:2x4");
    const Schedule ring = make_schedule("allgather/ring", 8, full, {}, {}, 0);
    auto refused = [&](const Schedule& s, const Topology& t, const std::string& spec) {
        try {
            estimate(s, t, *parse_model(spec), 1024);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_NE(refused(ring, full, "hockney:alpha=1us,beta=1ns/B,duplex=0").find("simplex"), std::string::npos);
    EXPECT_NE(refused(ring, full, "hockney:alpha=1us,beta=1ns/B,host_beta=1ns/B,host_ranks=4").find("host channel"),
              std::string::npos);
    const Schedule on_torus = make_schedule("allgather/ring", 8, torus, {}, {}, 0);
    EXPECT_NE(refused(on_torus, torus, "wormhole:startup=1us,flit=8B,flit_time=1ns,hop_time=1ns").find("distances"),
              std::string::npos);
    EXPECT_EQ(refused(on_torus, torus, "hockney:alpha=1us,beta=1ns/B"), "");  // hops unpriced: the torus is harmless
    EXPECT_NE(refused(make_schedule("allgather/ring", 8, full, {}, {}, 3), full, "hockney:alpha=1us,beta=1ns/B")
                  .find("rank 3's"), std::string::npos);
    EXPECT_NE(refused(make_schedule("bcast/binomial", 8, full, {}, {}, 0), full, "hockney:alpha=1us,beta=1ns/B")
                  .find("no rank symmetry"), std::string::npos);
}

}  // namespace
}  // namespace collplan
