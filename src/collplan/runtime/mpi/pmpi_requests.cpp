// libcollplan_pmpi.so, part two: the requests of the non-blocking and persistent collectives that pmpi.cpp runs as
// collplan schedules (the handle: pmpi_requests.hpp), and the MPI calls that start, complete and free requests --
// MPI_Start, MPI_Startall, MPI_Wait, MPI_Test, MPI_Waitall/any/some, MPI_Testall/any/some, MPI_Request_get_status,
// MPI_Request_free, MPI_Cancel -- interposed so that they advance the schedules.
//
// Cost: while no collplan request is outstanding (the usual case, and always in a program with no non-blocking or
// persistent collective that collplan runs) each of these is one load, one branch and the tail call to PMPI_
// (bench/README.md, "Drop-in overhead"). Otherwise (the slow path):
// - a completion call advances every running schedule (Request::test, which never blocks), then asks the MPI
//   library without blocking (PMPI_Test*) and repeats until its requests are complete; it blocks in PMPI_Wait*
//   only once no schedule is running any more -- never while a schedule could still need this process to progress
//   (MPI_Waitall on [a receive, a collplan request] where the message is sent only after the collective completes
//   elsewhere);
// - a schedule whose run is over is finished (staged data copied out), and its request completed for the MPI
//   library (MPI_Grequest_complete; persistent: the empty message to itself); the completion call that returns it
//   writes the status fields;
// - the executor's own MPI_Testall/MPI_Waitall (this library calls the MPI_ names) come back here: a thread-local
//   flag sends them straight to PMPI_ while the schedules are being advanced.
// COLLPLAN_PROGRESS=thread adds a thread that advances the schedules while the program computes (docs/runtime.md,
// "Non-blocking and persistent collectives").
#include "collplan/runtime/mpi/pmpi_requests.hpp"

#include <sched.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <thread>

namespace collplan::mpi::pmpi {

bool g_locking = false;
std::recursive_mutex g_mu;
std::atomic<int> g_outstanding{0}, g_live{0};

namespace {

// ------------------------------------------------------------------------------------------------- state
static thread_local bool t_inside __attribute__((tls_model("initial-exec"))) = false;  // advancing schedules

// Every live collplan request (few at a time: a linear search is cheaper than hashing), and spare records.
std::vector<CollRequest*>& g_live_list = *new std::vector<CollRequest*>;
std::vector<CollRequest*>& g_spare = *new std::vector<CollRequest*>;
std::vector<CollRequest*>& g_running = *new std::vector<CollRequest*>;
MPI_Comm g_self = MPI_COMM_NULL;  // the empty messages that complete the handles
std::vector<int>& g_free_tags = *new std::vector<int>;
int g_next_tag = 0;
struct StatusFields {
    int source = 0, tag = 0;
};
StatusFields g_status[2];  // [persistent]: what the MPI library's own collective request reports

CollRequest* find(MPI_Request r) {
    if (r == MPI_REQUEST_NULL) return nullptr;
    for (CollRequest* c : g_live_list)
        if (c->handle == r) return c;
    return nullptr;
}

// The collplan request a completion call may complete: started, not yet returned (an idle persistent one is, for
// the MPI library too, an inactive request).
CollRequest* find_active(MPI_Request r) {
    CollRequest* c = find(r);
    return c && c->state != CollRequest::idle ? c : nullptr;
}

// The private communicator and the status fields of the MPI library's own collective requests, once.
void ensure_self() {
    if (g_self != MPI_COMM_NULL) return;
    PMPI_Comm_dup(MPI_COMM_SELF, &g_self);
    MPI_Request r;
    MPI_Status st;
    PMPI_Ibarrier(MPI_COMM_SELF, &r);
    PMPI_Wait(&r, &st);
    g_status[0] = {st.MPI_SOURCE, st.MPI_TAG};
#if COLLPLAN_PERSISTENT_COLLECTIVES
    PMPI_Barrier_init(MPI_COMM_SELF, MPI_INFO_NULL, &r);
    PMPI_Start(&r);
    PMPI_Wait(&r, &st);
    PMPI_Request_free(&r);
    g_status[1] = {st.MPI_SOURCE, st.MPI_TAG};
#endif
}

int new_tag() {
    if (!g_free_tags.empty()) {
        const int t = g_free_tags.back();
        g_free_tags.pop_back();
        return t;
    }
    return g_next_tag++;  // MPI_TAG_UB >= 32767: more requests than that at once are not expected
}

void destroy(CollRequest* c) {
    for (CollRequest*& x : g_live_list)
        if (x == c) {
            x = g_live_list.back();
            g_live_list.pop_back();
            break;
        }
    g_free_tags.push_back(c->tag);
    if (c->slot && c->pool && !(c->slot->req && c->slot->req->active())) c->pool->spare.push_back(std::move(c->slot));
    --g_live;
    c->owner.reset(), c->pool.reset(), c->slot.reset(), c->launch = nullptr;
    g_spare.push_back(c);
}

CollRequest* new_record() {
    if (g_spare.empty()) return new CollRequest;
    CollRequest* c = g_spare.back();
    g_spare.pop_back();
    *c = CollRequest{};
    return c;
}

int request_error(CollRequest& c, int error, const char* what) {
    std::fprintf(stderr, "collplan: %s\n", what);
    std::fflush(stderr);
    PMPI_Comm_call_errhandler(c.comm, error);
    return error;
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
            std::fprintf(stderr, "collplan: a non-blocking collective failed inside collplan's schedule: %s\n", e.what());
            std::fflush(stderr);
            c.error = MPI_ERR_INTERN;
            done = true;
        }
        if (!done) {
            ++i;
            continue;
        }
        g_running[i] = g_running.back();
        g_running.pop_back();
        if (c.error != MPI_SUCCESS) PMPI_Comm_call_errhandler(c.comm, c.error);
        complete(c);
    }
    t_inside = was;
    return !g_running.empty();
}

bool progress_locked() {
    MaybeLock lock(g_locking);
    return progress();
}

// The status fields of a completed collplan request: those of the library's own collective requests; MPI_ERROR
// as it was before the call (`error`: MPI_Wait and MPI_Test leave it, but some libraries' receives write it),
// unless the run failed.
void rewrite(const CollRequest* c, MPI_Status* st, int error) {
    if (st == MPI_STATUS_IGNORE) return;
    const StatusFields& f = g_status[c->persistent];
    st->MPI_SOURCE = f.source, st->MPI_TAG = f.tag;
    st->MPI_ERROR = c->error != MPI_SUCCESS ? c->error : error;
}

// The status a completed collplan request returns, and the completion call's code.
int reap(CollRequest* c, MPI_Status* st, int rc, int error) {
    rewrite(c, st, error);
    if (c->error != MPI_SUCCESS && rc == MPI_SUCCESS) rc = c->error;
    --g_outstanding;
    if (c->persistent) {
        c->state = CollRequest::idle;
        c->error = MPI_SUCCESS;
    } else {
        destroy(c);
    }
    return rc;
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
        if (idle >= 64) sched_yield();  // let the ranks this one waits for run (oversubscribed)
    }
}

// The collplan requests in an array, by index (looked up before PMPI_ may set the handles to MPI_REQUEST_NULL).
struct Found {
    int index;
    CollRequest* c;
};
std::vector<Found> collect(int n, const MPI_Request* reqs) {
    std::vector<Found> found;
    MaybeLock lock(g_locking);
    for (int i = 0; i < n; ++i)
        if (CollRequest* c = find_active(reqs[i])) found.push_back({i, c});
    return found;
}

MPI_Status* status_at(MPI_Status* statuses, int i) {
    return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : statuses + i;
}

// After an array call: the completed collplan requests among `found` (indices[0..count), or all when count < 0).
int reap_found(const std::vector<Found>& found, MPI_Status* statuses, const int* indices, int count, int rc) {
    if (found.empty()) return rc;
    MaybeLock lock(g_locking);
    int err = MPI_SUCCESS;
    for (const Found& f : found) {
        int at = f.index;  // where its status is
        if (count >= 0) {
            at = -1;
            for (int k = 0; k < count; ++k)
                if (indices[k] == f.index) at = k;
            if (at < 0) continue;
        }
        MPI_Status* st = status_at(statuses, at);
        const int e = f.c->error;
        if (reap(f.c, st, MPI_SUCCESS, st == MPI_STATUS_IGNORE ? 0 : st->MPI_ERROR) != MPI_SUCCESS) err = e;
    }
    if (err != MPI_SUCCESS && rc == MPI_SUCCESS) rc = statuses == MPI_STATUSES_IGNORE ? err : MPI_ERR_IN_STATUS;
    return rc;
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

// A non-blocking request's status (MPI calls it from the completion call that returns the request): count 0, not
// cancelled, the source and tag of the library's own collective requests.
int query_fn(void* extra, MPI_Status* st) {
    const auto* c = static_cast<const CollRequest*>(extra);
    PMPI_Status_set_elements(st, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = g_status[0].source, st->MPI_TAG = g_status[0].tag;
    return c->error;
}
int free_fn(void*) { return MPI_SUCCESS; }          // the record goes when the completion call returns (reap)
int cancel_fn(void*, int) { return MPI_SUCCESS; }   // never called: MPI_Cancel is interposed

}  // namespace

// ------------------------------------------------------------------------------------------------ the requests
CollRequest* new_request(MPI_Comm comm, int fn, bool persistent, MPI_Request* out, int& rc) {
    ensure_self();
    CollRequest* c = new_record();
    c->comm = comm, c->fn = fn, c->persistent = persistent, c->tag = new_tag();
    rc = persistent ? PMPI_Recv_init(nullptr, 0, MPI_BYTE, 0, c->tag, g_self, &c->handle)
                    : PMPI_Grequest_start(query_fn, free_fn, cancel_fn, c, &c->handle);
    if (rc != MPI_SUCCESS) {
        g_free_tags.push_back(c->tag);
        g_spare.push_back(c);
        return nullptr;
    }
    ++g_live;
    g_live_list.push_back(c);
    if (!persistent) ++g_outstanding, c->state = CollRequest::running;
    *out = c->handle;
    return c;
}

void running(CollRequest& c) {
    c.state = CollRequest::running;
    g_running.push_back(&c);
    if (g_thread_on) g_wake.notify_one();
}

void complete(CollRequest& c) {
    if (c.finish && c.error == MPI_SUCCESS) c.finish();
    c.finish = nullptr;
    c.state = CollRequest::signalled;
    if (c.persistent) PMPI_Send(nullptr, 0, MPI_BYTE, 0, c.tag, g_self);
    else PMPI_Grequest_complete(c.handle);
    if (c.user_freed) {  // MPI frees its receive now; the program holds no handle
        --g_outstanding;
        destroy(&c);
    }
}

void fail(CollRequest& c, int error) {
    c.error = error;
    PMPI_Comm_call_errhandler(c.comm, error);
    complete(c);
}

void discard(CollRequest* c) {
    if (c->state != CollRequest::idle) --g_outstanding;
    MPI_Request h = c->handle;  // (c->handle stays the key)
    PMPI_Request_free(&h);
    destroy(c);
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
}

// ------------------------------------------------------------------------------------------------ slow paths
namespace {

[[gnu::noinline]] int start_one(MPI_Request* r) {
    CollRequest* c = nullptr;
    {
        MaybeLock lock(g_locking);
        c = find(*r);
        if (c && c->persistent) {
            if (c->state != CollRequest::idle)
                return request_error(*c, MPI_ERR_REQUEST, "MPI_Start: the persistent collective request is active");
            int rc = PMPI_Start(&c->handle);
            if (rc != MPI_SUCCESS) return rc;
            ++g_outstanding;
            c->state = CollRequest::running;
            return c->launch(*c);
        }
    }
    return PMPI_Start(r);
}

[[gnu::noinline]] int wait_slow(MPI_Request* r, MPI_Status* st) {
    if (t_inside) return PMPI_Wait(r, st);
    CollRequest* c = nullptr;
    {
        MaybeLock lock(g_locking);
        c = find_active(*r);
    }
    const int error = st == MPI_STATUS_IGNORE ? 0 : st->MPI_ERROR;
    const int rc = poll([&](int& done) { return PMPI_Test(r, &done, st); }, [&] { return PMPI_Wait(r, st); });
    if (!c) return rc;
    MaybeLock lock(g_locking);
    return reap(c, st, rc, error);
}

[[gnu::noinline]] int test_slow(MPI_Request* r, int* flag, MPI_Status* st) {
    if (t_inside) return PMPI_Test(r, flag, st);
    CollRequest* c = nullptr;
    {
        MaybeLock lock(g_locking);
        c = find_active(*r);
        progress();
    }
    const int error = st == MPI_STATUS_IGNORE ? 0 : st->MPI_ERROR;
    const int rc = PMPI_Test(r, flag, st);
    if (!c || !*flag) return rc;
    MaybeLock lock(g_locking);
    return reap(c, st, rc, error);
}

[[gnu::noinline]] int waitall_slow(int n, MPI_Request* reqs, MPI_Status* sts) {
    if (t_inside) return PMPI_Waitall(n, reqs, sts);
    const std::vector<Found> found = collect(n, reqs);
    const int rc = poll([&](int& done) { return PMPI_Testall(n, reqs, &done, sts); },
                        [&] { return PMPI_Waitall(n, reqs, sts); });
    return reap_found(found, sts, nullptr, -1, rc);
}

[[gnu::noinline]] int testall_slow(int n, MPI_Request* reqs, int* flag, MPI_Status* sts) {
    if (t_inside) return PMPI_Testall(n, reqs, flag, sts);
    const std::vector<Found> found = collect(n, reqs);
    progress_locked();
    const int rc = PMPI_Testall(n, reqs, flag, sts);
    return *flag ? reap_found(found, sts, nullptr, -1, rc) : rc;
}

int reap_index(const std::vector<Found>& found, int index, MPI_Status* st, int rc, int error) {
    if (index == MPI_UNDEFINED) return rc;
    MaybeLock lock(g_locking);
    for (const Found& f : found)
        if (f.index == index) return reap(f.c, st, rc, error);
    return rc;
}

[[gnu::noinline]] int waitany_slow(int n, MPI_Request* reqs, int* index, MPI_Status* st) {
    if (t_inside) return PMPI_Waitany(n, reqs, index, st);
    const std::vector<Found> found = collect(n, reqs);
    const int error = st == MPI_STATUS_IGNORE ? 0 : st->MPI_ERROR;
    const int rc = poll([&](int& done) { return PMPI_Testany(n, reqs, index, &done, st); },
                        [&] { return PMPI_Waitany(n, reqs, index, st); });
    return reap_index(found, *index, st, rc, error);
}

[[gnu::noinline]] int testany_slow(int n, MPI_Request* reqs, int* index, int* flag, MPI_Status* st) {
    if (t_inside) return PMPI_Testany(n, reqs, index, flag, st);
    const std::vector<Found> found = collect(n, reqs);
    progress_locked();
    const int error = st == MPI_STATUS_IGNORE ? 0 : st->MPI_ERROR;
    const int rc = PMPI_Testany(n, reqs, index, flag, st);
    return *flag ? reap_index(found, *index, st, rc, error) : rc;
}

[[gnu::noinline]] int waitsome_slow(int n, MPI_Request* reqs, int* outcount, int* indices, MPI_Status* sts) {
    if (t_inside) return PMPI_Waitsome(n, reqs, outcount, indices, sts);
    const std::vector<Found> found = collect(n, reqs);
    const int rc = poll(
        [&](int& done) {
            const int e = PMPI_Testsome(n, reqs, outcount, indices, sts);
            done = *outcount != 0;
            return e;
        },
        [&] { return PMPI_Waitsome(n, reqs, outcount, indices, sts); });
    return *outcount == MPI_UNDEFINED ? rc : reap_found(found, sts, indices, *outcount, rc);
}

[[gnu::noinline]] int testsome_slow(int n, MPI_Request* reqs, int* outcount, int* indices, MPI_Status* sts) {
    if (t_inside) return PMPI_Testsome(n, reqs, outcount, indices, sts);
    const std::vector<Found> found = collect(n, reqs);
    progress_locked();
    const int rc = PMPI_Testsome(n, reqs, outcount, indices, sts);
    return *outcount == MPI_UNDEFINED ? rc : reap_found(found, sts, indices, *outcount, rc);
}

[[gnu::noinline]] int get_status_slow(MPI_Request r, int* flag, MPI_Status* st) {
    if (t_inside) return PMPI_Request_get_status(r, flag, st);
    CollRequest* c = nullptr;
    {
        MaybeLock lock(g_locking);
        c = find(r);
        progress();
    }
    const int error = st == MPI_STATUS_IGNORE ? 0 : st->MPI_ERROR;
    const int rc = PMPI_Request_get_status(r, flag, st);
    if (c && *flag && c->state == CollRequest::signalled) rewrite(c, st, error);
    return rc;
}

// MPI_Request_free: a persistent request only while inactive (as MPI's own: MPI_ERR_REQUEST); a non-blocking one
// at any time -- a running schedule then completes in later calls and is dropped.
[[gnu::noinline]] int request_free_slow(MPI_Request* r) {
    MaybeLock lock(g_locking);
    CollRequest* c = find(*r);
    if (!c) return PMPI_Request_free(r);
    if (c->persistent && c->state != CollRequest::idle)
        return request_error(*c, MPI_ERR_REQUEST, "MPI_Request_free: the persistent collective request is active");
    const int rc = PMPI_Request_free(r);
    if (c->persistent) {
        destroy(c);
    } else if (c->state == CollRequest::signalled) {
        reap(c, MPI_STATUS_IGNORE, rc, 0);
    } else {
        c->user_freed = true;
    }
    return rc;
}

[[gnu::noinline]] int cancel_slow(MPI_Request* r) {
    MaybeLock lock(g_locking);
    if (CollRequest* c = find(*r)) return request_error(*c, MPI_ERR_REQUEST, "MPI_Cancel: a collective request cannot be cancelled");
    return PMPI_Cancel(r);
}

}  // namespace
}  // namespace collplan::mpi::pmpi

using namespace collplan::mpi::pmpi;

extern "C" {

// One load and branch in front of each while no collplan request is outstanding.
#define COLLPLAN_NONE_OUTSTANDING() (g_outstanding.load(std::memory_order_relaxed) == 0)

int MPI_Wait(MPI_Request* r, MPI_Status* st) {
    if (COLLPLAN_NONE_OUTSTANDING()) [[likely]] return PMPI_Wait(r, st);
    return wait_slow(r, st);
}

int MPI_Test(MPI_Request* r, int* flag, MPI_Status* st) {
    if (COLLPLAN_NONE_OUTSTANDING()) [[likely]] return PMPI_Test(r, flag, st);
    return test_slow(r, flag, st);
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[]) {
    if (COLLPLAN_NONE_OUTSTANDING()) [[likely]] return PMPI_Waitall(n, reqs, sts);
    return waitall_slow(n, reqs, sts);
}

int MPI_Testall(int n, MPI_Request reqs[], int* flag, MPI_Status sts[]) {
    if (COLLPLAN_NONE_OUTSTANDING()) [[likely]] return PMPI_Testall(n, reqs, flag, sts);
    return testall_slow(n, reqs, flag, sts);
}

int MPI_Waitany(int n, MPI_Request reqs[], int* index, MPI_Status* st) {
    if (COLLPLAN_NONE_OUTSTANDING()) [[likely]] return PMPI_Waitany(n, reqs, index, st);
    return waitany_slow(n, reqs, index, st);
}

int MPI_Testany(int n, MPI_Request reqs[], int* index, int* flag, MPI_Status* st) {
    if (COLLPLAN_NONE_OUTSTANDING()) [[likely]] return PMPI_Testany(n, reqs, index, flag, st);
    return testany_slow(n, reqs, index, flag, st);
}

int MPI_Waitsome(int n, MPI_Request reqs[], int* outcount, int indices[], MPI_Status sts[]) {
    if (COLLPLAN_NONE_OUTSTANDING()) [[likely]] return PMPI_Waitsome(n, reqs, outcount, indices, sts);
    return waitsome_slow(n, reqs, outcount, indices, sts);
}

int MPI_Testsome(int n, MPI_Request reqs[], int* outcount, int indices[], MPI_Status sts[]) {
    if (COLLPLAN_NONE_OUTSTANDING()) [[likely]] return PMPI_Testsome(n, reqs, outcount, indices, sts);
    return testsome_slow(n, reqs, outcount, indices, sts);
}

int MPI_Request_get_status(MPI_Request r, int* flag, MPI_Status* st) {
    if (COLLPLAN_NONE_OUTSTANDING()) [[likely]] return PMPI_Request_get_status(r, flag, st);
    return get_status_slow(r, flag, st);
}

int MPI_Request_free(MPI_Request* r) {
    if (g_live.load(std::memory_order_relaxed) == 0) [[likely]] return PMPI_Request_free(r);
    return request_free_slow(r);
}

// Cancelling a collective request is erroneous (MPI 4.1, 6.12 and 6.13): a clear error, the run goes on.
int MPI_Cancel(MPI_Request* r) {
    if (g_live.load(std::memory_order_relaxed) == 0) [[likely]] return PMPI_Cancel(r);
    return cancel_slow(r);
}

int MPI_Start(MPI_Request* r) {
    if (g_live.load(std::memory_order_relaxed) == 0) [[likely]] return PMPI_Start(r);
    return start_one(r);
}

// In the order of the array (persistent collectives must be started in the same order on every rank).
int MPI_Startall(int n, MPI_Request reqs[]) {
    if (g_live.load(std::memory_order_relaxed) == 0) [[likely]] return PMPI_Startall(n, reqs);
    for (int i = 0; i < n; ++i)
        if (const int rc = start_one(&reqs[i]); rc != MPI_SUCCESS) return rc;
    return MPI_SUCCESS;
}

}  // extern "C"
