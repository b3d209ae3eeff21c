// The one loop: every registered algorithm, every applicable P up to 40 on its topology families, every
// parameter set and reduction operation it claims -- all verified by the symbolic verifier. alltoallv, which
// needs a matrix that verify/sweep.hpp does not invent, is verified here on a sparse uneven matrix at every P
// (its test sets: test_alltoallv.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "collplan/verify/sweep.hpp"

namespace collplan {
namespace {

// A sparse matrix with uneven entries for alltoallv at P ranks.
std::vector<uint64_t> uneven_matrix(int P) {
    std::vector<uint64_t> m;
    for (int k = 0; k < P * P; ++k) m.push_back(k % 3 == 1 ? 0 : 1 + (k * 7) % 5);
    return m;
}

TEST(AllAlgorithms, EveryCollectiveHasAlgorithmsWithCanonicalUniqueNames) {
    const auto& all = Registry::get().all();
    for (Collective c : kCollectives) {
        const auto algs = Registry::get().for_collective(c);
        EXPECT_FALSE(algs.empty()) << to_string(c) << " has no algorithm";
        // collplan.mpi's default: one per collective but alltoallv (whose calls name their algorithm)
        const auto defaults = std::ranges::count_if(algs, [](const Algorithm* a) { return a->mpi_default; });
        EXPECT_EQ(defaults, c == Collective::alltoallv ? 0 : 1) << to_string(c) << ": mpi_default algorithms";
    }
    std::set<std::string> names;
    for (const Algorithm& a : all) {
        EXPECT_TRUE(names.insert(a.name).second) << a.name << " registered twice";
        EXPECT_EQ(a.name.rfind(std::string(to_string(a.collective)) + "/", 0), 0u) << a.name;
        EXPECT_FALSE(a.summary.empty()) << a.name;
        EXPECT_FALSE(a.source.empty()) << a.name;
        EXPECT_TRUE(a.generate) << a.name;
    }
}

TEST(AllAlgorithms, EveryCaseVerifies) {
    for (const Algorithm& a : Registry::get().all()) {
        std::vector<SweepCase> cases = sweep_cases(a, 40);
        if (a.collective == Collective::alltoallv)  // sweep_cases has no matrix: every P on full:P
            for (int P = 1; P <= 40; ++P) {
                const Problem p{a.collective, P, Topology::full(P), validate_params(a, {}), uneven_matrix(P)};
                if (!a.applies || a.applies(p).empty()) cases.push_back({a.name, P, "full:" + std::to_string(P), "", {}, 0, uneven_matrix(P)});
            }
        EXPECT_GE(cases.size(), 5u) << a.name << " verifies almost nowhere";
        for (const SweepCase& c : cases) {
            const VerifyResult v = run_case(c);
            EXPECT_TRUE(v.ok) << a.name << " P=" << c.ranks << " " << c.topology << " " << c.op << ": " << v.reason
                              << ": " << v.message;
        }
    }
}

// The MPI runtime builds only its own rank's program (Problem::only_rank): every generator honours only_rank (it
// builds that one program, not every rank's cut down), and the program is the one the whole schedule holds.
TEST(AllAlgorithms, EachRanksOwnProgramIsTheWholeSchedulesProgram) {
    for (const Algorithm& a : Registry::get().all()) {
        std::vector<SweepCase> cases = sweep_cases(a, 12);
        if (a.collective == Collective::alltoallv)  // sweep_cases needs no matrix, so it has no alltoallv cases
            for (int P = 1; P <= 12; ++P) cases.push_back({a.name, P, "full:" + std::to_string(P), "", {}});
        for (const SweepCase& c : cases) {
            if (!c.op.empty() && c.op != "sum") continue;  // the op does not change the schedule
            const Topology t = Topology::parse(c.topology);
            const std::vector<uint64_t> matrix = a.collective == Collective::alltoallv ? uneven_matrix(c.ranks) : c.counts;
            const Schedule whole = make_schedule(a.name, c.ranks, t, c.params, Inputs(matrix, c.root));
            for (int r = 0; r < c.ranks; ++r) {
                Problem p{a.collective, c.ranks, t, validate_params(a, c.params), matrix, r, c.root};
                EXPECT_FALSE(a.generate(p).whole()) << a.name << " P=" << c.ranks << " builds every rank for rank " << r;
                const Schedule mine = make_schedule(a.name, c.ranks, t, c.params, Inputs(matrix, c.root), r);
                Schedule expected = whole;
                EXPECT_TRUE(mine == std::move(expected).take_rank(r)) << a.name << " P=" << c.ranks << " " << c.topology << " rank " << r;
                if (c.ranks > 1) EXPECT_THROW(mine.program((r + 1) % c.ranks), Error) << a.name;
            }
        }
    }
}

TEST(AllAlgorithms, OneRanksProgramCostsThatRanksOps) {
    const Schedule s = make_schedule("alltoall/pairwise", 1 << 16, Topology::full(1 << 16), {}, {}, 12345);
    EXPECT_EQ(s.num_ops(12345), 2u * (1 << 16) - 1);
    EXPECT_LT(s.memory_bytes(), 4u << 20);  // the whole schedule would be 8.6 G ops
    EXPECT_THROW(make_schedule("alltoall/pairwise", 8, Topology::full(8), {}, {}, 8), Error);
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
