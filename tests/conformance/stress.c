/* A seeded, reproducible randomized stress test of the non-blocking collectives (tests/conformance/README.md): an
 * ordinary MPI program, nothing but MPI. Every rank draws the same pseudo-random sequence (a private 64-bit LCG,
 * not rand(): the same on every libc) from the seed -- argv[1], else CONFORMANCE_SEED, else 20261127 -- and so
 * makes the same decisions, step by step:
 *   - start an operation (while fewer than 10 are in flight and fewer than N have started; N = argv[2], else
 *     CONFORMANCE_STRESS_OPS, else 300): one of the twelve non-blocking collectives (MPI_Iallgather ...
 *     MPI_Iscatter, calls.h) on one of four MPI_Comm_dup's of MPI_COMM_WORLD -- counts 0..6 or, one in 12,
 *     1024..2047 ints per block (beyond the eager limits: their progress needs both sides), v-collective counts
 *     0..3 per rank or pair with a gap before each receive block, any root -- or, one draw in 8, a point-to-point
 *     message of 0..4 ints (one in 8: 2048..4095) between two random ranks on one of the four or on
 *     MPI_COMM_WORLD, tag 1000 + its number, received from the sender's rank or MPI_ANY_SOURCE; the receive is
 *     posted at once, the send at once or (a "late" message, one in 2) in the step that completes it;
 *   - or complete a random subset of the operations in flight with one of MPI_Wait (each in turn), an MPI_Test
 *     loop (each), MPI_Waitall, an MPI_Testall loop, MPI_Waitany / MPI_Testany / MPI_Waitsome / MPI_Testsome
 *     loops until all of the subset are done, or an MPI_Request_get_status loop (then MPI_Wait to free it);
 *     ranks that are not part of a message pass MPI_REQUEST_NULL in its place. Each rank takes the subset in its
 *     own order (rotated by its rank, reversed on odd ranks): rank 0 may wait for one collective while rank 1
 *     waits for another, which MPI completes as long as every rank has started both. The late messages of the
 *     subset are sent at the start of the step but the first one: its sender sends it only after completing the
 *     rest of the subset, so its receiver may sit in MPI_Wait (or a test loop) for it while the sender waits for
 *     collectives that need the receiver -- MPI's progress rule completes them meanwhile;
 *   - or (one completion draw in 10) one MPI_Waitany over all collectives in flight, in the rank's own order: each
 *     rank completes one, but not necessarily the same one -- from then on the ranks hold different collectives
 *     in flight (as many, so the decisions stay the same), and later subsets (drawn by position) differ too.
 * The messages in flight are the same on every rank at every step (a second list), so no late send can wait for
 * another. Whatever the order of completion, the program is correct MPI: every collective is started in one order
 * on all ranks and every message is sent before or while its receiver waits. Every result is checked against a
 * serial computation when its operation completes (calls.h: every int of the receive buffer, send buffers
 * unchanged); a failure names the operation -- op<number>/<collective>/dup<i>/n<count>/root<r> or
 * op<number>/p2p/<src>-><dst>/<comm>[/late] -- and the seed. Cases (CONFORMANCE_TRACE): block<k>/seed<S>, one per
 * 50 operations started, and drain/seed<S> for the completion of the last ones. */
#include "calls.h"

enum { NDUPS = 4, MAX_FLIGHT = 10, P2P = NCOLL };

static unsigned long long lcg_state;
static unsigned rnd(unsigned n) {  /* 0..n-1 */
    lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)((lcg_state >> 33) % n);
}

typedef struct {
    int kind, id, comm_i;
    cc_call call;                   /* collectives */
    int src, dst, n, any_source;    /* p2p */
    int late;                       /* the send is posted in the step that completes the message */
    MPI_Comm comm;
    int *buf;
    MPI_Request req[2];             /* a collective: req[0]; a message: the send and/or the receive of this rank */
    char name[96];
} op;

static int p2p_val(int src, long x, int id) { return 7 + src * 100003 + (int)x + id * 13; }

/* The name of the failures that follow, without a trace line (the trace shows the blocks). */
static void name_checks(const char *name) {
    snprintf(cf_case_name, sizeof cf_case_name, "%s", name);
    cf_case_failed = 0;
}

static void check(op *o, unsigned long long seed) {
    char name[160];
    snprintf(name, sizeof name, "%s/seed%llu", o->name, seed);
    name_checks(name);
    if (o->kind != P2P) {
        cc_check(&o->call);
        cc_unmake(&o->call);
        return;
    }
    const int me = cf_world_rank;
    if (me == o->dst)
        for (int x = 0; x < o->n; x++) cf_check_ll(x, o->buf[x], p2p_val(o->src, x, o->id));
    if (me == o->src)  /* the send half of the buffer */
        for (int x = 0; x < o->n; x++) cf_check_ll(-1 - x, o->buf[o->n + 4 + x], p2p_val(o->src, x, o->id));
    free(o->buf);
}

enum { C_WAIT, C_TEST, C_WAITALL, C_TESTALL, C_WAITANY, C_TESTANY, C_WAITSOME, C_TESTSOME, C_GET_STATUS,
       C_WAITANY_ONE, NCOMPL };
static const char *compl_name[NCOMPL] = {"MPI_Wait", "MPI_Test", "MPI_Waitall", "MPI_Testall", "MPI_Waitany",
                                         "MPI_Testany", "MPI_Waitsome", "MPI_Testsome", "MPI_Request_get_status",
                                         "MPI_Waitany (one)"};

static void rc_ok(int how, int rc) {
    if (rc != MPI_SUCCESS) cf_check_rc(compl_name[how], rc);  /* a check only when it fails: loops vary in length */
}

/* Completes the n requests q[] (MPI_REQUEST_NULL allowed) with method `how`. */
static void complete(int how, MPI_Request *q, int n) {
    int flag = 0, idx = 0, count = 0, idxs[2 * MAX_FLIGHT];
    switch (how) {
    case C_WAIT:
        for (int i = 0; i < n; i++) rc_ok(how, MPI_Wait(&q[i], MPI_STATUS_IGNORE));
        break;
    case C_TEST:
        for (int i = 0; i < n; i++)
            for (flag = 0; !flag;) rc_ok(how, MPI_Test(&q[i], &flag, MPI_STATUS_IGNORE));
        break;
    case C_WAITALL: rc_ok(how, MPI_Waitall(n, q, MPI_STATUSES_IGNORE)); break;
    case C_TESTALL:
        for (flag = 0; !flag;) rc_ok(how, MPI_Testall(n, q, &flag, MPI_STATUSES_IGNORE));
        break;
    case C_WAITANY:
        for (idx = 0; idx != MPI_UNDEFINED;) rc_ok(how, MPI_Waitany(n, q, &idx, MPI_STATUS_IGNORE));
        break;
    case C_TESTANY:
        for (flag = 0, idx = 0; !(flag && idx == MPI_UNDEFINED);)
            rc_ok(how, MPI_Testany(n, q, &idx, &flag, MPI_STATUS_IGNORE));
        break;
    case C_WAITSOME:
        for (count = 0; count != MPI_UNDEFINED;) rc_ok(how, MPI_Waitsome(n, q, &count, idxs, MPI_STATUSES_IGNORE));
        break;
    case C_TESTSOME:
        for (count = 0; count != MPI_UNDEFINED;) rc_ok(how, MPI_Testsome(n, q, &count, idxs, MPI_STATUSES_IGNORE));
        break;
    default:
        for (int i = 0; i < n; i++) {
            for (flag = 0; !flag;) rc_ok(how, MPI_Request_get_status(q[i], &flag, MPI_STATUS_IGNORE));
            rc_ok(how, MPI_Wait(&q[i], MPI_STATUS_IGNORE));  /* frees it */
        }
        break;
    }
    for (int i = 0; i < n; i++)
        cf_check_true(i, q[i] == MPI_REQUEST_NULL, "a live request after completion", "MPI_REQUEST_NULL");
}

static void send(op *o) {
    cf_check_rc("MPI_Isend", MPI_Isend(o->buf + o->n + 4, o->n, MPI_INT, o->dst, 1000 + o->id, o->comm, &o->req[1]));
}

static void start(op *o, int id, MPI_Comm *dups) {
    const int P = cf_world_size, me = cf_world_rank;
    memset(o, 0, sizeof *o);
    o->id = id;
    o->req[0] = o->req[1] = MPI_REQUEST_NULL;
    o->kind = rnd(8) == 0 ? P2P : (int)rnd(NCOLL);
    if (o->kind == P2P) {
        o->comm_i = (int)rnd(NDUPS + 1);  /* NDUPS: MPI_COMM_WORLD */
        o->src = (int)rnd(P);
        o->dst = P == 1 ? 0 : (o->src + 1 + (int)rnd(P - 1)) % P;
        o->n = rnd(8) == 0 ? 2048 + (int)rnd(2048) : (int)rnd(5);  /* large ones beyond the eager limits */
        o->any_source = (int)rnd(2);
        o->late = (int)rnd(2) && o->src != o->dst;  /* a late message to oneself would wait for itself */
        snprintf(o->name, sizeof o->name, "op%d/p2p/%d->%d/%s%s", id, o->src, o->dst,
                 o->comm_i == NDUPS ? "world" : "dup", o->late ? "/late" : "");
        MPI_Comm comm = o->comm = o->comm_i == NDUPS ? MPI_COMM_WORLD : dups[o->comm_i];
        o->buf = malloc(sizeof(int) * (2 * o->n + 8));  /* receive: [0, n + 4), send: [n + 4, 2 n + 4) */
        for (int x = 0; x < 2 * o->n + 8; x++) o->buf[x] = CC_SENTINEL;
        const int tag = 1000 + id;
        if (me == o->dst)
            cf_check_rc("MPI_Irecv", MPI_Irecv(o->buf, o->n, MPI_INT, o->any_source ? MPI_ANY_SOURCE : o->src, tag,
                                               comm, &o->req[0]));
        if (me == o->src) {
            for (int x = 0; x < o->n; x++) o->buf[o->n + 4 + x] = p2p_val(me, x, id);
            if (!o->late) send(o);
        }
        return;
    }
    o->comm_i = (int)rnd(NDUPS);
    const int n = rnd(12) == 0 ? 1024 + (int)rnd(1024) : (int)rnd(7), root = (int)rnd(P);
    snprintf(o->name, sizeof o->name, "op%d/%s/dup%d/n%d/root%d", id, cc_name(o->kind), o->comm_i, n, root);
    o->call = cc_make(o->kind, dups[o->comm_i], n, root, id);
    cc_fill(&o->call, id);
    cf_check_rc("MPI_I<coll>", cc_start(&o->call, dups[o->comm_i], 0));
    o->req[0] = o->call.req;
}

int main(int argc, char **argv) {
    cf_init(&argc, &argv, "stress");
    const char *s = argc > 1 ? argv[1] : getenv("CONFORMANCE_SEED");
    const char *nops_text = argc > 2 ? argv[2] : getenv("CONFORMANCE_STRESS_OPS");
    const unsigned long long seed = s && *s ? strtoull(s, NULL, 10) : 20261127ull;
    const int nops = nops_text && *nops_text ? atoi(nops_text) : 300;
    lcg_state = seed * 0x9E3779B97F4A7C15ull + 1;
    MPI_Comm dups[NDUPS];
    for (int i = 0; i < NDUPS; i++) MPI_Comm_dup(MPI_COMM_WORLD, &dups[i]);
    /* The collectives and the messages in flight, in two lists: the ranks may complete different collectives in
     * a C_WAITANY_ONE step (each the one that finished first), but always as many, and the same messages. */
    op coll[MAX_FLIGHT], msg[MAX_FLIGHT];
    int ncoll = 0, nmsg = 0, started = 0, block = -1, drained = 0;
#define AT(i) ((i) < ncoll ? &coll[i] : &msg[(i) - ncoll])
    while (started < nops || ncoll + nmsg > 0) {
        const int inflight = ncoll + nmsg;
        if (started < nops && inflight < MAX_FLIGHT && (inflight == 0 || rnd(3) != 0)) {
            if (started / 50 != block) block = started / 50, cf_case("block%d/seed%llu", block, seed);
            op o;
            start(&o, started++, dups);
            if (o.kind == P2P)
                msg[nmsg++] = o;
            else
                coll[ncoll++] = o;
            continue;
        }
        if (started == nops && !drained) drained = 1, cf_case("drain/seed%llu", seed);
        const int how = (int)rnd(NCOMPL);
        if (how == C_WAITANY_ONE && ncoll > 0) {
            /* one MPI_Waitany over every collective in flight, in this rank's order: one completes, maybe another
             * one on each rank -- from now on the ranks hold different collectives in flight */
            MPI_Request q[MAX_FLIGHT];
            int idx = MPI_UNDEFINED;
            for (int i = 0; i < ncoll; i++) q[i] = coll[(i + cf_world_rank) % ncoll].req[0];
            rc_ok(how, MPI_Waitany(ncoll, q, &idx, MPI_STATUS_IGNORE));
            if (!cf_check_true(-1, idx >= 0 && idx < ncoll, "MPI_UNDEFINED", "one collective completed")) continue;
            const int done = (idx + cf_world_rank) % ncoll;
            check(&coll[done], seed);
            for (int i = done; i + 1 < ncoll; i++) coll[i] = coll[i + 1];
            ncoll--;
            continue;
        }
        /* complete a subset: one op for the one-at-a-time methods sometimes, else each op with probability 1/2 */
        int pick[MAX_FLIGHT], npick = 0;
        const int first = (int)rnd(inflight);
        for (int i = 0; i < inflight; i++)
            if (i == first || rnd(2)) pick[npick++] = i;
        /* the late messages of the subset: all but the first are sent now; the first one's sender sends it only
         * after it has completed the rest of the subset, while its receiver may be waiting for it already */
        op *deferred = NULL;
        for (int i = 0; i < npick; i++) {
            op *o = AT(pick[i]);
            if (o->kind != P2P || !o->late) continue;
            if (!deferred)
                deferred = o;
            else if (cf_world_rank == o->src)
                send(o);
        }
        /* each rank in its own order: rotated by its rank, reversed on odd ranks (a rank that only advances the
         * request it waits for deadlocks with a rank that waits for another one first) */
        MPI_Request q[2 * MAX_FLIGHT];
        int nq = 0;
        for (int i = 0; i < npick; i++) {
            const int r = (i + cf_world_rank) % npick, j = cf_world_rank % 2 ? npick - 1 - r : r;
            q[nq++] = AT(pick[j])->req[0];
            if (AT(pick[j])->kind == P2P) q[nq++] = AT(pick[j])->req[1];
        }
        complete(how == C_WAITANY_ONE ? C_WAITANY : how, q, nq);
        if (deferred && cf_world_rank == deferred->src) {
            send(deferred);
            rc_ok(C_WAIT, MPI_Wait(&deferred->req[1], MPI_STATUS_IGNORE));
        }
        for (int i = 0; i < npick; i++) check(AT(pick[i]), seed);
        /* drop the completed ones, keeping the order of the others */
        int kc = 0, km = 0;
        for (int i = 0, p = 0; i < inflight; i++) {
            if (p < npick && pick[p] == i) {
                p++;
                continue;
            }
            if (i < ncoll)
                coll[kc++] = coll[i];
            else
                msg[km++] = msg[i - ncoll];
        }
        ncoll = kc, nmsg = km;
    }
#undef AT
    for (int i = 0; i < NDUPS; i++) MPI_Comm_free(&dups[i]);
    return cf_finish();
}
