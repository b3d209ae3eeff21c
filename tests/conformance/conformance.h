/* Shared helpers of the conformance programs (tests/conformance/README.md). The programs are ordinary MPI
 * programs: they use nothing but MPI and know nothing about collplan. This header only keeps the bookkeeping in
 * one place:
 *   - every check counts; a failed one prints one line naming the program, rank, case, index, got and expected
 *     (the first 3 of each case and at most 120 per rank; CONFORMANCE_FAILURES=0,0 prints every one);
 *   - the communicators every case runs on (world, a duplicate, odd/even and reversed-key splits, and for the
 *     data-movement collectives two 2-D Cartesian communicators);
 *   - point-to-point traffic around a collective that must not mix with the collective's own messages;
 *   - conformance_finish(): all ranks agree on the outcome with MPI_Reduce + MPI_Bcast (collectives the PMPI
 *     library does not replace), rank 0 prints "conformance <program>: <n> checks passed" or the failure count,
 *     and the exit code is 0 only when every check on every rank passed.
 * With CONFORMANCE_TRACE=1 every rank prints "conformance <program>: rank <r> <seconds> s case <name>" to stderr
 * before each case, so a run that hangs shows where each rank is (the runner sets it); CONFORMANCE_SKIP=a,b leaves out
 * the cases whose names contain a or b (to look past a case that hangs). */
#ifndef COLLPLAN_CONFORMANCE_H
#define COLLPLAN_CONFORMANCE_H
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L  /* nanosleep */
#endif

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* failure lines printed per rank and per case (0: all); CONFORMANCE_FAILURES=per_rank,per_case overrides */
static long long cf_max_reported = 120, cf_max_reported_case = 3;

static const char *cf_prog = "?";
static int cf_world_rank = 0, cf_world_size = 1, cf_trace = 0;
static long long cf_checks = 0, cf_failed = 0, cf_printed = 0, cf_case_failed = 0;
static char cf_case_name[160] = "";
static double cf_t0 = 0;

static inline void cf_init(int *argc, char ***argv, const char *prog) {
    MPI_Init(argc, argv);
    cf_prog = prog;
    cf_t0 = MPI_Wtime();
    MPI_Comm_rank(MPI_COMM_WORLD, &cf_world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &cf_world_size);
    const char *t = getenv("CONFORMANCE_TRACE");
    cf_trace = t && *t && strcmp(t, "0") != 0;
    const char *f = getenv("CONFORMANCE_FAILURES");
    if (f && *f) sscanf(f, "%lld,%lld", &cf_max_reported, &cf_max_reported_case);
}

/* Whether a case is left out: CONFORMANCE_SKIP is a comma-separated list of substrings of case names (for
 * diagnosis: a run that hangs in one case says nothing about the later ones). Every rank reads the same list. */
static inline int cf_skipped(const char *name) {
    const char *list = getenv("CONFORMANCE_SKIP");
    if (!list || !*list) return 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ","))
        if (*tok && strstr(name, tok)) return 1;
    return 0;
}

/* Starts a case (printf-style name): the following checks belong to it. Returns 0, and starts nothing, when the
 * case is skipped. */
static inline int cf_case(const char *fmt, ...) {
    char name[sizeof cf_case_name];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    if (cf_skipped(name)) return 0;
    memcpy(cf_case_name, name, sizeof cf_case_name);
    cf_case_failed = 0;
    if (cf_trace)
        fprintf(stderr, "conformance %s: rank %d %.3f s case %s\n", cf_prog, cf_world_rank, MPI_Wtime() - cf_t0,
                cf_case_name);
    return 1;
}

static inline void cf_fail_line(long idx, const char *got, const char *expected) {
    cf_failed++;
    if (cf_max_reported_case && cf_case_failed++ >= cf_max_reported_case) return;
    if (!cf_max_reported || cf_printed++ < cf_max_reported)
        printf("conformance %s: FAIL rank %d case '%s' index %ld: got %s expected %s\n", cf_prog, cf_world_rank,
               cf_case_name, idx, got, expected);
    else if (cf_printed == cf_max_reported + 1)
        printf("conformance %s: rank %d: further failures not printed\n", cf_prog, cf_world_rank);
    fflush(stdout);
}

static inline int cf_check_ll(long idx, long long got, long long expected) {
    cf_checks++;
    if (got == expected) return 1;
    char g[32], e[32];
    snprintf(g, sizeof g, "%lld", got);
    snprintf(e, sizeof e, "%lld", expected);
    cf_fail_line(idx, g, e);
    return 0;
}

static inline int cf_check_ull(long idx, unsigned long long got, unsigned long long expected) {
    cf_checks++;
    if (got == expected) return 1;
    char g[32], e[32];
    snprintf(g, sizeof g, "%llu", got);
    snprintf(e, sizeof e, "%llu", expected);
    cf_fail_line(idx, g, e);
    return 0;
}

static inline int cf_check_ld(long idx, long double got, long double expected) {
    cf_checks++;
    if (got == expected) return 1;
    char g[64], e[64];
    snprintf(g, sizeof g, "%.21Lg", got);
    snprintf(e, sizeof e, "%.21Lg", expected);
    cf_fail_line(idx, g, e);
    return 0;
}

/* A condition with a free-text description of what was expected. */
static inline int cf_check_true(long idx, int ok, const char *got, const char *expected) {
    cf_checks++;
    if (ok) return 1;
    cf_fail_line(idx, got, expected);
    return 0;
}

static inline int cf_check_rc(const char *call, int rc) {
    cf_checks++;
    if (rc == MPI_SUCCESS) return 1;
    char g[MPI_MAX_ERROR_STRING + 64];
    int len = 0;
    char s[MPI_MAX_ERROR_STRING] = "";
    MPI_Error_string(rc, s, &len);
    snprintf(g, sizeof g, "%s returned %d (%.*s)", call, rc, 200, s);
    cf_fail_line(-1, g, "MPI_SUCCESS");
    return 0;
}

/* Every rank's `bytes` bytes at `buf` must equal rank 0's, byte for byte (rank 0's copy travels by MPI_Bcast,
 * which the PMPI library does not replace). `elem` bytes form one element for the index of a failure. */
static inline void cf_check_same_bytes_as_rank0(MPI_Comm comm, const void *buf, size_t bytes, size_t elem) {
    int me;
    MPI_Comm_rank(comm, &me);
    unsigned char *ref = malloc(bytes ? bytes : 1);
    if (me == 0) memcpy(ref, buf, bytes);
    MPI_Bcast(ref, (int)bytes, MPI_BYTE, 0, comm);
    const unsigned char *b = buf;
    for (size_t i = 0; i < bytes; i += elem) {
        cf_checks++;
        if (memcmp(b + i, ref + i, elem) != 0) {
            char g[80], e[80];
            int n = 0, m = 0;
            for (size_t k = 0; k < elem && k < 16; k++) {
                n += snprintf(g + n, sizeof g - n, "%02x", b[i + k]);
                m += snprintf(e + m, sizeof e - m, "%02x", ref[i + k]);
            }
            cf_fail_line((long)(i / elem), g, e);
        }
    }
    free(ref);
}

/* ---- communicators ---------------------------------------------------------------------------------------- */
enum { CF_WORLD, CF_DUP, CF_SPLIT_ODD_EVEN, CF_SPLIT_REVERSED, CF_CART_PERIODIC, CF_CART_OPEN, CF_NCOMMS };
static const char *cf_comm_names[CF_NCOMMS] = {"world", "dup", "split-odd-even", "split-reversed", "cart-periodic",
                                               "cart-open"};

/* The communicator of kind `k` (MPI_COMM_NULL never: every rank belongs to one). Free with cf_comm_free. */
static inline MPI_Comm cf_comm(int k) {
    MPI_Comm c = MPI_COMM_NULL;
    int dims[2] = {0, 0}, periods[2];
    switch (k) {
    case CF_WORLD: return MPI_COMM_WORLD;
    case CF_DUP: MPI_Comm_dup(MPI_COMM_WORLD, &c); break;
    case CF_SPLIT_ODD_EVEN: MPI_Comm_split(MPI_COMM_WORLD, cf_world_rank % 2, cf_world_rank, &c); break;
    case CF_SPLIT_REVERSED: MPI_Comm_split(MPI_COMM_WORLD, 0, cf_world_size - cf_world_rank, &c); break;
    case CF_CART_PERIODIC:
    case CF_CART_OPEN:
        MPI_Dims_create(cf_world_size, 2, dims);
        periods[0] = periods[1] = k == CF_CART_PERIODIC;
        MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, k == CF_CART_OPEN, &c);  /* the open one may reorder */
        break;
    }
    return c;
}

static inline void cf_comm_free(MPI_Comm *c) {
    if (*c != MPI_COMM_WORLD && *c != MPI_COMM_NULL) MPI_Comm_free(c);
}

/* ---- point-to-point traffic around a collective ----------------------------------------------------------
 * Before the collective: a wildcard receive (MPI_ANY_SOURCE, MPI_ANY_TAG) is posted and a message with tag 0 to
 * the right neighbour is pending. After: a second tag-0 message is sent and received with MPI_Recv. The wildcard
 * receive must have caught the left neighbour's first message -- not one of the collective's -- and the
 * collective must not have caught the user's. */
typedef struct {
    MPI_Comm comm;
    int me, P, in[2], out[2], late_in[2], late_out[2];
    MPI_Request rreq, sreq;
} cf_p2p;

static inline void cf_p2p_before(cf_p2p *t, MPI_Comm comm) {
    t->comm = comm;
    MPI_Comm_rank(comm, &t->me);
    MPI_Comm_size(comm, &t->P);
    t->out[0] = 1000000 + t->me;
    t->out[1] = 424242;
    t->in[0] = t->in[1] = -1;
    MPI_Irecv(t->in, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &t->rreq);
    MPI_Isend(t->out, 2, MPI_INT, (t->me + 1) % t->P, 0, comm, &t->sreq);
}

static inline void cf_p2p_after(cf_p2p *t) {
    const int left = (t->me + t->P - 1) % t->P, right = (t->me + 1) % t->P;
    MPI_Status st;
    MPI_Wait(&t->rreq, &st);
    MPI_Wait(&t->sreq, MPI_STATUS_IGNORE);
    cf_check_ll(0, st.MPI_SOURCE, left);
    cf_check_ll(1, st.MPI_TAG, 0);
    cf_check_ll(2, t->in[0], 1000000 + left);
    cf_check_ll(3, t->in[1], 424242);
    t->late_out[0] = 2000000 + t->me;
    t->late_out[1] = 7;
    MPI_Request r;
    MPI_Isend(t->late_out, 2, MPI_INT, right, 0, t->comm, &r);
    MPI_Recv(t->late_in, 2, MPI_INT, left, 0, t->comm, &st);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    cf_check_ll(4, t->late_in[0], 2000000 + left);
    cf_check_ll(5, t->late_in[1], 7);
}

/* ---- datatypes of the data-movement programs -------------------------------------------------------------
 * Buffers are int arrays; an element of each kind holds `ints` MPI_INTs at int offsets `pos` within its extent:
 *   int             MPI_INT
 *   contig2         MPI_Type_contiguous(2, MPI_INT)              (same type signature as 2 x MPI_INT)
 *   vector-resized  MPI_Type_vector(2, 1, 2, MPI_INT) resized to an extent of 4 ints: ints at 0 and 2, holes
 *   resized-lb      MPI_INT resized to lower bound -1 int, extent 3 ints: a non-zero lower bound, holes
 *   zero-size       MPI_Type_contiguous(0, MPI_INT)              (size 0, extent 0)
 * Every buffer has CF_GUARD ints of guard on both sides (the resized-lb type's lower bound reaches into the
 * front guard), and checks compare every int of the allocation: holes and guards must keep CF_SENTINEL. */
enum { K_INT, K_CONTIG2, K_VEC, K_RESLB, K_ZERO, K_NKINDS };
enum { CF_GUARD = 4, CF_SENTINEL = -7 };
static MPI_Datatype cf_types[K_NKINDS];
static const int cf_kind_ints[K_NKINDS] = {1, 2, 2, 1, 0};
static const int cf_kind_extent[K_NKINDS] = {1, 2, 4, 3, 0};
static const int cf_kind_pos[K_NKINDS][2] = {{0, 0}, {0, 1}, {0, 2}, {0, 0}, {0, 0}};

static inline void cf_types_create(void) {
    MPI_Datatype v;
    cf_types[K_INT] = MPI_INT;
    MPI_Type_contiguous(2, MPI_INT, &cf_types[K_CONTIG2]);
    MPI_Type_vector(2, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, 4 * (MPI_Aint)sizeof(int), &cf_types[K_VEC]);
    MPI_Type_free(&v);
    MPI_Type_create_resized(MPI_INT, -(MPI_Aint)sizeof(int), 3 * (MPI_Aint)sizeof(int), &cf_types[K_RESLB]);
    MPI_Type_contiguous(0, MPI_INT, &cf_types[K_ZERO]);
    for (int k = 1; k < K_NKINDS; k++) MPI_Type_commit(&cf_types[k]);
}

static inline void cf_types_free(void) {
    for (int k = 1; k < K_NKINDS; k++) MPI_Type_free(&cf_types[k]);
}

/* Int offset of basic int `b` of a run of elements of `kind` that starts at element `first`. */
static inline long cf_pos(int kind, long first, long b) {
    const int n = cf_kind_ints[kind];
    return (first + b / n) * cf_kind_extent[kind] + cf_kind_pos[kind][b % n];
}

/* An int buffer of `ints` ints plus guards, all CF_SENTINEL; cf_buf_ptr is what MPI gets. */
typedef struct {
    int *mem;
    long len;  /* ints including both guards */
} cf_buf;

static inline cf_buf cf_buf_new(long ints) {
    cf_buf b;
    b.len = ints + 2 * CF_GUARD;
    b.mem = malloc(sizeof(int) * b.len);
    for (long i = 0; i < b.len; i++) b.mem[i] = CF_SENTINEL;
    return b;
}
static inline int *cf_buf_ptr(cf_buf *b) { return b->mem + CF_GUARD; }
static inline void cf_buf_free(cf_buf *b) { free(b->mem), b->mem = NULL; }

/* Compares every int of `got` (guards included) to `expected`; index = int offset from the MPI pointer. */
static inline void cf_check_buf(const cf_buf *got, const cf_buf *expected) {
    for (long i = 0; i < got->len; i++) cf_check_ll(i - CF_GUARD, got->mem[i], expected->mem[i]);
}

/* ---- the end ---------------------------------------------------------------------------------------------- */
static inline int cf_finish(void) {
    long long mine[2] = {cf_checks, cf_failed}, sum[2] = {0, 0};
    MPI_Reduce(mine, sum, 2, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Bcast(sum, 2, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (cf_world_rank == 0) {
        if (sum[1] == 0)
            printf("conformance %s: %lld checks passed\n", cf_prog, sum[0]);
        else
            printf("conformance %s: %lld of %lld checks FAILED\n", cf_prog, sum[1], sum[0]);
        fflush(stdout);
    }
    MPI_Finalize();
    return sum[1] == 0 ? 0 : 1;
}

/* The main program of the data-movement tests: `cases` on every kind of communicator, then `repeat` and
 * `large_count` on MPI_COMM_WORLD (the shared derived datatypes exist meanwhile). */
static inline int cf_run(int *argc, char ***argv, const char *prog, void (*cases)(MPI_Comm, const char *),
                         void (*repeat)(void), void (*large_count)(void)) {
    cf_init(argc, argv, prog);
    cf_types_create();
    for (int k = 0; k < CF_NCOMMS; k++) {
        MPI_Comm comm = cf_comm(k);
        cases(comm, cf_comm_names[k]);
        cf_comm_free(&comm);
    }
    repeat();
    large_count();
    cf_types_free();
    return cf_finish();
}

static inline double cf_now(void) { return MPI_Wtime(); }

static inline void cf_sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

#endif
