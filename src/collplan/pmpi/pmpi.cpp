// libcollplan_pmpi.so -- drop-in replacement, for unmodified MPI programs (LD_PRELOAD), through the MPI profiling
// interface, of every collective of schedule/collective.hpp (MPI_Allgather, MPI_Alltoall, MPI_Alltoallv,
// MPI_Allreduce, MPI_Barrier, MPI_Bcast, MPI_Reduce, MPI_Reduce_scatter_block, MPI_Reduce_scatter, MPI_Allgatherv,
// MPI_Gather, MPI_Scatter) -- and their MPI-4 large-count versions (MPI_Allreduce_c, MPI_Bcast_c, ...) where the
// library declares them (MPICH; mpi4py calls those) -- and their non-blocking (MPI_Iallreduce, ...) and MPI-4
// persistent (MPI_Allreduce_init + MPI_Start) versions: the same templates with K = kNonblocking / kPersistent,
// whose runs live in requests that pmpi_requests.cpp completes and advances inside MPI_Wait, MPI_Test, ...
//
// The table: runtime/mpi/collectives.def, one row per collective -- its Collective, its C spelling and the shape of its
// argument list (bytes, reduction, allgatherv, ...). The extern "C" interceptors at the end of this file are
// generated from it, and so are python/bindings_mpi/mpi_module.cpp's *_init entry points. Per collective the rest
// comes from its descriptor, describe(c) (schedule/collective.hpp): the variable COLLPLAN_<NAME> (its name upper-
// cased), the name in messages and statistics (its mpi_name), where MPI_IN_PLACE may stand. Adding a collective
// whose arguments have one of the shapes: its row in collectives.def (after its descriptor and algorithms); if it
// is a collective of bytes or a reduction of count elements, its case in bytes_call or reduction_call below (a
// static_assert names the place). A new shape: its COLLPLAN_PARAMS_/ARGS_/RUN_ macros at the end of this file, an
// Args value, a template that runs it, and its runtime entry point (runtime/mpi/collectives.hpp).
//
// Which algorithm: COLLPLAN_<COLLECTIVE> (COLLPLAN_ALLGATHER=ring, COLLPLAN_ALLREDUCE=recexch:k=3, ...; "native" =
// the library's own), else the wisdom file named by COLLPLAN_WISDOM (runtime/wisdom.hpp), else the library's own
// collective (PMPI_*). docs/runtime.md lists the variables and every remaining reason to run the native collective.
//
// Every rank decides the same (docs/runtime.md, "Collective decisions"). A decision depends only on what MPI
// guarantees to be equal on every rank of the call -- the communicator (size, topology), the collective, the root,
// the type signature's byte count (allgatherv: every rank's), the reductions' counts, datatype and operation -- and
// on the configuration, which MPI_Init checks to be the same on every rank (else every collective is native).
// MPI_IN_PLACE of a rooted collective is known at the root alone: it only says which of the root's counts gives the
// bytes. Datatype layouts may differ between ranks (same signature): they never change the decision; data of
// non-contiguous datatypes are packed.
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
#include <cctype>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "collplan/runtime/mpi/collectives.hpp"
#include "collplan/runtime/mpi/datatype.hpp"
#include "collplan/pmpi/pmpi_requests.hpp"
#include "collplan/pmpi/profile.hpp"
#include "collplan/runtime/wisdom.hpp"

namespace collplan::mpi {
namespace {
using namespace pmpi;

// ------------------------------------------------------------------------------------------- configuration
using C = Collective;
constexpr size_t kNumColl = std::size(kCollectives);
constexpr size_t at(Collective c) { return static_cast<size_t>(c); }  // the index of c's entries in the arrays
const char* mpi_name(Collective c) { return describe(c).mpi_name.data(); }

// The shape of a collective's MPI argument list: its column in collectives.def. Every collective has a row there
// (-Werror=switch).
enum class Args : uint8_t {
    bytes, bytes_root, bcast, reduction, reduction_root, allgatherv, alltoallv, reduce_scatter, barrier
};
constexpr Args args_of(Collective c) {
    switch (c) {
#define X(id, Spelling, args) \
    case C::id: return Args::args;
#include "collplan/runtime/mpi/collectives.def"
#undef X
    }
    return Args::barrier;
}

// One more warning about the environment into `warnings` ("; " between them).
void add_warning(std::string& warnings, const std::string& w) { warnings += (warnings.empty() ? "" : "; ") + w; }

// A flag variable: unset, empty, 0, no, false or off is off; 1, yes, true or on is on; anything else is off and a
// warning (said once, by rank 0 of MPI_COMM_WORLD: after_init).
bool env_flag(const char* name, std::string& warnings) {
    const char* v = std::getenv(name);
    if (!v || !*v) return false;
    for (const char* on : {"1", "yes", "true", "on"})
        if (std::strcmp(v, on) == 0) return true;
    for (const char* off : {"0", "no", "false", "off"})
        if (std::strcmp(v, off) == 0) return false;
    add_warning(warnings, std::string(name) + "=" + v + " is not a flag (allowed: 1, yes, true, on; 0, no, false, off), "
                "taken as off");
    return false;
}

// The environment, read once: env[at(c)] is COLLPLAN_<NAME> (describe(c).name upper-cased). active[at(c)]: calls of
// c go through the decision cache (else straight to PMPI_).
struct Config {
    std::string env_warnings;  // flags and modes not understood (said once by after_init)
    bool verbose = env_flag("COLLPLAN_VERBOSE", env_warnings);
    bool strict = env_flag("COLLPLAN_STRICT", env_warnings);
    bool stats = env_flag("COLLPLAN_STATS", env_warnings);
    Noncontig mode = Noncontig::automatic;
    std::string env[kNumColl];
    Wisdom wisdom;
    std::string wisdom_error;
    bool active[kNumColl] = {};
    std::string fingerprint;  // what every rank must agree on

    Config() {
        const char* nc = std::getenv("COLLPLAN_NONCONTIG");
        if (nc && std::strcmp(nc, "pack") == 0) mode = Noncontig::pack;
        else if (nc && std::strcmp(nc, "datatype") == 0) mode = Noncontig::datatype;
        else if (nc && *nc && std::strcmp(nc, "auto") != 0)
            add_warning(env_warnings, std::string("COLLPLAN_NONCONTIG=") + nc +
                                          " is not a mode (allowed: pack, datatype, auto), taken as auto");
        if (const char* w = std::getenv("COLLPLAN_WISDOM"); w && *w) {
            try {
                wisdom = load_wisdom(w);
            } catch (const std::exception& e) {
                wisdom_error = e.what();  // said once per job, by rank 0 of MPI_COMM_WORLD (after_init)
            }
            fingerprint += std::string(w) + "|" + std::to_string(wisdom.entries.size()) + "|" + wisdom_error + "|";
        }
        for (Collective c : kCollectives) {
            std::string var = "COLLPLAN_";
            for (char ch : describe(c).name) var += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
            if (const char* s = std::getenv(var.c_str()); s && *s) env[at(c)] = s;
            bool wise = false;
            for (const WisdomEntry& e : wisdom.entries) wise = wise || e.collective == c;
            active[at(c)] = !env[at(c)].empty() || wise;
            fingerprint += env[at(c)] + "|";
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
bool g_active[kNumColl] = {};
bool g_stats_on = false;
bool g_watch = false;  // COLLPLAN_STATS or COLLPLAN_PROFILE: every call goes past the pass-through test

// --------------------------------------------------------------------------------------- handle hash tables

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
    template <class F>
    void for_each(F f) {
        for (Slot& s : slots_)
            if (s.value) f(*s.value);
    }

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
// Calls by kind: blocking, non-blocking (MPI_I...), persistent (MPI_..._init: one per MPI_Start).
struct Stats {
    uint64_t collplan[3][kNumColl] = {}, native[3][kNumColl] = {};
    std::map<std::string, uint64_t> reasons;  // "MPI_Allreduce: why" -> native calls (this rank)
};
Stats& g_stats = *new Stats;

// One call shape of one communicator: what runs and the buffers it reuses. a, b: allgather, alltoall, bcast, gather,
// scatter -- the count of the datatype that gives the bytes (type) and the root; alltoallv -- MPI_IN_PLACE;
// allreduce, reduce, reduce_scatter_block -- count and root (with type and op); allgatherv, reduce_scatter -- 0
// (the key is Entry::counts).
struct Shape {
    Collective fn;
    uint64_t a = 0, b = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Op op = MPI_OP_NULL;
    bool same(Collective f, uint64_t x, uint64_t y, MPI_Datatype t, MPI_Op o) const {
        return fn == f && a == x && b == y && type == t && op == o;
    }
};

struct Entry : std::enable_shared_from_this<Entry> {
    Shape shape;
    bool use = false;
    bool fixed = false;             // the shape's datatype is predefined: `ti` never changes
    bool user_op = false;           // the shape's operation is a user-defined one (a request holds it)
    TypeInfo ti;                    // the shape's datatype
    uint64_t bytes = 0;             // the decision's bytes (allgatherv, reduce_scatter: in all); 0: nothing moves
    Choice choice;                  // alltoallv: a request is made per call (the count matrix changes)
    Slot own;                       // the blocking calls' request (the others: made once, rebound every call)
    std::shared_ptr<SlotPool> pool; // the slots of non-blocking calls, kept for the next ones
    uint64_t* reason_count = nullptr;
    std::vector<uint64_t> counts;   // allgatherv: bytes per rank; reduce_scatter: elements per rank (the key)
    std::vector<uint64_t> displs;   // allgatherv: the request's byte displacements (the blocks one after the other)
};

// The cached shapes of one communicator, at most kMaxShapes, oldest first.
constexpr size_t kMaxShapes = 32;
struct ShapeList {
    std::vector<std::shared_ptr<Entry>> items;  // shared: a non-blocking or persistent request keeps its entry
    size_t last = 0;
    template <class Match>
    [[gnu::always_inline]] Entry* find_if(Match match) {
        if (last < items.size() && match(*items[last])) return items[last].get();
        for (size_t i = 0; i < items.size(); ++i)
            if (match(*items[i])) return last = i, items[i].get();
        return nullptr;
    }
    [[gnu::always_inline]] Entry* find(Collective f, uint64_t x, uint64_t y, MPI_Datatype t, MPI_Op o) {
        return find_if([&](const Entry& e) { return e.shape.same(f, x, y, t, o); });
    }
    Entry* find(Collective f, const std::vector<uint64_t>& counts, MPI_Datatype t, MPI_Op o) {
        return find_if([&](const Entry& e) { return e.shape.same(f, 0, 0, t, o) && e.counts == counts; });
    }
    Entry* add(std::unique_ptr<Entry> en) {
        if (items.size() >= kMaxShapes) items.erase(items.begin());
        items.push_back(std::move(en));
        last = items.size() - 1;
        return items.back().get();
    }
    // Moves the entries keyed by datatype t or operation op to `gone` (destroyed by the caller, after every list is
    // done: an entry's requests free MPI objects).
    void forget(MPI_Datatype t, MPI_Op op, std::vector<std::shared_ptr<Entry>>& gone) {
        for (size_t i = 0; i < items.size();) {
            const Shape& s = items[i]->shape;
            if ((t != MPI_DATATYPE_NULL && s.type == t) || (op != MPI_OP_NULL && s.op == op)) {
                gone.push_back(std::move(items[i]));
                items.erase(items.begin() + static_cast<std::ptrdiff_t>(i));
            } else {
                ++i;
            }
        }
        last = 0;
    }
    // Drops the entry `find` returned last (its datatype handle now names another type); returns null.
    Entry* forget_last() {
        items.erase(items.begin() + static_cast<std::ptrdiff_t>(last));
        last = 0;
        return nullptr;
    }
};

// `counted` holds allgatherv's and reduce_scatter's shapes, keyed only by what is equal on every rank (the counts,
// and reduce_scatter's datatype and operation), apart from `shapes` (whose keys hold datatypes that may differ
// between ranks): so every rank misses alike and makes the request -- whose schedule, keyed by the counts, may have
// to be agreed on over the communicator (collectives.cpp, schedule_for) -- in the same call.
struct CommEntry {
    MPI_Comm comm = MPI_COMM_NULL;
    int P = 1, rank = 0;
    bool intra = false;
    ShapeList shapes, counted;
    std::vector<uint64_t> key;  // allgatherv, reduce_scatter: this call's counts
};

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

[[gnu::always_inline]] inline CommEntry* comm_entry(MPI_Comm comm) {
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
    if (comm != MPI_COMM_NULL) {  // (an inter-communicator: its local group, for COLLPLAN_VERBOSE's line)
        PMPI_Comm_size(comm, &e->P);
        PMPI_Comm_rank(comm, &e->rank);
    }
    // Inter-communicators too: a later communicator may get a freed one's handle, and must not find its entry.
    if (comm != MPI_COMM_NULL) {
        if (g_keyval == MPI_KEYVAL_INVALID) PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, forget_comm, &g_keyval, nullptr);
        PMPI_Comm_set_attr(comm, g_keyval, nullptr);
    }
    return g_comms.insert(handle_key(comm), std::move(e));
}

void log_once(const CommEntry& ce, Collective f, uint64_t bytes, const std::string& what) {
    static std::set<std::string>& logged = *new std::set<std::string>;
    if (!config().verbose || ce.rank != 0) return;
    const std::string line = std::string(mpi_name(f)) + " P=" + std::to_string(ce.P) + " " + std::to_string(bytes) + "B -> " + what;
    if (!logged.insert(line).second) return;
    std::fprintf(stderr, "collplan: %s\n", line.c_str());
    std::fflush(stderr);
}

// The choice for a call (COLLPLAN_<COLLECTIVE>, else wisdom), or false with the reason in `why`.
bool choose(Collective f, int P, uint64_t bytes, MPI_Op op, Choice& ch, std::string& why) {
    const Config& cfg = config();
    std::string spec;
    std::map<std::string, std::string> params;
    if (!g_agreed) return why = "the COLLPLAN_* settings differ between ranks (or MPI_Init was not intercepted)", false;
    if (!cfg.env[at(f)].empty()) {
        spec = cfg.env[at(f)];
    } else if (const WisdomEntry* e = cfg.wisdom.lookup(f, P, bytes, describe(f).reduction ? op_name(op) : "")) {
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
    en.own.req.reset();
    log_once(ce, en.shape.fn, bytes, "native (" + why + ")");
    en.reason_count = &g_stats.reasons[std::string(mpi_name(en.shape.fn)) + ": " + why];
    const std::string& env = config().env[at(en.shape.fn)];
    if (config().strict && !env.empty() && env.rfind("native", 0) != 0) {
        std::fprintf(stderr, "collplan: COLLPLAN_STRICT: %s P=%d %lluB would run natively: %s\n", mpi_name(en.shape.fn),
                     ce.P, static_cast<unsigned long long>(bytes), why.c_str());
        std::fflush(stderr);
        PMPI_Abort(ce.comm, 1);
    }
}

std::string algorithm_text(const Request& r) {
    const Schedule& s = r.plan().schedule();
    return s.algorithm + (s.params.empty() ? "" : ":" + s.params) + " on " + s.topology;
}

// A new entry of a call shape, decided: `make` builds the collplan request for a Choice (or, for alltoallv, checks
// the choice and returns null). Every input of the decision is equal on every rank.
template <class Make>
std::unique_ptr<Entry> new_entry(CommEntry& ce, const Shape& shape, uint64_t bytes, Make make) {
    const Collective f = shape.fn;
    auto en = std::make_unique<Entry>();
    en->shape = shape;
    en->user_op = shape.op != MPI_OP_NULL && !predefined_op(shape.op);
    en->bytes = bytes;
    std::string why;
    if (choose(f, ce.P, bytes, shape.op, en->choice, why)) {
        try {
            en->own.req = make(en->choice);
            en->use = true;
            log_once(ce, f, bytes, en->own.req ? algorithm_text(*en->own.req) : en->choice.algorithm);
        } catch (const std::exception& e) {
            why = e.what();
        }
    }
    if (!en->use) decline(ce, *en, bytes, why);
    return en;
}

// The cached entry of a call shape, deciding on the first call.
template <class Make>
Entry* decide(CommEntry& ce, Collective f, uint64_t x, uint64_t y, MPI_Datatype t, MPI_Op o, uint64_t bytes, Make make) {
    if (Entry* e = ce.shapes.find(f, x, y, t, o)) return e;
    return ce.shapes.add(new_entry(ce, Shape{f, x, y, t, o}, bytes, make));
}

// The same for allgatherv and reduce_scatter, keyed by their counts (CommEntry::key) in CommEntry::counted, with
// `total` bytes in all: the decision sees the mean bytes per rank (the wisdom's size of these two, as in Python).
template <class Make>
Entry* decide_counted(CommEntry& ce, Collective f, MPI_Datatype t, MPI_Op o, uint64_t total, Make make) {
    if (Entry* e = ce.counted.find(f, ce.key, t, o)) return e;
    auto en = new_entry(ce, Shape{f, 0, 0, t, o}, total / static_cast<uint64_t>(ce.P), make);
    en->bytes = total;
    en->counts = ce.key;
    return ce.counted.add(std::move(en));
}

// Send and receive buffers that alias without MPI_IN_PLACE: forbidden by MPI; the library's own collective
// reports the error as it would without collplan.
void count_alias(Collective f, Kind k = kBlocking) {
    if (g_stats_on) {
        ++g_stats.native[k][at(f)];
        ++g_stats.reasons[std::string(mpi_name(f)) + ": send and receive buffers alias (erroneous; the MPI library reports it)"];
    }
}

void count_native(Collective f, const Entry* en, Kind k = kBlocking) {
    if (g_stats_on) {
        ++g_stats.native[k][at(f)];
        if (en && en->reason_count) ++*en->reason_count;
    }
}

// How a non-blocking or persistent call was made: where the program's request goes (and *_init's info).
struct Call {
    MPI_Request* request = nullptr;
    MPI_Info info = MPI_INFO_NULL;
};

// An inter-communicator: collplan's schedules run on intra-communicators; the library's own collective runs, and
// COLLPLAN_VERBOSE / COLLPLAN_STATS say why, as for every other fallback.
void count_inter(const CommEntry& ce, Collective f, Kind k) {
    static const char* const why = "an inter-communicator (collplan's schedules run on intra-communicators)";
    if (config().verbose) log_once(ce, f, 0, std::string("native (") + why + ")");
    if (g_stats_on) {
        ++g_stats.native[k][at(f)];
        ++g_stats.reasons[std::string(mpi_name(f)) + ": " + why];
    }
}

int count_collplan(Collective f, Kind k = kBlocking) {
    if (g_stats_on) ++g_stats.collplan[k][at(f)];
    return MPI_SUCCESS;
}

// An error inside a run of collplan's schedule (the ranks have started it: no fallback is possible) goes to the
// communicator's error handler, as the MPI library's own errors do.
int run_failed(MPI_Comm comm, Collective f, const std::exception& e) {
    std::fprintf(stderr, "collplan: %s failed inside collplan's schedule: %s\n", mpi_name(f), e.what());
    std::fflush(stderr);
    PMPI_Comm_call_errhandler(comm, MPI_ERR_INTERN);
    return MPI_ERR_INTERN;
}

int run(MPI_Comm comm, Collective f, Request& req, const void* send, void* recv) {
    try {
        req.bind(send, recv);
        req.run();
    } catch (const std::exception& e) {
        return run_failed(comm, f, e);
    }
    return count_collplan(f);
}

// ------------------------------------------------------------------------------------ running a decided call
// Where a call that runs collplan's schedule goes once its buffers are ready: blocking (c null) -- run now, then
// `finish` (copies out of staging); non-blocking or persistent -- started, and `finish` kept for when the completion
// calls see the run complete (pmpi_requests.cpp).
struct Go {
    Collective f;
    MPI_Comm comm;
    CollRequest* c = nullptr;
};

Kind kind_of(const CollRequest& c) { return c.persistent ? kPersistent : kNonblocking; }

// (An error starting the run: thrown to start_collplan, or MPI_Start's start_one, which fail the request.)
int go_started(const Go& g, Slot& s, const void* send, void* recv, std::function<void()> finish) {
    CollRequest& c = *g.c;
    s.req->bind(send, recv);
    s.req->start();
    c.finish = std::move(finish);
    running(c);
    return count_collplan(g.f, kind_of(c));
}

template <class Finish>
int go(const Go& g, Slot& s, const void* send, void* recv, Finish&& finish) {
    if (!g.c) [[likely]] {
        const int rc = run(g.comm, g.f, *s.req, send, recv);
        if (rc == MPI_SUCCESS) finish();
        return rc;
    }
    return go_started(g, s, send, recv, std::function<void()>(std::forward<Finish>(finish)));
}
int go(const Go& g, Slot& s, const void* send, void* recv) {
    if (!g.c) [[likely]] return run(g.comm, g.f, *s.req, send, recv);
    return go_started(g, s, send, recv, nullptr);  // nothing to copy out
}

// No data on any rank: nothing runs, the call is complete.
int go_nothing(const Go& g) {
    if (!g.c) return count_collplan(g.f);
    count_collplan(g.f, kind_of(*g.c));
    complete(*g.c);
    return MPI_SUCCESS;
}

// Another request for a decided entry (a non-blocking call while another of the same shape is in flight, a
// persistent request): the plan is cached, and so is the schedule every rank agreed on -- this is local.
std::unique_ptr<Request> remake(const Entry& en, MPI_Comm comm, MPI_Datatype t) {
    const Collective f = en.shape.fn;
    const Choice& ch = en.choice;
    const int root = static_cast<int>(en.shape.b);
    switch (args_of(f)) {
        case Args::alltoallv: return nullptr;  // made per call from the count matrix
        case Args::barrier: return barrier_init(comm, ch);
        case Args::reduction:
        case Args::reduction_root: return reduction_init(f, nullptr, nullptr, en.shape.a, t, en.shape.op, root, comm, ch);
        case Args::reduce_scatter:
            return reduce_scatter_init(nullptr, nullptr, en.counts.data(), t, en.shape.op, comm, ch);
        case Args::allgatherv: return allgatherv_init(nullptr, nullptr, en.counts.data(), en.displs.data(), comm, ch);
        case Args::bytes:
        case Args::bytes_root:
        case Args::bcast: return bytes_init(f, nullptr, nullptr, en.bytes, root, comm, ch);
    }
    return nullptr;
}

// The derived datatypes and user operation a call's run uses, held by its request for its whole life
// (pmpi_requests.hpp, hold()): null where predefined, or where the call does not use one (MPI_IN_PLACE, arguments
// significant only at the root elsewhere). `remake`: the datatype a reduction's request is made for.
struct Uses {
    MPI_Datatype send = MPI_DATATYPE_NULL, recv = MPI_DATATYPE_NULL;
    MPI_Op op = MPI_OP_NULL;
    MPI_Datatype remake = MPI_DATATYPE_NULL;
};

// t where a request must hold it (a derived datatype), else null.
MPI_Datatype derived(MPI_Datatype t) { return t != MPI_DATATYPE_NULL && !info_of(t).predefined ? t : MPI_DATATYPE_NULL; }

struct NoPrepare {
    void operator()(CollRequest&) const {}
};

// A non-blocking (K = kNonblocking: started now) or persistent (kPersistent: started by MPI_Start) call that
// runs collplan's schedule: its request, with a slot of its own, and `launch` -- what starts it (binds the
// buffers, stages the input, starts the run). A persistent request pins its tag window now, at _init, where every
// rank makes it in the same order (its MPI_Start calls may come in any order); `prepare` finishes it (alltoallv:
// its request, made now). Any error here is the call's MPI error, never an abort.
template <Kind K, class Launch, class Prepare = NoPrepare>
int start_collplan(Collective f, MPI_Comm comm, const Call& k, Entry& en, const Uses& uses, Launch launch,
                   Prepare prepare = {}) {
    CollRequest* c = new_request(comm, K == kPersistent, k.request);
    try {
        if (c->owner.get() != &en) {  // a record last used for another entry (records keep theirs: no atomics here)
            release_slot(*c);
            c->owner = en.shared_from_this();
            if (!en.pool) en.pool = std::make_shared<SlotPool>();
            c->pool = en.pool;
        }
        if (!c->slot && !en.pool->spare.empty()) {
            c->slot = std::move(en.pool->spare.back());
            en.pool->spare.pop_back();
        }
        if (c->slot && f == C::alltoallv) c->slot->req.reset();  // made for another call's counts and buffers
        if (!c->slot) {
            c->slot = std::make_unique<Slot>();
            c->slot->req = remake(en, comm, uses.remake);
        }
        if (c->slot->req) {
            if constexpr (K == kPersistent) c->slot->req->pin_tags();
            else c->slot->req->unpin_tags();  // (a slot a persistent request had)
        }
        prepare(*c);
    } catch (const std::exception& e) {
        discard(c);
        *k.request = MPI_REQUEST_NULL;
        return run_failed(comm, f, e);
    }
    if (uses.send != MPI_DATATYPE_NULL || uses.recv != MPI_DATATYPE_NULL || uses.op != MPI_OP_NULL) [[unlikely]]
        hold(*c, uses.send, uses.recv, uses.op);
    if constexpr (K == kPersistent) {
        c->launch = std::move(launch);
        return MPI_SUCCESS;
    } else {
        try {
            return launch(*c);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "collplan: %s failed inside collplan's schedule: %s\n", mpi_name(f), e.what());
            std::fflush(stderr);
            fail(*c, MPI_ERR_INTERN);
            return MPI_ERR_INTERN;
        }
    }
}

// The body of an intercepted call, past its pass-through test: an exception (an internal error, memory) becomes
// the call's MPI error through the communicator's error handler, as the MPI library's own errors do -- never an
// uncaught exception that ends the rank. (Requests are handed out only by start_collplan, which catches its own.)
template <class Body>
int guarded(Collective f, MPI_Comm comm, const Call& k, Body body) {
    try {
        return body();
    } catch (const std::exception& e) {
        if (k.request) *k.request = MPI_REQUEST_NULL;
        return run_failed(comm, f, e);
    }
}

// -------------------------------------------------------------------------------------------- collectives
// The collectives of bytes -- allgather, alltoall, bcast, gather, scatter -- as one rank's call sees them: the input,
// in_n elements of the send type at sbuf (in place: of the receive type at rbuf + in_at elements), and the output,
// out_n elements of the receive type at rbuf. The decision's bytes are key_n elements of key_t: of the receive type
// where every rank has one (allgather, alltoall, bcast, scatter), else of the send type, and where MPI_IN_PLACE
// stands for one side at the root, of the other (docs/runtime.md, "Collective decisions"). Types and counts MPI
// calls significant only at the root are read at the root only.
struct BytesCall {
    bool has_in = true, has_out = true;
    bool in_place = false;  // the input is in rbuf
    bool prefill = false;   // bcast's root: the output holds the input
    bool alias = false;     // send and receive buffers alias without MPI_IN_PLACE (both significant)
    uint64_t in_n = 0, in_at = 0, out_n = 0, key_n = 0;
    MPI_Datatype key_t = MPI_DATATYPE_NULL;
};

template <Collective f, class Count>
BytesCall bytes_call(int P, int me, int root, const void* sbuf, Count scount, MPI_Datatype st, const void* rbuf,
                     Count rcount, MPI_Datatype rt) {
    const uint64_t sc = static_cast<uint64_t>(scount), rc = static_cast<uint64_t>(rcount), n = static_cast<uint64_t>(P);
    const bool at_root = me == root;
    BytesCall c;
    c.key_n = rc, c.key_t = rt, c.out_n = rc;
    if constexpr (f == C::allgather || f == C::alltoall) {
        c.in_place = sbuf == MPI_IN_PLACE;
        c.in_n = (f == C::allgather ? 1 : n) * (c.in_place ? rc : sc);
        c.in_at = f == C::allgather ? static_cast<uint64_t>(me) * rc : 0;
        c.out_n = n * rc;
        c.alias = !c.in_place && sbuf == rbuf;
    } else if constexpr (f == C::bcast) {
        c.has_in = false, c.prefill = at_root;
    } else if constexpr (f == C::gather) {
        c.in_place = at_root && sbuf == MPI_IN_PLACE;
        c.in_n = c.in_place ? rc : sc, c.in_at = static_cast<uint64_t>(root) * rc;
        c.has_out = at_root, c.out_n = n * rc;
        if (!c.in_place) c.key_n = sc, c.key_t = st;
        c.alias = at_root && !c.in_place && sbuf == rbuf;
    } else {
        static_assert(f == C::scatter, "bytes_call: a collective of bytes (collectives.def) with no case here");
        c.has_in = at_root, c.in_n = n * sc;
        c.has_out = !(at_root && rbuf == MPI_IN_PLACE);
        if (!c.has_out) c.key_n = sc, c.key_t = st;
        c.alias = at_root && c.has_out && sbuf == rbuf;
    }
    return c;
}

// The entry of a call of bytes, keyed by (key_n, key_t, root): the same bytes and root on every rank, so the same
// decision, whatever datatypes describe them. The first call of a shape, or a derived datatype (asked every call):
[[gnu::noinline]] Entry* bytes_entry_slow(CommEntry& ce, Entry* en, Collective f, int root, const BytesCall& c, MPI_Comm comm) {
    const TypeInfo ti = info_of(c.key_t);
    if (en && en->ti.size != ti.size) en = ce.shapes.forget_last();  // a freed handle reused
    if (!en) {
        const uint64_t bytes = c.key_n * static_cast<uint64_t>(ti.size);
        en = decide(ce, f, c.key_n, static_cast<uint64_t>(root), c.key_t, MPI_OP_NULL, bytes,
                    [&](const Choice& ch) { return bytes_init(f, nullptr, nullptr, bytes, root, comm, ch); });
    }
    en->ti = ti, en->fixed = ti.predefined;
    return en;
}
[[gnu::always_inline]] inline Entry* bytes_entry(CommEntry& ce, Collective f, int root, const BytesCall& c, MPI_Comm comm) {
    Entry* en = ce.shapes.find(f, c.key_n, static_cast<uint64_t>(root), c.key_t, MPI_OP_NULL);
    if (en && en->fixed) [[likely]] return en;
    return bytes_entry_slow(ce, en, f, root, c, comm);
}


// ------------------------------------------------------------------------------------ recorded calls
// The description of a call that COLLPLAN_PROFILE records (profile.hpp; its `bytes`: docs/profile.md): the
// decision's bytes and the datatype that gives them.
void describe_type(ProfileCall& pc, MPI_Datatype t, uint64_t n) {
    if (t == MPI_DATATYPE_NULL) return;  // (erroneous: the library's own error follows)
    const TypeInfo ti = info_of(t);
    pc.type_size = ti.size, pc.contiguous = ti.contiguous, pc.bytes = n * static_cast<uint64_t>(ti.size);
}

template <Collective f, class Count>
void describe_bytes(ProfileCall& pc, const ProfileComm& v, int root, const void* sbuf, Count sc, MPI_Datatype st,
                    const void* rbuf, Count rc, MPI_Datatype rt) {
    const BytesCall c = bytes_call<f>(v.size, v.rank, root, sbuf, sc, st, rbuf, rc, rt);
    describe_type(pc, c.key_t, c.key_n);
    if (describe(f).rooted) pc.root = root;
}

template <Collective f, class Count>
void describe_reduction(ProfileCall& pc, int root, Count count, MPI_Datatype t, MPI_Op op) {
    describe_type(pc, t, static_cast<uint64_t>(count));
    pc.op = op;
    if (describe(f).rooted) pc.root = root;
}

// allgatherv, reduce_scatter: every rank's bytes; alltoallv: this rank's to each (intra-communicators: an
// inter-communicator's arrays count the remote group).
template <class Count>
void describe_counts(ProfileCall& pc, const ProfileComm& v, const Count* counts, MPI_Datatype t) {
    describe_type(pc, t, 0);
    if (v.inter || !counts || t == MPI_DATATYPE_NULL) return;
    const uint64_t size = static_cast<uint64_t>(pc.type_size);
    pc.values.reserve(static_cast<size_t>(v.size));
    for (int j = 0; j < v.size; ++j) pc.bytes += pc.values.emplace_back(static_cast<uint64_t>(counts[j]) * size);
}

// A call of bytes with a non-contiguous datatype: the input packed (in place: out of the receive buffer), the
// output received packed and unpacked, so only the datatype's data are written (bcast's root: packed, not written).
int run_packed(const Go& g, Slot& s, const BytesCall& c, const void* sbuf, MPI_Datatype st, void* rbuf, MPI_Datatype rt) {
    const TypeInfo ri = c.has_out ? info_of(rt) : TypeInfo{};
    const bool pack_out = c.has_out && !direct(ri);  // else the input's type is not direct
    const void* send = sbuf;
    void* recv = rbuf;
    if (pack_out) {
        s.packed_out.resize(c.out_n * static_cast<uint64_t>(ri.size));
        recv = s.packed_out.data();
        if (c.prefill) pack(rbuf, static_cast<int64_t>(c.out_n), rt, recv, static_cast<int64_t>(s.packed_out.size()));
    }
    if (c.in_place || (c.has_in && !direct(info_of(st)))) {  // in place: pack_out (else the run is direct)
        const TypeInfo ii = c.in_place ? ri : info_of(st);
        const char* from = c.in_place ? static_cast<const char*>(rbuf) + c.in_at * static_cast<uint64_t>(ri.extent)
                                      : static_cast<const char*>(sbuf);
        const uint64_t bytes = c.in_n * static_cast<uint64_t>(ii.size);
        s.packed_in.resize(bytes);
        pack(from, static_cast<int64_t>(c.in_n), c.in_place ? rt : st, s.packed_in.data(), static_cast<int64_t>(bytes));
        send = s.packed_in.data();
    }
    const bool out = pack_out && !c.prefill;
    const uint64_t out_n = c.out_n;
    Slot* sp = &s;
    return go(g, s, send, recv, [=] {
        if (out) unpack(sp->packed_out.data(), static_cast<int64_t>(sp->packed_out.size()), rbuf, static_cast<int64_t>(out_n), rt);
    });
}

// Allgather, alltoall, bcast, gather, scatter: messages of `bytes` (the type signature's size, equal on every rank).
// Contiguous datatypes run in the user's buffers; others through packed copies (run_packed).
template <Collective f, Kind K, class Native, class Count>
[[gnu::noinline]] int bytes_like(Native native, const Call& k, int root, const void* sbuf, Count scount,
                                 MPI_Datatype st, void* rbuf, Count rcount, MPI_Datatype rt, MPI_Comm comm) {
    if (!g_active[at(f)]) return count_native(f, nullptr, K), native();
    return guarded(f, comm, k, [&]() -> int {
        MaybeLock lock(g_locking);
        CommEntry* ce = comm_entry(comm);
        if (!ce->intra) return count_inter(*ce, f, K), native();
        const BytesCall c = bytes_call<f>(ce->P, ce->rank, root, sbuf, scount, st, rbuf, rcount, rt);
        Entry* en = bytes_entry(*ce, f, root, c, comm);
        if (c.alias && en->bytes > 0) return count_alias(f, K), native();
        if (!en->use) return count_native(f, en, K), native();
        const bool none = en->bytes == 0;  // nothing to move on any rank
        const bool out_direct = !c.has_out || (c.key_t == rt ? direct(en->ti) : direct(info_of(rt)));
        const bool as_is = out_direct && (!c.has_in || c.in_place || (c.has_out && st == rt) || direct(info_of(st)));
        if constexpr (K == kBlocking) {
            if (none) return count_collplan(f);
            if (as_is) return run(comm, f, *en->own.req, sbuf, rbuf);
            return run_packed(Go{f, comm}, en->own, c, sbuf, st, rbuf, rt);
        } else {
            auto used = [&](bool significant, MPI_Datatype t) {  // (the shape's datatype: its TypeInfo is the entry's)
                return !significant ? MPI_DATATYPE_NULL : t == c.key_t ? (en->fixed ? MPI_DATATYPE_NULL : t) : derived(t);
            };
            const Uses uses{used(c.has_in && !c.in_place, st), used(c.has_out || c.in_place, rt)};
            return start_collplan<K>(f, comm, k, *en, uses, [=](CollRequest& r) {
                const Go g{f, comm, &r};
                if (none) return go_nothing(g);
                if (as_is) return go(g, *r.slot, sbuf, rbuf);
                return run_packed(g, *r.slot, c, sbuf, st, rbuf, rt);
            });
        }
    });
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


// Alltoallv runs a request made per call (per persistent request: once, at _init) from the count matrix. The
// byte layout of both sides goes into the slot (Slot::v, packed copies); `fill` packs the input. Returns the send
// address (MPI_IN_PLACE: the input is in the receive buffer) and sets `recv`.
template <class Count, class Displ>
const char* alltoallv_sides(Slot& s, int P, const void* sbuf, const Count* scounts, const Displ* sdispls,
                            MPI_Datatype st, void* rbuf, const Count* rcounts, const Displ* rdispls, MPI_Datatype rt,
                            const TypeInfo& ri, bool fill, char*& recv) {
    std::vector<uint64_t> &sb = s.v[0], &sd = s.v[1], &rb = s.v[2], &rd = s.v[3];
    recv = side(rcounts, rdispls, rt, ri, rbuf, P, rb, rd, s.packed_out, false);
    if (sbuf == MPI_IN_PLACE && direct(ri)) return static_cast<const char*>(MPI_IN_PLACE);
    if (sbuf == MPI_IN_PLACE)  // pack the input out of rbuf; then it is an ordinary run
        return side(rcounts, rdispls, rt, ri, rbuf, P, sb, sd, s.packed_in, fill);
    return side(scounts, sdispls, st, info_of(st), sbuf, P, sb, sd, s.packed_in, fill);
}

// The request of an alltoallv whose sides are in s (collective: it gathers the count matrix).
void make_alltoallv(const Entry& en, Slot& s, MPI_Comm comm, const char* send, char* recv) {
    s.req = alltoallv_init(send, s.v[0].data(), s.v[1].data(), recv, s.v[2].data(), s.v[3].data(), comm, en.choice);
}

// Runs (blocking) or starts an alltoallv; `made`: its request exists (a persistent one, made at _init).
template <class Count, class Displ>
int launch_alltoallv(const Go& g, const Entry& en, Slot& s, int P, const void* sbuf, const Count* scounts,
                     const Displ* sdispls, MPI_Datatype st, void* rbuf, const Count* rcounts, const Displ* rdispls,
                     MPI_Datatype rt, bool made) {
    const TypeInfo ri = info_of(rt);
    char* recv = nullptr;
    const char* send = alltoallv_sides(s, P, sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, ri, true, recv);
    if (!made) make_alltoallv(en, s, g.comm, send, recv);  // (an error: the caller's, guarded / start_collplan)
    const bool out = !direct(ri);
    Slot* sp = &s;
    return go(g, s, send, recv, [=] {
        if (out)
            for (int i = 0; i < P; ++i)
                unpack(recv + sp->v[3][i], static_cast<int64_t>(sp->v[2][i]),
                       static_cast<char*>(rbuf) + static_cast<int64_t>(rdispls[i]) * ri.extent,
                       static_cast<int64_t>(rcounts[i]), rt);
    });
}

// The count and displacement arrays of a non-blocking or persistent vector call, copied at the call: the run reads
// them again at MPI_Start and at completion, and a program (or a binding such as mpi4py, whose arrays for the
// MPI_I...v calls are temporaries) need not keep its own. In place: the send side is ignored, and may be null.
template <class Count, class Displ>
struct VectorArgs {
    std::vector<Count> sc, rc;
    std::vector<Displ> sd, rd;
    VectorArgs(int P, bool in_place, const Count* scounts, const Displ* sdispls, const Count* rcounts,
               const Displ* rdispls)
        : rc(rcounts, rcounts + P), rd(rdispls, rdispls + P) {
        if (!in_place) sc.assign(scounts, scounts + P), sd.assign(sdispls, sdispls + P);
    }
};

// Alltoallv: every call gathers the count matrix (collectives.cpp), so the decision depends only on the
// communicator and MPI_IN_PLACE, and a request is made per call from the cached choice (a persistent one: at _init,
// with the arrays copied).
template <Collective f, Kind K, class Native, class Count, class Displ>
[[gnu::noinline]] int alltoallv_like(Native native, const Call& k, const void* sbuf, const Count* scounts,
                                     const Displ* sdispls, MPI_Datatype st, void* rbuf, const Count* rcounts,
                                     const Displ* rdispls, MPI_Datatype rt, MPI_Comm comm) {
    static_assert(f == C::alltoallv, "alltoallv_like runs alltoallv alone");
    if (!g_active[at(f)]) [[likely]] return count_native(f, nullptr, K), native();
    return guarded(f, comm, k, [&]() -> int {
        MaybeLock lock(g_locking);
        CommEntry* ce = comm_entry(comm);
        if (!ce->intra) return count_inter(*ce, f, K), native();
        const bool in_place = sbuf == MPI_IN_PLACE;
        if (!in_place && sbuf == rbuf) return count_alias(f, K), native();
        Entry* en = decide(*ce, f, in_place, 0, MPI_DATATYPE_NULL, MPI_OP_NULL, 0, [&](const Choice& ch) {
            check_choice(Collective::alltoallv, ch);
            return std::unique_ptr<Request>();
        });
        if (!en->use) return count_native(f, en, K), native();
        const int P = ce->P;
        const Uses uses{in_place ? MPI_DATATYPE_NULL : derived(st), derived(rt)};
        if constexpr (K == kBlocking) {
            return launch_alltoallv(Go{f, comm}, *en, en->own, P, sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt,
                                    false);
        } else if constexpr (K == kNonblocking) {
            const Entry* e = en;
            auto a = std::make_shared<const VectorArgs<Count, Displ>>(P, in_place, scounts, sdispls, rcounts, rdispls);
            return start_collplan<K>(f, comm, k, *en, uses, [=](CollRequest& r) {
                r.args = a;  // (the finish reads them at completion)
                return launch_alltoallv(Go{f, comm, &r}, *e, *r.slot, P, sbuf, a->sc.data(), a->sd.data(), st, rbuf,
                                        a->rc.data(), a->rd.data(), rt, false);
            });
        } else {
            const Entry* e = en;
            auto a = std::make_shared<const VectorArgs<Count, Displ>>(P, in_place, scounts, sdispls, rcounts, rdispls);
            auto launch = [=](CollRequest& r) {
                return launch_alltoallv(Go{f, comm, &r}, *e, *r.slot, P, sbuf, a->sc.data(), a->sd.data(), st, rbuf,
                                        a->rc.data(), a->rd.data(), rt, true);
            };
            return start_collplan<K>(f, comm, k, *en, uses, launch, [&](CollRequest& c) {
                char* recv = nullptr;
                const char* send = alltoallv_sides(*c.slot, P, sbuf, a->sc.data(), a->sd.data(), st, rbuf,
                                                   a->rc.data(), a->rd.data(), rt, info_of(rt), false, recv);
                make_alltoallv(*e, *c.slot, comm, send, recv);  // every rank, in the order of the _init calls
                c.slot->req->pin_tags();
            });
        }
    });
}

// The reductions as one rank's call sees them: the input, in_n elements at sbuf (in place: at rbuf), and the
// output, out_n elements at rbuf (reduce: at the root only).
struct ReductionCall {
    bool has_out = true, in_place = false;
    uint64_t in_n = 0, out_n = 0;
};

template <Collective f>
ReductionCall reduction_call(int P, int me, int root, const void* sbuf, uint64_t n) {
    static_assert(f == C::allreduce || f == C::reduce || f == C::reduce_scatter_block,
                  "reduction_call: a reduction of count elements (collectives.def) with no case here");
    ReductionCall c;
    c.has_out = f != C::reduce || me == root;
    c.in_place = sbuf == MPI_IN_PLACE && c.has_out;
    c.in_n = f == C::reduce_scatter_block ? static_cast<uint64_t>(P) * n : n;
    c.out_n = n;
    return c;
}

// The entry of a reduction of n elements (allreduce, reduce, reduce_scatter_block), keyed by count, root, datatype
// and operation: MPI requires them equal on every rank. The first call of a shape, or a derived datatype:
[[gnu::noinline]] Entry* reduction_entry_slow(CommEntry& ce, Entry* en, Collective f, uint64_t n, int root, MPI_Datatype t,
                                              MPI_Op op, MPI_Comm comm) {
    const TypeInfo ti = info_of(t);
    if (en && (en->ti.extent != ti.extent || en->ti.size != ti.size)) en = ce.shapes.forget_last();  // handle reused
    if (!en)
        en = decide(ce, f, n, static_cast<uint64_t>(root), t, op, n * static_cast<uint64_t>(ti.size),
                    [&](const Choice& ch) { return reduction_init(f, nullptr, nullptr, n, t, op, root, comm, ch); });
    en->ti = ti, en->fixed = ti.predefined;
    return en;
}
[[gnu::always_inline]] inline Entry* reduction_entry(CommEntry& ce, Collective f, uint64_t n, int root, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
    Entry* en = ce.shapes.find(f, n, static_cast<uint64_t>(root), t, op);
    if (en && en->fixed) [[likely]] return en;
    return reduction_entry_slow(ce, en, f, n, root, t, op, comm);
}


// Runs a reduction. Contiguous types run in place in the user's buffers; others (data inside each element's
// extent) run on copies laid out extent by extent and only their data are copied back, so the holes of the
// receive buffer stay untouched.
int run_reduction(const Go& g, const TypeInfo& ti, Slot& s, const ReductionCall& c, const void* sbuf, void* rbuf,
                  MPI_Datatype t) {
    if (ti.contiguous) return go(g, s, sbuf, rbuf);
    const uint64_t extent = static_cast<uint64_t>(ti.extent);
    // element i's extent starts at i * extent in the copies; the data lie at true_lb - lb into it
    const uint64_t span = (c.in_n - 1) * extent + static_cast<uint64_t>(ti.true_extent);
    s.packed_in.assign(c.in_n * extent, 0);
    const char* in = static_cast<const char*>(c.in_place ? rbuf : sbuf);
    std::memcpy(s.packed_in.data() + (ti.true_lb - ti.lb), in + ti.true_lb, span);
    s.packed_out.resize(c.out_n * extent);
    Slot* sp = &s;
    const bool out = c.has_out && c.out_n > 0;
    const uint64_t bytes = c.out_n * static_cast<uint64_t>(ti.size);
    const int64_t n = static_cast<int64_t>(c.out_n), lb = ti.lb;
    return go(g, s, s.packed_in.data(), c.has_out ? s.packed_out.data() : rbuf, [=] {
        if (!out) return;
        sp->packed_in.resize(bytes);  // the result's data, packed, then unpacked into the user's layout
        pack(sp->packed_out.data() - lb, n, t, sp->packed_in.data(), static_cast<int64_t>(bytes));
        unpack(sp->packed_in.data(), static_cast<int64_t>(bytes), rbuf, n, t);
    });
}

// A decided reduction: run now (blocking) or started (non-blocking, persistent).
template <Kind K>
int launch_reduction(Collective f, const Call& k, Entry& en, const ReductionCall& c, const void* sbuf, void* rbuf,
                     MPI_Datatype t, MPI_Comm comm) {
    const bool none = en.bytes == 0;
    if constexpr (K == kBlocking) {
        if (none) return count_collplan(f);
        return run_reduction(Go{f, comm}, en.ti, en.own, c, sbuf, rbuf, t);
    } else {
        const TypeInfo ti = en.ti;
        const Uses uses{MPI_DATATYPE_NULL, en.fixed ? MPI_DATATYPE_NULL : t, en.user_op ? en.shape.op : MPI_OP_NULL, t};
        return start_collplan<K>(f, comm, k, en, uses, [=](CollRequest& r) {
            const Go g{f, comm, &r};
            return none ? go_nothing(g) : run_reduction(g, ti, *r.slot, c, sbuf, rbuf, t);
        });
    }
}

// Allreduce, reduce, reduce_scatter_block: count elements of a datatype that is the same on every rank.
template <Collective f, Kind K, class Native, class Count>
[[gnu::noinline]] int reduction_like(Native native, const Call& k, int root, const void* sbuf, void* rbuf, Count count,
                                     MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
    if (!g_active[at(f)]) return count_native(f, nullptr, K), native();
    return guarded(f, comm, k, [&]() -> int {
        MaybeLock lock(g_locking);
        CommEntry* ce = comm_entry(comm);
        if (!ce->intra) return count_inter(*ce, f, K), native();
        const uint64_t n = static_cast<uint64_t>(count);
        Entry* en = reduction_entry(*ce, f, n, root, t, op, comm);
        const ReductionCall c = reduction_call<f>(ce->P, ce->rank, root, sbuf, n);  // reduce: out at the root alone
        if (c.has_out && sbuf == rbuf && sbuf != MPI_IN_PLACE && en->bytes > 0) return count_alias(f, K), native();
        if (!en->use) return count_native(f, en, K), native();
        return launch_reduction<K>(f, k, *en, c, sbuf, rbuf, t, comm);
    });
}

// The entry of a reduce_scatter of the counts in CommEntry::key (`total` elements), datatype and operation.
Entry* reduce_scatter_entry(CommEntry& ce, uint64_t total, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
    const Collective f = C::reduce_scatter;
    Entry* en = ce.counted.find(f, ce.key, t, op);
    if (en && en->fixed) return en;
    const TypeInfo ti = info_of(t);
    if (en && (en->ti.extent != ti.extent || en->ti.size != ti.size)) en = ce.counted.forget_last();  // handle reused
    if (!en)
        en = decide_counted(ce, f, t, op, total * static_cast<uint64_t>(ti.size), [&](const Choice& ch) {
            return reduce_scatter_init(nullptr, nullptr, ce.key.data(), t, op, comm, ch);
        });
    en->ti = ti, en->fixed = ti.predefined;
    return en;
}


// Reduce_scatter: recvcounts (equal on every rank, MPI's rule), the datatype and the operation key the decision
// (CommEntry::counted).
template <Collective f, Kind K, class Native, class Count>
[[gnu::noinline]] int reduce_scatter_like(Native native, const Call& k, const void* sbuf, void* rbuf,
                                          const Count* counts, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
    static_assert(f == C::reduce_scatter, "reduce_scatter_like runs reduce_scatter alone");
    if (!g_active[at(f)]) return count_native(f, nullptr, K), native();
    return guarded(f, comm, k, [&]() -> int {
        MaybeLock lock(g_locking);
        CommEntry* ce = comm_entry(comm);
        if (!ce->intra) return count_inter(*ce, f, K), native();
        ce->key.assign(counts, counts + ce->P);
        uint64_t total = 0;
        for (uint64_t x : ce->key) total += x;
        Entry* en = reduce_scatter_entry(*ce, total, t, op, comm);
        ReductionCall c;
        c.in_place = sbuf == MPI_IN_PLACE;
        c.in_n = total, c.out_n = ce->key[static_cast<size_t>(ce->rank)];
        if (!c.in_place && sbuf == rbuf && en->bytes > 0) return count_alias(f, K), native();
        if (!en->use) return count_native(f, en, K), native();
        return launch_reduction<K>(f, k, *en, c, sbuf, rbuf, t, comm);
    });
}

// Allgatherv runs on the layout its request was made for: the blocks one after the other (Entry::displs). A
// receive buffer laid out so (a contiguous datatype, displacements in that order without gaps) is used as it is;
// any other is staged: the input packed (in place: out of the receive buffer), the result unpacked block by block
// (holes untouched).
template <class Count, class Displ>
int run_allgatherv(const Go& g, const Entry& en, Slot& s, int me, const void* sbuf, Count scount, MPI_Datatype st,
                   void* rbuf, const Count* rcounts, const Displ* displs, MPI_Datatype rt, const TypeInfo& ri) {
    if (en.bytes == 0) return go_nothing(g);
    const size_t P = en.counts.size(), m = static_cast<size_t>(me);
    const bool in_place = sbuf == MPI_IN_PLACE;
    bool as_is = direct(ri);
    for (size_t j = 0; as_is && j < P; ++j)
        as_is = en.counts[j] == 0 || static_cast<int64_t>(displs[j]) * ri.extent == static_cast<int64_t>(en.displs[j]);
    if (as_is && (in_place || direct(info_of(st)))) return go(g, s, sbuf, rbuf);
    const int64_t extent = ri.extent;
    auto block = [=](size_t j) { return static_cast<char*>(rbuf) + static_cast<int64_t>(displs[j]) * extent; };
    const void* send = sbuf;
    if (in_place || !direct(info_of(st))) {
        s.packed_in.resize(en.counts[m]);
        const int64_t bytes = static_cast<int64_t>(en.counts[m]);
        if (in_place) pack(block(m), static_cast<int64_t>(rcounts[m]), rt, s.packed_in.data(), bytes);
        else pack(sbuf, static_cast<int64_t>(scount), st, s.packed_in.data(), bytes);
        send = s.packed_in.data();
    }
    s.packed_out.resize(en.bytes);
    const Entry* e = &en;
    Slot* sp = &s;
    return go(g, s, send, s.packed_out.data(), [=] {
        for (size_t j = 0; j < P; ++j)
            if (e->counts[j] > 0)
                unpack(sp->packed_out.data() + e->displs[j], static_cast<int64_t>(e->counts[j]), block(j),
                       static_cast<int64_t>(rcounts[j]), rt);
    });
}

// Allgatherv: the bytes of every rank's block (recvcounts[j] x the receive type's size, equal on every rank) key
// the decision (CommEntry::counted); displacements are this rank's layout and do not enter it.
template <Collective f, Kind K, class Native, class Count, class Displ>
[[gnu::noinline]] int allgatherv_like(Native native, const Call& k, const void* sbuf, Count scount, MPI_Datatype st,
                                      void* rbuf, const Count* rcounts, const Displ* displs, MPI_Datatype rt,
                                      MPI_Comm comm) {
    static_assert(f == C::allgatherv, "allgatherv_like runs allgatherv alone");
    if (!g_active[at(f)]) return count_native(f, nullptr, K), native();
    return guarded(f, comm, k, [&]() -> int {
        MaybeLock lock(g_locking);
        CommEntry* ce = comm_entry(comm);
        if (!ce->intra) return count_inter(*ce, f, K), native();
        const TypeInfo ri = info_of(rt);
        const size_t P = static_cast<size_t>(ce->P);
        ce->key.resize(P);
        uint64_t total = 0;
        for (size_t j = 0; j < P; ++j)
            total += ce->key[j] = static_cast<uint64_t>(rcounts[j]) * static_cast<uint64_t>(ri.size);
        std::vector<uint64_t> offs;  // the request's displacements, when this call makes it
        Entry* en = decide_counted(*ce, f, MPI_DATATYPE_NULL, MPI_OP_NULL, total, [&](const Choice& ch) {
            offs.resize(P);
            for (size_t j = 1; j < P; ++j) offs[j] = offs[j - 1] + ce->key[j - 1];
            return allgatherv_init(nullptr, nullptr, ce->key.data(), offs.data(), comm, ch);
        });
        if (!offs.empty()) en->displs = std::move(offs);
        const bool in_place = sbuf == MPI_IN_PLACE;
        if (!in_place && sbuf == rbuf && total > 0) return count_alias(f, K), native();
        if (!en->use) return count_native(f, en, K), native();
        const int me = ce->rank;
        const Uses uses{in_place ? MPI_DATATYPE_NULL : derived(st), ri.predefined ? MPI_DATATYPE_NULL : rt};
        if constexpr (K == kBlocking) {
            return run_allgatherv(Go{f, comm}, *en, en->own, me, sbuf, scount, st, rbuf, rcounts, displs, rt, ri);
        } else {  // the arrays copied: they are read again at completion
            const Entry* e = en;
            auto a = std::make_shared<const VectorArgs<Count, Displ>>(ce->P, true, nullptr, nullptr, rcounts, displs);
            return start_collplan<K>(f, comm, k, *en, uses, [=](CollRequest& r) {
                r.args = a;  // (the finish reads them at completion)
                return run_allgatherv(Go{f, comm, &r}, *e, *r.slot, me, sbuf, scount, st, rbuf, a->rc.data(),
                                      a->rd.data(), rt, ri);
            });
        }
    });
}

template <Collective f, Kind K, class Native>
[[gnu::noinline]] int barrier(Native native, const Call& k, MPI_Comm comm) {
    static_assert(f == C::barrier, "barrier runs barrier alone");
    if (!g_active[at(f)]) [[likely]] return count_native(f, nullptr, K), native();
    return guarded(f, comm, k, [&]() -> int {
        MaybeLock lock(g_locking);
        CommEntry* ce = comm_entry(comm);
        if (!ce->intra) return count_inter(*ce, f, K), native();
        Entry* en = decide(*ce, f, 0, 0, MPI_DATATYPE_NULL, MPI_OP_NULL, 0,
                           [&](const Choice& ch) { return barrier_init(comm, ch); });
        if (!en->use) return count_native(f, en, K), native();
        if constexpr (K == kBlocking) {
            return run(comm, f, *en->own.req, nullptr, nullptr);
        } else {
            return start_collplan<K>(f, comm, k, *en, Uses{},
                                     [=](CollRequest& r) { return go(Go{f, comm, &r}, *r.slot, nullptr, nullptr); });
        }
    });
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
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    // With the fingerprints, rank 0's clock and host, for COLLPLAN_PROFILE's common time zero (profile_open).
    const std::string host = profile_host();
    const unsigned long long host_key = fnv1a(host) | 1, now = static_cast<unsigned long long>(profile_now());
    unsigned long long mine[4] = {h, ~h, rank == 0 ? now : 0, rank == 0 ? host_key : 0}, all[4] = {};
    if (PMPI_Allreduce(mine, all, 4, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS) return;
    g_agreed = all[0] == mine[0] && all[1] == mine[1];
    // A disagreement still goes through the decisions (all decline); COLLPLAN_VERBOSE logs every collective's.
    for (size_t i = 0; i < kNumColl; ++i) g_active[i] = config().active[i] || config().verbose;
    for (bool a : g_active) g_forget = g_forget || a;
    if (!config().env_warnings.empty() && rank == 0)
        std::fprintf(stderr, "collplan: warning: %s\n", config().env_warnings.c_str());
    if (!config().wisdom_error.empty() && rank == 0)
        std::fprintf(stderr, "collplan: warning: %s; the MPI library's collectives run instead\n",
                     config().wisdom_error.c_str());
    if (!g_agreed && rank == 0)
        std::fprintf(stderr, "collplan: warning: the COLLPLAN_* settings differ between ranks; every collective runs natively\n");
    progress_init(provided, rank);
    profile_open(all[3] == host_key ? static_cast<int64_t>(all[2]) : profile_now(), host);
    g_watch = g_stats_on || g_profile;
}

// The name of f's non-blocking (kind 1: MPI_Iallreduce) or persistent (kind 2: MPI_Allreduce_init) version.
std::string kind_name(Collective f, int kind) {
    std::string n(describe(f).mpi_name);
    if (kind == kNonblocking) n = "MPI_I" + std::string(1, static_cast<char>(n[4] - 'A' + 'a')) + n.substr(5);
    if (kind == kPersistent) n += "_init";
    return n;
}

// COLLPLAN_STATS: the calls of every rank, summed on rank 0 of MPI_COMM_WORLD, and rank 0's reasons to run natively.
// Non-blocking calls are counted as MPI_I..., persistent ones as MPI_..._init (collplan: each MPI_Start; native:
// the init call).
void print_stats() {
    constexpr int n = 2 * 3 * kNumColl;
    unsigned long long mine[n], sum[n] = {};
    for (size_t k = 0; k < 3; ++k)
        for (size_t f = 0; f < kNumColl; ++f)
            mine[2 * (k * kNumColl + f)] = g_stats.collplan[k][f], mine[2 * (k * kNumColl + f) + 1] = g_stats.native[k][f];
    PMPI_Reduce(mine, sum, n, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) return;
    // One write for all the lines: a launcher that forwards the ranks' output in chunks (Open MPI 4) then never
    // puts another rank's text between them.
    std::string text;
    for (int k = 0; k < 3; ++k)
        for (Collective f : kCollectives) {
            const size_t i = 2 * (static_cast<size_t>(k) * kNumColl + at(f));
            const unsigned long long c = sum[i], nat = sum[i + 1];
            if (c + nat > 0)
                text += "collplan-stats: " + kind_name(f, k) + " collplan=" + std::to_string(c) +
                        " native=" + std::to_string(nat) + "\n";
        }
    for (const auto& [why, n] : g_stats.reasons)
        if (n > 0) text += "collplan-stats: native " + std::to_string(n) + " " + why + "\n";
    std::fwrite(text.data(), 1, text.size(), stderr);
    std::fflush(stderr);
}

void before_finalize() {
    progress_finalize();
    profile_close();
    MaybeLock lock(g_locking);
    if (g_stats_on) print_stats();
    g_comms.clear();  // the cached requests free their MPI objects while MPI still runs
    g_last_comm = nullptr, g_last_comm_key = 0;
    for (bool& a : g_active) a = false;
}

}  // namespace
}  // namespace collplan::mpi

namespace collplan::mpi::pmpi {
// The program frees t or op: the decisions keyed by the handle go (a later datatype or operation may get it).
void forget_handle(MPI_Datatype t, MPI_Op op) {
    std::vector<std::shared_ptr<Entry>> gone;
    g_comms.for_each([&](CommEntry& ce) {
        ce.shapes.forget(t, op, gone);
        ce.counted.forget(t, op, gone);
    });
}
}  // namespace collplan::mpi::pmpi

using namespace collplan::mpi;

extern "C" {

int MPI_Init(int* argc, char*** argv) {
    profile_init_entered();
    const int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) after_init(MPI_THREAD_SINGLE);
    return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
    profile_init_entered();
    const int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) after_init(*provided);
    return rc;
}

int MPI_Finalize() {
    before_finalize();
    return PMPI_Finalize();
}

// The interceptors, generated from collectives.def: per row MPI_<Spelling>, MPI_I<id>, MPI_<Spelling>_init (where
// the library has MPI-4 persistent collectives) and, where the library has them, their large-count versions (_c; MPI
// has no MPI_Barrier_c). Each first tests whether anything is to be done for its collective; if not it calls PMPI_
// at once (one branch). Else the template of its argument shape runs the call
// (COLLPLAN_RUN_<args>), with `native` -- the library's own call, for every fallback -- and `k`, where a request goes.
#define COLLPLAN_PARAMS_bytes(Count, Displ) \
    const void *sbuf, Count scount, MPI_Datatype st, void *rbuf, Count rcount, MPI_Datatype rt, MPI_Comm comm
#define COLLPLAN_ARGS_bytes sbuf, scount, st, rbuf, rcount, rt, comm
#define COLLPLAN_RUN_bytes(id, K) bytes_like<C::id, K>(native, k, 0, sbuf, scount, st, rbuf, rcount, rt, comm)

#define COLLPLAN_PARAMS_bytes_root(Count, Displ) \
    const void *sbuf, Count scount, MPI_Datatype st, void *rbuf, Count rcount, MPI_Datatype rt, int root, MPI_Comm comm
#define COLLPLAN_ARGS_bytes_root sbuf, scount, st, rbuf, rcount, rt, root, comm
#define COLLPLAN_RUN_bytes_root(id, K) bytes_like<C::id, K>(native, k, root, sbuf, scount, st, rbuf, rcount, rt, comm)

#define COLLPLAN_PARAMS_bcast(Count, Displ) void *buf, Count count, MPI_Datatype t, int root, MPI_Comm comm
#define COLLPLAN_ARGS_bcast buf, count, t, root, comm
#define COLLPLAN_RUN_bcast(id, K) bytes_like<C::id, K>(native, k, root, nullptr, count, t, buf, count, t, comm)

#define COLLPLAN_PARAMS_reduction(Count, Displ) \
    const void *sbuf, void *rbuf, Count count, MPI_Datatype t, MPI_Op op, MPI_Comm comm
#define COLLPLAN_ARGS_reduction sbuf, rbuf, count, t, op, comm
#define COLLPLAN_RUN_reduction(id, K) reduction_like<C::id, K>(native, k, 0, sbuf, rbuf, count, t, op, comm)

#define COLLPLAN_PARAMS_reduction_root(Count, Displ) \
    const void *sbuf, void *rbuf, Count count, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm
#define COLLPLAN_ARGS_reduction_root sbuf, rbuf, count, t, op, root, comm
#define COLLPLAN_RUN_reduction_root(id, K) reduction_like<C::id, K>(native, k, root, sbuf, rbuf, count, t, op, comm)

#define COLLPLAN_PARAMS_allgatherv(Count, Displ)                                                                \
    const void *sbuf, Count scount, MPI_Datatype st, void *rbuf, const Count rcounts[], const Displ displs[], \
        MPI_Datatype rt, MPI_Comm comm
#define COLLPLAN_ARGS_allgatherv sbuf, scount, st, rbuf, rcounts, displs, rt, comm
#define COLLPLAN_RUN_allgatherv(id, K) allgatherv_like<C::id, K>(native, k, sbuf, scount, st, rbuf, rcounts, displs, rt, comm)

#define COLLPLAN_PARAMS_alltoallv(Count, Displ)                                                   \
    const void *sbuf, const Count scounts[], const Displ sdispls[], MPI_Datatype st, void *rbuf, \
        const Count rcounts[], const Displ rdispls[], MPI_Datatype rt, MPI_Comm comm
#define COLLPLAN_ARGS_alltoallv sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, comm
#define COLLPLAN_RUN_alltoallv(id, K) \
    alltoallv_like<C::id, K>(native, k, sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, comm)

#define COLLPLAN_PARAMS_reduce_scatter(Count, Displ) \
    const void *sbuf, void *rbuf, const Count rcounts[], MPI_Datatype t, MPI_Op op, MPI_Comm comm
#define COLLPLAN_ARGS_reduce_scatter sbuf, rbuf, rcounts, t, op, comm
#define COLLPLAN_RUN_reduce_scatter(id, K) reduce_scatter_like<C::id, K>(native, k, sbuf, rbuf, rcounts, t, op, comm)

#define COLLPLAN_PARAMS_barrier(Count, Displ) MPI_Comm comm
#define COLLPLAN_ARGS_barrier comm
#define COLLPLAN_RUN_barrier(id, K) barrier<C::id, K>(native, k, comm)

// What COLLPLAN_PROFILE records of a call (pc), described from its arguments with its communicator's size and rank
// (pv): describe_bytes, describe_reduction, describe_counts above.
#define COLLPLAN_DESCRIBE_bytes(id) describe_bytes<C::id>(pc, pv, 0, sbuf, scount, st, rbuf, rcount, rt)
#define COLLPLAN_DESCRIBE_bytes_root(id) describe_bytes<C::id>(pc, pv, root, sbuf, scount, st, rbuf, rcount, rt)
#define COLLPLAN_DESCRIBE_bcast(id) describe_bytes<C::id>(pc, pv, root, nullptr, count, t, buf, count, t)
#define COLLPLAN_DESCRIBE_reduction(id) describe_reduction<C::id>(pc, 0, count, t, op)
#define COLLPLAN_DESCRIBE_reduction_root(id) describe_reduction<C::id>(pc, root, count, t, op)
#define COLLPLAN_DESCRIBE_allgatherv(id) describe_counts(pc, pv, rcounts, rt)
#define COLLPLAN_DESCRIBE_alltoallv(id) \
    describe_counts(pc, pv, sbuf == MPI_IN_PLACE ? rcounts : scounts, sbuf == MPI_IN_PLACE ? rt : st)
#define COLLPLAN_DESCRIBE_reduce_scatter(id) describe_counts(pc, pv, rcounts, t), pc.op = op
#define COLLPLAN_DESCRIBE_barrier(id) (void)pv

// One interceptor: blocking, non-blocking (MPI_I...: `req`), persistent (..._init: `info`, `req`). Count, Displ,
// Sfx: int, int and nothing, or MPI_Count, MPI_Aint and _c. `native` copies the arguments ([=]): capturing them by
// reference takes their addresses, and the compiler then stores every argument before the pass-through test.
// COLLPLAN_PROFILE: the call runs between two clock reads and is recorded (profile.hpp) -- `reqp`: where the
// program's request is.
#define COLLPLAN_PASS_THROUGH(id, call) \
    if (!g_active[at(C::id)] && !g_watch) [[likely]] return call
#define COLLPLAN_RECORDED(id, args, K, reqp)                   \
    if (ProfileComm pv; g_profile && profile_comm(comm, pv)) { \
        ProfileCall pc{C::id, K};                              \
        {                                                      \
            MaybeLock lock(g_locking); /* (info_of's cache) */ \
            COLLPLAN_DESCRIBE_##args(id);                      \
        }                                                      \
        const ProfileInside inside(true);                      \
        pc.enter_ns = profile_now();                           \
        const int rc = COLLPLAN_RUN_##args(id, K);             \
        profile_record(comm, pc, rc, reqp);                    \
        return rc;                                             \
    }
#define COLLPLAN_BLOCKING(id, Spelling, args, Count, Displ, Sfx)                 \
    int MPI_##Spelling##Sfx(COLLPLAN_PARAMS_##args(Count, Displ)) {               \
        COLLPLAN_PASS_THROUGH(id, PMPI_##Spelling##Sfx(COLLPLAN_ARGS_##args));   \
        auto native = [=] { return PMPI_##Spelling##Sfx(COLLPLAN_ARGS_##args); }; \
        const Call k;                                                             \
        COLLPLAN_RECORDED(id, args, kBlocking, nullptr)                           \
        return COLLPLAN_RUN_##args(id, kBlocking);                                \
    }
#define COLLPLAN_NONBLOCKING(id, Spelling, args, Count, Displ, Sfx)                    \
    int MPI_I##id##Sfx(COLLPLAN_PARAMS_##args(Count, Displ), MPI_Request* req) {        \
        COLLPLAN_PASS_THROUGH(id, PMPI_I##id##Sfx(COLLPLAN_ARGS_##args, req));         \
        auto native = [=] { return PMPI_I##id##Sfx(COLLPLAN_ARGS_##args, req); };       \
        const Call k{req};                                                              \
        COLLPLAN_RECORDED(id, args, kNonblocking, req)                                  \
        return COLLPLAN_RUN_##args(id, kNonblocking);                                   \
    }
#define COLLPLAN_PERSISTENT(id, Spelling, args, Count, Displ, Sfx)                                          \
    int MPI_##Spelling##_init##Sfx(COLLPLAN_PARAMS_##args(Count, Displ), MPI_Info info, MPI_Request* req) { \
        COLLPLAN_PASS_THROUGH(id, PMPI_##Spelling##_init##Sfx(COLLPLAN_ARGS_##args, info, req));            \
        auto native = [=] { return PMPI_##Spelling##_init##Sfx(COLLPLAN_ARGS_##args, info, req); };         \
        const Call k{req, info};                                                                            \
        COLLPLAN_RECORDED(id, args, kPersistent, req)                                                       \
        return COLLPLAN_RUN_##args(id, kPersistent);                                                        \
    }

#define X(id, Spelling, args)                         \
    COLLPLAN_BLOCKING(id, Spelling, args, int, int, ) \
    COLLPLAN_NONBLOCKING(id, Spelling, args, int, int, )
#include "collplan/runtime/mpi/collectives.def"
#undef X

#if COLLPLAN_HAVE_PERSISTENT  // decided at _init as the blocking twin would be; MPI_Start runs the schedule
#define X(id, Spelling, args) COLLPLAN_PERSISTENT(id, Spelling, args, int, int, )
#include "collplan/runtime/mpi/collectives.def"
#undef X
#endif

#if COLLPLAN_HAVE_LARGE_COUNT  // large-count versions (MPICH 4+; Open MPI 5.0 has none)
#define COLLPLAN_LARGE_COUNT(id, Spelling, args)                       \
    COLLPLAN_BLOCKING(id, Spelling, args, MPI_Count, MPI_Aint, _c)     \
    COLLPLAN_NONBLOCKING(id, Spelling, args, MPI_Count, MPI_Aint, _c)  \
    COLLPLAN_PERSISTENT(id, Spelling, args, MPI_Count, MPI_Aint, _c)
#define COLLPLAN_LARGE_COUNT_bytes COLLPLAN_LARGE_COUNT
#define COLLPLAN_LARGE_COUNT_bytes_root COLLPLAN_LARGE_COUNT
#define COLLPLAN_LARGE_COUNT_bcast COLLPLAN_LARGE_COUNT
#define COLLPLAN_LARGE_COUNT_reduction COLLPLAN_LARGE_COUNT
#define COLLPLAN_LARGE_COUNT_reduction_root COLLPLAN_LARGE_COUNT
#define COLLPLAN_LARGE_COUNT_allgatherv COLLPLAN_LARGE_COUNT
#define COLLPLAN_LARGE_COUNT_alltoallv COLLPLAN_LARGE_COUNT
#define COLLPLAN_LARGE_COUNT_reduce_scatter COLLPLAN_LARGE_COUNT
#define COLLPLAN_LARGE_COUNT_barrier(id, Spelling, args)
#define X(id, Spelling, args) COLLPLAN_LARGE_COUNT_##args(id, Spelling, args)
#include "collplan/runtime/mpi/collectives.def"
#undef X
#endif

}  // extern "C"
