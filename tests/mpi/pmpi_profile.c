/* An MPI program for COLLPLAN_PROFILE (tests/python/test_profile_mpi.py records it and checks the profile): a
 * known sequence of collectives of every kind -- blocking, non-blocking completed by MPI_Wait, MPI_Test,
 * MPI_Waitall with point-to-point requests, MPI_Waitany and MPI_Testsome, persistent started twice, on
 * MPI_COMM_WORLD, a split communicator, a duplicate used before the communicator it duplicates and a
 * non-commutative user operation -- with point-to-point sends between them and a known compute gap (usleep).
 * With an argument N, N more allreduces follow. It checks its own results and prints "pmpi_profile: ok" on rank 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int failures = 0;
#define CHECK(c)                                                        \
    do {                                                                \
        if (!(c)) {                                                     \
            fprintf(stderr, "pmpi_profile: check failed: %s (line %d)\n", #c, __LINE__); \
            ++failures;                                                 \
        }                                                               \
    } while (0)

static void first(void* in, void* inout, int* len, MPI_Datatype* t) {  /* not commutative: keeps the left operand */
    (void)in, (void)inout, (void)len, (void)t;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);

    /* 0: allreduce of 8 doubles (64 bytes) */
    double x[8], y[8];
    for (int i = 0; i < 8; ++i) x[i] = rank + i;
    MPI_Allreduce(x, y, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECK(y[0] == P * (P - 1) / 2.0);

    usleep(20000); /* a compute gap of 20 ms before call 1 */

    /* 1: bcast of 1000 ints from the last rank */
    int b[1000];
    for (int i = 0; i < 1000; ++i) b[i] = rank == P - 1 ? i : -1;
    MPI_Bcast(b, 1000, MPI_INT, P - 1, MPI_COMM_WORLD);
    CHECK(b[999] == 999);

    /* point-to-point: a ring of MPI_Send/MPI_Recv (100 bytes) and MPI_Isend/MPI_Irecv (200 bytes) */
    char s1[100] = {0}, r1[100], s2[200] = {0}, r2[200];
    const int right = (rank + 1) % P, left = (rank + P - 1) % P;
    MPI_Sendrecv(s1, 100, MPI_CHAR, right, 1, r1, 100, MPI_CHAR, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Request pr[3];
    MPI_Irecv(r2, 200, MPI_CHAR, left, 2, MPI_COMM_WORLD, &pr[0]);
    MPI_Isend(s2, 200, MPI_CHAR, right, 2, MPI_COMM_WORLD, &pr[1]);

    /* 2: iallreduce, completed with the two point-to-point requests by MPI_Waitall */
    int v = rank, w = 0;
    MPI_Iallreduce(&v, &w, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &pr[2]);
    MPI_Waitall(3, pr, MPI_STATUSES_IGNORE);
    CHECK(w == P - 1);

    /* 3: ibarrier completed by MPI_Test */
    MPI_Request rq;
    MPI_Ibarrier(MPI_COMM_WORLD, &rq);
    for (int flag = 0; !flag;) MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);

    /* a split (even / odd ranks) and a duplicate of the world, used first */
    MPI_Comm half, dup;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int hs;
    MPI_Comm_size(half, &hs);

    /* 4 (dup): allgather of 2 ints per rank */
    int g[2] = {rank, rank}, *ga = malloc(sizeof(int) * 2 * (size_t)P);
    MPI_Allgather(g, 2, MPI_INT, ga, 2, MPI_INT, dup);
    CHECK(ga[2 * (P - 1)] == P - 1);

    /* 5 (half): reduce with a non-commutative user operation to root 0 */
    MPI_Op op;
    MPI_Op_create(first, 0, &op);
    int rv = rank, rr = -1;
    MPI_Reduce(&rv, &rr, 1, MPI_INT, op, 0, half);
    MPI_Op_free(&op);

    /* 6 (half): iallgatherv, rank i of half gives i + 1 ints, completed by MPI_Waitany */
    int hr;
    MPI_Comm_rank(half, &hr);
    int* counts = malloc(sizeof(int) * (size_t)hs);
    int* displs = malloc(sizeof(int) * (size_t)hs);
    int total = 0;
    for (int i = 0; i < hs; ++i) counts[i] = i + 1, displs[i] = total, total += i + 1;
    int* mine = malloc(sizeof(int) * (size_t)(hr + 1));
    int* all = malloc(sizeof(int) * (size_t)total);
    for (int i = 0; i <= hr; ++i) mine[i] = hr;
    MPI_Request one[1];
    MPI_Iallgatherv(mine, hr + 1, MPI_INT, all, counts, displs, MPI_INT, half, &one[0]);
    int idx = -1;
    MPI_Waitany(1, one, &idx, MPI_STATUS_IGNORE);
    CHECK(idx == 0 && all[total - 1] == hs - 1);

    /* 7 (world): alltoallv, rank i sends j + 1 ints to rank j */
    int *sc = malloc(sizeof(int) * (size_t)P), *sd = malloc(sizeof(int) * (size_t)P);
    int *rc = malloc(sizeof(int) * (size_t)P), *rd = malloc(sizeof(int) * (size_t)P);
    int st = 0, rt = 0;
    for (int j = 0; j < P; ++j) sc[j] = j + 1, sd[j] = st, st += j + 1, rc[j] = rank + 1, rd[j] = rt, rt += rank + 1;
    int *sb = calloc((size_t)st, sizeof(int)), *rb = calloc((size_t)rt, sizeof(int));
    MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD);

#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
    /* 8 (world): a persistent allreduce of 4 floats, started twice, completed by MPI_Wait then MPI_Testsome */
    float pf[4] = {1, 2, 3, 4}, pg[4];
    MPI_Request preq;
    MPI_Allreduce_init(pf, pg, 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &preq);
    MPI_Start(&preq);
    MPI_Wait(&preq, MPI_STATUS_IGNORE);
    CHECK(pg[3] == 4.0f * P);
    MPI_Startall(1, &preq);
    for (int out = 0; out == 0;) {
        int ind[1];
        MPI_Testsome(1, &preq, &out, ind, MPI_STATUSES_IGNORE);
    }
    MPI_Request_free(&preq);
#endif

    /* 9 (world): barrier */
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    free(ga), free(counts), free(displs), free(mine), free(all), free(sc), free(sd), free(rc), free(rd), free(sb), free(rb);
    /* argv[1] = N: N more allreduces of one double (the recorder's buffer fills and is written while it runs) */
    const long more = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
    for (long i = 0; i < more; ++i) MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    int bad = 0;
    MPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);  /* the last call */
    if (rank == 0) printf(bad ? "pmpi_profile: %d checks failed\n" : "pmpi_profile: ok\n", bad);
    MPI_Finalize();
    return bad != 0;
}
