/* Shared helpers of the conformance programs (tests/conformance/README.md). The programs are ordinary MPI
 * programs: they use nothing but MPI and know nothing about collplan. This header only keeps the bookkeeping in
 * one place:
 *   - every check counts; a failed one prints one line naming the program, rank, case, index, got and expected
 *     (the first 3 of each case and at most 120 per rank; CONFORMANCE_FAILURES=0,0 prints every one);
 *   - the communicators every case runs on (world, a duplicate, odd/even and reversed-key splits, and for the
 *     data-movement collectives two 2-D Cartesian communicators);
 *   - point-to-point traffic around a collective that must not mix with the collective's own messages;
 *   - cf_finish(): all ranks agree on the outcome through point-to-point messages (the PMPI library replaces
 *     collectives, MPI_Reduce and MPI_Bcast among them), rank 0 prints "conformance <program>: <n> checks passed"
 *     or the failure count, and the exit code is 0 only when every check on every rank passed.
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
#include <stddef.h>
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

/* The bookkeeping's own messages (outcomes, reference copies) are point-to-point with this tag: the PMPI library
 * replaces collectives (MPI_Bcast and MPI_Reduce too), so none of them may carry the verdict. */
enum { CF_TAG_OWN = 32000 };

/* Rank 0's `bytes` bytes at `buf` into `out` on every rank of comm (point-to-point). */
static inline void cf_bcast_p2p(MPI_Comm comm, const void *buf, void *out, int bytes) {
    int me, P;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    if (me == 0) {
        memmove(out, buf, (size_t)bytes);
        for (int r = 1; r < P; r++) MPI_Send(out, bytes, MPI_BYTE, r, CF_TAG_OWN, comm);
    } else {
        MPI_Recv(out, bytes, MPI_BYTE, 0, CF_TAG_OWN, comm, MPI_STATUS_IGNORE);
    }
}

/* Every rank's `bytes` bytes at `buf` must equal rank 0's, byte for byte (rank 0's copy travels point-to-point).
 * `elem` bytes form one element for the index of a failure. */
static inline void cf_check_same_bytes_as_rank0(MPI_Comm comm, const void *buf, size_t bytes, size_t elem) {
    unsigned char *ref = malloc(bytes ? bytes : 1);
    cf_bcast_p2p(comm, buf, ref, (int)bytes);
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

/* ---- rooted collectives -----------------------------------------------------------------------------------
 * The roots every rooted case runs at: 0, the last rank and a middle one (P / 2), each once (P = 1: 0 alone;
 * P = 2: 0 and 1). Returns how many. */
static inline int cf_roots(int P, int roots[3]) {
    const int cand[3] = {0, P - 1, P / 2};
    int n = 0;
    for (int i = 0; i < 3; i++) {
        int seen = 0;
        for (int j = 0; j < n; j++) seen |= roots[j] == cand[i];
        if (!seen) roots[n++] = cand[i];
    }
    return n;
}

/* Whether the cases with derived datatypes run at roots[ri] on communicator `cn`: at every root on world, at one
 * root per other communicator (a different one on each), so that calls a library may leave to MPI (datatypes with
 * holes, a non-zero lower bound, different datatypes on different ranks) stay a small share of each program's. */
static inline int cf_derived_at_root(const char *cn, int ri, int nroots) {
    int k = 0;
    while (k < CF_NCOMMS && strcmp(cn, cf_comm_names[k]) != 0) k++;
    return k == CF_WORLD || ri == k % nroots;
}

/* ---- reductions (reduce.c, reduce_scatter_block.c, reduce_scatter.c) ----------------------------------------
 * A reduction kind (cf_red) is a datatype, an operation and the layout of one element: its extent and lower bound
 * in bytes and up to two value slots (offset, basic type). Rank r's input for element g of the whole vector (g =
 * 0..n-1, or 0..sum of counts - 1 for the reduce-scatters) is cf_red_value(k, r, g, slot); the expected result is
 * the serial fold over ranks 0..P-1 in rank order, x_0 op x_1 op ... op x_{P-1}. The values make every result
 * exact in its type (small integers, products of 2 and -1, sums mod a prime), except the floating-point sums of
 * mixed magnitudes (kind fsum: 1e16, 1, -1e16, 1e-3 scaled per rank), whose value depends on the order of the
 * additions: those must be finite and within (P - 1) eps sum|x_r| of the exact sum, the bound of any order.
 * Buffers are byte buffers (cf_bytes) filled with CF_RBYTE: bytes outside value slots -- holes of strided types,
 * the front of a non-zero lower bound, guards -- must keep it (the padding of the struct pair types of
 * MPI_MAXLOC/MPI_MINLOC excepted: MPI may copy it). User operations: commutative is elementwise addition mod
 * CF_PRIME, non-commutative is composition of affine maps x -> a x + b mod CF_PRIME on 2-int elements (rank order
 * matters and results are exact); both find the element layout from the datatype they are called with and count
 * a datatype they were not given (cf_red_unexpected_types). */
enum { CF_RBYTE = 0xA5, CF_RGUARD = 32, CF_PRIME = 1000003 };
typedef enum { CF_V_INT, CF_V_LONG, CF_V_FLOAT, CF_V_DOUBLE } cf_vtype;
typedef enum {
    RO_SUM, RO_PROD, RO_MAX, RO_MIN, RO_BAND, RO_BOR, RO_BXOR, RO_LAND, RO_LOR, RO_MAXLOC, RO_MINLOC,
    RO_USER_COMM, RO_USER_NONCOMM, RO_FSUM
} cf_rop;
static const char *cf_rop_names[] = {"sum", "prod", "max", "min", "band", "bor", "bxor", "land", "lor", "maxloc",
                                     "minloc", "user-commutative", "user-noncommutative", "mixed-magnitude-sum"};
static const char *cf_vtype_names[] = {"int", "long", "float", "double"};

typedef struct {
    char name[64];
    MPI_Datatype type;
    MPI_Op op;
    cf_rop rop;
    long extent, lb;                 /* bytes */
    int nslots;
    long slot_off[2];
    cf_vtype slot_type[2];
    int padding_free;                /* bytes of an element outside its slots may change (struct pair types) */
} cf_red;

typedef struct {
    unsigned char *mem;
    long len;                        /* bytes including both guards */
} cf_bytes;

static inline cf_bytes cf_bytes_new(long bytes) {
    cf_bytes b;
    b.len = bytes + 2 * CF_RGUARD;
    b.mem = malloc((size_t)b.len);
    memset(b.mem, CF_RBYTE, (size_t)b.len);
    return b;
}
static inline void *cf_bytes_ptr(cf_bytes *b) { return b->mem + CF_RGUARD; }
static inline void cf_bytes_free(cf_bytes *b) { free(b->mem), b->mem = NULL; }

/* Bytes of a buffer of n elements of k (the lower bound's bytes before the origin lie in the front guard). */
static inline long cf_red_bytes(const cf_red *k, long n) { return n * k->extent + 1; }

static MPI_Op cf_uop_comm = MPI_OP_NULL, cf_uop_noncomm = MPI_OP_NULL;
static long cf_red_unexpected_types = 0;

static inline unsigned long long cf_mix64(int r, long i) {
    unsigned long long x = (unsigned long long)(r + 1) * 0x9E3779B97F4A7C15ull ^
                           (unsigned long long)(i + 3) * 0xC2B2AE3D27D4EB4Full;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    return x ^ (x >> 32);
}

/* Element layout of the user operations' datatypes: value slots (int offsets) and extent in ints. */
static inline int cf_uop_layout(MPI_Datatype t, int pos[2], int *ext) {
    if (t == MPI_INT) return pos[0] = 0, *ext = 1, 1;
    for (int kd = K_CONTIG2; kd <= K_RESLB; kd++)
        if (t == cf_types[kd]) return pos[0] = 0, pos[1] = cf_kind_pos[kd][1], *ext = cf_kind_extent[kd], cf_kind_ints[kd];
    cf_red_unexpected_types++;
    return 0;
}

static void cf_uop_comm_fn(void *in, void *inout, int *len, MPI_Datatype *t) {
    int pos[2], ext, k = cf_uop_layout(*t, pos, &ext);
    int *a = in, *b = inout;
    for (int e = 0; e < *len; e++)
        for (int j = 0; j < k; j++) {
            const long x = (long)e * ext + pos[j];
            b[x] = (int)(((long long)a[x] + b[x]) % CF_PRIME);
        }
}

/* inout = in o inout: (a1, b1) o (a2, b2) = (a1 a2, a1 b2 + b1) */
static void cf_uop_noncomm_fn(void *in, void *inout, int *len, MPI_Datatype *t) {
    int pos[2], ext, k = cf_uop_layout(*t, pos, &ext);
    int *a = in, *b = inout;
    if (k != 2) {
        if (k) cf_red_unexpected_types++;
        return;
    }
    for (int e = 0; e < *len; e++) {
        const int *x = a + (long)e * ext;
        int *y = b + (long)e * ext;
        const long long na = (long long)x[pos[0]] * y[pos[0]] % CF_PRIME;
        const long long nb = ((long long)x[pos[0]] * y[pos[1]] + x[pos[1]]) % CF_PRIME;
        y[pos[0]] = (int)na, y[pos[1]] = (int)nb;
    }
}

/* After cf_types_create. */
static inline void cf_red_init(void) {
    MPI_Op_create(cf_uop_comm_fn, 1, &cf_uop_comm);
    MPI_Op_create(cf_uop_noncomm_fn, 0, &cf_uop_noncomm);
}
static inline void cf_red_finalize(void) {
    MPI_Op_free(&cf_uop_comm);
    MPI_Op_free(&cf_uop_noncomm);
}

static inline MPI_Datatype cf_vtype_mpi(cf_vtype v) {
    const MPI_Datatype t[] = {MPI_INT, MPI_LONG, MPI_FLOAT, MPI_DOUBLE};
    return t[v];
}
static inline long cf_vtype_size(cf_vtype v) {
    const long s[] = {sizeof(int), sizeof(long), sizeof(float), sizeof(double)};
    return s[v];
}

/* A predefined operation on a basic type (sum/prod/max/min on all four, the logical and bitwise ones on int). */
static inline cf_red cf_red_predef(cf_vtype v, cf_rop o) {
    const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_LAND, MPI_LOR};
    cf_red k;
    memset(&k, 0, sizeof k);
    snprintf(k.name, sizeof k.name, "%s/%s", cf_vtype_names[v], cf_rop_names[o]);
    k.type = cf_vtype_mpi(v), k.op = ops[o], k.rop = o;
    k.extent = cf_vtype_size(v), k.nslots = 1, k.slot_type[0] = v;
    return k;
}

/* The sum of mixed magnitudes in float or double (checked within the bound of any order). */
static inline cf_red cf_red_fsum(cf_vtype v) {
    cf_red k = cf_red_predef(v, RO_SUM);
    snprintf(k.name, sizeof k.name, "%s/%s", cf_vtype_names[v], cf_rop_names[RO_FSUM]);
    k.rop = RO_FSUM;
    return k;
}

struct cf_double_int { double v; int k; };
struct cf_2int { int v; int k; };

/* MPI_MAXLOC / MPI_MINLOC on MPI_DOUBLE_INT or MPI_2INT. */
static inline cf_red cf_red_loc(int dbl, int minloc) {
    cf_red k;
    memset(&k, 0, sizeof k);
    k.rop = minloc ? RO_MINLOC : RO_MAXLOC;
    snprintf(k.name, sizeof k.name, "%s/%s", dbl ? "double_int" : "2int", cf_rop_names[k.rop]);
    k.type = dbl ? MPI_DOUBLE_INT : MPI_2INT, k.op = minloc ? MPI_MINLOC : MPI_MAXLOC;
    k.extent = dbl ? (long)sizeof(struct cf_double_int) : (long)sizeof(struct cf_2int);
    k.nslots = 2, k.slot_type[0] = dbl ? CF_V_DOUBLE : CF_V_INT, k.slot_type[1] = CF_V_INT;
    k.slot_off[1] = dbl ? (long)offsetof(struct cf_double_int, k) : (long)offsetof(struct cf_2int, k);
    k.padding_free = 1;
    return k;
}

/* A user operation on one of conformance.h's int kinds (K_INT, K_CONTIG2, K_VEC, K_RESLB; the non-commutative
 * one needs 2 ints per element: K_CONTIG2 or K_VEC). */
static inline cf_red cf_red_user(int kind, int noncomm) {
    static const char *kn[K_NKINDS] = {"int", "contig2", "vector-resized", "resized-lb", "zero-size"};
    cf_red k;
    memset(&k, 0, sizeof k);
    k.rop = noncomm ? RO_USER_NONCOMM : RO_USER_COMM;
    snprintf(k.name, sizeof k.name, "%s/%s", kn[kind], noncomm ? "user-noncommutative" : "user-commutative");
    k.type = cf_types[kind], k.op = noncomm ? cf_uop_noncomm : cf_uop_comm;
    k.extent = (long)sizeof(int) * cf_kind_extent[kind];
    k.lb = kind == K_RESLB ? -(long)sizeof(int) : 0;
    k.nslots = cf_kind_ints[kind];
    for (int j = 0; j < k.nslots; j++) k.slot_off[j] = (long)sizeof(int) * cf_kind_pos[kind][j], k.slot_type[j] = CF_V_INT;
    return k;
}

static inline int cf_red_commutative(const cf_red *k) { return k->rop != RO_USER_NONCOMM; }

/* Rank r's input for element g, slot j (P: the communicator's size). */
static inline long double cf_red_value(const cf_red *k, int r, long g, int j, int P) {
    const int big = k->slot_type[0] == CF_V_LONG;  /* longs beyond 32 bits where the op allows it */
    switch (k->rop) {
    case RO_SUM: return (long double)(((r * 7 + g * 3) % 11) - 5) * (big ? 3000000001.0L : 1.0L);
    case RO_PROD:
        if ((r + g) % 5 == 0) return 2;
        return (r + 2 * g) % 3 == 0 ? -1 : 1;
    case RO_MAX:
    case RO_MIN: return (long double)(((r * 5 + g * 7) % 13) - 6) * (big ? 3000000001.0L : 1.0L);
    case RO_BAND: return (long double)(int)(unsigned)(cf_mix64(r, g) | cf_mix64(r + 17, g));  /* mostly ones */
    case RO_BOR: return (long double)(int)(unsigned)(cf_mix64(r, g) & cf_mix64(r + 17, g));   /* mostly zeros */
    case RO_BXOR: return (long double)(int)(unsigned)cf_mix64(r, g);
    case RO_LAND:
    case RO_LOR: {
        int zero = 0;
        switch (g % 4) {
        case 0: zero = r == (g / 4) % P; break;
        case 1: zero = r % 2 == 0; break;
        case 2: zero = 0; break;
        case 3: zero = 1; break;
        }
        return zero ? 0 : 1 + (r * 3 + g) % 5;
    }
    case RO_MAXLOC:
    case RO_MINLOC:
        if (j == 0) return (long double)(((r * 2 + g) % 3) - (g % 2));  /* ties between ranks */
        return (long double)((P - r) * 10 + g % 1000);                  /* the location: ties pick the smaller */
    case RO_USER_COMM:
    case RO_USER_NONCOMM: return (long double)(cf_mix64(r, g * 7 + j) % 999983 + 1);
    case RO_FSUM: {
        static const double pattern[4] = {1e16, 1.0, -1e16, 1e-3};
        if (k->slot_type[0] == CF_V_FLOAT)
            return (long double)((float)(pattern[(r + 2 * g) % 4] * 1e-8 * (1.0 + 0.3 * (g % 5))) + (float)r * 0.1f);
        return (long double)(pattern[(r + g) % 4] * (1.0 + 0.1 * (g % 7) + 0.01 * r));
    }
    }
    return 0;
}

static inline void cf_rset(unsigned char *p, cf_vtype v, long double x) {
    switch (v) {
    case CF_V_INT: { int y = (int)x; memcpy(p, &y, sizeof y); break; }
    case CF_V_LONG: { long y = (long)x; memcpy(p, &y, sizeof y); break; }
    case CF_V_FLOAT: { float y = (float)x; memcpy(p, &y, sizeof y); break; }
    case CF_V_DOUBLE: { double y = (double)x; memcpy(p, &y, sizeof y); break; }
    }
}
static inline long double cf_rget(const unsigned char *p, cf_vtype v) {
    switch (v) {
    case CF_V_INT: { int y; memcpy(&y, p, sizeof y); return y; }
    case CF_V_LONG: { long y; memcpy(&y, p, sizeof y); return y; }
    case CF_V_FLOAT: { float y; memcpy(&y, p, sizeof y); return y; }
    case CF_V_DOUBLE: { double y; memcpy(&y, p, sizeof y); return y; }
    }
    return 0;
}

/* Writes rank r's inputs for elements first..first+n-1 to the n elements at `origin` (slots only). */
static inline void cf_red_fill(const cf_red *k, void *origin, long first, long n, int r, int P) {
    unsigned char *o = origin;
    for (long e = 0; e < n; e++)
        for (int j = 0; j < k->nslots; j++)
            cf_rset(o + e * k->extent + k->slot_off[j], k->slot_type[j], cf_red_value(k, r, first + e, j, P));
}

/* The expected result of element g (exact kinds) into out[0..nslots); for fsum the exact sum (long double) and
 * in *abs_sum the sum of magnitudes. */
static inline void cf_red_expected(const cf_red *k, long g, int P, long double out[2], long double *abs_sum) {
    long double acc[2] = {0, 0};
    *abs_sum = 0;
    for (int r = 0; r < P; r++) {
        long double x[2] = {0, 0};
        for (int j = 0; j < k->nslots; j++) x[j] = cf_red_value(k, r, g, j, P);
        /* the value as the type holds it (floats: the input's rounding) */
        for (int j = 0; j < k->nslots; j++) {
            unsigned char tmp[8];
            cf_rset(tmp, k->slot_type[j], x[j]);
            x[j] = cf_rget(tmp, k->slot_type[j]);
        }
        *abs_sum += x[0] < 0 ? -x[0] : x[0];
        if (r == 0) {
            acc[0] = x[0], acc[1] = x[1];  /* one rank: its value as it is (land/lor too: no operation applied) */
            continue;
        }
        const long long a = (long long)acc[0], b = (long long)x[0];
        switch (k->rop) {
        case RO_SUM:
        case RO_FSUM: acc[0] += x[0]; break;
        case RO_PROD: acc[0] *= x[0]; break;
        case RO_MAX: acc[0] = x[0] > acc[0] ? x[0] : acc[0]; break;
        case RO_MIN: acc[0] = x[0] < acc[0] ? x[0] : acc[0]; break;
        case RO_BAND: acc[0] = (long double)(int)(a & b); break;
        case RO_BOR: acc[0] = (long double)(int)(a | b); break;
        case RO_BXOR: acc[0] = (long double)(int)(a ^ b); break;
        case RO_LAND: acc[0] = acc[0] != 0 && x[0] != 0; break;
        case RO_LOR: acc[0] = acc[0] != 0 || x[0] != 0; break;
        case RO_MAXLOC:
        case RO_MINLOC: {
            const int better = k->rop == RO_MAXLOC ? x[0] > acc[0] : x[0] < acc[0];
            if (better || (x[0] == acc[0] && x[1] < acc[1])) acc[0] = x[0], acc[1] = x[1];
            break;
        }
        case RO_USER_COMM:
            for (int j = 0; j < k->nslots; j++) acc[j] = (long double)(((long long)acc[j] + (long long)x[j]) % CF_PRIME);
            break;
        case RO_USER_NONCOMM: {  /* acc = acc o x */
            const long long a0 = (long long)acc[0], a1 = (long long)acc[1], x0 = (long long)x[0], x1 = (long long)x[1];
            acc[0] = (long double)(a0 * x0 % CF_PRIME);
            acc[1] = (long double)((a0 * x1 + a1) % CF_PRIME);
            break;
        }
        }
    }
    out[0] = acc[0], out[1] = acc[1];
}

static inline void cf_fmt_ld(char *s, size_t n, long double x) { snprintf(s, n, "%.21Lg", x); }

/* Checks n result elements at `origin` (elements first..first+n-1 of the whole vector) against the serial fold.
 * The failure index is the element's number g. */
static inline void cf_red_check_values(const cf_red *k, const void *origin, long first, long n, int P) {
    const unsigned char *o = origin;
    const long double eps = k->slot_type[0] == CF_V_FLOAT ? 1.1920928955078125e-07L : 2.220446049250313e-16L;
    for (long e = 0; e < n; e++) {
        long double want[2], abs_sum;
        cf_red_expected(k, first + e, P, want, &abs_sum);
        for (int j = 0; j < k->nslots; j++) {
            const long double got = cf_rget(o + e * k->extent + k->slot_off[j], k->slot_type[j]);
            char g[64], w[96];
            if (k->rop == RO_FSUM) {
                const long double bound = (P - 1) * eps * abs_sum + 1e-30L, d = got - want[0];
                const int finite = got == got && got - got == 0;
                cf_fmt_ld(g, sizeof g, got);
                snprintf(w, sizeof w, "%.17Lg +- %.3Lg", want[0], bound);
                cf_check_true(first + e, finite && (d < 0 ? -d : d) <= bound, g, w);
            } else {
                cf_checks++;
                if (got == want[j]) continue;
                cf_fmt_ld(g, sizeof g, got);
                cf_fmt_ld(w, sizeof w, want[j]);
                cf_fail_line(first + e, g, w);
            }
        }
    }
}

/* Every byte of `b` that is not a value slot of elements [0, n) must still be CF_RBYTE (holes, the lower bound's
 * bytes, guards), except the padding of pair types and the bytes of elements [n, n + dontcare) (e.g. the part of an
 * in-place reduce-scatter's input beyond the result). The failure index is the byte offset from the origin. */
static inline void cf_red_check_holes(const cf_red *k, const cf_bytes *b, long n, long dontcare) {
    const long origin = CF_RGUARD;
    for (long i = 0; i < b->len; i++) {
        const long off = i - origin;                                   /* from the origin */
        const long rel = off - k->lb;                                  /* from the first element's lower bound */
        const long e = rel >= 0 ? rel / k->extent : -1, in = rel >= 0 ? rel % k->extent + k->lb : 0;
        int free_byte = 0;
        if (e >= 0 && e < n) {
            for (int j = 0; j < k->nslots; j++)
                free_byte |= in >= k->slot_off[j] && in < k->slot_off[j] + cf_vtype_size(k->slot_type[j]);
            free_byte |= k->padding_free;
        } else if (e >= n && e < n + dontcare) {
            free_byte = 1;
        }
        if (free_byte) continue;
        cf_checks++;
        if (b->mem[i] != CF_RBYTE) {
            char g[32], w[48];
            snprintf(g, sizeof g, "byte 0x%02x", b->mem[i]);
            snprintf(w, sizeof w, "0x%02x (hole or guard untouched)", CF_RBYTE);
            cf_fail_line(off, g, w);
        }
    }
}

/* Bytes [from, to) (offsets from the origin) of `b` must equal those of `ref`, as `what` says ("unchanged": a send
 * buffer MPI must not modify; "as the first call": the same call gives the same bits). */
static inline void cf_bytes_check_range(const cf_bytes *b, const cf_bytes *ref, long from, long to, const char *what) {
    for (long off = from; off < to; off++) {
        const long i = off + CF_RGUARD;
        cf_checks++;
        if (b->mem[i] != ref->mem[i]) {
            char g[32], w[64];
            snprintf(g, sizeof g, "byte 0x%02x", b->mem[i]);
            snprintf(w, sizeof w, "byte 0x%02x (%s)", ref->mem[i], what);
            cf_fail_line(off, g, w);
        }
    }
}
/* The whole of `b`, guards included, must equal `ref`. */
static inline void cf_bytes_check_same(const cf_bytes *b, const cf_bytes *ref) {
    cf_bytes_check_range(b, ref, -CF_RGUARD, b->len - CF_RGUARD, "unchanged");
}

/* The predefined (type, op) pairs of the reduction programs: sum/prod/max/min on int, long, float, double;
 * band/bor/bxor and land/lor on int; maxloc/minloc on MPI_DOUBLE_INT and MPI_2INT. Returns how many (<= 32). */
static inline int cf_red_predefined_kinds(cf_red *out) {
    int n = 0;
    for (int v = CF_V_INT; v <= CF_V_DOUBLE; v++)
        for (int o = RO_SUM; o <= RO_MIN; o++) out[n++] = cf_red_predef((cf_vtype)v, (cf_rop)o);
    for (int o = RO_BAND; o <= RO_LOR; o++) out[n++] = cf_red_predef(CF_V_INT, (cf_rop)o);
    for (int d = 0; d < 2; d++)
        for (int m = 0; m < 2; m++) out[n++] = cf_red_loc(d, m);
    return n;
}

/* ---- the end ---------------------------------------------------------------------------------------------- */
static inline int cf_finish(void) {
    long long mine[2] = {cf_checks, cf_failed}, sum[2] = {cf_checks, cf_failed};
    if (cf_world_rank == 0)
        for (int r = 1; r < cf_world_size; r++) {
            long long x[2];
            MPI_Recv(x, 2, MPI_LONG_LONG, r, CF_TAG_OWN, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            sum[0] += x[0], sum[1] += x[1];
        }
    else
        MPI_Send(mine, 2, MPI_LONG_LONG, 0, CF_TAG_OWN, MPI_COMM_WORLD);
    cf_bcast_p2p(MPI_COMM_WORLD, sum, sum, (int)sizeof sum);
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
