// alltoall/multiphase -- Multiphase Complete Exchange (MCE): Direct Exchanges in subcubes of dimensions d_1..d_k.
//
// Source:        Nicol & Bokhari, "Optimal multiphase complete exchange on circuit-switched hypercube
//                architectures" (SIGMETRICS 1994), sec. 2.4 (after Bokhari, ICPP 1991), the optimal partition of
//                sec. 3; the shuffle layout is derived here (the paper describes it only as "permuting the
//                messages so that their order is the same as it would have been under Standard Exchange").
// Preconditions: P = 2^d (any d >= 0); any topology (hypercube:d is the paper's). partition = d_1,...,d_k with
//                sum d (any order; phase 1 spans the top d_1 rank bits), or auto: the optimal partition for blocks
//                of `size` bytes under `model` ("ipsc860" = the paper's constants, or a model spec).
// Rounds:        per phase i: optional global barrier (parameter barrier, the paper's Q(d)); 2^d_i - 1 steps, step
//                j: send the effective block (2^(d-d_i) blocks) to r XOR (j << start of the phase's bits) and
//                receive the partner's; then one copy of all 2^d blocks (the shuffle) that keeps the
//                Standard-Exchange invariant. Partition (d) is Direct Exchange plus a shuffle, 1,...,1 is Standard
//                Exchange.
// Cost:          sum over phases of (2^d_i - 1)(lambda + 2^(d-d_i) m tau + delta) + 2^d m rho + Q(d)   [eq. (2)]
// Memory:        tmp of 2P blocks (staging for the received effective blocks and the next list).
// Example:       d = 2, partition 1,1 = Standard Exchange; partition 2 on rank 1: barrier; send in[0] to 0, recv
//                tmp[0]; send in[3] to 3, recv tmp[3]; send in[2] to 2, recv tmp[2]; copy tmp[0],in[1],tmp[2+2]
//                -> out[0+4].
#include <numeric>
#include <vector>

#include "collplan/algorithms/alltoall/exchange_common.hpp"
#include "collplan/common/units.hpp"
#include "collplan/algorithms/alltoall/multiphase_opt.hpp"

namespace collplan {
namespace {

std::vector<int> partition_of(const Problem& p) {
    const int d = exchange::cube_dimension(p.ranks);
    if (p.params.is_auto("partition")) {
        const double size = static_cast<double>(parse_size_bytes(p.params.text("size")));
        return optimal_partition(circuit_costs(p.params.text("model"), d), d, size).partition;
    }
    return parse_partition(p.params.text("partition"));
}

std::string applies(const Problem& p) {
    std::string why = exchange::needs_power_of_two(p);
    if (!why.empty() || p.params.is_auto("partition")) return why;
    const std::vector<int> part = parse_partition(p.params.text("partition"));
    const int d = exchange::cube_dimension(p.ranks), sum = std::accumulate(part.begin(), part.end(), 0);
    if (sum != d)
        return "partition " + p.params.text("partition") + " sums to " + std::to_string(sum) + " but P=" +
               std::to_string(p.ranks) + " needs parts summing to d=" + std::to_string(d);
    return "";
}

Schedule generate(const Problem& p) {
    return exchange::multiphase(p, partition_of(p), p.params.integer("barrier") != 0);
}

// Every partition of the threshold table (under the query's model) that is optimal somewhere in the size range.
std::vector<ParamSet> candidates(const CandidateQuery& q) {
    const int d = exchange::cube_dimension(q.ranks);
    if (d < 0) return {};
    const std::vector<Threshold> table = threshold_table(circuit_costs(q.model, d), d);
    std::vector<ParamSet> out;
    for (size_t i = 0; i < table.size(); ++i) {
        const double until = i + 1 < table.size() ? table[i + 1].m_from_bytes : q.max_bytes + 1;
        if (table[i].m_from_bytes <= q.max_bytes && until > q.min_bytes)
            out.push_back({{"partition", d == 0 ? "auto" : format_partition(table[i].partition)}});
    }
    return out;
}

// verify --all: every composition (ordered partition) of d = 1..6, and auto at both ends of the paper's range.
std::vector<ParamSet> sweep_sets() {
    std::vector<ParamSet> out{{{"partition", "auto"}, {"size", "1B"}}, {{"partition", "auto"}, {"size", "400B"}},
                              {{"partition", "auto"}, {"barrier", "0"}}};
    for (int d = 1; d <= 6; ++d)
        for (int cuts = 0; cuts < (1 << (d - 1)); ++cuts) {
            std::vector<int> part{1};
            for (int bit = 0; bit < d - 1; ++bit) {
                if (cuts & (1 << bit)) part.push_back(1);
                else ++part.back();
            }
            out.push_back({{"partition", format_partition(part)}});
        }
    return out;
}

const Registration reg{{
    .name = "alltoall/multiphase",
    .collective = Collective::alltoall,
    .summary = "Multiphase Complete Exchange: Direct Exchanges in subcubes of a partition of d, with shuffles",
    .source = "Nicol & Bokhari (SIGMETRICS 1994) sec. 2.4 and 3; Bokhari (ICPP 1991)",
    .params = {{"partition", ParamKind::integer_list, "auto", 1, 30, "subcube dimensions d_1,...,d_k (sum d) or auto"},
               {"size", ParamKind::text, "32B", 0, 0, "block size that partition=auto optimises for"},
               {"model", ParamKind::text, "ipsc860", 0, 0, "model of partition=auto: ipsc860 or a model spec"},
               exchange::barrier_param()},
    .applies = applies,
    .generate = generate,
    .default_topologies = {"hypercube", "full"},
    .sweep_params = sweep_sets(),
    .candidates = candidates,
    .symmetry = xor_symmetry,
}};

}  // namespace
}  // namespace collplan
