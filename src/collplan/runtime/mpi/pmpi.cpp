// libcollplan_pmpi.so -- drop-in replacement of MPI_Allgather, MPI_Alltoall, MPI_Alltoallv, MPI_Allreduce and
// MPI_Barrier for unmodified MPI programs (LD_PRELOAD), through the MPI profiling interface -- and their MPI-4
// large-count versions (MPI_Allreduce_c, ...) where the library declares them (MPICH; mpi4py calls those).
//
// Which algorithm: the environment variable COLLPLAN_<COLLECTIVE> (COLLPLAN_ALLGATHER=ring,
// COLLPLAN_ALLREDUCE=rabenseifner, COLLPLAN_BARRIER=dissemination:n=2, ...; "native" = the library's own), else
// the wisdom file named by COLLPLAN_WISDOM (runtime/wisdom.hpp), else the library's own collective (PMPI_*).
// The library's own collective also runs whenever collplan cannot do the call exactly: inter-communicators,
// datatypes with holes or a non-zero lower bound, different send and receive datatypes, counts that do not
// match, reductions the schedule cannot do (a non-commutative MPI_Op for a schedule that needs commutativity),
// algorithms that do not apply to the communicator size, and any error while planning. Never silently wrong:
// each of these is a fallback, not an approximation. COLLPLAN_VERBOSE=1 prints every distinct decision once
// (on rank 0 of the communicator): "collplan: MPI_Allreduce P=4 800B -> allreduce/ring" or "-> native (why)".
// COLLPLAN_NONCONTIG=pack|datatype selects how non-contiguous messages travel (default: automatic).
//
// Non-blocking collectives (MPI_Iallreduce, ...) are not intercepted: an MPI_Request the program could wait on
// would need a generalized request, and MPI gives those no progress hook.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>

#include "collplan/runtime/mpi/collectives.hpp"
#include "collplan/runtime/wisdom.hpp"

namespace collplan::mpi {
namespace {

// Configuration from the environment, read once (process-wide, as the interposed symbols are).
struct Config {
    bool verbose = false;
    Noncontig mode = Noncontig::automatic;
    std::map<Collective, std::string> env;  // COLLPLAN_<COLLECTIVE>
    Wisdom wisdom;
    std::string wisdom_error;
    std::set<std::string> logged;
    std::mutex mu;

    Config() {
        const char* v = std::getenv("COLLPLAN_VERBOSE");
        verbose = v && *v && std::string(v) != "0";
        const char* nc = std::getenv("COLLPLAN_NONCONTIG");
        if (nc && std::string(nc) == "pack") mode = Noncontig::pack;
        if (nc && std::string(nc) == "datatype") mode = Noncontig::datatype;
        const std::pair<Collective, const char*> vars[] = {
            {Collective::allgather, "COLLPLAN_ALLGATHER"}, {Collective::alltoall, "COLLPLAN_ALLTOALL"},
            {Collective::alltoallv, "COLLPLAN_ALLTOALLV"}, {Collective::allreduce, "COLLPLAN_ALLREDUCE"},
            {Collective::barrier, "COLLPLAN_BARRIER"}};
        for (const auto& [c, name] : vars)
            if (const char* s = std::getenv(name); s && *s) env[c] = s;
        if (const char* w = std::getenv("COLLPLAN_WISDOM"); w && *w) {
            try {
                wisdom = load_wisdom(w);
            } catch (const std::exception& e) {
                wisdom_error = e.what();
            }
        }
    }
};

Config& config() {
    static Config c;
    return c;
}

struct Decision {
    bool use = false;
    Choice choice;
    std::string why;  // fallback reason
};

Decision choose(Collective c, int P, uint64_t bytes, const std::string& op) {
    Config& cfg = config();
    Decision d;
    std::string spec;
    std::map<std::string, std::string> params;
    if (auto it = cfg.env.find(c); it != cfg.env.end()) {
        spec = it->second;
    } else if (const WisdomEntry* e = cfg.wisdom.lookup(c, P, bytes, op)) {
        spec = e->algorithm;
        params = e->params;
    } else {
        d.why = cfg.wisdom_error.empty() ? "no algorithm chosen" : cfg.wisdom_error;
        return d;
    }
    try {
        auto [name, p] = parse_algorithm_spec(spec);
        if (name == "native") return d.why = "native requested", d;
        params.insert(p.begin(), p.end());
        d.choice = Choice{name, params, cfg.mode};
        d.use = true;
    } catch (const std::exception& e) {
        d.why = e.what();
    }
    return d;
}

void log_once(MPI_Comm comm, const char* fn, int P, uint64_t bytes, const std::string& what) {
    Config& cfg = config();
    if (!cfg.verbose) return;
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    const std::string line = std::string(fn) + " P=" + std::to_string(P) + " " + std::to_string(bytes) + "B -> " + what;
    std::lock_guard<std::mutex> lock(cfg.mu);
    if (rank != 0 || !cfg.logged.insert(line).second) return;
    std::fprintf(stderr, "collplan: %s\n", line.c_str());
    std::fflush(stderr);
}

bool intra(MPI_Comm comm) {
    int inter = 1;
    return comm != MPI_COMM_NULL && PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter;
}

uint64_t type_bytes(MPI_Datatype t) {
    int s = 0;
    PMPI_Type_size(t, &s);
    return static_cast<uint64_t>(s);
}

// Same datatype on both sides (or send side in place) and no holes: the data can move as bytes.
std::string pair_unsupported(const void* send, MPI_Datatype st, MPI_Datatype rt) {
    if (send != MPI_IN_PLACE && st != rt) return "different send and receive datatypes";
    std::string why = datatype_unsupported(rt);
    if (why.empty() && send != MPI_IN_PLACE) why = datatype_unsupported(st);
    return why;
}

// Runs `make` (which builds a collplan request) or explains why not; logs the decision. `op`: the reduction's
// name for the wisdom lookup (allreduce only).
template <class Make>
bool run(MPI_Comm comm, const char* fn, Collective c, uint64_t bytes, const std::string& unsupported, Make make,
         const std::string& op = "") {
    if (!intra(comm)) return false;  // nothing to log on an inter-communicator without a rank 0 of its own
    int P = 1;
    PMPI_Comm_size(comm, &P);
    Decision d = choose(c, P, bytes, op);
    if (d.use && !unsupported.empty()) d.use = false, d.why = unsupported;
    if (d.use) {
        try {
            auto req = make(d.choice);
            req->start();
            req->wait();
            log_once(comm, fn, P, bytes, req->plan().schedule().algorithm);
            return true;
        } catch (const std::exception& e) {
            d.why = e.what();
        }
    }
    log_once(comm, fn, P, bytes, "native (" + d.why + ")");
    return false;
}

// The interceptors, generic over the count type (int, and MPI_Count for the MPI-4 "_c" functions that e.g.
// mpi4py calls when the library has them). `native` is the PMPI_ call with the original arguments.
template <class Count, class Native>
int allgather_like(const char* fn, Collective c, const void* sbuf, Count scount, MPI_Datatype st, void* rbuf,
                   Count rcount, MPI_Datatype rt, MPI_Comm comm, Native native) {
    const uint64_t bytes = static_cast<uint64_t>(rcount) * type_bytes(rt);
    std::string bad = pair_unsupported(sbuf, st, rt);
    if (bad.empty() && sbuf != MPI_IN_PLACE && static_cast<uint64_t>(scount) * type_bytes(st) != bytes)
        bad = "send and receive sizes differ";
    if (run(comm, fn, c, bytes, bad, [&](const Choice& ch) {
            return c == Collective::allgather ? allgather_init(sbuf, rbuf, bytes, comm, ch) : alltoall_init(sbuf, rbuf, bytes, comm, ch);
        }))
        return MPI_SUCCESS;
    return native();
}

template <class Count, class Displ, class Native>
int alltoallv_like(const char* fn, const void* sbuf, const Count* scounts, const Displ* sdispls, MPI_Datatype st,
                   void* rbuf, const Count* rcounts, const Displ* rdispls, MPI_Datatype rt, MPI_Comm comm, Native native) {
    if (!intra(comm)) return native();
    int P = 1;
    PMPI_Comm_size(comm, &P);
    MPI_Aint lb = 0, ext = 1;
    PMPI_Type_get_extent(rt, &lb, &ext);
    const auto e = static_cast<uint64_t>(ext);
    std::vector<uint64_t> sb(P), sd(P), rb(P), rd(P);
    for (int i = 0; i < P; ++i) {
        rb[i] = static_cast<uint64_t>(rcounts[i]) * e, rd[i] = static_cast<uint64_t>(rdispls[i]) * e;
        if (sbuf != MPI_IN_PLACE) sb[i] = static_cast<uint64_t>(scounts[i]) * e, sd[i] = static_cast<uint64_t>(sdispls[i]) * e;
    }
    if (run(comm, fn, Collective::alltoallv, 0, pair_unsupported(sbuf, st, rt), [&](const Choice& c) {
            return alltoallv_init(sbuf, sb.data(), sd.data(), rbuf, rb.data(), rd.data(), comm, c);
        }))
        return MPI_SUCCESS;
    return native();
}

template <class Count, class Native>
int allreduce_like(const char* fn, const void* sbuf, void* rbuf, Count count, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                   Native native) {
    const uint64_t bytes = static_cast<uint64_t>(count) * type_bytes(t);
    if (run(comm, fn, Collective::allreduce, bytes, datatype_unsupported(t), [&](const Choice& c) {
            return allreduce_init(sbuf, rbuf, static_cast<uint64_t>(count), t, op, comm, c);
        }, op_name(op)))
        return MPI_SUCCESS;
    return native();
}

}  // namespace
}  // namespace collplan::mpi

using namespace collplan::mpi;
using collplan::Collective;

extern "C" {

int MPI_Allgather(const void* sbuf, int scount, MPI_Datatype st, void* rbuf, int rcount, MPI_Datatype rt, MPI_Comm comm) {
    return allgather_like("MPI_Allgather", Collective::allgather, sbuf, scount, st, rbuf, rcount, rt, comm,
                          [&] { return PMPI_Allgather(sbuf, scount, st, rbuf, rcount, rt, comm); });
}

int MPI_Alltoall(const void* sbuf, int scount, MPI_Datatype st, void* rbuf, int rcount, MPI_Datatype rt, MPI_Comm comm) {
    return allgather_like("MPI_Alltoall", Collective::alltoall, sbuf, scount, st, rbuf, rcount, rt, comm,
                          [&] { return PMPI_Alltoall(sbuf, scount, st, rbuf, rcount, rt, comm); });
}

int MPI_Alltoallv(const void* sbuf, const int scounts[], const int sdispls[], MPI_Datatype st, void* rbuf,
                  const int rcounts[], const int rdispls[], MPI_Datatype rt, MPI_Comm comm) {
    return alltoallv_like("MPI_Alltoallv", sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, comm,
                          [&] { return PMPI_Alltoallv(sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, comm); });
}

int MPI_Allreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
    return allreduce_like("MPI_Allreduce", sbuf, rbuf, count, t, op, comm,
                          [&] { return PMPI_Allreduce(sbuf, rbuf, count, t, op, comm); });
}

int MPI_Barrier(MPI_Comm comm) {
    if (run(comm, "MPI_Barrier", Collective::barrier, 0, "", [&](const Choice& c) { return barrier_init(comm, c); }))
        return MPI_SUCCESS;
    return PMPI_Barrier(comm);
}

#if MPI_VERSION >= 4  // large-count variants (MPICH 4+; Open MPI 5.0 has none)
int MPI_Allgather_c(const void* sbuf, MPI_Count scount, MPI_Datatype st, void* rbuf, MPI_Count rcount, MPI_Datatype rt,
                    MPI_Comm comm) {
    return allgather_like("MPI_Allgather_c", Collective::allgather, sbuf, scount, st, rbuf, rcount, rt, comm,
                          [&] { return PMPI_Allgather_c(sbuf, scount, st, rbuf, rcount, rt, comm); });
}

int MPI_Alltoall_c(const void* sbuf, MPI_Count scount, MPI_Datatype st, void* rbuf, MPI_Count rcount, MPI_Datatype rt,
                   MPI_Comm comm) {
    return allgather_like("MPI_Alltoall_c", Collective::alltoall, sbuf, scount, st, rbuf, rcount, rt, comm,
                          [&] { return PMPI_Alltoall_c(sbuf, scount, st, rbuf, rcount, rt, comm); });
}

int MPI_Alltoallv_c(const void* sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[], MPI_Datatype st, void* rbuf,
                    const MPI_Count rcounts[], const MPI_Aint rdispls[], MPI_Datatype rt, MPI_Comm comm) {
    return alltoallv_like("MPI_Alltoallv_c", sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, comm,
                          [&] { return PMPI_Alltoallv_c(sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, comm); });
}

int MPI_Allreduce_c(const void* sbuf, void* rbuf, MPI_Count count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
    return allreduce_like("MPI_Allreduce_c", sbuf, rbuf, count, t, op, comm,
                          [&] { return PMPI_Allreduce_c(sbuf, rbuf, count, t, op, comm); });
}
#endif

}  // extern "C"
