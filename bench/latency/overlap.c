/* Overlap of non-blocking collectives with computation, measured as the OSU micro-benchmarks' non-blocking tests do
 * (osu_iallreduce & co.): an ordinary MPI program that knows nothing about collplan, so the same binary measures the
 * MPI library's own MPI_I<collective> (no preload) and collplan's schedule (LD_PRELOAD=libcollplan_pmpi.so with
 * COLLPLAN_<COLLECTIVE>).
 *
 * Method, per size (OSU's): `warmup` untimed, then `iters` timed calls of MPI_I<coll> + MPI_Wait, each followed by
 * an MPI_Barrier outside the timed region: the pure communication time (a rank's mean). Then the same with a
 * computation of that length between the start and the wait -- a busy loop that calls no MPI function, or with
 * -t N, N pieces with an MPI_Test after each (OSU's --num_test_calls) -- the overall time and the computation's
 * own. Overlap(%) = max(0, 100 - (overall - compute) / pure * 100): 100 when the collective completes entirely
 * behind the computation, 0 when none of it does. Every figure is the average over the ranks. As an extra
 * column, the blocking MPI_<coll> of the same size timed the same way (the pure time's reference).
 *
 *   overlap -c allreduce|allgather|alltoall|bcast|barrier [-m MIN:MAX] [-i ITERS] [-x WARMUP]  [-t TESTS] [-M] [-T]
 *
 * -T: MPI_Init_thread(MPI_THREAD_MULTIPLE) (what COLLPLAN_PROGRESS=thread needs).
 * -M: a rank's median over the timed calls instead of OSU's mean (on a shared machine a preempted call weighs
 * a mean down by milliseconds).
 *
 * Sizes in bytes, powers of two: allreduce -- the vector (MPI_FLOAT), allgather -- per rank, alltoall -- per
 * destination, bcast -- the message (root 0).
 * Output: "# Size  Overall(us)  Compute(us)  Pure Comm.(us)  Overlap(%)  Blocking(us)". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ALLREDUCE, ALLGATHER, ALLTOALL, BCAST, BARRIER };
static int coll = ALLREDUCE, P = 1, me = 0, tests = 0;
static char *sbuf, *rbuf;

static void usage(const char *why) {
    fprintf(stderr, "overlap: %s (usage: overlap -c allreduce|allgather|alltoall|bcast|barrier [-m MIN:MAX] [-i ITERS] "
                    "[-x WARMUP] [-t TESTS] [-M] [-T])\n", why);
    exit(2);
}

static void start(int bytes, MPI_Request *r) {
    switch (coll) {
        case ALLREDUCE: MPI_Iallreduce(sbuf, rbuf, bytes / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, r); break;
        case ALLGATHER: MPI_Iallgather(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE, MPI_COMM_WORLD, r); break;
        case ALLTOALL: MPI_Ialltoall(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE, MPI_COMM_WORLD, r); break;
        case BCAST: MPI_Ibcast(rbuf, bytes, MPI_BYTE, 0, MPI_COMM_WORLD, r); break;
        default: MPI_Ibarrier(MPI_COMM_WORLD, r);
    }
}

static void blocking(int bytes) {
    switch (coll) {
        case ALLREDUCE: MPI_Allreduce(sbuf, rbuf, bytes / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
        case ALLGATHER: MPI_Allgather(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE, MPI_COMM_WORLD); break;
        case ALLTOALL: MPI_Alltoall(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE, MPI_COMM_WORLD); break;
        case BCAST: MPI_Bcast(rbuf, bytes, MPI_BYTE, 0, MPI_COMM_WORLD); break;
        default: MPI_Barrier(MPI_COMM_WORLD);
    }
}

/* Busy computation of `secs` seconds that calls no MPI function but MPI_Wtime (and MPI_Test with -t). */
static volatile double sink;
static void compute(double secs, MPI_Request *r) {
    const int pieces = tests > 0 ? tests : 1;
    for (int p = 0; p < pieces; p++) {
        const double t0 = MPI_Wtime(), len = secs / pieces;
        double x = 1.0;
        while (MPI_Wtime() - t0 < len)
            for (int k = 0; k < 64; k++) x = x * 1.0000001 + 1e-9;
        sink = x;
        if (tests > 0) {
            int flag;
            MPI_Test(r, &flag, MPI_STATUS_IGNORE);
        }
    }
}

static double mean_over_ranks(double x) {
    double sum = 0;
    MPI_Reduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    return sum / P;
}

static int by_value(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
/* A rank's figure over the timed calls: the mean (OSU's), or with -M the median (a shared machine's preempted
 * calls do not count). */
static int use_median = 0;
static double typical(double *t, int n) {
    if (!use_median) {
        double s = 0;
        for (int i = 0; i < n; i++) s += t[i];
        return s / n;
    }
    qsort(t, (size_t)n, sizeof(double), by_value);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

/* One size: the pure time, then overall and compute with a computation as long as the pure time, then the
 * blocking call. */
static void measure(int bytes, int iters, int warmup, double *t1, double *t2) {
    MPI_Request r;
    for (int i = 0; i < warmup + iters; i++) {
        const double t0 = MPI_Wtime();
        start(bytes, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (i >= warmup) t1[i - warmup] = MPI_Wtime() - t0;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    const double pure = typical(t1, iters);
    for (int i = 0; i < warmup + iters; i++) {
        const double t0 = MPI_Wtime();
        start(bytes, &r);
        const double c0 = MPI_Wtime();
        compute(pure, &r);
        const double c1 = MPI_Wtime();
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (i >= warmup) t1[i - warmup] = MPI_Wtime() - t0, t2[i - warmup] = c1 - c0;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    const double overall = typical(t1, iters), comp = typical(t2, iters);
    for (int i = 0; i < warmup + iters; i++) {
        const double t0 = MPI_Wtime();
        blocking(bytes);
        if (i >= warmup) t1[i - warmup] = MPI_Wtime() - t0;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    const double block = typical(t1, iters);
    double ov = 100.0 - (overall - comp) / pure * 100.0;
    if (ov < 0) ov = 0;
    const double a = mean_over_ranks(overall), c = mean_over_ranks(comp), p = mean_over_ranks(pure),
                 o = mean_over_ranks(ov), b = mean_over_ranks(block);
    if (me == 0)
        printf("%-10d %15.2f %15.2f %15.2f %15.2f %15.2f\n", coll == BARRIER ? 0 : bytes, a * 1e6, c * 1e6, p * 1e6, o,
               b * 1e6);
    fflush(stdout);
}

int main(int argc, char **argv) {
    int threads = 0, provided = 0;
    for (int i = 1; i < argc; i++) threads |= !strcmp(argv[i], "-T");
    if (threads) MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    long lo = 4, hi = 1 << 20;
    int iters = 200, warmup = 20;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-c") && v) {
            const char *names[] = {"allreduce", "allgather", "alltoall", "bcast", "barrier"};
            coll = -1;
            for (int k = 0; k < 5; k++)
                if (!strcmp(v, names[k])) coll = k;
            if (coll < 0) usage("unknown collective");
            i++;
        } else if (!strcmp(a, "-m") && v) {
            if (sscanf(v, "%ld:%ld", &lo, &hi) != 2 || lo < 1 || hi < lo) usage("bad -m");
            i++;
        } else if (!strcmp(a, "-i") && v) iters = atoi(v), i++;
        else if (!strcmp(a, "-x") && v) warmup = atoi(v), i++;
        else if (!strcmp(a, "-t") && v) tests = atoi(v), i++;
        else if (!strcmp(a, "-M")) use_median = 1;
        else if (!strcmp(a, "-T")) continue;
        else usage("unknown argument");
    }
    if (coll == ALLREDUCE && lo < 4) lo = 4;
    const size_t cap = (size_t)hi * (coll == ALLGATHER || coll == ALLTOALL ? P : 1);
    sbuf = calloc(cap, 1), rbuf = calloc(cap, 1);
    if (me == 0) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(version, &len);
        char *nl = strchr(version, '\n');
        if (nl) *nl = 0;
        const char *names[] = {"allreduce", "allgather", "alltoall", "bcast", "barrier"};
        printf("# OSU-style non-blocking %s overlap (bench/latency/overlap.c), P=%d, %d iterations, %d test calls, %s%s; %s\n",
               names[coll], P, iters, tests, use_median ? "medians" : "means", threads ? ", MPI_THREAD_MULTIPLE" : "", version);
        printf("# %-8s %15s %15s %15s %15s %15s\n", "Size", "Overall(us)", "Compute(us)", "Pure Comm.(us)", "Overlap(%)",
               "Blocking(us)");
    }
    double *t1 = malloc(sizeof(double) * iters), *t2 = malloc(sizeof(double) * iters);
    if (coll == BARRIER) measure(0, iters, warmup, t1, t2);
    else
        for (long b = lo; b <= hi; b *= 2) measure((int)b, iters, warmup, t1, t2);
    free(t1), free(t2);
    free(sbuf), free(rbuf);
    MPI_Finalize();
    return 0;
}
