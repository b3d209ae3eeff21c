/* collplan's collective latency benchmark, in the style of the standard MPI micro-benchmarks (OSU's
 * osu_allreduce & co.): an ordinary MPI program that knows nothing about collplan, so the same binary measures the
 * MPI library's collective (no preload), the PMPI library passing through (LD_PRELOAD, no COLLPLAN_* variable) and
 * the PMPI library running collplan's schedules (COLLPLAN_<COLLECTIVE> or COLLPLAN_WISDOM).
 *
 * Method (as those suites): for each size, `warmup` untimed calls, then `iters` timed calls, each one timed alone
 * with MPI_Wtime around the call and followed by an MPI_Barrier outside the timed region; a rank's latency is its
 * mean over the timed calls; the line reports the average over ranks (and with -f the minimum and maximum rank).
 *
 *   latency -c allreduce|allgather|alltoall|barrier [-m MIN:MAX] [-i ITERS] [-x WARMUP] [-f] [-a ALG [-p isend|sendrecv]]
 *
 * -a times a hand-written version of an algorithm instead of the MPI call, with the point-to-point calls a
 * programmer would write (-p isend: MPI_Irecv + MPI_Isend + MPI_Waitall per step, as collplan's executor posts them;
 * -p sendrecv: one MPI_Sendrecv per step), on a duplicate of MPI_COMM_WORLD as collplan uses: the reference that
 * tells what the executor itself costs (bench/README.md, "executor overhead").
 *   allreduce: rd (recursive doubling, P a power of two), ring (reduce-scatter + allgather over P segments);
 *   allgather: ring; barrier: dissemination.
 *
 * Sizes are bytes: allreduce -- the vector (MPI_FLOAT elements), allgather -- per rank, alltoall -- per
 * destination; powers of two from MIN (default 4, allreduce) to MAX (default 1 MiB).
 * Output: "# Size  Avg Latency(us)" [+ "Min Latency(us)  Max Latency(us)  Iterations"]. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(const char *why) {
    fprintf(stderr, "latency: %s (usage: latency -c allreduce|allgather|alltoall|barrier [-m MIN:MAX] [-i ITERS] [-x WARMUP] [-f] "
                    "[-a rd|ring|dissemination [-p isend|sendrecv]])\n", why);
    exit(2);
}

/* ---- hand-written algorithms (-a) ---- */
static MPI_Comm hand_comm;
static int use_sendrecv;

static void exchange(const void *sb, int sbytes, int to, void *rb, int rbytes, int from) {
    if (use_sendrecv) {
        MPI_Sendrecv(sb, sbytes, MPI_BYTE, to, 0, rb, rbytes, MPI_BYTE, from, 0, hand_comm, MPI_STATUS_IGNORE);
        return;
    }
    MPI_Request q[2];
    MPI_Irecv(rb, rbytes, MPI_BYTE, from, 0, hand_comm, &q[0]);
    MPI_Isend(sb, sbytes, MPI_BYTE, to, 0, hand_comm, &q[1]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
}

static long seg(long i, long n, int P) { return i * n / P; }  /* first element of ring segment i */

static void allreduce_rd(const float *s, float *r, float *tmp, int n, int P, int me) {
    memcpy(r, s, (size_t)n * 4);
    for (int mask = 1; mask < P; mask <<= 1) {
        exchange(r, n * 4, me ^ mask, tmp, n * 4, me ^ mask);
        MPI_Reduce_local(tmp, r, n, MPI_FLOAT, MPI_SUM);
    }
}

static void allreduce_ring(const float *s, float *r, float *tmp, int n, int P, int me) {
    memcpy(r, s, (size_t)n * 4);
    const int right = (me + 1) % P, left = (me - 1 + P) % P;
    for (int k = 0; k < P - 1; k++) {  /* reduce-scatter: segment me-k goes right, me-k-1 comes from the left */
        const long out = (me - k + P) % P, in = (me - k - 1 + P) % P;
        const int in_n = (int)(seg(in + 1, n, P) - seg(in, n, P));
        exchange(r + seg(out, n, P), (int)(seg(out + 1, n, P) - seg(out, n, P)) * 4, right, tmp, in_n * 4, left);
        MPI_Reduce_local(tmp, r + seg(in, n, P), in_n, MPI_FLOAT, MPI_SUM);
    }
    for (int k = 0; k < P - 1; k++) {  /* allgather of the reduced segments */
        const long out = (me + 1 - k + P) % P, in = (me - k + P) % P;
        exchange(r + seg(out, n, P), (int)(seg(out + 1, n, P) - seg(out, n, P)) * 4, right, r + seg(in, n, P),
                 (int)(seg(in + 1, n, P) - seg(in, n, P)) * 4, left);
    }
}

static void allgather_ring(const char *s, char *r, long bytes, int P, int me) {
    memcpy(r + (long)me * bytes, s, (size_t)bytes);
    const int right = (me + 1) % P, left = (me - 1 + P) % P;
    for (int k = 0; k < P - 1; k++) {
        const long out = (me - k + P) % P, in = (me - k - 1 + P) % P;
        exchange(r + out * bytes, (int)bytes, right, r + in * bytes, (int)bytes, left);
    }
}

static void barrier_dissemination(int P, int me) {
    char dummy = 0;
    for (int d = 1; d < P; d <<= 1) exchange(&dummy, 0, (me + d) % P, &dummy, 0, (me - d + P) % P);
}

int main(int argc, char **argv) {
    const char *coll = "allreduce";
    long lo = 4, hi = 1 << 20, iters = 1000, warmup = 200;
    int full = 0;
    const char *alg = NULL, *p2p = "isend";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-c") && i + 1 < argc) coll = argv[++i];
        else if (!strcmp(argv[i], "-a") && i + 1 < argc) alg = argv[++i];
        else if (!strcmp(argv[i], "-p") && i + 1 < argc) p2p = argv[++i];
        else if (!strcmp(argv[i], "-m") && i + 1 < argc) {
            if (sscanf(argv[++i], "%ld:%ld", &lo, &hi) != 2 || lo < 0 || hi < lo) usage("-m wants MIN:MAX with 0 <= MIN <= MAX");
        } else if (!strcmp(argv[i], "-i") && i + 1 < argc) iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "-x") && i + 1 < argc) warmup = atol(argv[++i]);
        else if (!strcmp(argv[i], "-f")) full = 1;
        else usage("unknown argument");
    }
    if (iters < 1 || warmup < 0) usage("-i wants >= 1 and -x >= 0");
    int kind = !strcmp(coll, "allreduce") ? 0 : !strcmp(coll, "allgather") ? 1 : !strcmp(coll, "alltoall") ? 2 : !strcmp(coll, "barrier") ? 3 : -1;
    if (kind < 0) usage("unknown collective");
    /* hand: 0 = the MPI call, 1 = allreduce rd, 2 = allreduce ring, 3 = allgather ring, 4 = barrier dissemination */
    int hand = 0;
    if (alg) {
        hand = kind == 0 && !strcmp(alg, "rd") ? 1 : kind == 0 && !strcmp(alg, "ring") ? 2 : kind == 1 && !strcmp(alg, "ring") ? 3
             : kind == 3 && !strcmp(alg, "dissemination") ? 4 : -1;
        if (hand < 0) usage("-a wants rd or ring (allreduce), ring (allgather), dissemination (barrier)");
    }
    if (strcmp(p2p, "isend") && strcmp(p2p, "sendrecv")) usage("-p wants isend or sendrecv");
    use_sendrecv = !strcmp(p2p, "sendrecv");
    MPI_Init(&argc, &argv);
    int P, me;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_dup(MPI_COMM_WORLD, &hand_comm);
    if (hand == 1 && (P & (P - 1))) {
        if (me == 0) fprintf(stderr, "latency: -a rd needs P a power of two, not %d\n", P);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const long maxbuf = (kind == 0 ? hi : hi * P) + 64;
    char *send = malloc(maxbuf), *recv = malloc(maxbuf), *tmp = malloc(maxbuf);
    for (long i = 0; i < maxbuf; i++) send[i] = (char)(i % 7), recv[i] = 0;
    if (kind == 0)
        for (long i = 0; i < maxbuf / 4; i++) ((float *)send)[i] = (float)((i + me) % 5);
    if (me == 0) {
        if (hand) printf("# collplan latency: hand-written %s %s (-p %s), %d ranks, %ld iterations, %ld warm-up\n", coll, alg, p2p, P, iters, warmup);
        else printf("# collplan latency: MPI_%c%s, %d ranks, %ld iterations, %ld warm-up\n", coll[0] - 32, coll + 1, P, iters, warmup);
        printf(full ? "%-10s%18s%18s%18s%12s\n" : "%-10s%18s\n", "# Size", "Avg Latency(us)", "Min Latency(us)", "Max Latency(us)", "Iterations");
    }
    for (long size = kind == 3 ? 0 : lo; size <= (kind == 3 ? 0 : hi); size = size ? size * 2 : 1) {
        if (kind == 0 && size % 4) continue;  /* whole floats */
        double timer = 0;
        for (long i = 0; i < warmup + iters; i++) {
            double t0 = MPI_Wtime();
            if (hand == 1) allreduce_rd((const float *)send, (float *)recv, (float *)tmp, (int)(size / 4), P, me);
            else if (hand == 2) allreduce_ring((const float *)send, (float *)recv, (float *)tmp, (int)(size / 4), P, me);
            else if (hand == 3) allgather_ring(send, recv, size, P, me);
            else if (hand == 4) barrier_dissemination(P, me);
            else if (kind == 0) MPI_Allreduce(send, recv, (int)(size / 4), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            else if (kind == 1) MPI_Allgather(send, (int)size, MPI_CHAR, recv, (int)size, MPI_CHAR, MPI_COMM_WORLD);
            else if (kind == 2) MPI_Alltoall(send, (int)size, MPI_CHAR, recv, (int)size, MPI_CHAR, MPI_COMM_WORLD);
            else MPI_Barrier(MPI_COMM_WORLD);
            double t1 = MPI_Wtime();
            if (i >= warmup) timer += t1 - t0;
            MPI_Barrier(MPI_COMM_WORLD);
        }
        if (hand && kind != 3) {  /* the hand-written version must compute what the MPI call does (small integers: exact sums) */
            char *ref = malloc(maxbuf);
            if (kind == 0) MPI_Allreduce(send, ref, (int)(size / 4), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            else MPI_Allgather(send, (int)size, MPI_CHAR, ref, (int)size, MPI_CHAR, MPI_COMM_WORLD);
            if (memcmp(ref, recv, (size_t)(kind == 0 ? size : size * P))) {
                fprintf(stderr, "latency: hand-written %s %s differs from MPI's at %ld bytes on rank %d\n", coll, alg, size, me);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            free(ref);
        }
        double lat = timer * 1e6 / (double)iters, mn = 0, mx = 0, sum = 0;
        MPI_Reduce(&lat, &mn, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
        MPI_Reduce(&lat, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(&lat, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (me == 0) {
            if (full) printf("%-10ld%18.2f%18.2f%18.2f%12ld\n", size, sum / P, mn, mx, iters);
            else printf("%-10ld%18.2f\n", size, sum / P);
            fflush(stdout);
        }
        if (kind == 3) break;
    }
    free(send);
    free(recv);
    free(tmp);
    MPI_Comm_free(&hand_comm);
    MPI_Finalize();
    return 0;
}
