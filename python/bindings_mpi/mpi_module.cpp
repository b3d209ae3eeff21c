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

#include <array>
#include <list>
#include <optional>
#include <type_traits>
#include <unordered_map>

#include "collplan/measure/calibrate.hpp"
#include "collplan/runtime/mpi/collectives.hpp"
#include "collplan/runtime/mpi/datatype.hpp"
#include "collplan/measure/timing.hpp"

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
// A buffer from Python: None is MPI_IN_PLACE, 0 a null pointer (a buffer significant only at the root, elsewhere).
const void* send_of(std::optional<uintptr_t> p) {
    return p ? reinterpret_cast<const void*>(*p) : MPI_IN_PLACE;
}
void* recv_of(std::optional<uintptr_t> p) { return p ? reinterpret_cast<void*>(*p) : MPI_IN_PLACE; }
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

// A buffer-protocol view of a Python object (C-contiguous; writable, with its format when asked), released with
// the view.
class View {
public:
    // False (the Python error cleared) when the object has no such buffer.
    bool get(nb::handle obj, bool writable, bool format) {
        const int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0) | (format ? PyBUF_FORMAT : 0);
        if (PyObject_GetBuffer(obj.ptr(), &view_, flags)) {
            PyErr_Clear();
            return false;
        }
        held_ = true;
        return true;
    }
    void* data() const { return view_.buf; }
    const char* format() const { return view_.format ? view_.format : "B"; }
    Py_ssize_t itemsize() const { return view_.itemsize; }
    Py_ssize_t len() const { return view_.len; }
    ~View() {
        if (held_) PyBuffer_Release(&view_);
    }

private:
    Py_buffer view_{};
    bool held_ = false;
};

// The blocking calls' requests of one communicator (python/collplan/mpi.py keeps one per communicator and says what
// it caches): by key, at most `limit`, least recently used dropped first. The hot path of a blocking call is one
// call of run(); a miss returns the key under which keep() stores the request the caller builds.
class BlockingCache {
public:
    // The arguments that are not buffers (a hashable tuple), a reduction's operation (by identity), and per buffer
    // its element format (reductions only), element size and bytes (recv, then send; none: in place or barrier).
    struct Key {
        nb::object args, op;
        std::string formats;
        std::array<Py_ssize_t, 4> sizes{-1, -1, -1, -1};
        size_t hash = 0;
        bool operator==(const Key& o) const {
            if (hash != o.hash || op.ptr() != o.op.ptr() || sizes != o.sizes || formats != o.formats) return false;
            const int eq = PyObject_RichCompareBool(args.ptr(), o.args.ptr(), Py_EQ);
            if (eq < 0) PyErr_Clear();
            return eq == 1;
        }
    };
    struct KeyHash {
        size_t operator()(const Key& k) const { return k.hash; }
    };
    // The request (a Request, run here, or a Python callable target(send, recv): the MPI library's own
    // collective), the algorithm's name, what the request refers to (kept alive), its alltoallv id.
    struct Entry {
        Key key;
        nb::object target, algorithm, extra;
        int64_t id = 0;
        bool busy = false;  // running: a nested or concurrent call with this key builds its own
    };

    BlockingCache(uintptr_t comm, nb::object in_place, size_t limit)
        : comm_(comm), in_place_(std::move(in_place)), limit_(limit) {}

    // The call with arguments `args` and operation `op` (the reductions; False for the other collectives) on buffers
    // `send` (None or MPI.IN_PLACE: in place, or not significant on this rank) and `recv` (None: a null buffer,
    // significant only at the root; MPI.IN_PLACE: scatter's root; both None: barrier). Returns the algorithm that ran by the
    // cached request; on a miss the key to keep() a new request under (nothing ran); None when a buffer is not a
    // C-contiguous buffer (recv: a writable one) or `args` is not hashable: nothing ran, nothing to keep. With
    // `agree` (alltoallv, whose request depends on every rank's counts) all ranks hit the same entry or all miss, by
    // one small allreduce; `builds` counts those misses, alike on every rank (the id of the next entry).
    nb::object run(nb::handle args, nb::handle send, nb::handle recv, bool agree, nb::handle op) {
        const bool in_place = send.is_none() || send.is(in_place_);
        const bool recv_null = recv.is_none(), recv_in_place = recv.is(in_place_);
        const bool typed = !op.is(Py_False);
        View in, out;
        bool usable = (recv_null || recv_in_place || out.get(recv, true, typed)) &&
                      (in_place || in.get(send, false, typed));
        const Py_hash_t h = usable ? PyObject_Hash(args.ptr()) : -1;
        if (h == -1) PyErr_Clear(), usable = false;
        Key key;
        auto it = entries_.end();
        if (usable) {
            key.args = nb::borrow(args), key.op = nb::borrow(op);
            if (recv_in_place) key.formats = "@";
            else if (!recv_null) key.formats = out.format(), key.sizes[0] = out.itemsize(), key.sizes[1] = out.len();
            if (!in_place) (key.formats += '|') += in.format(), key.sizes[2] = in.itemsize(), key.sizes[3] = in.len();
            key.hash = static_cast<size_t>(h) ^ std::hash<std::string>()(key.formats) * 31;
            key.hash ^= reinterpret_cast<size_t>(op.ptr());
            for (Py_ssize_t v : key.sizes) key.hash = key.hash * 1000003 ^ static_cast<size_t>(v);
            auto found = index_.find(key);
            if (found != index_.end() && !found->second->busy) it = found->second;
        }
        if (agree && !agreed(it != entries_.end() ? it->id : -1)) {
            ++builds;
            it = entries_.end();
        }
        if (!usable) return nb::none();
        if (it == entries_.end()) return nb::cast(std::move(key));
        entries_.splice(entries_.end(), entries_, it);  // the most recently used
        Running running(*this, it);
        if (nb::isinstance<Request>(it->target)) {
            Request& r = *nb::inst_ptr<Request>(it->target);
            if (!(recv_null && in_place))  // barrier: no buffers
                r.bind(in_place ? MPI_IN_PLACE : in.data(),
                       recv_null ? nullptr : recv_in_place ? MPI_IN_PLACE : out.data());
            r.run();
        } else {
            it->target(in_place ? nb::none() : nb::borrow(send), nb::borrow(recv));
        }
        running.done = true;
        ++hits;
        return it->algorithm;
    }

    // Keeps the request the caller built after a miss, in place of one under this key that did not agree (alltoallv);
    // not in place of one that runs (a nested or concurrent call's).
    void keep(const Key& key, nb::object target, nb::object algorithm, nb::object extra, int64_t id) {
        if (auto found = index_.find(key); found != index_.end()) {
            if (found->second->busy) return;
            erase(found->second);
        }
        entries_.push_back(Entry{key, std::move(target), std::move(algorithm), std::move(extra), id});
        index_.emplace(key, std::prev(entries_.end()));
        for (auto old = entries_.begin(); index_.size() > limit_ && old != entries_.end();)
            old = old->busy ? std::next(old) : erase(old);
    }

    size_t size() const { return index_.size(); }
    uint64_t hits = 0, misses = 0, builds = 0;

private:
    using Entries = std::list<Entry>;

    // Marks an entry busy while it runs; a run that throws drops it (as a fresh request would be gone).
    struct Running {
        Running(BlockingCache& c, Entries::iterator e) : cache(c), entry(e) { entry->busy = true; }
        ~Running() {
            entry->busy = false;
            if (!done) cache.erase(entry);
        }
        BlockingCache& cache;
        Entries::iterator entry;
        bool done = false;
    };

    Entries::iterator erase(Entries::iterator e) {
        index_.erase(e->key);
        return entries_.erase(e);
    }

    // True when every rank passes the same id >= 0 (collective over the communicator): a MIN-allreduce of (id, -id)
    // by collplan's own recursive doubling, a persistent request (cheaper than MPI_Allreduce through MPICH).
    bool agreed(int64_t id) {
        if (comm_of(comm_) == MPI_COMM_NULL) return false;  // the call that follows says what is wrong
        if (!agreement_)
            agreement_ = reduction_init(Collective::allreduce, agree_in_, agree_out_, 2, MPI_INT64_T, MPI_MIN, 0,
                                        comm_of(comm_), Choice{"allreduce/recursive_doubling", {}, Noncontig::automatic});
        agree_in_[0] = id, agree_in_[1] = -id;
        agreement_->run();
        return agree_out_[0] >= 0 && agree_out_[0] == -agree_out_[1];
    }

    uintptr_t comm_;
    nb::object in_place_;
    size_t limit_;
    std::unique_ptr<Request> agreement_;
    int64_t agree_in_[2] = {}, agree_out_[2] = {};
    Entries entries_;  // least recently used first
    std::unordered_map<Key, Entries::iterator, KeyHash> index_;
};

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
        .def_prop_ro("active", &Request::active)
        .def_prop_ro("algorithm", [](const Request& r) { return r.plan().schedule().algorithm; })
        .def_prop_ro("params", [](const Request& r) { return r.plan().schedule().params; })
        .def_prop_ro("topology", [](const Request& r) { return r.plan().schedule().topology; })
        .def_prop_ro("plan_was_cached", &Request::plan_was_cached)
        .def_prop_ro("datatypes", [](const Request& r) { return r.plan().datatypes(); })
        .def_prop_ro("stage_bytes", [](const Request& r) { return r.plan().stage_bytes(); });
}

void bind_blocking_cache(nb::module_& m) {
    nb::class_<BlockingCache::Key>(m, "BlockingCacheKey");
    nb::class_<BlockingCache>(m, "BlockingCache")
        .def(nb::init<uintptr_t, nb::object, size_t>(), "comm"_a, "in_place"_a, "limit"_a)
        .def("run", &BlockingCache::run, "args"_a, "send"_a.none(), "recv"_a.none(), "agree"_a, "op"_a.none())
        .def("keep", &BlockingCache::keep, "key"_a, "target"_a, "algorithm"_a, "extra"_a, "id"_a)
        .def_prop_ro("size", &BlockingCache::size)
        .def_rw("hits", &BlockingCache::hits)
        .def_rw("misses", &BlockingCache::misses)
        .def_ro("builds", &BlockingCache::builds);
}

using Params = std::map<std::string, std::string>;

// The *_init entry points, bound per shape of MPI's argument list for the rows of the PMPI library's table
// (src/collplan/runtime/mpi/collectives.def), as <collective>_init: bytes as collectives.hpp's bytes_init, elements of
// `datatype` as reduction_init; buffers None (MPI_IN_PLACE) or 0 (null: significant only at the root, elsewhere).
template <Collective c>
void bind_bytes(nb::module_& m, const char* name) {
    m.def(name, [](uintptr_t comm, std::optional<uintptr_t> send, uintptr_t recv, uint64_t bytes, const std::string& alg,
                   const Params& params, const std::string& mode) {
        return bytes_init(c, send_of(send), ptr(recv), bytes, 0, comm_of(comm), choice(alg, params, mode));
    }, "comm"_a, "send"_a.none(), "recv"_a, "bytes"_a, "algorithm"_a, "params"_a, "mode"_a);
}

template <Collective c>
void bind_bytes_root(nb::module_& m, const char* name) {
    m.def(name, [](uintptr_t comm, std::optional<uintptr_t> send, std::optional<uintptr_t> recv, uint64_t bytes,
                   int root, const std::string& alg, const Params& params, const std::string& mode) {
        return bytes_init(c, send_of(send), recv_of(recv), bytes, root, comm_of(comm), choice(alg, params, mode));
    }, "comm"_a, "send"_a.none(), "recv"_a.none(), "bytes"_a, "root"_a, "algorithm"_a, "params"_a, "mode"_a);
}

template <Collective c>
void bind_bcast(nb::module_& m, const char* name) {
    m.def(name, [](uintptr_t comm, uintptr_t buf, uint64_t bytes, int root, const std::string& alg,
                   const Params& params, const std::string& mode) {
        return bytes_init(c, nullptr, ptr(buf), bytes, root, comm_of(comm), choice(alg, params, mode));
    }, "comm"_a, "buf"_a, "bytes"_a, "root"_a, "algorithm"_a, "params"_a, "mode"_a);
}

template <Collective c>
void bind_reduction(nb::module_& m, const char* name) {
    m.def(name, [](uintptr_t comm, std::optional<uintptr_t> send, uintptr_t recv, uint64_t count, uintptr_t datatype,
                   uintptr_t op, const std::string& alg, const Params& params, const std::string& mode) {
        return reduction_init(c, send_of(send), ptr(recv), count, from_handle<MPI_Datatype>(datatype),
                              from_handle<MPI_Op>(op), 0, comm_of(comm), choice(alg, params, mode));
    }, "comm"_a, "send"_a.none(), "recv"_a, "count"_a, "datatype"_a, "op"_a, "algorithm"_a, "params"_a, "mode"_a);
}

template <Collective c>
void bind_reduction_root(nb::module_& m, const char* name) {
    m.def(name, [](uintptr_t comm, std::optional<uintptr_t> send, std::optional<uintptr_t> recv, uint64_t count,
                   uintptr_t datatype, uintptr_t op, int root, const std::string& alg, const Params& params,
                   const std::string& mode) {
        return reduction_init(c, send_of(send), recv_of(recv), count, from_handle<MPI_Datatype>(datatype),
                              from_handle<MPI_Op>(op), root, comm_of(comm), choice(alg, params, mode));
    }, "comm"_a, "send"_a.none(), "recv"_a.none(), "count"_a, "datatype"_a, "op"_a, "root"_a, "algorithm"_a, "params"_a,
       "mode"_a);
}

template <Collective c>
void bind_allgatherv(nb::module_& m, const char* name) {
    static_assert(c == Collective::allgatherv, "bind_allgatherv binds allgatherv_init alone");
    m.def(name, [](uintptr_t comm, std::optional<uintptr_t> send, uintptr_t recv, const std::vector<long long>& rb,
                   const std::vector<long long>& rd, const std::string& alg, const Params& params,
                   const std::string& mode) {
        const auto rb64 = u64(rb, "recv count"), rd64 = u64(rd, "recv displacement");
        return allgatherv_init(send_of(send), ptr(recv), rb64.data(), rd64.data(), comm_of(comm), choice(alg, params, mode));
    }, "comm"_a, "send"_a.none(), "recv"_a, "recv_bytes"_a, "recv_displs"_a, "algorithm"_a, "params"_a, "mode"_a);
}

template <Collective c>
void bind_alltoallv(nb::module_& m, const char* name) {
    static_assert(c == Collective::alltoallv, "bind_alltoallv binds alltoallv_init alone");
    m.def(name, [](uintptr_t comm, std::optional<uintptr_t> send, const std::vector<long long>& sb,
                   const std::vector<long long>& sd, uintptr_t recv, const std::vector<long long>& rb,
                   const std::vector<long long>& rd, const std::string& alg, const Params& params,
                   const std::string& mode) {
        const auto sb64 = u64(sb, "send count"), sd64 = u64(sd, "send displacement");
        const auto rb64 = u64(rb, "recv count"), rd64 = u64(rd, "recv displacement");
        return alltoallv_init(send_of(send), sb64.data(), sd64.data(), ptr(recv), rb64.data(), rd64.data(),
                              comm_of(comm), choice(alg, params, mode));
    }, "comm"_a, "send"_a.none(), "send_bytes"_a, "send_displs"_a, "recv"_a, "recv_bytes"_a, "recv_displs"_a,
       "algorithm"_a, "params"_a, "mode"_a);
}

template <Collective c>
void bind_reduce_scatter(nb::module_& m, const char* name) {
    static_assert(c == Collective::reduce_scatter, "bind_reduce_scatter binds reduce_scatter_init alone");
    m.def(name, [](uintptr_t comm, std::optional<uintptr_t> send, uintptr_t recv, const std::vector<long long>& counts,
                   uintptr_t datatype, uintptr_t op, const std::string& alg, const Params& params,
                   const std::string& mode) {
        const auto c64 = u64(counts, "recv count");
        return reduce_scatter_init(send_of(send), ptr(recv), c64.data(), from_handle<MPI_Datatype>(datatype),
                                   from_handle<MPI_Op>(op), comm_of(comm), choice(alg, params, mode));
    }, "comm"_a, "send"_a.none(), "recv"_a, "counts"_a, "datatype"_a, "op"_a, "algorithm"_a, "params"_a, "mode"_a);
}

template <Collective c>
void bind_barrier(nb::module_& m, const char* name) {
    static_assert(c == Collective::barrier, "bind_barrier binds barrier_init alone");
    m.def(name, [](uintptr_t comm, const std::string& alg, const Params& params, const std::string& mode) {
        return barrier_init(comm_of(comm), choice(alg, params, mode));
    }, "comm"_a, "algorithm"_a, "params"_a, "mode"_a);
}

void bind_collectives(nb::module_& m) {
#define X(id, Spelling, args) bind_##args<Collective::id>(m, #id "_init");
#include "collplan/runtime/mpi/collectives.def"
#undef X
    m.def("cache_stats", &stats, "comm"_a);
    m.def("applies", [](const std::string& collective, const std::string& alg, int ranks,
                        const std::map<std::string, std::string>& params, int root) -> std::string {
        try {
            const Collective c = parse_collective(collective);
            const Inputs inputs(std::vector<uint64_t>(counts_size(c, ranks), 1), root);
            runtime_schedule(c, ranks, Choice{alg, params, Noncontig::automatic}, inputs);
        } catch (const Error& e) {
            return e.what();
        }
        return "";
    }, "collective"_a, "algorithm"_a, "ranks"_a, "params"_a, "root"_a = 0);
}

// Timing for the planner's measure evaluator and `collplan run` (measure/timing.hpp).
void bind_timing(nb::module_& m) {
    m.def("time_request", [](uintptr_t comm, Request& r, int iters, int warmup, int reps) {
        return time_calls(comm_of(comm), [&] { r.start(); r.wait(); }, iters, warmup, reps);
    }, "comm"_a, "request"_a, "iters"_a, "warmup"_a, "reps"_a,
       "Slowest-rank mean seconds per start()+wait() of each repetition (collective).");
    m.def("time_native", [](uintptr_t comm, const std::string& collective, std::optional<uintptr_t> send, uintptr_t recv,
                            uint64_t bytes, uint64_t count, uintptr_t datatype, uintptr_t op, int iters, int warmup,
                            int reps, int root, const std::vector<long long>& counts, const std::vector<long long>& displs) {
        const Collective c = parse_collective(collective);
        NativeShape s;
        s.bytes = bytes, s.count = count, s.root = root;
        s.type = from_handle<MPI_Datatype>(datatype), s.op = from_handle<MPI_Op>(op);
        s.counts = u64(counts, "count"), s.displs = u64(displs, "displacement");
        return time_calls(comm_of(comm), [&] { native_collective(c, send_of(send), ptr(recv), s, comm_of(comm)); },
                          iters, warmup, reps);
    }, "comm"_a, "collective"_a, "send"_a.none(), "recv"_a, "bytes"_a, "count"_a, "datatype"_a, "op"_a, "iters"_a,
       "warmup"_a, "reps"_a, "root"_a = 0, "counts"_a = std::vector<long long>{}, "displs"_a = std::vector<long long>{},
       "The same for the MPI library's own collective (timing.hpp's NativeShape: root, counts, displacements).");
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
    c.def("exchange", [](uintptr_t comm, int peer, uint64_t bytes, int count, int samples, int batch, int warmup) {
        return exchange(comm_of(comm), peer, bytes, count, rep(samples, batch, warmup));
    }, "comm"_a, "peer"_a, "bytes"_a, "count"_a, "samples"_a, "batch"_a = 1, "warmup"_a = 2);
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
    bind_blocking_cache(m);
    bind_timing(m);
    bind_calibrate(m);
    void bind_drs_n(nb::module_&); bind_drs_n(m);  // python/bindings_mpi/drs_n.cpp
}
