// Lists the algorithm variants of one collective for the conformance runner (run_conformance.py): one
// `name:k=v,...` spec -- the value of COLLPLAN_<COLLECTIVE> -- per entry of each registered algorithm's
// sweep_params (the algorithm's defaults alone when it declares none).
//
//   list_algorithms <collective>                 one spec per line
//   list_algorithms <collective> --ranks 1-8     "spec<TAB>P<TAB>status" per spec and P, status one of
//       ok                        the algorithm applies to P ranks (as the runtime decides it: full:P, else the
//                                 first topology of its default families that applies)
//       ok needs_commutative      reductions: the schedule is correct for commutative operations only (rooted
//                                 collectives: at some root)
//       ok idempotent_only        allreduce: the schedule is correct for idempotent operations only
//       n/a <reason>              the algorithm does not apply to P ranks (the library must fall back)
//   and, for an applicable one, a fourth column: a 64-bit hash of the schedule generated for P (its text form
//   without the algorithm, params and topology lines; for a rooted collective the hash of the schedules at every
//   root 0..P-1, as the programs call it at several roots) -- specs with equal hashes at one P run the identical
//   schedules. "-" for the collectives whose schedules depend on the call's counts (alltoallv's matrix,
//   allgatherv's and reduce_scatter's per-rank counts): those are never merged.
//
// Exit code 2 and one line on stderr for a bad argument.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "collplan/algorithms/registry.hpp"
#include "collplan/schedule/collective.hpp"
#include "collplan/schedule/text.hpp"
#include "collplan/topology/families.hpp"

using namespace collplan;

namespace {

std::string spec_of(const Algorithm& a, const std::map<std::string, std::string>& params) {
    std::string s = a.name.substr(a.name.find('/') + 1);
    bool first = true;
    for (const auto& [k, v] : params) s += (first ? ":" : ",") + k + "=" + v, first = false;
    return s;
}

// FNV-1a over the schedule's text form, without the lines that only name it.
std::string schedule_hash(const Schedule& s) {
    uint64_t h = 1469598103934665603ull;
    const std::string text = to_text(s);
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string_view line(text.data() + start, end - start);
        if (!line.starts_with("algorithm ") && !line.starts_with("params ") && !line.starts_with("topology "))
            for (char c : line) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
        h = (h ^ '\n') * 1099511628211ull;
        start = end + 1;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

// As the runtime picks the topology (runtime/mpi/collectives.cpp, pick_topology): full:P, then the topologies of the
// algorithm's default families, the first one the algorithm applies to -- here every shape of a grid family
// (topology/families.hpp, family_topologies), where the runtime tries MPI_Dims_create's balanced grid alone (and
// its transpose): no MPI here. Up to P = 8, where the programs run, the two are the same (every 2-D grid of such a
// P is the balanced one or its transpose; 2x2x2 is the only 3-D one).
std::string status(const Algorithm& a, const std::map<std::string, std::string>& raw, int P) {
    try {
        const Params valid = validate_params(a, raw);
        std::vector<std::string> specs{"full:" + std::to_string(P)};
        for (const std::string& fam : a.default_topologies)
            for (const std::string& t : family_topologies(fam, P)) specs.push_back(t);
        std::string first_reason;
        for (const std::string& t : specs) {
            // Counts: a stand-in of ones (the call's counts decide the real schedule: no hash, never merged).
            const CollectiveInfo& info = describe(a.collective);
            const std::vector<uint64_t> counts(counts_size(a.collective, P), 1);
            const Topology topo = Topology::parse(t);
            // Rooted collectives: the schedule of every root (the programs call them at several roots); the
            // algorithm applies where it applies at every root, and its flags are those of any root.
            const int roots = info.rooted ? P : 1;
            std::string why;
            for (int root = 0; root < roots && why.empty(); ++root) {
                Problem p{a.collective, P, topo, valid, counts};
                p.root = root;
                why = a.applies ? a.applies(p) : "";
                if (!why.empty() && info.rooted) why += " (root " + std::to_string(root) + ")";
            }
            if (!why.empty()) {
                if (first_reason.empty()) first_reason = why;
                continue;
            }
            if (a.collective == Collective::alltoallv) return "ok\t-";
            bool idempotent_only = false, needs_commutative = false;
            uint64_t h = 1469598103934665603ull;
            for (int root = 0; root < roots; ++root) {
                Problem p{a.collective, P, topo, valid, counts};
                p.root = root;
                const Schedule s = a.generate(p);
                idempotent_only |= s.idempotent_only;
                needs_commutative |= s.needs_commutative;
                for (char c : schedule_hash(s)) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
            }
            char buf[17];
            std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
            const std::string hash = info.counts != Counts::none ? "\t-" : "\t" + std::string(buf);
            if (idempotent_only) return "ok idempotent_only" + hash;
            if (needs_commutative) return "ok needs_commutative" + hash;
            return "ok" + hash;
        }
        return "n/a " + first_reason;
    } catch (const std::exception& e) {
        return std::string("n/a ") + e.what();
    }
}

int usage(const char* why) {
    std::fprintf(stderr, "list_algorithms: %s (usage: list_algorithms <collective> [--ranks LO-HI])\n", why);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2 && argc != 4) return usage("wrong number of arguments");
    Collective c;
    try {
        c = parse_collective(argv[1]);
    } catch (const std::exception& e) {
        return usage(e.what());
    }
    int lo = 0, hi = -1;
    if (argc == 4) {
        if (std::string(argv[2]) != "--ranks") return usage("unknown option");
        if (std::sscanf(argv[3], "%d-%d", &lo, &hi) != 2 || lo < 1 || hi < lo) return usage("--ranks wants LO-HI, 1 <= LO <= HI");
    }
    for (const Algorithm* a : Registry::get().for_collective(c)) {
        std::vector<std::map<std::string, std::string>> sets = a->sweep_params;
        if (sets.empty()) sets.push_back({});
        for (const auto& raw : sets) {
            const std::string spec = spec_of(*a, raw);
            if (hi < lo) {
                std::printf("%s\n", spec.c_str());
                continue;
            }
            for (int P = lo; P <= hi; ++P) {
                std::string st = status(*a, raw, P);
                for (char& ch : st)
                    if (ch == '\n' || (ch == '\t' && st.starts_with("n/a"))) ch = ' ';
                std::printf("%s\t%d\t%s\n", spec.c_str(), P, st.c_str());
            }
        }
    }
    return 0;
}
