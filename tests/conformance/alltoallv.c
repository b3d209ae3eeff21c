/* Conformance of MPI_Alltoallv (tests/conformance/README.md): an ordinary MPI program, nothing but MPI.
 *
 * On every communicator of conformance.h (world, dup, odd/even split, reversed-key split, periodic and open 2-D
 * Cartesian), each case checks every int of the receive buffer -- blocks, gaps between blocks, holes of strided
 * types and guards. Counts differ per rank pair (zero on some pairs) unless said otherwise; send blocks lie in
 * reverse rank order with gaps, receive blocks in rank order with gaps:
 *   basic, allzero           MPI_INT; every count zero
 *   inplace                  MPI_IN_PLACE (symmetric counts: the receive buffer holds the blocks to send)
 *   zero-size/...            even ranks pass MPI_Type_contiguous(0, MPI_INT) with non-zero counts, odd ranks
 *                            MPI_INT with zero counts (every message empty), in place and not
 *   mixed/...                different but legal arguments: the last rank receives through
 *                            MPI_Type_contiguous(2, MPI_INT), rank 0 sends through it, rank 1 receives a strided
 *                            vector, while the others use twice the count of MPI_INT
 *   recv-<type>, send-<type> strided MPI_Type_vector resized to cover its holes, an MPI_INT resized to a
 *                            non-zero lower bound (datatypes in conformance.h), also in place
 *   p2p                      point-to-point traffic around the call
 *   repeat                   1000 calls whose counts change every call, every result checked (world)
 *   large-count              MPI_Alltoallv_c where the library has it (MPI >= 4)
 * Aliased buffers (sendbuf == recvbuf without MPI_IN_PLACE) are not tested: Open MPI 5.0 accepts them and returns
 * MPI_SUCCESS (MPICH 5.0 returns MPI_ERR_BUFFER), so there is no behaviour both MPIs agree on. */
#include "conformance.h"

static int val(int src, int dst, long j) { return src * 100000 + dst * 1000 + (int)j + 1; }

/* Basic ints from rank i to rank j (even, so that 2-int elements divide them). */
typedef int (*count_fn)(int i, int j);
static int c_pairs(int i, int j) { return 2 * ((i + 2 * j) % 3); }     /* zero on some pairs */
static int c_sym(int i, int j) { return 2 * ((i + j) % 3); }           /* symmetric: in place */
static int c_zero(int i, int j) { return (void)i, (void)j, 0; }

/* Elements of `kind` for `ints` basic ints; the zero-size type takes any count (3). */
static int elems(int kind, int ints) { return kind == K_ZERO ? 3 : ints / cf_kind_ints[kind]; }

static void a2av_case(MPI_Comm comm, const char *label, int sk, int rk, count_fn c, int inplace) {
    int me, P;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    if (!cf_case("%s", label)) return;
    int *sc = malloc(sizeof(int) * P), *sd = malloc(sizeof(int) * P), *rc = malloc(sizeof(int) * P),
        *rd = malloc(sizeof(int) * P);
    int soff = 1, roff = 0;
    for (int j = P - 1; j >= 0; j--) sc[j] = elems(sk, c(me, j)), sd[j] = soff, soff += sc[j] + 1;
    for (int i = 0; i < P; i++) rc[i] = elems(rk, c(i, me)), rd[i] = roff, roff += rc[i] + 1;
    cf_buf send = cf_buf_new((long)soff * cf_kind_extent[sk] + 1);
    cf_buf recv = cf_buf_new((long)roff * cf_kind_extent[rk] + 1);
    cf_buf want = cf_buf_new((long)roff * cf_kind_extent[rk] + 1);
    for (int d = 0; d < P; d++)
        for (long b = 0; b < c(me, d); b++) cf_buf_ptr(&send)[cf_pos(sk, sd[d], b)] = val(me, d, b);
    for (int i = 0; i < P; i++)
        for (long b = 0; b < c(i, me); b++) {
            cf_buf_ptr(&want)[cf_pos(rk, rd[i], b)] = val(i, me, b);
            if (inplace) cf_buf_ptr(&recv)[cf_pos(rk, rd[i], b)] = val(me, i, b);  /* c symmetric */
        }
    cf_check_rc("MPI_Alltoallv", MPI_Alltoallv(inplace ? MPI_IN_PLACE : cf_buf_ptr(&send), sc, sd, cf_types[sk],
                                               cf_buf_ptr(&recv), rc, rd, cf_types[rk], comm));
    cf_check_buf(&recv, &want);
    cf_buf_free(&send), cf_buf_free(&recv), cf_buf_free(&want);
    free(sc), free(sd), free(rc), free(rd);
}

static void cases(MPI_Comm comm, const char *cn) {
    int me, P;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    char l[200];
#define CASE(name, sk, rk, c, inplace)                                                                        \
    do {                                                                                                       \
        snprintf(l, sizeof l, "%s/%s", name, cn);                                                             \
        a2av_case(comm, l, sk, rk, c, inplace);                                                                \
    } while (0)
    CASE("basic", K_INT, K_INT, c_pairs, 0);
    CASE("allzero", K_INT, K_INT, c_zero, 0);
    CASE("inplace", K_INT, K_INT, c_sym, 1);
    CASE("allzero/inplace", K_INT, K_INT, c_zero, 1);
    const int zk = me % 2 == 0 ? K_ZERO : K_INT;
    CASE("zero-size-even-ranks", zk, zk, c_zero, 0);
    CASE("zero-size-even-ranks/inplace", zk, zk, c_zero, 1);
    CASE("mixed/last-rank-recv-contig2", K_INT, me == P - 1 ? K_CONTIG2 : K_INT, c_pairs, 0);
    CASE("mixed/rank0-send-contig2", me == 0 ? K_CONTIG2 : K_INT, K_INT, c_pairs, 0);
    CASE("mixed/rank1-recv-vector", K_INT, me == 1 ? K_VEC : K_INT, c_pairs, 0);
    CASE("mixed/last-rank-contig2/inplace", K_INT, me == P - 1 ? K_CONTIG2 : K_INT, c_sym, 1);
    CASE("recv-vector-resized", K_INT, K_VEC, c_pairs, 0);
    CASE("recv-vector-resized/inplace", K_INT, K_VEC, c_sym, 1);
    CASE("send-vector-resized", K_VEC, K_INT, c_pairs, 0);
    CASE("recv-resized-lb", K_INT, K_RESLB, c_pairs, 0);
    CASE("recv-resized-lb/inplace", K_INT, K_RESLB, c_sym, 1);
    CASE("send-resized-lb", K_RESLB, K_CONTIG2, c_pairs, 0);
#undef CASE
    snprintf(l, sizeof l, "p2p/%s", cn);
    if (!cf_skipped(l)) {
        cf_p2p t;
        cf_p2p_before(&t, comm);
        a2av_case(comm, l, K_INT, K_INT, c_pairs, 0);
        cf_p2p_after(&t);
    }
}

static void repeat(void) {
    if (!cf_case("repeat/1000-changing-counts")) return;
    const int P = cf_world_size, me = cf_world_rank;
    int *s = malloc(sizeof(int) * 2 * P), *r = malloc(sizeof(int) * 2 * P);
    int *sc = malloc(sizeof(int) * P), *sd = malloc(sizeof(int) * P), *rc = malloc(sizeof(int) * P),
        *rd = malloc(sizeof(int) * P);
    for (int it = 0; it < 1000; it++) {
        for (int j = 0; j < P; j++) {
            sc[j] = (it + me + 2 * j) % 3, sd[j] = 2 * j, rc[j] = (it + j + 2 * me) % 3, rd[j] = 2 * j;
            s[2 * j] = me * 1000 + j * 10 + it % 10, s[2 * j + 1] = -(me * 1000 + j * 10 + it % 10);
            r[2 * j] = r[2 * j + 1] = CF_SENTINEL;
        }
        MPI_Alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, MPI_COMM_WORLD);
        for (int k = 0; k < P; k++) {
            const int x = k * 1000 + me * 10 + it % 10;
            cf_check_ll((long)it * 2 * P + 2 * k, r[2 * k], rc[k] > 0 ? x : CF_SENTINEL);
            cf_check_ll((long)it * 2 * P + 2 * k + 1, r[2 * k + 1], rc[k] > 1 ? -x : CF_SENTINEL);
        }
    }
    free(s), free(r), free(sc), free(sd), free(rc), free(rd);
}

static void large_count(void) {
#if MPI_VERSION >= 4
    if (!cf_case("large-count/MPI_Alltoallv_c")) return;
    const int P = cf_world_size, me = cf_world_rank;
    long long *s = malloc(sizeof(long long) * 2 * P), *r = malloc(sizeof(long long) * 2 * P);
    MPI_Count *sc = malloc(sizeof(MPI_Count) * P), *rc = malloc(sizeof(MPI_Count) * P);
    MPI_Aint *sd = malloc(sizeof(MPI_Aint) * P), *rd = malloc(sizeof(MPI_Aint) * P);
    for (int j = 0; j < P; j++) {
        sc[j] = (me + j) % 2 + 1, sd[j] = 2 * (P - 1 - j), rc[j] = (me + j) % 2 + 1, rd[j] = 2 * j;
        s[sd[j]] = me * 100 + j, s[sd[j] + 1] = -(me * 100 + j);
        r[2 * j] = r[2 * j + 1] = CF_SENTINEL;
    }
    cf_check_rc("MPI_Alltoallv_c", MPI_Alltoallv_c(s, sc, sd, MPI_LONG_LONG, r, rc, rd, MPI_LONG_LONG, MPI_COMM_WORLD));
    for (int k = 0; k < P; k++) {
        cf_check_ll(2 * k, r[2 * k], k * 100 + me);
        cf_check_ll(2 * k + 1, r[2 * k + 1], rc[k] > 1 ? -(k * 100 + me) : CF_SENTINEL);
    }
    free(s), free(r), free(sc), free(rc), free(sd), free(rd);
#endif
}

int main(int argc, char **argv) { return cf_run(&argc, &argv, "alltoallv", cases, repeat, large_count); }
