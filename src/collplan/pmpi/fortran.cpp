// libcollplan_pmpi.so, part three: the Fortran entry points, where an MPI's Fortran bindings call the C PMPI_
// functions directly, which LD_PRELOAD of the C entry points alone never sees -- not even a Fortran program's
// MPI_Init and MPI_Finalize:
// - Open MPI's do, in all three bindings: mpif.h and `use mpi` call mpi_allreduce_, `use mpi_f08` calls
//   ompi_allreduce_f (the same function), and both call PMPI_Allreduce. Here: every entry point below, each defined
//   as ompi_<name>_f with the aliases mpi_<name>, mpi_<name>_ and mpi_<name>__ (the spellings Fortran compilers on
//   Linux emit for `call mpi_<name>`; upper-case external names, which none emits by default, are left alone).
// - MPICH's mpif.h and `use mpi` call the C MPI_ functions (Debian's build; cmake/mpi_wrapper.cmake checks), and so
//   do its mpi_f08 routines with buffers (through its C descriptor functions); its other mpi_f08 routines call
//   PMPI_ (MPICH 4.0: MPI_Init, MPI_Finalize, MPI_Barrier, every call that takes a request, MPI_Type_free ...).
//   Here: those, as mpi_<name>_f08_.
// cmake/mpi_wrapper.cmake compiles this file with COLLPLAN_FORTRAN_ENTRY_POINTS=1 for both families.
//
// Each entry point converts the Fortran arguments as the MPI library's own binding does and calls the C entry
// point (MPI_Allreduce ...: pmpi.cpp and pmpi_requests.cpp), which runs collplan's schedule or passes the call to
// PMPI_. Conversions: handles by MPI_Comm_f2c, MPI_Type_f2c, MPI_Op_f2c, MPI_Info_f2c, MPI_Message_f2c (and back);
// requests by request_f2c/request_c2f (pmpi_requests.hpp: collplan's requests have Fortran handles of their own);
// Fortran's MPI_IN_PLACE and MPI_BOTTOM (Open MPI's common blocks mpi_fortran_in_place_, mpi_fortran_bottom_ in
// the compiler's spellings, looked up once) become C's; statuses: Open MPI's Fortran INTEGER arrays by
// MPI_Status_c2f and MPI_F_STATUS(ES)_IGNORE, MPICH's mpi_f08 TYPE(MPI_Status), laid out as its C MPI_Status, and
// MPI_F08_STATUS(ES)_IGNORE; MPI_Waitany's and MPI_Waitsome's indices count from 1; LOGICAL results use the
// library's own .TRUE. (1 for gfortran, -1 for Intel's compilers: read once from its Fortran MPI_Initialized);
// ierror (optional in mpi_f08: may be absent) gets the C call's result. A Fortran user-defined operation needs
// nothing: the MPI library knows its language and calls it from MPI_Reduce_local as from its own collectives.
//
// Covered: every collective of collectives.def (blocking, non-blocking, and persistent where the library has
// them), MPI_Init, MPI_Init_thread, MPI_Finalize, every call that takes a request (as the C side: MPI_Wait ...
// MPI_Startall), MPI_Type_free and MPI_Op_free (which hold what a pending request uses), and the blocking
// point-to-point calls that advance collplan's schedules while one runs (MPI_Send, MPI_Ssend, MPI_Recv,
// MPI_Sendrecv, MPI_Sendrecv_replace, MPI_Probe, MPI_Mprobe, MPI_Mrecv). Every other Fortran call goes to the MPI
// library as before.
#include "collplan/pmpi/pmpi_requests.hpp"

#if COLLPLAN_FORTRAN_ENTRY_POINTS
#include <dlfcn.h>

#include <cstring>
#include <vector>

namespace {

using F = MPI_Fint;
static_assert(sizeof(F) == sizeof(int), "Fortran INTEGER arrays (counts, displacements) are passed as C int arrays");

// ------------------------------------------------------------------------------------------------- per family
#if defined(OMPI_MAJOR_VERSION)
#define COLLPLAN_FORTRAN_BUFFERS 1  // every entry point
using FStatus = F;                  // a status: MPI_Status's ints
FStatus* status_ignore() { return MPI_F_STATUS_IGNORE; }
FStatus* statuses_ignore() { return MPI_F_STATUSES_IGNORE; }
FStatus* status_at(FStatus* fs, int i) { return fs + static_cast<size_t>(i) * (sizeof(MPI_Status) / sizeof(F)); }
void put_status(const MPI_Status* c, FStatus* f) { PMPI_Status_c2f(c, f); }
constexpr const char* kInitialized = "ompi_initialized_f";
#else                               // MPICH's mpi_f08: the routines without buffers
#define COLLPLAN_FORTRAN_BUFFERS 0
using FStatus = MPI_F08_status;
static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status), "MPICH's mpi_f08 status is its C status");
FStatus* status_ignore() { return MPI_F08_STATUS_IGNORE; }
FStatus* statuses_ignore() { return MPI_F08_STATUSES_IGNORE; }
FStatus* status_at(FStatus* fs, int i) { return fs + i; }
void put_status(const MPI_Status* c, FStatus* f) { std::memcpy(f, c, sizeof(MPI_Status)); }
constexpr const char* kInitialized = "mpi_initialized_f08_";
#endif

#if COLLPLAN_FORTRAN_BUFFERS
// Fortran's MPI_IN_PLACE and MPI_BOTTOM: the addresses of Open MPI's common blocks, in the spellings that exist
// (one each for a given compiler), looked up once.
struct Sentinels {
    const void* in_place[4];
    const void* bottom[4];
    int n_in_place = 0, n_bottom = 0;
};
const Sentinels& sentinels() {
    static const Sentinels s = [] {
        Sentinels v{};
        for (const char* name : {"mpi_fortran_in_place_", "mpi_fortran_in_place", "mpi_fortran_in_place__",
                                 "MPI_FORTRAN_IN_PLACE"})
            if (const void* p = dlsym(RTLD_DEFAULT, name)) v.in_place[v.n_in_place++] = p;
        for (const char* name : {"mpi_fortran_bottom_", "mpi_fortran_bottom", "mpi_fortran_bottom__",
                                 "MPI_FORTRAN_BOTTOM"})
            if (const void* p = dlsym(RTLD_DEFAULT, name)) v.bottom[v.n_bottom++] = p;
        return v;
    }();
    return s;
}
template <class T>
T* buf(T* b) {
    const Sentinels& s = sentinels();
    for (int i = 0; i < s.n_in_place; ++i)
        if (b == s.in_place[i]) return static_cast<T*>(MPI_IN_PLACE);
    for (int i = 0; i < s.n_bottom; ++i)
        if (b == s.bottom[i]) return static_cast<T*>(MPI_BOTTOM);
    return b;
}
#endif

MPI_Comm comm(const F* f) { return MPI_Comm_f2c(*f); }
[[maybe_unused]] MPI_Datatype type(const F* f) { return MPI_Type_f2c(*f); }
[[maybe_unused]] MPI_Op op(const F* f) { return MPI_Op_f2c(*f); }

void set(F* ierr, int rc) {
    if (ierr) *ierr = rc;
}

// The library's LOGICAL .TRUE. (its MPI_Initialized says true once MPI is initialised).
F fortran_true() {
    static const F value = [] {
        using Initialized = void(F*, F*);
        F flag = 0, ierr = 0;
        if (auto f = reinterpret_cast<Initialized*>(dlsym(RTLD_DEFAULT, kInitialized))) f(&flag, &ierr);
        return flag != 0 ? flag : F{1};
    }();
    return value;
}
F logical(int flag) { return flag ? fortran_true() : 0; }

// A status in and out (ignored where the program passed the ignore sentinel).
struct Status {
    FStatus* f;
    MPI_Status c;
    explicit Status(FStatus* fs) : f(fs) {}
    MPI_Status* get() { return f == status_ignore() ? MPI_STATUS_IGNORE : &c; }
    void put() {
        if (f != status_ignore()) put_status(&c, f);
    }
};
// An array of n requests and their statuses, converted in and out (per thread, reused: no allocation once warm).
struct Arrays {
    std::vector<MPI_Request> reqs;
    std::vector<MPI_Status> sts;
};
Arrays& arrays(int n, const F* freqs, bool statuses) {
    static thread_local Arrays a;
    a.reqs.resize(n > 0 ? n : 0);
    for (int i = 0; i < n; ++i) a.reqs[i] = collplan::mpi::pmpi::request_f2c(freqs[i]);
    if (statuses) a.sts.resize(n > 0 ? n : 0);
    return a;
}
MPI_Status* statuses(Arrays& a, FStatus* fs) { return fs == statuses_ignore() ? MPI_STATUSES_IGNORE : a.sts.data(); }
void put_requests(const Arrays& a, int n, F* freqs) {
    for (int i = 0; i < n; ++i) freqs[i] = collplan::mpi::pmpi::request_c2f(a.reqs[i]);
}
void put_statuses(Arrays& a, int k, FStatus* fs) {  // the first k statuses
    if (fs == statuses_ignore()) return;
    for (int i = 0; i < k; ++i) put_status(&a.sts[i], status_at(fs, i));
}

}  // namespace

using collplan::mpi::pmpi::request_c2f;
using collplan::mpi::pmpi::request_f2c;

#if defined(OMPI_MAJOR_VERSION)  // ompi_<name>_f with its aliases mpi_<name>, mpi_<name>_, mpi_<name>__
#define COLLPLAN_FORTRAN(name, params)                                                       \
    extern "C" void ompi_##name##_f params;                                                  \
    extern "C" void mpi_##name params __attribute__((alias("ompi_" #name "_f"), used));      \
    extern "C" void mpi_##name##_ params __attribute__((alias("ompi_" #name "_f"), used));   \
    extern "C" void mpi_##name##__ params __attribute__((alias("ompi_" #name "_f"), used));  \
    extern "C" void ompi_##name##_f params
// The calls with a LOGICAL result: Open MPI's mpi_f08 calls pmpi_<name>_ for them, so mpi_<name>_f08_ is one more
// alias.
#define COLLPLAN_FORTRAN_LOGICAL(name, params)                                                    \
    extern "C" void mpi_##name##_f08_ params __attribute__((alias("ompi_" #name "_f"), used));    \
    COLLPLAN_FORTRAN(name, params)
#else  // MPICH's mpi_f08
#define COLLPLAN_FORTRAN(name, params) extern "C" void mpi_##name##_f08_ params
#define COLLPLAN_FORTRAN_LOGICAL COLLPLAN_FORTRAN
#endif

// ------------------------------------------------------------------------------------------------- collectives
// Per argument shape of collectives.def: the Fortran parameters (after the buffers, all by reference) and the C
// arguments made of them.
#define F_PARAMS_bytes \
    const void *sbuf, const F *scount, const F *st, void *rbuf, const F *rcount, const F *rt, const F *fcomm
#define F_ARGS_bytes buf(sbuf), *scount, type(st), buf(rbuf), *rcount, type(rt), comm(fcomm)
#define F_PARAMS_bytes_root                                                                                  \
    const void *sbuf, const F *scount, const F *st, void *rbuf, const F *rcount, const F *rt, const F *root, \
        const F *fcomm
#define F_ARGS_bytes_root buf(sbuf), *scount, type(st), buf(rbuf), *rcount, type(rt), *root, comm(fcomm)
#define F_PARAMS_bcast void *b, const F *count, const F *t, const F *root, const F *fcomm
#define F_ARGS_bcast buf(b), *count, type(t), *root, comm(fcomm)
#define F_PARAMS_reduction const void *sbuf, void *rbuf, const F *count, const F *t, const F *fop, const F *fcomm
#define F_ARGS_reduction buf(sbuf), buf(rbuf), *count, type(t), op(fop), comm(fcomm)
#define F_PARAMS_reduction_root \
    const void *sbuf, void *rbuf, const F *count, const F *t, const F *fop, const F *root, const F *fcomm
#define F_ARGS_reduction_root buf(sbuf), buf(rbuf), *count, type(t), op(fop), *root, comm(fcomm)
#define F_PARAMS_allgatherv                                                                                     \
    const void *sbuf, const F *scount, const F *st, void *rbuf, const F *rcounts, const F *displs, const F *rt, \
        const F *fcomm
#define F_ARGS_allgatherv buf(sbuf), *scount, type(st), buf(rbuf), rcounts, displs, type(rt), comm(fcomm)
#define F_PARAMS_alltoallv                                                                                   \
    const void *sbuf, const F *scounts, const F *sdispls, const F *st, void *rbuf, const F *rcounts,         \
        const F *rdispls, const F *rt, const F *fcomm
#define F_ARGS_alltoallv buf(sbuf), scounts, sdispls, type(st), buf(rbuf), rcounts, rdispls, type(rt), comm(fcomm)
#define F_PARAMS_reduce_scatter \
    const void *sbuf, void *rbuf, const F *rcounts, const F *t, const F *fop, const F *fcomm
#define F_ARGS_reduce_scatter buf(sbuf), buf(rbuf), rcounts, type(t), op(fop), comm(fcomm)
#define F_PARAMS_barrier const F *fcomm
#define F_ARGS_barrier comm(fcomm)

// The collectives with buffers only where the library's Fortran calls PMPI_ for them (COLLPLAN_FORTRAN_BUFFERS).
#if COLLPLAN_FORTRAN_BUFFERS
#define COLLPLAN_FORTRAN_SHAPE(args, entry) entry
#else
#define COLLPLAN_FORTRAN_SHAPE(args, entry) COLLPLAN_FORTRAN_SHAPE_##args(entry)
#define COLLPLAN_FORTRAN_SHAPE_barrier(entry) entry
#define COLLPLAN_FORTRAN_SHAPE_bytes(entry)
#define COLLPLAN_FORTRAN_SHAPE_bytes_root(entry)
#define COLLPLAN_FORTRAN_SHAPE_bcast(entry)
#define COLLPLAN_FORTRAN_SHAPE_reduction(entry)
#define COLLPLAN_FORTRAN_SHAPE_reduction_root(entry)
#define COLLPLAN_FORTRAN_SHAPE_allgatherv(entry)
#define COLLPLAN_FORTRAN_SHAPE_alltoallv(entry)
#define COLLPLAN_FORTRAN_SHAPE_reduce_scatter(entry)
#endif

#define COLLPLAN_FORTRAN_COLLECTIVE(id, Spelling, args)                                                 \
    COLLPLAN_FORTRAN(id, (F_PARAMS_##args, F * ierr)) { set(ierr, MPI_##Spelling(F_ARGS_##args)); }       \
    COLLPLAN_FORTRAN(i##id, (F_PARAMS_##args, F * freq, F * ierr)) {                                    \
        MPI_Request r = MPI_REQUEST_NULL;                                                               \
        const int rc = MPI_I##id(F_ARGS_##args, &r);                                                    \
        if (rc == MPI_SUCCESS) *freq = request_c2f(r);                                                  \
        set(ierr, rc);                                                                                  \
    }
#define X(id, Spelling, args) COLLPLAN_FORTRAN_SHAPE(args, COLLPLAN_FORTRAN_COLLECTIVE(id, Spelling, args))
#include "collplan/runtime/mpi/collectives.def"
#undef X

#if COLLPLAN_HAVE_PERSISTENT
#define COLLPLAN_FORTRAN_PERSISTENT(id, Spelling, args)                                   \
    COLLPLAN_FORTRAN(id##_init, (F_PARAMS_##args, const F* info, F* freq, F* ierr)) {     \
        MPI_Request r = MPI_REQUEST_NULL;                                                 \
        const int rc = MPI_##Spelling##_init(F_ARGS_##args, MPI_Info_f2c(*info), &r);     \
        if (rc == MPI_SUCCESS) *freq = request_c2f(r);                                    \
        set(ierr, rc);                                                                    \
    }
#define X(id, Spelling, args) COLLPLAN_FORTRAN_SHAPE(args, COLLPLAN_FORTRAN_PERSISTENT(id, Spelling, args))
#include "collplan/runtime/mpi/collectives.def"
#undef X
#endif

// ------------------------------------------------------------------------------------------------- init, finalize
COLLPLAN_FORTRAN(init, (F* ierr)) { set(ierr, MPI_Init(nullptr, nullptr)); }

COLLPLAN_FORTRAN(init_thread, (const F* required, F* provided, F* ierr)) {
    int p = MPI_THREAD_SINGLE;
    const int rc = MPI_Init_thread(nullptr, nullptr, *required, &p);
    if (rc == MPI_SUCCESS) *provided = p;
    set(ierr, rc);
}

COLLPLAN_FORTRAN(finalize, (F* ierr)) { set(ierr, MPI_Finalize()); }

// ------------------------------------------------------------------------------------------------- requests
COLLPLAN_FORTRAN(wait, (F* freq, FStatus* fst, F* ierr)) {
    MPI_Request r = request_f2c(*freq);
    Status st(fst);
    const int rc = MPI_Wait(&r, st.get());
    if (rc == MPI_SUCCESS) {
        *freq = request_c2f(r);
        st.put();
    }
    set(ierr, rc);
}

COLLPLAN_FORTRAN_LOGICAL(test, (F* freq, F* flag, FStatus* fst, F* ierr)) {
    MPI_Request r = request_f2c(*freq);
    Status st(fst);
    int done = 0;
    const int rc = MPI_Test(&r, &done, st.get());
    if (rc == MPI_SUCCESS) {
        *freq = request_c2f(r);
        *flag = logical(done);
        if (done) st.put();
    }
    set(ierr, rc);
}

COLLPLAN_FORTRAN_LOGICAL(request_get_status, (const F* freq, F* flag, FStatus* fst, F* ierr)) {
    Status st(fst);
    int done = 0;
    const int rc = MPI_Request_get_status(request_f2c(*freq), &done, st.get());
    if (rc == MPI_SUCCESS) {
        *flag = logical(done);
        if (done) st.put();
    }
    set(ierr, rc);
}

// MPI_ERR_IN_STATUS: the statuses carry each request's error, so they are converted on that error too.
COLLPLAN_FORTRAN(waitall, (const F* n, F* freqs, FStatus* fsts, F* ierr)) {
    Arrays& a = arrays(*n, freqs, true);
    const int rc = MPI_Waitall(*n, a.reqs.data(), statuses(a, fsts));
    if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) {
        put_requests(a, *n, freqs);
        put_statuses(a, *n, fsts);
    }
    set(ierr, rc);
}

COLLPLAN_FORTRAN_LOGICAL(testall, (const F* n, F* freqs, F* flag, FStatus* fsts, F* ierr)) {
    Arrays& a = arrays(*n, freqs, true);
    int done = 0;
    const int rc = MPI_Testall(*n, a.reqs.data(), &done, statuses(a, fsts));
    if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) {
        *flag = logical(done);
        put_requests(a, *n, freqs);
        if (done || rc == MPI_ERR_IN_STATUS) put_statuses(a, *n, fsts);
    }
    set(ierr, rc);
}

COLLPLAN_FORTRAN(waitany, (const F* n, F* freqs, F* index, FStatus* fst, F* ierr)) {
    Arrays& a = arrays(*n, freqs, false);
    Status st(fst);
    int i = MPI_UNDEFINED;
    const int rc = MPI_Waitany(*n, a.reqs.data(), &i, st.get());
    if (rc == MPI_SUCCESS) {
        put_requests(a, *n, freqs);
        *index = i == MPI_UNDEFINED ? i : i + 1;
        st.put();
    }
    set(ierr, rc);
}

COLLPLAN_FORTRAN_LOGICAL(testany, (const F* n, F* freqs, F* index, F* flag, FStatus* fst, F* ierr)) {
    Arrays& a = arrays(*n, freqs, false);
    Status st(fst);
    int i = MPI_UNDEFINED, done = 0;
    const int rc = MPI_Testany(*n, a.reqs.data(), &i, &done, st.get());
    if (rc == MPI_SUCCESS) {
        put_requests(a, *n, freqs);
        *index = i == MPI_UNDEFINED ? i : i + 1;
        *flag = logical(done);
        if (done) st.put();
    }
    set(ierr, rc);
}

// MPI_Waitsome and MPI_Testsome: statuses[k] belongs to indices[k].
#define COLLPLAN_FORTRAN_SOME(Entry, name, Call)                                                          \
    Entry(name, (const F* n, F* freqs, F* outcount, F* indices, FStatus* fsts, F* ierr)) {           \
        Arrays& a = arrays(*n, freqs, true);                                                              \
        int out = 0;                                                                                      \
        const int rc = Call(*n, a.reqs.data(), &out, indices, statuses(a, fsts));                          \
        if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) {                                               \
            put_requests(a, *n, freqs);                                                                   \
            *outcount = out;                                                                              \
            if (out != MPI_UNDEFINED) {                                                                   \
                put_statuses(a, out, fsts);                                                      \
                for (int k = 0; k < out; ++k) indices[k] += 1;                                            \
            }                                                                                             \
        }                                                                                                 \
        set(ierr, rc);                                                                                    \
    }
COLLPLAN_FORTRAN_SOME(COLLPLAN_FORTRAN, waitsome, MPI_Waitsome)
COLLPLAN_FORTRAN_SOME(COLLPLAN_FORTRAN_LOGICAL, testsome, MPI_Testsome)
#undef COLLPLAN_FORTRAN_SOME

COLLPLAN_FORTRAN(request_free, (F* freq, F* ierr)) {
    MPI_Request r = request_f2c(*freq);
    const int rc = MPI_Request_free(&r);
    if (rc == MPI_SUCCESS) *freq = request_c2f(r);
    set(ierr, rc);
}

COLLPLAN_FORTRAN(cancel, (const F* freq, F* ierr)) {
    MPI_Request r = request_f2c(*freq);
    set(ierr, MPI_Cancel(&r));
}

COLLPLAN_FORTRAN(start, (F* freq, F* ierr)) {
    MPI_Request r = request_f2c(*freq);
    const int rc = MPI_Start(&r);
    if (rc == MPI_SUCCESS) *freq = request_c2f(r);
    set(ierr, rc);
}

COLLPLAN_FORTRAN(startall, (const F* n, F* freqs, F* ierr)) {
    Arrays& a = arrays(*n, freqs, false);
    const int rc = MPI_Startall(*n, a.reqs.data());
    if (rc == MPI_SUCCESS) put_requests(a, *n, freqs);
    set(ierr, rc);
}

// ------------------------------------------------------------------------------------------------- handles freed
COLLPLAN_FORTRAN(type_free, (F* ft, F* ierr)) {
    MPI_Datatype t = MPI_Type_f2c(*ft);
    const int rc = MPI_Type_free(&t);
    if (rc == MPI_SUCCESS) *ft = MPI_Type_c2f(t);
    set(ierr, rc);
}

COLLPLAN_FORTRAN(op_free, (F* fop, F* ierr)) {
    MPI_Op o = MPI_Op_f2c(*fop);
    const int rc = MPI_Op_free(&o);
    if (rc == MPI_SUCCESS) *fop = MPI_Op_c2f(o);
    set(ierr, rc);
}

// ------------------------------------------------------------------------------------------------- point-to-point
COLLPLAN_FORTRAN(probe, (const F* source, const F* tag, const F* c, FStatus* fst, F* ierr)) {
    Status st(fst);
    const int rc = MPI_Probe(*source, *tag, comm(c), st.get());
    if (rc == MPI_SUCCESS) st.put();
    set(ierr, rc);
}

COLLPLAN_FORTRAN(mprobe, (const F* source, const F* tag, const F* c, F* fmsg, FStatus* fst, F* ierr)) {
    Status st(fst);
    MPI_Message m = MPI_MESSAGE_NULL;
    const int rc = MPI_Mprobe(*source, *tag, comm(c), &m, st.get());
    if (rc == MPI_SUCCESS) {
        *fmsg = MPI_Message_c2f(m);
        st.put();
    }
    set(ierr, rc);
}

#if COLLPLAN_FORTRAN_BUFFERS
#define COLLPLAN_FORTRAN_SEND(name, Call)                                                                       \
    COLLPLAN_FORTRAN(name, (const void* b, const F* count, const F* t, const F* dest, const F* tag, const F* c, \
                            F* ierr)) {                                                                         \
        set(ierr, Call(buf(b), *count, type(t), *dest, *tag, comm(c)));                                         \
    }
COLLPLAN_FORTRAN_SEND(send, MPI_Send)
COLLPLAN_FORTRAN_SEND(ssend, MPI_Ssend)
#undef COLLPLAN_FORTRAN_SEND

COLLPLAN_FORTRAN(recv, (void* b, const F* count, const F* t, const F* source, const F* tag, const F* c, FStatus* fst,
                        F* ierr)) {
    Status st(fst);
    const int rc = MPI_Recv(buf(b), *count, type(t), *source, *tag, comm(c), st.get());
    if (rc == MPI_SUCCESS) st.put();
    set(ierr, rc);
}

COLLPLAN_FORTRAN(sendrecv, (const void* sb, const F* scount, const F* st_, const F* dest, const F* stag, void* rb,
                            const F* rcount, const F* rt, const F* source, const F* rtag, const F* c, FStatus* fst,
                            F* ierr)) {
    Status st(fst);
    const int rc = MPI_Sendrecv(buf(sb), *scount, type(st_), *dest, *stag, buf(rb), *rcount, type(rt), *source,
                                *rtag, comm(c), st.get());
    if (rc == MPI_SUCCESS) st.put();
    set(ierr, rc);
}

COLLPLAN_FORTRAN(sendrecv_replace, (void* b, const F* count, const F* t, const F* dest, const F* stag,
                                    const F* source, const F* rtag, const F* c, FStatus* fst, F* ierr)) {
    Status st(fst);
    const int rc = MPI_Sendrecv_replace(buf(b), *count, type(t), *dest, *stag, *source, *rtag, comm(c), st.get());
    if (rc == MPI_SUCCESS) st.put();
    set(ierr, rc);
}

COLLPLAN_FORTRAN(mrecv, (void* b, const F* count, const F* t, F* fmsg, FStatus* fst, F* ierr)) {
    Status st(fst);
    MPI_Message m = MPI_Message_f2c(*fmsg);
    const int rc = MPI_Mrecv(buf(b), *count, type(t), &m, st.get());
    if (rc == MPI_SUCCESS) {
        *fmsg = MPI_Message_c2f(m);
        st.put();
    }
    set(ierr, rc);
}

#endif  // COLLPLAN_FORTRAN_BUFFERS

#endif  // COLLPLAN_FORTRAN_ENTRY_POINTS
