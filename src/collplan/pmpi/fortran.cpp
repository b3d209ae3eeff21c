// libcollplan_pmpi.so, part three: the Fortran entry points, for an MPI whose Fortran bindings call the C PMPI_
// functions directly -- Open MPI's do (its mpif.h and `use mpi` call mpi_allreduce_, which calls PMPI_Allreduce;
// its `use mpi_f08` calls ompi_allreduce_f, the same function), so LD_PRELOAD of the C entry points alone never sees
// a Fortran program's calls, not even its MPI_Finalize. MPICH's bindings call the C MPI_ functions (Debian's, and
// MPICH's default), which pmpi.cpp already intercepts: cmake/mpi_wrapper.cmake checks which, and compiles this file
// with COLLPLAN_FORTRAN_ENTRY_POINTS=1 for Open MPI's family only.
//
// Each entry point converts the Fortran arguments as the MPI library's own binding does and calls the C entry
// point (MPI_Allreduce ...: pmpi.cpp and pmpi_requests.cpp), which runs collplan's schedule or passes the call to
// PMPI_. Conversions: handles by MPI_Comm_f2c, MPI_Type_f2c, MPI_Op_f2c, MPI_Info_f2c, MPI_Message_f2c (and back);
// requests by request_f2c/request_c2f (pmpi_requests.hpp: collplan's requests have Fortran handles of their own);
// Fortran's MPI_IN_PLACE and MPI_BOTTOM (Open MPI's common blocks mpi_fortran_in_place_, mpi_fortran_bottom_ in
// the compiler's spellings, looked up once) become C's; MPI_F_STATUS(ES)_IGNORE become MPI_STATUS(ES)_IGNORE;
// statuses by MPI_Status_c2f; MPI_Waitany's and MPI_Waitsome's indices count from 1; LOGICAL results use the
// library's own .TRUE. (1 for gfortran, -1 for Intel's compilers: read once from its MPI_Initialized); ierror
// gets the C call's result. A Fortran user-defined operation needs nothing: the MPI library knows its language
// and calls it from MPI_Reduce_local as from its own collectives.
//
// Names: every entry point is defined as ompi_<name>_f (what Open MPI's mpi_f08 module calls) with the aliases
// mpi_<name>, mpi_<name>_ and mpi_<name>__ (the spellings Fortran compilers on Linux emit for `call mpi_<name>`);
// upper-case external names, which no Linux Fortran compiler emits by default, are left to the MPI library.
// Covered: every collective of collectives.def (blocking, non-blocking, and persistent where the library has
// them), MPI_Init, MPI_Init_thread, MPI_Finalize, every call that takes a request (as the C side: MPI_Wait ...
// MPI_Startall), MPI_Type_free and MPI_Op_free (which hold what a pending request uses), and the blocking
// point-to-point calls that advance collplan's schedules while one runs (MPI_Send, MPI_Ssend, MPI_Recv,
// MPI_Sendrecv, MPI_Sendrecv_replace, MPI_Probe, MPI_Mprobe, MPI_Mrecv). Every other Fortran call goes to the MPI
// library as before.
#include "collplan/pmpi/pmpi_requests.hpp"

#if COLLPLAN_FORTRAN_ENTRY_POINTS
#include <dlfcn.h>

#include <vector>

namespace {

using F = MPI_Fint;
static_assert(sizeof(F) == sizeof(int), "Fortran INTEGER arrays (counts, displacements) are passed as C int arrays");

// Fortran's MPI_IN_PLACE and MPI_BOTTOM: the addresses of Open MPI's common blocks, in each compiler's spelling.
struct Sentinels {
    const void* in_place[4];
    const void* bottom[4];
};
const Sentinels& sentinels() {
    static const Sentinels s = [] {
        Sentinels v{};
        const char* in_place[4] = {"mpi_fortran_in_place_", "mpi_fortran_in_place", "mpi_fortran_in_place__",
                                   "MPI_FORTRAN_IN_PLACE"};
        const char* bottom[4] = {"mpi_fortran_bottom_", "mpi_fortran_bottom", "mpi_fortran_bottom__",
                                 "MPI_FORTRAN_BOTTOM"};
        for (int i = 0; i < 4; ++i) {
            v.in_place[i] = dlsym(RTLD_DEFAULT, in_place[i]);
            v.bottom[i] = dlsym(RTLD_DEFAULT, bottom[i]);
        }
        return v;
    }();
    return s;
}
template <class T>
T* buf(T* b) {
    const Sentinels& s = sentinels();
    for (int i = 0; i < 4; ++i) {
        if (b == nullptr) break;
        if (b == s.in_place[i]) return static_cast<T*>(MPI_IN_PLACE);
        if (b == s.bottom[i]) return static_cast<T*>(MPI_BOTTOM);
    }
    return b;
}

MPI_Comm comm(const F* f) { return PMPI_Comm_f2c(*f); }
MPI_Datatype type(const F* f) { return PMPI_Type_f2c(*f); }
MPI_Op op(const F* f) { return PMPI_Op_f2c(*f); }

void set(F* ierr, int rc) {
    if (ierr) *ierr = rc;
}

// The library's LOGICAL .TRUE. (its MPI_Initialized says true once MPI is initialised).
F fortran_true() {
    static const F value = [] {
        using Initialized = void(F*, F*);
        F flag = 0, ierr = 0;
        if (auto f = reinterpret_cast<Initialized*>(dlsym(RTLD_DEFAULT, "ompi_initialized_f"))) f(&flag, &ierr);
        return flag != 0 ? flag : F{1};
    }();
    return value;
}
F logical(int flag) { return flag ? fortran_true() : 0; }

// Statuses: a Fortran status is MPI_Status's ints (Open MPI: 6); the ignore sentinels are MPI_F_STATUS(ES)_IGNORE.
constexpr int kStatusInts = sizeof(MPI_Status) / sizeof(F);
struct Status {
    F* f;
    MPI_Status c;
    explicit Status(F* fs) : f(fs) {}
    MPI_Status* get() { return f == MPI_F_STATUS_IGNORE ? MPI_STATUS_IGNORE : &c; }
    void put() {
        if (f != MPI_F_STATUS_IGNORE) PMPI_Status_c2f(&c, f);
    }
};
// An array of n statuses and n requests, converted in and out (per thread, reused: no allocation once warm).
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
MPI_Status* statuses(Arrays& a, F* fs) { return fs == MPI_F_STATUSES_IGNORE ? MPI_STATUSES_IGNORE : a.sts.data(); }
void put_requests(const Arrays& a, int n, F* freqs) {
    for (int i = 0; i < n; ++i) freqs[i] = collplan::mpi::pmpi::request_c2f(a.reqs[i]);
}
void put_statuses(Arrays& a, int k, F* fs) {  // the first k statuses
    if (fs == MPI_F_STATUSES_IGNORE) return;
    for (int i = 0; i < k; ++i) PMPI_Status_c2f(&a.sts[i], fs + static_cast<size_t>(i) * kStatusInts);
}

}  // namespace

using collplan::mpi::pmpi::request_c2f;
using collplan::mpi::pmpi::request_f2c;

// ompi_<name>_f with its aliases mpi_<name>, mpi_<name>_, mpi_<name>__.
#define COLLPLAN_FORTRAN(name, params)                                                       \
    extern "C" void ompi_##name##_f params;                                                  \
    extern "C" void mpi_##name params __attribute__((alias("ompi_" #name "_f"), used));      \
    extern "C" void mpi_##name##_ params __attribute__((alias("ompi_" #name "_f"), used));   \
    extern "C" void mpi_##name##__ params __attribute__((alias("ompi_" #name "_f"), used));  \
    extern "C" void ompi_##name##_f params

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

#define X(id, Spelling, args)                                                              \
    COLLPLAN_FORTRAN(id, (F_PARAMS_##args, F * ierr)) { set(ierr, MPI_##Spelling(F_ARGS_##args)); } \
    COLLPLAN_FORTRAN(i##id, (F_PARAMS_##args, F * freq, F * ierr)) {                       \
        MPI_Request r = MPI_REQUEST_NULL;                                                  \
        const int rc = MPI_I##id(F_ARGS_##args, &r);                                       \
        if (rc == MPI_SUCCESS) *freq = request_c2f(r);                                     \
        set(ierr, rc);                                                                     \
    }
#include "collplan/runtime/mpi/collectives.def"
#undef X

#if COLLPLAN_HAVE_PERSISTENT
#define X(id, Spelling, args)                                                                 \
    COLLPLAN_FORTRAN(id##_init, (F_PARAMS_##args, const F* info, F* freq, F* ierr)) {         \
        MPI_Request r = MPI_REQUEST_NULL;                                                     \
        const int rc = MPI_##Spelling##_init(F_ARGS_##args, PMPI_Info_f2c(*info), &r);        \
        if (rc == MPI_SUCCESS) *freq = request_c2f(r);                                        \
        set(ierr, rc);                                                                        \
    }
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
COLLPLAN_FORTRAN(wait, (F* freq, F* fst, F* ierr)) {
    MPI_Request r = request_f2c(*freq);
    Status st(fst);
    const int rc = MPI_Wait(&r, st.get());
    if (rc == MPI_SUCCESS) {
        *freq = request_c2f(r);
        st.put();
    }
    set(ierr, rc);
}

COLLPLAN_FORTRAN(test, (F* freq, F* flag, F* fst, F* ierr)) {
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

COLLPLAN_FORTRAN(request_get_status, (const F* freq, F* flag, F* fst, F* ierr)) {
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
COLLPLAN_FORTRAN(waitall, (const F* n, F* freqs, F* fsts, F* ierr)) {
    Arrays& a = arrays(*n, freqs, true);
    const int rc = MPI_Waitall(*n, a.reqs.data(), statuses(a, fsts));
    if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) {
        put_requests(a, *n, freqs);
        put_statuses(a, *n, fsts);
    }
    set(ierr, rc);
}

COLLPLAN_FORTRAN(testall, (const F* n, F* freqs, F* flag, F* fsts, F* ierr)) {
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

COLLPLAN_FORTRAN(waitany, (const F* n, F* freqs, F* index, F* fst, F* ierr)) {
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

COLLPLAN_FORTRAN(testany, (const F* n, F* freqs, F* index, F* flag, F* fst, F* ierr)) {
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
#define COLLPLAN_FORTRAN_SOME(name, Call)                                                                 \
    COLLPLAN_FORTRAN(name, (const F* n, F* freqs, F* outcount, F* indices, F* fsts, F* ierr)) {           \
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
COLLPLAN_FORTRAN_SOME(waitsome, MPI_Waitsome)
COLLPLAN_FORTRAN_SOME(testsome, MPI_Testsome)
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
    MPI_Datatype t = PMPI_Type_f2c(*ft);
    const int rc = MPI_Type_free(&t);
    if (rc == MPI_SUCCESS) *ft = PMPI_Type_c2f(t);
    set(ierr, rc);
}

COLLPLAN_FORTRAN(op_free, (F* fop, F* ierr)) {
    MPI_Op o = PMPI_Op_f2c(*fop);
    const int rc = MPI_Op_free(&o);
    if (rc == MPI_SUCCESS) *fop = PMPI_Op_c2f(o);
    set(ierr, rc);
}

// ------------------------------------------------------------------------------------------------- point-to-point
#define COLLPLAN_FORTRAN_SEND(name, Call)                                                                       \
    COLLPLAN_FORTRAN(name, (const void* b, const F* count, const F* t, const F* dest, const F* tag, const F* c, \
                            F* ierr)) {                                                                         \
        set(ierr, Call(buf(b), *count, type(t), *dest, *tag, comm(c)));                                         \
    }
COLLPLAN_FORTRAN_SEND(send, MPI_Send)
COLLPLAN_FORTRAN_SEND(ssend, MPI_Ssend)
#undef COLLPLAN_FORTRAN_SEND

COLLPLAN_FORTRAN(recv, (void* b, const F* count, const F* t, const F* source, const F* tag, const F* c, F* fst,
                        F* ierr)) {
    Status st(fst);
    const int rc = MPI_Recv(buf(b), *count, type(t), *source, *tag, comm(c), st.get());
    if (rc == MPI_SUCCESS) st.put();
    set(ierr, rc);
}

COLLPLAN_FORTRAN(sendrecv, (const void* sb, const F* scount, const F* st_, const F* dest, const F* stag, void* rb,
                            const F* rcount, const F* rt, const F* source, const F* rtag, const F* c, F* fst,
                            F* ierr)) {
    Status st(fst);
    const int rc = MPI_Sendrecv(buf(sb), *scount, type(st_), *dest, *stag, buf(rb), *rcount, type(rt), *source,
                                *rtag, comm(c), st.get());
    if (rc == MPI_SUCCESS) st.put();
    set(ierr, rc);
}

COLLPLAN_FORTRAN(sendrecv_replace, (void* b, const F* count, const F* t, const F* dest, const F* stag,
                                    const F* source, const F* rtag, const F* c, F* fst, F* ierr)) {
    Status st(fst);
    const int rc = MPI_Sendrecv_replace(buf(b), *count, type(t), *dest, *stag, *source, *rtag, comm(c), st.get());
    if (rc == MPI_SUCCESS) st.put();
    set(ierr, rc);
}

COLLPLAN_FORTRAN(probe, (const F* source, const F* tag, const F* c, F* fst, F* ierr)) {
    Status st(fst);
    const int rc = MPI_Probe(*source, *tag, comm(c), st.get());
    if (rc == MPI_SUCCESS) st.put();
    set(ierr, rc);
}

COLLPLAN_FORTRAN(mprobe, (const F* source, const F* tag, const F* c, F* fmsg, F* fst, F* ierr)) {
    Status st(fst);
    MPI_Message m = MPI_MESSAGE_NULL;
    const int rc = MPI_Mprobe(*source, *tag, comm(c), &m, st.get());
    if (rc == MPI_SUCCESS) {
        *fmsg = PMPI_Message_c2f(m);
        st.put();
    }
    set(ierr, rc);
}

COLLPLAN_FORTRAN(mrecv, (void* b, const F* count, const F* t, F* fmsg, F* fst, F* ierr)) {
    Status st(fst);
    MPI_Message m = PMPI_Message_f2c(*fmsg);
    const int rc = MPI_Mrecv(buf(b), *count, type(t), &m, st.get());
    if (rc == MPI_SUCCESS) {
        *fmsg = PMPI_Message_c2f(m);
        st.put();
    }
    set(ierr, rc);
}

#endif  // COLLPLAN_FORTRAN_ENTRY_POINTS
