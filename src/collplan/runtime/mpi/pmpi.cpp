// libcollplan_pmpi.so -- drop-in replacement of MPI_Allgather, MPI_Alltoall, MPI_Alltoallv, MPI_Allreduce and
// MPI_Barrier for unmodified MPI programs (LD_PRELOAD), through the MPI profiling interface -- and their MPI-4
// large-count versions (MPI_Allreduce_c, ...) where the library declares them (MPICH; mpi4py calls those).
//
// Which algorithm: COLLPLAN_<COLLECTIVE> (COLLPLAN_ALLGATHER=ring, COLLPLAN_ALLREDUCE=recexch:k=3, ...; "native" =
// the library's own), else the wisdom file named by COLLPLAN_WISDOM (runtime/wisdom.hpp), else the library's own
// collective (PMPI_*). docs/runtime.md lists the variables and every remaining reason to run the native collective.
//
// Every rank decides the same (docs/runtime.md, "Collective decisions"). A decision depends only on what MPI
// guarantees to be equal on every rank of the call -- the communicator (size, topology), the collective, the type
// signature's byte count, the reduction's count, datatype and operation, MPI_IN_PLACE -- and on the configuration,
// which MPI_Init checks to be the same on every rank (else every collective is native). Datatype layouts may differ
// between ranks (same signature): they never change the decision; data of non-contiguous datatypes are packed.
//
// Speed: a call with no COLLPLAN_<COLLECTIVE> and no wisdom for its collective goes straight to PMPI_ (one
// branch). Otherwise the decision and the request that runs the schedule are cached per communicator and call shape
// (lookups in small open-addressing tables keyed by MPI handles, invalidated by attribute callbacks when the
// communicator is freed): no strings, maps, allocations or MPI attribute queries on a cache hit.
// With MPI_THREAD_MULTIPLE the bookkeeping is serialised by a mutex (otherwise no lock is taken).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "collplan/runtime/mpi/collectives.hpp"
#include "collplan/runtime/mpi/datatype.hpp"
#include "collplan/runtime/wisdom.hpp"

namespace collplan::mpi {
namespace {

// ------------------------------------------------------------------------------------------- configuration
enum Fn : uint8_t { kAllgather, kAlltoall, kAlltoallv, kAllreduce, kBarrier, kNumFn };
constexpr const char* kFnName[kNumFn] = {"MPI_Allgather", "MPI_Alltoall", "MPI_Alltoallv", "MPI_Allreduce", "MPI_Barrier"};
constexpr const char* kEnvName[kNumFn] = {"COLLPLAN_ALLGATHER", "COLLPLAN_ALLTOALL", "COLLPLAN_ALLTOALLV",
                                          "COLLPLAN_ALLREDUCE", "COLLPLAN_BARRIER"};
constexpr Collective kCollective[kNumFn] = {Collective::allgather, Collective::alltoall, Collective::alltoallv,
                                            Collective::allreduce, Collective::barrier};

bool env_flag(const char* name) {
    const char* v = std::getenv(name);
    return v && *v && std::strcmp(v, "0") != 0;
}

// The environment, read once. active[f]: calls of f go through the decision cache (else straight to PMPI_).
struct Config {
    bool verbose = env_flag("COLLPLAN_VERBOSE");
    bool strict = env_flag("COLLPLAN_STRICT");
    bool stats = env_flag("COLLPLAN_STATS");
    Noncontig mode = Noncontig::automatic;
    std::string env[kNumFn];
    Wisdom wisdom;
    std::string wisdom_error;
    bool active[kNumFn] = {};
    std::string fingerprint;  // what every rank must agree on

    Config() {
        const char* nc = std::getenv("COLLPLAN_NONCONTIG");
        if (nc && std::strcmp(nc, "pack") == 0) mode = Noncontig::pack;
        if (nc && std::strcmp(nc, "datatype") == 0) mode = Noncontig::datatype;
        if (const char* w = std::getenv("COLLPLAN_WISDOM"); w && *w) {
            try {
                wisdom = load_wisdom(w);
            } catch (const std::exception& e) {
                wisdom_error = e.what();  // said once per job, by rank 0 of MPI_COMM_WORLD (after_init)
            }
            fingerprint += std::string(w) + "|" + std::to_string(wisdom.entries.size()) + "|" + wisdom_error + "|";
        }
        for (int f = 0; f < kNumFn; ++f) {
            if (const char* s = std::getenv(kEnvName[f]); s && *s) env[f] = s;
            bool wise = false;
            for (const WisdomEntry& e : wisdom.entries) wise = wise || e.collective == kCollective[f];
            active[f] = !env[f].empty() || wise;
            fingerprint += env[f] + "|";
        }
        if (const char* t = std::getenv("COLLPLAN_TOPOLOGY")) fingerprint += t;
        fingerprint += std::string(nc ? nc : "") + (strict ? "S" : "") + (verbose ? "V" : "");
    }
};

Config& config() {
    static Config& c = *new Config;  // leaked: interceptors may run during static destruction
    return c;
}

// What the hot path reads, set once by MPI_Init (after_init): until then, and for a collective with no choice,
// every call passes straight through to PMPI_.
bool g_active[kNumFn] = {};
bool g_stats_on = false;

// With MPI_THREAD_MULTIPLE every interceptor that touches the caches holds this lock.
bool g_locking = false;
std::mutex g_mu;
struct MaybeLock {
    bool on;
    explicit MaybeLock(bool l) : on(l) { if (on) g_mu.lock(); }
    ~MaybeLock() { if (on) g_mu.unlock(); }
};

// --------------------------------------------------------------------------------------- handle hash tables
template <class H>
uint64_t handle_key(H h) {
    uint64_t k = 0;
    std::memcpy(&k, &h, sizeof(h) < sizeof(k) ? sizeof(h) : sizeof(k));
    return k;
}

// Open addressing, linear probing, power-of-two capacity; keys are MPI handles (never 0 for a live object in
// either MPI: MPI_COMM_NULL / MPI_DATATYPE_NULL are not stored).
template <class V>
class HandleTable {
public:
    V* find(uint64_t key) {
        if (slots_.empty()) return nullptr;
        for (size_t i = hash(key);; i = (i + 1) & mask()) {
            if (slots_[i].key == key && slots_[i].value) return slots_[i].value.get();
            if (slots_[i].key == 0) return nullptr;
        }
    }
    V* insert(uint64_t key, std::unique_ptr<V> v) {
        if ((used_ + 1) * 2 > slots_.size()) grow();
        size_t i = hash(key);
        while (slots_[i].key != 0 && slots_[i].key != key) i = (i + 1) & mask();
        if (slots_[i].key == 0) ++used_;
        slots_[i].key = key;
        slots_[i].value = std::move(v);
        return slots_[i].value.get();
    }
    // The value goes; the key stays (a dead slot that the same key reuses) until the table grows.
    void erase(uint64_t key) {
        if (slots_.empty()) return;
        for (size_t i = hash(key); slots_[i].key != 0; i = (i + 1) & mask())
            if (slots_[i].key == key) slots_[i].value.reset();
    }
    void clear() { slots_.clear(), used_ = 0; }

private:
    struct Slot {
        uint64_t key = 0;
        std::unique_ptr<V> value;
    };
    size_t mask() const { return slots_.size() - 1; }
    size_t hash(uint64_t k) const { return static_cast<size_t>((k * 0x9E3779B97F4A7C15ull) >> 20) & mask(); }
    void grow() {
        std::vector<Slot> old = std::move(slots_);
        slots_ = std::vector<Slot>(old.empty() ? 16 : old.size() * 2);
        used_ = 0;
        for (Slot& s : old)
            if (s.value) insert(s.key, std::move(s.value));
    }
    std::vector<Slot> slots_;
    size_t used_ = 0;
};

// ------------------------------------------------------------------------------------- datatypes (cached)
// Predefined datatypes never change, so their TypeInfo is cached; derived ones are asked each call (a freed
// handle may come back as another type).
HandleTable<TypeInfo>& g_types = *new HandleTable<TypeInfo>;  // leaked: outlives static destruction

TypeInfo info_of(MPI_Datatype t) {
    static uint64_t last_key = 0;
    static const TypeInfo* last = nullptr;
    const uint64_t k = handle_key(t);
    if (k == last_key && last) return *last;
    if (const TypeInfo* i = g_types.find(k)) return last_key = k, last = i, *i;
    TypeInfo i = type_info(t);
    if (i.predefined) g_types.insert(k, std::make_unique<TypeInfo>(i));
    return i;
}

// Moves as bytes where it is (contiguous, or no data at all).
bool direct(const TypeInfo& t) { return t.contiguous || t.size == 0; }

// ---------------------------------------------------------------------------------------------- decisions
struct Stats {
    uint64_t collplan[kNumFn] = {}, native[kNumFn] = {};
    std::map<std::string, uint64_t> reasons;  // "MPI_Allreduce: why" -> native calls (this rank)
};
Stats& g_stats = *new Stats;

// One call shape of one communicator: what runs and the buffers it reuses. a, b: allgather/alltoall -- block
// bytes; alltoallv -- MPI_IN_PLACE; allreduce -- count and extent (with type and op).
struct Shape {
    Fn fn;
    uint64_t a = 0, b = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Op op = MPI_OP_NULL;
    bool same(Fn f, uint64_t x, uint64_t y, MPI_Datatype t, MPI_Op o) const {
        return fn == f && a == x && b == y && type == t && op == o;
    }
};

struct Entry {
    Shape shape;
    bool use = false;
    bool fixed = false;             // the shape's datatype is predefined: `ti` never changes
    TypeInfo ti;                    // allgather/alltoall: the receive type; allreduce: the type
    uint64_t bytes = 0;             // allgather/alltoall: block bytes; allreduce: vector bytes
    Choice choice;                  // alltoallv: a request is made per call (the count matrix changes)
    std::unique_ptr<Request> req;   // the others: made once, rebound every call
    uint64_t* reason_count = nullptr;
    std::vector<char> packed_in, packed_out;
    std::vector<uint64_t> v[4];     // alltoallv: send bytes, send displs, recv bytes, recv displs
};

struct CommEntry {
    MPI_Comm comm = MPI_COMM_NULL;
    int P = 1, rank = 0;
    bool intra = false;
    std::vector<std::unique_ptr<Entry>> shapes;  // at most kMaxShapes, oldest first
    size_t last = 0;
    Entry* find(Fn f, uint64_t x, uint64_t y, MPI_Datatype t, MPI_Op o) {
        if (last < shapes.size() && shapes[last]->shape.same(f, x, y, t, o)) return shapes[last].get();
        for (size_t i = 0; i < shapes.size(); ++i)
            if (shapes[i]->shape.same(f, x, y, t, o)) return last = i, shapes[i].get();
        return nullptr;
    }
};
constexpr size_t kMaxShapes = 32;

HandleTable<CommEntry>& g_comms = *new HandleTable<CommEntry>;
int g_keyval = MPI_KEYVAL_INVALID;
bool g_agreed = false;  // MPI_Init found every rank's configuration equal

uint64_t g_last_comm_key = 0;
CommEntry* g_last_comm = nullptr;

int forget_comm(MPI_Comm comm, int, void*, void*) {
    MaybeLock lock(g_locking);
    g_comms.erase(handle_key(comm));
    g_last_comm = nullptr, g_last_comm_key = 0;
    return MPI_SUCCESS;
}

CommEntry* new_comm_entry(MPI_Comm comm);

inline CommEntry* comm_entry(MPI_Comm comm) {
    const uint64_t k = handle_key(comm);
    if (k == g_last_comm_key && g_last_comm) [[likely]] return g_last_comm;
    CommEntry* e = g_comms.find(k);
    if (!e) e = new_comm_entry(comm);
    g_last_comm_key = k, g_last_comm = e;
    return e;
}

CommEntry* new_comm_entry(MPI_Comm comm) {
    auto e = std::make_unique<CommEntry>();
    e->comm = comm;
    int inter = 1;
    e->intra = comm != MPI_COMM_NULL && PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter;
    if (e->intra) {
        PMPI_Comm_size(comm, &e->P);
        PMPI_Comm_rank(comm, &e->rank);
        if (g_keyval == MPI_KEYVAL_INVALID) PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, forget_comm, &g_keyval, nullptr);
        PMPI_Comm_set_attr(comm, g_keyval, nullptr);
    }
    return g_comms.insert(handle_key(comm), std::move(e));
}

void log_once(const CommEntry& ce, Fn f, uint64_t bytes, const std::string& what) {
    static std::set<std::string>& logged = *new std::set<std::string>;
    if (!config().verbose || ce.rank != 0) return;
    const std::string line = std::string(kFnName[f]) + " P=" + std::to_string(ce.P) + " " + std::to_string(bytes) + "B -> " + what;
    if (!logged.insert(line).second) return;
    std::fprintf(stderr, "collplan: %s\n", line.c_str());
    std::fflush(stderr);
}

// The choice for a call (COLLPLAN_<COLLECTIVE>, else wisdom), or false with the reason in `why`.
bool choose(Fn f, int P, uint64_t bytes, MPI_Op op, Choice& ch, std::string& why) {
    const Config& cfg = config();
    std::string spec;
    std::map<std::string, std::string> params;
    if (!g_agreed) return why = "the COLLPLAN_* settings differ between ranks (or MPI_Init was not intercepted)", false;
    if (!cfg.env[f].empty()) {
        spec = cfg.env[f];
    } else if (const WisdomEntry* e = cfg.wisdom.lookup(kCollective[f], P, bytes, f == kAllreduce ? op_name(op) : "")) {
        spec = e->algorithm;
        params = e->params;
    } else {
        return why = cfg.wisdom_error.empty() ? "no algorithm chosen" : cfg.wisdom_error, false;
    }
    try {
        auto [name, p] = parse_algorithm_spec(spec);
        if (name == "native") return why = "native requested", false;
        params.insert(p.begin(), p.end());
        ch = Choice{name, params, cfg.mode, nullptr};
        return true;
    } catch (const std::exception& e) {
        return why = e.what(), false;
    }
}

// Records a native decision; under COLLPLAN_STRICT a fallback from an algorithm the user named is fatal.
void decline(CommEntry& ce, Entry& en, uint64_t bytes, const std::string& why) {
    en.use = false;
    en.req.reset();
    log_once(ce, en.shape.fn, bytes, "native (" + why + ")");
    en.reason_count = &g_stats.reasons[std::string(kFnName[en.shape.fn]) + ": " + why];
    const std::string& env = config().env[en.shape.fn];
    if (config().strict && !env.empty() && env.rfind("native", 0) != 0) {
        std::fprintf(stderr, "collplan: COLLPLAN_STRICT: %s P=%d %lluB would run natively: %s\n", kFnName[en.shape.fn],
                     ce.P, static_cast<unsigned long long>(bytes), why.c_str());
        std::fflush(stderr);
        PMPI_Abort(ce.comm, 1);
    }
}

std::string algorithm_text(const Request& r) {
    const Schedule& s = r.plan().schedule();
    return s.algorithm + (s.params.empty() ? "" : ":" + s.params) + " on " + s.topology;
}

// The cached entry of a call shape, deciding on the first call: `make` builds the collplan request for a Choice
// (or, for alltoallv, checks the choice and returns null). Every input of the decision is equal on every rank.
template <class Make>
Entry* decide(CommEntry& ce, Fn f, uint64_t x, uint64_t y, MPI_Datatype t, MPI_Op o, uint64_t bytes, Make make) {
    if (Entry* e = ce.find(f, x, y, t, o)) return e;
    auto en = std::make_unique<Entry>();
    en->shape = Shape{f, x, y, t, o};
    std::string why;
    if (choose(f, ce.P, bytes, o, en->choice, why)) {
        try {
            en->req = make(en->choice);
            en->use = true;
            log_once(ce, f, bytes, en->req ? algorithm_text(*en->req) : en->choice.algorithm);
        } catch (const std::exception& e) {
            why = e.what();
        }
    }
    if (!en->use) decline(ce, *en, bytes, why);
    if (ce.shapes.size() >= kMaxShapes) ce.shapes.erase(ce.shapes.begin());
    ce.shapes.push_back(std::move(en));
    ce.last = ce.shapes.size() - 1;
    return ce.shapes.back().get();
}

// Drops the entry `find` returned last (its datatype handle now names another type); returns null.
Entry* forget_shape(CommEntry& ce) {
    ce.shapes.erase(ce.shapes.begin() + static_cast<std::ptrdiff_t>(ce.last));
    ce.last = 0;
    return nullptr;
}

// Send and receive buffers that alias without MPI_IN_PLACE: forbidden by MPI; the library's own collective
// reports the error as it would without collplan.
void count_alias(Fn f) {
    if (g_stats_on) {
        ++g_stats.native[f];
        ++g_stats.reasons[std::string(kFnName[f]) + ": send and receive buffers alias (erroneous; the MPI library reports it)"];
    }
}

void count_native(Fn f, const Entry* en) {
    if (g_stats_on) {
        ++g_stats.native[f];
        if (en && en->reason_count) ++*en->reason_count;
    }
}

// The MPI library's own collectives, for int counts and (MPI-4) MPI_Count ones.
int native_block(Fn f, const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm c) {
    return f == kAllgather ? PMPI_Allgather(s, sc, st, r, rc, rt, c) : PMPI_Alltoall(s, sc, st, r, rc, rt, c);
}
int native_alltoallv(const void* s, const int* sc, const int* sd, MPI_Datatype st, void* r, const int* rc, const int* rd,
                     MPI_Datatype rt, MPI_Comm c) {
    return PMPI_Alltoallv(s, sc, sd, st, r, rc, rd, rt, c);
}
int native_allreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
    return PMPI_Allreduce(s, r, n, t, op, c);
}
#if MPI_VERSION >= 4
int native_block(Fn f, const void* s, MPI_Count sc, MPI_Datatype st, void* r, MPI_Count rc, MPI_Datatype rt, MPI_Comm c) {
    return f == kAllgather ? PMPI_Allgather_c(s, sc, st, r, rc, rt, c) : PMPI_Alltoall_c(s, sc, st, r, rc, rt, c);
}
int native_alltoallv(const void* s, const MPI_Count* sc, const MPI_Aint* sd, MPI_Datatype st, void* r, const MPI_Count* rc,
                     const MPI_Aint* rd, MPI_Datatype rt, MPI_Comm c) {
    return PMPI_Alltoallv_c(s, sc, sd, st, r, rc, rd, rt, c);
}
int native_allreduce(const void* s, void* r, MPI_Count n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
    return PMPI_Allreduce_c(s, r, n, t, op, c);
}
#endif

int count_collplan(Fn f) {
    if (g_stats_on) ++g_stats.collplan[f];
    return MPI_SUCCESS;
}

// An error inside a run of collplan's schedule (the ranks have started it: no fallback is possible) goes to the
// communicator's error handler, as the MPI library's own errors do.
int run_failed(MPI_Comm comm, Fn f, const std::exception& e) {
    std::fprintf(stderr, "collplan: %s failed inside collplan's schedule: %s\n", kFnName[f], e.what());
    std::fflush(stderr);
    PMPI_Comm_call_errhandler(comm, MPI_ERR_INTERN);
    return MPI_ERR_INTERN;
}

int run(MPI_Comm comm, Fn f, Request& req, const void* send, void* recv) {
    try {
        req.bind(send, recv);
        req.run();
    } catch (const std::exception& e) {
        return run_failed(comm, f, e);
    }
    return count_collplan(f);
}

// -------------------------------------------------------------------------------------------- collectives
// Allgather and alltoall: blocks of `bytes` (the type signature's size, equal on every rank). Non-contiguous
// datatypes go through packed copies; in place with a non-contiguous receive type becomes a packed run.
template <class Count>
[[gnu::noinline]] int allgather_like(Fn f, const void* sbuf, Count scount, MPI_Datatype st, void* rbuf, Count rcount, MPI_Datatype rt,
                   MPI_Comm comm) {
    if (!g_active[f]) return count_native(f, nullptr), native_block(f, sbuf, scount, st, rbuf, rcount, rt, comm);
    MaybeLock lock(g_locking);
    CommEntry* ce = comm_entry(comm);
    if (!ce->intra) return count_native(f, nullptr), native_block(f, sbuf, scount, st, rbuf, rcount, rt, comm);
    Entry* en = ce->find(f, static_cast<uint64_t>(rcount), 0, rt, MPI_OP_NULL);
    if (!en || !en->fixed) {  // first call of this shape, or a derived datatype (asked every call)
        const TypeInfo ri = info_of(rt);
        if (en && en->ti.size != ri.size) en = forget_shape(*ce);  // a freed handle reused
        if (!en) {
            const uint64_t bytes = static_cast<uint64_t>(rcount) * static_cast<uint64_t>(ri.size);
            en = decide(*ce, f, static_cast<uint64_t>(rcount), 0, rt, MPI_OP_NULL, bytes, [&](const Choice& ch) {
                return f == kAllgather ? allgather_init(nullptr, nullptr, bytes, comm, ch) : alltoall_init(nullptr, nullptr, bytes, comm, ch);
            });
            en->bytes = bytes;
        }
        en->ti = ri, en->fixed = ri.predefined;
    }
    const bool in_place = sbuf == MPI_IN_PLACE;
    const uint64_t bytes = en->bytes;
    if (!in_place && sbuf == rbuf && bytes > 0) return count_alias(f), native_block(f, sbuf, scount, st, rbuf, rcount, rt, comm);
    if (!en->use) return count_native(f, en), native_block(f, sbuf, scount, st, rbuf, rcount, rt, comm);
    if (bytes == 0) return count_collplan(f);  // nothing to move on any rank
    if (direct(en->ti) && (in_place || st == rt || direct(info_of(st)))) return run(comm, f, *en->req, sbuf, rbuf);
    const TypeInfo& ri = en->ti;
    const uint64_t P = static_cast<uint64_t>(ce->P), me = static_cast<uint64_t>(ce->rank);
    const uint64_t in_blocks = f == kAllgather ? 1 : P;
    const void* send = sbuf;
    void* recv = rbuf;
    if (!direct(ri)) {
        en->packed_out.resize(P * bytes);
        recv = en->packed_out.data();
        if (in_place) {  // the input is in rbuf (allgather: this rank's block)
            en->packed_in.resize(in_blocks * bytes);
            const uint64_t skip = f == kAllgather ? me * static_cast<uint64_t>(rcount) * static_cast<uint64_t>(ri.extent) : 0;
            pack(static_cast<const char*>(rbuf) + skip, static_cast<int64_t>(in_blocks * static_cast<uint64_t>(rcount)), rt,
                 en->packed_in.data(), static_cast<int64_t>(en->packed_in.size()));
            send = en->packed_in.data();
        }
    }
    if (!in_place && !direct(info_of(st))) {
        en->packed_in.resize(in_blocks * bytes);
        pack(sbuf, static_cast<int64_t>(in_blocks * static_cast<uint64_t>(scount)), st, en->packed_in.data(),
             static_cast<int64_t>(en->packed_in.size()));
        send = en->packed_in.data();
    }
    const int rc = run(comm, f, *en->req, send, recv);
    if (rc == MPI_SUCCESS && recv != rbuf)
        unpack(recv, static_cast<int64_t>(P * bytes), rbuf, static_cast<int64_t>(P * static_cast<uint64_t>(rcount)), rt);
    return rc;
}

// One side of an alltoallv in bytes: counts[i] elements of `t` at displs[i] in `buf`. Direct datatypes stay
// where they are (displacements rebased so that none is negative); others are laid out packed, one block after
// the other, in `packed` (filled from `buf` when `fill`). Returns the base address the byte displacements refer to.
template <class Count, class Displ>
char* side(const Count* counts, const Displ* displs, MPI_Datatype t, const TypeInfo& ti, const void* buf, int P,
           std::vector<uint64_t>& bytes, std::vector<uint64_t>& offs, std::vector<char>& packed, bool fill) {
    bytes.resize(static_cast<size_t>(P));
    offs.resize(static_cast<size_t>(P));
    for (int i = 0; i < P; ++i) bytes[i] = static_cast<uint64_t>(counts[i]) * static_cast<uint64_t>(ti.size);
    if (direct(ti)) {
        int64_t lo = 0;
        for (int i = 0; i < P; ++i) lo = std::min<int64_t>(lo, static_cast<int64_t>(displs[i]) * ti.extent);
        for (int i = 0; i < P; ++i) offs[i] = static_cast<uint64_t>(static_cast<int64_t>(displs[i]) * ti.extent - lo);
        return const_cast<char*>(static_cast<const char*>(buf)) + lo;
    }
    uint64_t total = 0;
    for (int i = 0; i < P; ++i) offs[i] = total, total += bytes[i];
    packed.resize(total);
    if (fill)
        for (int i = 0; i < P; ++i)
            pack(static_cast<const char*>(buf) + static_cast<int64_t>(displs[i]) * ti.extent, static_cast<int64_t>(counts[i]), t,
                 packed.data() + offs[i], static_cast<int64_t>(bytes[i]));
    return packed.data();
}

// Alltoallv: every call gathers the count matrix (collectives.cpp), so the decision depends only on the
// communicator and MPI_IN_PLACE, and a request is made per call from the cached choice.
template <class Count, class Displ>
[[gnu::noinline]] int alltoallv_like(const void* sbuf, const Count* scounts, const Displ* sdispls, MPI_Datatype st, void* rbuf,
                   const Count* rcounts, const Displ* rdispls, MPI_Datatype rt, MPI_Comm comm) {
    const Fn f = kAlltoallv;
    if (!g_active[f]) [[likely]] return count_native(f, nullptr), native_alltoallv(sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, comm);
    MaybeLock lock(g_locking);
    CommEntry* ce = comm_entry(comm);
    if (!ce->intra) return count_native(f, nullptr), native_alltoallv(sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, comm);
    const bool in_place = sbuf == MPI_IN_PLACE;
    if (!in_place && sbuf == rbuf) return count_alias(f), native_alltoallv(sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, comm);
    Entry* en = decide(*ce, f, in_place, 0, MPI_DATATYPE_NULL, MPI_OP_NULL, 0, [&](const Choice& ch) {
        check_choice(Collective::alltoallv, ch);
        return std::unique_ptr<Request>();
    });
    if (!en->use) return count_native(f, en), native_alltoallv(sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, comm);
    const int P = ce->P;
    const TypeInfo ri = info_of(rt);
    std::vector<uint64_t> &sb = en->v[0], &sd = en->v[1], &rb = en->v[2], &rd = en->v[3];
    char* recv = side(rcounts, rdispls, rt, ri, rbuf, P, rb, rd, en->packed_out, false);
    const char* send = nullptr;
    if (in_place && direct(ri)) {
        send = static_cast<const char*>(MPI_IN_PLACE);
    } else if (in_place) {  // pack the input out of rbuf; then it is an ordinary run
        send = side(rcounts, rdispls, rt, ri, rbuf, P, sb, sd, en->packed_in, true);
    } else {
        send = side(scounts, sdispls, st, info_of(st), sbuf, P, sb, sd, en->packed_in, true);
    }
    try {
        auto req = alltoallv_init(send, sb.data(), sd.data(), recv, rb.data(), rd.data(), comm, en->choice);
        req->run();
    } catch (const std::exception& e) {
        return run_failed(comm, f, e);
    }
    if (!direct(ri))
        for (int i = 0; i < P; ++i)
            unpack(recv + rd[i], static_cast<int64_t>(rb[i]), static_cast<char*>(rbuf) + static_cast<int64_t>(rdispls[i]) * ri.extent,
                   static_cast<int64_t>(rcounts[i]), rt);
    return count_collplan(f);
}

// Allreduce: count elements of a datatype that is the same on every rank. Contiguous types run in place in the
// user's buffers; others (data inside each element's extent) run on copies laid out extent by extent and
// only their data are copied back, so the holes of the receive buffer stay untouched.
template <class Count>
[[gnu::noinline]] int allreduce_like(const void* sbuf, void* rbuf, Count count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
    const Fn f = kAllreduce;
    if (!g_active[f]) return count_native(f, nullptr), native_allreduce(sbuf, rbuf, count, t, op, comm);
    MaybeLock lock(g_locking);
    CommEntry* ce = comm_entry(comm);
    if (!ce->intra) return count_native(f, nullptr), native_allreduce(sbuf, rbuf, count, t, op, comm);
    const uint64_t n = static_cast<uint64_t>(count);
    Entry* en = ce->find(f, n, 0, t, op);
    if (!en || !en->fixed) {  // first call of this shape, or a derived datatype (asked every call)
        const TypeInfo ti = info_of(t);
        if (en && (en->ti.extent != ti.extent || en->ti.size != ti.size)) en = forget_shape(*ce);  // a freed handle reused
        if (!en) {
            const uint64_t bytes = n * static_cast<uint64_t>(ti.size);
            en = decide(*ce, f, n, 0, t, op, bytes, [&](const Choice& ch) { return allreduce_init(nullptr, nullptr, n, t, op, comm, ch); });
            en->bytes = bytes;
        }
        en->ti = ti, en->fixed = ti.predefined;
    }
    const bool in_place = sbuf == MPI_IN_PLACE;
    const uint64_t bytes = en->bytes;
    const TypeInfo& ti = en->ti;
    if (!in_place && sbuf == rbuf && bytes > 0) return count_alias(f), native_allreduce(sbuf, rbuf, count, t, op, comm);
    if (!en->use) return count_native(f, en), native_allreduce(sbuf, rbuf, count, t, op, comm);
    if (bytes == 0) return count_collplan(f);
    if (ti.contiguous) return run(comm, f, *en->req, sbuf, rbuf);
    // element i's extent starts at i * extent in the copies; the data lie at true_lb - lb into it
    const uint64_t span = (n - 1) * static_cast<uint64_t>(ti.extent) + static_cast<uint64_t>(ti.true_extent);
    const uint64_t skip = static_cast<uint64_t>(ti.true_lb - ti.lb);
    en->packed_in.assign(n * static_cast<uint64_t>(ti.extent), 0);
    en->packed_out.resize(en->packed_in.size());
    std::memcpy(en->packed_in.data() + skip, static_cast<const char*>(in_place ? rbuf : sbuf) + ti.true_lb, span);
    const int rc = run(comm, f, *en->req, en->packed_in.data(), en->packed_out.data());
    if (rc != MPI_SUCCESS) return rc;
    en->packed_in.resize(bytes);  // the result's data, packed, then unpacked into the user's layout
    pack(en->packed_out.data() - ti.lb, static_cast<int64_t>(n), t, en->packed_in.data(), static_cast<int64_t>(bytes));
    unpack(en->packed_in.data(), static_cast<int64_t>(bytes), rbuf, static_cast<int64_t>(n), t);
    return rc;
}

[[gnu::noinline]] int barrier(MPI_Comm comm) {
    const Fn f = kBarrier;
    if (!g_active[f]) [[likely]] return count_native(f, nullptr), PMPI_Barrier(comm);
    MaybeLock lock(g_locking);
    CommEntry* ce = comm_entry(comm);
    if (!ce->intra) return count_native(f, nullptr), PMPI_Barrier(comm);
    Entry* en = decide(*ce, f, 0, 0, MPI_DATATYPE_NULL, MPI_OP_NULL, 0, [&](const Choice& ch) { return barrier_init(comm, ch); });
    if (!en->use) return count_native(f, en), PMPI_Barrier(comm);
    return run(comm, f, *en->req, nullptr, nullptr);
}

// ------------------------------------------------------------------------------------- init and finalize
uint64_t fnv1a(const std::string& s) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return h;
}

// Every rank's configuration must be the same: else no collective runs collplan's schedules (they would not
// agree on what to run). One allreduce at MPI_Init, on every rank the library is loaded in.
void after_init(int provided) {
    g_locking = provided == MPI_THREAD_MULTIPLE;
    g_stats_on = config().stats;
    const uint64_t h = fnv1a(config().fingerprint);
    unsigned long long mine[2] = {h, ~h}, all[2] = {0, 0};
    if (PMPI_Allreduce(mine, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS) return;
    g_agreed = all[0] == mine[0] && all[1] == mine[1];
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    // A disagreement still goes through the decisions (all decline); COLLPLAN_VERBOSE logs every collective's.
    for (int f = 0; f < kNumFn; ++f) g_active[f] = config().active[f] || config().verbose;
    if (!config().wisdom_error.empty() && rank == 0)
        std::fprintf(stderr, "collplan: warning: %s; the MPI library's collectives run instead\n",
                     config().wisdom_error.c_str());
    if (!g_agreed && rank == 0)
        std::fprintf(stderr, "collplan: warning: the COLLPLAN_* settings differ between ranks; every collective runs natively\n");
}

// COLLPLAN_STATS: the calls of every rank, summed on rank 0 of MPI_COMM_WORLD, and rank 0's reasons to run natively.
void print_stats() {
    unsigned long long mine[2 * kNumFn], sum[2 * kNumFn] = {};
    for (int f = 0; f < kNumFn; ++f) mine[f] = g_stats.collplan[f], mine[kNumFn + f] = g_stats.native[f];
    PMPI_Reduce(mine, sum, 2 * kNumFn, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) return;
    for (int f = 0; f < kNumFn; ++f)
        if (sum[f] + sum[kNumFn + f] > 0)
            std::fprintf(stderr, "collplan-stats: %s collplan=%llu native=%llu\n", kFnName[f], sum[f], sum[kNumFn + f]);
    for (const auto& [why, n] : g_stats.reasons)
        if (n > 0) std::fprintf(stderr, "collplan-stats: native %llu %s\n", static_cast<unsigned long long>(n), why.c_str());
    std::fflush(stderr);
}

void before_finalize() {
    MaybeLock lock(g_locking);
    if (g_stats_on) print_stats();
    g_comms.clear();  // the cached requests free their MPI objects while MPI still runs
    g_last_comm = nullptr, g_last_comm_key = 0;
    for (bool& a : g_active) a = false;
}

}  // namespace
}  // namespace collplan::mpi

using namespace collplan::mpi;

extern "C" {

int MPI_Init(int* argc, char*** argv) {
    const int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) after_init(MPI_THREAD_SINGLE);
    return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
    const int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) after_init(*provided);
    return rc;
}

int MPI_Finalize() {
    before_finalize();
    return PMPI_Finalize();
}

// Each interceptor first tests whether anything is to be done for its collective; if not it tail-calls PMPI_.
#define COLLPLAN_PASS_THROUGH(fn, call) \
    if (!g_active[fn] && !g_stats_on) [[likely]] return call

int MPI_Allgather(const void* sbuf, int scount, MPI_Datatype st, void* rbuf, int rcount, MPI_Datatype rt, MPI_Comm comm) {
    COLLPLAN_PASS_THROUGH(kAllgather, PMPI_Allgather(sbuf, scount, st, rbuf, rcount, rt, comm));
    return allgather_like(kAllgather, sbuf, scount, st, rbuf, rcount, rt, comm);
}

int MPI_Alltoall(const void* sbuf, int scount, MPI_Datatype st, void* rbuf, int rcount, MPI_Datatype rt, MPI_Comm comm) {
    COLLPLAN_PASS_THROUGH(kAlltoall, PMPI_Alltoall(sbuf, scount, st, rbuf, rcount, rt, comm));
    return allgather_like(kAlltoall, sbuf, scount, st, rbuf, rcount, rt, comm);
}

int MPI_Alltoallv(const void* sbuf, const int scounts[], const int sdispls[], MPI_Datatype st, void* rbuf,
                  const int rcounts[], const int rdispls[], MPI_Datatype rt, MPI_Comm comm) {
    COLLPLAN_PASS_THROUGH(kAlltoallv, PMPI_Alltoallv(sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, comm));
    return alltoallv_like(sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, comm);
}

int MPI_Allreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
    COLLPLAN_PASS_THROUGH(kAllreduce, PMPI_Allreduce(sbuf, rbuf, count, t, op, comm));
    return allreduce_like(sbuf, rbuf, count, t, op, comm);
}

int MPI_Barrier(MPI_Comm comm) {
    COLLPLAN_PASS_THROUGH(kBarrier, PMPI_Barrier(comm));
    return barrier(comm);
}

#if MPI_VERSION >= 4  // large-count variants (MPICH 4+; Open MPI 5.0 has none)
int MPI_Allgather_c(const void* sbuf, MPI_Count scount, MPI_Datatype st, void* rbuf, MPI_Count rcount, MPI_Datatype rt,
                    MPI_Comm comm) {
    COLLPLAN_PASS_THROUGH(kAllgather, PMPI_Allgather_c(sbuf, scount, st, rbuf, rcount, rt, comm));
    return allgather_like(kAllgather, sbuf, scount, st, rbuf, rcount, rt, comm);
}

int MPI_Alltoall_c(const void* sbuf, MPI_Count scount, MPI_Datatype st, void* rbuf, MPI_Count rcount, MPI_Datatype rt,
                   MPI_Comm comm) {
    COLLPLAN_PASS_THROUGH(kAlltoall, PMPI_Alltoall_c(sbuf, scount, st, rbuf, rcount, rt, comm));
    return allgather_like(kAlltoall, sbuf, scount, st, rbuf, rcount, rt, comm);
}

int MPI_Alltoallv_c(const void* sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[], MPI_Datatype st, void* rbuf,
                    const MPI_Count rcounts[], const MPI_Aint rdispls[], MPI_Datatype rt, MPI_Comm comm) {
    COLLPLAN_PASS_THROUGH(kAlltoallv, PMPI_Alltoallv_c(sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, comm));
    return alltoallv_like(sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, comm);
}

int MPI_Allreduce_c(const void* sbuf, void* rbuf, MPI_Count count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
    COLLPLAN_PASS_THROUGH(kAllreduce, PMPI_Allreduce_c(sbuf, rbuf, count, t, op, comm));
    return allreduce_like(sbuf, rbuf, count, t, op, comm);
}
#endif

}  // extern "C"
