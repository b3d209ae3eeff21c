/* One call of any of the twelve collectives the PMPI library replaces, for the programs that run many of them at
 * once (pers_order.c, stress.c; tests/conformance/README.md): its buffers, what it must give (a serial
 * computation), and how it starts -- as MPI_I<coll> or as MPI_<Coll>_init. Plain MPI_INT buffers, no derived
 * datatypes, no in place (the programs of one collective cover those).
 *
 * Rank r's send buffer holds cc_val(r, x, tag) at int x (every x); a call's `tag` changes the data (persistent
 * requests are started again with new data, the stress program gives every call its own). The receive buffer
 * starts as CC_SENTINEL everywhere; every int of it is checked, so the gaps between the blocks of the v-collectives
 * (their blocks lie in reverse rank order with a gap before each) and a non-root's buffer must stay untouched.
 * The counts of the v-collectives follow from `shape` and the ranks (the same on every rank): alltoallv sends
 * cc_count(shape, i, j) ints from rank i to rank j (zero for some pairs), allgatherv and reduce_scatter have
 * per-rank counts (zero for some). */
#ifndef COLLPLAN_CONFORMANCE_CALLS_H
#define COLLPLAN_CONFORMANCE_CALLS_H
#include "conformance.h"

#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define HAVE_PERSISTENT 1
#else
#define HAVE_PERSISTENT 0
#endif

enum { AG, A2A, A2AV, AR, BAR, BC, RED, RSB, RS, AGV, GA, SC, NCOLL };
static inline const char *cc_name(int c) {
    static const char *names[NCOLL] = {"allgather", "alltoall", "alltoallv", "allreduce", "barrier", "bcast",
                                       "reduce", "reduce_scatter_block", "reduce_scatter", "allgatherv", "gather",
                                       "scatter"};
    return names[c];
}
enum { CC_SENTINEL = -7 };

/* Rank r's int x for data `tag` (sums over 8 ranks stay far inside an int). */
static inline int cc_val(int r, long x, int tag) { return (tag % 200) * 1000003 + r * 10007 + (int)x + 1; }

/* Counts of the v-collectives: alltoallv i -> j (0..3), allgatherv and reduce_scatter rank j (i = -1; 0..3). */
static inline int cc_count(int shape, int i, int j) {
    unsigned x = (unsigned)shape * 2654435761u ^ (unsigned)(i + 7) * 40503u ^ (unsigned)(j + 3) * 2246822519u;
    x ^= x >> 13;
    x *= 3266489917u;
    x ^= x >> 16;
    return (int)(x % 4);
}

typedef struct {
    int c, n, root, shape, P, me, tag;
    long slen, dlen;
    int *s, *d, *want;
    int *sc, *sd, *rc, *rd;  /* alltoallv / allgatherv / reduce_scatter counts and displacements (ints) */
    MPI_Request req;
} cc_call;

/* A call of collective c on comm with count n (the v-collectives: counts from `shape`) at `root`. */
static inline cc_call cc_make(int c, MPI_Comm comm, int n, int root, int shape) {
    cc_call k;
    memset(&k, 0, sizeof k);
    k.c = c, k.n = n, k.root = root, k.shape = shape, k.req = MPI_REQUEST_NULL;
    MPI_Comm_size(comm, &k.P);
    MPI_Comm_rank(comm, &k.me);
    const int P = k.P, me = k.me;
    k.sc = calloc(P, sizeof(int)), k.sd = calloc(P, sizeof(int)), k.rc = calloc(P, sizeof(int));
    k.rd = calloc(P, sizeof(int));
    long stot = 0, rtot = 0;
    for (int j = 0; j < P; j++) {
        k.sc[j] = c == A2AV ? cc_count(shape, me, j) : c == AGV ? cc_count(shape, -1, me) : 0;
        k.sd[j] = (int)stot, stot += k.sc[j];
    }
    for (int j = P - 1; j >= 0; j--) {  /* blocks in reverse rank order, a gap of one int before each */
        k.rc[j] = c == A2AV ? cc_count(shape, j, me) : c == AGV || c == RS ? cc_count(shape, -1, j) : n;
        k.rd[j] = (int)rtot + 1, rtot += k.rc[j] + 1;
    }
    long rsum = 0;
    for (int j = 0; j < P; j++) rsum += k.rc[j];
    k.slen = (long)P * n;
    if (rsum > k.slen) k.slen = rsum;
    if (stot > k.slen) k.slen = stot;
    k.slen += 4;
    k.dlen = (long)P * n + rtot + 4;
    k.s = malloc(sizeof(int) * k.slen), k.d = malloc(sizeof(int) * k.dlen), k.want = malloc(sizeof(int) * k.dlen);
    return k;
}

static inline void cc_unmake(cc_call *k) {
    free(k->s), free(k->d), free(k->want), free(k->sc), free(k->sd), free(k->rc), free(k->rd);
    k->s = k->d = k->want = NULL;
}

static inline int cc_sum(int P, long x, int tag) {
    long long w = 0;
    for (int q = 0; q < P; q++) w += cc_val(q, x, tag);
    return (int)w;
}

/* New data (`tag`) into the send buffer, the receive buffer back to CC_SENTINEL, and what it must hold after. */
static inline void cc_fill(cc_call *k, int tag) {
    const int P = k->P, me = k->me, n = k->n;
    k->tag = tag;
    for (long x = 0; x < k->slen; x++) k->s[x] = cc_val(me, x, tag);
    for (long x = 0; x < k->dlen; x++) k->d[x] = k->want[x] = CC_SENTINEL;
    switch (k->c) {
    case AG:
        for (int j = 0; j < P; j++)
            for (int i = 0; i < n; i++) k->want[j * n + i] = cc_val(j, i, tag);
        break;
    case A2A:
        for (int j = 0; j < P; j++)
            for (int i = 0; i < n; i++) k->want[j * n + i] = cc_val(j, (long)me * n + i, tag);
        break;
    case A2AV:
        for (int j = 0; j < P; j++) {
            long first = 0;  /* where rank j's block for me starts in j's send buffer */
            for (int q = 0; q < me; q++) first += cc_count(k->shape, j, q);
            for (int i = 0; i < k->rc[j]; i++) k->want[k->rd[j] + i] = cc_val(j, first + i, tag);
        }
        break;
    case AGV:
        for (int j = 0; j < P; j++)
            for (int i = 0; i < k->rc[j]; i++) k->want[k->rd[j] + i] = cc_val(j, i, tag);
        break;
    case AR:
        for (int i = 0; i < n; i++) k->want[i] = cc_sum(P, i, tag);
        break;
    case RED:
        if (me == k->root)
            for (int i = 0; i < n; i++) k->want[i] = cc_sum(P, i, tag);
        break;
    case RSB:
        for (int i = 0; i < n; i++) k->want[i] = cc_sum(P, (long)me * n + i, tag);
        break;
    case RS: {
        long first = 0;
        for (int q = 0; q < me; q++) first += k->rc[q];
        for (int i = 0; i < k->rc[me]; i++) k->want[i] = cc_sum(P, first + i, tag);
        break;
    }
    case BC:
        for (int i = 0; i < n; i++) k->want[i] = cc_val(k->root, i, tag);
        if (me == k->root) memcpy(k->d, k->want, sizeof(int) * n);
        break;
    case GA:
        if (me == k->root)
            for (int j = 0; j < P; j++)
                for (int i = 0; i < n; i++) k->want[j * n + i] = cc_val(j, i, tag);
        break;
    case SC:
        for (int i = 0; i < n; i++) k->want[i] = cc_val(k->root, (long)me * n + i, tag);
        break;
    default: break;  /* barrier: nothing moves */
    }
}

/* MPI_I<coll> (pers = 0) or MPI_<Coll>_init (pers = 1) into k->req. */
static inline int cc_start(cc_call *k, MPI_Comm comm, int pers) {
    void *s = k->s, *d = k->d;
    const int n = k->n, r = k->root;
    MPI_Request *q = &k->req;
#if HAVE_PERSISTENT
#define CC_NB(icall, pcall) return pers ? (pcall) : (icall)
#else
#define CC_NB(icall, pcall) return (void)pers, (icall)
#endif
    switch (k->c) {
    case AG: CC_NB(MPI_Iallgather(s, n, MPI_INT, d, n, MPI_INT, comm, q),
                   MPI_Allgather_init(s, n, MPI_INT, d, n, MPI_INT, comm, MPI_INFO_NULL, q));
    case A2A: CC_NB(MPI_Ialltoall(s, n, MPI_INT, d, n, MPI_INT, comm, q),
                    MPI_Alltoall_init(s, n, MPI_INT, d, n, MPI_INT, comm, MPI_INFO_NULL, q));
    case A2AV: CC_NB(MPI_Ialltoallv(s, k->sc, k->sd, MPI_INT, d, k->rc, k->rd, MPI_INT, comm, q),
                     MPI_Alltoallv_init(s, k->sc, k->sd, MPI_INT, d, k->rc, k->rd, MPI_INT, comm, MPI_INFO_NULL, q));
    case AR: CC_NB(MPI_Iallreduce(s, d, n, MPI_INT, MPI_SUM, comm, q),
                   MPI_Allreduce_init(s, d, n, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, q));
    case BAR: CC_NB(MPI_Ibarrier(comm, q), MPI_Barrier_init(comm, MPI_INFO_NULL, q));
    case BC: CC_NB(MPI_Ibcast(d, n, MPI_INT, r, comm, q), MPI_Bcast_init(d, n, MPI_INT, r, comm, MPI_INFO_NULL, q));
    case RED: CC_NB(MPI_Ireduce(s, d, n, MPI_INT, MPI_SUM, r, comm, q),
                    MPI_Reduce_init(s, d, n, MPI_INT, MPI_SUM, r, comm, MPI_INFO_NULL, q));
    case RSB: CC_NB(MPI_Ireduce_scatter_block(s, d, n, MPI_INT, MPI_SUM, comm, q),
                    MPI_Reduce_scatter_block_init(s, d, n, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, q));
    case RS: CC_NB(MPI_Ireduce_scatter(s, d, k->rc, MPI_INT, MPI_SUM, comm, q),
                   MPI_Reduce_scatter_init(s, d, k->rc, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, q));
    case AGV: CC_NB(MPI_Iallgatherv(s, k->sc[0], MPI_INT, d, k->rc, k->rd, MPI_INT, comm, q),
                    MPI_Allgatherv_init(s, k->sc[0], MPI_INT, d, k->rc, k->rd, MPI_INT, comm, MPI_INFO_NULL, q));
    case GA: CC_NB(MPI_Igather(s, n, MPI_INT, d, n, MPI_INT, r, comm, q),
                   MPI_Gather_init(s, n, MPI_INT, d, n, MPI_INT, r, comm, MPI_INFO_NULL, q));
    default: CC_NB(MPI_Iscatter(s, n, MPI_INT, d, n, MPI_INT, r, comm, q),
                   MPI_Scatter_init(s, n, MPI_INT, d, n, MPI_INT, r, comm, MPI_INFO_NULL, q));
    }
#undef CC_NB
}

/* Every int of the receive buffer against what it must hold, and the send buffer unchanged. The failure index is
 * the int offset in the receive buffer (send buffer: -1 - offset). */
static inline void cc_check(const cc_call *k) {
    for (long x = 0; x < k->dlen; x++) cf_check_ll(x, k->d[x], k->want[x]);
    for (long x = 0; x < k->slen; x++) cf_check_ll(-1 - x, k->s[x], cc_val(k->me, x, k->tag));
}

#endif
