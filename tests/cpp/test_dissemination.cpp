// The n-way dissemination family (End et al.): the paper's data boundaries and 5-tuples (eq. 5-8), the five cases of
// Theorem 1, the fallback where no 5-tuple exists, exactly-once verification on the fast subset of P and n, the
// unadapted variant's double counting, the cost model against the estimate, the choice of n, recexch and the
// adapted barrier.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "collplan/algorithms/allreduce/nway_common.hpp"
#include "collplan/algorithms/registry.hpp"
#include "collplan/algorithms/allreduce/nway_cost.hpp"
#include "collplan/model/estimate.hpp"
#include "collplan/verify/verify.hpp"

namespace collplan {
namespace {

using nway::TakeOut;

Schedule nway(int P, int n, const std::string& takeout = "keep") {
    return make_schedule("allreduce/nway_dissemination", P, Topology::full(P),
                         {{"n", std::to_string(n)}, {"takeout", takeout}});
}

int64_t ipow(int64_t b, int e) {
    int64_t x = 1;
    while (e-- > 0) x *= b;
    return x;
}

// Per rank: the ops of each dependency group that communicates.
struct CommRound {
    int sends = 0, recvs = 0;
    std::vector<int> to, from;
    std::vector<Segment> sent;  // first segment of each send (empty Segment for a zero-byte message)
};
std::vector<CommRound> comm_rounds(const Schedule& s, int r) {
    std::vector<CommRound> out;
    bool open = false;
    for (uint32_t i = 0; i < s.num_ops(r); ++i) {
        const OpView v = s.op(r, i);
        if (i == 0 || v.op.fence()) open = false;
        if (v.op.kind != OpKind::send && v.op.kind != OpKind::recv) continue;
        if (!open) out.emplace_back(), open = true;
        CommRound& c = out.back();
        if (v.op.kind == OpKind::recv) {
            ++c.recvs, c.from.push_back(v.op.peer);
            continue;
        }
        ++c.sends, c.to.push_back(v.op.peer), c.sent.push_back(v.src().empty() ? Segment() : v.src()[0]);
    }
    return out;
}

bool uses_inverse(const Schedule& s) {
    for (int r = 0; r < s.ranks(); ++r)
        for (const Op& op : s.program(r).ops)
            if (op.kind == OpKind::reduce && (op.flags & opflag::inverse)) return true;
    return false;
}

// ------------------------------------------------------------------------------------------------ arithmetic

TEST(Dissemination, GeometryAndBoundaries) {
    for (auto [P, n, k, W] : {std::tuple{1, 2, 0, 1}, {2, 1, 1, 1}, {3, 2, 1, 1}, {4, 2, 2, 3}, {8, 2, 2, 3},
                              {9, 2, 2, 3}, {10, 2, 3, 9}, {1024, 1, 10, 512}, {1025, 1, 11, 1024}, {64, 3, 3, 16}}) {
        const nway::Geometry g = nway::geometry(P, n);
        EXPECT_EQ(g.rounds, k) << "P=" << P << " n=" << n;
        EXPECT_EQ(g.window, W) << "P=" << P << " n=" << n;
    }
    // eq. (5): p - g_l[j] = n sum_{i=0}^{l-2} (n+1)^i + j (n+1)^(l-1); the prefix up to g_l[j] has one more.
    for (int n = 1; n <= 7; ++n)
        for (int l = 1; l <= 4; ++l)
            for (int j = 1; j <= n; ++j) {
                int64_t dist = j * ipow(n + 1, l - 1);
                for (int i = 0; i <= l - 2; ++i) dist += n * ipow(n + 1, i);
                EXPECT_EQ(nway::boundary_size(n, l, j), dist + 1) << "n=" << n << " l=" << l << " j=" << j;
            }
    EXPECT_EQ(nway::boundary_size(3, 0, 0), 1);
    EXPECT_THROW(nway::parse_takeout("subtract"), Error);
}

// Every 5-tuple solves eq. (8) written with the paper's sums (eq. 6 for the sender, eq. 5 for the receiver;
// g_0 = p, g_B = p + 1), and a brute force over the same ranges finds no other.
TEST(Dissemination, FiveTuplesSolveEquation8) {
    auto dist = [](int n, int l, int j) -> int64_t {  // p - g_l[j]
        if (l < 0) return -1;
        if (l == 0) return 0;
        int64_t d = j * ipow(n + 1, l - 1);
        for (int i = 0; i <= l - 2; ++i) d += n * ipow(n + 1, i);
        return d;
    };
    for (int n = 1; n <= 4; ++n)
        for (int P = 2; P <= 200; ++P) {
            const nway::Geometry g = nway::geometry(P, n);
            const auto tuples = nway::five_tuples(P, n);
            int brute = 0;
            for (int s = 1; s <= n; ++s)
                for (int ls = 0; ls < g.rounds; ++ls)
                    for (int js = ls ? 1 : 0; js <= (ls ? n : 0); ++js)
                        for (int lr = -1; lr < g.rounds; ++lr)
                            for (int jr = lr > 0 ? 1 : 0; jr <= (lr > 0 ? n : 0); ++jr) {
                                const int64_t P8 = s * g.window + dist(n, ls, js) - dist(n, lr, jr);
                                if (P8 == P && dist(n, lr, jr) + 1 < g.window) ++brute;
                            }
            EXPECT_EQ(static_cast<int>(tuples.size()), brute) << "P=" << P << " n=" << n;
            for (const auto& t : tuples)
                EXPECT_EQ(t.s * g.window + dist(n, t.l_snd, t.j_snd) - dist(n, t.l_rcv, t.j_rcv), P)
                    << "n=" << n << " " << t.str();
        }
}

// ------------------------------------------------------------------------------------------------ the paper's example

// P = 8, n = 2 (Figure 1): the base border g_B coincides with g^2_1[1] of rank 2 -- rank 5 sends its whole partial
// result, rank 2 only x2 (+) x1, which it kept in round 1.
TEST(Dissemination, PaperExampleP8) {
    const nway::Plan plan = nway::make_plan(8, 2, TakeOut::keep);
    ASSERT_TRUE(plan.tuple.has_value());
    EXPECT_EQ(plan.tuple->s, 2);
    EXPECT_EQ(plan.tuple->l_snd, 1);
    EXPECT_EQ(plan.tuple->j_snd, 1);
    EXPECT_EQ(plan.tuple->l_rcv, -1);
    EXPECT_EQ(plan.tuple->theorem_case(), 0);
    EXPECT_EQ(plan.last.prefix, (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(plan.last.takeout, 0);
    const Schedule s = nway(8, 2);
    EXPECT_TRUE(verify(s).ok);
    EXPECT_FALSE(s.needs_inverse);
    const auto rounds = comm_rounds(s, 2);
    ASSERT_EQ(rounds.size(), 2u);
    const CommRound& last = rounds[1];
    ASSERT_EQ(last.to, (std::vector<int>{5, 0}));  // distances W = 3 and W + 3 = 6
    EXPECT_EQ(last.sent[0], Segment(Buf::out, 0, 1));  // the whole window x2 x1 x0 to rank 5
    EXPECT_EQ(last.sent[1].buf(), Buf::tmp);            // the kept prefix x2 x1 to rank 0
    EXPECT_EQ(comm_rounds(s, 0)[1].from, (std::vector<int>{5, 2}));
}

TEST(Dissemination, PlainDoubleCountsForSumAtP8) {
    const Schedule s = make_schedule("allreduce/nway_dissemination_plain", 8, Topology::full(8), {{"n", "2"}});
    EXPECT_TRUE(s.idempotent_only);
    const VerifyResult v = verify(s, verify_options_for_op("sum"));
    EXPECT_FALSE(v.ok);
    EXPECT_EQ(v.reason, "double-count") << v.message;
    EXPECT_TRUE(verify(s, verify_options_for_op("max")).ok);
    // Exact for sum exactly when W = (n+1)^(k-1) divides P: then the last round's offsets j W, j > P / W, repeat or
    // wrap onto p and are dropped (Theorem 1, case 3), e.g. P = 9 and P = 6 for n = 2, but not P = 8.
    for (int n = 1; n <= 4; ++n)
        for (int P = 2; P <= 70; ++P) {
            const Schedule q =
                make_schedule("allreduce/nway_dissemination_plain", P, Topology::full(P), {{"n", std::to_string(n)}});
            const nway::Geometry g = nway::geometry(P, n);
            EXPECT_EQ(verify(q, verify_options_for_op("sum")).ok, P % g.window == 0) << "P=" << P << " n=" << n;
            EXPECT_TRUE(verify(q, verify_options_for_op("max")).ok) << "P=" << P << " n=" << n;
        }
}

// ------------------------------------------------------------------------------------------------ Theorem 1

// Every 5-tuple of every P <= 90, n = 1..4, turned into a last round by Theorem 1, gives an exact schedule with
// both take-out modes; each of the five cases and the base border occurs. (Eq. 8 also has degenerate solutions
// with s W = P and T = U, whose sender p - s W is p itself: Theorem 1 cannot use them.)
TEST(Dissemination, EveryTupleOfTheorem1IsExact) {
    std::map<int, int> seen;  // case -> tuples verified
    for (int n = 1; n <= 4; ++n)
        for (int P = 2; P <= 90; ++P)
            for (const nway::FiveTuple& ft : nway::five_tuples(P, n)) {
                const int64_t W = nway::geometry(P, n).window;
                if (ft.s * W == P && ft.theorem_case() != 3) {  // sender p - s W would be p itself (T = U)
                    EXPECT_THROW(nway::plan_for_tuple(P, n, ft), Error) << ft.str();
                    continue;
                }
                const nway::Plan plan = nway::plan_for_tuple(P, n, ft);
                for (TakeOut t : {TakeOut::keep, TakeOut::inverse}) {
                    const VerifyResult v = verify(nway::adapted_schedule(plan, t));
                    ASSERT_TRUE(v.ok) << plan.describe() << " " << nway::to_string(t) << ": " << v.reason << ": "
                                      << v.message;
                }
                ++seen[ft.theorem_case()];
            }
    EXPECT_EQ(seen.size(), 6u);
    for (auto [c, count] : seen) EXPECT_GT(count, 0) << "case " << c;
    // Case 4 and the base border describe the same last round (the remark after Theorem 1).
    const nway::Plan c4 = nway::plan_for_tuple(8, 2, {2, 1, 0, 2, 0});
    EXPECT_EQ(c4.tuple->theorem_case(), 4);
    EXPECT_EQ(c4.last.prefix, nway::make_plan(8, 2, TakeOut::keep).last.prefix);
    EXPECT_THROW(nway::plan_for_tuple(8, 2, {1, 1, 0, 2, 0}), Error);
    EXPECT_THROW(nway::adapted_schedule(nway::plan_for_tuple(7, 1, {1, 2, 0, 1, 0}), TakeOut::none), Error);
}

// The chosen plan follows Theorem 1 whenever a tuple exists; takeout=none never takes anything out.
TEST(Dissemination, ChosenPlanFollowsTheTuple) {
    int with_takeout = 0;
    for (int n = 1; n <= 7; ++n)
        for (int P = 2; P <= 300; ++P) {
            const nway::Plan plan = nway::make_plan(P, n, TakeOut::inverse);
            const nway::Geometry& g = plan.geo;
            int64_t sum = g.window;
            for (int64_t t : plan.last.prefix) sum += t;
            EXPECT_EQ(sum, P + plan.last.takeout) << plan.describe();
            EXPECT_LT(plan.last.takeout, g.window) << plan.describe();
            EXPECT_EQ(plan.tuple.has_value(), !nway::five_tuples(P, n).empty()) << plan.describe();
            if (plan.tuple) {
                const int c = plan.tuple->theorem_case();
                EXPECT_LE(plan.last.prefix.size(), static_cast<size_t>(n)) << plan.describe();
                EXPECT_EQ(plan.last.takeout > 0, c == 1 || c == 2 || c == 5) << plan.describe();
                with_takeout += plan.last.takeout > 0;
            }
            EXPECT_EQ(nway::make_plan(P, n, TakeOut::none).last.takeout, 0) << "P=" << P << " n=" << n;
        }
    EXPECT_GT(with_takeout, 0);
}

// No 5-tuple for P = 13, n = 1 (W = 8: 13 - 8 = 5 is no difference of two boundary sizes) or P = 40, n = 2: the
// fallback still gives an exact schedule in k rounds.
TEST(Dissemination, FallbackWhereNoTupleExists) {
    for (auto [P, n] : {std::pair{13, 1}, {40, 2}, {85, 3}, {156, 4}}) {
        EXPECT_TRUE(nway::five_tuples(P, n).empty()) << "P=" << P << " n=" << n;
        for (const char* t : {"keep", "inverse", "none"}) {
            const nway::Plan plan = nway::make_plan(P, n, nway::parse_takeout(t));
            EXPECT_FALSE(plan.tuple.has_value());
            const Schedule s = nway(P, n, t);
            const VerifyResult v = verify(s);
            EXPECT_TRUE(v.ok) << plan.describe() << ": " << v.message;
            EXPECT_EQ(static_cast<int>(comm_rounds(s, 0).size()), plan.geo.rounds);
        }
    }
    // P = 40, n = 2: 40 - 27 + 2 = 9 + 6 -- two messages, the receiver takes out x_p x_{p-1}.
    const nway::Plan p40 = nway::make_plan(40, 2, TakeOut::keep);
    EXPECT_EQ(p40.last.prefix, (std::vector<int64_t>{9, 6}));
    EXPECT_EQ(p40.last.takeout, 2);
}

// ------------------------------------------------------------------------------------------------ the fast subset

// Every P <= 100 and every power of n+1 up to 1024 with its neighbours, n = 1..7, each take-out: exactly-once
// for sum; k rounds with every rank sending and receiving in each; n messages per round except a fallback's
// last round; the inverse flag exactly where an inverse reduction is used.
TEST(Dissemination, ExactOnTheFastSubset) {
    for (int n = 1; n <= 7; ++n) {
        std::set<int> Ps;
        for (int P = 1; P <= 100; ++P) Ps.insert(P);
        for (int64_t q = n + 1; q <= 1024; q *= n + 1)
            for (int64_t P : {q - 1, q, q + 1}) Ps.insert(static_cast<int>(P));
        for (const char* t : {"keep", "inverse", "none"})
            for (int P : Ps) {
                const Schedule s = nway(P, n, t);
                const VerifyResult v = verify(s, verify_options_for_op("sum"));
                ASSERT_TRUE(v.ok) << "P=" << P << " n=" << n << " " << t << ": " << v.reason << ": " << v.message;
                EXPECT_EQ(s.needs_inverse, uses_inverse(s));
                if (std::string(t) != "inverse") EXPECT_FALSE(s.needs_inverse);
                const nway::Plan plan = nway::make_plan(P, n, nway::parse_takeout(t));
                for (int r : {0, P / 2, P - 1}) {
                    const auto rounds = comm_rounds(s, r);
                    ASSERT_EQ(static_cast<int>(rounds.size()), plan.geo.rounds) << "P=" << P << " n=" << n;
                    for (size_t l = 0; l < rounds.size(); ++l) {
                        EXPECT_GE(rounds[l].sends, 1);
                        EXPECT_EQ(rounds[l].sends, rounds[l].recvs);
                        if (l + 1 < rounds.size() || plan.tuple) EXPECT_LE(rounds[l].sends, n) << plan.describe();
                    }
                }
            }
    }
}

TEST(Dissemination, InverseVersusKeep) {
    // P = 26, n = 2 (W = 9): 26 = 2*9 + 9 - 1, case 5 -- the receiver takes out its own x_p.
    const nway::Plan p26 = nway::make_plan(26, 2, TakeOut::inverse);
    ASSERT_TRUE(p26.tuple.has_value());
    EXPECT_EQ(p26.last.takeout, 1) << p26.describe();
    const Schedule inv = nway(26, 2, "inverse"), keep = nway(26, 2, "keep"), none = nway(26, 2, "none");
    EXPECT_TRUE(inv.needs_inverse);
    EXPECT_FALSE(keep.needs_inverse);
    EXPECT_FALSE(uses_inverse(keep));
    for (const Schedule* s : {&inv, &keep, &none}) EXPECT_TRUE(verify(*s).ok) << s->params;
    // keep pays with reductions, not messages; none pays with messages.
    auto reductions = [](const Schedule& s) {
        int n = 0;
        for (const Op& op : s.program(0).ops) n += op.kind == OpKind::reduce;
        return n;
    };
    EXPECT_GT(reductions(keep), reductions(inv));
    EXPECT_GT(comm_rounds(none, 0).back().sends, comm_rounds(inv, 0).back().sends);
}

// ------------------------------------------------------------------------------------------------ model

TEST(Dissemination, CostEqualsTheEstimate) {
    for (const std::string spec : {"hockney:alpha=2us,beta=1ns/B,gamma=0.5ns/B,rho=0.2ns/B",
                                   "loggp:L=1us,o=300ns,g=300ns,G=312.5ps/B,gamma=200ps/B,rho=100ps/B",
                                   "loggp:L=3us,o=1us,g=4us,G=0.5ns/B,gamma=1ns/B,ports=2"}) {
        const auto model = parse_model(spec);
        for (int n : {1, 2, 3, 7})
            for (int P : {1, 2, 5, 8, 9, 13, 26, 40, 64})
                for (TakeOut t : {TakeOut::keep, TakeOut::inverse, TakeOut::none})
                    for (double size : {8.0, 4096.0}) {
                        const NwayCost c = nway_cost(P, n, *model, size, t);
                        const Schedule s = nway(P, n, nway::to_string(t));
                        const double est = estimate(s, Topology::full(P), *model, size).time_s;
                        EXPECT_NEAR(c.time_s, est, 1e-12 + 1e-9 * est)
                            << spec << " P=" << P << " n=" << n << " " << nway::to_string(t);
                        EXPECT_EQ(static_cast<int>(c.rounds.size()), std::max(1, c.plan.geo.rounds));
                        double sum = 0;
                        for (const NwayRound& r : c.rounds) sum += r.time_s;
                        EXPECT_NEAR(sum, c.time_s, 1e-15);
                    }
    }
    EXPECT_THROW(nway_cost(8, 2, *parse_model("hockney:alpha=1us,beta=1ns/B,duplex=0"), 8), Error);
}

TEST(Dissemination, BestNIsTheArgminOfTheEstimate) {
    const auto model = parse_model(kDefaultDisseminationModel);
    for (int P : {2, 8, 24, 64, 96, 500})
        for (double size : {8.0, 2040.0, 1048576.0}) {
            const int best = best_dissemination_n(P, *model, size);
            double best_est = 1e300;
            int argmin = 0;
            for (int n = 1; n <= kDisseminationMaxN; ++n) {
                const double e = estimate(nway(P, n), Topology::full(P), *model, size).time_s;
                if (e < best_est * (1 - 1e-12)) best_est = e, argmin = n;
            }
            EXPECT_EQ(best, argmin) << "P=" << P << " size=" << size;
        }
    // Small messages on a LogGP network with a small gap favour n > 1; one-port Hockney with large vectors n = 1.
    EXPECT_GT(best_dissemination_n(64, *model, 8), 1);
    EXPECT_EQ(best_dissemination_n(64, *parse_model("hockney:alpha=1us,beta=1ns/B"), 1 << 20), 1);
    EXPECT_EQ(choose_n(5, [](int n) { return n == 3 || n == 4 ? 1.0 : 2.0; }), 3);
    EXPECT_THROW(choose_n(0, [](int) { return 0.0; }), Error);
}

TEST(Dissemination, AutoRadixUsesTheModel) {
    const auto model = parse_model(kDefaultDisseminationModel);
    for (int P : {16, 64, 100}) {
        const int n = best_dissemination_n(P, *model, 8);
        const Schedule s = make_schedule("allreduce/nway_dissemination", P, Topology::full(P));  // n=auto by default
        EXPECT_EQ(comm_rounds(s, 0)[0].sends, n) << "P=" << P;
        EXPECT_TRUE(verify(s).ok);
    }
    const std::string hockney = "hockney:alpha=1us,beta=1ns/B";
    const Schedule h = make_schedule("allreduce/nway_dissemination", 64, Topology::full(64),
                                     {{"n", "auto"}, {"auto_model", hockney}, {"auto_size", "1MiB"}});
    EXPECT_EQ(comm_rounds(h, 0)[0].sends, 1);
    EXPECT_THROW(make_schedule("allreduce/nway_dissemination", 8, Topology::full(8), {{"takeout", "subtract"}}), Error);
    EXPECT_THROW(make_schedule("allreduce/nway_dissemination", 8, Topology::full(8), {{"auto_model", "loggp:L=1us"}}),
                 Error);
}

// ------------------------------------------------------------------------------------------------ baselines

TEST(Dissemination, RecexchIsExactAndHasTheRightSteps) {
    for (int k : {2, 3, 4, 5, 8})
        for (int P = 1; P <= 70; ++P) {
            const Schedule s = make_schedule("allreduce/recexch", P, Topology::full(P), {{"k", std::to_string(k)}});
            EXPECT_FALSE(s.needs_commutative);
            const VerifyResult v = verify(s, verify_options_for_op("noncommutative"));
            ASSERT_TRUE(v.ok) << "P=" << P << " k=" << k << ": " << v.message;
            int d = 0;
            int64_t pk = 1;
            while (pk * k <= P) pk *= k, ++d;
            const int expected = d + (pk != P ? 2 : 0);
            int most = 0;
            for (int r = 0; r < P; ++r) {
                const auto rounds = comm_rounds(s, r);
                most = std::max(most, static_cast<int>(rounds.size()));
                for (const CommRound& c : rounds) EXPECT_LE(c.sends, k - 1);
            }
            EXPECT_EQ(most, expected) << "P=" << P << " k=" << k;
        }
}

TEST(Dissemination, BarrierLastRoundIsAdapted) {
    for (int n = 1; n <= 7; ++n)
        for (int P = 2; P <= 100; ++P) {
            const std::string ns = std::to_string(n);
            const Topology full = Topology::full(P);
            const Schedule a = make_schedule("barrier/dissemination", P, full, {{"n", ns}});
            const Schedule f = make_schedule("barrier/dissemination", P, full, {{"n", ns}, {"adapt", "0"}});
            ASSERT_TRUE(verify(a).ok) << "P=" << P << " n=" << n;
            ASSERT_TRUE(verify(f).ok) << "P=" << P << " n=" << n;
            const nway::Geometry g = nway::geometry(P, n);
            const auto ra = comm_rounds(a, 0), rf = comm_rounds(f, 0);
            ASSERT_EQ(static_cast<int>(ra.size()), g.rounds);
            const int64_t needed = (P - g.window + g.window - 1) / g.window;
            EXPECT_EQ(ra.back().sends, std::min<int64_t>(n, needed)) << "P=" << P << " n=" << n;
            std::set<int64_t> offsets;  // adapt=0: the distinct offsets j W mod P other than 0, j = 1..n
            for (int j = 1; j <= n; ++j)
                if (j * g.window % P) offsets.insert(j * g.window % P);
            EXPECT_EQ(rf.back().sends, static_cast<int>(offsets.size())) << "P=" << P << " n=" << n;
        }
    // P = 10, n = 2: one message in the last round instead of two.
    const Schedule b10 = make_schedule("barrier/dissemination", 10, Topology::full(10), {{"n", "2"}});
    EXPECT_EQ(comm_rounds(b10, 0).back().sends, 1);
}

}  // namespace
}  // namespace collplan
