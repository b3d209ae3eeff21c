// Shared part of the n-way dissemination allreduce (allreduce/nway_dissemination and
// allreduce/nway_dissemination_plain): the arithmetic of the paper's last-round adaption and the generators.
// Also used by the cost model (nway_cost.hpp), which prices one rank's program.
//
// Notation (End, Yahyapour, Simmendinger, Alrutz, INFOCOMP 2015, sec. III-IV): P ranks, radix n, b = n + 1,
// k = ceil(log_b P) rounds. In round l = 1..k rank p receives from p - j b^(l-1), j = 1..n, and sends to
// p + i b^(l-1). After round l rank p holds the reduction of its b^l left-hand neighbours x_p, x_{p-1}, ...,
// its *window*; after k - 1 rounds the window has W = b^(k-1) contributions.
//
// A partial result a rank can send in the last round is a *prefix* of its window: the reduction of its first t
// contributions x_p, ..., x_{p-t+1}, which exists as an intermediate value when t is a data boundary (eq. 5):
// t = 1 (the initial data, l = 0) or t = (j+1) b^(l-1), l = 1..k-1, j = 1..n -- the numbers c b^e with
// c = 1..n, e = 0..k-2, and W itself. A rank keeps the prefixes it will need (a copy at the moment it is made).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collplan/schedule/schedule.hpp"

namespace collplan::nway {

// How the receiver "takes out" the part of its own window that the last round brings a second time.
enum class TakeOut : uint8_t {
    inverse,  // reduce with opflag::inverse (Schedule::needs_inverse): out = out (-) kept prefix
    keep,     // keep the rest of the window (everything after the boundary) in a second accumulator
    none,     // only plans that take nothing out (may need more last-round messages)
};
TakeOut parse_takeout(const std::string& text);  // throws Error naming the allowed values
const char* to_string(TakeOut t);

struct Geometry {
    int P = 1, n = 1;
    int rounds = 0;       // k = ceil(log_{n+1} P)  (0 for P = 1)
    int64_t window = 1;   // W = (n+1)^(k-1): contributions held after k - 1 rounds
};
Geometry geometry(int P, int n);

// Contributions in a rank's partial result up to its data boundary g_l[j] (eq. 5): 1 for l = 0 (j ignored),
// (j+1) (n+1)^(l-1) for l >= 1.
int64_t boundary_size(int n, int l, int j);

// The paper's 5-tuple (s, l_snd, l_rcv, j_snd, j_rcv) solving eq. (8), P = g^s_{l_snd}[j_snd] - g_{l_rcv}[j_rcv],
// i.e. P = s W + T - U with T = boundary_size(l_snd, j_snd), U = boundary_size(l_rcv, j_rcv). l_rcv = -1 is the
// base border g_B (U = 0; the remark after Theorem 1). j = 0 where l = 0 (g_0 has no index).
struct FiveTuple {
    int s = 0, l_snd = 0, l_rcv = 0, j_snd = 0, j_rcv = 0;
    int theorem_case() const;  // 1..5 of Theorem 1; 0 for the base border
    std::string str() const;   // "(s=2, l_snd=1, l_rcv=B, j_snd=1, j_rcv=-)"
};
std::vector<FiveTuple> five_tuples(int P, int n);  // every solution of eq. (8), U < W

// The last round: sender i (i = 0, 1, ...) sits at distance d_i = W + prefix[0] + ... + prefix[i-1] to the
// left and sends the prefix of prefix[i] contributions; the receiver takes out its own prefix of `takeout`
// contributions (0: nothing). Exact when W + sum(prefix) = P + takeout.
struct LastRound {
    std::vector<int64_t> prefix;
    int64_t takeout = 0;
    int64_t distance(size_t i, int64_t window) const;
};

struct Plan {
    Geometry geo;
    std::optional<FiveTuple> tuple;  // the 5-tuple the last round follows; empty: no 5-tuple exists (fallback)
    LastRound last;
    std::string describe() const;    // one line: tuple and case, or the fallback's decomposition
};

// The adapted last round for P, n. With a 5-tuple: the one giving the fewest messages, then no take-out, then
// the smallest take-out (Theorem 1 turns it into a LastRound). Without one (or with TakeOut::none and only
// tuples that take something out): the fallback -- P - W + U written as a sum of the fewest prefixes, U = 0
// preferred (a coin-change problem over the boundary sizes); it may need more than n last-round messages.
Plan make_plan(int P, int n, TakeOut t);
// The plan Theorem 1 gives for one particular 5-tuple of P, n (throws Error if it is not a solution of eq. 8).
// Where several tuples give the same last round (case 4 and the base border, case 3 and the base border with
// s - 1), make_plan keeps the first in five_tuples() order, which lists the base border first.
Plan plan_for_tuple(int P, int n, const FiveTuple& t);

// The generators. only_rank >= 0 builds a schedule that holds that rank's program only (the runtime, the model).
Schedule adapted_schedule(int P, int n, TakeOut t, int only_rank = Schedule::kAllRanks);
// t must allow the plan's take-out.
Schedule adapted_schedule(const Plan& plan, TakeOut t, int only_rank = Schedule::kAllRanks);
Schedule plain_schedule(int P, int n, int only_rank = Schedule::kAllRanks);
// forward=contributions: the dissemination rounds forward the individual contributions (Bruck's concatenation
// on n ports; tmp[d] holds x_{p-d}) and every rank reduces x_0 (+) x_1 (+) ... (+) x_{P-1} left to right:
// rank-consistent and exact for non-commutative operations. See nway_dissemination.cpp.
Schedule contributions_schedule(int P, int n, int only_rank = Schedule::kAllRanks);

}  // namespace collplan::nway
