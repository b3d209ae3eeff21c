// The n-way dissemination allreduce: last-round plans (5-tuple of Theorem 1, or the fallback) and the
// generators. See nway_common.hpp for the notation and nway_dissemination.cpp for the algorithm's header.
#include "collplan/algorithms/allreduce/nway_common.hpp"

#include <algorithm>
#include <limits>
#include <ranges>
#include <tuple>

namespace collplan::nway {

TakeOut parse_takeout(const std::string& text) {
    if (text == "inverse") return TakeOut::inverse;
    if (text == "keep") return TakeOut::keep;
    if (text == "none") return TakeOut::none;
    throw Error("takeout '" + text + "' is invalid (allowed: inverse, keep, none)");
}

const char* to_string(TakeOut t) {
    return t == TakeOut::inverse ? "inverse" : t == TakeOut::keep ? "keep" : "none";
}

Geometry geometry(int P, int n) {
    if (P < 1) throw Error("number of ranks " + std::to_string(P) + " is invalid (allowed: >= 1)");
    if (n < 1) throw Error("radix n=" + std::to_string(n) + " is invalid (allowed: >= 1)");
    Geometry g{P, n, 0, 1};
    int64_t reach = 1;
    while (reach < P) reach *= n + 1, ++g.rounds;
    g.window = g.rounds == 0 ? 1 : reach / (n + 1);
    return g;
}

int64_t boundary_size(int n, int l, int j) {
    if (l <= 0) return 1;
    int64_t x = j + 1;
    for (int i = 1; i < l; ++i) x *= n + 1;
    return x;
}

int FiveTuple::theorem_case() const {
    if (l_rcv < 0) return 0;
    if (l_rcv > 0) return l_snd > 0 ? 1 : 2;
    if (l_snd == 0) return 3;
    return l_snd == 1 ? 4 : 5;
}

std::string FiveTuple::str() const {
    return "(s=" + std::to_string(s) + ", l_snd=" + std::to_string(l_snd) + ", l_rcv=" +
           (l_rcv < 0 ? std::string("B") : std::to_string(l_rcv)) + ", j_snd=" + std::to_string(j_snd) +
           ", j_rcv=" + (l_rcv < 0 ? std::string("-") : std::to_string(j_rcv)) + ")";
}

int64_t LastRound::distance(size_t i, int64_t window) const {
    int64_t d = window;
    for (size_t q = 0; q < i; ++q) d += prefix[q];
    return d;
}

namespace {

// Boundaries (l, j) of a rank's first k - 1 rounds: (0, 0) and l = 1..k-1, j = 1..n.
std::vector<std::pair<int, int>> boundaries(const Geometry& g) {
    std::vector<std::pair<int, int>> out{{0, 0}};
    for (int l = 1; l < g.rounds; ++l)
        for (int j = 1; j <= g.n; ++j) out.emplace_back(l, j);
    return out;
}

// Theorem 1: what the last round sends and takes out for a 5-tuple.
LastRound from_tuple(const FiveTuple& t, const Geometry& g) {
    LastRound lr;
    lr.prefix.assign(static_cast<size_t>(t.s - 1), g.window);
    const int64_t T = boundary_size(g.n, t.l_snd, t.j_snd);
    switch (t.theorem_case()) {
        case 3: break;                                        // sender s is not needed
        case 4: lr.prefix.push_back(T - 1); break;            // up to g_1[j_snd - 1]; own data if j_snd = 1
        default:                                              // 0 (g_B), 1, 2, 5
            lr.prefix.push_back(T);
            lr.takeout = t.l_rcv < 0 ? 0 : boundary_size(g.n, t.l_rcv, t.j_rcv);
    }
    return lr;
}

// A last round is usable when it is exact, takes out less than a window, and no sender is the receiver.
bool usable(const LastRound& lr, const Geometry& g) {
    int64_t sum = g.window;
    for (int64_t t : lr.prefix) sum += t;
    if (sum != g.P + lr.takeout || lr.takeout >= g.window) return false;
    for (size_t i = 0; i < lr.prefix.size(); ++i)
        if (lr.distance(i, g.window) % g.P == 0) return false;
    return true;
}

auto plan_key(const LastRound& lr) { return std::make_tuple(lr.prefix.size(), lr.takeout > 0, lr.takeout); }

// Prefix sizes a sender can offer: c (n+1)^e (c = 1..n, e = 0..k-2) and W, descending.
std::vector<int64_t> prefix_sizes(const Geometry& g) {
    std::vector<int64_t> v{g.window};
    for (int64_t e = 1; e < g.window; e *= g.n + 1)
        for (int c = 1; c <= g.n; ++c) v.push_back(c * e);
    std::sort(v.begin(), v.end(), std::greater<>());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
}

// Fallback: P - W + U as a sum of the fewest prefixes (coin change), U = 0 preferred, then the smallest U.
LastRound fallback(const Geometry& g, TakeOut t) {
    const std::vector<int64_t> coins = prefix_sizes(g);
    const int64_t D = g.P - g.window, top = D + g.window;
    constexpr int kInf = std::numeric_limits<int>::max() / 2;
    std::vector<int> best(static_cast<size_t>(top + 1), kInf);
    std::vector<int64_t> pick(static_cast<size_t>(top + 1), 0);
    best[0] = 0;
    for (int64_t x = 1; x <= top; ++x)
        for (int64_t c : coins)  // descending: the largest coin wins ties
            if (c <= x && best[x - c] + 1 < best[x]) best[x] = best[x - c] + 1, pick[x] = c;
    std::vector<int64_t> takeouts{0};
    if (t != TakeOut::none)
        for (int64_t c : coins)
            if (c < g.window) takeouts.push_back(c);
    std::optional<LastRound> chosen;
    for (int64_t U : takeouts) {
        LastRound lr;
        lr.takeout = U;
        for (int64_t x = D + U; x > 0; x -= pick[x]) lr.prefix.push_back(pick[x]);
        std::sort(lr.prefix.begin(), lr.prefix.end(), std::greater<>());
        if (usable(lr, g) && (!chosen || plan_key(lr) < plan_key(*chosen))) chosen = lr;
    }
    if (!chosen) throw Error("n-way dissemination: no last round found for P=" + std::to_string(g.P));  // unreachable
    return *chosen;
}

}  // namespace

std::vector<FiveTuple> five_tuples(int P, int n) {
    const Geometry g = geometry(P, n);
    std::vector<FiveTuple> out;
    if (P == 1) return out;
    const auto bs = boundaries(g);
    for (int s = 1; s <= n; ++s)
        for (auto [ls, js] : bs) {
            const int64_t base = s * g.window + boundary_size(n, ls, js);
            if (base == P) out.push_back({s, ls, -1, js, 0});
            for (auto [lr, jr] : bs) {
                const int64_t U = boundary_size(n, lr, jr);
                if (base - U == P && U < g.window) out.push_back({s, ls, lr, js, jr});
            }
        }
    return out;
}

Plan make_plan(int P, int n, TakeOut t) {
    Plan plan{geometry(P, n), std::nullopt, {}};
    if (P == 1) return plan;
    for (const FiveTuple& ft : five_tuples(P, n)) {
        const LastRound lr = from_tuple(ft, plan.geo);
        if (!usable(lr, plan.geo) || (t == TakeOut::none && lr.takeout > 0)) continue;
        if (!plan.tuple || plan_key(lr) < plan_key(plan.last)) plan.tuple = ft, plan.last = lr;
    }
    if (!plan.tuple) plan.last = fallback(plan.geo, t);
    return plan;
}

Plan plan_for_tuple(int P, int n, const FiveTuple& t) {
    Plan plan{geometry(P, n), t, {}};
    plan.last = from_tuple(t, plan.geo);
    if (P == 1 || !usable(plan.last, plan.geo))
        throw Error("5-tuple " + t.str() + " gives no usable last round for P=" + std::to_string(P) + ", n=" +
                    std::to_string(n) + " (not a solution of eq. (8), or its sender p - s W is p itself)");
    return plan;
}

std::string Plan::describe() const {
    std::string s = "P=" + std::to_string(geo.P);
    s += " n=" + std::to_string(geo.n);
    s += ": k=" + std::to_string(geo.rounds);
    s += " rounds, W=" + std::to_string(geo.window);
    if (geo.P == 1) return s + "; nothing to do";
    if (tuple) {
        s += "; 5-tuple " + tuple->str();
        if (tuple->theorem_case() == 0) s += ", base border g_B";
        else s += ", case " + std::to_string(tuple->theorem_case());
    } else {
        s += "; no 5-tuple, fallback";
    }
    s += "; last round prefixes";
    for (int64_t t : last.prefix) {
        s += ' ';
        s += std::to_string(t);
    }
    s += ", take out ";
    s += std::to_string(last.takeout);
    return s;
}

// ------------------------------------------------------------------------------------------------ generators
namespace {

constexpr uint32_t kNone = ~0u;
const Segment kOut(Buf::out, 0, 1);
const Segment kIn(Buf::in, 0, 1);

Segment tmp(uint32_t block) { return Segment(Buf::tmp, block, 1); }

int peer(int r, int64_t offset, int P) { return static_cast<int>(((r + offset) % P + P) % P); }

// The ranks a generator builds: 0..P-1, or only_rank alone (Problem::build_ranks for the model's callers).
auto build_ranks(int P, int only_rank) {
    return only_rank == Schedule::kAllRanks ? std::views::iota(0, P) : std::views::iota(only_rank, only_rank + 1);
}

// tmp of the adapted schedule: receive slots, then the kept prefixes, then the rest accumulator (keep).
struct Layout {
    uint32_t slots = 0;
    std::vector<std::pair<int64_t, uint32_t>> kept;  // prefix size -> tmp block
    uint32_t rest = kNone;
    uint32_t blocks = 0;

    Layout(const Plan& plan, TakeOut t) {
        if (plan.geo.P == 1) return;
        slots = static_cast<uint32_t>(std::max<size_t>(static_cast<size_t>(plan.geo.n), plan.last.prefix.size()));
        blocks = slots;
        for (int64_t T : plan.last.prefix) keep(T, plan.geo.window);
        if (plan.last.takeout > 0 && t == TakeOut::inverse) keep(plan.last.takeout, plan.geo.window);
        if (plan.last.takeout > 0 && t == TakeOut::keep) rest = blocks++;
    }
    void keep(int64_t size, int64_t window) {
        if (size == 1 || size == window) return;  // in[0] and out[0] hold these
        for (const auto& kv : kept)
            if (kv.first == size) return;
        kept.emplace_back(size, blocks++);
    }
    Segment prefix(int64_t size, int64_t window) const {
        if (size == 1) return kIn;
        if (size == window) return kOut;
        for (const auto& [sz, blk] : kept)
            if (sz == size) return tmp(blk);
        throw Error("n-way dissemination: prefix of " + std::to_string(size) + " contributions was not kept");
    }
};

// Rounds 1..k-1: full windows to n peers; each received window is reduced into out in the order j = 1..n, and
// every prefix the last round needs is copied when it exists; with keep, the blocks after the take-out
// boundary also go into the rest accumulator.
void full_rounds(RankBuilder& b, int r, const Plan& plan, const Layout& L) {
    const Geometry& g = plan.geo;
    int64_t w = 1, step = 1;
    bool rest_started = false;
    for (int l = 1; l < g.rounds; ++l, step *= g.n + 1) {
        b.fence();
        for (int j = 1; j <= g.n; ++j) b.send(peer(r, j * step, g.P), 0, {kOut});
        for (int j = 1; j <= g.n; ++j) b.recv(peer(r, -j * step, g.P), 0, {tmp(static_cast<uint32_t>(j - 1))});
        for (int j = 1; j <= g.n; ++j) {
            const Segment got = tmp(static_cast<uint32_t>(j - 1));
            b.fence();
            b.reduce({got}, {kOut});
            if (L.rest != kNone && w >= plan.last.takeout) {  // the block lies after the take-out boundary
                if (rest_started) b.reduce({got}, {tmp(L.rest)});
                else b.copy({got}, {tmp(L.rest)});
                rest_started = true;
            }
            w += step;
            for (const auto& [size, blk] : L.kept)
                if (size == w) {
                    b.fence();
                    b.copy({kOut}, {tmp(blk)});
                }
        }
    }
}

void last_round(RankBuilder& b, int r, const Plan& plan, TakeOut t, const Layout& L) {
    const Geometry& g = plan.geo;
    const LastRound& lr = plan.last;
    b.fence();
    for (size_t i = 0; i < lr.prefix.size(); ++i)
        b.send(peer(r, lr.distance(i, g.window), g.P), 0, {L.prefix(lr.prefix[i], g.window)});
    for (size_t i = 0; i < lr.prefix.size(); ++i)
        b.recv(peer(r, -lr.distance(i, g.window), g.P), 0, {tmp(static_cast<uint32_t>(i))});
    if (lr.takeout > 0 && t == TakeOut::inverse) {
        b.fence();
        b.reduce({L.prefix(lr.takeout, g.window)}, {kOut}, {}, opflag::inverse);
    } else if (lr.takeout > 0) {
        b.fence();
        b.copy({tmp(L.rest)}, {kOut});
    }
    for (size_t i = 0; i < lr.prefix.size(); ++i) {
        b.fence();
        b.reduce({tmp(static_cast<uint32_t>(i))}, {kOut});
    }
}

// Distinct offsets j d mod P other than 0, j = 1..n (for P < (n+1)^l the plain algorithm's peers repeat).
std::vector<int64_t> plain_offsets(int P, int n, int64_t d) {
    std::vector<int64_t> offs;
    for (int j = 1; j <= n; ++j) {
        const int64_t off = j * d % P;
        if (off != 0 && std::find(offs.begin(), offs.end(), off) == offs.end()) offs.push_back(off);
    }
    return offs;
}

}  // namespace

Schedule adapted_schedule(int P, int n, TakeOut t, int only_rank) {
    return adapted_schedule(make_plan(P, n, t), t, only_rank);
}

Schedule adapted_schedule(const Plan& plan, TakeOut t, int only_rank) {
    const int P = plan.geo.P;
    if (t == TakeOut::none && plan.last.takeout > 0)
        throw Error("takeout=none cannot follow a plan that takes out " + std::to_string(plan.last.takeout) +
                    " contributions");
    const Layout L(plan, t);
    Schedule s(Collective::allreduce, P, 1, 1, L.blocks, only_rank);
    s.needs_commutative = true;  // windows wrap around P - 1 -> 0
    s.needs_inverse = t == TakeOut::inverse && plan.last.takeout > 0;
    for (int r : build_ranks(P, only_rank)) {
        RankBuilder b(s, r);
        b.copy({kIn}, {kOut});
        if (P == 1) continue;
        full_rounds(b, r, plan, L);
        last_round(b, r, plan, t, L);
    }
    return s;
}

Schedule plain_schedule(int P, int n, int only_rank) {
    const Geometry g = geometry(P, n);
    Schedule s(Collective::allreduce, P, 1, 1, P == 1 ? 0 : static_cast<uint32_t>(n), only_rank);
    s.needs_commutative = true;
    s.idempotent_only = true;
    for (int r : build_ranks(P, only_rank)) {
        RankBuilder b(s, r);
        b.copy({kIn}, {kOut});
        int64_t step = 1;
        for (int l = 1; l <= g.rounds; ++l, step *= n + 1) {
            const std::vector<int64_t> offs = plain_offsets(P, n, step);
            b.fence();
            for (int64_t off : offs) b.send(peer(r, off, P), 0, {kOut});
            for (size_t j = 0; j < offs.size(); ++j) b.recv(peer(r, -offs[j], P), 0, {tmp(static_cast<uint32_t>(j))});
            for (size_t j = 0; j < offs.size(); ++j) {
                b.fence();
                b.reduce({tmp(static_cast<uint32_t>(j))}, {kOut});
            }
        }
    }
    return s;
}

Schedule contributions_schedule(int P, int n, int only_rank) {
    const Geometry g = geometry(P, n);
    Schedule s(Collective::allreduce, P, 1, 1, static_cast<uint32_t>(P), only_rank);
    s.rank_consistent = true;
    for (int r : build_ranks(P, only_rank)) {
        RankBuilder b(s, r);
        b.copy({kIn}, {tmp(0)});
        int64_t held = 1;  // tmp[0 .. held) = x_r, x_{r-1}, ...
        for (int l = 1; l <= g.rounds; ++l, held *= n + 1) {
            // The message over distance d carries min(held, P - d) contributions: the receiver's d, d + 1, ...
            const auto part = [&](int64_t first, int64_t d) {
                return Segment(Buf::tmp, static_cast<uint32_t>(first), static_cast<uint32_t>(std::min(held, P - d)));
            };
            b.fence();
            for (int64_t d = held; d < P && d <= n * held; d += held) b.send(peer(r, d, P), 0, {part(0, d)});
            for (int64_t d = held; d < P && d <= n * held; d += held) b.recv(peer(r, -d, P), 0, {part(d, d)});
        }
        const auto x = [&](int q) { return tmp(static_cast<uint32_t>(peer(r, -q, P))); };  // x_q at distance r - q
        b.fence().copy({x(0)}, {kOut});
        for (int q = 1; q < P; ++q) b.fence().reduce({x(q)}, {kOut}, {}, opflag::reverse);
    }
    return s;
}

}  // namespace collplan::nway
