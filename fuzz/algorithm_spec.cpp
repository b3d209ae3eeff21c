// Fuzz target: algorithm specs -- the COLLPLAN_ALLGATHER/... environment values of the PMPI library and the wisdom
// "algorithm" strings ("allreduce/ring", "alltoall/multiphase:partition=2+2"), parsed by parse_algorithm_spec; the
// parameters are then validated against the registry (validate_params: names, integers, ranges) and, when they
// pass, handed to the generator for a small P, as the PMPI library and the CLI do (make_schedule).
// Properties: errors are collplan::Error only; a parsed name is non-empty and holds no ':'; the canonical
// parameter text of a validated set validates again to the same text.
#include "collplan/algorithms/registry.hpp"
#include "collplan/runtime/wisdom.hpp"
#include "fuzz_common.hpp"

using namespace collplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string in = fuzz::text_of(data, size);
    std::pair<std::string, std::map<std::string, std::string>> spec;
    if (!fuzz::accepted([&] { spec = parse_algorithm_spec(in); })) return 0;
    FUZZ_CHECK(!spec.first.empty() && spec.first.find(':') == std::string::npos, in);
    const Algorithm* a = nullptr;
    if (!fuzz::accepted([&] { a = &Registry::get().find(spec.first); })) return 0;
    Params p;
    if (!fuzz::accepted([&] { p = validate_params(*a, spec.second); })) return 0;
    // canonical() is "k=v;k=v"; parse it back through the spec parser's k=v splitting (values hold no ';').
    std::map<std::string, std::string> raw;
    for (const ParamSpec& ps : a->params) raw[ps.name] = p.text(ps.name);
    Params p2;
    if (!fuzz::accepted([&] { p2 = validate_params(*a, raw); })) fuzz::die("validated parameters refused:", in);
    FUZZ_CHECK(p2.canonical() == p.canonical(), in);
    // Generate for a small P (1..24) on full:P, as the PMPI library would for such a communicator.
    const int P = 1 + static_cast<int>(fuzz::hash_of(in) % 24);
    std::vector<uint64_t> counts(counts_size(a->collective, P));
    for (size_t i = 0; i < counts.size(); ++i) counts[i] = (i * 7) % 5;
    const int root = describe(a->collective).rooted ? static_cast<int>(fuzz::hash_of(in) / 24 % static_cast<uint64_t>(P)) : 0;
    fuzz::accepted([&] { (void)make_schedule(a->name, P, Topology::full(P), spec.second, Inputs(counts, root)); });
    return 0;
}
