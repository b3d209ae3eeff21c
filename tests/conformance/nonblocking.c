/* Conformance of the non-blocking (MPI_Iallreduce, ...) and MPI-4 persistent (MPI_Allreduce_init + MPI_Start)
 * versions of the twelve collectives the PMPI library replaces (tests/conformance/README.md): an ordinary MPI
 * program, nothing but MPI. The runner runs it with a choice for all twelve collectives at once (its
 * "nonblocking" sets) and counts the MPI_I<coll> and MPI_<Coll>_init calls for the share that ran collplan.
 *   one/<coll>/<mode>/<comm>/n<count>[/root<r>]   each collective alone, started and completed (mode nb:
 *                          MPI_I<coll> + MPI_Wait; pers: one MPI_<Coll>_init, three MPI_Start + MPI_Wait with new
 *                          data each time), against a serial computation; counts 0/1/5/1200, roots 0, P/2, P-1
 *                          (cf_roots), allgather and alltoall also in place and into a strided receive type
 *                          (holes untouched); p2p traffic pending around the whole call (cf_p2p)
 *   flight/<mode>/<comm>   all twelve started back to back on one communicator, completed in reverse order
 *                          (MPI_Wait on the last started first), then as an MPI_Waitall of the array reversed
 *   spread/<mode>          allreduce, bcast and allgather on world, a duplicate and the odd/even split started
 *                          interleaved, completed by MPI_Waitsome / MPI_Testany loops in another order
 *   repeat                 600 MPI_Iallreduce + MPI_Wait and 600 MPI_Start + MPI_Wait of one MPI_Allreduce_init
 * on world, a duplicate, the odd/even split, the reversed-key split and a periodic 2-D cartesian communicator. */
#include "conformance.h"

#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define HAVE_PERSISTENT 1
#else
#define HAVE_PERSISTENT 0
#endif

enum { AG, A2A, A2AV, AR, BAR, BC, RED, RSB, RS, AGV, GA, SC, NCOLL };
static const char *coll_name[NCOLL] = {"allgather", "alltoall", "alltoallv", "allreduce", "barrier", "bcast",
                                       "reduce", "reduce_scatter_block", "reduce_scatter", "allgatherv", "gather",
                                       "scatter"};

static int val(int r, long i, int round) { return r * 10007 + (int)i + 1 + round * 100003; }

/* One call of a collective: its buffers, what it must give, and how it starts. */
typedef struct {
    int c, n, root, P, me, in_place, strided;
    long slen;
    int *s, *d, *want;  /* d: the receive buffer (stride 2 when strided); want: what d must hold */
    long dlen;
    int *sc, *sd, *rc, *rd;  /* alltoallv / allgatherv / reduce_scatter counts (ints) */
    MPI_Datatype rt;
    int rcount;
    MPI_Request req;
} Call;

static void fill(Call *k, int round) {
    const int P = k->P, me = k->me, n = k->n;
    for (long i = 0; i < k->slen; i++) k->s[i] = val(me, i, round);
    for (long i = 0; i < k->dlen; i++) k->d[i] = k->want[i] = -7;
    const int st = k->strided ? 2 : 1;
    switch (k->c) {
    case AG:
        for (int j = 0; j < P; j++)
            for (int i = 0; i < n; i++) k->want[(j * n + i) * st] = val(j, i, round);
        if (k->in_place)
            for (int i = 0; i < n; i++) k->d[me * n + i] = val(me, i, round);
        break;
    case A2A:
        for (int j = 0; j < P; j++)
            for (int i = 0; i < n; i++) k->want[(j * n + i) * st] = val(j, me * n + i, round);
        if (k->in_place)
            for (int i = 0; i < P * n; i++) k->d[i] = val(me, i, round);
        break;
    case BC:
        for (int i = 0; i < n; i++) k->want[i] = val(k->root, i, round);
        if (me == k->root) memcpy(k->d, k->want, sizeof(int) * n);
        break;
    case GA:
        if (me == k->root)
            for (int j = 0; j < P; j++)
                for (int i = 0; i < n; i++) k->want[j * n + i] = val(j, i, round);
        break;
    case SC:
        for (int i = 0; i < n; i++) k->want[i] = val(k->root, me * n + i, round);
        break;
    case AR:
    case RED:
        for (int i = 0; i < n; i++) {
            long long w = 0;
            for (int q = 0; q < P; q++) w += val(q, i, round);
            if (k->c == AR || me == k->root) k->want[i] = (int)w;
        }
        if (k->in_place) memcpy(k->d, k->s, sizeof(int) * n);
        break;
    case RSB:
    case RS: {
        long first = 0;
        for (int q = 0; q < me; q++) first += k->rc[q];
        for (int i = 0; i < k->rc[me]; i++) {
            long long w = 0;
            for (int q = 0; q < P; q++) w += val(q, first + i, round);
            k->want[i] = (int)w;
        }
        break;
    }
    case A2AV:
    case AGV:
        for (int j = 0; j < P; j++) {
            long first = 0;
            if (k->c == A2AV)
                for (int q = 0; q < me; q++) first += (j + q + n) % 4;
            for (int i = 0; i < k->rc[j]; i++) k->want[k->rd[j] + i] = val(j, first + i, round);
        }
        break;
    default: break;
    }
}

static Call make(int c, MPI_Comm comm, int n, int root, int in_place, int strided) {
    Call k = {.c = c, .n = n, .root = root, .in_place = in_place, .strided = strided, .rt = MPI_INT, .rcount = n};
    MPI_Comm_size(comm, &k.P);
    MPI_Comm_rank(comm, &k.me);
    const int P = k.P;
    k.sc = calloc(P, sizeof(int)), k.sd = calloc(P, sizeof(int)), k.rc = calloc(P, sizeof(int)), k.rd = calloc(P, sizeof(int));
    long stot = 0, rtot = 0;
    for (int j = 0; j < P; j++) {
        k.sc[j] = c == A2AV ? (k.me + j + n) % 4 : c == AGV ? (k.me + n) % 3 : 0;
        k.sd[j] = (int)stot, stot += k.sc[j];
    }
    for (int j = P - 1; j >= 0; j--) {  /* reversed blocks with a gap before each */
        k.rc[j] = c == A2AV ? (j + k.me + n) % 4 : c == AGV ? (j + n) % 3 : c == RS ? (j * 7 + n) % 5 : n;
        k.rd[j] = (int)rtot + 1, rtot += k.rc[j] + 1;
    }
    if (strided && n > 0) {
        MPI_Datatype v;
        MPI_Type_vector(n, 1, 2, MPI_INT, &v);
        MPI_Type_create_resized(v, 0, (MPI_Aint)sizeof(int) * 2 * n, &k.rt);
        MPI_Type_free(&v);
        MPI_Type_commit(&k.rt);
        k.rcount = 1;
    }
    k.dlen = (long)P * n * (strided ? 2 : 1) + rtot + 8;
    long slen = (long)P * n, t = 0;
    for (int j = 0; j < P; j++) t += k.rc[j];
    if (t > slen) slen = t;
    if (stot > slen) slen = stot;
    k.slen = slen += 8;
    k.s = malloc(sizeof(int) * slen), k.d = malloc(sizeof(int) * k.dlen), k.want = malloc(sizeof(int) * k.dlen);
    return k;
}

static void unmake(Call *k) {
    if (k->rt != MPI_INT) MPI_Type_free(&k->rt);
    free(k->s), free(k->d), free(k->want), free(k->sc), free(k->sd), free(k->rc), free(k->rd);
}

/* MPI_I<coll> (pers = 0) or MPI_<Coll>_init (pers = 1) into k->req. */
static int start(Call *k, MPI_Comm comm, int pers) {
    const void *s = k->in_place ? MPI_IN_PLACE : k->s;
    void *d = k->d;
    const int n = k->n, r = k->root;
    MPI_Request *q = &k->req;
#if HAVE_PERSISTENT
#define NB(icall, pcall) return pers ? (pcall) : (icall)
#else
#define NB(icall, pcall) return (icall)
#endif
    switch (k->c) {
    case AG: NB(MPI_Iallgather(s, n, MPI_INT, d, k->rcount, k->rt, comm, q),
                MPI_Allgather_init(s, n, MPI_INT, d, k->rcount, k->rt, comm, MPI_INFO_NULL, q));
    case A2A: NB(MPI_Ialltoall(s, n, MPI_INT, d, k->rcount, k->rt, comm, q),
                 MPI_Alltoall_init(s, n, MPI_INT, d, k->rcount, k->rt, comm, MPI_INFO_NULL, q));
    case A2AV: NB(MPI_Ialltoallv(k->s, k->sc, k->sd, MPI_INT, d, k->rc, k->rd, MPI_INT, comm, q),
                  MPI_Alltoallv_init(k->s, k->sc, k->sd, MPI_INT, d, k->rc, k->rd, MPI_INT, comm, MPI_INFO_NULL, q));
    case AR: NB(MPI_Iallreduce(s, d, n, MPI_INT, MPI_SUM, comm, q),
                MPI_Allreduce_init(s, d, n, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, q));
    case BAR: NB(MPI_Ibarrier(comm, q), MPI_Barrier_init(comm, MPI_INFO_NULL, q));
    case BC: NB(MPI_Ibcast(d, n, MPI_INT, r, comm, q), MPI_Bcast_init(d, n, MPI_INT, r, comm, MPI_INFO_NULL, q));
    case RED: NB(MPI_Ireduce(s, d, n, MPI_INT, MPI_SUM, r, comm, q),
                 MPI_Reduce_init(s, d, n, MPI_INT, MPI_SUM, r, comm, MPI_INFO_NULL, q));
    case RSB: NB(MPI_Ireduce_scatter_block(k->s, d, n, MPI_INT, MPI_SUM, comm, q),
                 MPI_Reduce_scatter_block_init(k->s, d, n, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, q));
    case RS: NB(MPI_Ireduce_scatter(k->s, d, k->rc, MPI_INT, MPI_SUM, comm, q),
                MPI_Reduce_scatter_init(k->s, d, k->rc, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, q));
    case AGV: NB(MPI_Iallgatherv(k->s, k->sc[0], MPI_INT, d, k->rc, k->rd, MPI_INT, comm, q),
                 MPI_Allgatherv_init(k->s, k->sc[0], MPI_INT, d, k->rc, k->rd, MPI_INT, comm, MPI_INFO_NULL, q));
    case GA: NB(MPI_Igather(k->s, n, MPI_INT, d, n, MPI_INT, r, comm, q),
                MPI_Gather_init(k->s, n, MPI_INT, d, n, MPI_INT, r, comm, MPI_INFO_NULL, q));
    default: NB(MPI_Iscatter(k->s, n, MPI_INT, d, n, MPI_INT, r, comm, q),
                MPI_Scatter_init(k->s, n, MPI_INT, d, n, MPI_INT, r, comm, MPI_INFO_NULL, q));
    }
#undef NB
}

static void check(const Call *k) {
    for (long i = 0; i < k->dlen; i++) cf_check_ll(i, k->d[i], k->want[i]);
}

/* ---- one collective alone ------------------------------------------------------------------------------ */
static void one(MPI_Comm comm, const char *cn, int c, int pers, int n, int root, int in_place, int strided) {
    if (!cf_case("one/%s/%s/%s/n%d/root%d%s%s", coll_name[c], pers ? "pers" : "nb", cn, n, root,
                 in_place ? "/in-place" : "", strided ? "/strided" : ""))
        return;
    Call k = make(c, comm, n, root, in_place, strided);
    cf_p2p t;
    cf_p2p_before(&t, comm);
    for (int round = 0; round < (pers ? 3 : 1); round++) {
        fill(&k, round);
        if (!pers || round == 0) cf_check_rc("start", start(&k, comm, pers));
        if (pers) cf_check_rc("MPI_Start", MPI_Start(&k.req));
        cf_check_rc("MPI_Wait", MPI_Wait(&k.req, MPI_STATUS_IGNORE));
        check(&k);
    }
    if (pers) cf_check_rc("MPI_Request_free", MPI_Request_free(&k.req));
    cf_check_true(-1, k.req == MPI_REQUEST_NULL, "a live handle", "MPI_REQUEST_NULL");
    cf_p2p_after(&t);
    unmake(&k);
}

/* ---- all twelve in flight on one communicator ----------------------------------------------------------- */
static void flight(MPI_Comm comm, const char *cn, int pers) {
    if (!cf_case("flight/%s/%s", pers ? "pers" : "nb", cn)) return;
    int P;
    MPI_Comm_size(comm, &P);
    Call k[NCOLL];
    MPI_Request q[NCOLL];
    for (int c = 0; c < NCOLL; c++) k[c] = make(c, comm, 5, (c * 3) % P, 0, 0);
    for (int round = 0; round < 2; round++) {
        for (int c = 0; c < NCOLL; c++) fill(&k[c], round);
        for (int c = 0; c < NCOLL; c++) {
            if (!pers || round == 0) cf_check_rc("start", start(&k[c], comm, pers));
            if (pers) cf_check_rc("MPI_Start", MPI_Start(&k[c].req));
        }
        if (round == 0) {  /* the last started first */
            for (int c = NCOLL - 1; c >= 0; c--) cf_check_rc("MPI_Wait", MPI_Wait(&k[c].req, MPI_STATUS_IGNORE));
        } else {
            for (int c = 0; c < NCOLL; c++) q[c] = k[NCOLL - 1 - c].req;
            cf_check_rc("MPI_Waitall", MPI_Waitall(NCOLL, q, MPI_STATUSES_IGNORE));
            for (int c = 0; c < NCOLL; c++) k[NCOLL - 1 - c].req = q[c];
        }
        for (int c = 0; c < NCOLL; c++) check(&k[c]);
    }
    for (int c = 0; c < NCOLL; c++) {
        if (pers) MPI_Request_free(&k[c].req);
        unmake(&k[c]);
    }
}

/* ---- three communicators, interleaved ------------------------------------------------------------------- */
static void spread(int pers) {
    if (!cf_case("spread/%s", pers ? "pers" : "nb")) return;
    MPI_Comm comms[3] = {MPI_COMM_WORLD, cf_comm(CF_DUP), cf_comm(CF_SPLIT_ODD_EVEN)};
    const int colls[3] = {AR, BC, AG};
    Call k[9];
    MPI_Request q[9];
    for (int i = 0; i < 9; i++) k[i] = make(colls[i % 3], comms[i / 3], 7 + i, 0, 0, 0);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 9; i++) fill(&k[i], round);
        for (int j = 0; j < 3; j++)  /* interleaved: the first of each communicator, then the second, ... */
            for (int cm = 0; cm < 3; cm++) {
                Call *c = &k[cm * 3 + j];
                if (!pers || round == 0) cf_check_rc("start", start(c, comms[cm], pers));
                if (pers) cf_check_rc("MPI_Start", MPI_Start(&c->req));
            }
        for (int i = 0; i < 9; i++) q[i] = k[8 - i].req;
        int left = 9, idx[9], count = 0, flag = 0;
        while (left > 0) {
            if (round == 0) {
                cf_check_rc("MPI_Waitsome", MPI_Waitsome(9, q, &count, idx, MPI_STATUSES_IGNORE));
            } else {
                cf_check_rc("MPI_Testany", MPI_Testany(9, q, &idx[0], &flag, MPI_STATUS_IGNORE));
                if (flag && idx[0] == MPI_UNDEFINED) break;
                count = flag;
            }
            if (count == MPI_UNDEFINED) break;
            left -= count;
        }
        cf_check_ll(-1, left, 0);
        for (int i = 0; i < 9; i++) k[8 - i].req = q[i];
        for (int i = 0; i < 9; i++) check(&k[i]);
    }
    for (int i = 0; i < 9; i++) {
        if (pers) MPI_Request_free(&k[i].req);
        unmake(&k[i]);
    }
    cf_comm_free(&comms[1]), cf_comm_free(&comms[2]);
}

static void repeat(void) {
    if (!cf_case("repeat/600")) return;
    int x = cf_world_rank + 1, y = 0, bad = 0;
    MPI_Request r;
    for (int i = 0; i < 600; i++) {
        bad |= MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r) != MPI_SUCCESS;
        bad |= MPI_Wait(&r, MPI_STATUS_IGNORE) != MPI_SUCCESS;
        bad |= y != cf_world_size * (cf_world_size + 1) / 2;
    }
#if HAVE_PERSISTENT
    MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    for (int i = 0; i < 600; i++) {
        x = cf_world_rank + i;
        bad |= MPI_Start(&r) != MPI_SUCCESS || MPI_Wait(&r, MPI_STATUS_IGNORE) != MPI_SUCCESS;
        bad |= y != cf_world_size * (cf_world_size - 1) / 2 + cf_world_size * i;
    }
    MPI_Request_free(&r);
#endif
    cf_check_true(0, !bad, "a wrong result or error code", "every call right");
}

int main(int argc, char **argv) {
    cf_init(&argc, &argv, "nonblocking");
    static const int counts[] = {0, 1, 5, 1200};
    for (int cmk = CF_WORLD; cmk <= CF_CART_PERIODIC; cmk++) {
        MPI_Comm comm = cf_comm(cmk);
        const char *cn = cf_comm_names[cmk];
        int P, roots[3];
        MPI_Comm_size(comm, &P);
        const int nroots = cf_roots(P, roots);
        for (int pers = 0; pers <= HAVE_PERSISTENT; pers++) {
            for (int c = 0; c < NCOLL; c++) {
                const int rooted = c == BC || c == RED || c == GA || c == SC;
                for (int ni = 0; ni < (c == BAR ? 1 : 4); ni++)
                    for (int ri = 0; ri < (rooted && cmk == CF_WORLD ? nroots : 1); ri++)
                        one(comm, cn, c, pers, counts[ni], roots[ri], 0, 0);
                if (c == AG || c == A2A || c == AR) one(comm, cn, c, pers, 5, 0, 1, 0);
                if (c == AG || c == A2A) one(comm, cn, c, pers, 5, 0, 0, 1);
            }
            flight(comm, cn, pers);
        }
        cf_comm_free(&comm);
    }
    for (int pers = 0; pers <= HAVE_PERSISTENT; pers++) spread(pers);
    repeat();
    return cf_finish();
}
