/* Conformance of MPI_Barrier (tests/conformance/README.md): an ordinary MPI program, nothing but MPI.
 *
 * Causality is checked on the host's monotonic clock (CLOCK_MONOTONIC is one clock for all processes of a host;
 * the runs are on one host): no rank may leave a barrier before every rank of the communicator has entered it,
 * i.e. min over ranks of the exit time >= max over ranks of the entry time. The times travel by MPI_Reduce,
 * which the PMPI library does not replace.
 *   sleeper/<who>/<comm>   one rank (the last, rank 0, the middle one) sleeps 30 ms before entering: nobody may
 *                          leave before it entered (so every other rank stays ~30 ms in the barrier; the time
 *                          the others spent inside is checked to be >= 25 ms when they entered before the sleeper
 *                          began to sleep, as measured on the same clock)
 *   p2p/<comm>             a message sent just before the barrier (MPI_Isend, and a pending wildcard receive) is
 *                          received after it, and is not mixed with the barrier's own messages
 *   repeat                 1000 barriers on MPI_COMM_WORLD, causality checked for every one
 * on world, a duplicate, the odd/even split and the reversed-key split. */
#include "conformance.h"

static double mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* min(exit) >= max(entry) over the ranks of comm, for `n` barriers at once; checked on the comm's rank 0. */
static void check_causal(MPI_Comm comm, const double *entry, const double *exit_, int n) {
    int me;
    MPI_Comm_rank(comm, &me);
    double *maxin = malloc(sizeof(double) * n), *minout = malloc(sizeof(double) * n);
    MPI_Reduce(entry, maxin, n, MPI_DOUBLE, MPI_MAX, 0, comm);
    MPI_Reduce(exit_, minout, n, MPI_DOUBLE, MPI_MIN, 0, comm);
    if (me == 0)
        for (int k = 0; k < n; k++) {
            char g[96], e[96];
            snprintf(g, sizeof g, "a rank left %.6f s before the last one entered", maxin[k] - minout[k]);
            snprintf(e, sizeof e, "no rank leaves before all entered");
            cf_check_true(k, minout[k] >= maxin[k], g, e);
        }
    free(maxin), free(minout);
}

static void sleeper(MPI_Comm comm, const char *cn, int who, const char *whoname) {
    int me, P;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    if (!cf_case("sleeper/%s/%s", whoname, cn)) return;
    /* line the ranks up first (a native collective), then the sleeper sleeps before entering */
    MPI_Bcast(&who, 1, MPI_INT, 0, comm);
    double sleep_start = 0, entry, exit_;
    if (me == who) sleep_start = mono(), cf_sleep_ms(30);
    entry = mono();
    cf_check_rc("MPI_Barrier", MPI_Barrier(comm));
    exit_ = mono();
    check_causal(comm, &entry, &exit_, 1);
    /* the others, when they entered before the sleeper started sleeping, stayed >= 25 ms */
    MPI_Bcast(&sleep_start, 1, MPI_DOUBLE, who, comm);
    if (me != who && entry <= sleep_start) {
        char g[64];
        snprintf(g, sizeof g, "%.1f ms in the barrier", (exit_ - entry) * 1e3);
        cf_check_true(0, exit_ - entry >= 0.025, g, ">= 25 ms (another rank slept 30 ms before entering)");
    }
}

static void p2p(MPI_Comm comm, const char *cn) {
    if (!cf_case("p2p/%s", cn)) return;
    cf_p2p t;
    cf_p2p_before(&t, comm);
    double entry = mono();
    cf_check_rc("MPI_Barrier", MPI_Barrier(comm));
    double exit_ = mono();
    cf_p2p_after(&t);
    check_causal(comm, &entry, &exit_, 1);
}

static void repeat(void) {
    enum { N = 1000 };
    if (!cf_case("repeat/1000")) return;
    double *entry = malloc(sizeof(double) * N), *exit_ = malloc(sizeof(double) * N);
    int bad = 0;
    for (int k = 0; k < N; k++) {
        entry[k] = mono();
        bad |= MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS;
        exit_[k] = mono();
    }
    cf_check_true(0, !bad, "an MPI_Barrier returned an error", "MPI_SUCCESS");
    check_causal(MPI_COMM_WORLD, entry, exit_, N);
    free(entry), free(exit_);
}

int main(int argc, char **argv) {
    cf_init(&argc, &argv, "barrier");
    for (int k = CF_WORLD; k <= CF_SPLIT_REVERSED; k++) {
        MPI_Comm comm = cf_comm(k);
        int P;
        MPI_Comm_size(comm, &P);
        sleeper(comm, cf_comm_names[k], P - 1, "last");
        if (k == CF_WORLD) {
            sleeper(comm, cf_comm_names[k], 0, "first");
            sleeper(comm, cf_comm_names[k], P / 2, "middle");
        }
        p2p(comm, cf_comm_names[k]);
        cf_comm_free(&comm);
    }
    repeat();
    return cf_finish();
}
