/* collplan's collective latency benchmark, in the style of the standard MPI micro-benchmarks (OSU's
 * osu_allreduce & co.): an ordinary MPI program that knows nothing about collplan, so the same binary measures the
 * MPI library's collective (no preload), the PMPI library passing through (LD_PRELOAD, no COLLPLAN_* variable) and
 * the PMPI library running collplan's schedules (COLLPLAN_<COLLECTIVE> or COLLPLAN_WISDOM).
 *
 * Method (as those suites): for each size, `warmup` untimed calls, then `iters` timed calls, each one timed alone
 * with MPI_Wtime around the call and followed by an MPI_Barrier outside the timed region; a rank's latency is its
 * mean over the timed calls; the line reports the average over ranks (and with -f the minimum and maximum rank).
 *
 *   latency -c allreduce|allgather|alltoall|barrier [-m MIN:MAX] [-i ITERS] [-x WARMUP] [-f]
 *
 * Sizes are bytes: allreduce -- the vector (MPI_FLOAT elements), allgather -- per rank, alltoall -- per
 * destination; powers of two from MIN (default 4, allreduce) to MAX (default 1 MiB).
 * Output: "# Size  Avg Latency(us)" [+ "Min Latency(us)  Max Latency(us)  Iterations"]. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(const char *why) {
    fprintf(stderr, "latency: %s (usage: latency -c allreduce|allgather|alltoall|barrier [-m MIN:MAX] [-i ITERS] [-x WARMUP] [-f])\n", why);
    exit(2);
}

int main(int argc, char **argv) {
    const char *coll = "allreduce";
    long lo = 4, hi = 1 << 20, iters = 1000, warmup = 200;
    int full = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-c") && i + 1 < argc) coll = argv[++i];
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
    MPI_Init(&argc, &argv);
    int P, me;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const long maxbuf = (kind == 0 ? hi : hi * P) + 64;
    char *send = malloc(maxbuf), *recv = malloc(maxbuf);
    for (long i = 0; i < maxbuf; i++) send[i] = (char)(i % 7), recv[i] = 0;
    if (me == 0) {
        printf("# collplan latency: MPI_%c%s, %d ranks, %ld iterations, %ld warm-up\n", coll[0] - 32, coll + 1, P, iters, warmup);
        printf(full ? "%-10s%18s%18s%18s%12s\n" : "%-10s%18s\n", "# Size", "Avg Latency(us)", "Min Latency(us)", "Max Latency(us)", "Iterations");
    }
    for (long size = kind == 3 ? 0 : lo; size <= (kind == 3 ? 0 : hi); size = size ? size * 2 : 1) {
        if (kind == 0 && size % 4) continue;  /* whole floats */
        double timer = 0;
        for (long i = 0; i < warmup + iters; i++) {
            double t0 = MPI_Wtime();
            if (kind == 0) MPI_Allreduce(send, recv, (int)(size / 4), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            else if (kind == 1) MPI_Allgather(send, (int)size, MPI_CHAR, recv, (int)size, MPI_CHAR, MPI_COMM_WORLD);
            else if (kind == 2) MPI_Alltoall(send, (int)size, MPI_CHAR, recv, (int)size, MPI_CHAR, MPI_COMM_WORLD);
            else MPI_Barrier(MPI_COMM_WORLD);
            double t1 = MPI_Wtime();
            if (i >= warmup) timer += t1 - t0;
            MPI_Barrier(MPI_COMM_WORLD);
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
    MPI_Finalize();
    return 0;
}
