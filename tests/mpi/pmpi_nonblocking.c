/* An ordinary MPI program in C that knows nothing about collplan, for the non-blocking (MPI_Iallreduce, ...) and
 * MPI-4 persistent (MPI_Allreduce_init + MPI_Start) collectives. ctest runs it with libcollplan_pmpi.so in
 * LD_PRELOAD and a COLLPLAN_<COLLECTIVE> choice for each of the twelve collectives (cmake/mpi_runtime.cmake), and
 * requires COLLPLAN_STATS to show that collplan ran every non-blocking and every persistent one. Checked against a
 * serial computation: every collective, non-blocking and persistent (started three times with new data), with
 * contiguous and strided (holes untouched) datatypes; several collectives in flight on one communicator and on
 * three, completed in another order than started; arrays that mix them with point-to-point requests through
 * MPI_Waitall/any/some and MPI_Testall/any/some; MPI_Waitall on [a receive, a collective] whose message is sent
 * only after the collective completed on the sender, and a rank blocked in MPI_Recv / MPI_Probe / MPI_Sendrecv /
 * MPI_Ssend for such a message; MPI_Request_get_status and the status fields (count 0, not
 * cancelled, MPI_ERROR untouched, the same from every completion call; an inactive persistent request's empty
 * status as the library's own MPI_Scan_init's, which is never intercepted); MPI_Request_free of a completed and of
 * a running request; the errors MPI gives for a persistent request that is active (MPI_Start again,
 * MPI_Request_free), for MPI_Cancel and for MPI_Start on MPI_REQUEST_NULL; what the array calls answer around
 * collplan's requests (check_arrays: statuses, inactive persistent requests, MPI_UNDEFINED, MPI 4.1's
 * MPI_Request_get_status_any/all/some, an old handle used again). With PNB_THREADS=1 it initialises MPI_THREAD_MULTIPLE (COLLPLAN_PROGRESS=thread).
 * Prints "pmpi_nonblocking: all checks passed" on rank 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define HAVE_PERSISTENT 1
#else
#define HAVE_PERSISTENT 0
#endif

#define HOLE (-7)

static int failures = 0, P = 1, me = 0;

static void expect(int ok, const char *what, int mode, int n) {
    if (ok) return;
    fprintf(stderr, "pmpi_nonblocking: rank %d of %d: %s (%s, n %d) is wrong\n", me, P, what,
            mode ? "persistent" : "non-blocking", n);
    failures++;
}

static int val(int r, int i, int round) { return r * 10007 + i + 1 + round * 1000003; }
static int *ints(size_t n) {
    int *p = malloc(sizeof(int) * (n ? n : 1));
    for (size_t i = 0; i < n; i++) p[i] = HOLE;
    return p;
}

/* ------------------------------------------------------------------------------------------- one collective
 * start(): MPI_I<coll> (mode 0, a new request every round) or MPI_<Coll>_init once + MPI_Start (mode 1). */
typedef struct {
    int mode;
    MPI_Request req;
} Run;

static void finish(Run *r) {
    MPI_Status st;
    int rc = MPI_Wait(&r->req, &st);
    expect(rc == MPI_SUCCESS, "MPI_Wait's code", r->mode, 0);
    if (r->mode == 0) expect(r->req == MPI_REQUEST_NULL, "the handle after MPI_Wait", 0, 0);
}
static void done(Run *r) {
    if (r->mode == 1) MPI_Request_free(&r->req);
}

#if HAVE_PERSISTENT
#define START(run, icall, initcall)                                                                                     \
    do {                                                                                                               \
        if ((run)->mode == 0) icall;                                                                                   \
        else if (round == 0) initcall;                                                                                 \
        if ((run)->mode == 1) MPI_Start(&(run)->req);                                                                  \
    } while (0)
#else
#define START(run, icall, initcall) icall
#endif

/* Each check runs three rounds with new data; strided: the receive side is a vector of ints at stride 2. */
static void check_allreduce(MPI_Comm comm, int mode, int n, int in_place) {
    Run r = {mode, MPI_REQUEST_NULL};
    int *s = ints(n), *d = ints(n);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < n; i++) s[i] = val(me, i, round), d[i] = in_place ? s[i] : HOLE;
        const void *sb = in_place ? MPI_IN_PLACE : s;
        START(&r, MPI_Iallreduce(sb, d, n, MPI_INT, MPI_SUM, comm, &r.req),
              MPI_Allreduce_init(sb, d, n, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &r.req));
        finish(&r);
        int ok = 1;
        for (int i = 0; i < n; i++) {
            long long want = 0;
            for (int q = 0; q < P; q++) want += val(q, i, round);
            ok &= d[i] == (int)want;
        }
        expect(ok, in_place ? "allreduce in place" : "allreduce", mode, n);
    }
    done(&r);
    free(s), free(d);
}

static void check_allreduce_double(MPI_Comm comm, int mode, int n) {
    Run r = {mode, MPI_REQUEST_NULL};
    double *s = malloc(sizeof(double) * n), *d = malloc(sizeof(double) * n), *all = malloc(sizeof(double) * n * P);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < n; i++) s[i] = 1.0 / (me + i + 1 + round) + (me % 3 == 0 ? 1e8 : 0), d[i] = -1;
        START(&r, MPI_Iallreduce(s, d, n, MPI_DOUBLE, MPI_SUM, comm, &r.req),
              MPI_Allreduce_init(s, d, n, MPI_DOUBLE, MPI_SUM, comm, MPI_INFO_NULL, &r.req));
        finish(&r);
        MPI_Allgather(d, n, MPI_DOUBLE, all, n, MPI_DOUBLE, comm); /* every rank has the same bits */
        int ok = 1;
        for (int q = 0; q < P; q++) ok &= memcmp(all + (size_t)q * n, d, sizeof(double) * n) == 0;
        expect(ok, "allreduce of doubles: the same bits on every rank", mode, n);
    }
    done(&r);
    free(s), free(d), free(all);
}

static void check_reduce(MPI_Comm comm, int mode, int n, int root) {
    Run r = {mode, MPI_REQUEST_NULL};
    int *s = ints(n), *d = ints(n);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < n; i++) s[i] = val(me, i, round), d[i] = HOLE;
        START(&r, MPI_Ireduce(s, d, n, MPI_INT, MPI_SUM, root, comm, &r.req),
              MPI_Reduce_init(s, d, n, MPI_INT, MPI_SUM, root, comm, MPI_INFO_NULL, &r.req));
        finish(&r);
        int ok = 1;
        for (int i = 0; i < n; i++) {
            long long want = 0;
            for (int q = 0; q < P; q++) want += val(q, i, round);
            ok &= d[i] == (me == root ? (int)want : HOLE);
        }
        expect(ok, "reduce", mode, n);
    }
    done(&r);
    free(s), free(d);
}

static void check_reduce_scatter(MPI_Comm comm, int mode, int n, int block) {
    Run r = {mode, MPI_REQUEST_NULL};
    int *counts = malloc(sizeof(int) * P), total = 0, first = 0;
    for (int q = 0; q < P; q++) counts[q] = block ? n : (q * 7 + n) % 5, total += counts[q];
    for (int q = 0; q < me; q++) first += counts[q];
    int *s = ints(total), *d = ints(counts[me]);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < total; i++) s[i] = val(me, i, round);
        for (int i = 0; i < counts[me]; i++) d[i] = HOLE;
        if (block)
            START(&r, MPI_Ireduce_scatter_block(s, d, n, MPI_INT, MPI_SUM, comm, &r.req),
                  MPI_Reduce_scatter_block_init(s, d, n, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &r.req));
        else
            START(&r, MPI_Ireduce_scatter(s, d, counts, MPI_INT, MPI_SUM, comm, &r.req),
                  MPI_Reduce_scatter_init(s, d, counts, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &r.req));
        finish(&r);
        int ok = 1;
        for (int i = 0; i < counts[me]; i++) {
            long long want = 0;
            for (int q = 0; q < P; q++) want += val(q, first + i, round);
            ok &= d[i] == (int)want;
        }
        expect(ok, block ? "reduce_scatter_block" : "reduce_scatter", mode, n);
    }
    done(&r);
    free(s), free(d), free(counts);
}

/* allgather, alltoall, gather, scatter, bcast of n ints per block; strided: the receive type is a vector at
 * stride 2 (the holes between must stay HOLE). */
enum { AG, A2A, GATHER, SCATTER, BCAST };
static const char *bname[] = {"allgather", "alltoall", "gather", "scatter", "bcast"};

static void check_bytes(MPI_Comm comm, int mode, int what, int n, int root, int strided) {
    Run r = {mode, MPI_REQUEST_NULL};
    const int stride = strided ? 2 : 1, blocks = what == BCAST ? 1 : P;
    MPI_Datatype rt = MPI_INT;
    int rcount = n;
    if (strided && n > 0) {
        MPI_Datatype v;
        MPI_Type_vector(n, 1, 2, MPI_INT, &v);
        MPI_Type_create_resized(v, 0, (MPI_Aint)sizeof(int) * 2 * n, &rt);
        MPI_Type_free(&v);
        MPI_Type_commit(&rt);
        rcount = 1;
    }
    const size_t rlen = (size_t)blocks * n * stride;
    int *s = ints((size_t)P * n), *d = ints(rlen);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < P * n; i++) s[i] = val(me, i, round);
        for (size_t i = 0; i < rlen; i++) d[i] = HOLE;
        if (what == BCAST && me == root)
            for (int i = 0; i < n; i++) d[i * stride] = val(root, i, round);
        switch (what) {
            case AG:
                START(&r, MPI_Iallgather(s, n, MPI_INT, d, rcount, rt, comm, &r.req),
                      MPI_Allgather_init(s, n, MPI_INT, d, rcount, rt, comm, MPI_INFO_NULL, &r.req));
                break;
            case A2A:
                START(&r, MPI_Ialltoall(s, n, MPI_INT, d, rcount, rt, comm, &r.req),
                      MPI_Alltoall_init(s, n, MPI_INT, d, rcount, rt, comm, MPI_INFO_NULL, &r.req));
                break;
            case GATHER:
                START(&r, MPI_Igather(s, n, MPI_INT, d, rcount, rt, root, comm, &r.req),
                      MPI_Gather_init(s, n, MPI_INT, d, rcount, rt, root, comm, MPI_INFO_NULL, &r.req));
                break;
            case SCATTER:
                START(&r, MPI_Iscatter(s, n, MPI_INT, d, rcount, rt, root, comm, &r.req),
                      MPI_Scatter_init(s, n, MPI_INT, d, rcount, rt, root, comm, MPI_INFO_NULL, &r.req));
                break;
            default:
                START(&r, MPI_Ibcast(d, rcount, rt, root, comm, &r.req),
                      MPI_Bcast_init(d, rcount, rt, root, comm, MPI_INFO_NULL, &r.req));
        }
        finish(&r);
        int ok = 1;
        for (int j = 0; j < blocks; j++)
            for (int i = 0; i < n; i++) {
                int want = HOLE;
                if (what == AG) want = val(j, i, round);
                if (what == A2A) want = val(j, me * n + i, round);
                if (what == GATHER && me == root) want = val(j, i, round);
                if (what == SCATTER && j == 0) want = val(root, me * n + i, round);
                if (what == BCAST) want = val(root, i, round);
                ok &= d[((size_t)j * n + i) * stride] == want;
                if (stride == 2) ok &= d[((size_t)j * n + i) * 2 + 1] == HOLE;
            }
        expect(ok, bname[what], mode, n);
    }
    done(&r);
    if (rt != MPI_INT) MPI_Type_free(&rt);
    free(s), free(d);
}

static void check_vector(MPI_Comm comm, int mode, int n, int a2av) {
    Run r = {mode, MPI_REQUEST_NULL};
    int *sc = malloc(sizeof(int) * P), *sd = malloc(sizeof(int) * P), *rc = malloc(sizeof(int) * P),
        *rd = malloc(sizeof(int) * P), stot = 0, rtot = 0;
    /* alltoallv: rank q sends (q + j + n) % 4 ints to j; allgatherv: rank q has (q + n) % 3 ints. Receive blocks
     * in reverse order with a gap of one int before each. */
    for (int j = 0; j < P; j++) sc[j] = a2av ? (me + j + n) % 4 : (me + n) % 3, sd[j] = stot, stot += sc[j];
    for (int j = P - 1; j >= 0; j--) rc[j] = a2av ? (j + me + n) % 4 : (j + n) % 3, rd[j] = rtot + 1, rtot += rc[j] + 1;
    int *s = ints(stot), *d = ints(rtot);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < stot; i++) s[i] = val(me, i, round);
        for (int i = 0; i < rtot; i++) d[i] = HOLE;
        if (a2av)
            START(&r, MPI_Ialltoallv(s, sc, sd, MPI_INT, d, rc, rd, MPI_INT, comm, &r.req),
                  MPI_Alltoallv_init(s, sc, sd, MPI_INT, d, rc, rd, MPI_INT, comm, MPI_INFO_NULL, &r.req));
        else
            START(&r, MPI_Iallgatherv(s, sc[0], MPI_INT, d, rc, rd, MPI_INT, comm, &r.req),
                  MPI_Allgatherv_init(s, sc[0], MPI_INT, d, rc, rd, MPI_INT, comm, MPI_INFO_NULL, &r.req));
        finish(&r);
        int ok = 1;
        for (int j = 0; j < P; j++) {
            int first = 0; /* where rank j's block for me starts in its send buffer */
            if (a2av)
                for (int q = 0; q < me; q++) first += (j + q + n) % 4;
            for (int i = 0; i < rc[j]; i++) ok &= d[rd[j] + i] == val(j, first + i, round);
            ok &= d[rd[j] - 1] == HOLE;
        }
        expect(ok, a2av ? "alltoallv" : "allgatherv", mode, n);
    }
    done(&r);
    free(s), free(d), free(sc), free(sd), free(rc), free(rd);
}

static void check_barrier(MPI_Comm comm, int mode) {
    Run r = {mode, MPI_REQUEST_NULL};
    for (int round = 0; round < 3; round++) {
        START(&r, MPI_Ibarrier(comm, &r.req), MPI_Barrier_init(comm, MPI_INFO_NULL, &r.req));
        finish(&r);
    }
    done(&r);
}

static void check_all(MPI_Comm comm, int mode) {
    const int sizes[] = {0, 1, 5, 300};
    for (int k = 0; k < 4; k++) {
        int n = sizes[k];
        check_allreduce(comm, mode, n, 0);
        check_allreduce(comm, mode, n, 1);
        check_reduce(comm, mode, n, P - 1);
        check_reduce_scatter(comm, mode, n, 1);
        check_reduce_scatter(comm, mode, n, 0);
        for (int w = AG; w <= BCAST; w++) check_bytes(comm, mode, w, n, P / 2, k == 2);
        check_vector(comm, mode, n, 1);
        check_vector(comm, mode, n, 0);
    }
    check_allreduce_double(comm, mode, 77);
    check_barrier(comm, mode);
}

/* ---------------------------------------------------------------------------------------- several in flight */
static void check_in_flight(MPI_Comm comm, int mode) {
    MPI_Comm dup, half;
    MPI_Comm_dup(comm, &dup);
    MPI_Comm_split(comm, me % 2, me, &half);
    int hme, hP;
    MPI_Comm_rank(half, &hme);
    MPI_Comm_size(half, &hP);
    const int n = 40;
    int a[40], b[40], c[40], ar[40], br[40], g[40 * 8], x = me + 1, xr = 0;
    MPI_Request q[5];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < n; i++) a[i] = val(me, i, round), b[i] = 2 * val(me, i, round), ar[i] = br[i] = 0;
        for (int i = 0; i < n; i++) c[i] = me == 0 ? val(0, i, round) : HOLE;
        if (mode == 0 || round == 0) {
            if (mode == 0) {
                MPI_Iallreduce(a, ar, n, MPI_INT, MPI_SUM, comm, &q[0]);
                MPI_Iallreduce(b, br, n, MPI_INT, MPI_SUM, comm, &q[1]); /* same shape, in flight together */
                MPI_Ibcast(c, n, MPI_INT, 0, dup, &q[2]);
                MPI_Iallgather(a, 1, MPI_INT, g, 1, MPI_INT, half, &q[3]);
                MPI_Iallreduce(&x, &xr, 1, MPI_INT, MPI_SUM, half, &q[4]);
            }
#if HAVE_PERSISTENT
            else {
                MPI_Allreduce_init(a, ar, n, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &q[0]);
                MPI_Allreduce_init(b, br, n, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &q[1]);
                MPI_Bcast_init(c, n, MPI_INT, 0, dup, MPI_INFO_NULL, &q[2]);
                MPI_Allgather_init(a, 1, MPI_INT, g, 1, MPI_INT, half, MPI_INFO_NULL, &q[3]);
                MPI_Allreduce_init(&x, &xr, 1, MPI_INT, MPI_SUM, half, MPI_INFO_NULL, &q[4]);
            }
#endif
        }
        if (mode == 1) MPI_Startall(5, q);
        /* completed in another order than started: the last first, then the rest as they come */
        MPI_Wait(&q[4], MPI_STATUS_IGNORE);
        MPI_Wait(&q[2], MPI_STATUS_IGNORE);
        MPI_Request rest[3] = {q[3], q[1], q[0]};
        MPI_Waitall(3, rest, MPI_STATUSES_IGNORE);
        int ok = 1;
        for (int i = 0; i < n; i++) {
            long long wa = 0;
            for (int p = 0; p < P; p++) wa += val(p, i, round);
            ok &= ar[i] == (int)wa && br[i] == (int)(2 * wa) && c[i] == val(0, i, round);
        }
        for (int j = 0; j < hP; j++) ok &= g[j] == val(me % 2 + 2 * j, 0, round);
        long long wx = 0;
        for (int p = me % 2; p < P; p += 2) wx += p + 1;
        ok &= xr == (int)wx;
        expect(ok, "five collectives in flight on three communicators", mode, n);
    }
    if (mode == 1)
        for (int i = 0; i < 5; i++) MPI_Request_free(&q[i]);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&half);
    (void)hme;
}

/* ------------------------------------------------------------------------------ mixed with point-to-point */
static int left(void) { return (me + P - 1) % P; }
static int right(void) { return (me + 1) % P; }

/* MPI_Waitall on [a receive, a collective]: the message comes from the right neighbour only after its collective
 * completed -- this rank must keep advancing the collective while it waits for the receive. */
static void check_waitall_dependency(MPI_Comm comm) {
    if (P < 2) return;
    int x = me + 1, y = 0, got = -1;
    MPI_Request q[2];
    MPI_Irecv(&got, 1, MPI_INT, right(), 99, comm, &q[0]);
    MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm, &q[1]);
    if (me == 0) {
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    } else {
        MPI_Wait(&q[1], MPI_STATUS_IGNORE);
    }
    MPI_Send(&y, 1, MPI_INT, left(), 99, comm);
    if (me != 0) MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    expect(y == P * (P + 1) / 2 && got == y, "MPI_Waitall on [receive, allreduce] (message after the collective)", 0, 1);
}

/* A rank blocked in a point-to-point call (MPI_Recv, MPI_Probe + MPI_Recv, MPI_Sendrecv, MPI_Ssend) for a partner
 * that gets there only after its non-blocking collective completed: the blocked rank must keep doing its part of
 * the collective meanwhile, as MPI's own non-blocking collectives progress in every MPI call. (Needs a schedule
 * of more than one round: P = 4, 8 under recursive doubling, which ctest chooses for allreduce.) */
static void check_blocking_p2p(MPI_Comm comm) {
    static const char *names[] = {"MPI_Recv", "MPI_Probe + MPI_Recv", "MPI_Sendrecv", "MPI_Ssend"};
    /* the partner: rank P/2, which under recursive doubling (P a power of two) hears from rank 0 only in the last
     * round -- a message rank 0 posts only when it advances its part after the first round */
    const int peer = P / 2;
    if (P < 4 || (P & (P - 1))) return;
    for (int how = 0; how < 4; how++) {
        int x = me + 1, y = 0, got = -1, mine = 3000 + me, other = -1;
        MPI_Request r;
        MPI_Status st;
        MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm, &r);
        if (me == 0) {
            switch (how) {
                case 0: MPI_Recv(&got, 1, MPI_INT, peer, 77, comm, &st); break;
                case 1:
                    MPI_Probe(peer, 77, comm, &st);
                    MPI_Recv(&got, 1, MPI_INT, peer, 77, comm, &st);
                    break;
                case 2: MPI_Sendrecv(&mine, 1, MPI_INT, peer, 78, &got, 1, MPI_INT, peer, 77, comm, &st); break;
                default:
                    MPI_Ssend(&mine, 1, MPI_INT, peer, 78, comm);
                    MPI_Recv(&got, 1, MPI_INT, peer, 77, comm, &st);
            }
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            expect(got == 3000 + peer && st.MPI_SOURCE == peer && st.MPI_TAG == 77, names[how], 0, 0);
        } else {
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            if (me == peer) {
                if (how >= 2) MPI_Recv(&other, 1, MPI_INT, 0, 78, comm, MPI_STATUS_IGNORE);
                MPI_Send(&mine, 1, MPI_INT, 0, 77, comm);
                if (how >= 2) expect(other == 3000, names[how], 0, 1);
            }
        }
        expect(y == P * (P + 1) / 2, names[how], 0, 2);
    }
}

/* An array [collective, receive, collective, MPI_REQUEST_NULL, barrier] completed by one of the four calls. */
static void check_mixed(MPI_Comm comm, int how) {
    static const char *names[] = {"MPI_Waitany", "MPI_Waitsome", "MPI_Testany", "MPI_Testsome", "MPI_Testall"};
    int x = me + 1, y = 0, v[8], w[8], got = -1, mine = 1000 + me;
    MPI_Request q[5];
    MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm, &q[0]);
    MPI_Irecv(&got, 1, MPI_INT, left(), 7, comm, &q[1]);
    for (int i = 0; i < 8; i++) v[i] = val(me, i, how), w[i] = HOLE;
    MPI_Ialltoall(v, 8 / P ? 8 / P : 1, MPI_INT, w, 8 / P ? 8 / P : 1, MPI_INT, comm, &q[2]);
    q[3] = MPI_REQUEST_NULL;
    MPI_Ibarrier(comm, &q[4]);
    MPI_Send(&mine, 1, MPI_INT, right(), 7, comm);
    int seen[5] = {0, 0, 0, 0, 0}, left_ = 4, idx[5], count = 0, flag = 0;
    MPI_Status st[5];
    while (left_ > 0) {
        switch (how) {
            case 0:
                MPI_Waitany(5, q, &idx[0], &st[0]);
                count = idx[0] == MPI_UNDEFINED ? 0 : 1;
                break;
            case 1: MPI_Waitsome(5, q, &count, idx, st); break;
            case 2:
                MPI_Testany(5, q, &idx[0], &flag, &st[0]);
                count = flag && idx[0] != MPI_UNDEFINED ? 1 : 0;
                break;
            case 3: MPI_Testsome(5, q, &count, idx, st); break;
            default:
                MPI_Testall(5, q, &flag, st);
                count = 0;
                if (flag)
                    for (int i = 0; i < 5; i++) idx[count++] = i;
        }
        if (count == MPI_UNDEFINED) break;
        for (int k = 0; k < count; k++) {
            expect(idx[k] >= 0 && idx[k] < 5 && (idx[k] != 3 || how == 4) && !seen[idx[k]], names[how], 0, idx[k]);
            if (idx[k] >= 0 && idx[k] < 5) seen[idx[k]] = 1;
            if (idx[k] != 3) left_--;
            expect(q[idx[k]] == MPI_REQUEST_NULL, "a completed request's handle", 0, idx[k]);
        }
    }
    int ok = y == P * (P + 1) / 2 && got == 1000 + left();
    const int per = 8 / P ? 8 / P : 1;
    for (int j = 0; j < P && per * P <= 8; j++)
        for (int i = 0; i < per; i++) ok &= w[j * per + i] == val(j, me * per + i, how);
    expect(ok, names[how], 0, -1);
}

/* What the array calls answer around collplan's requests: the point-to-point entries' statuses (source, tag,
 * count) and handles as the library gives them; an inactive persistent request counts as inactive (MPI_UNDEFINED
 * from MPI_Waitany/Testany/Waitsome/Testsome on an array with nothing else active, flag 1 from MPI_Testall, the
 * empty status, the handle kept); a started persistent request keeps its handle; MPI 4.1's
 * MPI_Request_get_status_any/all/some return nothing. */
static void check_arrays(MPI_Comm comm) {
    int x = me + 1, y = 0, got = -1, mine = 2000 + me, idx[4], count = -5, flag = -5, index = -5;
    MPI_Status st[4], empty;
    MPI_Request q[4], none = MPI_REQUEST_NULL;
    MPI_Wait(&none, &empty);
    MPI_Irecv(&got, 1, MPI_INT, left(), 8, comm, &q[0]);
    MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm, &q[1]);
    q[2] = MPI_REQUEST_NULL, q[3] = MPI_REQUEST_NULL;
#if HAVE_PERSISTENT
    int py = 0;
    MPI_Allreduce_init(&x, &py, 1, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &q[2]);
    const MPI_Request pers = q[2];
#endif
    MPI_Send(&mine, 1, MPI_INT, right(), 8, comm);
    for (int i = 0; i < 4; i++) st[i].MPI_ERROR = 12345;
    int rc = MPI_Waitall(4, q, st);
    int n0 = -1, n1 = -1;
    MPI_Get_count(&st[0], MPI_INT, &n0);
    MPI_Get_count(&st[1], MPI_BYTE, &n1);
    expect(rc == MPI_SUCCESS && got == 2000 + left() && y == P * (P + 1) / 2, "MPI_Waitall [recv, Iallreduce, ...]", 0, 0);
    expect(st[0].MPI_SOURCE == left() && st[0].MPI_TAG == 8 && n0 == 1, "the receive's status beside a collective", 0, 0);
    expect(n1 == 0 && q[0] == MPI_REQUEST_NULL && q[1] == MPI_REQUEST_NULL, "the collective's status and handles", 0, 0);
#if HAVE_PERSISTENT
    expect(q[2] == pers && st[2].MPI_SOURCE == empty.MPI_SOURCE && st[2].MPI_TAG == empty.MPI_TAG,
           "an inactive persistent request in MPI_Waitall: kept, the empty status", 1, 0);
    /* nothing active but an inactive persistent request */
    q[0] = MPI_REQUEST_NULL, q[1] = pers;
    MPI_Waitany(2, q, &index, &st[0]);
    expect(index == MPI_UNDEFINED && q[1] == pers, "MPI_Waitany on [null, inactive]: MPI_UNDEFINED", 1, 0);
    index = -5;
    MPI_Testany(2, q, &index, &flag, &st[0]);
    expect(index == MPI_UNDEFINED && flag == 1, "MPI_Testany on [null, inactive]: flag 1, MPI_UNDEFINED", 1, 0);
    MPI_Waitsome(2, q, &count, idx, st);
    expect(count == MPI_UNDEFINED, "MPI_Waitsome on [null, inactive]: MPI_UNDEFINED", 1, 0);
    count = -5;
    MPI_Testsome(2, q, &count, idx, st);
    expect(count == MPI_UNDEFINED, "MPI_Testsome on [null, inactive]: MPI_UNDEFINED", 1, 0);
    flag = -5;
    MPI_Testall(2, q, &flag, st);
    expect(flag == 1 && q[1] == pers, "MPI_Testall on [null, inactive]: flag 1, kept", 1, 0);
    /* a started persistent request beside a receive, through MPI_Waitsome until both are back */
    for (int round = 0; round < 3; round++) {
        x = me + 1 + round, got = -1;
        MPI_Irecv(&got, 1, MPI_INT, left(), 9, comm, &q[0]);
        MPI_Start(&q[1]);
        MPI_Send(&mine, 1, MPI_INT, right(), 9, comm);
        int back = 0, seen[2] = {0, 0};
        while (back < 2) {
            MPI_Waitsome(2, q, &count, idx, st);
            expect(count >= 1 && count <= 2, "MPI_Waitsome's count", 1, count);
            for (int k = 0; k < count && count <= 2; k++) {
                expect(!seen[idx[k]], "MPI_Waitsome returns a request once", 1, idx[k]);
                seen[idx[k]] = 1, back++;
                if (idx[k] == 0) expect(st[k].MPI_SOURCE == left() && st[k].MPI_TAG == 9, "the receive's status", 1, k);
            }
        }
        expect(q[1] == pers && q[0] == MPI_REQUEST_NULL && py == P * (P + 1) / 2 + P * round && got == 2000 + left(),
               "persistent allreduce + receive through MPI_Waitsome", 1, round);
    }
#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
    /* MPI 4.1: the status without returning the request */
    MPI_Start(&q[1]);
    q[0] = MPI_REQUEST_NULL;
    flag = 0;
    while (!flag) MPI_Request_get_status_any(2, q, &index, &flag, &st[0]);
    expect(index == 1 && q[1] == pers, "MPI_Request_get_status_any", 1, index);
    flag = 0;
    while (!flag) MPI_Request_get_status_all(2, q, &flag, st);
    count = 0;
    while (count == 0) MPI_Request_get_status_some(2, q, &count, idx, st);
    expect(count == 1 && idx[0] == 1 && q[1] == pers, "MPI_Request_get_status_some", 1, count);
    MPI_Wait(&q[1], MPI_STATUS_IGNORE);
    count = 0;
    MPI_Request_get_status_some(2, q, &count, idx, st);
    expect(count == MPI_UNDEFINED, "MPI_Request_get_status_some with nothing active", 1, count);
#endif
    /* a handle of a completed non-blocking request, used again (erroneous): under collplan a clear error, no crash
     * -- while another collplan request exists (else the handle goes to the MPI library as any other). The MPI
     * libraries' own behaviour is undefined there (MPICH waits forever): only checked with the library preloaded. */
    const char *pre = getenv("LD_PRELOAD");
    if (!pre || !strstr(pre, "collplan")) {
        MPI_Request_free(&q[1]);
        return;
    }
    MPI_Request r;
    MPI_Ibarrier(comm, &r);
    const MPI_Request old = r;
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Request again = old;
    rc = MPI_Wait(&again, MPI_STATUS_IGNORE);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    expect(rc != MPI_SUCCESS && cls == MPI_ERR_REQUEST, "MPI_Wait on a completed collective's old handle: MPI_ERR_REQUEST", 0, 0);
    MPI_Request_free(&q[1]);
#endif
}

/* ------------------------------------------------------------------------------ statuses and errors */
/* The status of a completed collective request: MPI leaves MPI_SOURCE and MPI_TAG to the library, and the
 * libraries' own differ between collectives (MPICH's MPI_Iscan reports internal tags that change from call to
 * call; Open MPI's MPI_Ibarrier -2/-1, its MPI_Iscan 0/0): the count is 0, it is not cancelled, MPI_ERROR is left
 * as it was (as the MPI library's own MPI_Wait does), and every completion call reports the same as `ref` (the
 * first one seen). */
static void same_status(MPI_Status *a, MPI_Status *ref, const char *what, int mode) {
    int na = -1, ca = -1;
    MPI_Get_count(a, MPI_BYTE, &na);
    MPI_Test_cancelled(a, &ca);
    int ok = a->MPI_SOURCE == ref->MPI_SOURCE && a->MPI_TAG == ref->MPI_TAG && na == 0 && ca == 0 && a->MPI_ERROR == 12345;
    if (!ok)
        fprintf(stderr, "pmpi_nonblocking: rank %d: %s: source %d tag %d count %d cancelled %d error %d, first seen: %d %d\n",
                me, what, a->MPI_SOURCE, a->MPI_TAG, na, ca, a->MPI_ERROR, ref->MPI_SOURCE, ref->MPI_TAG);
    expect(ok, what, mode, 0);
}

static void check_status(MPI_Comm comm) {
    int x = me, y = 0, flag = 0;
    MPI_Request r;
    MPI_Status st, ref;
    st.MPI_ERROR = ref.MPI_ERROR = 12345;
    MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm, &r);
    while (!flag) MPI_Request_get_status(r, &flag, &ref);
    expect(r != MPI_REQUEST_NULL, "MPI_Request_get_status leaves the handle", 0, 0);
    same_status(&ref, &ref, "MPI_Request_get_status's status", 0);
    MPI_Wait(&r, &st);
    same_status(&st, &ref, "MPI_Wait's status", 0);
    expect(y == P * (P - 1) / 2, "allreduce after MPI_Request_get_status", 0, 1);
    /* MPI_Request_free of a completed (not yet waited) request */
    MPI_Ibarrier(comm, &r);
    flag = 0;
    while (!flag) MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
    int rc = MPI_Request_free(&r);
    expect(rc == MPI_SUCCESS && r == MPI_REQUEST_NULL, "MPI_Request_free of a completed request", 0, 0);
    /* MPI_Request_free of a running request: allowed for non-blocking ones; the run goes on in later calls (and
     * MPI_Finalize completes it) */
    static int fx = 1, fy = 0; /* not read again: the freed run may still write it */
    for (int k = 0; k < 20; k++) {
        MPI_Iallreduce(&fx, &fy, 1, MPI_INT, MPI_SUM, comm, &r);
        rc = MPI_Request_free(&r);
        expect(rc == MPI_SUCCESS && r == MPI_REQUEST_NULL, "MPI_Request_free of a running request", 0, k);
        MPI_Ibarrier(comm, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm, &r);
    MPI_Test(&r, &flag, &st);
    if (!flag) MPI_Wait(&r, &st);
    same_status(&st, &ref, "MPI_Test/MPI_Wait's status", 0);
#if HAVE_PERSISTENT
    MPI_Request pers, pnat;
    int z = 0;
    /* the reference: the library's own inactive persistent request, a receive's (MPICH 4.0's MPI_Wait on an inactive
     * persistent collective request never returns) */
    MPI_Recv_init(&z, 1, MPI_INT, 0, 0, MPI_COMM_SELF, &pnat);
    MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &pers);
    MPI_Status inact, inact_ref;
    inact.MPI_ERROR = inact_ref.MPI_ERROR = 12345;
    MPI_Wait(&pnat, &inact_ref); /* inactive: returns at once, the empty status */
    MPI_Wait(&pers, &inact);
    int n1 = -1, n2 = -2;
    MPI_Get_count(&inact, MPI_BYTE, &n1);
    MPI_Get_count(&inact_ref, MPI_BYTE, &n2);
    expect(inact.MPI_SOURCE == inact_ref.MPI_SOURCE && inact.MPI_TAG == inact_ref.MPI_TAG &&
           inact.MPI_ERROR == inact_ref.MPI_ERROR && n1 == n2,
           "MPI_Wait on an inactive persistent request: the empty status", 1, 0);
    expect(pers != MPI_REQUEST_NULL, "an inactive persistent request after MPI_Wait", 1, 0);
    MPI_Start(&pers);
    /* errors, as the library's own: MPI_ERR_REQUEST (the error handler is MPI_ERRORS_RETURN) */
    int cls = -1;
    rc = MPI_Start(&pers);
    MPI_Error_class(rc, &cls);
    expect(rc != MPI_SUCCESS && cls == MPI_ERR_REQUEST, "MPI_Start of an active persistent request: MPI_ERR_REQUEST", 1, 0);
    rc = MPI_Request_free(&pers);
    MPI_Error_class(rc, &cls);
    expect(rc != MPI_SUCCESS && cls == MPI_ERR_REQUEST && pers != MPI_REQUEST_NULL,
           "MPI_Request_free of an active persistent request: MPI_ERR_REQUEST", 1, 0);
    rc = MPI_Cancel(&pers);
    expect(rc != MPI_SUCCESS, "MPI_Cancel of a collective request is an error", 1, 0);
    MPI_Status pst;
    pst.MPI_ERROR = 12345;
    flag = 0;
    while (!flag) MPI_Request_get_status(pers, &flag, &pst);
    MPI_Wait(&pers, &st);
    same_status(&pst, &pst, "a persistent request's status", 1);
    same_status(&st, &pst, "a persistent request's status", 1);
    expect(y == P * (P - 1) / 2, "persistent allreduce after the errors", 1, 1);
    rc = MPI_Request_free(&pers);
    expect(rc == MPI_SUCCESS && pers == MPI_REQUEST_NULL, "MPI_Request_free of an inactive persistent request", 1, 0);
    rc = MPI_Start(&pers); /* MPI_REQUEST_NULL: the library's own error */
    expect(rc != MPI_SUCCESS, "MPI_Start of MPI_REQUEST_NULL is an error", 1, 0);
    MPI_Request_free(&pnat);
#endif
}

int main(int argc, char **argv) {
    const char *th = getenv("PNB_THREADS");
    if (th && *th == '1') {
        int provided = 0;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    } else {
        MPI_Init(&argc, &argv);
    }
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    check_all(MPI_COMM_WORLD, 0);
    check_in_flight(MPI_COMM_WORLD, 0);
    check_waitall_dependency(MPI_COMM_WORLD);
    check_blocking_p2p(MPI_COMM_WORLD);
    for (int how = 0; how < 5; how++) check_mixed(MPI_COMM_WORLD, how);
    check_arrays(MPI_COMM_WORLD);
    check_status(MPI_COMM_WORLD);
#if HAVE_PERSISTENT
    check_all(MPI_COMM_WORLD, 1);
    check_in_flight(MPI_COMM_WORLD, 1);
#endif
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) {
        if (all == 0) printf("pmpi_nonblocking: all checks passed\n");
        else printf("pmpi_nonblocking: %d checks failed\n", all);
        fflush(stdout);
    }
    MPI_Finalize();
    return all != 0;
}
