/* Conformance of MPI_Allgatherv (tests/conformance/README.md): an ordinary MPI program, nothing but MPI.
 *
 * On every communicator of conformance.h (world, dup, odd/even split, reversed-key split, periodic and open 2-D
 * Cartesian), each case checks every int of the receive buffer -- blocks, gaps between blocks, holes of strided
 * types and guards. Receive blocks lie in reverse rank order with a gap of one element after each. Counts (basic
 * ints rank r contributes):
 *   n=0,1,5      every rank n;  uneven   2 ((3r + 1) mod 4): 2, 0, 6, 4, 2, 0, ... (zero on some ranks)
 *   last-only    6 on the last rank, 0 elsewhere;  large   1000 + 2r, but 0 where r mod 3 = 1
 * Cases:
 *   basic/<counts>           MPI_INT
 *   inplace/<counts>         MPI_IN_PLACE (own block already in the receive buffer): n=1, uneven, large
 *   mixed/...                different but legal arguments: the last rank receives through
 *                            MPI_Type_contiguous(2, MPI_INT) (half the counts) while the others receive MPI_INT;
 *                            rank 0 sends through it; also in place
 *   recv-<type>, send-<type> strided MPI_Type_vector resized to cover its holes, an MPI_INT resized to a non-zero
 *                            lower bound (datatypes in conformance.h), also in place
 *   p2p                      point-to-point traffic around the call
 *   repeat                   1000 calls whose counts change every call, every third in place, every result
 *                            checked (world)
 *   large-count              MPI_Allgatherv_c where the library has it (MPI >= 4)
 * Not tested: even ranks passing a zero-size datatype with non-zero counts while odd ranks pass MPI_INT with zero
 * counts (alltoallv.c's zero-size case; legal: every signature is empty). Natively, Open MPI 5.0.11 and MPICH 5.0.2
 * both send empty messages the zero-count ranks never receive, and the next collective on the communicator
 * receives them instead of its own data (wrong results, hangs at P = 7, 8). Aliased buffers are not tested either
 * (no behaviour both MPIs agree on, as allgather.c says). */
#include "conformance.h"

static int val(int src, long j) { return src * 10000 + (int)j + 1; }

typedef enum { C_N, C_UNEVEN, C_LAST_ONLY, C_LARGE } counts_kind;

/* Basic ints rank r contributes (even except C_N with odd n, used with MPI_INT only). */
static int ints_of(counts_kind c, int r, int P, int n) {
    switch (c) {
    case C_N: return n;
    case C_UNEVEN: return 2 * ((3 * r + 1) % 4);
    case C_LAST_ONLY: return r == P - 1 ? 6 : 0;
    case C_LARGE: return r % 3 == 1 ? 0 : 1000 + 2 * r;
    }
    return 0;
}

/* Elements of `kind` for `ints` basic ints. */
static int elems(int kind, int ints) { return ints / cf_kind_ints[kind]; }

static void agv_case(MPI_Comm comm, const char *label, int sk, int rk, counts_kind c, int n, int inplace) {
    int me, P;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    if (!cf_case("%s", label)) return;
    int *rc = malloc(sizeof(int) * P), *rd = malloc(sizeof(int) * P);
    int off = 0;
    for (int r = P - 1; r >= 0; r--) rc[r] = elems(rk, ints_of(c, r, P, n)), rd[r] = off, off += rc[r] + 1;
    const int mine = ints_of(c, me, P, n), sc = elems(sk, mine);
    cf_buf send = cf_buf_new((long)sc * cf_kind_extent[sk] + 1);
    cf_buf recv = cf_buf_new((long)off * cf_kind_extent[rk] + 1), want = cf_buf_new((long)off * cf_kind_extent[rk] + 1);
    for (long b = 0; b < (long)sc * cf_kind_ints[sk]; b++) cf_buf_ptr(&send)[cf_pos(sk, 0, b)] = val(me, b);
    for (int r = 0; r < P; r++)
        for (long b = 0; b < (long)rc[r] * cf_kind_ints[rk]; b++) {
            cf_buf_ptr(&want)[cf_pos(rk, rd[r], b)] = val(r, b);
            if (inplace && r == me) cf_buf_ptr(&recv)[cf_pos(rk, rd[r], b)] = val(r, b);
        }
    cf_check_rc("MPI_Allgatherv", MPI_Allgatherv(inplace ? MPI_IN_PLACE : cf_buf_ptr(&send), sc, cf_types[sk],
                                                 cf_buf_ptr(&recv), rc, rd, cf_types[rk], comm));
    cf_check_buf(&recv, &want);
    cf_buf_free(&send), cf_buf_free(&recv), cf_buf_free(&want);
    free(rc), free(rd);
}

static void cases(MPI_Comm comm, const char *cn) {
    int me, P;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    char l[200];
#define CASE(name, sk, rk, c, n, inplace)                                                                     \
    do {                                                                                                       \
        snprintf(l, sizeof l, "%s/%s", name, cn);                                                             \
        agv_case(comm, l, sk, rk, c, n, inplace);                                                              \
    } while (0)
    CASE("basic/n=0", K_INT, K_INT, C_N, 0, 0);
    CASE("basic/n=1", K_INT, K_INT, C_N, 1, 0);
    CASE("basic/n=5", K_INT, K_INT, C_N, 5, 0);
    CASE("basic/uneven", K_INT, K_INT, C_UNEVEN, 0, 0);
    CASE("basic/last-only", K_INT, K_INT, C_LAST_ONLY, 0, 0);
    CASE("basic/large", K_INT, K_INT, C_LARGE, 0, 0);
    CASE("inplace/n=1", K_INT, K_INT, C_N, 1, 1);
    CASE("inplace/uneven", K_INT, K_INT, C_UNEVEN, 0, 1);
    CASE("inplace/large", K_INT, K_INT, C_LARGE, 0, 1);
    CASE("mixed/last-rank-recv-contig2", K_INT, me == P - 1 ? K_CONTIG2 : K_INT, C_UNEVEN, 0, 0);
    CASE("mixed/rank0-send-contig2", me == 0 ? K_CONTIG2 : K_INT, K_INT, C_UNEVEN, 0, 0);
    CASE("mixed/last-rank-contig2/inplace", K_INT, me == P - 1 ? K_CONTIG2 : K_INT, C_UNEVEN, 0, 1);
    CASE("recv-vector-resized", K_INT, K_VEC, C_UNEVEN, 0, 0);
    CASE("recv-vector-resized/inplace", K_INT, K_VEC, C_UNEVEN, 0, 1);
    CASE("send-vector-resized", K_VEC, K_INT, C_UNEVEN, 0, 0);
    CASE("recv-resized-lb/inplace", K_INT, K_RESLB, C_UNEVEN, 0, 1);
    CASE("send-resized-lb", K_RESLB, K_CONTIG2, C_UNEVEN, 0, 0);
#undef CASE
    snprintf(l, sizeof l, "p2p/%s", cn);
    if (!cf_skipped(l)) {
        cf_p2p t;
        cf_p2p_before(&t, comm);
        agv_case(comm, l, K_INT, K_INT, C_UNEVEN, 0, 0);
        cf_p2p_after(&t);
    }
}

static void repeat(void) {
    if (!cf_case("repeat/1000-changing-counts")) return;
    const int P = cf_world_size, me = cf_world_rank;
    int *r = malloc(sizeof(int) * 2 * P), *rc = malloc(sizeof(int) * P), *rd = malloc(sizeof(int) * P);
    for (int it = 0; it < 1000; it++) {
        const int inplace = it % 3 == 2;
        for (int k = 0; k < P; k++) rc[k] = (it + k) % 3, rd[k] = 2 * (P - 1 - k), r[2 * k] = r[2 * k + 1] = CF_SENTINEL;
        int x[2] = {me * 1000 + it % 100, -(me * 1000 + it % 100)};
        if (inplace)
            for (int i = 0; i < rc[me]; i++) r[rd[me] + i] = x[i];
        MPI_Allgatherv(inplace ? MPI_IN_PLACE : x, rc[me], MPI_INT, r, rc, rd, MPI_INT, MPI_COMM_WORLD);
        for (int k = 0; k < P; k++) {
            const int v = k * 1000 + it % 100, at = rd[k];
            cf_check_ll((long)it * 2 * P + at, r[at], rc[k] > 0 ? v : CF_SENTINEL);
            cf_check_ll((long)it * 2 * P + at + 1, r[at + 1], rc[k] > 1 ? -v : CF_SENTINEL);
        }
    }
    free(r), free(rc), free(rd);
}

static void large_count(void) {
#if MPI_VERSION >= 4
    if (!cf_case("large-count/MPI_Allgatherv_c")) return;
    const int P = cf_world_size, me = cf_world_rank;
    long long x[2] = {me, -((long long)me << 35)}, *r = malloc(sizeof(long long) * 2 * P);
    MPI_Count *rc = malloc(sizeof(MPI_Count) * P);
    MPI_Aint *rd = malloc(sizeof(MPI_Aint) * P);
    for (int k = 0; k < P; k++) rc[k] = k % 2 + 1, rd[k] = 2 * (P - 1 - k), r[2 * k] = r[2 * k + 1] = CF_SENTINEL;
    cf_check_rc("MPI_Allgatherv_c", MPI_Allgatherv_c(x, rc[me], MPI_LONG_LONG, r, rc, rd, MPI_LONG_LONG, MPI_COMM_WORLD));
    for (int k = 0; k < P; k++) {
        cf_check_ll(rd[k], r[rd[k]], k);
        cf_check_ll(rd[k] + 1, r[rd[k] + 1], rc[k] > 1 ? -((long long)k << 35) : CF_SENTINEL);
    }
    free(r), free(rc), free(rd);
#endif
}

int main(int argc, char **argv) { return cf_run(&argc, &argv, "allgatherv", cases, repeat, large_count); }
