/* Conformance of MPI_Reduce_scatter (tests/conformance/README.md): an ordinary MPI program, nothing but MPI.
 *
 * On every communicator of conformance.h (world, dup, odd/even split, reversed-key split, periodic and open 2-D
 * Cartesian), rank r's counts[r] result elements (elements counts[0] + ... + counts[r-1] onwards of the whole
 * vector) are checked element by element against the serial fold x_0 op x_1 op ... op x_{P-1} (reductions in
 * conformance.h), with every byte of the receive buffer outside the results (holes, the bytes of a non-zero lower
 * bound, guards), and the send buffer must not change. Counts:
 *   uneven s   counts[j] = ((3j + 1) mod 4) s: 1, 0, 3, 2, 1, 0, ... times s (zero on some ranks)
 *   allzero    every count 0;  last-only   5 on the last rank, 0 elsewhere;  1-2-3   1 + j mod 3
 *   large      1000 + 7j, but 0 where j mod 3 = 1
 * Cases:
 *   int-sum/<counts>              MPI_INT MPI_SUM with uneven s = 1, 5, allzero, last-only, large
 *   int-sum/<counts>/inplace      MPI_IN_PLACE (uneven 5, allzero, large): the inputs in the receive buffer, the
 *                                 result in its first counts[r] elements (the rest of the input area is not
 *                                 checked: MPI leaves it undefined)
 *   contig2/user-noncommutative   composition of affine maps mod a prime (rank order matters) on
 *                                 MPI_Type_contiguous(2, MPI_INT)
 *   vector-resized/user-noncommutative/inplace   the same on a strided MPI_Type_vector resized (holes untouched;
 *                                 MPICH gets this right with uneven counts, unlike reduce_scatter_block.c's case)
 *   resized-lb/user-commutative   sum mod a prime on an MPI_INT resized to a non-zero lower bound
 *   double/mixed-magnitude-sum, float/.../inplace   1e16, 1, -1e16, 1e-3 patterns: each element lives on one rank,
 *                                 so there is nothing to compare between ranks: finite and within (P-1) eps sum|x|
 *                                 of the exact sum (the bound of any order), and a second identical call gives the
 *                                 bitwise identical result
 *   predef/<type>/<op>            (world, reversed split) sum/prod/max/min on int, long (values beyond 32 bits),
 *                                 float, double; band/bor/bxor/land/lor on int; maxloc/minloc on MPI_DOUBLE_INT and
 *                                 MPI_2INT with ties (the smaller index wins); counts 1-2-3, every other in place
 *   p2p                           point-to-point traffic around the call
 *   repeat                        1000 calls on world, counts (it + j) mod 3 changing every call, every third in
 *                                 place
 *   large-count                   MPI_Reduce_scatter_c where the library has it (MPI >= 4), also in place
 *   user-op datatypes             the user operations were called with no datatype other than those passed
 * Different datatypes on different ranks are not tested: MPI requires the same datatype on every rank. */
#include "conformance.h"

typedef enum { C_UNEVEN, C_ALLZERO, C_LAST_ONLY, C_123, C_LARGE } counts_kind;

static int count_of(counts_kind c, int j, int P, int s) {
    switch (c) {
    case C_UNEVEN: return ((3 * j + 1) % 4) * s;
    case C_ALLZERO: return 0;
    case C_LAST_ONLY: return j == P - 1 ? 5 : 0;
    case C_123: return 1 + j % 3;
    case C_LARGE: return j % 3 == 1 ? 0 : 1000 + 7 * j;
    }
    return 0;
}
static const char *counts_name(counts_kind c, int s, char *buf, size_t n) {
    static const char *names[] = {"uneven", "allzero", "last-only", "1-2-3", "large"};
    if (c == C_UNEVEN) snprintf(buf, n, "uneven-%d", s);
    else snprintf(buf, n, "%s", names[c]);
    return buf;
}

static void rs_case(MPI_Comm comm, const char *cn, const char *prefix, const cf_red *k, counts_kind c, int s,
                    int inplace) {
    int me, P;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    char cname[32];
    if (!cf_case("%s%s/counts=%s%s/%s", prefix, k->name, counts_name(c, s, cname, sizeof cname),
                 inplace ? "/inplace" : "", cn))
        return;
    int *counts = malloc(sizeof(int) * P);
    long total = 0, mine_first = 0;
    for (int j = 0; j < P; j++) {
        counts[j] = count_of(c, j, P, s);
        if (j < me) mine_first += counts[j];
        total += counts[j];
    }
    const long n = counts[me], sbytes = cf_red_bytes(k, total), rbytes = cf_red_bytes(k, inplace ? total : n);
    cf_bytes send = cf_bytes_new(sbytes), sendref = cf_bytes_new(sbytes), recv = cf_bytes_new(rbytes),
             first = cf_bytes_new(rbytes);
    cf_red_fill(k, cf_bytes_ptr(&send), 0, total, me, P);
    cf_red_fill(k, cf_bytes_ptr(&sendref), 0, total, me, P);
    for (int call = 0; call < (k->rop == RO_FSUM ? 2 : 1); call++) {
        if (inplace) cf_red_fill(k, cf_bytes_ptr(&recv), 0, total, me, P);
        cf_check_rc("MPI_Reduce_scatter", MPI_Reduce_scatter(inplace ? MPI_IN_PLACE : cf_bytes_ptr(&send),
                                                             cf_bytes_ptr(&recv), counts, k->type, k->op, comm));
        if (call == 0) {
            cf_red_check_values(k, cf_bytes_ptr(&recv), mine_first, n, P);
            cf_red_check_holes(k, &recv, n, inplace ? total - n : 0);
            memcpy(first.mem, recv.mem, (size_t)recv.len);
        } else {
            cf_bytes_check_range(&recv, &first, 0, n * k->extent, "as the first call");
        }
        if (!inplace) cf_bytes_check_same(&send, &sendref);
    }
    cf_bytes_free(&send), cf_bytes_free(&sendref), cf_bytes_free(&recv), cf_bytes_free(&first);
    free(counts);
}

static void cases(MPI_Comm comm, const char *cn) {
    int me, P;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    const cf_red sum = cf_red_predef(CF_V_INT, RO_SUM), dsum = cf_red_fsum(CF_V_DOUBLE), fsum = cf_red_fsum(CF_V_FLOAT);
    const cf_red affine2 = cf_red_user(K_CONTIG2, 1), affinev = cf_red_user(K_VEC, 1), modlb = cf_red_user(K_RESLB, 0);
    rs_case(comm, cn, "", &sum, C_UNEVEN, 1, 0);
    rs_case(comm, cn, "", &sum, C_UNEVEN, 5, 0);
    rs_case(comm, cn, "", &sum, C_ALLZERO, 0, 0);
    rs_case(comm, cn, "", &sum, C_LAST_ONLY, 0, 0);
    rs_case(comm, cn, "", &sum, C_LARGE, 0, 0);
    rs_case(comm, cn, "", &sum, C_UNEVEN, 5, 1);
    rs_case(comm, cn, "", &sum, C_ALLZERO, 0, 1);
    rs_case(comm, cn, "", &sum, C_LARGE, 0, 1);
    rs_case(comm, cn, "", &affine2, C_UNEVEN, 1, 0);
    rs_case(comm, cn, "", &affinev, C_UNEVEN, 2, 1);
    rs_case(comm, cn, "", &modlb, C_UNEVEN, 2, 0);
    rs_case(comm, cn, "", &dsum, C_UNEVEN, 3, 0);
    rs_case(comm, cn, "", &fsum, C_UNEVEN, 2, 1);
    if (strcmp(cn, "world") == 0 || strcmp(cn, "split-reversed") == 0) {
        cf_red ks[32];
        const int nk = cf_red_predefined_kinds(ks);
        for (int i = 0; i < nk; i++) rs_case(comm, cn, "predef/", &ks[i], C_123, 0, i % 2);
    }
    char l[200];
    snprintf(l, sizeof l, "p2p/int-sum/%s", cn);
    if (!cf_skipped(l)) {
        cf_p2p t;
        cf_p2p_before(&t, comm);
        cf_case("%s", l);
        int *x = malloc(sizeof(int) * 3 * P), *counts = malloc(sizeof(int) * P), y[3] = {-1, -1, -1}, first = 0;
        for (int i = 0; i < 3 * P; i++) x[i] = me * 10 + i;
        for (int j = 0; j < P; j++) counts[j] = (j + 1) % 3, first += j < me ? counts[j] : 0;
        cf_check_rc("MPI_Reduce_scatter", MPI_Reduce_scatter(x, y, counts, MPI_INT, MPI_SUM, comm));
        cf_p2p_after(&t);
        for (int i = 0; i < 3; i++)
            cf_check_ll(i, y[i], i < counts[me] ? 10LL * P * (P - 1) / 2 + (long long)(first + i) * P : -1);
        free(x), free(counts);
    }
}

static void repeat(void) {
    if (!cf_case("repeat/1000-changing-counts")) return;
    const int P = cf_world_size, me = cf_world_rank;
    int *x = malloc(sizeof(int) * 2 * P), *counts = malloc(sizeof(int) * P), y[2];
    for (int it = 0; it < 1000; it++) {
        const int inplace = it % 3 == 2;
        int first = 0;
        for (int j = 0; j < P; j++) counts[j] = (it + j) % 3, first += j < me ? counts[j] : 0;
        for (int j = 0; j < 2 * P; j++) x[j] = me + it + j * (it % 5);
        y[0] = y[1] = -1;
        MPI_Reduce_scatter(inplace ? MPI_IN_PLACE : x, inplace ? x : y, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        const int *res = inplace ? x : y;
        for (int i = 0; i < counts[me]; i++)
            cf_check_ll(2 * it + i, res[i],
                        (long long)P * (P - 1) / 2 + (long long)it * P + (long long)(first + i) * (it % 5) * P);
        if (!inplace)
            for (int i = counts[me]; i < 2; i++) cf_check_ll(2 * it + i, y[i], -1);
    }
    free(x), free(counts);
}

static void large_count(void) {
#if MPI_VERSION >= 4
    if (!cf_case("large-count/MPI_Reduce_scatter_c")) return;
    const int P = cf_world_size, me = cf_world_rank;
    long long *x = malloc(sizeof(long long) * 3 * P), y[3] = {-1, -1, -1};
    MPI_Count *counts = malloc(sizeof(MPI_Count) * P);
    long long first = 0;
    for (int j = 0; j < P; j++) counts[j] = j % 3 + 1, first += j < me ? counts[j] : 0;
    for (int j = 0; j < 3 * P; j++) x[j] = (long long)me * 1000000007LL + j;
    cf_check_rc("MPI_Reduce_scatter_c", MPI_Reduce_scatter_c(x, y, counts, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 3; i++)
        cf_check_ll(i, y[i], i < counts[me] ? 1000000007LL * P * (P - 1) / 2 + (first + i) * P : -1);
    if (cf_case("large-count/MPI_Reduce_scatter_c/inplace")) {
        cf_check_rc("MPI_Reduce_scatter_c", MPI_Reduce_scatter_c(MPI_IN_PLACE, x, counts, MPI_LONG_LONG, MPI_SUM,
                                                                 MPI_COMM_WORLD));
        for (int i = 0; i < counts[me]; i++) cf_check_ll(i, x[i], y[i]);
    }
    free(x), free(counts);
#endif
}

int main(int argc, char **argv) {
    cf_init(&argc, &argv, "reduce_scatter");
    cf_types_create();
    cf_red_init();
    for (int k = 0; k < CF_NCOMMS; k++) {
        MPI_Comm comm = cf_comm(k);
        cases(comm, cf_comm_names[k]);
        cf_comm_free(&comm);
    }
    repeat();
    large_count();
    if (cf_case("user-op datatypes"))
        cf_check_true(0, cf_red_unexpected_types == 0, "a user operation called with an unexpected datatype",
                      "only the datatypes passed to MPI_Reduce_scatter");
    cf_red_finalize();
    cf_types_free();
    return cf_finish();
}
