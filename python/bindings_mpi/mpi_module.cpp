// collplan._mpi_<abi>: the MPI runtime for Python, built once per MPI implementation (cmake/mpi_runtime.cmake).
// A thin layer: communicators, datatypes and operations arrive as mpi4py handles (MPI._handleof), buffers as
// addresses; python/collplan/mpi.py turns mpi4py objects and NumPy arrays into these and keeps them alive.
#include <mpi.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <type_traits>

#include "collplan/runtime/mpi/calibrate.hpp"
#include "collplan/runtime/mpi/check.hpp"
#include "collplan/runtime/mpi/collectives.hpp"
#include "collplan/runtime/mpi/datatype.hpp"
#include "collplan/runtime/mpi/timing.hpp"

namespace nb = nanobind;
using namespace nb::literals;
using namespace collplan;
using namespace collplan::mpi;

namespace {

template <class H>
H from_handle(uintptr_t h) {
    if constexpr (std::is_pointer_v<H>) return reinterpret_cast<H>(h);
    else return static_cast<H>(h);
}

MPI_Comm comm_of(uintptr_t h) { return from_handle<MPI_Comm>(h); }
const void* send_of(std::optional<uintptr_t> p) {
    return p ? reinterpret_cast<const void*>(*p) : MPI_IN_PLACE;
}
void* ptr(uintptr_t p) { return reinterpret_cast<void*>(p); }

Noncontig parse_mode(const std::string& m) {
    if (m == "auto") return Noncontig::automatic;
    if (m == "pack") return Noncontig::pack;
    if (m == "datatype") return Noncontig::datatype;
    throw Error("noncontig mode '" + m + "' is unknown (allowed: auto, pack, datatype)");
}

Choice choice(const std::string& algorithm, const std::map<std::string, std::string>& params, const std::string& mode) {
    return Choice{algorithm, params, parse_mode(mode)};
}

std::vector<uint64_t> u64(const std::vector<long long>& v, const char* what) {
    std::vector<uint64_t> out;
    for (long long x : v) {
        if (x < 0) throw Error(std::string(what) + " entry " + std::to_string(x) + " is negative (allowed: >= 0)");
        out.push_back(static_cast<uint64_t>(x));
    }
    return out;
}

// A buffer-protocol view of a Python object (C-contiguous; writable when asked), released with the view.
class View {
public:
    // False (the Python error cleared) when the object has no such buffer.
    bool get(nb::handle obj, bool writable) {
        if (PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0)) != 0) {
            PyErr_Clear();
            return false;
        }
        held_ = true;
        return true;
    }
    void* data() const { return view_.buf; }
    ~View() {
        if (held_) PyBuffer_Release(&view_);
    }

private:
    Py_buffer view_{};
    bool held_ = false;
};

// The blocking call of a cached request (python/collplan/mpi.py): bind `send` (None: in place) and `recv` (None:
// barrier), start, wait. False, before anything runs, when a buffer is not C-contiguous (recv: or not writable).
bool run(Request& r, nb::handle send, nb::handle recv) {
    View in, out;
    if (!recv.is_none()) {
        if (!out.get(recv, true) || (!send.is_none() && !in.get(send, false))) return false;
        r.bind(send.is_none() ? MPI_IN_PLACE : in.data(), out.data());
    }
    r.start();
    r.wait();
    return true;
}

// True when every rank of `comm` passes the same id >= 0 (collective).
bool agree(uintptr_t comm, int64_t id) {
    if (comm_of(comm) == MPI_COMM_NULL) return false;  // the call that follows says what is wrong
    int64_t v[2] = {id, -id};
    check(PMPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT64_T, MPI_MIN, comm_of(comm)), "MPI_Allreduce");
    return v[0] >= 0 && v[0] == -v[1];
}

nb::dict stats(uintptr_t comm) {
    const CacheStats s = cache_stats(comm_of(comm));
    nb::dict d;
    d["schedules"] = s.schedules;
    d["plans"] = s.plans;
    d["hits"] = s.hits;
    d["misses"] = s.misses;
    return d;
}

void bind_request(nb::module_& m) {
    nb::class_<Request>(m, "Request")
        .def("start", &Request::start, "Start (or restart) the collective.")
        .def("test", &Request::test, "Advance without blocking; True when this rank's part is complete.")
        .def("wait", &Request::wait, "Block until this rank's part is complete.")
        .def("run", &run, "send"_a.none(), "recv"_a.none(),
             "Bind these buffers, start and wait; False (nothing run) when one is not C-contiguous or recv not writable.")
        .def_prop_ro("active", &Request::active)
        .def_prop_ro("algorithm", [](const Request& r) { return r.plan().schedule().algorithm; })
        .def_prop_ro("params", [](const Request& r) { return r.plan().schedule().params; })
        .def_prop_ro("topology", [](const Request& r) { return r.plan().schedule().topology; })
        .def_prop_ro("plan_was_cached", &Request::plan_was_cached)
        .def_prop_ro("datatypes", [](const Request& r) { return r.plan().datatypes(); })
        .def_prop_ro("stage_bytes", [](const Request& r) { return r.plan().stage_bytes(); });
}

void bind_collectives(nb::module_& m) {
    m.def("allgather_init", [](uintptr_t comm, std::optional<uintptr_t> send, uintptr_t recv, uint64_t bytes,
                               const std::string& alg, const std::map<std::string, std::string>& params, const std::string& mode) {
        return allgather_init(send_of(send), ptr(recv), bytes, comm_of(comm), choice(alg, params, mode));
    }, "comm"_a, "send"_a.none(), "recv"_a, "bytes"_a, "algorithm"_a, "params"_a, "mode"_a);
    m.def("alltoall_init", [](uintptr_t comm, std::optional<uintptr_t> send, uintptr_t recv, uint64_t bytes,
                              const std::string& alg, const std::map<std::string, std::string>& params, const std::string& mode) {
        return alltoall_init(send_of(send), ptr(recv), bytes, comm_of(comm), choice(alg, params, mode));
    }, "comm"_a, "send"_a.none(), "recv"_a, "bytes"_a, "algorithm"_a, "params"_a, "mode"_a);
    m.def("alltoallv_init", [](uintptr_t comm, std::optional<uintptr_t> send, const std::vector<long long>& sb,
                               const std::vector<long long>& sd, uintptr_t recv, const std::vector<long long>& rb,
                               const std::vector<long long>& rd, const std::string& alg,
                               const std::map<std::string, std::string>& params, const std::string& mode) {
        const auto sb64 = u64(sb, "send count"), sd64 = u64(sd, "send displacement");
        const auto rb64 = u64(rb, "recv count"), rd64 = u64(rd, "recv displacement");
        return alltoallv_init(send_of(send), sb64.data(), sd64.data(), ptr(recv), rb64.data(), rd64.data(),
                              comm_of(comm), choice(alg, params, mode));
    }, "comm"_a, "send"_a.none(), "send_bytes"_a, "send_displs"_a, "recv"_a, "recv_bytes"_a, "recv_displs"_a,
       "algorithm"_a, "params"_a, "mode"_a);
    m.def("allreduce_init", [](uintptr_t comm, std::optional<uintptr_t> send, uintptr_t recv, uint64_t count,
                               uintptr_t datatype, uintptr_t op, const std::string& alg,
                               const std::map<std::string, std::string>& params, const std::string& mode) {
        return allreduce_init(send_of(send), ptr(recv), count, from_handle<MPI_Datatype>(datatype),
                              from_handle<MPI_Op>(op), comm_of(comm), choice(alg, params, mode));
    }, "comm"_a, "send"_a.none(), "recv"_a, "count"_a, "datatype"_a, "op"_a, "algorithm"_a, "params"_a, "mode"_a);
    m.def("barrier_init", [](uintptr_t comm, const std::string& alg, const std::map<std::string, std::string>& params,
                             const std::string& mode) { return barrier_init(comm_of(comm), choice(alg, params, mode)); },
          "comm"_a, "algorithm"_a, "params"_a, "mode"_a);
    m.def("cache_stats", &stats, "comm"_a);
    m.def("agree", &agree, "comm"_a, "id"_a, "True when every rank passes the same id >= 0 (collective).");
    m.def("applies", [](const std::string& collective, const std::string& alg, int ranks,
                        const std::map<std::string, std::string>& params) -> std::string {
        const Collective c = parse_collective(collective);
        const size_t P = static_cast<size_t>(ranks);
        try {
            runtime_schedule(c, ranks, Choice{alg, params, Noncontig::automatic},
                             c == Collective::alltoallv ? std::vector<uint64_t>(P * P, 1) : std::vector<uint64_t>{});
        } catch (const Error& e) {
            return e.what();
        }
        return "";
    }, "collective"_a, "algorithm"_a, "ranks"_a, "params"_a);
}

// Timing for the planner's measure evaluator and `collplan run` (runtime/mpi/timing.hpp).
void bind_timing(nb::module_& m) {
    m.def("time_request", [](uintptr_t comm, Request& r, int iters, int warmup, int reps) {
        return time_calls(comm_of(comm), [&] { r.start(); r.wait(); }, iters, warmup, reps);
    }, "comm"_a, "request"_a, "iters"_a, "warmup"_a, "reps"_a,
       "Slowest-rank mean seconds per start()+wait() of each repetition (collective).");
    m.def("time_native", [](uintptr_t comm, const std::string& collective, std::optional<uintptr_t> send, uintptr_t recv,
                            uint64_t bytes, uint64_t count, uintptr_t datatype, uintptr_t op, int iters, int warmup,
                            int reps) {
        const Collective c = parse_collective(collective);
        const MPI_Datatype t = from_handle<MPI_Datatype>(datatype);
        const MPI_Op o = from_handle<MPI_Op>(op);
        return time_calls(comm_of(comm), [&] { native_collective(c, send_of(send), ptr(recv), bytes, count, t, o, comm_of(comm)); },
                          iters, warmup, reps);
    }, "comm"_a, "collective"_a, "send"_a.none(), "recv"_a, "bytes"_a, "count"_a, "datatype"_a, "op"_a, "iters"_a,
       "warmup"_a, "reps"_a, "The same for the MPI library's own collective.");
    m.def("op_name", [](uintptr_t op) { return op_name(from_handle<MPI_Op>(op)); }, "op"_a);
}

// The measurement kernels of `collplan calibrate` (calibrate.hpp): times in seconds, as lists.
Repeat rep(int samples, int batch, int warmup) { return Repeat{samples, batch, warmup}; }

void bind_calibrate(nb::module_& m) {
    nb::module_ c = m.def_submodule("calibrate", "measurement kernels of collplan calibrate");
    c.def("pingpong", [](uintptr_t comm, int peer, uint64_t bytes, int samples, int batch, int warmup) {
        return pingpong(comm_of(comm), peer, bytes, rep(samples, batch, warmup));
    }, "comm"_a, "peer"_a, "bytes"_a, "samples"_a, "batch"_a = 1, "warmup"_a = 10);
    c.def("burst", [](uintptr_t comm, int peer, uint64_t bytes, int count, int samples, int batch, int warmup) {
        return burst(comm_of(comm), peer, bytes, count, rep(samples, batch, warmup));
    }, "comm"_a, "peer"_a, "bytes"_a, "count"_a, "samples"_a, "batch"_a = 1, "warmup"_a = 3);
    c.def("overhead", [](uintptr_t comm, int peer, uint64_t bytes, double delay_s, int samples, int warmup) {
        OverheadSamples o = overhead(comm_of(comm), peer, bytes, delay_s, rep(samples, 1, warmup));
        return std::make_pair(o.send_s, o.recv_s);
    }, "comm"_a, "peer"_a, "bytes"_a, "delay_s"_a, "samples"_a, "warmup"_a = 10);
    c.def("reduce_local", [](uint64_t bytes, int samples, int batch, int warmup) {
        return reduce_local(bytes, rep(samples, batch, warmup));
    }, "bytes"_a, "samples"_a, "batch"_a = 1, "warmup"_a = 3);
    c.def("copy", [](uint64_t bytes, int samples, int batch, int warmup) {
        return mpi::copy(bytes, rep(samples, batch, warmup));
    }, "bytes"_a, "samples"_a, "batch"_a = 1, "warmup"_a = 3);
    c.def("barrier", [](uintptr_t comm, int samples, int batch, int warmup) {
        return mpi::barrier(comm_of(comm), rep(samples, batch, warmup));
    }, "comm"_a, "samples"_a, "batch"_a = 1, "warmup"_a = 10);
    c.def("timer", [](int samples, int batch) { return mpi::timer(rep(samples, batch, 100)); }, "samples"_a, "batch"_a = 1000);
}

}  // namespace

NB_MODULE(COLLPLAN_MPI_MODULE, m) {
    // collplan.CollplanError for every collplan::Error (kept for the life of the process, never released).
    static PyObject* core_error = nb::object(nb::module_::import_("collplan._core").attr("CollplanError")).release().ptr();
    nb::register_exception_translator(
        [](const std::exception_ptr& p, void*) {
            try {
                std::rethrow_exception(p);
            } catch (const Error& e) {
                PyErr_SetString(core_error, e.what());
            }
        });
    m.attr("abi") = COLLPLAN_MPI_ABI;
    m.attr("home") = COLLPLAN_MPI_HOME;
    bind_request(m);
    bind_collectives(m);
    bind_timing(m);
    bind_calibrate(m);
}
