// The MPI-free parts of the runtime: byte layouts of schedules for real call shapes (uneven allreduce segments,
// alltoallv matrices, tmp slots) and the wisdom format.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <tuple>

#include "collplan/algorithms/registry.hpp"
#include "collplan/runtime/layout.hpp"
#include "collplan/runtime/wisdom.hpp"

using namespace collplan;

namespace {

uint64_t total(std::span<const Chunk> cs) {
    uint64_t n = 0;
    for (const Chunk& c : cs) n += c.bytes;
    return n;
}

// Every send carries as many bytes as the recv it matches (channel order), on every rank.
void expect_matched_sizes(const Schedule& s, const CallShape& shape) {
    const int P = s.ranks();
    std::vector<Layout> lay;
    for (int r = 0; r < P; ++r) lay.emplace_back(s, r, shape);
    std::map<std::tuple<int, int, int>, std::vector<uint64_t>> sent, received;  // (from, to, tag)
    for (int r = 0; r < P; ++r)
        for (uint32_t i = 0; i < s.num_ops(r); ++i) {
            const Op& op = s.program(r).ops[i];
            if (op.kind == OpKind::send) sent[{r, op.peer, op.tag()}].push_back(lay[r].src_bytes(i));
            if (op.kind == OpKind::recv) received[{op.peer, r, op.tag()}].push_back(lay[r].dst_bytes(i));
        }
    EXPECT_EQ(sent, received) << s.algorithm << " P=" << P;
}

}  // namespace

TEST(RuntimeLayout, UniformAllgatherRingChunks) {
    const Schedule s = make_schedule("allgather/ring", 3, Topology::full(3));
    CallShape sh;
    sh.collective = Collective::allgather;
    sh.count = 10;
    const Layout l(s, 1, sh);
    EXPECT_TRUE(l.uniform());
    ASSERT_EQ(l.src(0).size(), 1u);
    EXPECT_EQ(l.src(0)[0], (Chunk{Buf::in, 0, 10}));
    EXPECT_EQ(l.dst(0)[0], (Chunk{Buf::out, 10, 10}));  // out[1] of rank 1
    EXPECT_EQ(l.out_extent(), 30u);
}

TEST(RuntimeLayout, UnevenAllreduceSegmentsFollowTheFloorRule) {
    // rabenseifner on 4 ranks: S = 4 segments; 10 doubles -> 2, 3, 2, 3 elements.
    const Schedule s = make_schedule("allreduce/rabenseifner", 4, Topology::full(4));
    CallShape sh;
    sh.collective = Collective::allreduce;
    sh.count = 10;
    sh.elem_bytes = 8;
    const Layout l(s, 0, sh);
    EXPECT_FALSE(l.uniform());
    EXPECT_EQ(l.out_extent(), 80u);
    EXPECT_LE(l.tmp_bytes(), 4u * 3 * 8);
    EXPECT_EQ(sh.segment_begin(1, 4), 2u);
    EXPECT_EQ(sh.segment_begin(2, 4), 5u);
    EXPECT_EQ(sh.segment_begin(3, 4), 7u);
    expect_matched_sizes(s, sh);
}

TEST(RuntimeLayout, EveryAllreduceAlgorithmMatchesMessageSizesForAnyCount) {
    for (const Algorithm* a : Registry::get().for_collective(Collective::allreduce))
        for (int P = 1; P <= 9; ++P) {
            Schedule s(Collective::allreduce, 1, 1, 1, 0);
            try {
                s = make_schedule(a->name, P, Topology::full(P));
            } catch (const Error&) {
                continue;  // does not apply to this P
            }
            for (uint64_t count : std::vector<uint64_t>{0, 1, 2, uint64_t(P) - 1, uint64_t(P) + 1, 13, 1001}) {
                CallShape sh;
                sh.collective = Collective::allreduce;
                sh.count = count;
                sh.elem_bytes = 4;
                expect_matched_sizes(s, sh);
                const Layout l(s, P - 1, sh);
                EXPECT_EQ(l.out_extent(), count * 4) << a->name << " P=" << P << " count=" << count;
            }
        }
}

// Every algorithm of the collectives with a root or per-rank counts: matched message sizes on every rank and an
// output extent that is exactly what MPI says the rank receives, for roots 0 and P-1, counts no block count
// divides, and uneven per-rank counts with zeros.
TEST(RuntimeLayout, RootedAndCountedCollectivesMatchMessageSizes) {
    const Collective kNew[] = {Collective::bcast, Collective::reduce, Collective::reduce_scatter_block,
                               Collective::reduce_scatter, Collective::allgatherv, Collective::gather, Collective::scatter};
    int layouts = 0;
    for (Collective c : kNew)
        for (const Algorithm* a : Registry::get().for_collective(c))
            for (int P : {1, 2, 3, 5, 8}) {
                std::vector<uint64_t> counts;
                if (counts_size(c, P) > 0)
                    for (int r = 0; r < P; ++r) counts.push_back((r * 5 + 3) % 4 == 0 ? 0 : static_cast<uint64_t>(r * 7 % 5 + 1));
                for (int root : {0, P - 1}) {
                    Schedule s(c, 1, 0, 0, 0);
                    try {
                        s = make_schedule(a->name, P, Topology::full(P), {}, Inputs(counts, root));
                    } catch (const Error&) {
                        continue;  // does not apply on full:P
                    }
                    for (uint64_t count : {uint64_t{0}, uint64_t{1}, uint64_t(P) + 1, uint64_t{1001}}) {
                        CallShape sh;
                        sh.collective = c;
                        sh.root = root;
                        sh.count = count;
                        sh.elem_bytes = describe(c).reduction ? 8 : 1;
                        sh.counts = counts;
                        if (c == Collective::reduce_scatter)  // the input: every rank's counts one after the other
                            for (uint64_t off = 0; uint64_t n : counts) sh.send_displs.push_back(off), off += n * 8;
                        uint64_t end = 0;  // allgatherv: the output in reverse rank order, with gaps of 2 bytes
                        if (c == Collective::allgatherv) {
                            sh.recv_displs.assign(static_cast<size_t>(P), 0);
                            for (int r = P - 1; r >= 0; --r) sh.recv_displs[r] = end + 2, end += counts[r] + 2;
                            end = 0;
                            for (int r = 0; r < P; ++r)
                                if (counts[r]) end = std::max(end, sh.recv_displs[r] + counts[r]);
                        }
                        expect_matched_sizes(s, sh);
                        for (int r = 0; r < P; ++r) {
                            const Layout l(s, r, sh);
                            ++layouts;
                            if (c == Collective::bcast && r == root) continue;  // receives nothing (P = 1: touches nothing)
                            const CollShape cs = s.shape();
                            uint64_t want = buffer_blocks(c, cs, r, Buf::out) / std::max(1u, cs.S) * count * sh.elem_bytes;
                            if (c == Collective::reduce_scatter) want = counts[r] * 8;
                            if (c == Collective::allgatherv) want = end;
                            EXPECT_EQ(l.out_extent(), want) << a->name << " P=" << P << " root=" << root << " count=" << count << " rank " << r;
                        }
                    }
                }
            }
    EXPECT_GT(layouts, 1000);
}

TEST(RuntimeLayout, RootedCallForAnotherRootIsRefused) {
    const Schedule s = make_schedule("bcast/binomial", 4, Topology::full(4), {}, Inputs({}, 2));
    CallShape sh;
    sh.collective = Collective::bcast;
    sh.root = 1;
    sh.count = 8;
    EXPECT_THROW(Layout(s, 0, sh), Error);
    sh.root = 2;
    EXPECT_EQ(Layout(s, 2, sh).out_extent(), 8u);
}

// A hand-made alltoallv that relays every block through tmp: rank r receives block (r-k -> r) into tmp[0] and
// copies it into out. tmp[0] holds blocks of different sizes in turn; its slot must fit the largest.
TEST(RuntimeLayout, AlltoallvRelayThroughTmpGetsTheLargestSlot) {
    const int P = 4;
    Schedule s(Collective::alltoallv, P, P, P, 1);
    for (int r = 0; r < P; ++r) {
        RankBuilder b(s, r);
        b.copy({Segment(Buf::in, r, 1)}, {Segment(Buf::out, r, 1)});
        for (int k = 1; k < P; ++k) {
            const int to = (r + k) % P, from = (r - k + P) % P;
            b.fence();
            b.send(to, 0, {Segment(Buf::in, static_cast<uint32_t>(to), 1)});
            b.recv(from, 0, {Segment(Buf::tmp, 0, 1)});
            b.fence();
            b.copy({Segment(Buf::tmp, 0, 1)}, {Segment(Buf::out, static_cast<uint32_t>(from), 1)});
        }
    }
    std::mt19937 rng(7);
    CallShape sh;
    sh.collective = Collective::alltoallv;
    for (int i = 0; i < P * P; ++i) sh.counts.push_back(rng() % 50);
    const int me = 2;
    uint64_t so = 0, ro = 0, biggest_in = 0;
    for (int j = 0; j < P; ++j) {
        sh.send_displs.push_back(so), so += sh.counts[me * P + j];
        sh.recv_displs.push_back(ro), ro += sh.counts[j * P + me];
        if (j != me) biggest_in = std::max(biggest_in, sh.counts[j * P + me]);
    }
    const Layout l(s, me, sh);
    EXPECT_EQ(l.tmp_bytes(), biggest_in);
    for (uint32_t i = 0; i < s.num_ops(me); ++i)
        if (s.program(me).ops[i].kind == OpKind::copy) EXPECT_EQ(total(l.src(i)), total(l.dst(i)));
}

TEST(RuntimeLayout, MismatchedCollectiveIsRefused) {
    const Schedule s = make_schedule("allgather/ring", 2, Topology::full(2));
    CallShape sh;
    sh.collective = Collective::allreduce;
    EXPECT_THROW(Layout(s, 0, sh), Error);
}

TEST(Wisdom, ParsesLooksUpAndRoundTrips) {
    const Wisdom w = parse_wisdom(R"({"format": "collplan-wisdom/1", "entries": [
        {"collective": "allreduce", "ranks": 8, "min_bytes": 0, "max_bytes": 65536, "algorithm": "allreduce/recursive_doubling"},
        {"collective": "allreduce", "algorithm": "allreduce/recexch", "params": {"k": 3}},
        {"collective": "alltoallv", "max_bytes": 1, "algorithm": "native"}]})");
    ASSERT_EQ(w.entries.size(), 3u);
    EXPECT_EQ(w.lookup(Collective::allreduce, 8, 100)->algorithm, "allreduce/recursive_doubling");
    EXPECT_EQ(w.lookup(Collective::allreduce, 8, 65536)->algorithm, "allreduce/recexch");
    EXPECT_EQ(w.lookup(Collective::allreduce, 4, 100)->params.at("k"), "3");
    EXPECT_EQ(w.lookup(Collective::alltoallv, 4, 1u << 20)->algorithm, "native");  // sizes ignored for alltoallv
    EXPECT_EQ(w.lookup(Collective::barrier, 4, 0), nullptr);
    const Wisdom again = parse_wisdom(to_json(w));
    ASSERT_EQ(again.entries.size(), 3u);
    EXPECT_EQ(again.entries[0].max_bytes, 65536u);
    EXPECT_EQ(again.entries[1].params, w.entries[1].params);
}

TEST(Wisdom, OperationAndTopologyNarrowTheMatch) {
    const Wisdom w = parse_wisdom(R"({"format": "collplan-wisdom/1", "entries": [
        {"collective": "allreduce", "ranks": 16, "topology": "torus:4x4", "algorithm": "allreduce/ring"},
        {"collective": "allreduce", "ranks": 16, "op": "max", "algorithm": "allreduce/nway_dissemination_plain"},
        {"collective": "allreduce", "ranks": 16, "algorithm": "allreduce/recursive_doubling", "evaluator": "estimate"}]})");
    EXPECT_EQ(w.lookup(Collective::allreduce, 16, 8, "sum", "torus:4x4")->algorithm, "allreduce/ring");
    EXPECT_EQ(w.lookup(Collective::allreduce, 16, 8, "max")->algorithm, "allreduce/nway_dissemination_plain");
    EXPECT_EQ(w.lookup(Collective::allreduce, 16, 8, "sum")->algorithm, "allreduce/recursive_doubling");
    EXPECT_EQ(w.lookup(Collective::allreduce, 16, 8)->algorithm, "allreduce/recursive_doubling");
    EXPECT_EQ(w.lookup(Collective::allreduce, 16, 8, "max", "torus:2x8"), nullptr);  // no entry for that topology
    const Wisdom again = parse_wisdom(to_json(w));
    EXPECT_EQ(again.entries[0].topology, "torus:4x4");
    EXPECT_EQ(again.entries[1].op, "max");
    EXPECT_THROW(parse_wisdom(R"({"format": "collplan-wisdom/1", "entries": [{"collective": "barrier", "algorithm": "x", "op": 3}]})"), Error);
}

TEST(Wisdom, DeepNestingIsRefusedNotACrash) {
    const std::string ok = R"({"format": "collplan-wisdom/1", "entries": [], "note": )" + std::string(60, '[') + std::string(60, ']') + "}";
    EXPECT_TRUE(parse_wisdom(ok).entries.empty());
    const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
    try {
        parse_wisdom(deep);
        FAIL() << "a million nested arrays parsed";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("at most 64 nested"), std::string::npos) << e.what();
    }
}

TEST(Wisdom, ErrorsNameTheProblem) {
    EXPECT_THROW(parse_wisdom("{}"), Error);
    EXPECT_THROW(parse_wisdom(R"({"format": "collplan-wisdom/2", "entries": []})"), Error);
    EXPECT_THROW(parse_wisdom(R"({"format": "collplan-wisdom/1", "entries": [{"collective": "scan", "algorithm": "x"}]})"), Error);
    EXPECT_THROW(parse_wisdom(R"({"format": "collplan-wisdom/1", "entries": [{"collective": "barrier"}]})"), Error);
    EXPECT_THROW(parse_wisdom(R"({"format": "collplan-wisdom/1", "entries": [)"), Error);
    try {
        parse_wisdom("{\"format\": \"collplan-wisdom/1\",\n \"entries\": [1,]}");
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
    }
}

TEST(Wisdom, EntriesThatCouldNotRunAreRefusedWhenRead) {
    const std::string head = R"({"format": "collplan-wisdom/1", "entries": [{"collective": "allreduce", )";
    for (const auto& [entry, word] : std::vector<std::pair<std::string, std::string>>{
             {R"("algorithm": "allreduce/nosuch"})", "nosuch"},
             {R"("algorithm": "allgather/ring"})", "is a allgather algorithm"},
             {R"("algorithm": "ring", "params": {"x": 3}})", "unknown parameter 'x'"},
             {R"("algorithm": "recexch:k=99"})", "out of range"},
             {R"("algorithm": "ring", "op": "summ"})", "unknown reduction operation 'summ'"},
             {R"("algorithm": "ring", "min_bytes": 64, "max_bytes": 64})", "empty size range"}}) {
        try {
            parse_wisdom(head + entry + "]}");
            ADD_FAILURE() << entry << " accepted";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("entry 0"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
        }
    }
    const Wisdom w = parse_wisdom(head + R"("algorithm": "recexch:k=3", "op": "noncommutative"}, )" +
                                  R"({"collective": "bcast", "algorithm": "native", "params": {"anything": 1}}]})");
    EXPECT_EQ(w.entries.size(), 2u);
}

TEST(Wisdom, RanksBeyondAnIntAreRefusedNotWrapped) {
    // 4294967295 became -1 ("any size") and 4294967296 became 0 before (found by fuzz/wisdom.cpp)
    for (const char* ranks : {"4294967295", "4294967296", "2147483648", "0"}) {
        const std::string text = std::string(R"({"format": "collplan-wisdom/1", "entries": [{"collective": "barrier",)") +
                                 R"( "algorithm": "dissemination", "ranks": )" + ranks + "}]}";
        try {
            parse_wisdom(text);
            FAIL() << ranks;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(std::string("ranks ") + ranks + " is invalid"), std::string::npos)
                << e.what();
        }
    }
    const Wisdom w = parse_wisdom(R"({"format": "collplan-wisdom/1", "entries": [{"collective": "barrier",)"
                                  R"( "algorithm": "dissemination", "ranks": 2147483647}]})");
    EXPECT_NE(w.lookup(Collective::barrier, 2147483647, 0), nullptr);
    EXPECT_EQ(w.lookup(Collective::barrier, 8, 0), nullptr);
}

TEST(Wisdom, AlgorithmSpecs) {
    auto [n1, p1] = parse_algorithm_spec("ring");
    EXPECT_EQ(n1, "ring");
    EXPECT_TRUE(p1.empty());
    auto [n2, p2] = parse_algorithm_spec("dissemination:n=2");
    EXPECT_EQ(n2, "dissemination");
    EXPECT_EQ(p2.at("n"), "2");
    auto [n3, p3] = parse_algorithm_spec("x/y:d=1,2,3,topology=fattree:4,2");
    EXPECT_EQ(p3.at("d"), "1,2,3");
    EXPECT_EQ(p3.at("topology"), "fattree:4,2");
    EXPECT_THROW(parse_algorithm_spec(":n=2"), Error);
    EXPECT_THROW(parse_algorithm_spec("ring:junk"), Error);
}
