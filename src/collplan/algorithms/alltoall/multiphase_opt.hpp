// The cost model of complete exchange on a circuit-switched hypercube and the optimal multiphase partition
// (Nicol & Bokhari, "Optimal multiphase complete exchange on circuit-switched hypercube architectures",
// SIGMETRICS 1994). Notation of the paper: d = cube dimension, m = bytes per logical message (block),
// lambda = start-up, tau = per byte, delta = circuit set-up (distance independent), rho = shuffle per byte,
// Q = Q(d) = one global barrier.
//
//   phase of dimension d_i (eq. 1):  (2^d_i - 1)(lambda + 2^(d - d_i) m tau + delta) + 2^d m rho + Q
//   multiphase, partition {d_i} (eq. 2): the sum of its phases
//   Direct Exchange (sec. 2.2):      (2^d - 1)(lambda + m tau + delta) + Q        (one phase, no shuffle)
//   Standard Exchange (sec. 2.3):    d (lambda + 2^(d-1) m tau + delta + 2^d m rho + Q)  (= partition 1,1,...,1)
//
// The optimal partition is an equi-partition (Theorem 1: |d_i - d_j| <= 1); optimal_partition() finds it with at
// most 2 (sqrt(d) + 1) evaluations of eq. 2 (sec. 3, Corollary 1 / Theorem 3, with the bounds derived below), and
// threshold_table() gives the lower hull of the d equi-partition cost lines, a list of (m_from, partition): the
// partition that is optimal for every m from m_from up to the next entry's m_from.
//
// The documented default model is the iPSC/860 of sec. 4 (ipsc860_costs); any collplan Model can be turned into
// these parameters with circuit_costs (exact for the circuit and Hockney models, which are linear in m).
#pragma once
#include <span>
#include <string>
#include <vector>

#include "collplan/model/model.hpp"

namespace collplan {

struct CircuitCosts {
    double lambda_s = 0;          // start-up per message
    double tau_s_per_byte = 0;    // transfer per byte
    double delta_s = 0;           // circuit set-up per message (the average over all paths)
    double rho_s_per_byte = 0;    // shuffle (local permutation) per byte
    double barrier_s = 0;         // Q(d): one global synchronisation of the whole cube
};

// The effective constants measured on the Intel iPSC/860 (sec. 4): lambda = 177.5 us, tau = 0.394 us/B,
// delta = 10.3 us * d, rho = 0.54 us/B, Q(d) = 150 us * d (lambda and delta include the zero-byte pairwise
// synchronisation message that precedes every exchange).
CircuitCosts ipsc860_costs(int d);
// lambda + delta = model.message(0, 1).recv_done, tau = model.per_byte_s(), rho = model.rho (shuffle = copy),
// Q = model.barrier_s(2^d); lambda carries the whole zero-byte time and delta is 0.
CircuitCosts circuit_costs(const Model& model, int d);
// "ipsc860" -> ipsc860_costs(d); otherwise a model spec for parse_model. Throws Error naming the bad spec.
CircuitCosts circuit_costs(const std::string& model_spec, int d);

double phase_cost_s(const CircuitCosts& c, int d, double d_i, double m);  // eq. (1); d_i may be fractional
double multiphase_cost_s(const CircuitCosts& c, int d, std::span<const int> partition, double m);  // eq. (2)
double direct_exchange_cost_s(const CircuitCosts& c, int d, double m);
double standard_exchange_cost_s(const CircuitCosts& c, int d, double m);

// The equi-partition of d into k parts (1 <= k <= d), non-decreasing: (d mod k) parts of ceil(d/k) last.
std::vector<int> equi_partition(int d, int k);

struct PartitionChoice {
    std::vector<int> partition;  // non-decreasing; empty for d = 0
    double cost_s = 0;
    int evaluations = 0;         // evaluations of eq. (2)
    double s_star = 0;           // the length above which two equal phases beat one (+inf: one phase always)
};

// The cheapest partition for block size m: searches only the equi-partitions whose smallest two parts sum to at
// least s* and whose largest part is at most floor(s*) + 1, and of each run of partitions with the same smallest
// part only the two ends (the cost is linear in the number of parts there), whichever is fewer.
PartitionChoice optimal_partition(const CircuitCosts& c, int d, double m);

// The length s* (Lemma 1): the root of p(s) - 2 p(s/2) in [max(2, d - log2((lambda+delta)/(m tau))), d];
// +inf when one phase is cheaper than two over that whole range.
double multiphase_s_star(const CircuitCosts& c, int d, double m);

struct Threshold {
    double m_from_bytes;
    std::vector<int> partition;
};
// The lower hull of the equi-partition cost lines over m >= 0, first entry m_from = 0.
std::vector<Threshold> threshold_table(const CircuitCosts& c, int d);
// The entry of `table` that covers m (binary search).
const std::vector<int>& partition_for(const std::vector<Threshold>& table, double m);

// Every partition of d into positive parts, each non-increasing (for brute-force checks; p(16) = 231).
std::vector<std::vector<int>> integer_partitions(int d);

// "2,3" or "2+3" -> {2, 3}; "auto" is not a partition. Throws Error naming the value.
std::vector<int> parse_partition(const std::string& text);
std::string format_partition(std::span<const int> partition);  // {2, 3} -> "2,3"

}  // namespace collplan
