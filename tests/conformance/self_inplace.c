/* Conformance of the in-place versions of the collectives on MPI_COMM_SELF (P = 1 inside a larger job) and on a
 * duplicate of MPI_COMM_WORLD, blocking, non-blocking and persistent (tests/conformance/README.md): an ordinary MPI
 * program, nothing but MPI. With MPI_IN_PLACE the arguments MPI calls "ignored" carry nothing: alltoallv's
 * sendcounts, sdispls and sendtype may be NULL or point anywhere, and a library that reads them (a vector sized from
 * a garbage count) fails where MPI does not. Every int of every buffer is checked against a serial computation
 * (gaps, guards and the parts beyond a result untouched or, where the input lay in place, as MPI leaves them).
 * <mode>: blocking (the plain call), nb (MPI_I<coll> + MPI_Wait), pers (MPI_<Coll>_init, 3 MPI_Start + MPI_Wait
 * with new data -- the in-place input placed anew before each start -- and MPI_Request_free; HAVE_PERSISTENT).
 *   a2av/<mode>/<args>/<comm>   MPI_Alltoallv with MPI_IN_PLACE, counts 1 + (i + j) % 3 (symmetric; on self: 3),
 *                          receive blocks at 4 j + 1 (a gap before each); the ignored sendcounts and sdispls:
 *                            null      NULL and NULL, sendtype MPI_DATATYPE_NULL
 *                            garbage   arrays of garbage (-1000000007, INT_MAX, ...), sendtype MPI_INT
 *                            wild      (const int *)16 for both, an address no process maps (any read faults;
 *                                      neither MPI reads them), sendtype MPI_DATATYPE_NULL
 *                            wild-type the same, and a sendtype whose bytes are all 0x5a (no handle of either MPI:
 *                                      neither looks at it)
 *   <coll>/<mode>/<comm>   every other collective in place where MPI has an in-place form, count 3 (per rank):
 *                          allgather, alltoall, allgatherv (receive blocks with gaps), allreduce, reduce (root 0, in
 *                          place there), reduce_scatter_block, reduce_scatter (counts 3, 1, 0, 2, ...), gather (root
 *                          0, in place there), scatter (root 0, MPI_IN_PLACE as its receive buffer); the ignored
 *                          send count and type 0 and MPI_DATATYPE_NULL; bcast and barrier as they are
 * <comm>: self (MPI_COMM_SELF, on every rank at once) and dup (an MPI_Comm_dup of MPI_COMM_WORLD). */
#include "conformance.h"

#include <limits.h>

#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define HAVE_PERSISTENT 1
#else
#define HAVE_PERSISTENT 0
#endif

enum { MODE_BLOCKING, MODE_NB, MODE_PERS };
static const char *mode_name[] = {"blocking", "nb", "pers"};

enum { AG, A2A, A2AV, AR, BAR, BC, RED, RSB, RS, AGV, GA, SC, NCOLL };
static const char *coll_name[NCOLL] = {"allgather", "alltoall", "a2av", "allreduce", "barrier", "bcast", "reduce",
                                       "reduce_scatter_block", "reduce_scatter", "allgatherv", "gather", "scatter"};
enum { A_NULL, A_GARBAGE, A_WILD, A_WILD_TYPE, A_NONE };
static const char *args_name[] = {"null", "garbage", "wild", "wild-type", ""};

static int val(int src, int dst, long x, int round) { return 1 + src * 100003 + dst * 1009 + (int)x + round * 7919; }

typedef struct {
    int c, P, me, n, args;
    int *rc, *rd;                  /* receive counts and displacements (v-collectives, reduce_scatter) */
    const int *sc, *sd;            /* alltoallv's ignored send arguments */
    int *garbage[2];
    MPI_Datatype stype;            /* the ignored send type */
    cf_buf s, d, want, s0;         /* s: the send buffer where there is one (reduce at non-roots, scatter's root) */
    long tail_from;                /* receive buffer ints from here on: whatever MPI leaves (reduce-scatters) */
} call;

static int a2av_count(int i, int j) { return 1 + (i + j) % 3; }

static void fill(call *k, int round) {
    const int P = k->P, me = k->me, n = k->n;
    int *sp = cf_buf_ptr(&k->s), *dp = cf_buf_ptr(&k->d), *wp = cf_buf_ptr(&k->want);
    for (long i = 0; i < k->d.len; i++) k->d.mem[i] = k->want.mem[i] = CF_SENTINEL;
    for (long i = 0; i < k->s.len; i++) k->s.mem[i] = CF_SENTINEL;
    long long w;
    switch (k->c) {
    case AG:
    case GA:
        if (k->c == AG || me == 0)
            for (int j = 0; j < P; j++)
                for (int x = 0; x < n; x++) wp[j * n + x] = val(j, 0, x, round);
        if (k->c == AG || me == 0)
            for (int x = 0; x < n; x++) dp[me * n + x] = val(me, 0, x, round);
        else
            for (int x = 0; x < n; x++) sp[x] = val(me, 0, x, round);
        break;
    case A2A:
        for (int j = 0; j < P; j++)
            for (int x = 0; x < n; x++) dp[j * n + x] = val(me, j, x, round), wp[j * n + x] = val(j, me, x, round);
        break;
    case A2AV:
    case AGV:
        for (int j = 0; j < P; j++)
            for (int x = 0; x < k->rc[j]; x++) {
                wp[k->rd[j] + x] = k->c == A2AV ? val(j, me, x, round) : val(j, 0, x, round);
                if (k->c == A2AV) dp[k->rd[j] + x] = val(me, j, x, round);
            }
        if (k->c == AGV)
            for (int x = 0; x < k->rc[me]; x++) dp[k->rd[me] + x] = val(me, 0, x, round);
        break;
    case AR:
    case RED:
        for (int x = 0; x < n; x++) {
            w = 0;
            for (int q = 0; q < P; q++) w += val(q, 0, x, round);
            if (k->c == AR || me == 0) {
                dp[x] = val(me, 0, x, round), wp[x] = (int)w;
            } else {
                sp[x] = val(me, 0, x, round);  /* a non-root's receive buffer stays untouched */
            }
        }
        break;
    case RSB:
    case RS: {
        long total = 0, first = 0;
        for (int j = 0; j < P; j++) total += k->rc[j], first += j < me ? k->rc[j] : 0;
        for (long x = 0; x < total; x++) dp[x] = wp[x] = val(me, 0, x, round);
        for (int x = 0; x < k->rc[me]; x++) {
            w = 0;
            for (int q = 0; q < P; q++) w += val(q, 0, first + x, round);
            wp[x] = (int)w;
        }
        break;
    }
    case SC:
        if (me == 0)
            for (int j = 0; j < P; j++)
                for (int x = 0; x < n; x++) sp[j * n + x] = val(0, j, x, round);
        for (int x = 0; x < n; x++) wp[x] = val(0, me, x, round);
        if (me == 0)
            for (int x = 0; x < n; x++) wp[x] = CF_SENTINEL;  /* in place: the root's receive buffer is not used */
        break;
    case BC:
        for (int x = 0; x < n; x++) wp[x] = val(P - 1, 0, x, round);
        if (me == P - 1) memcpy(dp, wp, sizeof(int) * n);
        break;
    default: break;
    }
    memcpy(k->s0.mem, k->s.mem, sizeof(int) * k->s.len);
}

static int start(call *k, MPI_Comm comm, int mode, MPI_Request *q) {
    void *s = cf_buf_ptr(&k->s), *d = cf_buf_ptr(&k->d);
    const int n = k->n, root0 = k->me == 0;
    const MPI_Datatype st = k->stype;
    void *ip = MPI_IN_PLACE;
#if HAVE_PERSISTENT
#define CALL(b, i, p) return mode == MODE_BLOCKING ? (b) : mode == MODE_NB ? (i) : (p)
#else
#define CALL(b, i, p) return mode == MODE_BLOCKING ? (b) : (i)
#endif
    switch (k->c) {
    case AG: CALL(MPI_Allgather(ip, 0, st, d, n, MPI_INT, comm), MPI_Iallgather(ip, 0, st, d, n, MPI_INT, comm, q),
                  MPI_Allgather_init(ip, 0, st, d, n, MPI_INT, comm, MPI_INFO_NULL, q));
    case A2A: CALL(MPI_Alltoall(ip, 0, st, d, n, MPI_INT, comm), MPI_Ialltoall(ip, 0, st, d, n, MPI_INT, comm, q),
                   MPI_Alltoall_init(ip, 0, st, d, n, MPI_INT, comm, MPI_INFO_NULL, q));
    case A2AV: CALL(MPI_Alltoallv(ip, k->sc, k->sd, st, d, k->rc, k->rd, MPI_INT, comm),
                    MPI_Ialltoallv(ip, k->sc, k->sd, st, d, k->rc, k->rd, MPI_INT, comm, q),
                    MPI_Alltoallv_init(ip, k->sc, k->sd, st, d, k->rc, k->rd, MPI_INT, comm, MPI_INFO_NULL, q));
    case AGV: CALL(MPI_Allgatherv(ip, 0, st, d, k->rc, k->rd, MPI_INT, comm),
                   MPI_Iallgatherv(ip, 0, st, d, k->rc, k->rd, MPI_INT, comm, q),
                   MPI_Allgatherv_init(ip, 0, st, d, k->rc, k->rd, MPI_INT, comm, MPI_INFO_NULL, q));
    case AR: CALL(MPI_Allreduce(ip, d, n, MPI_INT, MPI_SUM, comm), MPI_Iallreduce(ip, d, n, MPI_INT, MPI_SUM, comm, q),
                  MPI_Allreduce_init(ip, d, n, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, q));
    case RED: {
        void *sb = root0 ? ip : s;
        CALL(MPI_Reduce(sb, d, n, MPI_INT, MPI_SUM, 0, comm), MPI_Ireduce(sb, d, n, MPI_INT, MPI_SUM, 0, comm, q),
             MPI_Reduce_init(sb, d, n, MPI_INT, MPI_SUM, 0, comm, MPI_INFO_NULL, q));
    }
    case RSB: CALL(MPI_Reduce_scatter_block(ip, d, n, MPI_INT, MPI_SUM, comm),
                   MPI_Ireduce_scatter_block(ip, d, n, MPI_INT, MPI_SUM, comm, q),
                   MPI_Reduce_scatter_block_init(ip, d, n, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, q));
    case RS: CALL(MPI_Reduce_scatter(ip, d, k->rc, MPI_INT, MPI_SUM, comm),
                  MPI_Ireduce_scatter(ip, d, k->rc, MPI_INT, MPI_SUM, comm, q),
                  MPI_Reduce_scatter_init(ip, d, k->rc, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, q));
    case GA: {
        void *sb = root0 ? ip : s;
        const int scount = root0 ? 0 : n;
        const MPI_Datatype stp = root0 ? st : MPI_INT;
        CALL(MPI_Gather(sb, scount, stp, d, n, MPI_INT, 0, comm),
             MPI_Igather(sb, scount, stp, d, n, MPI_INT, 0, comm, q),
             MPI_Gather_init(sb, scount, stp, d, n, MPI_INT, 0, comm, MPI_INFO_NULL, q));
    }
    case SC: {
        void *rb = root0 ? ip : d;
        const int rcount = root0 ? 0 : n;
        const MPI_Datatype rtp = root0 ? st : MPI_INT;
        CALL(MPI_Scatter(s, n, MPI_INT, rb, rcount, rtp, 0, comm),
             MPI_Iscatter(s, n, MPI_INT, rb, rcount, rtp, 0, comm, q),
             MPI_Scatter_init(s, n, MPI_INT, rb, rcount, rtp, 0, comm, MPI_INFO_NULL, q));
    }
    case BC: CALL(MPI_Bcast(d, n, MPI_INT, k->P - 1, comm), MPI_Ibcast(d, n, MPI_INT, k->P - 1, comm, q),
                  MPI_Bcast_init(d, n, MPI_INT, k->P - 1, comm, MPI_INFO_NULL, q));
    default: CALL(MPI_Barrier(comm), MPI_Ibarrier(comm, q), MPI_Barrier_init(comm, MPI_INFO_NULL, q));
    }
#undef CALL
}

static void check(call *k) {
    int *dp = cf_buf_ptr(&k->d), *wp = cf_buf_ptr(&k->want);
    for (long x = k->tail_from; x < k->d.len - 2 * CF_GUARD; x++) wp[x] = dp[x];
    cf_check_buf(&k->d, &k->want);
    cf_check_buf(&k->s, &k->s0);
}

static void one(MPI_Comm comm, const char *cn, int c, int mode, int args) {
    if (!cf_case("%s/%s%s%s/%s", coll_name[c], mode_name[mode], args == A_NONE ? "" : "/", args_name[args], cn))
        return;
    call k;
    memset(&k, 0, sizeof k);
    MPI_Comm_size(comm, &k.P);
    MPI_Comm_rank(comm, &k.me);
    const int P = k.P;
    k.c = c, k.n = 3, k.args = args, k.stype = MPI_DATATYPE_NULL;
    k.rc = malloc(sizeof(int) * P), k.rd = malloc(sizeof(int) * P);
    long rlen = 3L * P + 1, tail = rlen;
    for (int j = 0; j < P; j++) {
        switch (c) {
        case A2AV: k.rc[j] = P == 1 ? 3 : a2av_count(k.me, j), k.rd[j] = 4 * j + 1; break;
        case AGV: k.rc[j] = (j * 2 + 3) % 4, k.rd[j] = 4 * j + 1; break;
        case RS: k.rc[j] = (j * 5 + 3) % 4; break;
        default: k.rc[j] = 3; break;  /* reduce_scatter_block */
        }
    }
    if (c == A2AV || c == AGV) rlen = 4L * P + 1;
    if (c == RSB || c == RS) tail = k.rc[k.me];
    k.tail_from = tail;
    if (c == A2AV) {
        for (int i = 0; i < 2; i++) {
            k.garbage[i] = malloc(sizeof(int) * (P + 2));
            for (int j = 0; j < P + 2; j++) k.garbage[i][j] = j % 3 == 0 ? -1000000007 : j % 3 == 1 ? INT_MAX : -1;
        }
        switch (args) {
        case A_NULL: k.sc = k.sd = NULL; break;
        case A_GARBAGE: k.sc = k.garbage[0], k.sd = k.garbage[1], k.stype = MPI_INT; break;
        case A_WILD: k.sc = k.sd = (const int *)(uintptr_t)16; break;  /* unmapped: any read faults */
        default:  /* and a send type that is no datatype at all (0x5a bytes: no handle of either MPI) */
            k.sc = k.sd = (const int *)(uintptr_t)16;
            memset(&k.stype, 0x5a, sizeof k.stype);
            break;
        }
    }
    k.s = cf_buf_new(3L * P), k.s0 = cf_buf_new(3L * P), k.d = cf_buf_new(rlen), k.want = cf_buf_new(rlen);
    MPI_Request req = MPI_REQUEST_NULL;
    for (int round = 0; round < (mode == MODE_PERS ? 3 : 1); round++) {
        fill(&k, round);
        if (mode != MODE_PERS || round == 0) cf_check_rc("call", start(&k, comm, mode, &req));
        if (mode == MODE_PERS) cf_check_rc("MPI_Start", MPI_Start(&req));
        if (mode != MODE_BLOCKING) cf_check_rc("MPI_Wait", MPI_Wait(&req, MPI_STATUS_IGNORE));
        check(&k);
    }
    if (mode == MODE_PERS) cf_check_rc("MPI_Request_free", MPI_Request_free(&req));
    cf_buf_free(&k.s), cf_buf_free(&k.s0), cf_buf_free(&k.d), cf_buf_free(&k.want);
    free(k.rc), free(k.rd), free(k.garbage[0]), free(k.garbage[1]);
}

int main(int argc, char **argv) {
    cf_init(&argc, &argv, "self_inplace");
    MPI_Comm comms[2] = {MPI_COMM_SELF, cf_comm(CF_DUP)};
    const char *names[2] = {"self", "dup"};
    for (int cm = 0; cm < 2; cm++)
        for (int mode = MODE_BLOCKING; mode <= (HAVE_PERSISTENT ? MODE_PERS : MODE_NB); mode++)
            for (int c = 0; c < NCOLL; c++) {
                if (c != A2AV) {
                    one(comms[cm], names[cm], c, mode, A_NONE);
                    continue;
                }
                for (int a = A_NULL; a <= A_WILD_TYPE; a++) one(comms[cm], names[cm], c, mode, a);
            }
    cf_comm_free(&comms[1]);
    return cf_finish();
}
