/* What ranks of one node share: k pairs of ranks streaming at once (k = 1 .. P/2), and local reductions and copies
 * with 1 .. P ranks busy at once -- the measurements the max-rate model (Gropp, Olson, Samfass, "Modeling MPI
 * communication performance on SMP nodes: is it time to retire the ping pong test", EuroMPI 2016) takes: one
 * pair's rate and the node's limit on what it injects and copies in total. An ordinary MPI program, so any MPI runs
 * it (bench/planner/README.md has the command and the recorded results).
 *
 *   concurrency [REPS]          (P even; pairs are (i, i + P/2), i < k; the others wait in a barrier)
 *
 * Streaming: the sender posts W back-to-back MPI_Isend of m bytes, the receiver W MPI_Irecv, then a 0-byte reply;
 * the time of one message is (round time) / W, the best of REPS rounds after one untimed round; every active pair
 * starts together after a barrier. Output, one line per (k, m): the pairs' mean time per message, the per-pair and
 * aggregate bandwidth, and the aggregate message rate. Local: MPI_Reduce_local(MPI_DOUBLE, MPI_SUM) and memcpy of
 * 1 MiB on r ranks at once (r = 1, 2, 4, .., P): per-rank and aggregate rates. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 16

static double stream(int me, int peer, int sender, char *buf, int m, int reps, MPI_Comm comm) {
    MPI_Request rq[W];
    double best = 1e30;
    for (int r = 0; r <= reps; r++) {
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        if (sender) {
            for (int i = 0; i < W; i++) MPI_Isend(buf + (size_t)i * m, m, MPI_BYTE, peer, 1, comm, &rq[i]);
            MPI_Waitall(W, rq, MPI_STATUSES_IGNORE);
            MPI_Recv(NULL, 0, MPI_BYTE, peer, 2, comm, MPI_STATUS_IGNORE);
        } else {
            for (int i = 0; i < W; i++) MPI_Irecv(buf + (size_t)i * m, m, MPI_BYTE, peer, 1, comm, &rq[i]);
            MPI_Waitall(W, rq, MPI_STATUSES_IGNORE);
            MPI_Send(NULL, 0, MPI_BYTE, peer, 2, comm);
        }
        double t = (MPI_Wtime() - t0) / W;
        if (r > 0 && t < best) best = t;
    }
    (void)me;
    return best;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int P, me, reps = argc > 1 ? atoi(argv[1]) : 20;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (P % 2) {
        if (!me) fprintf(stderr, "concurrency: P must be even (got %d)\n", P);
        MPI_Finalize();
        return 2;
    }
    const int sizes[] = {8, 1024, 8192, 65536, 262144, 1048576, 4194304};
    const int nsizes = sizeof sizes / sizeof *sizes;
    char *buf = malloc((size_t)W * 4194304);
    memset(buf, 1, (size_t)W * 4194304);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    if (!me) {
        printf("# %s", strtok(lib, "\n"));
        printf("\n# P = %d, pairs (i, i + P/2), streaming W = %d messages, best of %d rounds\n", P, W, reps);
        printf("# kind\tk\tbytes\tper_msg_us\tpair_GBps\taggregate_GBps\taggregate_Mmsgps\n");
    }
    int half = P / 2, ks[32], nk = 0;
    for (int k = 1; k < half; k *= 2) ks[nk++] = k;
    ks[nk++] = half;
    for (int ik = 0; ik < nk; ik++) {
        int k = ks[ik];
        for (int s = 0; s < nsizes; s++) {
            int m = sizes[s];
            int active = (me < k) || (me >= half && me - half < k);
            double t = 0;
            /* every rank joins the barriers inside stream(): inactive ones time an empty loop */
            if (active) t = stream(me, me < half ? me + half : me - half, me < half, buf, m, reps, MPI_COMM_WORLD);
            else
                for (int r = 0; r <= reps; r++) MPI_Barrier(MPI_COMM_WORLD);
            double sum = 0, mine = (active && me < half) ? t : 0;
            MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            if (!me) {
                double per = sum / k;
                printf("stream\t%d\t%d\t%.3f\t%.3f\t%.3f\t%.2f\n", k, m, per * 1e6, m / per / 1e9, k * m / per / 1e9,
                       k / per / 1e6);
            }
        }
    }
    /* local work with r ranks busy at once */
    const int n = 1 << 20;  /* 8 MiB of doubles: beyond the caches */
    double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) a[i] = b[i] = 1.0;
    int rs[32], nr = 0;
    for (int r = 1; r < P; r *= 2) rs[nr++] = r;
    rs[nr++] = P;
    for (int ir = 0; ir < nr; ir++) {
        int r = rs[ir];
        for (int kind = 0; kind < 2; kind++) {
            double best = 1e30;
            for (int rep = 0; rep <= reps; rep++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                if (me < r) {
                    if (kind == 0) MPI_Reduce_local(a, b, n, MPI_DOUBLE, MPI_SUM);
                    else memcpy(b, a, n * sizeof(double));
                }
                double t = MPI_Wtime() - t0;
                if (rep > 0 && t < best) best = t;
            }
            double sum = 0, mine = me < r ? best : 0;
            MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            if (!me) {
                double per = sum / r, bytes = n * sizeof(double);
                printf("%s\t%d\t%d\t%.3f\t%.3f\t%.3f\t-\n", kind == 0 ? "reduce_local" : "memcpy", r, (int)bytes,
                       per * 1e6, bytes / per / 1e9, r * bytes / per / 1e9);
            }
        }
    }
    free(a);
    free(b);
    free(buf);
    MPI_Finalize();
    return 0;
}
