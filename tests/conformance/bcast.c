/* Conformance of MPI_Bcast (tests/conformance/README.md): an ordinary MPI program, nothing but MPI.
 *
 * On every communicator of conformance.h (world, dup, odd/even split, reversed-key split, periodic and open 2-D
 * Cartesian), at every root (0, the last rank, a middle one), each case checks every int of every rank's buffer --
 * the message, holes of strided types and guards; the root's buffer must not change:
 *   basic/n=0,1,5,1200       MPI_INT
 *   mixed/...                different but legal arguments (the same type signature): the root passes
 *                            MPI_Type_contiguous(2, MPI_INT) x n while the others pass 2n MPI_INT; the last rank
 *                            does so while the others (root included) pass MPI_INT; rank 1 receives through a strided
 *                            vector; the root sends through an MPI_INT resized to a non-zero lower bound while the
 *                            others receive contig2
 *   vector-resized, resized-lb   every rank passes the strided MPI_Type_vector resized to cover its holes, or the
 *                            MPI_INT resized to a non-zero lower bound (datatypes in conformance.h)
 *   (the cases with derived datatypes run at every root on world, at one root on each other communicator)
 *   p2p                      point-to-point traffic around the call (root: the middle rank)
 *   repeat                   1000 calls of 1 or 3 ints on world, the root moving every call, every result checked
 *   large-count              MPI_Bcast_c where the library has it (MPI >= 4) */
#include "conformance.h"

static int val(int root, long j) { return root * 100000 + (int)j * 3 + 1; }

/* One bcast of `ints` basic ints: this rank passes `count` elements of `kind` (count * ints-per-element = ints). */
static void bc_case(MPI_Comm comm, const char *label, int kind, int count, int root) {
    int me;
    MPI_Comm_rank(comm, &me);
    if (!cf_case("%s", label)) return;
    const long ints = (long)count * cf_kind_ints[kind], len = (long)count * cf_kind_extent[kind] + 1;
    cf_buf buf = cf_buf_new(len), want = cf_buf_new(len);
    for (long b = 0; b < ints; b++) {
        cf_buf_ptr(&want)[cf_pos(kind, 0, b)] = val(root, b);
        if (me == root) cf_buf_ptr(&buf)[cf_pos(kind, 0, b)] = val(root, b);
    }
    cf_check_rc("MPI_Bcast", MPI_Bcast(cf_buf_ptr(&buf), count, cf_types[kind], root, comm));
    cf_check_buf(&buf, &want);
    cf_buf_free(&buf), cf_buf_free(&want);
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
#define CASE(name, kind, count)                                                                               \
    do {                                                                                                       \
        snprintf(l, sizeof l, "%s/root=%d/%s", name, root, cn);                                               \
        bc_case(comm, l, kind, count, root);                                                                   \
    } while (0)
        for (int i = 0; i < 4; i++) {
            char name[32];
            snprintf(name, sizeof name, "basic/n=%d", ns[i]);
            CASE(name, K_INT, ns[i]);
        }
        if (!cf_derived_at_root(cn, ri, nroots)) continue;
        CASE("mixed/root-contig2", me == root ? K_CONTIG2 : K_INT, me == root ? 3 : 6);
        CASE("mixed/last-rank-contig2", me == P - 1 ? K_CONTIG2 : K_INT, me == P - 1 ? 3 : 6);
        CASE("mixed/rank1-vector", me == 1 ? K_VEC : K_INT, me == 1 ? 2 : 4);
        CASE("mixed/root-resized-lb-others-contig2", me == root ? K_RESLB : K_CONTIG2, me == root ? 4 : 2);
        CASE("vector-resized", K_VEC, 3);
        CASE("resized-lb", K_RESLB, 3);
#undef CASE
    }
    const int root = roots[nroots - 1];
    snprintf(l, sizeof l, "p2p/root=%d/%s", root, cn);
    if (!cf_skipped(l)) {
        cf_p2p t;
        cf_p2p_before(&t, comm);
        bc_case(comm, l, K_INT, 2, root);
        cf_p2p_after(&t);
    }
}

static void repeat(void) {
    if (!cf_case("repeat/1000x1-or-3-int")) return;
    const int P = cf_world_size, me = cf_world_rank;
    for (int it = 0; it < 1000; it++) {
        const int root = it % P, n = it % 2 ? 3 : 1;
        int x[3] = {-1, -1, -1};
        if (me == root)
            for (int i = 0; i < n; i++) x[i] = it * 10 + i;
        MPI_Bcast(x, n, MPI_INT, root, MPI_COMM_WORLD);
        for (int i = 0; i < 3; i++) cf_check_ll(3L * it + i, x[i], i < n ? it * 10 + i : -1);
    }
}

static void large_count(void) {
#if MPI_VERSION >= 4
    if (!cf_case("large-count/MPI_Bcast_c")) return;
    const int P = cf_world_size, me = cf_world_rank, root = P / 2;
    long long x[3] = {-1, -1, -1};
    if (me == root) x[0] = 7, x[1] = -(1LL << 40), x[2] = root;
    cf_check_rc("MPI_Bcast_c", MPI_Bcast_c(x, 3, MPI_LONG_LONG, root, MPI_COMM_WORLD));
    cf_check_ll(0, x[0], 7), cf_check_ll(1, x[1], -(1LL << 40)), cf_check_ll(2, x[2], root);
#endif
}

int main(int argc, char **argv) { return cf_run(&argc, &argv, "bcast", cases, repeat, large_count); }
