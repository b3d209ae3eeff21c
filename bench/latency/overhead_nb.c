/* Per-call cost of the completion calls that libcollplan_pmpi.so interposes (MPI_Test, MPI_Wait, MPI_Waitall) on
 * point-to-point requests, and of a non-blocking collective that collplan runs, with no communication: for
 * callgrind (bench/README.md, "Drop-in overhead"). Counts instructions per call as the difference of two runs.
 *
 *   overhead_nb test N     N x MPI_Test on a receive from self that never matches (flag 0)
 *   overhead_nb wait N     N x MPI_Wait on MPI_REQUEST_NULL
 *   overhead_nb testall N  N x MPI_Testall on [MPI_REQUEST_NULL, that receive]
 *   overhead_nb iallreduce N   N x (MPI_Iallreduce of one int on MPI_COMM_SELF + MPI_Wait)
 *   overhead_nb allreduce N    N x MPI_Allreduce of one int on MPI_COMM_SELF (the blocking twin)
 *   overhead_nb test-live N / wait-live N / testall-live N   as test / wait / testall, while an (inactive)
 *                          persistent MPI_Allreduce_init request exists: what a program that keeps persistent
 *                          collectives pays on its point-to-point completion calls */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const char *what = argc > 1 ? argv[1] : "test";
    const long n = argc > 2 ? atol(argv[2]) : 100000;
    int buf = 0, flag = 0, x = 1, y = 0;
    MPI_Request r, q[2];
    MPI_Irecv(&buf, 1, MPI_INT, 0, 1, MPI_COMM_SELF, &r);
    MPI_Request pers = MPI_REQUEST_NULL;
    const char *live = strstr(what, "-live");
    if (live) {
#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
        MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF, MPI_INFO_NULL, &pers);
#endif
    }
    if (!strncmp(what, "testall", 7))
        for (long i = 0; i < n; i++) {
            q[0] = MPI_REQUEST_NULL, q[1] = r;
            MPI_Testall(2, q, &flag, MPI_STATUSES_IGNORE);
        }
    else if (!strncmp(what, "test", 4))
        for (long i = 0; i < n; i++) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    else if (!strncmp(what, "wait", 4))
        for (long i = 0; i < n; i++) {
            MPI_Request z = MPI_REQUEST_NULL;
            MPI_Wait(&z, MPI_STATUS_IGNORE);
        }
    else if (!strcmp(what, "iallreduce"))
        for (long i = 0; i < n; i++) {
            MPI_Request c;
            MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF, &c);
            MPI_Wait(&c, MPI_STATUS_IGNORE);
        }
    else
        for (long i = 0; i < n; i++) MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
    if (pers != MPI_REQUEST_NULL) MPI_Request_free(&pers);
    MPI_Cancel(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return flag + y < 0;
}
