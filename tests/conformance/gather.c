/* Conformance of MPI_Gather (tests/conformance/README.md): an ordinary MPI program, nothing but MPI.
 *
 * On every communicator of conformance.h (world, dup, odd/even split, reversed-key split, periodic and open 2-D
 * Cartesian), at every root (0, the last rank, a middle one), each case checks every int of the root's receive
 * buffer -- blocks, holes of strided types and guards -- and that a receive buffer a non-root passes (not
 * significant there) stays untouched:
 *   basic/n=0,1,5,1200       MPI_INT; the non-roots pass a receive buffer with the root's count and type (n = 0,
 *                            5) or NULL, count 0 and MPI_DATATYPE_NULL (1, 1200: "significant only at root")
 *   inplace/n=0,5,1200       MPI_IN_PLACE at the root (its own block already in the receive buffer; its send count
 *                            and type, ignored, are 0 and MPI_DATATYPE_NULL)
 *   mixed/...                different but legal arguments: the root receives MPI_Type_contiguous(2, MPI_INT) x n
 *                            per rank (in place) while the others send 2n MPI_INT; rank 0 sends n contig2 while the
 *                            root receives 2n MPI_INT
 *   recv-<type>, send-<type> strided MPI_Type_vector resized to cover its holes (the root receives through it in
 *                            place while the others send MPI_INT), an MPI_INT resized to a non-zero lower bound
 *                            (datatypes in conformance.h)
 *   (the cases with derived datatypes run at every root on world, at one root on each other communicator)
 *   p2p                      point-to-point traffic around the call (root: the middle rank)
 *   repeat                   1000 calls of one int on world, the root moving every call, every third in place
 *   large-count              MPI_Gather_c where the library has it (MPI >= 4) */
#include "conformance.h"

enum { M_BUF = 0, M_NULL = 1, M_INPLACE = 2 };  /* flags: non-roots pass NULL; in place at the root */

static int val(int src, long j) { return src * 1000 + (int)j + 1; }

/* One gather: this rank sends `scount` elements of kind `sk`; the root receives `rcount` of kind `rk` per rank. */
static void g_case(MPI_Comm comm, const char *label, int sk, int scount, int rk, int rcount, int root, int mode) {
    int me, P;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    if (!cf_case("%s", label)) return;
    const long block = (long)rcount * cf_kind_ints[rk];  /* basic ints per rank at the root */
    const long rlen = (long)P * rcount * cf_kind_extent[rk] + 1;
    cf_buf send = cf_buf_new((long)scount * cf_kind_extent[sk] + 1);
    cf_buf recv = cf_buf_new(rlen), want = cf_buf_new(rlen);
    for (long b = 0; b < (long)scount * cf_kind_ints[sk]; b++) cf_buf_ptr(&send)[cf_pos(sk, 0, b)] = val(me, b);
    const int inplace = (mode & M_INPLACE) && me == root;
    if (me == root)
        for (int r = 0; r < P; r++)
            for (long b = 0; b < block; b++) {
                cf_buf_ptr(&want)[cf_pos(rk, (long)r * rcount, b)] = val(r, b);
                if (inplace && r == me) cf_buf_ptr(&recv)[cf_pos(rk, (long)r * rcount, b)] = val(r, b);
            }
    const int null = (mode & M_NULL) && me != root;
    cf_check_rc("MPI_Gather", MPI_Gather(inplace ? MPI_IN_PLACE : cf_buf_ptr(&send), inplace ? 0 : scount,
                                         inplace ? MPI_DATATYPE_NULL : cf_types[sk], null ? NULL : cf_buf_ptr(&recv),
                                         null ? 0 : rcount, null ? MPI_DATATYPE_NULL : cf_types[rk], root, comm));
    cf_check_buf(&recv, &want);  /* non-roots: all sentinel */
    cf_buf_free(&send), cf_buf_free(&recv), cf_buf_free(&want);
}

static void cases(MPI_Comm comm, const char *cn) {
    int me, P, roots[3];
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    const int nroots = cf_roots(P, roots);
    char l[200];
    const int ns[4] = {0, 1, 5, 1200};
    for (int ri = 0; ri < nroots; ri++) {
        const int root = roots[ri];
#define CASE(name, sk, scount, rk, rcount, mode)                                                              \
    do {                                                                                                       \
        snprintf(l, sizeof l, "%s/root=%d/%s", name, root, cn);                                               \
        g_case(comm, l, sk, scount, rk, rcount, root, mode);                                                  \
    } while (0)
        char name[40];
        for (int i = 0; i < 4; i++) {
            snprintf(name, sizeof name, "basic/n=%d%s", ns[i], i % 2 ? "/nonroot-null" : "");
            CASE(name, K_INT, ns[i], K_INT, ns[i], i % 2 ? M_NULL : M_BUF);
        }
        for (int i = 0; i < 4; i++) {
            if (i == 1) continue;
            snprintf(name, sizeof name, "inplace/n=%d%s", ns[i], i == 3 ? "/nonroot-null" : "");
            CASE(name, K_INT, ns[i], K_INT, ns[i], i == 3 ? M_INPLACE | M_NULL : M_INPLACE);
        }
        if (!cf_derived_at_root(cn, ri, nroots)) continue;
        const int R = me == root;
        CASE("mixed/root-recv-contig2/inplace", K_INT, 6, R ? K_CONTIG2 : K_INT, R ? 3 : 6, M_INPLACE);
        CASE("mixed/rank0-send-contig2", me == 0 ? K_CONTIG2 : K_INT, me == 0 ? 3 : 6, K_INT, 6, M_NULL);
        CASE("recv-vector-resized/inplace", K_INT, 6, K_VEC, 3, M_INPLACE);
        CASE("send-vector-resized", K_VEC, 3, K_INT, 6, M_NULL);
        CASE("recv-resized-lb", K_INT, 3, K_RESLB, 3, M_BUF);
        CASE("send-resized-lb", K_RESLB, 6, K_CONTIG2, 3, M_BUF);
#undef CASE
    }
    const int root = roots[nroots - 1];
    snprintf(l, sizeof l, "p2p/root=%d/%s", root, cn);
    if (!cf_skipped(l)) {
        cf_p2p t;
        cf_p2p_before(&t, comm);
        g_case(comm, l, K_INT, 2, K_INT, 2, root, M_BUF);
        cf_p2p_after(&t);
    }
}

static void repeat(void) {
    if (!cf_case("repeat/1000x1-int")) return;
    const int P = cf_world_size, me = cf_world_rank;
    int *r = malloc(sizeof(int) * P);
    for (int it = 0; it < 1000; it++) {
        const int root = it % P, inplace = it % 3 == 2 && me == root;
        int x = me * 7 + it;
        for (int k = 0; k < P; k++) r[k] = -1;
        if (inplace) r[me] = x;
        MPI_Gather(inplace ? MPI_IN_PLACE : &x, 1, MPI_INT, me == root || it % 2 ? r : NULL, 1, MPI_INT, root,
                   MPI_COMM_WORLD);
        for (int k = 0; k < P; k++) cf_check_ll((long)it * P + k, r[k], me == root ? k * 7 + it : -1);
    }
    free(r);
}

static void large_count(void) {
#if MPI_VERSION >= 4
    if (!cf_case("large-count/MPI_Gather_c")) return;
    const int P = cf_world_size, me = cf_world_rank, root = P - 1;
    long long x[2] = {me, -me}, *r = malloc(sizeof(long long) * 2 * P);
    cf_check_rc("MPI_Gather_c", MPI_Gather_c(x, 2, MPI_LONG_LONG, r, 2, MPI_LONG_LONG, root, MPI_COMM_WORLD));
    if (me == root)
        for (int k = 0; k < P; k++) cf_check_ll(2 * k, r[2 * k], k), cf_check_ll(2 * k + 1, r[2 * k + 1], -k);
    free(r);
#endif
}

int main(int argc, char **argv) { return cf_run(&argc, &argv, "gather", cases, repeat, large_count); }
