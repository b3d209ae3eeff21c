#include "collplan/verify/sweep.hpp"

#include "collplan/topology/families.hpp"

namespace collplan {
namespace {

// Allreduce: the operations the schedule claims (declared on it): max only when it is idempotent-only; else sum,
// and also a non-commutative operation unless it needs commutativity.
std::vector<std::string> operations(const Algorithm& a, const Problem& p) {
    if (!describe(a.collective).reduction) return {""};
    const Schedule s = a.generate(p);
    if (s.idempotent_only) return {"max"};
    if (s.needs_commutative) return {"sum"};
    return {"sum", "noncommutative"};
}

}  // namespace

std::vector<uint64_t> sweep_counts(int P) {
    std::vector<uint64_t> c(static_cast<size_t>(std::max(P, 0)));
    for (size_t i = 0; i < c.size(); ++i) c[i] = (i + 2) % 4;
    return c;
}

std::vector<SweepCase> sweep_cases(const Algorithm& a, int max_ranks, int* declined) {
    std::vector<SweepCase> out;
    int skipped = 0;
    const std::vector<std::string> families = a.default_topologies.empty() ? std::vector<std::string>{"full"} : a.default_topologies;
    const std::vector<std::map<std::string, std::string>> param_sets =
        a.sweep_params.empty() ? std::vector<std::map<std::string, std::string>>{{}} : a.sweep_params;
    const CollectiveInfo& info = describe(a.collective);
    if (info.counts == Counts::matrix) return out;  // needs a matrix: swept by its own tests
    for (int P = 1; P <= max_ranks; ++P) {
        std::vector<int> roots{0};
        if (info.rooted && P / 2 > 0) roots.push_back(P / 2);
        if (info.rooted && P - 1 > P / 2) roots.push_back(P - 1);
        const std::vector<uint64_t> counts = info.counts == Counts::per_rank ? sweep_counts(P) : std::vector<uint64_t>{};
        for (const auto& fam : families)
            for (const auto& spec : family_topologies(fam, P))
                for (const auto& raw : param_sets)
                    for (int root : roots) {
                        Problem p{a.collective, P, Topology::parse(spec), validate_params(a, raw), counts,
                                  Schedule::kAllRanks, root};
                        if (a.applies && !a.applies(p).empty()) {
                            ++skipped;
                            continue;
                        }
                        for (const std::string& op : operations(a, p)) out.push_back({a.name, P, spec, op, raw, root, counts});
                    }
    }
    if (declined) *declined = skipped;
    return out;
}

VerifyResult run_case(const SweepCase& c, const Job& job) {
    try {
        Schedule s = make_schedule(c.algorithm, c.ranks, Topology::parse(c.topology), c.params, Inputs(c.counts, c.root),
                                   Schedule::kAllRanks, job);
        return verify(s, c.op.empty() ? VerifyOptions{} : verify_options_for_op(c.op), job);
    } catch (const MemoryLimitError&) {
        throw;
    } catch (const Error& e) {
        return VerifyResult{false, "generator-error", e.what(), -1, -1, false, ""};  // nothing verified
    }
}

}  // namespace collplan
