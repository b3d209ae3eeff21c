#include "collplan/algorithms/alltoallv/unstructured_common.hpp"

#include <algorithm>
#include <deque>

namespace collplan::alltoallv {

uint64_t Rng::next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t Rng::below(uint64_t n) {
    const uint64_t threshold = (0 - n) % n;  // 2^64 mod n: values below it would bias the modulo
    for (;;) {
        const uint64_t x = next();
        if (x >= threshold) return x % n;
    }
}

std::string check_matrix(std::span<const uint64_t> m, int P) {
    if (P < 1) return "number of ranks " + std::to_string(P) + " is invalid (allowed: >= 1)";
    const size_t want = static_cast<size_t>(P) * static_cast<size_t>(P);
    if (m.size() != want)
        return "communication matrix has " + std::to_string(m.size()) + " entries (allowed: P*P = " +
               std::to_string(want) + ")";
    return "";
}

MatrixStats matrix_stats(std::span<const uint64_t> m, int P) {
    if (std::string why = check_matrix(m, P); !why.empty()) throw Error(why);
    MatrixStats st;
    st.ranks = P;
    std::vector<int> sent(static_cast<size_t>(P), 0), recv(static_cast<size_t>(P), 0);
    std::vector<uint64_t> col_units(static_cast<size_t>(P), 0);
    st.min_len = ~uint64_t{0};
    for (int i = 0; i < P; ++i) {
        uint64_t row = 0;
        for (int j = 0; j < P; ++j) {
            const uint64_t u = m[static_cast<size_t>(i) * P + j];
            if (u == 0 || i == j) continue;
            ++sent[i], ++recv[j], ++st.messages;
            st.total_units += u, row += u, col_units[j] += u;
            st.max_len = std::max(st.max_len, u), st.min_len = std::min(st.min_len, u);
        }
        st.max_row_units = std::max(st.max_row_units, row);
    }
    if (st.messages == 0) st.min_len = 0;
    st.max_sent = *std::max_element(sent.begin(), sent.end());
    st.min_sent = *std::min_element(sent.begin(), sent.end());
    st.max_recv = *std::max_element(recv.begin(), recv.end());
    st.min_recv = *std::min_element(recv.begin(), recv.end());
    st.avg_sent = static_cast<double>(st.messages) / P;
    st.avg_len = st.messages ? static_cast<double>(st.total_units) / static_cast<double>(st.messages) : 0.0;
    st.degree = std::max(st.max_sent, st.max_recv);
    st.max_col_units = *std::max_element(col_units.begin(), col_units.end());
    return st;
}

namespace {

// A random perfect matching rows -> columns avoiding `taken` (P x P), as complete as possible: a greedy pass in
// random order, then one augmenting path (breadth first) per row the greedy pass left unmatched.
std::vector<int> random_matching(const std::vector<uint8_t>& taken, int P, Rng& rng) {
    std::vector<int> row_of(static_cast<size_t>(P), -1), col_of(static_cast<size_t>(P), -1), cols(static_cast<size_t>(P));
    std::vector<int> rows(static_cast<size_t>(P));
    for (int i = 0; i < P; ++i) rows[i] = cols[i] = i;
    rng.shuffle(rows);
    auto allowed = [&](int i, int j) { return !taken[static_cast<size_t>(i) * P + j]; };
    for (int i : rows) {
        rng.shuffle(cols);
        for (int j : cols)
            if (row_of[j] < 0 && allowed(i, j)) {
                row_of[j] = i, col_of[i] = j;
                break;
            }
    }
    for (int u : rows) {
        if (col_of[u] >= 0) continue;
        std::vector<int> parent_col(static_cast<size_t>(P), -2);  // per column: the row that reached it
        std::deque<int> queue{u};
        int free_col = -1;
        while (!queue.empty() && free_col < 0) {
            const int i = queue.front();
            queue.pop_front();
            for (int j = 0; j < P && free_col < 0; ++j) {
                if (!allowed(i, j) || parent_col[j] != -2) continue;
                parent_col[j] = i;
                if (row_of[j] < 0) free_col = j;
                else queue.push_back(row_of[j]);
            }
        }
        for (int j = free_col; j >= 0;) {  // flip the path
            const int i = parent_col[j], next = col_of[i];
            row_of[j] = i, col_of[i] = j;
            j = next;
        }
    }
    return col_of;
}

}  // namespace

// Union of d random matchings, each avoiding the diagonal and the entries already chosen: exactly d per row and
// column whenever the matchings exist (always, by Hall's theorem, for the regular graphs built here). For
// d > (P-1)/2 the complement is built the same way and removed from the full off-diagonal matrix.
std::vector<uint64_t> testset_uniform(int P, int d, uint64_t seed, uint64_t units) {
    if (P < 1) throw Error("test set: number of ranks " + std::to_string(P) + " is invalid (allowed: >= 1)");
    if (d < 0 || d > P - 1)
        throw Error("test set: density d=" + std::to_string(d) + " is invalid for P=" + std::to_string(P) +
                    " (allowed: 0.." + std::to_string(P - 1) + ")");
    if (units == 0) throw Error("test set: message size 0 units is invalid (allowed: >= 1)");
    const bool complement = 2 * d > P - 1;
    const int rounds = complement ? P - 1 - d : d;
    Rng rng(seed);
    std::vector<uint8_t> taken(static_cast<size_t>(P) * P, 0);
    for (int i = 0; i < P; ++i) taken[static_cast<size_t>(i) * P + i] = 1;
    for (int k = 0; k < rounds; ++k) {
        const std::vector<int> match = random_matching(taken, P, rng);
        for (int i = 0; i < P; ++i)
            if (match[i] >= 0) taken[static_cast<size_t>(i) * P + match[i]] = 1;
    }
    std::vector<uint64_t> m(static_cast<size_t>(P) * P, 0);
    for (int i = 0; i < P; ++i)
        for (int j = 0; j < P; ++j) {
            const bool chosen = taken[static_cast<size_t>(i) * P + j] && i != j;
            if (i != j && chosen != complement) m[static_cast<size_t>(i) * P + j] = units;
        }
    return m;
}

std::vector<uint64_t> testset_nonuniform(int P, int d, uint64_t max_units, uint64_t seed) {
    if (max_units == 0) throw Error("test set 2: max_units 0 is invalid (allowed: >= 1)");
    std::vector<uint64_t> m = testset_uniform(P, d, seed);
    Rng rng(seed ^ 0x5eed5eed5eed5eedull);
    for (uint64_t& u : m)
        if (u) u = 1 + rng.below(max_units);
    return m;
}

PhasePlan plan_of(const std::string& name, std::span<const uint64_t> m, int P, uint64_t seed, int cutoff_pct) {
    const std::string n = name.rfind("alltoallv/", 0) == 0 ? name.substr(10) : name;
    if (n == "linear_permutation") return plan_linear_permutation(m, P);
    if (n == "random_schedule") return plan_random(m, P, seed);
    if (n == "random_schedule_heap") return plan_random_heap(m, P, seed, cutoff_pct);
    if (n == "edge_coloring") return plan_edge_coloring(m, P);
    throw Error("unknown phased alltoallv algorithm '" + name +
                "' (allowed: linear_permutation, random_schedule, random_schedule_heap, edge_coloring)");
}

std::string check_plan(const PhasePlan& plan, std::span<const uint64_t> m, int P) {
    if (std::string why = check_matrix(m, P); !why.empty()) return why;
    std::vector<uint64_t> sum(m.size(), 0);
    std::vector<size_t> sends(static_cast<size_t>(P)), recvs(static_cast<size_t>(P));
    for (size_t t = 0; t < plan.phases.size(); ++t) {
        const std::string where = "phase " + std::to_string(t) + ": ";
        std::fill(sends.begin(), sends.end(), ~size_t{0});
        std::fill(recvs.begin(), recvs.end(), ~size_t{0});
        for (const Transfer& x : plan.phases[t]) {
            if (x.src < 0 || x.src >= P || x.dst < 0 || x.dst >= P || x.src == x.dst || x.units == 0)
                return where + "invalid transfer " + std::to_string(x.src) + "->" + std::to_string(x.dst);
            if (sends[x.src] == t || recvs[x.dst] == t)
                return where + "not a partial permutation at " + std::to_string(x.src) + "->" + std::to_string(x.dst);
            sends[x.src] = recvs[x.dst] = t;
            sum[static_cast<size_t>(x.src) * P + x.dst] += x.units;
        }
    }
    for (int i = 0; i < P; ++i)
        for (int j = 0; j < P; ++j) {
            const size_t k = static_cast<size_t>(i) * P + j;
            if (i != j && sum[k] != m[k])
                return "pair " + std::to_string(i) + "->" + std::to_string(j) + " gets " + std::to_string(sum[k]) +
                       " units, the matrix has " + std::to_string(m[k]);
        }
    return "";
}

void copy_diagonal(RankBuilder& b, const Problem& p, int r) {
    const uint64_t u = p.counts[static_cast<size_t>(r) * p.ranks + r];
    const auto ur = static_cast<uint32_t>(r);
    const std::vector<Segment> src{Segment(Buf::in, ur, 1)}, dst{Segment(Buf::out, ur, 1)};
    if (u > 0) b.copy(src, dst, {}, u);
}

Schedule phased_schedule(const Problem& p, const PhasePlan& plan) {
    const int P = p.ranks;
    Schedule s(Collective::alltoallv, P, static_cast<uint32_t>(P), static_cast<uint32_t>(P), 0, p.only_rank);
    const int first = *p.build_ranks().begin();  // rank r's builder is b[r - first]
    std::vector<RankBuilder> b;
    b.reserve(p.build_ranks().size());
    for (int r : p.build_ranks()) {
        b.emplace_back(s, r);
        copy_diagonal(b.back(), p, r);
    }
    std::vector<size_t> opened(b.size(), ~size_t{0});  // the last phase a rank opened a group for
    auto open = [&](int r, size_t t) -> RankBuilder& {
        const auto i = static_cast<size_t>(r - first);
        if (opened[i] != t) b[i].fence(), opened[i] = t;
        return b[i];
    };
    for (size_t t = 0; t < plan.phases.size(); ++t)
        for (const Transfer& x : plan.phases[t]) {
            const Segment into(Buf::out, static_cast<uint32_t>(x.src), 1), data(Buf::in, static_cast<uint32_t>(x.dst), 1);
            if (s.holds(x.dst)) open(x.dst, t).recv(x.src, 0, std::span(&into, 1), {}, x.units);
            if (s.holds(x.src)) open(x.src, t).send(x.dst, 0, std::span(&data, 1), {}, x.units);
        }
    return s;
}

// make_schedule checks the matrix's size before applies(); an empty matrix here is a question about the algorithm
// alone (`collplan estimate --algorithm all` asks before it passes the matrix), and every P is fine.
std::string applies_matrix(const Problem& p) { return p.counts.empty() ? "" : check_matrix(p.counts, p.ranks); }

ParamSpec seed_param() {
    return {"seed", ParamKind::integer, "1", 0, 2147483647, "random seed: the same seed gives the same schedule"};
}

}  // namespace collplan::alltoallv
