/* An ordinary MPI program in C that knows nothing about collplan: ctest runs it with libcollplan_pmpi.so in
 * LD_PRELOAD. It checks every collective's result against a serial computation, including the cases collplan
 * must hand back to the MPI library (a datatype with holes, a non-commutative operation for a schedule that needs
 * commutativity, a sub-communicator), and prints "pmpi_prog: all checks passed" on rank 0 when all hold. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

static void expect(int ok, const char *what, int rank) {
    if (!ok) {
        fprintf(stderr, "pmpi_prog: rank %d: %s is wrong\n", rank, what);
        failures++;
    }
}

/* (a1, b1) o (a2, b2) = (a1 a2, a1 b2 + b1) mod p: associative, not commutative. */
static void compose(void *in, void *inout, int *len, MPI_Datatype *type) {
    long long *x = (long long *)in, *y = (long long *)inout;
    (void)type;
    for (int i = 0; i < *len; i++) {
        long long a = x[2 * i] * y[2 * i] % 1000003, b = (x[2 * i] * y[2 * i + 1] + x[2 * i + 1]) % 1000003;
        y[2 * i] = a;
        y[2 * i + 1] = b;
    }
}

static void collectives(MPI_Comm comm, const char *label) {
    int P, me, n = 37;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    int *send = malloc(sizeof(int) * n * P), *recv = malloc(sizeof(int) * n * P);
    for (int i = 0; i < n; i++) send[i] = me * 1000 + i;
    MPI_Allgather(send, n, MPI_INT, recv, n, MPI_INT, comm);
    int ok = 1;
    for (int r = 0; r < P; r++)
        for (int i = 0; i < n; i++) ok &= recv[r * n + i] == r * 1000 + i;
    expect(ok, label, me);

    for (int j = 0; j < P; j++)
        for (int i = 0; i < n; i++) send[j * n + i] = me * 100000 + j * 1000 + i;
    MPI_Alltoall(send, n, MPI_INT, recv, n, MPI_INT, comm);
    ok = 1;
    for (int r = 0; r < P; r++)
        for (int i = 0; i < n; i++) ok &= recv[r * n + i] == r * 100000 + me * 1000 + i;
    expect(ok, "alltoall", me);

    int *sc = malloc(sizeof(int) * P), *sd = malloc(sizeof(int) * P), *rc = malloc(sizeof(int) * P), *rd = malloc(sizeof(int) * P);
    for (int j = 0, off = 0; j < P; j++) sc[j] = (me + j) % 3, sd[j] = off, off += sc[j];
    for (int r = 0, off = 0; r < P; r++) rc[r] = (r + me) % 3, rd[r] = off, off += rc[r];
    for (int j = 0; j < P; j++)
        for (int i = 0; i < sc[j]; i++) send[sd[j] + i] = me * 100 + j * 10 + i;
    MPI_Alltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, comm);
    ok = 1;
    for (int r = 0; r < P; r++)
        for (int i = 0; i < rc[r]; i++) ok &= recv[rd[r] + i] == r * 100 + me * 10 + i;
    expect(ok, "alltoallv", me);
    free(sc), free(sd), free(rc), free(rd), free(send), free(recv);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int P, me;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    collectives(MPI_COMM_WORLD, "allgather");

    enum { N = 1001 };
    double x[N], y[N];
    for (int i = 0; i < N; i++) x[i] = (me + 1) * 10.0 + i;
    MPI_Allreduce(x, y, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    int ok = 1;
    for (int i = 0; i < N; i++) ok &= y[i] == 10.0 * P * (P + 1) / 2 + (double)i * P;
    expect(ok, "allreduce sum", me);
    MPI_Allreduce(MPI_IN_PLACE, x, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    ok = 1;
    for (int i = 0; i < N; i++) ok &= x[i] == y[i];
    expect(ok, "allreduce in place", me);

    long long f[2 * 5], g[2 * 5];
    for (int i = 0; i < 5; i++) f[2 * i] = me + 2 + i, f[2 * i + 1] = 3 * me + i + 1;
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_LONG_LONG, &pair);
    MPI_Type_commit(&pair);
    MPI_Op op;
    MPI_Op_create(compose, 0, &op);
    MPI_Allreduce(f, g, 5, pair, op, MPI_COMM_WORLD);
    ok = 1;
    for (int i = 0; i < 5; i++) {
        long long a = 2 + i, b = i + 1;  /* rank 0's map, then compose with ranks 1.. on the right */
        for (int r = 1; r < P; r++) {
            long long ra = r + 2 + i, rb = 3 * r + i + 1;
            long long na = a * ra % 1000003, nb = (a * rb + b) % 1000003;
            a = na, b = nb;
        }
        ok &= g[2 * i] == a && g[2 * i + 1] == b;
    }
    expect(ok, "allreduce non-commutative", me);
    MPI_Op_free(&op);
    MPI_Type_free(&pair);

    /* A strided datatype (holes): collplan must hand it to the library. */
    MPI_Datatype strided;
    MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    int sv[4] = {me, -1, me + 100, -1}, rv[4 * 64];
    MPI_Allgather(sv, 1, strided, rv, 1, strided, MPI_COMM_WORLD);
    ok = 1;
    for (int r = 0; r < P && P <= 64; r++) ok &= rv[3 * r] == r && rv[3 * r + 2] == r + 100; /* extent: 3 ints */
    expect(ok, "allgather strided", me);
    MPI_Type_free(&strided);

    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
    collectives(half, "allgather on a sub-communicator");
    MPI_Barrier(half);
    MPI_Comm_free(&half);
    MPI_Barrier(MPI_COMM_WORLD);

    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) printf(all ? "pmpi_prog: %d checks failed\n" : "pmpi_prog: all checks passed\n", all);
    MPI_Finalize();
    return all ? 1 : 0;
}
