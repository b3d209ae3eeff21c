/* Conformance of MPI_Reduce_scatter_block (tests/conformance/README.md): an ordinary MPI program, nothing but MPI.
 *
 * On every communicator of conformance.h (world, dup, odd/even split, reversed-key split, periodic and open 2-D
 * Cartesian), each rank's n result elements (elements r*n .. r*n+n-1 of the P*n-element vector) are checked
 * element by element against the serial fold x_0 op x_1 op ... op x_{P-1} (reductions in conformance.h), with
 * every byte of the receive buffer outside the results (holes, the bytes of a non-zero lower bound, guards), and
 * the send buffer must not change:
 *   int-sum/n=0,1,5,1000           MPI_INT MPI_SUM
 *   int-sum/inplace/n=1,1000       MPI_IN_PLACE: the P*n inputs in the receive buffer, the result in its first n
 *                                  elements (the rest of the input area is not checked: MPI leaves it undefined)
 *   contig2/user-noncommutative    composition of affine maps mod a prime (rank order matters) on
 *                                  MPI_Type_contiguous(2, MPI_INT), also in place
 *   vector-resized/user-commutative/inplace   sum mod a prime on a strided MPI_Type_vector resized (holes
 *                                  untouched); not with the non-commutative operation: MPICH 5.0.2's own
 *                                  algorithm for non-commutative operations at power-of-two P gets such types wrong
 *                                  (wrong results, then a heap corruption: README.md, "What the two MPIs do")
 *   resized-lb/user-commutative    sum mod a prime on an MPI_INT resized to a non-zero lower bound
 *   double/mixed-magnitude-sum, float/.../inplace   1e16, 1, -1e16, 1e-3 patterns: each element lives on one
 *                                  rank, so there is nothing to compare between ranks: finite and within (P-1) eps
 *                                  sum|x| of the exact sum (the bound of any order), and a second identical call
 *                                  gives the bitwise identical result
 *   predef/<type>/<op>             (world, reversed split) sum/prod/max/min on int, long (values beyond 32 bits),
 *                                  float, double; band/bor/bxor/land/lor on int; maxloc/minloc on MPI_DOUBLE_INT and
 *                                  MPI_2INT with ties (the smaller index wins); 3 elements per rank, every other
 *                                  one in place
 *   p2p                            point-to-point traffic around the call
 *   repeat                         1000 calls of 2 ints per rank on world, every third in place
 *   large-count                    MPI_Reduce_scatter_block_c where the library has it (MPI >= 4), also in place
 *   user-op datatypes              the user operations were called with no datatype other than those passed
 * Different datatypes on different ranks are not tested: MPI requires the same datatype on every rank. */
#include "conformance.h"

static void rsb_case(MPI_Comm comm, const char *cn, const char *prefix, const cf_red *k, long n, int inplace) {
    int me, P;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    if (!cf_case("%s%s/n=%ld%s/%s", prefix, k->name, n, inplace ? "/inplace" : "", cn)) return;
    const long total = n * P, sbytes = cf_red_bytes(k, total), rbytes = cf_red_bytes(k, inplace ? total : n);
    cf_bytes send = cf_bytes_new(sbytes), sendref = cf_bytes_new(sbytes), recv = cf_bytes_new(rbytes),
             first = cf_bytes_new(rbytes);
    cf_red_fill(k, cf_bytes_ptr(&send), 0, total, me, P);
    cf_red_fill(k, cf_bytes_ptr(&sendref), 0, total, me, P);
    for (int call = 0; call < (k->rop == RO_FSUM ? 2 : 1); call++) {
        if (inplace) cf_red_fill(k, cf_bytes_ptr(&recv), 0, total, me, P);
        cf_check_rc("MPI_Reduce_scatter_block",
                    MPI_Reduce_scatter_block(inplace ? MPI_IN_PLACE : cf_bytes_ptr(&send), cf_bytes_ptr(&recv), (int)n,
                                             k->type, k->op, comm));
        if (call == 0) {
            cf_red_check_values(k, cf_bytes_ptr(&recv), (long)me * n, n, P);
            cf_red_check_holes(k, &recv, n, inplace ? total - n : 0);
            memcpy(first.mem, recv.mem, (size_t)recv.len);
        } else {
            cf_bytes_check_range(&recv, &first, 0, n * k->extent, "as the first call");
        }
        if (!inplace) cf_bytes_check_same(&send, &sendref);
    }
    cf_bytes_free(&send), cf_bytes_free(&sendref), cf_bytes_free(&recv), cf_bytes_free(&first);
}

static void cases(MPI_Comm comm, const char *cn) {
    int me, P;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    const cf_red sum = cf_red_predef(CF_V_INT, RO_SUM), dsum = cf_red_fsum(CF_V_DOUBLE), fsum = cf_red_fsum(CF_V_FLOAT);
    const cf_red affine2 = cf_red_user(K_CONTIG2, 1), modv = cf_red_user(K_VEC, 0), modlb = cf_red_user(K_RESLB, 0);
    const long ns[4] = {0, 1, 5, 1000};
    for (int i = 0; i < 4; i++) rsb_case(comm, cn, "", &sum, ns[i], 0);
    rsb_case(comm, cn, "", &sum, 1, 1);
    rsb_case(comm, cn, "", &sum, 1000, 1);
    rsb_case(comm, cn, "", &affine2, 3, 0);
    rsb_case(comm, cn, "", &affine2, 2, 1);
    rsb_case(comm, cn, "", &modv, 2, 1);
    rsb_case(comm, cn, "", &modlb, 3, 0);
    rsb_case(comm, cn, "", &dsum, 13, 0);
    rsb_case(comm, cn, "", &fsum, 5, 1);
    if (strcmp(cn, "world") == 0 || strcmp(cn, "split-reversed") == 0) {
        cf_red ks[32];
        const int nk = cf_red_predefined_kinds(ks);
        for (int i = 0; i < nk; i++) rsb_case(comm, cn, "predef/", &ks[i], 3, i % 2);
    }
    char l[200];
    snprintf(l, sizeof l, "p2p/int-sum/%s", cn);
    if (!cf_skipped(l)) {
        cf_p2p t;
        cf_p2p_before(&t, comm);
        cf_case("%s", l);
        int *x = malloc(sizeof(int) * 2 * P), y[2] = {-1, -1};
        for (int i = 0; i < 2 * P; i++) x[i] = me * 10 + i;
        cf_check_rc("MPI_Reduce_scatter_block", MPI_Reduce_scatter_block(x, y, 2, MPI_INT, MPI_SUM, comm));
        cf_p2p_after(&t);
        for (int i = 0; i < 2; i++) cf_check_ll(i, y[i], 10LL * P * (P - 1) / 2 + (long long)(2 * me + i) * P);
        free(x);
    }
}

static void repeat(void) {
    if (!cf_case("repeat/1000x2-int")) return;
    const int P = cf_world_size, me = cf_world_rank;
    int *x = malloc(sizeof(int) * 2 * P), y[2];
    for (int it = 0; it < 1000; it++) {
        const int inplace = it % 3 == 2;
        for (int j = 0; j < 2 * P; j++) x[j] = me + it + j * (it % 5);
        y[0] = y[1] = -1;
        MPI_Reduce_scatter_block(inplace ? MPI_IN_PLACE : x, inplace ? x : y, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        const int *res = inplace ? x : y;
        for (int i = 0; i < 2; i++)
            cf_check_ll(2 * it + i, res[i],
                        (long long)P * (P - 1) / 2 + (long long)it * P + (long long)(2 * me + i) * (it % 5) * P);
    }
    free(x);
}

static void large_count(void) {
#if MPI_VERSION >= 4
    if (!cf_case("large-count/MPI_Reduce_scatter_block_c")) return;
    const int P = cf_world_size, me = cf_world_rank;
    long long *x = malloc(sizeof(long long) * 3 * P), y[3] = {-1, -1, -1};
    for (int j = 0; j < 3 * P; j++) x[j] = (long long)me * 1000000007LL + j;
    cf_check_rc("MPI_Reduce_scatter_block_c", MPI_Reduce_scatter_block_c(x, y, 3, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 3; i++)
        cf_check_ll(i, y[i], 1000000007LL * P * (P - 1) / 2 + (long long)(3 * me + i) * P);
    if (cf_case("large-count/MPI_Reduce_scatter_block_c/inplace")) {
        cf_check_rc("MPI_Reduce_scatter_block_c",
                    MPI_Reduce_scatter_block_c(MPI_IN_PLACE, x, 3, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < 3; i++) cf_check_ll(i, x[i], y[i]);
    }
    free(x);
#endif
}

int main(int argc, char **argv) {
    cf_init(&argc, &argv, "reduce_scatter_block");
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
                      "only the datatypes passed to MPI_Reduce_scatter_block");
    cf_red_finalize();
    cf_types_free();
    return cf_finish();
}
