/* Conformance of MPI_Reduce (tests/conformance/README.md): an ordinary MPI program, nothing but MPI.
 *
 * On every communicator of conformance.h (world, dup, odd/even split, reversed-key split, periodic and open 2-D
 * Cartesian), at every root (0, the last rank, a middle one), each case checks the root's result element by
 * element against the serial fold x_0 op x_1 op ... op x_{P-1} (reductions in conformance.h), every byte of the
 * root's buffer outside the results (holes, the bytes of a non-zero lower bound, guards), that no send buffer
 * changed, and that a receive buffer a non-root passes (not significant there) stays untouched:
 *   int-sum/n=0,1,5,1200          MPI_INT MPI_SUM; non-roots pass a receive buffer (n = 0, 5) or NULL (1, 1200)
 *   int-sum/inplace/n=0,5,1200    MPI_IN_PLACE at the root; at n = 1200 the non-roots pass the send buffer as the
 *                                 (insignificant) receive buffer too: the idiom
 *                                 MPI_Reduce(me == root ? MPI_IN_PLACE : buf, buf, ...)
 *   contig2/user-noncommutative   composition of affine maps mod a prime (rank order matters) on
 *                                 MPI_Type_contiguous(2, MPI_INT)
 *   vector-resized/user-noncommutative/inplace   the same on a strided MPI_Type_vector resized (holes untouched)
 *   resized-lb/user-commutative   sum mod a prime on an MPI_INT resized to a non-zero lower bound, NULL at non-roots
 *                                 (these two at every root on world, at one root on each other communicator)
 *   double/mixed-magnitude-sum, float/.../inplace   1e16, 1, -1e16, 1e-3 patterns: finite, within (P-1) eps
 *                                 sum|x| of the exact sum (the bound of any order), and a second identical call
 *                                 gives the bitwise identical result (MPI's advice: same arguments, same result)
 *   predef/<type>/<op>            (world at every root, reversed split at its middle root) sum/prod/max/min on int,
 *                                 long (values beyond 32 bits), float, double; band/bor/bxor/land/lor on int;
 *                                 maxloc/minloc on MPI_DOUBLE_INT and MPI_2INT with ties (the smaller index wins);
 *                                 11 elements; the non-roots' buffers cycle through buffer, NULL, in place at root
 *   p2p                           point-to-point traffic around the call (root: the last rank)
 *   repeat                        1000 calls of 2 ints on world, the root moving every call, every third in place
 *   large-count                   MPI_Reduce_c where the library has it (MPI >= 4), also in place
 *   user-op datatypes             the user operations were called with no datatype other than those passed
 * Different datatypes on different ranks are not tested: MPI requires the same datatype (not only the same type
 * signature) on every rank of a reduction. */
#include "conformance.h"

enum { M_BUF, M_NULL, M_INPLACE, M_INPLACE_IDIOM };
static const char *mode_names[] = {"", "/nonroot-null", "/inplace", "/inplace-idiom"};

static void red_case(MPI_Comm comm, const char *cn, const char *prefix, const cf_red *k, long n, int root, int mode) {
    int me, P;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    if (!cf_case("%s%s/n=%ld%s/root=%d/%s", prefix, k->name, n, mode_names[mode], root, cn)) return;
    const long bytes = cf_red_bytes(k, n);
    cf_bytes send = cf_bytes_new(bytes), sendref = cf_bytes_new(bytes), recv = cf_bytes_new(bytes),
             first = cf_bytes_new(bytes);
    cf_red_fill(k, cf_bytes_ptr(&send), 0, n, me, P);
    cf_red_fill(k, cf_bytes_ptr(&sendref), 0, n, me, P);
    const int inplace = (mode == M_INPLACE || mode == M_INPLACE_IDIOM) && me == root;
    const int idiom = mode == M_INPLACE_IDIOM && me != root;  /* recvbuf = sendbuf where it is not significant */
    for (int call = 0; call < (k->rop == RO_FSUM ? 2 : 1); call++) {
        if (inplace) cf_red_fill(k, cf_bytes_ptr(&recv), 0, n, me, P);
        void *sb = inplace ? MPI_IN_PLACE : cf_bytes_ptr(&send);
        void *rb = me == root ? cf_bytes_ptr(&recv) : idiom ? cf_bytes_ptr(&send)
                 : mode == M_NULL ? NULL : cf_bytes_ptr(&recv);
        cf_check_rc("MPI_Reduce", MPI_Reduce(sb, rb, (int)n, k->type, k->op, root, comm));
        if (me == root) {
            if (call == 0) {
                cf_red_check_values(k, cf_bytes_ptr(&recv), 0, n, P);
                cf_red_check_holes(k, &recv, n, 0);
                memcpy(first.mem, recv.mem, (size_t)recv.len);
            } else {
                cf_bytes_check_range(&recv, &first, -CF_RGUARD, recv.len - CF_RGUARD, "as the first call");
            }
        } else {
            cf_red_check_holes(k, &recv, 0, 0);  /* a receive buffer that is not significant: untouched */
        }
        if (!inplace) cf_bytes_check_same(&send, &sendref);
    }
    cf_bytes_free(&send), cf_bytes_free(&sendref), cf_bytes_free(&recv), cf_bytes_free(&first);
}

static void cases(MPI_Comm comm, const char *cn) {
    int me, P, roots[3];
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    const int nroots = cf_roots(P, roots);
    const cf_red sum = cf_red_predef(CF_V_INT, RO_SUM), dsum = cf_red_fsum(CF_V_DOUBLE), fsum = cf_red_fsum(CF_V_FLOAT);
    const cf_red affine2 = cf_red_user(K_CONTIG2, 1), affinev = cf_red_user(K_VEC, 1), modlb = cf_red_user(K_RESLB, 0);
    const long ns[4] = {0, 1, 5, 1200};
    for (int ri = 0; ri < nroots; ri++) {
        const int root = roots[ri];
        for (int i = 0; i < 4; i++) red_case(comm, cn, "", &sum, ns[i], root, i % 2 ? M_NULL : M_BUF);
        red_case(comm, cn, "", &sum, 0, root, M_INPLACE);
        red_case(comm, cn, "", &sum, 5, root, M_INPLACE);
        red_case(comm, cn, "", &sum, 1200, root, M_INPLACE_IDIOM);
        red_case(comm, cn, "", &affine2, 5, root, M_BUF);
        if (cf_derived_at_root(cn, ri, nroots)) {
            red_case(comm, cn, "", &affinev, 3, root, M_INPLACE);
            red_case(comm, cn, "", &modlb, 4, root, M_NULL);
        }
        red_case(comm, cn, "", &dsum, 61, root, M_BUF);
        red_case(comm, cn, "", &fsum, 7, root, M_INPLACE);
    }
    /* every predefined (type, op) pair: world at every root, the reversed split at its middle root */
    const int kind = strcmp(cn, "world") == 0 ? 1 : strcmp(cn, "split-reversed") == 0 ? 2 : 0;
    if (kind) {
        cf_red ks[32];
        const int nk = cf_red_predefined_kinds(ks);
        int call = 0;
        const int first = kind == 1 ? 0 : nroots - 1;  /* roots[nroots - 1]: the middle one where there are 3 */
        for (int ri = first; ri < nroots; ri++)
            for (int i = 0; i < nk; i++) red_case(comm, cn, "predef/", &ks[i], 11, roots[ri], call++ % 3);
    }
    char l[200];
    snprintf(l, sizeof l, "p2p/int-sum/root=%d/%s", P - 1, cn);
    if (!cf_skipped(l)) {
        cf_p2p t;
        cf_p2p_before(&t, comm);
        cf_case("%s", l);
        int x[5], y[5] = {-1, -1, -1, -1, -1};
        for (int i = 0; i < 5; i++) x[i] = me * 10 + i;
        cf_check_rc("MPI_Reduce", MPI_Reduce(x, y, 5, MPI_INT, MPI_SUM, P - 1, comm));
        cf_p2p_after(&t);
        for (int i = 0; i < 5; i++)
            cf_check_ll(i, y[i], me == P - 1 ? 10LL * P * (P - 1) / 2 + (long long)i * P : -1);
    }
}

static void repeat(void) {
    if (!cf_case("repeat/1000x2-int")) return;
    const int P = cf_world_size, me = cf_world_rank;
    for (int it = 0; it < 1000; it++) {
        const int root = it % P, inplace = it % 3 == 2 && me == root;
        int x[2] = {me + it, (it % 7) * me}, y[2] = {-1, -1};
        MPI_Reduce(inplace ? MPI_IN_PLACE : x, inplace ? x : it % 2 ? y : me == root ? y : NULL, 2, MPI_INT, MPI_SUM,
                   root, MPI_COMM_WORLD);
        const int *res = inplace ? x : y;
        if (me == root) {
            cf_check_ll(2 * it, res[0], (long long)P * (P - 1) / 2 + (long long)it * P);
            cf_check_ll(2 * it + 1, res[1], (long long)(it % 7) * P * (P - 1) / 2);
        } else {
            cf_check_ll(2 * it, y[0], -1);
            cf_check_ll(2 * it + 1, y[1], -1);
        }
    }
}

static void large_count(void) {
#if MPI_VERSION >= 4
    if (!cf_case("large-count/MPI_Reduce_c")) return;
    const int P = cf_world_size, me = cf_world_rank, root = P - 1;
    long long x[3] = {me, 2 * me, 3}, y[3] = {-1, -1, -1};
    cf_check_rc("MPI_Reduce_c", MPI_Reduce_c(x, y, 3, MPI_LONG_LONG, MPI_SUM, root, MPI_COMM_WORLD));
    const long long want[3] = {(long long)P * (P - 1) / 2, (long long)P * (P - 1), 3LL * P};
    for (int i = 0; i < 3; i++) cf_check_ll(i, y[i], me == root ? want[i] : -1);
    if (!cf_case("large-count/MPI_Reduce_c/inplace")) return;
    cf_check_rc("MPI_Reduce_c", MPI_Reduce_c(me == root ? MPI_IN_PLACE : x, me == root ? x : NULL, 3, MPI_LONG_LONG,
                                             MPI_SUM, root, MPI_COMM_WORLD));
    if (me == root)
        for (int i = 0; i < 3; i++) cf_check_ll(i, x[i], want[i]);
#endif
}

static void finish(void) {
    large_count();
    if (cf_case("user-op datatypes"))
        cf_check_true(0, cf_red_unexpected_types == 0, "a user operation called with an unexpected datatype",
                      "only the datatypes passed to MPI_Reduce");
    cf_red_finalize();
}

int main(int argc, char **argv) {
    cf_init(&argc, &argv, "reduce");
    cf_types_create();
    cf_red_init();
    for (int k = 0; k < CF_NCOMMS; k++) {
        MPI_Comm comm = cf_comm(k);
        cases(comm, cf_comm_names[k]);
        cf_comm_free(&comm);
    }
    repeat();
    finish();
    cf_types_free();
    return cf_finish();
}
