/* Conformance of MPI_Allgather (tests/conformance/README.md): an ordinary MPI program, nothing but MPI.
 *
 * On every communicator of conformance.h (world, dup, odd/even split, reversed-key split, periodic and open 2-D
 * Cartesian), each case checks every int of the receive buffer -- blocks, holes of strided types and guards:
 *   basic/n=0,1,5            MPI_INT
 *   inplace/...              MPI_IN_PLACE (own block already in the receive buffer), also with strided types
 *   mixed/...                different but legal arguments: the last rank receives through
 *                            MPI_Type_contiguous(2, MPI_INT) x n while the others receive 2n MPI_INT; rank 0
 *                            sends n contig2 while the others send 2n MPI_INT
 *   recv-<type>, send-<type> strided MPI_Type_vector resized to cover its holes, an MPI_INT resized to a
 *                            non-zero lower bound (datatypes in conformance.h): data lands in the typed slots only
 *   p2p                      point-to-point traffic around the call
 *   repeat                   1000 calls of one int, every result checked (world)
 *   large-count              MPI_Allgather_c where the library has it (MPI >= 4)
 * Aliased buffers (sendbuf == recvbuf without MPI_IN_PLACE) are not tested: Open MPI 5.0 accepts them and returns
 * MPI_SUCCESS (MPICH 5.0 returns MPI_ERR_BUFFER), so there is no behaviour both MPIs agree on. */
#include "conformance.h"

static int val(int src, long j) { return src * 1000 + (int)j + 1; }

/* One allgather: this rank sends `scount` elements of kind `sk` and receives `rcount` of kind `rk` per rank. */
static void ag_case(MPI_Comm comm, const char *label, int sk, int scount, int rk, int rcount, int inplace) {
    int me, P;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    if (!cf_case("%s", label)) return;
    const long block = (long)rcount * cf_kind_ints[rk];  /* basic ints per rank */
    cf_buf send = cf_buf_new((long)scount * cf_kind_extent[sk] + 1);
    cf_buf recv = cf_buf_new((long)P * rcount * cf_kind_extent[rk] + 1);
    cf_buf want = cf_buf_new((long)P * rcount * cf_kind_extent[rk] + 1);
    for (long b = 0; b < (long)scount * cf_kind_ints[sk]; b++) cf_buf_ptr(&send)[cf_pos(sk, 0, b)] = val(me, b);
    for (int r = 0; r < P; r++)
        for (long b = 0; b < block; b++) {
            cf_buf_ptr(&want)[cf_pos(rk, (long)r * rcount, b)] = val(r, b);
            if (inplace && r == me) cf_buf_ptr(&recv)[cf_pos(rk, (long)r * rcount, b)] = val(r, b);
        }
    cf_check_rc("MPI_Allgather", MPI_Allgather(inplace ? MPI_IN_PLACE : cf_buf_ptr(&send), scount, cf_types[sk],
                                               cf_buf_ptr(&recv), rcount, cf_types[rk], comm));
    cf_check_buf(&recv, &want);
    cf_buf_free(&send), cf_buf_free(&recv), cf_buf_free(&want);
}

static void cases(MPI_Comm comm, const char *cn) {
    int me, P;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    char l[200];
    const int ns[3] = {0, 1, 5};
    for (int i = 0; i < 3; i++) {
        snprintf(l, sizeof l, "basic/n=%d/%s", ns[i], cn);
        ag_case(comm, l, K_INT, ns[i], K_INT, ns[i], 0);
        snprintf(l, sizeof l, "inplace/n=%d/%s", ns[i], cn);
        ag_case(comm, l, K_INT, ns[i], K_INT, ns[i], 1);
    }
    /* different but legal: contig2 x n on some ranks, 2n x MPI_INT on the others */
    snprintf(l, sizeof l, "mixed/last-rank-recv-contig2/%s", cn);
    ag_case(comm, l, K_INT, 6, me == P - 1 ? K_CONTIG2 : K_INT, me == P - 1 ? 3 : 6, 0);
    snprintf(l, sizeof l, "mixed/rank0-send-contig2/%s", cn);
    ag_case(comm, l, me == 0 ? K_CONTIG2 : K_INT, me == 0 ? 3 : 6, K_INT, 6, 0);
    snprintf(l, sizeof l, "mixed/last-rank-recv-contig2/inplace/%s", cn);
    ag_case(comm, l, K_INT, 6, me == P - 1 ? K_CONTIG2 : K_INT, me == P - 1 ? 3 : 6, 1);
    snprintf(l, sizeof l, "mixed/rank1-recv-vector/%s", cn);
    ag_case(comm, l, K_INT, 4, me == 1 ? K_VEC : K_INT, me == 1 ? 2 : 4, 0);
    /* strided and resized types on all ranks */
    snprintf(l, sizeof l, "recv-vector-resized/%s", cn);
    ag_case(comm, l, K_INT, 6, K_VEC, 3, 0);
    snprintf(l, sizeof l, "recv-vector-resized/inplace/%s", cn);
    ag_case(comm, l, K_INT, 6, K_VEC, 3, 1);
    snprintf(l, sizeof l, "send-vector-resized/%s", cn);
    ag_case(comm, l, K_VEC, 3, K_INT, 6, 0);
    snprintf(l, sizeof l, "both-vector-resized/%s", cn);
    ag_case(comm, l, K_VEC, 2, K_VEC, 2, 0);
    snprintf(l, sizeof l, "recv-resized-lb/%s", cn);
    ag_case(comm, l, K_INT, 3, K_RESLB, 3, 0);
    snprintf(l, sizeof l, "recv-resized-lb/inplace/%s", cn);
    ag_case(comm, l, K_INT, 3, K_RESLB, 3, 1);
    snprintf(l, sizeof l, "send-resized-lb/%s", cn);
    ag_case(comm, l, K_RESLB, 6, K_CONTIG2, 3, 0);

    /* point-to-point around the call */
    snprintf(l, sizeof l, "p2p/%s", cn);
    if (!cf_skipped(l)) {
        cf_p2p t;
        cf_p2p_before(&t, comm);
        ag_case(comm, l, K_INT, 2, K_INT, 2, 0);
        cf_p2p_after(&t);
    }
}

static void repeat(void) {
    if (!cf_case("repeat/1000x1-int")) return;
    const int P = cf_world_size, me = cf_world_rank;
    int *r = malloc(sizeof(int) * P);
    for (int it = 0; it < 1000; it++) {
        int x = me * 7 + it;
        MPI_Allgather(&x, 1, MPI_INT, r, 1, MPI_INT, MPI_COMM_WORLD);
        for (int k = 0; k < P; k++) cf_check_ll((long)it * P + k, r[k], k * 7 + it);
    }
    free(r);
}

static void large_count(void) {
#if MPI_VERSION >= 4
    if (!cf_case("large-count/MPI_Allgather_c")) return;
    const int P = cf_world_size, me = cf_world_rank;
    long long x[2] = {me, -me}, *r = malloc(sizeof(long long) * 2 * P);
    cf_check_rc("MPI_Allgather_c", MPI_Allgather_c(x, 2, MPI_LONG_LONG, r, 2, MPI_LONG_LONG, MPI_COMM_WORLD));
    for (int k = 0; k < P; k++) cf_check_ll(2 * k, r[2 * k], k), cf_check_ll(2 * k + 1, r[2 * k + 1], -k);
    free(r);
#endif
}

int main(int argc, char **argv) { return cf_run(&argc, &argv, "allgather", cases, repeat, large_count); }
