// Text format (round trips, canonical form, errors) and GOAL export.
#include <gtest/gtest.h>

#include <string>

#include "collplan/algorithms/registry.hpp"
#include "collplan/schedule/text.hpp"

namespace collplan {
namespace {

Segment seg(Buf b, uint32_t first, uint32_t n) { return Segment(b, first, n); }
std::vector<Segment> segs1(Buf b, uint32_t first, uint32_t n) { return {Segment(b, first, n)}; }
std::vector<uint32_t> deps(std::initializer_list<uint32_t> d) { return d; }

// Expects `text` to be rejected with a message that starts with "line <line>:" and contains `part`.
void expect_error(const std::string& text, int line, const std::string& part) {
    try {
        from_text(text);
        ADD_FAILURE() << "no error for input:\n" << text;
    } catch (const Error& e) {
        const std::string msg = e.what();
        EXPECT_EQ(msg.rfind("line " + std::to_string(line) + ":", 0), 0u) << msg;
        EXPECT_NE(msg.find(part), std::string::npos) << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
}

void expect_round_trip(const Schedule& s) {
    const std::string t = to_text(s);
    const Schedule back = from_text(t);
    EXPECT_TRUE(back == s) << t;
    EXPECT_EQ(to_text(back), t);
}

// ---------------------------------------------------------------------------------------------------------------

const char* const kSmallText =
    "collplan-schedule 1\n"
    "collective allgather\n"
    "ranks 3\n"
    "blocks in=1 out=3 tmp=0\n"
    "algorithm allgather/ring\n"
    "params \"\"\n"
    "topology ring:3\n"
    "flags\n"
    "rank 0\n"
    "  0: copy in[0+1] -> out[0+1]\n"
    "  1: | send to 1 tag 0 out[0+1]\n"
    "  2: recv from 2 tag 0 out[2+1] after 0\n"
    "rank 1\n"
    "rank 2\n";

Schedule small_schedule() {
    Schedule s(Collective::allgather, 3, 1, 3, 0);
    s.algorithm = "allgather/ring";
    s.topology = "ring:3";
    RankBuilder b(s, 0);
    b.copy({seg(Buf::in, 0, 1)}, {seg(Buf::out, 0, 1)});
    b.fence();
    b.send(1, 0, {seg(Buf::out, 0, 1)});
    b.recv(2, 0, {seg(Buf::out, 2, 1)}, {0});
    return s;
}

TEST(TextFormat, SmallScheduleCanonicalText) {
    const Schedule s = small_schedule();
    EXPECT_EQ(to_text(s), kSmallText);
    EXPECT_TRUE(from_text(kSmallText) == s);
}

// Every op kind, every reduce flag, ports, deps, fences, empty segment lists, zero-length segments, all metadata
// flags and a metadata string that needs quoting.
Schedule every_kind_schedule() {
    Schedule s(Collective::allreduce, 3, 2, 2, 3);
    s.algorithm = "allreduce/test \"quoted\" #1\\";
    s.params = "k=2,segments=1 2";
    s.needs_commutative = true;
    s.needs_inverse = true;
    s.idempotent_only = true;
    s.rank_consistent = true;
    RankBuilder b(s, 0);
    b.copy({seg(Buf::in, 0, 1), seg(Buf::in, 1, 1)}, {seg(Buf::out, 0, 2)});
    b.fence();
    b.send(1, 7, {seg(Buf::out, 0, 1)});
    b.on_port(3);
    b.recv(2, 7, {seg(Buf::tmp, 0, 2)}, {0});
    b.fence();
    b.reduce({seg(Buf::tmp, 0, 1)}, {seg(Buf::out, 0, 1)}, {}, opflag::reverse);
    b.reduce({seg(Buf::tmp, 1, 1)}, {seg(Buf::out, 1, 1)}, {2}, opflag::inverse);
    b.reduce({seg(Buf::tmp, 0, 1)}, {seg(Buf::out, 1, 1)}, {}, opflag::reverse | opflag::inverse);
    b.calc(5, deps({3, 4}));
    b.barrier();
    b.on_port(0);
    b.send(2, 0, std::span<const Segment>{}, {});
    b.copy({seg(Buf::tmp, 2, 0)}, {seg(Buf::out, 2, 0)});
    RankBuilder b1(s, 1);
    b1.barrier();
    b1.recv(0, 7, {seg(Buf::tmp, 0, 1)});
    RankBuilder b2(s, 2);
    b2.barrier();
    b2.send(0, 7, {seg(Buf::in, 0, 2)});
    b2.recv(0, 0, std::span<const Segment>{}, {});
    return s;
}

TEST(TextFormat, EveryOpKindRoundTrips) {
    const Schedule s = every_kind_schedule();
    expect_round_trip(s);
    const std::string t = to_text(s);
    EXPECT_NE(t.find("algorithm \"allreduce/test \\\"quoted\\\" #1\\\\\"\n"), std::string::npos) << t;
    EXPECT_NE(t.find("params \"k=2,segments=1 2\"\n"), std::string::npos) << t;
    EXPECT_NE(t.find("flags needs_commutative needs_inverse idempotent_only rank_consistent\n"), std::string::npos) << t;
    EXPECT_NE(t.find("  0: copy in[0+1],in[1+1] -> out[0+2]\n"), std::string::npos) << t;
    EXPECT_NE(t.find("  1: | send to 1 tag 7 out[0+1] port 3\n"), std::string::npos) << t;
    EXPECT_NE(t.find("  3: | reduce tmp[0+1] -> out[0+1] reverse\n"), std::string::npos) << t;
    EXPECT_NE(t.find("  4: reduce tmp[1+1] -> out[1+1] inverse after 2\n"), std::string::npos) << t;
    EXPECT_NE(t.find("  5: reduce tmp[0+1] -> out[1+1] reverse inverse\n"), std::string::npos) << t;
    EXPECT_NE(t.find("  6: calc 5 after 3,4\n"), std::string::npos) << t;
    EXPECT_NE(t.find("  7: barrier port 0\n"), std::string::npos) << t;
    EXPECT_NE(t.find("  8: send to 2 tag 0 -\n"), std::string::npos) << t;
    EXPECT_NE(t.find("  9: copy tmp[2+0] -> out[2+0]\n"), std::string::npos) << t;
    // The parsed schedule keeps what operator== compares; check a few fields directly too.
    const Schedule back = from_text(t);
    EXPECT_EQ(back.algorithm, s.algorithm);
    EXPECT_EQ(back.op(0, 1).op.port, 3);
    EXPECT_EQ(back.op(0, 5).op.flags, opflag::reverse | opflag::inverse);
    EXPECT_EQ(back.op(0, 6).units, 5u);
    EXPECT_EQ(back.op(0, 8).units, 0u);
}

TEST(TextFormat, EqualityNoticesAChangedOp) {
    // Guards the round-trip tests: a text that differs in one detail must not give an equal schedule.
    std::string t = to_text(every_kind_schedule());
    t.replace(t.find("port 3"), 6, "port 4");
    EXPECT_FALSE(from_text(t) == every_kind_schedule());
    std::string u = to_text(every_kind_schedule());
    u.erase(u.find(" rank_consistent"), 16);
    EXPECT_FALSE(from_text(u) == every_kind_schedule());
}

// alltoallv: a matrix and explicit units where they differ from the block count.
Schedule alltoallv_schedule() {
    const int P = 3;
    Schedule s(Collective::alltoallv, P, P, P, 1);
    s.algorithm = "alltoallv/direct";
    s.counts = {0, 5, 3, 2, 0, 1, 4, 6, 0};
    for (int r = 0; r < P; ++r) {
        RankBuilder b(s, r);
        const auto me = static_cast<uint32_t>(r);
        b.copy(segs1(Buf::in, me, 1), segs1(Buf::tmp, 0, 1), {}, s.counts[me * P + me]);
        b.copy(segs1(Buf::tmp, 0, 1), segs1(Buf::out, me, 1), deps({0}), s.counts[me * P + me]);
        for (int k = 1; k < P; ++k) {
            const int to = (r + k) % P, from = (r - k + P) % P;
            b.send(to, 0, segs1(Buf::in, static_cast<uint32_t>(to), 1), {},
                   s.counts[me * P + static_cast<uint32_t>(to)]);
            b.recv(from, 0, segs1(Buf::out, static_cast<uint32_t>(from), 1), {},
                   s.counts[static_cast<uint32_t>(from) * P + me]);
        }
    }
    return s;
}

TEST(TextFormat, AlltoallvMatrixAndUnitsRoundTrip) {
    const Schedule s = alltoallv_schedule();
    expect_round_trip(s);
    const std::string t = to_text(s);
    EXPECT_NE(t.find("matrix 0: 0 5 3\nmatrix 1: 2 0 1\nmatrix 2: 4 6 0\nrank 0\n"), std::string::npos) << t;
    // rank 0 op 2 sends block 0->1 of 5 units; op 3 receives block 2->0 of 4 units.
    EXPECT_NE(t.find("  2: send to 1 tag 0 in[1+1] units 5\n"), std::string::npos) << t;
    EXPECT_NE(t.find("  3: recv from 2 tag 0 out[2+1] units 4\n"), std::string::npos) << t;
    // Explicit units on the very first op (the diagonal entry 0 differs from the 1 block copied).
    EXPECT_NE(t.find("  0: copy in[0+1] -> tmp[0+1] units 0\n  1: copy tmp[0+1] -> out[0+1] units 0 after 0\n"),
              std::string::npos) << t;
    EXPECT_NE(t.find("  4: send to 2 tag 0 in[2+1] units 3\n  5: recv from 1 tag 0 out[1+1] units 2\n"),
              std::string::npos) << t;
    // rank 1 sends 1->0 = 2 units; 1->2 = 1 unit equals the block count: no explicit units printed.
    EXPECT_NE(t.find("  4: send to 0 tag 0 in[0+1] units 2\n"), std::string::npos) << t;
    EXPECT_NE(t.find("  2: send to 2 tag 0 in[2+1]\n"), std::string::npos) << t;
    const Schedule back = from_text(t);
    EXPECT_EQ(back.op(0, 2).units, 5u);
    EXPECT_EQ(back.counts, s.counts);
}

TEST(TextFormat, LooseInputGivesCanonicalText) {
    // Comments, blank lines, CRLF, tabs, extra blanks, metadata in another order and options in another order.
    const std::string loose =
        "# a hand-written schedule\n"
        "\n"
        "collplan-schedule 1   # version\r\n"
        "collective   allgather\n"
        "ranks 3\n"
        "blocks in=1 out=3 tmp=0\n"
        "topology ring:3\n"
        "algorithm \"allgather/ring\"\n"
        "rank 0\n"
        "\t0: copy in[0+1] -> out[0+1]   # own block\n"
        "# a comment between ops\n"
        "1:|send to 1 tag 0 out[0+1]\n"
        "  2: recv from 2 tag 0 out[2+1] after 0\n"
        "rank 1\n"
        "\n"
        "rank 2\n";
    const Schedule s = from_text(loose);
    EXPECT_TRUE(s == small_schedule());
    EXPECT_EQ(to_text(s), kSmallText);
    const Schedule p = every_kind_schedule();
    std::string t = to_text(p);
    t.replace(t.find("reverse inverse"), 15, "inverse reverse");
    t.replace(t.find("inverse after 2"), 15, "after 2 inverse");
    EXPECT_TRUE(from_text(t) == p);
    EXPECT_NE(to_text(from_text(t)), t);
    EXPECT_EQ(to_text(from_text(t)), to_text(p));
}

TEST(TextFormat, ManyRanksRoundTrip) {
    // A pairwise-exchange shaped all-to-all built here, P = 33: 33 * 32 * 2 ops plus copies.
    const int P = 33;
    Schedule s(Collective::alltoall, P, P, P, 0);
    for (int r = 0; r < P; ++r) {
        RankBuilder b(s, r);
        const auto me = static_cast<uint32_t>(r);
        b.copy({seg(Buf::in, me, 1)}, {seg(Buf::out, me, 1)});
        for (int k = 1; k < P; ++k) {
            const auto to = static_cast<uint32_t>((r + k) % P), from = static_cast<uint32_t>((r - k + P) % P);
            b.fence();
            b.send(static_cast<int>(to), k, {seg(Buf::in, to, 1)});
            b.recv(static_cast<int>(from), k, {seg(Buf::out, from, 1)});
        }
    }
    expect_round_trip(s);
    EXPECT_EQ(from_text(to_text(s)).total_ops(), static_cast<size_t>(P) * (2 * (P - 1) + 1));
}

TEST(TextFormat, RegistryRingRoundTrip) {
    const Schedule s = make_schedule("allgather/ring", 5, Topology::parse("ring:5"));
    EXPECT_EQ(s.algorithm, "allgather/ring");
    expect_round_trip(s);
}

// ---------------------------------------------------------------------------------------------------------------
// Errors: each names its line.

std::string with_line(int line, const std::string& replacement) {
    std::string t = kSmallText;
    size_t pos = 0;
    for (int i = 1; i < line; ++i) pos = t.find('\n', pos) + 1;
    const size_t end = t.find('\n', pos);
    return t.replace(pos, end - pos, replacement);
}

TEST(TextFormatErrors, Header) {
    expect_error(with_line(1, "collplan-schedul 1"), 1, "expected 'collplan-schedule'");
    expect_error(with_line(1, "collplan-schedule 2"), 1, "format version 1");
    expect_error(with_line(2, "collective allgathr"), 2, "got 'allgathr'");
    expect_error(with_line(3, "ranks 0"), 3, "number of ranks");
    expect_error(with_line(3, "ranks 100"), 3, "number of ranks");
    expect_error(with_line(4, "blocks in=1 tmp=0"), 4, "'out=<blocks>'");
    expect_error(with_line(5, "algorithm \"allgather/ring"), 5, "closing");
    expect_error(with_line(6, "params a b"), 6, "end of line");
    expect_error(with_line(7, "colour red"), 7, "'algorithm'");
    expect_error(with_line(8, "flags needs_commutative fast"), 8, "got 'fast'");
    expect_error("", 1, "expected 'collplan-schedule 1', got end of input");
}

TEST(TextFormatErrors, Ops) {
    expect_error(with_line(10, "  0: sned in[0+1] -> out[0+1]"), 10, "expected an op kind");
    expect_error(with_line(10, "  0: copy in[0+1 -> out[0+1]"), 10, "expected segments");
    expect_error(with_line(10, "  0: copy in[0+1] -> res[0+1]"), 10, "got 'res[0+1]'");
    expect_error(with_line(10, "  0: copy in[0+1] -> out[3+1]"), 10, "exceeds the buffer");
    expect_error(with_line(11, "  2: | send to 1 tag 0 out[0+1]"), 11, "expected op index 1, got '2'");
    expect_error(with_line(12, "  2: recv from 2 tag 0 out[2+1] after 3"), 12, "dependency 3");
    expect_error(with_line(12, "  2: recv from 2 tag 0 out[2+1] after 2"), 12, "dependency 2");
    expect_error(with_line(11, "  1: | send to 0 tag 0 out[0+1]"), 11, "peer 0");
    expect_error(with_line(11, "  1: | send to 1 out[0+1]"), 11, "expected 'tag'");
    expect_error(with_line(11, "  1: | send to 1 tag 0 out[0+1] speed 3"), 11, "got 'speed'");
    expect_error(with_line(11, "  1: | send to 1 tag 0 out[0+1] reverse"), 11, "allowed on send");
    expect_error(with_line(11, "  1: | send to 1 tag 0 out[0+1] port 1 port 2"), 11, "at most once");
    expect_error(with_line(11, "  1: | send to 1 tag 0 out[0+1] port 300"), 11, "port number");
    expect_error(with_line(10, "  0: | copy in[0+1] -> out[0+1]"), 10, "op 0");
    expect_error(with_line(10, "  0: calc 3 units 4"), 10, "'units' is for");
    expect_error(with_line(10, "  x: calc 3"), 10, "op index 0");
    expect_error(with_line(10, "  0 calc 3"), 10, "':'");
    expect_error(with_line(10, "  0: copy in[0+1] -> out[0+2]"), 10, "destination 2");
}

TEST(TextFormatErrors, RankSections) {
    expect_error(with_line(9, "rank 1"), 9, "expected rank 0");
    expect_error(with_line(13, "rank 2"), 13, "expected rank 1");
    expect_error(std::string(kSmallText) + "rank 3\n", 15, "end of input");
    const std::string missing = std::string(kSmallText).substr(0, std::string(kSmallText).find("rank 2"));
    expect_error(missing, 14, "expected 'rank 2', got end of input");
    const std::string matrix = std::string(kSmallText).replace(std::string(kSmallText).find("rank 0"), 0,
                                                               "matrix 0: 1 2 3\nmatrix 2: 1 1 1\n");
    expect_error(matrix, 10, "matrix row 1");
    const std::string short_row = std::string(kSmallText).replace(std::string(kSmallText).find("rank 0"), 0,
                                                                  "matrix 0: 1 2\n");
    expect_error(short_row, 9, "matrix entry 2 of 3");
}

// ---------------------------------------------------------------------------------------------------------------
// GOAL export

Schedule goal_schedule() {
    Schedule s(Collective::allreduce, 2, 1, 1, 1);
    s.algorithm = "allreduce/test";
    RankBuilder b0(s, 0);
    b0.copy({seg(Buf::in, 0, 1)}, {seg(Buf::out, 0, 1)});
    b0.fence();
    b0.send(1, 0, {seg(Buf::out, 0, 1)});
    b0.on_port(1);
    b0.recv(1, 0, {seg(Buf::tmp, 0, 1)});
    b0.fence();
    b0.reduce({seg(Buf::tmp, 0, 1)}, {seg(Buf::out, 0, 1)});
    b0.calc(3, deps({2}));
    RankBuilder b1(s, 1);
    b1.copy({seg(Buf::in, 0, 1)}, {seg(Buf::out, 0, 1)});
    b1.send(0, 0, {seg(Buf::out, 0, 1)});
    b1.recv(0, 0, {seg(Buf::tmp, 0, 1)}, {0});
    b1.reduce({seg(Buf::tmp, 0, 1)}, {seg(Buf::out, 0, 1)}, {2});
    return s;
}

TEST(GoalExport, SmallScheduleExactText) {
    // m = 1000 bytes; reduce 2 ns/byte -> 2000 ns per block, copy 1 ns/byte -> 1000 ns per block;
    // calc 3 units = 3000 bytes at the reduce rate -> 6000 ns. Each op after a fence requires every op of the group
    // before (l4's explicit dependency on l2 is one of them).
    const std::string expected =
        "num_ranks 2\n"
        "\n"
        "rank 0 {\n"
        "l0: calc 1000\n"
        "l1: send 1000b to 1 tag 0 nic 1\n"
        "l1 requires l0\n"
        "l2: recv 1000b from 1 tag 0\n"
        "l2 requires l0\n"
        "l3: calc 2000\n"
        "l3 requires l1\n"
        "l3 requires l2\n"
        "l4: calc 6000\n"
        "l4 requires l1\n"
        "l4 requires l2\n"
        "}\n"
        "\n"
        "rank 1 {\n"
        "l0: calc 1000\n"
        "l1: send 1000b to 0 tag 0\n"
        "l2: recv 1000b from 0 tag 0\n"
        "l2 requires l0\n"
        "l3: calc 2000\n"
        "l3 requires l2\n"
        "}\n";
    EXPECT_EQ(to_goal(goal_schedule(), 1000, 2e-9, 1e-9), expected);
}

TEST(GoalExport, BytesRoundAndZeroCosts) {
    Schedule s(Collective::allgather, 2, 1, 2, 0);
    RankBuilder b(s, 0);
    b.copy({seg(Buf::in, 0, 1)}, {seg(Buf::out, 0, 1)});
    b.send(1, 4, {seg(Buf::out, 0, 1)});
    RankBuilder b1(s, 1);
    b1.recv(0, 4, {seg(Buf::out, 0, 2)});
    // 1.4 bytes per block: 1 block -> 1b, 2 blocks -> 3b (2.8 rounds up); no local costs -> calc 0.
    EXPECT_EQ(to_goal(s, 1.4), "num_ranks 2\n\nrank 0 {\nl0: calc 0\nl1: send 1b to 1 tag 4\n}\n\n"
                               "rank 1 {\nl0: recv 3b from 0 tag 4\n}\n");
    EXPECT_THROW(to_goal(s, -1), Error);
}

// k groups of w ops. Small groups: every op after the first group requires each op of the group before it,
// w^2 (k-1) edges and no extra node (LogGOPSim would run a node as an event of its own). Groups whose boundary
// would take more than 4096 edges: (k-1) boundary nodes, each with w incoming edges, and every op after the first
// group requires its boundary -- 2 w (k-1) edges, never w^2.
TEST(GoalExport, FenceGroupsUseDirectEdgesUnlessTheyAreLarge) {
    auto count = [](const std::string& goal, const char* what) {
        size_t n = 0;
        for (size_t p = 0; (p = goal.find(what, p)) != std::string::npos; ++p) ++n;
        return n;
    };
    for (const int w : {4, 65}) {
        const int k = 5;
        Schedule s(Collective::barrier, 1, 0, 0, 0);
        RankBuilder b(s, 0);
        for (int g = 0; g < k; ++g) {
            b.fence();
            for (int i = 0; i < w; ++i) b.calc(1);
        }
        const std::string goal = to_goal(s, 8, 1e-9);
        if (w * w <= 4096) {
            EXPECT_EQ(count(goal, " requires "), static_cast<size_t>(w * w * (k - 1)));
            EXPECT_EQ(count(goal, ": calc 0\n"), 0u);
            EXPECT_NE(goal.find("l16: calc 8\nl16 requires l12\nl16 requires l13\nl16 requires l14\nl16 requires l15\n"),
                      std::string::npos) << goal;
        } else {
            EXPECT_EQ(count(goal, " requires "), static_cast<size_t>(2 * w * (k - 1)));
            EXPECT_EQ(count(goal, ": calc 0\n"), static_cast<size_t>(k - 1));
            EXPECT_NE(goal.find("f65: calc 0\nf65 requires l0\nf65 requires l1\n"), std::string::npos);
        }
    }
}

// A barrier op becomes a dissemination barrier of 0-byte messages on a tag above the schedule's (here 8 > 7),
// ceil(log2 P) rounds, each waiting for the one before; the op itself a calc 0 node after the last round that the
// next group requires.
TEST(GoalExport, BarrierIsADisseminationOfZeroByteMessages) {
    Schedule s(Collective::barrier, 3, 0, 0, 0);
    s.algorithm = "barrier/global";
    for (int r = 0; r < 3; ++r) {
        RankBuilder b(s, r);
        b.send((r + 1) % 3, 7, {});
        b.recv((r + 2) % 3, 7, {});
        b.fence();
        b.barrier();
    }
    const std::string goal = to_goal(s, 1);
    EXPECT_NE(goal.find("// collplan's global barrier ops are exported as dissemination barriers of 0-byte messages with tag 8"),
              std::string::npos) << goal;
    const std::string rank1 =
        "rank 1 {\n"
        "l0: send 0b to 2 tag 7\n"
        "l1: recv 0b from 0 tag 7\n"
        "b2_0s: send 0b to 2 tag 8\n"
        "b2_0s requires l0\n"
        "b2_0s requires l1\n"
        "b2_0r: recv 0b from 0 tag 8\n"
        "b2_0r requires l0\n"
        "b2_0r requires l1\n"
        "b2_1s: send 0b to 0 tag 8\n"
        "b2_1s requires b2_0s\n"
        "b2_1s requires b2_0r\n"
        "b2_1r: recv 0b from 2 tag 8\n"
        "b2_1r requires b2_0s\n"
        "b2_1r requires b2_0r\n"
        "l2: calc 0\n"
        "l2 requires b2_1s\n"
        "l2 requires b2_1r\n"
        "}\n";
    EXPECT_NE(goal.find(rank1), std::string::npos) << goal;
}

}  // namespace
}  // namespace collplan
