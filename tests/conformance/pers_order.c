/* Conformance of the start order of MPI-4 persistent collectives (tests/conformance/README.md): an ordinary MPI
 * program, nothing but MPI. A persistent collective is matched at its _init call, which every rank makes in the same
 * order; MPI_Start may then come in any order on each rank (MPI 4.0, 6.13): a library that matches the operations by
 * the order of their starts mixes them up (wrong data) or deadlocks. Every result against a serial computation
 * (calls.h: every int of the receive buffers, gaps and non-roots' buffers untouched, send buffers unchanged).
 *   order/<comm>   every rank inits, in this order: bcast (root 0), barrier, allreduce, allgather, alltoall, reduce
 *                  (root P-1), gather (root P/2), scatter (root 0), reduce_scatter_block, reduce_scatter,
 *                  allgatherv, alltoallv (counts 0..3 per pair) and a second allreduce of the same count, type, op
 *                  and communicator as the first (count 5, MPI_INT, MPI_SUM) -- 13 requests; then 4 rounds, each
 *                  with new data:
 *                    round 0: MPI_Start one by one, rotated by r on rank r; MPI_Waitall of the array in init order
 *                    round 1: reversed and rotated on odd ranks, rotated by 2r on even ones; MPI_Wait one by one in
 *                             yet another order (the start order rotated by r + 3, reversed)
 *                    round 2: one MPI_Startall of the array in a rank-seeded random order; MPI_Testsome loop
 *                             (not MPI_Testall: MPICH 5.0.2's returns MPI_ERR_IN_STATUS, every status MPI_SUCCESS,
 *                             when it completes a persistent collective -- README.md, "What the two MPIs do")
 *                    round 3: MPI_Start in another rank-seeded random order; MPI_Wait in init order
 *                  and MPI_Request_free of all 13
 *   twins/<comm>   two MPI_Allreduce_init of the same shape (count 7, MPI_INT, MPI_SUM) and two MPI_Bcast_init at the
 *                  same root, each twin with its own data; 4 rounds: even ranks start A before B, odd ranks B before
 *                  A (the bcasts the other way round), completed in the opposite order, in round 2 and 3 by
 *                  MPI_Waitall on the array reversed
 * on MPI_COMM_WORLD, an MPI_Comm_dup and the odd/even MPI_Comm_split (<comm>: world, dup, split-odd-even). Without
 * MPI-4 persistent collectives (HAVE_PERSISTENT 0) the program runs no case and passes. */
#include "calls.h"

/* Rank-seeded permutation of 0..n-1 (a private LCG: the same on every MPI). */
static void shuffle(int *perm, int n, unsigned seed) {
    unsigned long long x = 0x2545F4914F6CDD1Dull ^ ((unsigned long long)seed * 0x9E3779B97F4A7C15ull);
    for (int i = 0; i < n; i++) perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        const int j = (int)((x >> 33) % (unsigned long long)(i + 1));
        const int t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
}

#if HAVE_PERSISTENT
enum { NORDER = 13 };

static void order(MPI_Comm comm, const char *cn) {
    if (!cf_case("order/%s", cn)) return;
    int P, me;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    static const int colls[NORDER] = {BC, BAR, AR, AG, A2A, RED, GA, SC, RSB, RS, AGV, A2AV, AR};
    cc_call k[NORDER];
    for (int i = 0; i < NORDER; i++) {
        const int c = colls[i];
        const int root = c == RED ? P - 1 : c == GA ? P / 2 : 0;
        k[i] = cc_make(c, comm, 5, root, 11 + i);
    }
    for (int i = 0; i < NORDER; i++) cf_check_rc("MPI_<Coll>_init", cc_start(&k[i], comm, 1));
    MPI_Request q[NORDER];
    int seq[NORDER], seq2[NORDER];
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < NORDER; i++) cc_fill(&k[i], 10 * round + i);  /* the twin allreduces differ too */
        switch (round) {
        case 0:
            for (int i = 0; i < NORDER; i++) seq[i] = (i + me) % NORDER;
            break;
        case 1:
            for (int i = 0; i < NORDER; i++)
                seq[i] = me % 2 ? (NORDER - 1 - i + me) % NORDER : (i + 2 * me) % NORDER;
            break;
        default: shuffle(seq, NORDER, (unsigned)(me * 131 + round * 7 + 1)); break;
        }
        if (round == 2) {
            for (int i = 0; i < NORDER; i++) q[i] = k[seq[i]].req;
            cf_check_rc("MPI_Startall", MPI_Startall(NORDER, q));
        } else {
            for (int i = 0; i < NORDER; i++) cf_check_rc("MPI_Start", MPI_Start(&k[seq[i]].req));
        }
        switch (round) {
        case 0:
            for (int i = 0; i < NORDER; i++) q[i] = k[i].req;
            cf_check_rc("MPI_Waitall", MPI_Waitall(NORDER, q, MPI_STATUSES_IGNORE));
            break;
        case 1:
            for (int i = 0; i < NORDER; i++) seq2[i] = seq[(NORDER - 1 - i + me + 3) % NORDER];
            for (int i = 0; i < NORDER; i++) cf_check_rc("MPI_Wait", MPI_Wait(&k[seq2[i]].req, MPI_STATUS_IGNORE));
            break;
        case 2: {
            int left = NORDER, count = 0, idx[NORDER];
            while (left > 0) {
                const int rc = MPI_Testsome(NORDER, q, &count, idx, MPI_STATUSES_IGNORE);
                if (rc != MPI_SUCCESS) cf_check_rc("MPI_Testsome", rc);  /* a check only when it fails */
                if (count == MPI_UNDEFINED) break;
                left -= count;
            }
            cf_check_ll(-1, left, 0);
            break;
        }
        default:
            for (int i = 0; i < NORDER; i++) cf_check_rc("MPI_Wait", MPI_Wait(&k[i].req, MPI_STATUS_IGNORE));
            break;
        }
        for (int i = 0; i < NORDER; i++) cc_check(&k[i]);
    }
    for (int i = 0; i < NORDER; i++) {
        cf_check_rc("MPI_Request_free", MPI_Request_free(&k[i].req));
        cc_unmake(&k[i]);
    }
}

static void twins(MPI_Comm comm, const char *cn) {
    if (!cf_case("twins/%s", cn)) return;
    int P, me;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    cc_call k[4] = {cc_make(AR, comm, 7, 0, 0), cc_make(AR, comm, 7, 0, 0), cc_make(BC, comm, 7, P - 1, 0),
                    cc_make(BC, comm, 7, P - 1, 0)};
    for (int i = 0; i < 4; i++) cf_check_rc("MPI_<Coll>_init", cc_start(&k[i], comm, 1));
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < 4; i++) cc_fill(&k[i], 40 + 4 * round + i);
        const int odd = me % 2;
        const int seq[4] = {odd, 1 - odd, 3 - odd, 2 + odd};  /* A, B / B, A; bcasts the other way round */
        for (int i = 0; i < 4; i++) cf_check_rc("MPI_Start", MPI_Start(&k[seq[i]].req));
        if (round < 2) {
            for (int i = 3; i >= 0; i--) cf_check_rc("MPI_Wait", MPI_Wait(&k[seq[i]].req, MPI_STATUS_IGNORE));
        } else {
            MPI_Request q[4];
            for (int i = 0; i < 4; i++) q[i] = k[seq[3 - i]].req;
            cf_check_rc("MPI_Waitall", MPI_Waitall(4, q, MPI_STATUSES_IGNORE));
            for (int i = 0; i < 4; i++) k[seq[3 - i]].req = q[i];
        }
        for (int i = 0; i < 4; i++) cc_check(&k[i]);
    }
    for (int i = 0; i < 4; i++) {
        cf_check_rc("MPI_Request_free", MPI_Request_free(&k[i].req));
        cc_unmake(&k[i]);
    }
}
#endif

int main(int argc, char **argv) {
    cf_init(&argc, &argv, "pers_order");
#if HAVE_PERSISTENT
    for (int cmk = CF_WORLD; cmk <= CF_SPLIT_ODD_EVEN; cmk++) {
        MPI_Comm comm = cf_comm(cmk);
        order(comm, cf_comm_names[cmk]);
        twins(comm, cf_comm_names[cmk]);
        cf_comm_free(&comm);
    }
#else
    cf_case("skipped/no-persistent");
    (void)shuffle;
#endif
    return cf_finish();
}
