/* The drop-in library's cost per call, isolated: back-to-back MPI_Allreduce calls of one int on MPI_COMM_SELF
 * (no communication: the MPI library copies 4 bytes), so what is left is the cost of the call path itself --
 * native vs the PMPI library passing through vs the library's cached decision. Reports ns per call (best of
 * `reps` timings of `iters` calls).   overhead [ITERS] [REPS] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    long iters = argc > 1 ? atol(argv[1]) : 2000000, reps = argc > 2 ? atol(argv[2]) : 7;
    int x = 1, y = 0, me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    double best = 1e30;
    for (long r = 0; r < reps; r++) {
        double t0 = MPI_Wtime();
        for (long i = 0; i < iters; i++) MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
        double t = (MPI_Wtime() - t0) / (double)iters;
        if (t < best) best = t;
    }
    if (me == 0) printf("%.1f ns per MPI_Allreduce on MPI_COMM_SELF (best of %ld x %ld calls)\n", best * 1e9, reps, iters);
    MPI_Finalize();
    return y != 1;
}
