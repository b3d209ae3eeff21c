// libcollplan_pmpi.so, part two: the requests of the non-blocking and persistent collectives that pmpi.cpp runs as
// collplan schedules (the handle: pmpi_requests.hpp), and every MPI call that takes a request -- MPI_Start(all),
// MPI_Wait, MPI_Test, MPI_Waitall/any/some, MPI_Testall/any/some, MPI_Request_get_status(_any/_all/_some),
// MPI_Request_free, MPI_Cancel, MPI_Request_c2f -- interposed so that they know collplan's handles and advance
// the schedules; and the blocking point-to-point calls (MPI_Recv, MPI_Send, MPI_Sendrecv, MPI_Probe, ...), which
// advance them while one runs.
//
// Cost: while the program holds no collplan request (always, in a program with no non-blocking or persistent
// collective that collplan runs) each of these is one load, one branch and the tail call to PMPI_ (bench/README.md,
// "Drop-in overhead"). Otherwise (the slow path):
// - a call on collplan's requests alone answers from the table; MPI_Wait on the one schedule that runs waits in
//   the schedule's own MPI calls, as the blocking collective does;
// - a call on an array that mixes them with the MPI library's requests hands the library a copy with
//   MPI_REQUEST_NULL in collplan's places and merges the answers: MPI_Waitany's index, MPI_Testsome's list (the
//   collplan requests first), MPI_UNDEFINED only when no request of either kind is active;
// - while a schedule runs, a call never blocks in the MPI library: it advances every running schedule
//   (Request::test, which never blocks) and asks the library without blocking (PMPI_Test*), until its requests are
//   complete -- so MPI_Waitall on [a receive, a collective] completes where the message is sent only after the
//   collective completed on the sender, and a wait on a point-to-point request advances the collectives in flight;
// - a blocking point-to-point call while a schedule runs is its non-blocking twin, polled the same way;
// - the executor's own MPI_Testall/MPI_Waitall (this library calls the MPI_ names) come back here: a thread-local
//   flag sends them straight to PMPI_ while the schedules are being advanced.
// COLLPLAN_PROGRESS=thread adds a thread that advances the schedules while the program computes (docs/runtime.md,
// "Non-blocking and persistent collectives").
#include "collplan/pmpi/pmpi_requests.hpp"
#include "collplan/pmpi/profile.hpp"

#include <sched.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <thread>
#include <type_traits>

namespace collplan::mpi::pmpi {

bool g_locking = false;
std::recursive_mutex g_mu;
bool g_forget = false;

namespace {

// ------------------------------------------------------------------------------------------------- state
static thread_local bool t_inside __attribute__((tls_model("initial-exec"))) = false;  // advancing schedules

// Records the program may hold a handle of (and 1 while the recorder watches requests: watch_requests); 0: every
// call passes straight through. Changed only by the thread
// that holds g_mu (or the only thread): a plain load and store, no locked instruction.
std::atomic<int> g_live{0};
void add_live(int d) { g_live.store(g_live.load(std::memory_order_relaxed) + d, std::memory_order_relaxed); }
} // namespace

bool g_watch_requests = false;
// Watching counts as one live record: the request calls then take their slow paths, which pass the library's own
// requests through and report to the recorder (the interceptors at the end of this file).
void watch_requests(bool on) {
    if (on != g_watch_requests) add_live(on ? 1 : -1);
    g_watch_requests = on;
}

namespace {
std::vector<CollRequest*>& g_table = *new std::vector<CollRequest*>;  // by index; records are reused, never freed
std::vector<uint32_t>& g_free = *new std::vector<uint32_t>;
std::vector<CollRequest*>& g_running = *new std::vector<CollRequest*>;
std::atomic<int> g_nrunning{0};  // g_running.size(), readable without the lock

// The statuses the MPI library's own collective requests give (captured once on MPI_COMM_SELF): completed
// non-blocking [0] and persistent [1] ones (MPI_SOURCE and MPI_TAG as the library sets them; count 0, not
// cancelled), and an inactive persistent one (the "empty status"; g_inactive_error: whether the library writes its
// MPI_ERROR, else the caller's value stays).
MPI_Status g_done[2], g_inactive;
bool g_have_statuses = false, g_inactive_error = false;

void capture_statuses() {
    g_have_statuses = true;
    MPI_Request r = MPI_REQUEST_NULL;
    PMPI_Ibarrier(MPI_COMM_SELF, &r);
    PMPI_Wait(&r, &g_done[0]);
    g_done[1] = g_done[0];
    constexpr int kUnset = -77777;
    g_inactive.MPI_ERROR = kUnset;
    // The empty status, of an inactive persistent request: a receive's (MPICH 4.0's MPI_Wait on an inactive
    // persistent collective request never returns).
    PMPI_Recv_init(nullptr, 0, MPI_BYTE, 0, 0, MPI_COMM_SELF, &r);
    PMPI_Wait(&r, &g_inactive);
    PMPI_Request_free(&r);
#if COLLPLAN_HAVE_PERSISTENT
    PMPI_Barrier_init(MPI_COMM_SELF, MPI_INFO_NULL, &r);
    PMPI_Start(&r);
    PMPI_Wait(&r, &g_done[1]);
    PMPI_Request_free(&r);
#endif
    g_inactive_error = g_inactive.MPI_ERROR != kUnset;
    for (MPI_Status& st : g_done) {
        PMPI_Status_set_elements(&st, MPI_BYTE, 0);
        PMPI_Status_set_cancelled(&st, 0);
    }
}

// The empty status of an inactive request, into st (not ignored).
void inactive_status(MPI_Status* st) {
    const int error = st->MPI_ERROR;
    *st = g_inactive;
    if (!g_inactive_error) st->MPI_ERROR = error;
}

// ------------------------------------------------------------------------------------------------- handles
constexpr uint32_t kMaxRequests = 1u << 24;

// (Templates, so that only the branch of this MPI's handle type is compiled.)
template <class R = MPI_Request>
R encode(uint32_t i) {
    if constexpr (std::is_pointer_v<R>) return reinterpret_cast<R>((uintptr_t{0xc011} << 48) | (uintptr_t{i} << 4));
    else return static_cast<R>(0x1c000000u | i);
}

// Whether r has the form of collplan's handles, and its index.
template <class R>
bool decode(R r, uint32_t& i) {
    if constexpr (std::is_pointer_v<R>) {
        const auto v = reinterpret_cast<uintptr_t>(r);
        i = static_cast<uint32_t>((v & ((uintptr_t{1} << 48) - 1)) >> 4);
        return (v >> 48) == 0xc011 && (v & 0xf) == 0 && i < kMaxRequests;
    } else {
        const auto v = static_cast<uint32_t>(r);
        i = v & (kMaxRequests - 1);
        return (v & ~(kMaxRequests - 1)) == 0x1c000000u;
    }
}

}  // namespace

// Fortran handles of collplan's requests in an MPI whose C handles are pointers: [INT_MIN, INT_MIN + kMaxRequests).
constexpr int64_t kFortranBase = INT32_MIN;

MPI_Fint request_c2f(MPI_Request r) {
    uint32_t i = 0;
    if constexpr (std::is_pointer_v<MPI_Request>) {
        if (decode(r, i)) return static_cast<MPI_Fint>(kFortranBase + i);
    }
    return PMPI_Request_c2f(r);
}

MPI_Request request_f2c(MPI_Fint f) {
    if constexpr (std::is_pointer_v<MPI_Request>) {
        if (f < kFortranBase + kMaxRequests) return encode(static_cast<uint32_t>(int64_t{f} - kFortranBase));
    }
    return PMPI_Request_f2c(f);
}

namespace {

// The live collplan request r names, or null (the MPI library's requests, MPI_REQUEST_NULL).
CollRequest* ours(MPI_Request r) {
    uint32_t i = 0;
    if (!decode(r, i) || i >= g_table.size()) return nullptr;
    CollRequest* c = g_table[i];
    return c->live ? c : nullptr;
}

// A handle of collplan's form that names no live request: freed, or never made. The MPI library cannot take it.
bool stale(MPI_Request r) {
    uint32_t i = 0;
    return decode(r, i) && !ours(r);
}

int stale_error(const char* call) {
    std::fprintf(stderr, "collplan: %s: the request was freed or never created (MPI_ERR_REQUEST)\n", call);
    std::fflush(stderr);
    PMPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_REQUEST);
    return MPI_ERR_REQUEST;
}

int request_error(CollRequest& c, int error, const char* what) {
    std::fprintf(stderr, "collplan: %s\n", what);
    std::fflush(stderr);
    PMPI_Comm_call_errhandler(c.comm, error);
    return error;
}

// ------------------------------------------------------------------------------------------------- holds
// Held datatypes and operations (pmpi_requests.hpp, hold()): by handle, the number of requests holding it and
// whether the program has freed it. Few at a time: a flat list.
struct Held {
    uint64_t key;
    MPI_Datatype type;
    MPI_Op op;
    int refs;
    bool freed;
};
std::vector<Held>& g_held = *new std::vector<Held>;

Held* held(uint64_t key, bool is_type) {
    for (Held& h : g_held)
        if (h.key == key && (h.type != MPI_DATATYPE_NULL) == is_type) return &h;
    return nullptr;
}

void take(MPI_Datatype t, MPI_Op op) {
    const bool is_type = t != MPI_DATATYPE_NULL;
    const uint64_t key = is_type ? handle_key(t) : handle_key(op);
    if (Held* h = held(key, is_type)) ++h->refs;
    else g_held.push_back(Held{key, t, op, 1, false});
}

// Lets one hold of c go; the program freed the object and nothing else holds it: freed now.
void let_go(MPI_Datatype t, MPI_Op op) {
    const bool is_type = t != MPI_DATATYPE_NULL;
    Held* h = held(is_type ? handle_key(t) : handle_key(op), is_type);
    if (!h || --h->refs > 0) return;
    const bool freed = h->freed;
    *h = g_held.back();
    g_held.pop_back();
    if (!freed) return;
    if (is_type) PMPI_Type_free(&t);
    else PMPI_Op_free(&op);
}

void release_holds(CollRequest& c) {
    for (MPI_Datatype& t : c.types)
        if (t != MPI_DATATYPE_NULL) let_go(t, MPI_OP_NULL), t = MPI_DATATYPE_NULL;
    if (c.op != MPI_OP_NULL) let_go(MPI_DATATYPE_NULL, c.op), c.op = MPI_OP_NULL;
}

// A free the program asks for: deferred while a request holds the object (the caller nulls the program's handle).
// (By key and kind: MPICH's MPI_Datatype and MPI_Op are both int.)
bool defer_free(uint64_t key, bool is_type) {
    Held* x = g_held.empty() ? nullptr : held(key, is_type);
    if (x) x->freed = true;
    return x != nullptr;
}

// The record is free again; it keeps its decision and slot for the next request of the same decision.
void destroy(CollRequest* c) {
    if (c->types[0] != MPI_DATATYPE_NULL || c->types[1] != MPI_DATATYPE_NULL || c->op != MPI_OP_NULL) [[unlikely]]
        release_holds(*c);
    c->live = false;
    add_live(-1);
    if (c->slot && c->slot->req && c->slot->req->active()) c->slot.reset();  // (a run that never ended: not reused)
    c->finish = nullptr;
    if (c->args) c->args.reset();
    if (c->persistent) c->launch = nullptr;
    g_free.push_back(c->index);
}

// ------------------------------------------------------------------------------------------------- progress
void drop_running(CollRequest& c) {
    for (CollRequest*& x : g_running)
        if (x == &c) {
            x = g_running.back();
            g_running.pop_back();
            break;
        }
    g_nrunning.store(static_cast<int>(g_running.size()), std::memory_order_relaxed);
}

// Nothing of collplan's in this call: no schedule runs and no handle has collplan's form. Then the call is the
// MPI library's alone (a program that keeps persistent collectives pays this check on its other requests).
template <class R>
bool foreign(int n, const R* reqs) {
    if (g_nrunning.load(std::memory_order_relaxed) != 0) return false;
    uint32_t i = 0;
    for (int k = 0; k < n; ++k)
        if (decode(reqs[k], i)) return false;
    return true;
}

void run_failed(CollRequest& c, const std::exception& e) {
    std::fprintf(stderr, "collplan: a non-blocking collective failed inside collplan's schedule: %s\n", e.what());
    std::fflush(stderr);
    c.error = MPI_ERR_INTERN;
}

// The run of c is over (done, or failed): off the running list, completed.
void ended(CollRequest& c) {
    drop_running(c);
    if (c.error != MPI_SUCCESS) PMPI_Comm_call_errhandler(c.comm, c.error);
    complete(c);
}

// Advances every running schedule once (lock held). Returns whether one is still running.
bool progress() {
    if (g_running.empty()) return false;
    const bool was = t_inside;
    t_inside = true;
    for (size_t i = 0; i < g_running.size();) {
        CollRequest& c = *g_running[i];
        bool done = false;
        try {
            done = c.slot->req->test();
        } catch (const std::exception& e) {
            run_failed(c, e);
            done = true;
        }
        if (done) ended(c);  // (takes c out of g_running: the next one is at i now)
        else ++i;
    }
    t_inside = was;
    return !g_running.empty();
}

bool progress_locked() {
    MaybeLock lock(g_locking);
    return progress();
}

// Until c's run is over. The one schedule running waits in its own MPI calls, as a blocking collective does
// (nothing else of collplan's needs this process meanwhile); several are advanced in turn.
void await(CollRequest& c) {
    if (c.state != CollRequest::running) return;
    if (!g_locking && g_running.size() == 1) {
        t_inside = true;
        try {
            c.slot->req->wait();
        } catch (const std::exception& e) {
            run_failed(c, e);
        }
        t_inside = false;
        ended(c);
        return;
    }
    for (unsigned idle = 0; c.state == CollRequest::running; ++idle) {
        progress_locked();
        if (idle >= 64) sched_yield();  // let the ranks this one waits for run (oversubscribed)
    }
}

// ------------------------------------------------------------------------------------------------- statuses
// The status of a completed collplan request: the library's own; MPI_ERROR as it was before the call (`error`:
// MPI_Wait and MPI_Test leave it), unless the run failed.
void done_status(const CollRequest* c, MPI_Status* st, int error) {
    if (st == MPI_STATUS_IGNORE) return;
    *st = g_done[c->persistent];
    st->MPI_ERROR = c->error != MPI_SUCCESS ? c->error : error;
}

MPI_Status* status_at(MPI_Status* statuses, int i) {
    return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : statuses + i;
}

// A completion call returns c (signalled): its status; a non-blocking request is freed (*r = MPI_REQUEST_NULL),
// a persistent one becomes inactive. Returns the run's error.
int reap(CollRequest* c, MPI_Request* r, MPI_Status* st, int error) {
    done_status(c, st, error);
    const int e = c->error;
    if (c->persistent) {
        c->state = CollRequest::idle;
        c->error = MPI_SUCCESS;
    } else {
        destroy(c);
        *r = MPI_REQUEST_NULL;
    }
    return e;
}

// What a completion call gives for c once its run is over: the status (inactive: the empty one) and the code.
int returned(CollRequest* c, MPI_Request* r, MPI_Status* st) {
    const int before = st == MPI_STATUS_IGNORE ? MPI_SUCCESS : st->MPI_ERROR;
    if (c->state == CollRequest::idle) {
        if (st != MPI_STATUS_IGNORE) inactive_status(st);
        return MPI_SUCCESS;
    }
    return reap(c, r, st, before);
}

// ------------------------------------------------------------------------------------------------- arrays
// An array of requests split in two: the library's (`lib`: a copy with MPI_REQUEST_NULL where collplan's are) and
// collplan's (index, record).
struct Split {
    std::vector<MPI_Request> lib;
    std::vector<std::pair<int, CollRequest*>> mine;
    bool stale = false;

    void make(int n, const MPI_Request* reqs) {
        lib.assign(reqs, reqs + n);
        mine.clear();
        stale = false;
        for (int i = 0; i < n; ++i) {
            uint32_t k = 0;
            if (!decode(reqs[i], k)) continue;
            if (CollRequest* c = ours(reqs[i])) mine.emplace_back(i, c), lib[static_cast<size_t>(i)] = MPI_REQUEST_NULL;
            else stale = true;
        }
    }
    // The library's answer back into the program's array (it frees completed requests).
    void back(MPI_Request* reqs) const {
        size_t k = 0;
        for (size_t i = 0; i < lib.size(); ++i) {
            if (k < mine.size() && mine[k].first == static_cast<int>(i)) {
                ++k;
                continue;
            }
            reqs[i] = lib[i];
        }
    }
    bool running() const {
        for (const auto& [i, c] : mine)
            if (c->state == CollRequest::running) return true;
        return false;
    }
    bool active() const {  // MPI's "active": started and not yet returned
        for (const auto& [i, c] : mine)
            if (c->state != CollRequest::idle) return true;
        return false;
    }
    void inactive_statuses(MPI_Status* sts) const {  // collplan's inactive requests: the empty status
        if (sts == MPI_STATUSES_IGNORE) return;
        for (const auto& [i, c] : mine)
            if (c->state == CollRequest::idle) inactive_status(&sts[i]);
    }
};

Split& split_buffer() {
    static thread_local Split s;
    return s;
}

// The start of the array calls that return at once (lock held): advance the schedules, then split the array.
Split& advance_and_split(int n, const MPI_Request* reqs) {
    progress();
    Split& s = split_buffer();
    s.make(n, reqs);
    return s;
}

// Polls `attempt` (a PMPI_Test* call; sets done) while a schedule runs, advancing them in between; blocks in
// `block` (its PMPI_Wait* twin) once none runs.
template <class Attempt, class Block>
int poll(Attempt attempt, Block block) {
    for (unsigned idle = 0;; ++idle) {
        if (!progress_locked()) return block();
        int done = 0;
        const int rc = attempt(done);
        if (rc != MPI_SUCCESS || done) return rc;
        if (idle >= 64) sched_yield();
    }
}

// After an array call returned collplan's requests among others: when one of them failed, the call's code is
// MPI_ERR_IN_STATUS (statuses given: every returned status says its own code) or the failure's.
int merge_errors(int rc, int ours_error, MPI_Status* sts, int from, int to) {
    if (ours_error == MPI_SUCCESS) return rc;
    if (sts == MPI_STATUSES_IGNORE) return rc == MPI_SUCCESS ? ours_error : rc;
    if (rc == MPI_SUCCESS)
        for (int k = from; k < to; ++k) sts[k].MPI_ERROR = MPI_SUCCESS;
    return MPI_ERR_IN_STATUS;
}

// ------------------------------------------------------------------------------------------------ progress thread
bool g_thread_on = false, g_thread_stop = false;
std::thread* g_thread = nullptr;
std::condition_variable_any& g_wake = *new std::condition_variable_any;

void progress_thread() {
    std::unique_lock<std::recursive_mutex> lock(g_mu);
    while (!g_thread_stop) {
        if (g_running.empty()) {
            g_wake.wait(lock);
            continue;
        }
        progress();
        lock.unlock();
        std::this_thread::yield();
        lock.lock();
    }
}

}  // namespace

// ------------------------------------------------------------------------------------------------ the requests
CollRequest* new_request(MPI_Comm comm, bool persistent, MPI_Request* out) {
    if (!g_have_statuses) [[unlikely]] capture_statuses();
    CollRequest* c = nullptr;
    if (!g_free.empty()) {
        c = g_table[g_free.back()];
        g_free.pop_back();
    } else {
        if (g_table.size() >= kMaxRequests) throw std::runtime_error("more than 2^24 collplan requests at once");
        c = new CollRequest;
        c->index = static_cast<uint32_t>(g_table.size());
        g_table.push_back(c);
    }
    c->comm = comm, c->persistent = persistent, c->live = true, c->user_freed = false;
    c->error = MPI_SUCCESS;
    c->state = persistent ? CollRequest::idle : CollRequest::running;
    add_live(1);
    *out = encode(c->index);
    return c;
}

void running(CollRequest& c) {
    c.state = CollRequest::running;
    g_running.push_back(&c);
    g_nrunning.store(static_cast<int>(g_running.size()), std::memory_order_relaxed);
    if (g_thread_on) g_wake.notify_one();
}

void complete(CollRequest& c) {
    if (c.finish && c.error == MPI_SUCCESS) {
        try {
            c.finish();
        } catch (const std::exception& e) {  // (unpacking into the program's buffers: an MPI error)
            run_failed(c, e);
            PMPI_Comm_call_errhandler(c.comm, c.error);
        }
    }
    c.finish = nullptr;
    c.state = CollRequest::signalled;
    if (c.user_freed) destroy(&c);  // the program holds no handle
}

void fail(CollRequest& c, int error) {
    c.error = error;
    PMPI_Comm_call_errhandler(c.comm, error);
    complete(c);
}

void discard(CollRequest* c) { destroy(c); }

void hold(CollRequest& c, MPI_Datatype send_type, MPI_Datatype recv_type, MPI_Op op) {
    MPI_Datatype types[2] = {send_type, recv_type == send_type ? MPI_DATATYPE_NULL : recv_type};
    for (int i = 0; i < 2; ++i)
        if (types[i] != MPI_DATATYPE_NULL) take(types[i], MPI_OP_NULL), c.types[i] = types[i];
    if (op != MPI_OP_NULL) take(MPI_DATATYPE_NULL, op), c.op = op;
}

void release_slot(CollRequest& c) {
    if (c.slot && c.pool) c.pool->spare.push_back(std::move(c.slot));
    c.slot.reset(), c.pool.reset(), c.owner.reset();
}

void progress_init(int provided, int world_rank) {
    const char* p = std::getenv("COLLPLAN_PROGRESS");
    if (!p || std::strcmp(p, "thread") != 0) return;
    if (provided != MPI_THREAD_MULTIPLE) {
        if (world_rank == 0)
            std::fprintf(stderr, "collplan: warning: COLLPLAN_PROGRESS=thread needs MPI_THREAD_MULTIPLE (MPI_Init_thread); "
                                 "non-blocking collectives progress inside MPI calls only\n");
        return;
    }
    g_thread_on = true;
    g_thread = new std::thread(progress_thread);
}

void progress_finalize() {
    if (g_thread) {
        {
            std::lock_guard<std::recursive_mutex> lock(g_mu);
            g_thread_stop = true;
        }
        g_wake.notify_all();
        g_thread->join();
        delete g_thread;
        g_thread = nullptr, g_thread_on = false;
    }
    for (unsigned idle = 0; progress_locked(); ++idle)  // MPI_Finalize completes freed requests too
        if (idle >= 64) sched_yield();
    for (CollRequest* c : g_table)  // their schedules' MPI objects go while MPI runs
        if (!c->live) c->slot.reset(), c->pool.reset(), c->owner.reset();
}

// ------------------------------------------------------------------------------------------------ slow paths
namespace {

[[gnu::noinline]] int start_one(MPI_Request* r) {
    MaybeLock lock(g_locking);
    CollRequest* c = ours(*r);
    if (!c) return stale(*r) ? stale_error("MPI_Start") : PMPI_Start(r);
    if (!c->persistent)
        return request_error(*c, MPI_ERR_REQUEST, "MPI_Start: a non-blocking collective's request is not persistent");
    if (c->state != CollRequest::idle)
        return request_error(*c, MPI_ERR_REQUEST, "MPI_Start: the persistent collective request is active");
    c->state = CollRequest::running;
    try {
        return c->launch(*c);
    } catch (const std::exception& e) {  // an internal error is the call's MPI error, never an abort of the rank
        run_failed(*c, e);
        fail(*c, c->error);
        return c->error;
    }
}

[[gnu::noinline]] int wait_slow(MPI_Request* r, MPI_Status* st) {
    if (t_inside || foreign(1, r)) return PMPI_Wait(r, st);
    CollRequest* c = nullptr;
    {
        MaybeLock lock(g_locking);
        c = ours(*r);
        if (!c && stale(*r)) return stale_error("MPI_Wait");
    }
    if (!c) return poll([&](int& done) { return PMPI_Test(r, &done, st); }, [&] { return PMPI_Wait(r, st); });
    await(*c);
    MaybeLock lock(g_locking);
    return returned(c, r, st);
}

[[gnu::noinline]] int test_slow(MPI_Request* r, int* flag, MPI_Status* st) {
    if (t_inside || foreign(1, r)) return PMPI_Test(r, flag, st);
    MaybeLock lock(g_locking);
    progress();
    CollRequest* c = ours(*r);
    if (!c) return stale(*r) ? stale_error("MPI_Test") : PMPI_Test(r, flag, st);
    *flag = c->state != CollRequest::running;
    return *flag ? returned(c, r, st) : MPI_SUCCESS;
}

// The completed collplan requests of an array call, returned: statuses at their indices (at = -1) or, for the
// *some calls, at positions `at`, `at` + 1, ... with their indices listed in `indices`. Returns the first error.
int reap_array(Split& s, MPI_Request* reqs, MPI_Status* sts, int* indices, int& at) {
    int err = MPI_SUCCESS;
    for (const auto& [i, c] : s.mine) {
        if (c->state != CollRequest::signalled) continue;
        MPI_Status* st = status_at(sts, at < 0 ? i : at);
        const int e = reap(c, &reqs[i], st, MPI_SUCCESS);
        if (e != MPI_SUCCESS && err == MPI_SUCCESS) err = e;
        if (at >= 0) indices[at++] = i;
    }
    return err;
}

[[gnu::noinline]] int waitall_slow(int n, MPI_Request* reqs, MPI_Status* sts) {
    if (t_inside || foreign(n, reqs)) return PMPI_Waitall(n, reqs, sts);
    Split& s = split_buffer();
    {
        MaybeLock lock(g_locking);
        s.make(n, reqs);
    }
    if (s.stale) return stale_error("MPI_Waitall");
    if (s.mine.empty())
        return poll([&](int& done) { return PMPI_Testall(n, reqs, &done, sts); }, [&] { return PMPI_Waitall(n, reqs, sts); });
    for (const auto& [i, c] : s.mine) await(*c);
    const int rc = poll([&](int& done) { return PMPI_Testall(n, s.lib.data(), &done, sts); },
                        [&] { return PMPI_Waitall(n, s.lib.data(), sts); });
    MaybeLock lock(g_locking);
    s.back(reqs);
    s.inactive_statuses(sts);
    int at = -1;
    return merge_errors(rc, reap_array(s, reqs, sts, nullptr, at), sts, 0, n);
}

[[gnu::noinline]] int testall_slow(int n, MPI_Request* reqs, int* flag, MPI_Status* sts) {
    if (t_inside || foreign(n, reqs)) return PMPI_Testall(n, reqs, flag, sts);
    MaybeLock lock(g_locking);
    Split& s = advance_and_split(n, reqs);
    if (s.stale) return stale_error("MPI_Testall");
    if (s.mine.empty()) return PMPI_Testall(n, reqs, flag, sts);
    if (s.running()) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    const int rc = PMPI_Testall(n, s.lib.data(), flag, sts);
    s.back(reqs);
    if (!*flag) return rc;
    s.inactive_statuses(sts);
    int at = -1;
    return merge_errors(rc, reap_array(s, reqs, sts, nullptr, at), sts, 0, n);
}

// Waitany / Testany: a completed collplan request first, else the library's answer; MPI_UNDEFINED only when
// nothing of either kind is active.
int any_ours(Split& s, MPI_Request* reqs, int* index, MPI_Status* st) {
    const int before = st == MPI_STATUS_IGNORE ? MPI_SUCCESS : st->MPI_ERROR;
    for (const auto& [i, c] : s.mine)
        if (c->state == CollRequest::signalled) {
            *index = i;
            return reap(c, &reqs[i], st, before);
        }
    return -1;  // none
}

[[gnu::noinline]] int waitany_slow(int n, MPI_Request* reqs, int* index, MPI_Status* st) {
    if (t_inside || foreign(n, reqs)) return PMPI_Waitany(n, reqs, index, st);
    Split& s = split_buffer();
    {
        MaybeLock lock(g_locking);
        s.make(n, reqs);
    }
    if (s.stale) return stale_error("MPI_Waitany");
    if (s.mine.empty())
        return poll([&](int& done) { return PMPI_Testany(n, reqs, index, &done, st); },
                    [&] { return PMPI_Waitany(n, reqs, index, st); });
    for (unsigned idle = 0;; ++idle) {
        MaybeLock lock(g_locking);
        const bool others = progress();
        if (const int e = any_ours(s, reqs, index, st); e >= 0) return e;
        const bool active = s.active();
        int flag = 0, rc = MPI_SUCCESS;
        if (!active && !others) {
            rc = PMPI_Waitany(n, s.lib.data(), index, st);  // collplan's are inactive: the library decides
            flag = 1;
        } else {
            rc = PMPI_Testany(n, s.lib.data(), index, &flag, st);
        }
        s.back(reqs);
        if (rc != MPI_SUCCESS || (flag && (*index != MPI_UNDEFINED || !active))) return rc;
        if (idle >= 64) sched_yield();
    }
}

[[gnu::noinline]] int testany_slow(int n, MPI_Request* reqs, int* index, int* flag, MPI_Status* st) {
    if (t_inside || foreign(n, reqs)) return PMPI_Testany(n, reqs, index, flag, st);
    MaybeLock lock(g_locking);
    Split& s = advance_and_split(n, reqs);
    if (s.stale) return stale_error("MPI_Testany");
    if (s.mine.empty()) return PMPI_Testany(n, reqs, index, flag, st);
    if (const int e = any_ours(s, reqs, index, st); e >= 0) {
        *flag = 1;
        return e;
    }
    const int rc = PMPI_Testany(n, s.lib.data(), index, flag, st);
    s.back(reqs);
    if (*flag && *index == MPI_UNDEFINED && s.active()) *flag = 0;  // collplan's still run
    return rc;
}

// Waitsome / Testsome: the completed collplan requests first, then what the library completed; MPI_UNDEFINED only
// when nothing of either kind is active.
int some(Split& s, int n, MPI_Request* reqs, int* outcount, int* indices, MPI_Status* sts, bool block, bool others) {
    int k = 0;
    const int err = reap_array(s, reqs, sts, indices, k);
    const bool active = s.active();
    int out = 0, rc = MPI_SUCCESS;
    if (k == 0 && block && !active && !others) rc = PMPI_Waitsome(n, s.lib.data(), &out, indices, sts);
    else rc = PMPI_Testsome(n, s.lib.data(), &out, indices + k, status_at(sts, k));
    s.back(reqs);
    if (out == MPI_UNDEFINED) {
        *outcount = k > 0 || active ? k : MPI_UNDEFINED;
        return merge_errors(rc, err, sts, 0, k);
    }
    *outcount = k + out;
    return merge_errors(rc, err, sts, 0, *outcount);
}

[[gnu::noinline]] int waitsome_slow(int n, MPI_Request* reqs, int* outcount, int* indices, MPI_Status* sts) {
    if (t_inside || foreign(n, reqs)) return PMPI_Waitsome(n, reqs, outcount, indices, sts);
    Split& s = split_buffer();
    {
        MaybeLock lock(g_locking);
        s.make(n, reqs);
    }
    if (s.stale) return stale_error("MPI_Waitsome");
    if (s.mine.empty())
        return poll(
            [&](int& done) {
                const int e = PMPI_Testsome(n, reqs, outcount, indices, sts);
                done = *outcount != 0;
                return e;
            },
            [&] { return PMPI_Waitsome(n, reqs, outcount, indices, sts); });
    for (unsigned idle = 0;; ++idle) {
        MaybeLock lock(g_locking);
        const bool others = progress();
        const int rc = some(s, n, reqs, outcount, indices, sts, true, others);
        if (rc != MPI_SUCCESS || *outcount != 0) return rc;
        if (idle >= 64) sched_yield();
    }
}

[[gnu::noinline]] int testsome_slow(int n, MPI_Request* reqs, int* outcount, int* indices, MPI_Status* sts) {
    if (t_inside || foreign(n, reqs)) return PMPI_Testsome(n, reqs, outcount, indices, sts);
    MaybeLock lock(g_locking);
    const bool others = progress();
    Split& s = split_buffer();
    s.make(n, reqs);
    if (s.stale) return stale_error("MPI_Testsome");
    if (s.mine.empty()) return PMPI_Testsome(n, reqs, outcount, indices, sts);
    return some(s, n, reqs, outcount, indices, sts, false, others);
}

// The status of one request without returning it.
int peek(CollRequest* c, int* flag, MPI_Status* st) {
    *flag = c->state != CollRequest::running;
    if (!*flag || st == MPI_STATUS_IGNORE) return MPI_SUCCESS;
    if (c->state == CollRequest::idle) inactive_status(st);
    else done_status(c, st, st->MPI_ERROR);
    return MPI_SUCCESS;
}

[[gnu::noinline]] int get_status_slow(MPI_Request r, int* flag, MPI_Status* st) {
    if (t_inside || foreign(1, &r)) return PMPI_Request_get_status(r, flag, st);
    MaybeLock lock(g_locking);
    progress();
    CollRequest* c = ours(r);
    if (!c) return stale(r) ? stale_error("MPI_Request_get_status") : PMPI_Request_get_status(r, flag, st);
    return peek(c, flag, st);
}

#if COLLPLAN_HAVE_MPI_4_1
// MPI 4.1's MPI_Request_get_status_any/all/some: as MPI_Testany/all/some, but nothing is returned or freed.
[[gnu::noinline]] int get_status_any_slow(int n, const MPI_Request* reqs, int* index, int* flag, MPI_Status* st) {
    if (t_inside || foreign(n, reqs)) return PMPI_Request_get_status_any(n, reqs, index, flag, st);
    MaybeLock lock(g_locking);
    Split& s = advance_and_split(n, reqs);
    if (s.stale) return stale_error("MPI_Request_get_status_any");
    for (const auto& [i, c] : s.mine)
        if (c->state == CollRequest::signalled) {
            *index = i;
            return peek(c, flag, st);
        }
    const int rc = PMPI_Request_get_status_any(n, s.lib.data(), index, flag, st);
    if (*flag && *index == MPI_UNDEFINED && s.active()) *flag = 0;
    return rc;
}

[[gnu::noinline]] int get_status_all_slow(int n, const MPI_Request* reqs, int* flag, MPI_Status* sts) {
    if (t_inside || foreign(n, reqs)) return PMPI_Request_get_status_all(n, reqs, flag, sts);
    MaybeLock lock(g_locking);
    Split& s = advance_and_split(n, reqs);
    if (s.stale) return stale_error("MPI_Request_get_status_all");
    if (s.running()) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    const int rc = PMPI_Request_get_status_all(n, s.lib.data(), flag, sts);
    if (!*flag || sts == MPI_STATUSES_IGNORE) return rc;
    int unused = 0;
    for (const auto& [i, c] : s.mine) peek(c, &unused, &sts[i]);
    return rc;
}

[[gnu::noinline]] int get_status_some_slow(int n, const MPI_Request* reqs, int* outcount, int* indices, MPI_Status* sts) {
    if (t_inside || foreign(n, reqs)) return PMPI_Request_get_status_some(n, reqs, outcount, indices, sts);
    MaybeLock lock(g_locking);
    Split& s = advance_and_split(n, reqs);
    if (s.stale) return stale_error("MPI_Request_get_status_some");
    int k = 0, unused = 0;
    for (const auto& [i, c] : s.mine)
        if (c->state == CollRequest::signalled) {
            peek(c, &unused, status_at(sts, k));
            indices[k++] = i;
        }
    int out = 0;
    const int rc = PMPI_Request_get_status_some(n, s.lib.data(), &out, indices + k, status_at(sts, k));
    if (out == MPI_UNDEFINED) *outcount = k > 0 || s.active() ? k : MPI_UNDEFINED;
    else *outcount = k + out;
    return rc;
}
#endif

// MPI_Request_free: a persistent request only while inactive (as MPI's own: MPI_ERR_REQUEST); a non-blocking one
// at any time -- a running schedule then completes in later calls and is dropped.
[[gnu::noinline]] int request_free_slow(MPI_Request* r) {
    MaybeLock lock(g_locking);
    CollRequest* c = ours(*r);
    if (!c) return stale(*r) ? stale_error("MPI_Request_free") : PMPI_Request_free(r);
    if (c->persistent && c->state != CollRequest::idle)
        return request_error(*c, MPI_ERR_REQUEST, "MPI_Request_free: the persistent collective request is active");
    if (c->state == CollRequest::running) c->user_freed = true, c->live = false;  // still counted in g_live
    else destroy(c);
    *r = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

[[gnu::noinline]] int cancel_slow(MPI_Request* r) {
    MaybeLock lock(g_locking);
    if (CollRequest* c = ours(*r)) return request_error(*c, MPI_ERR_REQUEST, "MPI_Cancel: a collective request cannot be cancelled");
    return stale(*r) ? stale_error("MPI_Cancel") : PMPI_Cancel(r);
}

// A blocking point-to-point call while a schedule runs: its non-blocking twin, completed by polling with the
// schedules advanced in between -- as the MPI library advances its own non-blocking collectives inside every
// blocking call (a rank blocked in MPI_Recv for a message that is sent only after a collective completed on the
// sender must keep doing its part of that collective).
template <class Start>
[[gnu::noinline]] int blocking(Start start, MPI_Status* st) {
    MPI_Request r = MPI_REQUEST_NULL;
    if (const int rc = start(&r); rc != MPI_SUCCESS) return rc;
    return poll([&](int& done) { return PMPI_Test(&r, &done, st); }, [&] { return PMPI_Wait(&r, st); });
}

// The same for a send and a receive at once (MPI_Sendrecv: not MPI_Isendrecv, whose status gives a wrong tag and
// count under MPICH 5.0.2); st: the receive's.
template <class Start>
[[gnu::noinline]] int blocking2(Start start, MPI_Status* st) {
    MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};  // send, receive
    if (const int rc = start(r); rc != MPI_SUCCESS) {
        for (MPI_Request& q : r)
            if (q != MPI_REQUEST_NULL) PMPI_Cancel(&q), PMPI_Request_free(&q);
        return rc;
    }
    MPI_Status sts[2];
    sts[0].MPI_ERROR = sts[1].MPI_ERROR = MPI_SUCCESS;
    int rc = poll([&](int& done) { return PMPI_Testall(2, r, &done, sts); }, [&] { return PMPI_Waitall(2, r, sts); });
    if (rc == MPI_ERR_IN_STATUS) rc = sts[1].MPI_ERROR != MPI_SUCCESS ? sts[1].MPI_ERROR : sts[0].MPI_ERROR;
    if (st != MPI_STATUS_IGNORE) *st = sts[1];
    return rc;
}

// MPI_Sendrecv_replace: the outgoing data packed first (the receive overwrites the buffer).
int sendrecv_replace(void* buf, int n, MPI_Datatype t, int dst, int stag, int src, int rtag, MPI_Comm comm,
                     MPI_Status* st) {
    int bytes = 0;
    if (const int rc = PMPI_Pack_size(n, t, comm, &bytes); rc != MPI_SUCCESS) return rc;
    std::vector<char> out(static_cast<size_t>(bytes));
    int pos = 0;
    if (const int rc = PMPI_Pack(buf, n, t, out.data(), bytes, &pos, comm); rc != MPI_SUCCESS) return rc;
    return blocking2([&](MPI_Request* r) {
        const int rc = PMPI_Isend(out.data(), pos, MPI_PACKED, dst, stag, comm, &r[0]);
        return rc != MPI_SUCCESS ? rc : PMPI_Irecv(buf, n, t, src, rtag, comm, &r[1]);
    }, st);
}

}  // namespace
}  // namespace collplan::mpi::pmpi

using namespace collplan::mpi::pmpi;

extern "C" {

// One load and branch in front of each while the program holds no collplan request.
#define COLLPLAN_NONE_LIVE() (g_live.load(std::memory_order_relaxed) == 0)
// COLLPLAN_PROFILE with recorded non-blocking or persistent requests (profile.hpp): the program's call between a
// ProfileWatch of its requests and the report of those it returned (not the calls of collplan's own schedules).
#define COLLPLAN_WATCHED(n, reqs, call, report)                \
    if (g_watch_requests && !t_inside && !t_profile_inside) { \
        ProfileWatch w(n, reqs);                               \
        const int rc = call;                                   \
        report;                                                \
        return rc;                                             \
    }

int MPI_Wait(MPI_Request* r, MPI_Status* st) {
    if (COLLPLAN_NONE_LIVE()) [[likely]] return PMPI_Wait(r, st);
    COLLPLAN_WATCHED(1, r, wait_slow(r, st), w.all())
    return wait_slow(r, st);
}

int MPI_Test(MPI_Request* r, int* flag, MPI_Status* st) {
    if (COLLPLAN_NONE_LIVE()) [[likely]] return PMPI_Test(r, flag, st);
    COLLPLAN_WATCHED(1, r, test_slow(r, flag, st), if (*flag) w.all())
    return test_slow(r, flag, st);
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[]) {
    if (COLLPLAN_NONE_LIVE()) [[likely]] return PMPI_Waitall(n, reqs, sts);
    COLLPLAN_WATCHED(n, reqs, waitall_slow(n, reqs, sts), w.all())
    return waitall_slow(n, reqs, sts);
}

int MPI_Testall(int n, MPI_Request reqs[], int* flag, MPI_Status sts[]) {
    if (COLLPLAN_NONE_LIVE()) [[likely]] return PMPI_Testall(n, reqs, flag, sts);
    COLLPLAN_WATCHED(n, reqs, testall_slow(n, reqs, flag, sts), if (*flag) w.all())
    return testall_slow(n, reqs, flag, sts);
}

int MPI_Waitany(int n, MPI_Request reqs[], int* index, MPI_Status* st) {
    if (COLLPLAN_NONE_LIVE()) [[likely]] return PMPI_Waitany(n, reqs, index, st);
    COLLPLAN_WATCHED(n, reqs, waitany_slow(n, reqs, index, st), w.index(*index))
    return waitany_slow(n, reqs, index, st);
}

int MPI_Testany(int n, MPI_Request reqs[], int* index, int* flag, MPI_Status* st) {
    if (COLLPLAN_NONE_LIVE()) [[likely]] return PMPI_Testany(n, reqs, index, flag, st);
    COLLPLAN_WATCHED(n, reqs, testany_slow(n, reqs, index, flag, st), if (*flag) w.index(*index))
    return testany_slow(n, reqs, index, flag, st);
}

int MPI_Waitsome(int n, MPI_Request reqs[], int* outcount, int indices[], MPI_Status sts[]) {
    if (COLLPLAN_NONE_LIVE()) [[likely]] return PMPI_Waitsome(n, reqs, outcount, indices, sts);
    COLLPLAN_WATCHED(n, reqs, waitsome_slow(n, reqs, outcount, indices, sts), w.some(*outcount, indices))
    return waitsome_slow(n, reqs, outcount, indices, sts);
}

int MPI_Testsome(int n, MPI_Request reqs[], int* outcount, int indices[], MPI_Status sts[]) {
    if (COLLPLAN_NONE_LIVE()) [[likely]] return PMPI_Testsome(n, reqs, outcount, indices, sts);
    COLLPLAN_WATCHED(n, reqs, testsome_slow(n, reqs, outcount, indices, sts), w.some(*outcount, indices))
    return testsome_slow(n, reqs, outcount, indices, sts);
}

int MPI_Request_get_status(MPI_Request r, int* flag, MPI_Status* st) {
    if (COLLPLAN_NONE_LIVE()) [[likely]] return PMPI_Request_get_status(r, flag, st);
    return get_status_slow(r, flag, st);
}

int MPI_Request_free(MPI_Request* r) {
    if (COLLPLAN_NONE_LIVE()) [[likely]] return PMPI_Request_free(r);
    if (g_watch_requests) profile_freed(r);
    return request_free_slow(r);
}

// Freeing a datatype or operation that a collplan request still uses: deferred (pmpi_requests.hpp, hold()).
int MPI_Type_free(MPI_Datatype* t) {
    if (g_held.empty() && !g_forget) [[likely]] return PMPI_Type_free(t);
    MaybeLock lock(g_locking);
    forget_handle(*t, MPI_OP_NULL);
    if (!defer_free(handle_key(*t), true)) return PMPI_Type_free(t);
    *t = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

int MPI_Op_free(MPI_Op* op) {
    if (g_held.empty() && !g_forget) [[likely]] return PMPI_Op_free(op);
    MaybeLock lock(g_locking);
    forget_handle(MPI_DATATYPE_NULL, *op);
    if (!defer_free(handle_key(*op), false)) return PMPI_Op_free(op);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

// Cancelling a collective request is erroneous (MPI 4.1, 6.12 and 6.13): a clear error, the run goes on.
int MPI_Cancel(MPI_Request* r) {
    if (COLLPLAN_NONE_LIVE()) [[likely]] return PMPI_Cancel(r);
    return cancel_slow(r);
}

int MPI_Start(MPI_Request* r) {
    if (COLLPLAN_NONE_LIVE()) [[likely]] return PMPI_Start(r);
    if (!g_watch_requests) return start_one(r);
    const int64_t enter = profile_now();
    const MPI_Request started = *r;
    const ProfileInside inside(true);  // (the schedule's own sends are not the program's)
    const int rc = start_one(r);
    if (rc == MPI_SUCCESS) profile_started(1, &started, enter);
    return rc;
}

// In the order of the array (collplan's persistent requests may be started in any order: Request::pin_tags).
int MPI_Startall(int n, MPI_Request reqs[]) {
    if (COLLPLAN_NONE_LIVE()) [[likely]] return PMPI_Startall(n, reqs);
    const int64_t enter = g_watch_requests ? profile_now() : 0;
    const ProfileInside inside(g_watch_requests);
    for (int i = 0; i < n; ++i)
        if (const int rc = start_one(&reqs[i]); rc != MPI_SUCCESS) return rc;
    if (g_watch_requests) profile_started(n, reqs, enter);
    return MPI_SUCCESS;
}

#if COLLPLAN_HAVE_MPI_4_1
int MPI_Request_get_status_any(int n, const MPI_Request reqs[], int* index, int* flag, MPI_Status* st) {
    if (COLLPLAN_NONE_LIVE()) [[likely]] return PMPI_Request_get_status_any(n, reqs, index, flag, st);
    return get_status_any_slow(n, reqs, index, flag, st);
}

int MPI_Request_get_status_all(int n, const MPI_Request reqs[], int* flag, MPI_Status sts[]) {
    if (COLLPLAN_NONE_LIVE()) [[likely]] return PMPI_Request_get_status_all(n, reqs, flag, sts);
    return get_status_all_slow(n, reqs, flag, sts);
}

int MPI_Request_get_status_some(int n, const MPI_Request reqs[], int* outcount, int indices[], MPI_Status sts[]) {
    if (COLLPLAN_NONE_LIVE()) [[likely]] return PMPI_Request_get_status_some(n, reqs, outcount, indices, sts);
    return get_status_some_slow(n, reqs, outcount, indices, sts);
}
#endif

#ifndef MPI_Request_c2f  // (MPICH: macros, the handle itself)
// A collplan request's Fortran handle (request_c2f), which the Fortran entry points (fortran.cpp) and
// MPI_Request_f2c take back: a program may hand its requests between C and Fortran.
MPI_Fint MPI_Request_c2f(MPI_Request r) { return request_c2f(r); }
MPI_Request MPI_Request_f2c(MPI_Fint f) { return request_f2c(f); }
#endif

// Blocking point-to-point calls: the MPI library's own unless a collplan schedule runs (one load and a branch).
#define COLLPLAN_QUIET() (g_nrunning.load(std::memory_order_relaxed) == 0 || t_inside)

// COLLPLAN_PROFILE: the program's sends, counted per peer (profile_sent) -- not those of collplan's schedules, which
// run inside a recorded collective or MPI_Start (t_profile_inside) or while the schedules are advanced (t_inside).
#define COLLPLAN_SENT(comm, dst, n, t) \
    if (g_profile && !t_profile_inside && !t_inside) [[unlikely]] profile_sent(comm, dst, static_cast<int64_t>(n), t)

// The sends interposed for the count alone: the library's call after it.
#define COLLPLAN_COUNTED_SEND(Name, C, Count)                                                  \
    int MPI_##Name##C(const void* buf, Count n, MPI_Datatype t, int dst, int tag, MPI_Comm comm) { \
        COLLPLAN_SENT(comm, dst, n, t);                                                            \
        return PMPI_##Name##C(buf, n, t, dst, tag, comm);                                          \
    }
#define COLLPLAN_COUNTED_ISEND(Name, C, Count)                                                               \
    int MPI_##Name##C(const void* buf, Count n, MPI_Datatype t, int dst, int tag, MPI_Comm comm, MPI_Request* r) { \
        COLLPLAN_SENT(comm, dst, n, t);                                                                          \
        return PMPI_##Name##C(buf, n, t, dst, tag, comm, r);                                                     \
    }

#define COLLPLAN_BLOCKING_P2P(Count, C)                                                                               \
    int MPI_Recv##C(void* buf, Count n, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Status* st) {           \
        if (COLLPLAN_QUIET()) [[likely]] return PMPI_Recv##C(buf, n, t, src, tag, comm, st);                           \
        return blocking([&](MPI_Request* r) { return PMPI_Irecv##C(buf, n, t, src, tag, comm, r); }, st);             \
    }                                                                                                                  \
    int MPI_Send##C(const void* buf, Count n, MPI_Datatype t, int dst, int tag, MPI_Comm comm) {                      \
        COLLPLAN_SENT(comm, dst, n, t);                                                                                \
        if (COLLPLAN_QUIET()) [[likely]] return PMPI_Send##C(buf, n, t, dst, tag, comm);                               \
        return blocking([&](MPI_Request* r) { return PMPI_Isend##C(buf, n, t, dst, tag, comm, r); }, MPI_STATUS_IGNORE); \
    }                                                                                                                  \
    int MPI_Ssend##C(const void* buf, Count n, MPI_Datatype t, int dst, int tag, MPI_Comm comm) {                     \
        COLLPLAN_SENT(comm, dst, n, t);                                                                                \
        if (COLLPLAN_QUIET()) [[likely]] return PMPI_Ssend##C(buf, n, t, dst, tag, comm);                              \
        return blocking([&](MPI_Request* r) { return PMPI_Issend##C(buf, n, t, dst, tag, comm, r); }, MPI_STATUS_IGNORE); \
    }                                                                                                                  \
    int MPI_Sendrecv##C(const void* sb, Count sn, MPI_Datatype stype, int dst, int stag, void* rb, Count rn,           \
                        MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, MPI_Status* st) {                       \
        COLLPLAN_SENT(comm, dst, sn, stype);                                                                           \
        if (COLLPLAN_QUIET()) [[likely]]                                                                               \
            return PMPI_Sendrecv##C(sb, sn, stype, dst, stag, rb, rn, rtype, src, rtag, comm, st);                     \
        return blocking2([&](MPI_Request* r) {                                                                         \
            const int rc = PMPI_Irecv##C(rb, rn, rtype, src, rtag, comm, &r[1]);                                       \
            return rc != MPI_SUCCESS ? rc : PMPI_Isend##C(sb, sn, stype, dst, stag, comm, &r[0]);                      \
        }, st);                                                                                                        \
    }                                                                                                                  \
    int MPI_Mrecv##C(void* buf, Count n, MPI_Datatype t, MPI_Message* m, MPI_Status* st) {                            \
        if (COLLPLAN_QUIET()) [[likely]] return PMPI_Mrecv##C(buf, n, t, m, st);                                       \
        return blocking([&](MPI_Request* r) { return PMPI_Imrecv##C(buf, n, t, m, r); }, st);                          \
    }                                                                                                                  \
    COLLPLAN_COUNTED_SEND(Rsend, C, Count)                                                                             \
    COLLPLAN_COUNTED_SEND(Bsend, C, Count)                                                                             \
    COLLPLAN_COUNTED_ISEND(Isend, C, Count)                                                                            \
    COLLPLAN_COUNTED_ISEND(Issend, C, Count)                                                                           \
    COLLPLAN_COUNTED_ISEND(Irsend, C, Count)                                                                           \
    COLLPLAN_COUNTED_ISEND(Ibsend, C, Count)
COLLPLAN_BLOCKING_P2P(int, )
#if COLLPLAN_HAVE_LARGE_COUNT  // the large-count versions (MPICH; Open MPI 5.0 declares none)
COLLPLAN_BLOCKING_P2P(MPI_Count, _c)
#endif
#undef COLLPLAN_BLOCKING_P2P
#undef COLLPLAN_COUNTED_SEND
#undef COLLPLAN_COUNTED_ISEND

int MPI_Sendrecv_replace(void* buf, int n, MPI_Datatype t, int dst, int stag, int src, int rtag, MPI_Comm comm,
                         MPI_Status* st) {
    COLLPLAN_SENT(comm, dst, n, t);
    if (COLLPLAN_QUIET()) [[likely]] return PMPI_Sendrecv_replace(buf, n, t, dst, stag, src, rtag, comm, st);
    return sendrecv_replace(buf, n, t, dst, stag, src, rtag, comm, st);
}

int MPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status* st) {
    if (COLLPLAN_QUIET()) [[likely]] return PMPI_Probe(src, tag, comm, st);
    return poll([&](int& flag) { return PMPI_Iprobe(src, tag, comm, &flag, st); },
                [&] { return PMPI_Probe(src, tag, comm, st); });
}

int MPI_Mprobe(int src, int tag, MPI_Comm comm, MPI_Message* m, MPI_Status* st) {
    if (COLLPLAN_QUIET()) [[likely]] return PMPI_Mprobe(src, tag, comm, m, st);
    return poll([&](int& flag) { return PMPI_Improbe(src, tag, comm, &flag, m, st); },
                [&] { return PMPI_Mprobe(src, tag, comm, m, st); });
}

}  // extern "C"
