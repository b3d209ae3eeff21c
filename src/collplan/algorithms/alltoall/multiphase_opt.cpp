// The multiphase complete-exchange cost model and the optimal partition (see multiphase_opt.hpp).
//
// Why the bounded search is exact (sec. 3 of the paper, re-derived where the text is unreadable). Write
// A = lambda + delta, B = m tau, K = 2^d B - A + 2^d m rho + Q. A phase of length x costs p(x) = A 2^x - B 2^(d-x) + K,
// so a partition costs A sum 2^x_i - B 2^d sum 2^-x_i + k K. Splitting a length s into x and s - x changes the cost
// monotonically in x on [0, s/2] (increasing when A/B < 2^(d-s), then one phase beats every split; decreasing
// otherwise, then the even split is the best split). Hence (Theorem 1) the optimum is an equi-partition, and with
// s* the root of D(s) = p(s) - 2 p(s/2) (D increases in s where it matters, Lemma 1):
//   - any two parts sum to at least s* (two parts shorter in total than s* are cheaper merged);
//   - the largest part is at most floor(s*) + 1 (a longer part is cheaper split evenly: for odd lengths the
//     discrete split costs a little more than the even one, which the + 1 absorbs).
// Among equi-partitions with the same smallest part q (k in (d/(q+1), d/q]) the cost is linear in k, so only the
// two ends of each such run need evaluating. The admissible q lie in [(s*-1)/2, floor(s*) + 1] and the admissible
// k in [d/(floor(s*)+1), 2d/(s*-1)]; evaluating the smaller of the two sets costs at most about
// min(s* + 2, d/s* + 2) <= 2 (sqrt(d) + 1). tests/cpp/test_multiphase_opt.cpp checks the result against brute force
// over every integer partition of d <= 16 for thousands of random parameter sets, and the evaluation count.
#include "collplan/algorithms/alltoall/multiphase_opt.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace collplan {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void check_d(int d) {
    if (d < 0 || d > 62) throw Error("cube dimension d=" + std::to_string(d) + " is invalid (allowed: 0..62)");
}

// Intercept (m = 0) and slope (per byte of m) of eq. (2) for a partition.
std::pair<double, double> line_of(const CircuitCosts& c, int d, std::span<const int> partition) {
    double a = 0, b = 0;
    for (int x : partition) {
        const double steps = std::exp2(x) - 1;
        a += steps * (c.lambda_s + c.delta_s) + c.barrier_s;
        b += steps * std::exp2(d - x) * c.tau_s_per_byte + std::exp2(d) * c.rho_s_per_byte;
    }
    return {a, b};
}

double d_function(const CircuitCosts& c, int d, double s, double m) {
    return phase_cost_s(c, d, s, m) - 2 * phase_cost_s(c, d, s / 2, m);
}

// The candidate numbers of parts k (see the comment at the top).
std::vector<int> candidate_parts(int d, double s_star) {
    std::vector<int> all;
    for (int k = 1; k <= d; ++k) {
        const int q = d / k, r = d % k, largest = q + (r > 0 ? 1 : 0);
        const int two_smallest = k - r >= 2 ? 2 * q : 2 * q + 1;
        if (k >= 2 && two_smallest < s_star - 1e-9) continue;
        if (largest > std::floor(s_star) + 1) continue;
        all.push_back(k);
    }
    if (all.empty())  // cannot happen by the argument above; keep the search total anyway
        for (int k = 1; k <= d; ++k) all.push_back(k);
    std::map<int, std::pair<int, int>> ends;  // smallest part q -> (min k, max k)
    for (int k : all) {
        auto [it, fresh] = ends.try_emplace(d / k, k, k);
        if (!fresh) it->second = {std::min(it->second.first, k), std::max(it->second.second, k)};
    }
    std::vector<int> by_ends;
    for (const auto& [q, e] : ends) {
        by_ends.push_back(e.first);
        if (e.second != e.first) by_ends.push_back(e.second);
    }
    return by_ends.size() < all.size() ? by_ends : all;
}

}  // namespace

CircuitCosts ipsc860_costs(int d) {
    check_d(d);
    return {177.5e-6, 0.394e-6, 10.3e-6 * d, 0.54e-6, 150e-6 * d};
}

CircuitCosts circuit_costs(const Model& model, int d) {
    check_d(d);
    return {model.message(0, 1).recv_done, model.per_byte_s(), 0.0, model.rho, model.barrier_s(1 << std::min(d, 30))};
}

CircuitCosts circuit_costs(const std::string& model_spec, int d) {
    if (model_spec == "ipsc860") return ipsc860_costs(d);
    return circuit_costs(*parse_model(model_spec), d);
}

double phase_cost_s(const CircuitCosts& c, int d, double d_i, double m) {
    return (std::exp2(d_i) - 1) * (c.lambda_s + std::exp2(d - d_i) * m * c.tau_s_per_byte + c.delta_s) +
           std::exp2(d) * m * c.rho_s_per_byte + c.barrier_s;
}

double multiphase_cost_s(const CircuitCosts& c, int d, std::span<const int> partition, double m) {
    double t = 0;
    for (int x : partition) t += phase_cost_s(c, d, x, m);
    return t;
}

double direct_exchange_cost_s(const CircuitCosts& c, int d, double m) {
    if (d == 0) return 0;
    return (std::exp2(d) - 1) * (c.lambda_s + m * c.tau_s_per_byte + c.delta_s) + c.barrier_s;
}

double standard_exchange_cost_s(const CircuitCosts& c, int d, double m) {
    return d * (c.lambda_s + std::exp2(d - 1) * m * c.tau_s_per_byte + c.delta_s + std::exp2(d) * m * c.rho_s_per_byte +
                c.barrier_s);
}

std::vector<int> equi_partition(int d, int k) {
    if (k < 1 || k > d) throw Error("equi-partition of d=" + std::to_string(d) + " into k=" + std::to_string(k) +
                                    " parts is invalid (allowed: 1 <= k <= d)");
    std::vector<int> out(static_cast<size_t>(k), d / k);
    for (int i = 0; i < d % k; ++i) ++out[static_cast<size_t>(k - 1 - i)];
    return out;
}

double multiphase_s_star(const CircuitCosts& c, int d, double m) {
    check_d(d);
    const double A = c.lambda_s + c.delta_s, B = m * c.tau_s_per_byte;
    double lo = 2;
    if (B > 0) lo = A > 0 ? std::max(2.0, d - std::log2(A / B)) : kInf;  // below it one phase wins (Theorem 1)
    if (lo > d) return kInf;
    if (d_function(c, d, lo, m) >= 0) return lo;
    if (d_function(c, d, d, m) < 0) return kInf;
    double hi = d;
    for (int it = 0; it < 200 && hi - lo > 1e-12; ++it) {
        const double mid = (lo + hi) / 2;
        (d_function(c, d, mid, m) < 0 ? lo : hi) = mid;
    }
    return hi;
}

PartitionChoice optimal_partition(const CircuitCosts& c, int d, double m) {
    check_d(d);
    if (!(m >= 0) || !std::isfinite(m)) throw Error("block size " + std::to_string(m) + " B is invalid (allowed: >= 0)");
    PartitionChoice best;
    if (d == 0) return best;
    best.s_star = multiphase_s_star(c, d, m);
    best.cost_s = kInf;
    for (int k : candidate_parts(d, best.s_star)) {
        const std::vector<int> part = equi_partition(d, k);
        const double t = multiphase_cost_s(c, d, part, m);
        ++best.evaluations;
        if (t < best.cost_s) best.cost_s = t, best.partition = part;
    }
    return best;
}

std::vector<Threshold> threshold_table(const CircuitCosts& c, int d) {
    check_d(d);
    if (d == 0) return {{0.0, {}}};
    std::vector<std::pair<double, double>> lines;
    for (int k = 1; k <= d; ++k) lines.push_back(line_of(c, d, equi_partition(d, k)));
    size_t cur = 0;
    for (size_t k = 1; k < lines.size(); ++k)
        if (lines[k] < lines[cur]) cur = k;  // lowest intercept, then lowest slope
    std::vector<Threshold> table{{0.0, equi_partition(d, static_cast<int>(cur) + 1)}};
    double at = 0;
    while (true) {
        size_t next = lines.size();
        double when = kInf;
        for (size_t j = 0; j < lines.size(); ++j) {
            if (lines[j].second >= lines[cur].second) continue;
            const double x = std::max(at, (lines[j].first - lines[cur].first) / (lines[cur].second - lines[j].second));
            if (x < when || (x == when && lines[j].second < lines[next].second)) when = x, next = j;
        }
        if (next == lines.size()) break;
        std::vector<int> part = equi_partition(d, static_cast<int>(next) + 1);
        if (when == table.back().m_from_bytes) table.back().partition = std::move(part);
        else table.push_back({when, std::move(part)});
        cur = next;
        at = when;
    }
    return table;
}

const std::vector<int>& partition_for(const std::vector<Threshold>& table, double m) {
    if (table.empty()) throw Error("partition_for: empty threshold table (allowed: the output of threshold_table)");
    auto it = std::upper_bound(table.begin(), table.end(), m,
                               [](double v, const Threshold& t) { return v < t.m_from_bytes; });
    return it == table.begin() ? table.front().partition : std::prev(it)->partition;
}

namespace {
void partitions_rec(int left, int max_part, std::vector<int>& cur, std::vector<std::vector<int>>& out) {
    if (left == 0) {
        out.push_back(cur);
        return;
    }
    for (int p = std::min(left, max_part); p >= 1; --p) {
        cur.push_back(p);
        partitions_rec(left - p, p, cur, out);
        cur.pop_back();
    }
}
}  // namespace

std::vector<std::vector<int>> integer_partitions(int d) {
    if (d < 0 || d > 40) throw Error("integer_partitions of " + std::to_string(d) + " is invalid (allowed: 0..40)");
    std::vector<std::vector<int>> out;
    std::vector<int> cur;
    partitions_rec(d, d, cur, out);
    return out;
}

std::vector<int> parse_partition(const std::string& text) {
    std::vector<int> out;
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find_first_of(",+", start);
        if (end == std::string::npos) end = text.size();
        const std::string item = text.substr(start, end - start);
        const bool digits = !item.empty() && item.size() <= 2 &&
                            std::all_of(item.begin(), item.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
        if (!digits || std::stoi(item) < 1)
            throw Error("partition '" + text + "' is invalid (allowed: positive integers separated by commas, e.g. 2,3)");
        out.push_back(std::stoi(item));
        start = end + 1;
    }
    return out;
}

std::string format_partition(std::span<const int> partition) {
    std::string s;
    for (int x : partition) {
        if (!s.empty()) s += ',';
        s += std::to_string(x);
    }
    return s;
}

}  // namespace collplan
