/* Conformance of MPI_Allreduce (tests/conformance/README.md): an ordinary MPI program, nothing but MPI.
 *
 * Cases (the communicators: see conformance.h):
 *   predef/<type>/<op>   every predefined operation on every predefined type it is defined for, 11 elements,
 *                        checked against a serial reduction of all ranks' deterministic inputs (values chosen
 *                        so the result is exact in the type); every other (type, op) pair runs in place
 *   loc/<type>/<op>      MPI_MAXLOC / MPI_MINLOC on the six pair types, with ties (the smaller index wins)
 *   mixed/<type>/<n>     1e16, 1, -1e16, 1e-3 patterns differing per rank, summed in float and double: every
 *                        rank's result must be bitwise equal to rank 0's (checked with MPI_Bcast)
 *   user/...             a commutative user operation (sum mod a prime) and a non-commutative one (2x2 matrix
 *                        product mod a prime, rank order), on MPI_INT, MPI_Type_contiguous, a strided
 *                        MPI_Type_vector (holes untouched) and a resized type with a non-zero lower bound
 *   inplace/...          MPI_IN_PLACE; count0/... count 0 (buffers untouched); p2p/... traffic around the call
 *   repeat               1000 calls of 2 elements, every result checked
 *   aliased              sendbuf == recvbuf without MPI_IN_PLACE (erroneous): with MPI_ERRORS_RETURN the call
 *                        must return an error (Open MPI 5.0 and MPICH 5.0 both do for count >= 2)
 *   large-count          MPI_Allreduce_c where the library has it (MPI >= 4) */
#include "conformance.h"  /* first: it sets _POSIX_C_SOURCE */

#include <complex.h>
#include <stdbool.h>

enum { N = 11 };
static int P, me;

/* ---- predefined operations on predefined types ---------------------------------------------------------- */
static unsigned long long mix64(int r, int i) {
    unsigned long long x = (unsigned long long)(r + 1) * 0x9E3779B97F4A7C15ull ^ (unsigned long long)(i + 3) * 0xC2B2AE3D27D4EB4Full;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    return x ^ (x >> 32);
}

/* Values: sum -5..5 (unsigned 0..10), prod in {1, 2, -1} with at most two 2s per index, max/min -6..6, logical
 * zero/non-zero patterns (index % 4: 0 one rank zero, 1 even ranks zero, 2 none zero, 3 all zero), bits from mix64. */
static long long v_sum(int r, int i, int sgn) { return sgn ? ((r * 7 + i * 3) % 11) - 5 : (r * 7 + i * 3) % 11; }
static long long v_prod(int r, int i, int sgn) {
    if ((r + i) % 5 == 0) return 2;
    return sgn && (r + 2 * i) % 3 == 0 ? -1 : 1;
}
static long long v_maxmin(int r, int i, int sgn) { return sgn ? ((r * 5 + i * 7) % 13) - 6 : (r * 5 + i * 7) % 13; }
static long long v_logic(int r, int i) {
    int zero = 0;
    switch (i % 4) {
    case 0: zero = r == (i / 4) % P; break;
    case 1: zero = r % 2 == 0; break;
    case 2: zero = 0; break;
    case 3: zero = 1; break;
    }
    return zero ? 0 : 1 + (r * 3 + i) % 5;
}

typedef enum { O_SUM, O_PROD, O_MAX, O_MIN, O_LAND, O_LOR, O_LXOR, O_BAND, O_BOR, O_BXOR } opid;
static const char *op_names[] = {"sum", "prod", "max", "min", "land", "lor", "lxor", "band", "bor", "bxor"};
static MPI_Op op_handle(opid o) {
    const MPI_Op h[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_LAND, MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
    return h[o];
}
static int call_no = 0;  /* every other (type, op) call runs in place */

/* Runs one allreduce of N elements of `T` whose inputs `gen(r, i)` give, and checks it against the serial
 * reduction `fold` over ranks 0..P-1 in rank order. */
#define REDUCE_CASE(T, mpitype, tname, o, gen, fold, check)                                                   \
    do {                                                                                                       \
        T send[N], recv[N], ref[N];                                                                            \
        const int inplace = call_no++ % 2;                                                                     \
        if (!cf_case("predef/%s/%s%s", tname, op_names[o], inplace ? "/inplace" : "")) break;                 \
        for (int i = 0; i < N; i++) {                                                                          \
            send[i] = (T)(gen(me, i));                                                                         \
            recv[i] = inplace ? send[i] : (T)0;                                                                \
            for (int r = 0; r < P; r++) {                                                                      \
                T x = (T)(gen(r, i));                                                                          \
                if (r == 0) ref[i] = x;                                                                        \
                else ref[i] = fold(ref[i], x);                                                                 \
            }                                                                                                  \
        }                                                                                                      \
        cf_check_rc("MPI_Allreduce", MPI_Allreduce(inplace ? MPI_IN_PLACE : (void *)send, recv, N, mpitype,   \
                                                   op_handle(o), MPI_COMM_WORLD));                            \
        for (int i = 0; i < N; i++) check;                                                                     \
    } while (0)

#define F_SUM(a, b) ((a) + (b))
#define F_PROD(a, b) ((a) * (b))
#define F_MAX(a, b) ((a) > (b) ? (a) : (b))
#define F_MIN(a, b) ((a) < (b) ? (a) : (b))
#define F_LAND(a, b) ((a) && (b))
#define F_LOR(a, b) ((a) || (b))
#define F_LXOR(a, b) ((!(a)) != (!(b)))
#define F_BAND(a, b) ((a) & (b))
#define F_BOR(a, b) ((a) | (b))
#define F_BXOR(a, b) ((a) ^ (b))

#define G_SUM_S(r, i) v_sum(r, i, 1)
#define G_SUM_U(r, i) v_sum(r, i, 0)
#define G_PROD_S(r, i) v_prod(r, i, 1)
#define G_PROD_U(r, i) v_prod(r, i, 0)
#define G_MM_S(r, i) v_maxmin(r, i, 1)
#define G_MM_U(r, i) v_maxmin(r, i, 0)
#define G_LOGIC(r, i) v_logic(r, i)
#define G_BITS(r, i) mix64(r, i)

#define CHECK_INT(T) (cf_check_ll(i, (long long)recv[i], (long long)ref[i]))
#define CHECK_UINT(T) (cf_check_ull(i, (unsigned long long)recv[i], (unsigned long long)ref[i]))

/* Integer types: arithmetic, logical (unless `logical` is 0: the multi-language types) and bitwise ops.
 * `negmm` 0: MAX/MIN inputs are non-negative (Open MPI 5.0 compares MPI_OFFSET as unsigned in MAX/MIN). */
#define INT_TYPE(T, mpitype, tname, sgn, logical, negmm)                                                      \
    do {                                                                                                       \
        if (sgn) {                                                                                             \
            REDUCE_CASE(T, mpitype, tname, O_SUM, G_SUM_S, F_SUM, CHECK_INT(T));                               \
            REDUCE_CASE(T, mpitype, tname, O_PROD, G_PROD_S, F_PROD, CHECK_INT(T));                            \
            if (negmm) {                                                                                       \
                REDUCE_CASE(T, mpitype, tname, O_MAX, G_MM_S, F_MAX, CHECK_INT(T));                            \
                REDUCE_CASE(T, mpitype, tname, O_MIN, G_MM_S, F_MIN, CHECK_INT(T));                            \
            } else {                                                                                           \
                REDUCE_CASE(T, mpitype, tname, O_MAX, G_MM_U, F_MAX, CHECK_INT(T));                            \
                REDUCE_CASE(T, mpitype, tname, O_MIN, G_MM_U, F_MIN, CHECK_INT(T));                            \
            }                                                                                                  \
        } else {                                                                                               \
            REDUCE_CASE(T, mpitype, tname, O_SUM, G_SUM_U, F_SUM, CHECK_UINT(T));                              \
            REDUCE_CASE(T, mpitype, tname, O_PROD, G_PROD_U, F_PROD, CHECK_UINT(T));                           \
            REDUCE_CASE(T, mpitype, tname, O_MAX, G_MM_U, F_MAX, CHECK_UINT(T));                               \
            REDUCE_CASE(T, mpitype, tname, O_MIN, G_MM_U, F_MIN, CHECK_UINT(T));                               \
        }                                                                                                      \
        if (logical) {                                                                                         \
            REDUCE_CASE(T, mpitype, tname, O_LAND, G_LOGIC, F_LAND, CHECK_INT(T));                             \
            REDUCE_CASE(T, mpitype, tname, O_LOR, G_LOGIC, F_LOR, CHECK_INT(T));                               \
            REDUCE_CASE(T, mpitype, tname, O_LXOR, G_LOGIC, F_LXOR, CHECK_INT(T));                             \
        }                                                                                                      \
        REDUCE_CASE(T, mpitype, tname, O_BAND, G_BITS, F_BAND, CHECK_UINT(T));                                 \
        REDUCE_CASE(T, mpitype, tname, O_BOR, G_BITS, F_BOR, CHECK_UINT(T));                                   \
        REDUCE_CASE(T, mpitype, tname, O_BXOR, G_BITS, F_BXOR, CHECK_UINT(T));                                 \
    } while (0)

/* Floating types: quarter-integers for sum, powers of two for prod: every result is exact. */
static long double v_fsum(int r, int i) { return (long double)v_sum(r, i, 1) * 0.25L + (i % 3) * 1024.0L; }
static long double v_fprod(int r, int i) { return (long double)v_prod(r, i, 1) * ((r + i) % 4 == 1 ? 0.5L : 1.0L); }
static long double v_fmm(int r, int i) { return (long double)v_maxmin(r, i, 1) * 0.75L; }
#define CHECK_FLT (cf_check_ld(i, (long double)recv[i], (long double)ref[i]))
#define FLOAT_TYPE(T, mpitype, tname)                                                                          \
    do {                                                                                                       \
        REDUCE_CASE(T, mpitype, tname, O_SUM, v_fsum, F_SUM, CHECK_FLT);                                       \
        REDUCE_CASE(T, mpitype, tname, O_PROD, v_fprod, F_PROD, CHECK_FLT);                                    \
        REDUCE_CASE(T, mpitype, tname, O_MAX, v_fmm, F_MAX, CHECK_FLT);                                        \
        REDUCE_CASE(T, mpitype, tname, O_MIN, v_fmm, F_MIN, CHECK_FLT);                                        \
    } while (0)

/* Complex: Gaussian integers for sum, units and 2 for prod (exact). */
static long double complex v_csum(int r, int i) { return v_sum(r, i, 1) + v_sum(r + 3, i + 1, 1) * I; }
static long double complex v_cprod(int r, int i) {
    static const long double complex unit[4] = {1, I, -1, -I};
    return unit[(r + 2 * i) % 4] * (long double)((r + i) % 5 == 0 ? 2 : 1);
}
#define CHECK_CPLX                                                                                             \
    (cf_check_ld(2 * i, creall(recv[i]), creall(ref[i])), cf_check_ld(2 * i + 1, cimagl(recv[i]), cimagl(ref[i])))
#define COMPLEX_TYPE(T, mpitype, tname)                                                                        \
    do {                                                                                                       \
        REDUCE_CASE(T, mpitype, tname, O_SUM, v_csum, F_SUM, CHECK_CPLX);                                      \
        REDUCE_CASE(T, mpitype, tname, O_PROD, v_cprod, F_PROD, CHECK_CPLX);                                   \
    } while (0)

static void predefined(void) {
    INT_TYPE(signed char, MPI_SIGNED_CHAR, "signed_char", 1, 1, 1);
    INT_TYPE(unsigned char, MPI_UNSIGNED_CHAR, "unsigned_char", 0, 1, 1);
    INT_TYPE(short, MPI_SHORT, "short", 1, 1, 1);
    INT_TYPE(unsigned short, MPI_UNSIGNED_SHORT, "unsigned_short", 0, 1, 1);
    INT_TYPE(int, MPI_INT, "int", 1, 1, 1);
    INT_TYPE(unsigned, MPI_UNSIGNED, "unsigned", 0, 1, 1);
    INT_TYPE(long, MPI_LONG, "long", 1, 1, 1);
    INT_TYPE(unsigned long, MPI_UNSIGNED_LONG, "unsigned_long", 0, 1, 1);
    INT_TYPE(long long, MPI_LONG_LONG, "long_long", 1, 1, 1);
    INT_TYPE(unsigned long long, MPI_UNSIGNED_LONG_LONG, "unsigned_long_long", 0, 1, 1);
    INT_TYPE(int8_t, MPI_INT8_T, "int8", 1, 1, 1);
    INT_TYPE(int16_t, MPI_INT16_T, "int16", 1, 1, 1);
    INT_TYPE(int32_t, MPI_INT32_T, "int32", 1, 1, 1);
    INT_TYPE(int64_t, MPI_INT64_T, "int64", 1, 1, 1);
    INT_TYPE(uint8_t, MPI_UINT8_T, "uint8", 0, 1, 1);
    INT_TYPE(uint16_t, MPI_UINT16_T, "uint16", 0, 1, 1);
    INT_TYPE(uint32_t, MPI_UINT32_T, "uint32", 0, 1, 1);
    INT_TYPE(uint64_t, MPI_UINT64_T, "uint64", 0, 1, 1);
    INT_TYPE(MPI_Aint, MPI_AINT, "aint", 1, 0, 1);
    INT_TYPE(MPI_Offset, MPI_OFFSET, "offset", 1, 0, 0);
    INT_TYPE(MPI_Count, MPI_COUNT, "count", 1, 0, 1);
    FLOAT_TYPE(float, MPI_FLOAT, "float");
    FLOAT_TYPE(double, MPI_DOUBLE, "double");
    FLOAT_TYPE(long double, MPI_LONG_DOUBLE, "long_double");
    COMPLEX_TYPE(float complex, MPI_C_FLOAT_COMPLEX, "c_float_complex");
    COMPLEX_TYPE(float complex, MPI_C_COMPLEX, "c_complex");
    COMPLEX_TYPE(double complex, MPI_C_DOUBLE_COMPLEX, "c_double_complex");
    COMPLEX_TYPE(long double complex, MPI_C_LONG_DOUBLE_COMPLEX, "c_long_double_complex");
    REDUCE_CASE(bool, MPI_C_BOOL, "c_bool", O_LAND, G_LOGIC, F_LAND, CHECK_INT(bool));
    REDUCE_CASE(bool, MPI_C_BOOL, "c_bool", O_LOR, G_LOGIC, F_LOR, CHECK_INT(bool));
    REDUCE_CASE(bool, MPI_C_BOOL, "c_bool", O_LXOR, G_LOGIC, F_LXOR, CHECK_INT(bool));
    REDUCE_CASE(unsigned char, MPI_BYTE, "byte", O_BAND, G_BITS, F_BAND, CHECK_UINT(unsigned char));
    REDUCE_CASE(unsigned char, MPI_BYTE, "byte", O_BOR, G_BITS, F_BOR, CHECK_UINT(unsigned char));
    REDUCE_CASE(unsigned char, MPI_BYTE, "byte", O_BXOR, G_BITS, F_BXOR, CHECK_UINT(unsigned char));
}

/* ---- MAXLOC / MINLOC -------------------------------------------------------------------------------------- */
/* Value ties are frequent ((r + i) % 3 patterns); the location is a rank-dependent index, so ties pick the
 * smaller one. Only the value and index members are compared (the structs have padding). */
#define LOC_CASE(VT, mpitype, tname)                                                                           \
    do {                                                                                                       \
        struct { VT v; int k; } send[N], recv[N], ref[N];                                                      \
        for (int o = 0; o < 2; o++) {                                                                          \
            const int inplace = call_no++ % 2;                                                                 \
            if (!cf_case("loc/%s/%s%s", tname, o ? "minloc" : "maxloc", inplace ? "/inplace" : "")) continue; \
            memset(send, 0, sizeof send);                                                                      \
            memset(recv, 0, sizeof recv);                                                                      \
            for (int i = 0; i < N; i++) {                                                                      \
                for (int r = 0; r < P; r++) {                                                                  \
                    VT v = (VT)(((r * 2 + i) % 3) - (i % 2 ? 1 : 0));                                          \
                    int k = (P - r) * 10 + i;                                                                  \
                    if (r == me) send[i].v = v, send[i].k = k;                                                 \
                    if (r == 0 || (o ? v < ref[i].v : v > ref[i].v) || (v == ref[i].v && k < ref[i].k))        \
                        ref[i].v = v, ref[i].k = k;                                                            \
                }                                                                                              \
                if (inplace) recv[i] = send[i];                                                                \
            }                                                                                                  \
            cf_check_rc("MPI_Allreduce", MPI_Allreduce(inplace ? MPI_IN_PLACE : (void *)send, recv, N,        \
                                                       mpitype, o ? MPI_MINLOC : MPI_MAXLOC, MPI_COMM_WORLD));\
            for (int i = 0; i < N; i++) {                                                                      \
                cf_check_ld(2 * i, (long double)recv[i].v, (long double)ref[i].v);                             \
                cf_check_ll(2 * i + 1, recv[i].k, ref[i].k);                                                   \
            }                                                                                                  \
        }                                                                                                      \
    } while (0)

static void loc(void) {
    LOC_CASE(int, MPI_2INT, "2int");
    LOC_CASE(float, MPI_FLOAT_INT, "float_int");
    LOC_CASE(double, MPI_DOUBLE_INT, "double_int");
    LOC_CASE(long, MPI_LONG_INT, "long_int");
    LOC_CASE(short, MPI_SHORT_INT, "short_int");
    LOC_CASE(long double, MPI_LONG_DOUBLE_INT, "long_double_int");
}

/* ---- mixed magnitudes: bitwise equal on every rank ------------------------------------------------------- */
static void mixed(MPI_Comm comm, const char *cname) {
    static const double pattern[4] = {1e16, 1.0, -1e16, 1e-3};
    const int sizes[3] = {1, 7, 61};
    int cme, cP;
    MPI_Comm_rank(comm, &cme);
    MPI_Comm_size(comm, &cP);
    for (int s = 0; s < 3; s++) {
        const int n = sizes[s];
        for (int inplace = 0; inplace < 2; inplace++) {
            double d[61], dr[61];
            float f[61], fr[61];
            for (int i = 0; i < n; i++) {
                d[i] = pattern[(cme + i) % 4] * (1.0 + 0.1 * (i % 7) + 0.01 * cme);
                f[i] = (float)(pattern[(cme + 2 * i) % 4] * 1e-8 * (1.0 + 0.3 * (i % 5))) + (float)cme * 0.1f;
                dr[i] = d[i], fr[i] = f[i];
            }
            if (cf_case("mixed/double/n=%d%s/%s", n, inplace ? "/inplace" : "", cname)) {
                cf_check_rc("MPI_Allreduce", MPI_Allreduce(inplace ? MPI_IN_PLACE : d, dr, n, MPI_DOUBLE, MPI_SUM, comm));
                cf_check_same_bytes_as_rank0(comm, dr, n * sizeof(double), sizeof(double));
            }
            if (cf_case("mixed/float/n=%d%s/%s", n, inplace ? "/inplace" : "", cname)) {
                cf_check_rc("MPI_Allreduce", MPI_Allreduce(inplace ? MPI_IN_PLACE : f, fr, n, MPI_FLOAT, MPI_SUM, comm));
                cf_check_same_bytes_as_rank0(comm, fr, n * sizeof(float), sizeof(float));
            }
        }
        (void)cP;
    }
}

/* ---- user operations, derived datatypes ------------------------------------------------------------------ */
enum { PRIME = 1000003, SENTINEL = -77 };
static MPI_Datatype t_mat2, t_triple, t_vec, t_reslb;  /* contiguous(4), contiguous(3), vector(2,1,3), resized */
static int unexpected_type = 0;

/* Positions of one element's ints inside its extent, for each type the operations are used with. */
static int layout(MPI_Datatype t, int *pos, int *extent_ints) {
    if (t == MPI_INT) return pos[0] = 0, *extent_ints = 1, 1;
    if (t == t_triple) return pos[0] = 0, pos[1] = 1, pos[2] = 2, *extent_ints = 3, 3;
    if (t == t_mat2) return pos[0] = 0, pos[1] = 1, pos[2] = 2, pos[3] = 3, *extent_ints = 4, 4;
    if (t == t_vec) return pos[0] = 0, pos[1] = 3, *extent_ints = 4, 2;
    if (t == t_reslb) return pos[0] = 0, *extent_ints = 2, 1;
    unexpected_type++;
    return pos[0] = 0, *extent_ints = 1, 1;
}

/* commutative: elementwise sum mod PRIME */
static void op_modsum(void *in, void *inout, int *len, MPI_Datatype *t) {
    int pos[4], ext, k = layout(*t, pos, &ext);
    int *a = in, *b = inout;
    for (int e = 0; e < *len; e++)
        for (int j = 0; j < k; j++) {
            const int x = e * ext + pos[j];
            b[x] = (int)(((long long)a[x] + b[x]) % PRIME);
        }
}

/* non-commutative: 2x2 matrix product mod PRIME, inout = in * inout, on t_mat2; on t_vec the two ints of an
 * element are an affine map (a, b): x -> a x + b, and inout = in o inout. */
static void op_noncomm(void *in, void *inout, int *len, MPI_Datatype *t) {
    int pos[4], ext, k = layout(*t, pos, &ext);
    int *a = in, *b = inout;
    for (int e = 0; e < *len; e++) {
        int *x = a + e * ext, *y = b + e * ext;
        if (k == 4) {
            long long m0 = ((long long)x[0] * y[0] + (long long)x[1] * y[2]) % PRIME;
            long long m1 = ((long long)x[0] * y[1] + (long long)x[1] * y[3]) % PRIME;
            long long m2 = ((long long)x[2] * y[0] + (long long)x[3] * y[2]) % PRIME;
            long long m3 = ((long long)x[2] * y[1] + (long long)x[3] * y[3]) % PRIME;
            y[0] = (int)m0, y[1] = (int)m1, y[2] = (int)m2, y[3] = (int)m3;
        } else if (k == 2) {
            /* (x o y)(v) = x(y(v)) = xa (ya v + yb) + xb */
            long long na = (long long)x[pos[0]] * y[pos[0]] % PRIME;
            long long nb = ((long long)x[pos[0]] * y[pos[1]] + x[pos[1]]) % PRIME;
            y[pos[0]] = (int)na, y[pos[1]] = (int)nb;
        }
    }
}

static MPI_Op u_comm, u_noncomm;

static int uval(int r, int e, int j) { return (int)((mix64(r, e * 7 + j) % 999983) + 1); }

/* One user-op allreduce of `count` elements of type `t` (element ints at `pos` within `ext` ints), buffers with
 * sentinel holes, checked against the serial fold in rank order; `base` ints of offset for a non-zero lb. */
static void user_case(MPI_Comm comm, const char *cname, const char *tname, MPI_Datatype t, MPI_Op op, int noncomm,
                      int count, int inplace) {
    int cme, cP;
    MPI_Comm_rank(comm, &cme);
    MPI_Comm_size(comm, &cP);
    if (!cf_case("user/%s/%s/count=%d%s/%s", noncomm ? "noncommutative" : "commutative", tname, count,
                 inplace ? "/inplace" : "", cname))
        return;
    int pos[4], ext, k = layout(t, pos, &ext);
    const int base = t == t_reslb ? 1 : 0, len = base + count * ext + 2;
    int *send = malloc(sizeof(int) * len), *recv = malloc(sizeof(int) * len), *ref = malloc(sizeof(int) * len);
    for (int x = 0; x < len; x++) send[x] = recv[x] = ref[x] = SENTINEL;
    for (int e = 0; e < count; e++) {
        int *s = send + base + e * ext, *f = ref + base + e * ext;
        for (int j = 0; j < k; j++) s[pos[j]] = uval(cme, e, j);
        if (inplace)
            for (int j = 0; j < k; j++) recv[base + e * ext + pos[j]] = s[pos[j]];
        /* reference: x_0 op x_1 op ... op x_{P-1}; with op(in, inout) = in op inout, fold from the right */
        int acc[4], cur[4];
        for (int j = 0; j < k; j++) acc[j] = uval(cP - 1, e, j);
        for (int r = cP - 2; r >= 0; r--) {
            for (int j = 0; j < k; j++) cur[j] = uval(r, e, j);
            int len1 = 1;
            int bufa[4] = {0}, bufb[4] = {0};
            for (int j = 0; j < k; j++) bufa[pos[j]] = cur[j], bufb[pos[j]] = acc[j];
            MPI_Datatype tt = t;
            if (noncomm) op_noncomm(bufa, bufb, &len1, &tt);
            else op_modsum(bufa, bufb, &len1, &tt);
            for (int j = 0; j < k; j++) acc[j] = bufb[pos[j]];
        }
        for (int j = 0; j < k; j++) f[pos[j]] = acc[j];
    }
    cf_check_rc("MPI_Allreduce",
                MPI_Allreduce(inplace ? MPI_IN_PLACE : (void *)(send + base), recv + base, count, t, op, comm));
    for (int x = 0; x < len; x++) cf_check_ll(x, recv[x], ref[x]);  /* holes included: still SENTINEL */
    free(send), free(recv), free(ref);
}

static void user_ops(MPI_Comm comm, const char *cname) {
    for (int inplace = 0; inplace < 2; inplace++) {
        user_case(comm, cname, "int", MPI_INT, u_comm, 0, 13, inplace);
        user_case(comm, cname, "contiguous4", t_mat2, u_noncomm, 1, 5, inplace);
        user_case(comm, cname, "contiguous3", t_triple, u_comm, 0, 4, inplace);
        user_case(comm, cname, "vector", t_vec, u_noncomm, 1, 6, inplace);
        user_case(comm, cname, "vector", t_vec, u_comm, 0, 3, inplace);
        user_case(comm, cname, "resized-lb", t_reslb, u_comm, 0, 7, inplace);
    }
}

/* ---- count 0 -------------------------------------------------------------------------------------------- */
static void count0(MPI_Comm comm, const char *cname) {
    int s[4] = {1, 2, 3, 4}, r[4] = {SENTINEL, SENTINEL, SENTINEL, SENTINEL};
    if (cf_case("count0/int-sum/%s", cname)) {
        cf_check_rc("MPI_Allreduce", MPI_Allreduce(s, r, 0, MPI_INT, MPI_SUM, comm));
        for (int i = 0; i < 4; i++) cf_check_ll(i, r[i], SENTINEL);
    }
    if (cf_case("count0/inplace/%s", cname)) {
        cf_check_rc("MPI_Allreduce", MPI_Allreduce(MPI_IN_PLACE, r, 0, MPI_INT, MPI_SUM, comm));
        for (int i = 0; i < 4; i++) cf_check_ll(i, r[i], SENTINEL);
    }
    if (cf_case("count0/user-noncommutative/%s", cname)) {
        cf_check_rc("MPI_Allreduce", MPI_Allreduce(s, r, 0, t_mat2, u_noncomm, comm));
        for (int i = 0; i < 4; i++) cf_check_ll(i, r[i], SENTINEL);
        for (int i = 0; i < 4; i++) cf_check_ll(i, s[i], i + 1);
    }
}

/* ---- point-to-point around the call ----------------------------------------------------------------------- */
static void p2p(MPI_Comm comm, const char *cname) {
    int cme, cP;
    MPI_Comm_rank(comm, &cme);
    MPI_Comm_size(comm, &cP);
    if (!cf_case("p2p/int-sum/%s", cname)) return;
    cf_p2p t;
    int x[5], y[5];
    for (int i = 0; i < 5; i++) x[i] = cme * 10 + i;
    cf_p2p_before(&t, comm);
    cf_check_rc("MPI_Allreduce", MPI_Allreduce(x, y, 5, MPI_INT, MPI_SUM, comm));
    cf_p2p_after(&t);
    for (int i = 0; i < 5; i++) cf_check_ll(i, y[i], 10LL * cP * (cP - 1) / 2 + (long long)i * cP);
}

static void repeat(void) {
    if (!cf_case("repeat/1000x2-int")) return;
    for (int it = 0; it < 1000; it++) {
        int x[2] = {me + it, (it % 7) * me}, y[2] = {-1, -1};
        MPI_Allreduce(it % 3 == 2 ? MPI_IN_PLACE : x, it % 3 == 2 ? x : y, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        const int *res = it % 3 == 2 ? x : y;
        cf_check_ll(2 * it, res[0], (long long)P * (P - 1) / 2 + (long long)it * P);
        cf_check_ll(2 * it + 1, res[1], (long long)(it % 7) * P * (P - 1) / 2);
    }
}

static void aliased(void) {
    /* Both MPIs reject sendbuf == recvbuf for count >= 2; Open MPI raises it on MPI_COMM_WORLD's handler. */
    if (!cf_case("aliased/int-sum-4")) return;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int buf[4] = {me, me, me, me};
    const int rc = MPI_Allreduce(buf, buf, 4, MPI_INT, MPI_SUM, comm);
    cf_check_true(0, rc != MPI_SUCCESS, "MPI_SUCCESS", "an error code");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_free(&comm);
}

static void large_count(void) {
#if MPI_VERSION >= 4
    if (!cf_case("large-count/MPI_Allreduce_c")) return;
    long long x[3] = {me, 2 * me, 3}, y[3];
    cf_check_rc("MPI_Allreduce_c", MPI_Allreduce_c(x, y, 3, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    cf_check_ll(0, y[0], (long long)P * (P - 1) / 2);
    cf_check_ll(1, y[1], (long long)P * (P - 1));
    cf_check_ll(2, y[2], 3LL * P);
    if (!cf_case("large-count/MPI_Allreduce_c/inplace")) return;
    cf_check_rc("MPI_Allreduce_c", MPI_Allreduce_c(MPI_IN_PLACE, x, 3, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 3; i++) cf_check_ll(i, x[i], y[i]);
#endif
}

int main(int argc, char **argv) {
    cf_init(&argc, &argv, "allreduce");
    P = cf_world_size, me = cf_world_rank;
    MPI_Type_contiguous(4, MPI_INT, &t_mat2);
    MPI_Type_contiguous(3, MPI_INT, &t_triple);
    MPI_Type_vector(2, 1, 3, MPI_INT, &t_vec);
    MPI_Type_create_resized(MPI_INT, -(MPI_Aint)sizeof(int), 2 * sizeof(int), &t_reslb);
    MPI_Type_commit(&t_mat2), MPI_Type_commit(&t_triple), MPI_Type_commit(&t_vec), MPI_Type_commit(&t_reslb);
    MPI_Op_create(op_modsum, 1, &u_comm);
    MPI_Op_create(op_noncomm, 0, &u_noncomm);

    predefined();
    loc();
    for (int k = CF_WORLD; k <= CF_SPLIT_REVERSED; k++) {
        MPI_Comm comm = cf_comm(k);
        mixed(comm, cf_comm_names[k]);
        user_ops(comm, cf_comm_names[k]);
        count0(comm, cf_comm_names[k]);
        p2p(comm, cf_comm_names[k]);
        cf_comm_free(&comm);
    }
    repeat();
    large_count();
    aliased();
    if (cf_case("user-op datatypes"))
        cf_check_true(0, unexpected_type == 0, "a user operation called with an unexpected datatype",
                      "only the datatypes passed to MPI_Allreduce");

    MPI_Op_free(&u_comm), MPI_Op_free(&u_noncomm);
    MPI_Type_free(&t_mat2), MPI_Type_free(&t_triple), MPI_Type_free(&t_vec), MPI_Type_free(&t_reslb);
    return cf_finish();
}
