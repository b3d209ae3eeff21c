// Rank-consistency (docs/allreduce.md): every rank's allreduce result is the same expression -- operands, order and
// association -- so floating-point results are bitwise equal on every rank. The verifier's expressions on
// hand-built schedules (association, inverse), every registered allreduce algorithm against what it declares,
// recexch's old digit-dependent order, nway_dissemination forward=contributions, and the one table of operations.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "collplan/algorithms/allreduce/nway_common.hpp"
#include "collplan/algorithms/registry.hpp"
#include "collplan/algorithms/allreduce/nway_cost.hpp"
#include "collplan/model/estimate.hpp"
#include "collplan/schedule/reduction.hpp"
#include "collplan/verify/verify.hpp"

namespace collplan {
namespace {

Segment blk(Buf b, uint32_t first, uint32_t n = 1) { return Segment(b, first, n); }

std::string text(const std::map<std::string, std::string>& params) {
    std::string s;
    for (const auto& [k, v] : params) s += (s.empty() ? "" : ",") + k + "=" + v;
    return s;
}

// Every rank sends x_r to all others (tmp[q] holds x_q everywhere), then combines the P contributions into out
// left to right, ((x0+x1)+x2), or, where right_to_left(rank), right to left, (x0+(x1+x2)). Exact either way.
Schedule gather_then_reduce(int P, const std::function<bool(int)>& right_to_left) {
    Schedule s(Collective::allreduce, P, 1, 1, static_cast<uint32_t>(P));
    for (int r = 0; r < P; ++r) {
        RankBuilder b(s, r);
        b.copy({blk(Buf::in, 0)}, {blk(Buf::tmp, static_cast<uint32_t>(r))});
        b.fence();
        for (int q = 0; q < P; ++q)
            if (q != r) b.send(q, 0, {blk(Buf::in, 0)});
        for (int q = 0; q < P; ++q)
            if (q != r) b.recv(q, 0, {blk(Buf::tmp, static_cast<uint32_t>(q))});
        const bool rtl = right_to_left(r);
        b.fence().copy({blk(Buf::tmp, rtl ? static_cast<uint32_t>(P - 1) : 0)}, {blk(Buf::out, 0)});
        for (int i = 1; i < P; ++i) {
            const auto q = static_cast<uint32_t>(rtl ? P - 1 - i : i);
            b.fence().reduce({blk(Buf::tmp, q)}, {blk(Buf::out, 0)}, {}, rtl ? 0 : opflag::reverse);
        }
    }
    return s;
}

TEST(RankConsistency, ADifferentAssociationOnOneRankIsFound) {
    Schedule s = gather_then_reduce(3, [](int r) { return r == 2; });
    for (const char* op : {"sum", "noncommutative"}) {
        const VerifyResult v = verify(s, verify_options_for_op(op));
        EXPECT_TRUE(v.ok) << v.message;  // exact: every x_i once, in rank order
        EXPECT_FALSE(v.rank_consistent);
        EXPECT_EQ(v.consistency, "out[0]: rank 0 computes ((x0+x1)+x2), rank 2 computes (x0+(x1+x2))");
    }
    s.rank_consistent = true;
    const VerifyResult v = verify(s);
    EXPECT_FALSE(v.ok);
    EXPECT_EQ(v.reason, "rank-inconsistent");
    EXPECT_EQ(v.rank, 2);
    EXPECT_FALSE(v.rank_consistent);
    EXPECT_NE(v.message.find("rank 0 computes ((x0+x1)+x2), rank 2 computes (x0+(x1+x2))"), std::string::npos)
        << v.message;
}

TEST(RankConsistency, TheSameAssociationEverywhereIsConsistent) {
    for (int P : {1, 2, 5}) {
        Schedule s = gather_then_reduce(P, [](int) { return true; });
        s.rank_consistent = true;
        const VerifyResult v = verify(s);
        EXPECT_TRUE(v.ok && v.rank_consistent) << "P=" << P << ": " << v.message;
        EXPECT_TRUE(v.consistency.empty()) << v.consistency;
    }
}

TEST(RankConsistency, OperandOrderCounts) {  // x0+x1 on rank 0, x1+x0 on rank 1: the same interval, not the same bits
    Schedule s(Collective::allreduce, 2, 1, 1, 1);
    for (int r = 0; r < 2; ++r) {
        RankBuilder b(s, r);
        b.copy({blk(Buf::in, 0)}, {blk(Buf::out, 0)});
        b.fence().send(1 - r, 0, {blk(Buf::in, 0)});
        b.recv(1 - r, 0, {blk(Buf::tmp, 0)});
        b.fence().reduce({blk(Buf::tmp, 0)}, {blk(Buf::out, 0)});  // out = received (+) own
    }
    const VerifyResult v = verify(s);
    EXPECT_TRUE(v.ok) << v.message;
    EXPECT_EQ(v.consistency, "out[0]: rank 0 computes (x1+x0), rank 1 computes (x0+x1)");
}

TEST(RankConsistency, AnInverseIsItsOwnExpression) {
    // Rank 0: (x0+x1). Rank 1 takes x1 out and puts it back: (((x0+x1)-x1)+x1) -- every x_i once, equal on
    // integers, different bits on floating-point data.
    Schedule s(Collective::allreduce, 2, 1, 1, 2);
    s.needs_inverse = true;
    for (int r = 0; r < 2; ++r) {
        RankBuilder b(s, r);
        const Segment own = blk(Buf::tmp, static_cast<uint32_t>(r)), other = blk(Buf::tmp, static_cast<uint32_t>(1 - r));
        b.copy({blk(Buf::in, 0)}, {own});
        b.fence().send(1 - r, 0, {blk(Buf::in, 0)});
        b.recv(1 - r, 0, {other});
        b.fence().copy({blk(Buf::tmp, 0)}, {blk(Buf::out, 0)});
        b.fence().reduce({blk(Buf::tmp, 1)}, {blk(Buf::out, 0)}, {}, opflag::reverse);
        if (r == 0) continue;
        b.fence().reduce({own}, {blk(Buf::out, 0)}, {}, opflag::inverse);
        b.fence().reduce({own}, {blk(Buf::out, 0)}, {}, opflag::reverse);
    }
    const VerifyResult v = verify(s);
    EXPECT_TRUE(v.ok) << v.message;
    EXPECT_FALSE(v.rank_consistent);
    EXPECT_EQ(v.consistency, "out[0]: rank 0 computes (x0+x1), rank 1 computes (((x0+x1)-x1)+x1)");
}

TEST(RankConsistency, TheTakeOutOfNwayDisseminationIsInconsistent) {
    const Schedule s = make_schedule("allreduce/nway_dissemination", 7, Topology::full(7),  // takes out x_p
                                     {{"n", "1"}, {"takeout", "inverse"}});
    ASSERT_TRUE(s.needs_inverse);
    const VerifyResult v = verify(s);
    EXPECT_TRUE(v.ok) << v.message;
    EXPECT_FALSE(v.rank_consistent);
    EXPECT_NE(v.consistency.find("-x0)"), std::string::npos) << v.consistency;
}

TEST(RankConsistency, LongExpressionsAreTruncated) {
    const VerifyResult v = verify(gather_then_reduce(40, [](int r) { return r == 1; }));
    EXPECT_FALSE(v.rank_consistent);
    EXPECT_LT(v.consistency.size(), 300u) << v.consistency;
    EXPECT_EQ(v.consistency.rfind("...") + 3, v.consistency.size()) << v.consistency;
}

TEST(RankConsistency, OtherCollectivesAreConsistentByDefinition) {
    const VerifyResult v = verify(make_schedule("allgather/ring", 5, Topology::full(5)));
    EXPECT_TRUE(v.ok && v.rank_consistent);
    EXPECT_TRUE(v.consistency.empty());
}

// ------------------------------------------------------------------------------------------------ the registry

// The one loop: every allreduce algorithm x its sweep parameters x P = 1..33. A declared rank_consistent must
// verify; a parameter set that never declares it must be found inconsistent for some P (the check is not
// vacuous).
TEST(RankConsistency, EveryAllreduceAlgorithmDeclaresWhatHolds) {
    for (const Algorithm* a : Registry::get().for_collective(Collective::allreduce)) {
        const auto sets = a->sweep_params.empty() ? std::vector<std::map<std::string, std::string>>{{}} : a->sweep_params;
        for (const auto& raw : sets) {
            bool declared = false, inconsistent = false;
            for (int P = 1; P <= 33; ++P) {
                const Problem p{Collective::allreduce, P, Topology::full(P), validate_params(*a, raw), {}};
                if (a->applies && !a->applies(p).empty()) continue;
                const Schedule s = make_schedule(a->name, P, Topology::full(P), raw);
                const VerifyResult v = verify(s, verify_options_for_op(s.idempotent_only ? "max" : "sum"));
                ASSERT_TRUE(v.ok) << a->name << " " << text(raw) << " P=" << P << ": " << v.reason << ": " << v.message;
                EXPECT_EQ(v.rank_consistent, v.consistency.empty()) << a->name << " P=" << P;
                if (s.rank_consistent) EXPECT_TRUE(v.rank_consistent) << a->name << " P=" << P;
                declared |= s.rank_consistent;
                inconsistent |= !v.rank_consistent;
            }
            if (!declared) EXPECT_TRUE(inconsistent) << a->name << " " << text(raw) << " is consistent for every P <= 33: declare it";
        }
    }
}

// rank_consistent_params: empty where the defaults are consistent; where given, they make every P consistent.
TEST(RankConsistency, RankConsistentParamsGiveTheConsistentVariant) {
    for (const Algorithm* a : Registry::get().for_collective(Collective::allreduce))
        for (int P = 1; P <= 33; ++P) {
            const Schedule d = make_schedule(a->name, P, Topology::full(P));
            if (d.rank_consistent) {
                EXPECT_TRUE(a->rank_consistent_params.empty()) << a->name;
                continue;
            }
            if (a->rank_consistent_params.empty()) continue;  // no variant (nway_dissemination_plain)
            const Schedule s = make_schedule(a->name, P, Topology::full(P), a->rank_consistent_params);
            EXPECT_TRUE(s.rank_consistent) << a->name << " P=" << P;
            EXPECT_TRUE(verify(s).ok) << a->name << " P=" << P;
        }
    const auto& nway = Registry::get().find("allreduce/nway_dissemination").rank_consistent_params;
    EXPECT_EQ(nway, (std::map<std::string, std::string>{{"forward", "contributions"}}));
    EXPECT_TRUE(Registry::get().find("allreduce/nway_dissemination_plain").rank_consistent_params.empty());
}

// ------------------------------------------------------------------------------------------------ recexch

// recexch's exchange as it was: a rank with digit d combined the higher digits into out first (increasing), then
// the lower ones (decreasing) -- every partial result in rank order, but associated per digit.
Schedule old_recexch_k3(int P) {  // P = 3^d, no fold
    Schedule s(Collective::allreduce, P, 1, 1, 2);
    const Segment out = blk(Buf::out, 0);
    for (int r = 0; r < P; ++r) {
        RankBuilder b(s, r);
        b.copy({blk(Buf::in, 0)}, {out});
        for (int place = 1; place < P; place *= 3) {
            const int digit = r / place % 3;
            std::vector<int> partners;
            for (int t = 0; t < 3; ++t)
                if (t != digit) partners.push_back(t);
            b.fence();
            for (int t : partners) b.send(r + (t - digit) * place, 0, {out});
            for (size_t i = 0; i < partners.size(); ++i)
                b.recv(r + (partners[i] - digit) * place, 0, {blk(Buf::tmp, static_cast<uint32_t>(i))});
            for (size_t i = 0; i < partners.size(); ++i)
                if (partners[i] > digit) b.fence().reduce({blk(Buf::tmp, static_cast<uint32_t>(i))}, {out}, {}, opflag::reverse);
            for (size_t i = partners.size(); i-- > 0;)
                if (partners[i] < digit) b.fence().reduce({blk(Buf::tmp, static_cast<uint32_t>(i))}, {out});
        }
    }
    return s;
}

int reductions(const Schedule& s, int r) {
    int n = 0;
    for (const Op& op : s.program(r).ops) n += op.kind == OpKind::reduce;
    return n;
}

TEST(RankConsistency, RecexchOldDigitOrderWasInconsistentTheNewOneIsNot) {
    for (int P : {3, 9, 27}) {
        const Schedule old = old_recexch_k3(P);
        const VerifyResult v = verify(old, verify_options_for_op("noncommutative"));
        EXPECT_TRUE(v.ok) << v.message;
        EXPECT_FALSE(v.rank_consistent) << "P=" << P;
        const Schedule now = make_schedule("allreduce/recexch", P, Topology::full(P), {{"k", "3"}});
        const VerifyResult w = verify(now, verify_options_for_op("noncommutative"));
        EXPECT_TRUE(w.ok && w.rank_consistent && now.rank_consistent) << w.message;
        for (int r = 0; r < P; ++r) EXPECT_EQ(reductions(now, r), reductions(old, r)) << "P=" << P << " rank " << r;
    }
    EXPECT_EQ(verify(old_recexch_k3(3)).consistency,
              "out[0]: rank 0 computes ((x0+x1)+x2), rank 1 computes (x0+(x1+x2))");
}

// ------------------------------------------------------------------------------------------------ forward=contributions

Schedule contributions(int P, int n) {
    return make_schedule("allreduce/nway_dissemination", P, Topology::full(P),
                         {{"n", std::to_string(n)}, {"forward", "contributions"}});
}

TEST(RankConsistency, ContributionsVariantRoundsBytesAndMemory) {
    for (int n = 1; n <= 5; ++n)
        for (int P = 1; P <= 40; ++P) {
            const Schedule s = contributions(P, n);
            ASSERT_TRUE(s.rank_consistent && !s.needs_commutative && !s.needs_inverse);
            EXPECT_EQ(s.blocks(Buf::tmp), static_cast<uint32_t>(P));
            const VerifyResult v = verify(s, verify_options_for_op("noncommutative"));
            EXPECT_TRUE(v.ok && v.rank_consistent) << "P=" << P << " n=" << n << ": " << v.message;
            const int k = nway::geometry(P, n).rounds;
            for (int r = 0; r < P; ++r) {
                uint64_t received = 0;
                int groups = 0, reduces = 0;
                bool open = false;
                for (uint32_t i = 0; i < s.num_ops(r); ++i) {
                    const OpView o = s.op(r, i);
                    if (o.op.fence()) open = false;
                    reduces += o.op.kind == OpKind::reduce;
                    if (o.op.kind != OpKind::recv) continue;
                    received += o.units;
                    if (!open) ++groups, open = true;
                }
                EXPECT_EQ(received, static_cast<uint64_t>(P - 1)) << "P=" << P << " n=" << n;
                EXPECT_EQ(groups, k) << "P=" << P << " n=" << n;
                EXPECT_EQ(reduces, P - 1);
            }
        }
}

TEST(RankConsistency, ContributionsCostMatchesTheEstimate) {
    for (const std::string spec : {"hockney:alpha=2us,beta=1ns/B,gamma=0.5ns/B,rho=0.2ns/B",
                                   "loggp:L=1us,o=300ns,g=300ns,G=312.5ps/B,gamma=200ps/B,rho=100ps/B",
                                   "loggp:L=3us,o=1us,g=4us,G=0.5ns/B,gamma=1ns/B,ports=2"}) {
        const auto model = parse_model(spec);
        for (int n : {1, 2, 3})
            for (int P : {1, 2, 4, 5, 8, 9, 13, 16, 27, 40})
                for (double size : {8.0, 4096.0}) {
                    const double cost = nway_contributions_cost(P, n, *model, size).time_s;
                    const double est = estimate(contributions(P, n), Topology::full(P), *model, size).time_s;
                    const nway::Geometry g = nway::geometry(P, n);
                    if (g.window * (n + 1) == P || P == 1) EXPECT_NEAR(cost, est, 1e-12 + 1e-9 * est) << spec << " P=" << P << " n=" << n;
                    else EXPECT_GE(cost, est * (1 - 1e-9)) << spec << " P=" << P << " n=" << n;
                }
    }
    // n=auto (the default) picks the n of the variant's own cost: rank 0 sends to n peers in round 1.
    const auto model = parse_model(kDefaultDisseminationModel);
    for (double size : {8.0, 65536.0}) {
        const Schedule a = make_schedule("allreduce/nway_dissemination", 64, Topology::full(64),
                                         {{"forward", "contributions"}, {"auto_size", std::to_string(static_cast<int>(size)) + "B"}});
        int sends = 0;  // op 0 copies x_0 into tmp; op 1 opens round 1
        for (uint32_t i = 1; i == 1 || !a.op(0, i).op.fence(); ++i) sends += a.op(0, i).op.kind == OpKind::send;
        EXPECT_EQ(sends, best_contributions_n(64, *model, size)) << size;
    }
}

TEST(RankConsistency, ForwardValuesAreChecked) {
    try {
        make_schedule("allreduce/nway_dissemination", 4, Topology::full(4), {{"forward", "sums"}});
        FAIL() << "forward=sums accepted";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()), "forward 'sums' is invalid (allowed: partial, contributions)");
    }
}

// ------------------------------------------------------------------------------------------------ operations

TEST(RankConsistency, EveryOperationOfTheTableHasVerifyOptions) {
    for (const ReductionOp& o : kReductionOps) {
        const VerifyOptions v = verify_options_for_op(o.name);
        EXPECT_EQ(v.commutative, o.commutative) << o.name;
        EXPECT_EQ(v.idempotent, o.idempotent) << o.name;
    }
    for (const char* name : {"land", "lor", "maxloc", "minloc"}) EXPECT_TRUE(reduction_op(name).idempotent) << name;
    for (const char* name : {"lxor", "bxor", "user"}) EXPECT_FALSE(reduction_op(name).idempotent) << name;
    EXPECT_FALSE(reduction_op("noncommutative").commutative);
}

}  // namespace
}  // namespace collplan
