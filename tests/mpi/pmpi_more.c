/* An ordinary MPI program in C that knows nothing about collplan, for the seven collectives beside pmpi_prog.c's:
 * MPI_Bcast, MPI_Gather, MPI_Scatter, MPI_Allgatherv, MPI_Reduce, MPI_Reduce_scatter_block, MPI_Reduce_scatter (and
 * their MPI-4 large-count _c versions where mpi.h declares them). ctest runs it with libcollplan_pmpi.so in
 * LD_PRELOAD and a COLLPLAN_<COLLECTIVE> choice for each (cmake/mpi_runtime.cmake), and requires COLLPLAN_STATS to
 * show that collplan ran every one of them. Every result is checked against a serial computation: roots 0, P/2 and
 * P-1, counts 0 .. 1500, MPI_IN_PLACE, datatypes with holes (which must stay untouched) that differ between ranks
 * with the same type signature, uneven allgatherv and reduce_scatter counts with zeros, displacements reversed with
 * gaps, integer and floating-point sums, a non-commutative user operation, sub-communicators and an
 * inter-communicator (which the library's own collective serves). Prints "pmpi_more: all checks passed" on rank 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOLE (-7) /* what holes and buffers nobody writes hold */

static int failures = 0, use_c = 0;

static void expect(int ok, MPI_Comm comm, const char *what, int root, int n, int variant) {
    if (ok) return;
    int me, P;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    fprintf(stderr, "pmpi_more: rank %d of %d: %s (root %d, n %d, variant %d%s) is wrong\n", me, P, what, root, n,
            variant, use_c ? ", _c" : "");
    failures++;
}

static int val(int r, int i) { return r * 10007 + i + 1; }

static int *ints(size_t n) {
    int *p = malloc(sizeof(int) * (n ? n : 1));
    for (size_t i = 0; i < n; i++) p[i] = HOLE;
    return p;
}

static int same(const int *a, const int *b, size_t n) { return n == 0 || memcmp(a, b, sizeof(int) * n) == 0; }

/* n ints as `count` elements of `type`: n x MPI_INT, or (strided) one vector of n ints at stride 2 (holes between).
 * A message of blocks puts block j at j * block ints (the vector's extent); int i of block j is at(l, j, i). */
typedef struct {
    MPI_Datatype type;
    int count, stride, block;
} Lay;

static Lay lay(int n, int strided) {
    Lay l = {MPI_INT, n, 1, n};
    if (strided && n > 0) {
        MPI_Type_vector(n, 1, 2, MPI_INT, &l.type);
        MPI_Type_commit(&l.type);
        l.count = 1, l.stride = 2, l.block = 2 * n - 1;
    }
    return l;
}
static void unlay(Lay *l) {
    if (l->type != MPI_INT) MPI_Type_free(&l->type);
}
static int at(Lay l, int j, int i) { return j * l.block + i * l.stride; }

/* ---- the calls, through the large-count versions when use_c (MPI-4) */
static int Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c) {
#if MPI_VERSION >= 4
    if (use_c) return MPI_Bcast_c(b, n, t, root, c);
#endif
    return MPI_Bcast(b, n, t, root, c);
}
static int Gather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root, MPI_Comm c) {
#if MPI_VERSION >= 4
    if (use_c) return MPI_Gather_c(s, sn, st, r, rn, rt, root, c);
#endif
    return MPI_Gather(s, sn, st, r, rn, rt, root, c);
}
static int Scatter(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root, MPI_Comm c) {
#if MPI_VERSION >= 4
    if (use_c) return MPI_Scatter_c(s, sn, st, r, rn, rt, root, c);
#endif
    return MPI_Scatter(s, sn, st, r, rn, rt, root, c);
}
static int Allgatherv(const void *s, int sn, MPI_Datatype st, void *r, const int *rn, const int *rd, MPI_Datatype rt,
                      MPI_Comm c) {
#if MPI_VERSION >= 4
    if (use_c) {
        int P;
        MPI_Comm_size(c, &P);
        MPI_Count *cn = malloc(sizeof(MPI_Count) * P);
        MPI_Aint *cd = malloc(sizeof(MPI_Aint) * P);
        for (int j = 0; j < P; j++) cn[j] = rn[j], cd[j] = rd[j];
        int rc = MPI_Allgatherv_c(s, sn, st, r, cn, cd, rt, c);
        free(cn), free(cd);
        return rc;
    }
#endif
    return MPI_Allgatherv(s, sn, st, r, rn, rd, rt, c);
}
static int Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c) {
#if MPI_VERSION >= 4
    if (use_c) return MPI_Reduce_c(s, r, n, t, op, root, c);
#endif
    return MPI_Reduce(s, r, n, t, op, root, c);
}
static int Reduce_scatter_block(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
#if MPI_VERSION >= 4
    if (use_c) return MPI_Reduce_scatter_block_c(s, r, n, t, op, c);
#endif
    return MPI_Reduce_scatter_block(s, r, n, t, op, c);
}
static int Reduce_scatter(const void *s, void *r, const int *n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
#if MPI_VERSION >= 4
    if (use_c) {
        int P;
        MPI_Comm_size(c, &P);
        MPI_Count *cn = malloc(sizeof(MPI_Count) * P);
        for (int j = 0; j < P; j++) cn[j] = n[j];
        int rc = MPI_Reduce_scatter_c(s, r, cn, t, op, c);
        free(cn);
        return rc;
    }
#endif
    return MPI_Reduce_scatter(s, r, n, t, op, c);
}

/* ---- bcast, gather, scatter: variant bit 0 -- which ranks use the strided layout (same signature), bit 1 -- the
 * root's own (gather's receive, scatter's send) strided, bit 2 -- in place at the root (gather, scatter) */
static void test_bcast(MPI_Comm comm, int root, int n, int variant) {
    int me;
    MPI_Comm_rank(comm, &me);
    Lay l = lay(n, (me + variant) % 2);
    int *b = ints(l.block), *want = ints(l.block);
    for (int i = 0; i < n; i++) want[at(l, 0, i)] = val(root, i);
    if (me == root) memcpy(b, want, sizeof(int) * l.block);
    Bcast(b, l.count, l.type, root, comm);
    expect(same(b, want, l.block), comm, "bcast", root, n, variant);
    free(b), free(want), unlay(&l);
}

static void test_gather(MPI_Comm comm, int root, int n, int variant) {
    int me, P;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    const int in_place = (variant & 4) && me == root;
    Lay sl = lay(n, (me + variant) % 2), rl = lay(n, variant & 2);
    int *s = ints(sl.block), *r = NULL, *want = NULL;
    for (int i = 0; i < n; i++) s[at(sl, 0, i)] = val(me, i);
    if (me == root) {
        r = ints((size_t)P * rl.block), want = ints((size_t)P * rl.block);
        for (int j = 0; j < P; j++)
            for (int i = 0; i < n; i++) want[at(rl, j, i)] = val(j, i);
        if (in_place)
            for (int i = 0; i < n; i++) r[at(rl, root, i)] = val(root, i);
    }
    if (in_place) /* the send arguments are ignored at the root: collplan must not look at them */
        Gather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, r, rl.count, rl.type, root, comm);
    else if (me == root)
        Gather(s, sl.count, sl.type, r, rl.count, rl.type, root, comm);
    else /* the receive arguments are significant at the root only */
        Gather(s, sl.count, sl.type, NULL, 0, MPI_DATATYPE_NULL, root, comm);
    if (me == root) expect(same(r, want, (size_t)P * rl.block), comm, "gather", root, n, variant);
    free(s), free(r), free(want), unlay(&sl), unlay(&rl);
}

static void test_scatter(MPI_Comm comm, int root, int n, int variant) {
    int me, P;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    const int in_place = (variant & 4) && me == root;
    Lay sl = lay(n, variant & 2), rl = lay(n, (me + variant) % 2);
    int *s = NULL, *s0 = NULL, *r = ints(rl.block), *want = ints(rl.block);
    for (int i = 0; i < n; i++) want[at(rl, 0, i)] = val(me, i) + root;
    if (me == root) {
        s = ints((size_t)P * sl.block), s0 = ints((size_t)P * sl.block);
        for (int j = 0; j < P; j++)
            for (int i = 0; i < n; i++) s[at(sl, j, i)] = val(j, i) + root;
        memcpy(s0, s, sizeof(int) * P * sl.block);
    }
    if (in_place)
        Scatter(s, sl.count, sl.type, MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, root, comm);
    else if (me == root)
        Scatter(s, sl.count, sl.type, r, rl.count, rl.type, root, comm);
    else
        Scatter(NULL, 0, MPI_DATATYPE_NULL, r, rl.count, rl.type, root, comm);
    if (in_place) expect(same(s, s0, (size_t)P * sl.block), comm, "scatter (in place: send buffer)", root, n, variant);
    else expect(same(r, want, rl.block), comm, "scatter", root, n, variant);
    free(s), free(s0), free(r), free(want), unlay(&sl), unlay(&rl);
}

/* ---- allgatherv: counts (j * 3 + n) % 5 (zeros among them; n < 0: all zero); variant bit 0 -- displacements
 * reversed with a gap between blocks, bit 1 -- the receive type MPI_INT resized to 8 bytes (a hole after each int),
 * bit 2 -- in place; odd ranks send one strided vector */
static void test_allgatherv(MPI_Comm comm, int n, int variant) {
    int me, P;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    int *c = malloc(sizeof(int) * P), *d = malloc(sizeof(int) * P), total = 0;
    for (int j = 0; j < P; j++) c[j] = n < 0 ? 0 : (j * 3 + n) % 5, total += c[j];
    for (int j = 0, off = 0; j < P; j++) d[j] = off, off += c[j];
    if (variant & 1)
        for (int j = P - 1, off = 1; j >= 0; j--) d[j] = off, off += c[j] + 1;
    const int rs = variant & 2 ? 2 : 1, span = rs * (total + P + 1);
    MPI_Datatype rt = MPI_INT;
    if (variant & 2) {
        MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &rt);
        MPI_Type_commit(&rt);
    }
    int *r = ints(span), *want = ints(span);
    for (int j = 0; j < P; j++)
        for (int i = 0; i < c[j]; i++) want[rs * (d[j] + i)] = val(j, i);
    Lay sl = lay(c[me], me % 2);
    int *s = ints(sl.block);
    for (int i = 0; i < c[me]; i++) s[at(sl, 0, i)] = val(me, i);
    if (variant & 4) {
        for (int i = 0; i < c[me]; i++) r[rs * (d[me] + i)] = val(me, i);
        Allgatherv(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, r, c, d, rt, comm);
    } else {
        Allgatherv(s, sl.count, sl.type, r, c, d, rt, comm);
    }
    expect(same(r, want, span), comm, "allgatherv", -1, n, variant);
    if (rt != MPI_INT) MPI_Type_free(&rt);
    free(c), free(d), free(r), free(want), free(s), unlay(&sl);
}

/* ---- reductions: element k of rank r is x(r, k); kinds: 0 -- long long MPI_SUM, 1 -- double MPI_SUM (exact: small
 * integers), 2 -- pairs of long long under a non-commutative user operation, 3 -- long long with a hole after each
 * (MPI_Type_create_resized to 16 bytes) under a commutative user sum; the hole must stay untouched */
enum { KINDS = 4 };

static long long x(int r, int k) { return (long long)val(r, k) % 1000 + r; }

/* (a1, b1) o (a2, b2) = (a1 a2, a1 b2 + b1) mod p: associative, not commutative. */
static void compose(void *in, void *inout, int *len, MPI_Datatype *type) {
    long long *u = in, *v = inout;
    (void)type;
    for (int i = 0; i < *len; i++) {
        long long a = u[2 * i] * v[2 * i] % 1000003, b = (u[2 * i] * v[2 * i + 1] + u[2 * i + 1]) % 1000003;
        v[2 * i] = a, v[2 * i + 1] = b;
    }
}
static void holey_sum(void *in, void *inout, int *len, MPI_Datatype *type) {
    long long *u = in, *v = inout;
    (void)type;
    for (int i = 0; i < *len; i++) v[2 * i] += u[2 * i];
}

typedef struct {
    MPI_Datatype type;
    MPI_Op op;
    int words; /* long longs per element (kinds 2, 3: 2) */
} Kind;

static Kind kind(int k) {
    Kind K = {MPI_LONG_LONG, MPI_SUM, 1};
    if (k == 1) K.type = MPI_DOUBLE;
    if (k == 2) {
        MPI_Type_contiguous(2, MPI_LONG_LONG, &K.type);
        MPI_Op_create(compose, 0, &K.op);
        K.words = 2;
    }
    if (k == 3) {
        MPI_Type_create_resized(MPI_LONG_LONG, 0, 2 * sizeof(long long), &K.type);
        MPI_Op_create(holey_sum, 1, &K.op);
        K.words = 2;
    }
    if (k >= 2) MPI_Type_commit(&K.type);
    return K;
}
static void unkind(Kind *K) {
    if (K->words == 2) MPI_Type_free(&K->type), MPI_Op_free(&K->op);
}

/* element k of rank r, written at e (words long longs; a double for kind 1) */
static void put(int kd, long long *e, int r, int k) {
    if (kd == 1) {
        double v = (double)x(r, k);
        memcpy(e, &v, sizeof v);
    } else if (kd == 2) {
        e[0] = r + 2 + k % 5, e[1] = 3 * r + k % 7 + 1;
    } else {
        e[0] = x(r, k);
    }
}
/* the reduction of element k over ranks 0 .. P-1, in rank order */
static void reduced(int kd, long long *e, int P, int k) {
    long long t[2];
    put(kd, e, 0, k);
    for (int r = 1; r < P; r++) {
        put(kd, t, r, k);
        if (kd == 1) {
            double a, b;
            memcpy(&a, e, sizeof a), memcpy(&b, t, sizeof b), a += b, memcpy(e, &a, sizeof a);
        } else if (kd == 2) {
            long long a = e[0] * t[0] % 1000003, b = (e[0] * t[1] + e[1]) % 1000003;
            e[0] = a, e[1] = b;
        } else {
            e[0] += t[0];
        }
    }
}

static long long *lls(size_t elems, int words) {
    size_t n = elems * words;
    long long *p = malloc(sizeof(long long) * (n ? n : 1));
    for (size_t i = 0; i < n; i++) p[i] = HOLE;
    return p;
}

/* reduce (rooted, root >= 0) or reduce_scatter_block (root < 0): n elements; in place when `in_place` */
static void test_reduce(MPI_Comm comm, int root, int n, int kd, int in_place) {
    int me, P;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    Kind K = kind(kd);
    const int block = root < 0, in_n = block ? P * n : n, w = K.words;
    const int out_off = block ? me * n : 0;
    long long *s = lls(in_n, w), *r = lls(in_n, w), *want = lls(in_n, w);
    for (int k = 0; k < in_n; k++) put(kd, s + (size_t)k * w, me, k);
    for (int i = 0; i < n; i++) reduced(kd, want + (size_t)i * w, P, out_off + i);
    const int has_out = block || me == root;
    if (in_place && has_out) memcpy(r, s, sizeof(long long) * in_n * w);
    const void *send = in_place && has_out ? MPI_IN_PLACE : s;
    if (block) Reduce_scatter_block(send, r, n, K.type, K.op, comm);
    else Reduce(send, me == root ? r : NULL, n, K.type, K.op, root, comm);
    if (has_out) expect(same((int *)r, (int *)want, 2 * (size_t)n * w), comm, block ? "reduce_scatter_block" : "reduce", root, n, kd + 4 * in_place);
    free(s), free(r), free(want), unkind(&K);
}

/* reduce_scatter: counts (j + m) % 3 (zeros among them; m < 0: all zero) */
static void test_reduce_scatter(MPI_Comm comm, int m, int kd, int in_place) {
    int me, P;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    Kind K = kind(kd);
    int *c = malloc(sizeof(int) * P), total = 0, off = 0;
    for (int j = 0; j < P; j++) c[j] = m < 0 ? 0 : (j + m) % 3, off += j < me ? c[j] : 0, total += c[j];
    const int w = K.words;
    long long *s = lls(total, w), *r = lls(total, w), *want = lls(total, w);
    for (int k = 0; k < total; k++) put(kd, s + (size_t)k * w, me, k);
    for (int i = 0; i < c[me]; i++) reduced(kd, want + (size_t)i * w, P, off + i);
    if (in_place) memcpy(r, s, sizeof(long long) * total * w);
    Reduce_scatter(in_place ? MPI_IN_PLACE : s, r, c, K.type, K.op, comm);
    expect(same((int *)r, (int *)want, 2 * (size_t)c[me] * w), comm, "reduce_scatter", -1, m, kd + 4 * in_place);
    free(c), free(s), free(r), free(want), unkind(&K);
}

static void suite(MPI_Comm comm) {
    int P;
    MPI_Comm_size(comm, &P);
    const int sizes[] = {0, 1, 37, 1500}, roots[] = {0, P / 2, P - 1};
    for (int ri = 0; ri < 3; ri++)
        for (int si = 0; si < 4; si++)
            for (int v = 0; v < 8; v++) {
                if (v < 2) test_bcast(comm, roots[ri], sizes[si], v);
                test_gather(comm, roots[ri], sizes[si], v);
                test_scatter(comm, roots[ri], sizes[si], v);
            }
    for (int n = -1; n < 5; n++)
        for (int v = 0; v < 8; v++) test_allgatherv(comm, n, v);
    for (int kd = 0; kd < KINDS; kd++)
        for (int in_place = 0; in_place < 2; in_place++) {
            for (int si = 0; si < 4; si++) {
                for (int ri = 0; ri < 3; ri++) test_reduce(comm, roots[ri], sizes[si], kd, in_place);
                test_reduce(comm, -1, sizes[si], kd, in_place);
            }
            for (int m = -1; m < 3; m++) test_reduce_scatter(comm, m, kd, in_place);
        }
}

/* An inter-communicator between the even and the odd ranks: the library's own bcast serves it. */
static void test_intercomm(void) {
    int me, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    if (P < 2) return;
    MPI_Comm half, inter;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - me % 2, 99, &inter);
    int b[3] = {HOLE, HOLE, HOLE};
    if (me == 0) b[0] = 5, b[1] = 6, b[2] = 7;
    const int root = me % 2 ? 0 : (me == 0 ? MPI_ROOT : MPI_PROC_NULL);
    Bcast(b, 3, MPI_INT, root, inter);
    expect(me % 2 == 0 || (b[0] == 5 && b[1] == 6 && b[2] == 7), inter, "bcast on an inter-communicator", 0, 3, 0);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int P, me;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (int pass = 0; pass < 2; pass++) { /* the second pass runs the cached decisions (MPI-4: the _c calls) */
#if MPI_VERSION >= 4
        use_c = pass;
#endif
        suite(MPI_COMM_WORLD);
        MPI_Comm part; /* two parts, the second in reverse order */
        MPI_Comm_split(MPI_COMM_WORLD, me < P / 2, me < P / 2 ? me : -me, &part);
        suite(part);
        MPI_Comm_free(&part);
        test_intercomm();
    }
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) printf(all ? "pmpi_more: %d checks failed\n" : "pmpi_more: all checks passed\n", all);
    fflush(stdout); /* before MPI_Finalize prints COLLPLAN_STATS */
    MPI_Finalize();
    return all ? 1 : 0;
}
