// collplan._mpi_<abi>.DrsN: DRS_N's runtime protocol (src/collplan/runtime/mpi/drs_n.hpp; Wang, Lin, Ranka, sec. 4,
// Fig. 5) for Python. python/collplan/mpi.py keeps one object per communicator and seed (its window is created
// once, collectively) and runs it for the blocking alltoallv(..., algorithm="drs_n"), after its own checks of the
// counts; counts and displacements arrive in bytes, buffers as addresses.
#include <mpi.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "collplan/common/error.hpp"
#include "collplan/runtime/mpi/drs_n.hpp"

namespace nb = nanobind;
using namespace nb::literals;
using collplan::mpi::DrsN;
using collplan::mpi::DrsNStats;

namespace {

// The protocol and its communicator's size (the P entries every count vector must have).
struct Protocol {
    Protocol(MPI_Comm comm, uint64_t seed) : drs(comm, seed) {
        MPI_Comm_size(comm, &P);
        MPI_Comm_rank(comm, &rank);
    }
    DrsN drs;
    int P = 1, rank = 0;
};

// An mpi4py handle (MPI._handleof) as a communicator: a pointer (Open MPI) or an integer (MPICH).
template <class H = MPI_Comm>
H comm_of(uintptr_t h) {
    if constexpr (std::is_pointer_v<H>) return reinterpret_cast<H>(h);
    else return static_cast<H>(h);
}

std::vector<uint64_t> bytes_of(const std::vector<long long>& v, const char* what, int P) {
    if (v.size() != static_cast<size_t>(P))
        throw collplan::Error(std::string(what) + " has " + std::to_string(v.size()) + " entries (allowed: one per rank, " +
                              std::to_string(P) + ")");
    std::vector<uint64_t> out;
    for (long long x : v) {
        if (x < 0) throw collplan::Error(std::string(what) + " entry " + std::to_string(x) + " is negative (allowed: >= 0)");
        out.push_back(static_cast<uint64_t>(x));
    }
    return out;
}

}  // namespace

void bind_drs_n(nb::module_& m) {
    nb::class_<DrsNStats>(m, "DrsNStats")
        .def_ro("attempts", &DrsNStats::attempts, "compare-and-swap operations issued")
        .def_ro("busy", &DrsNStats::busy, "... that found the receiver busy")
        .def_ro("messages", &DrsNStats::messages, "messages sent to other ranks");
    nb::class_<Protocol>(m, "DrsN", "DRS_N's protocol on a communicator (collective: duplicates it, creates its window)")
        .def("__init__", [](Protocol* self, uintptr_t comm, uint64_t seed) { new (self) Protocol(comm_of(comm), seed); },
             "comm"_a, "seed"_a)
        .def("alltoallv", [](Protocol& p, uintptr_t send, const std::vector<long long>& sb,
                             const std::vector<long long>& sd, uintptr_t recv, const std::vector<long long>& rb,
                             const std::vector<long long>& rd) {
            const auto sb64 = bytes_of(sb, "send counts", p.P), sd64 = bytes_of(sd, "send displacements", p.P);
            const auto rb64 = bytes_of(rb, "recv counts", p.P), rd64 = bytes_of(rd, "recv displacements", p.P);
            if (sb64[p.rank] != rb64[p.rank])  // the protocol copies the message to itself by its send count
                throw collplan::Error("drs_n: rank " + std::to_string(p.rank) + " sends " + std::to_string(sb64[p.rank]) +
                                      " bytes to itself but receives " + std::to_string(rb64[p.rank]) +
                                      " (allowed: the same)");
            return p.drs.alltoallv(reinterpret_cast<const void*>(send), sb64.data(), sd64.data(),
                                   reinterpret_cast<void*>(recv), rb64.data(), rd64.data());
        }, "send"_a, "send_bytes"_a, "send_displs"_a, "recv"_a, "recv_bytes"_a, "recv_displs"_a,
           "One alltoallv by the protocol (collective; not in place): its attempts, busy receivers and messages.");
}
