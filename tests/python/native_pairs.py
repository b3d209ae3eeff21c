"""Running one collective under the wheels' MPIs and counting the messages each pair of ranks exchanged, as the
library itself reports them: Open MPI's pml monitoring (the sends), MPICH's ucx netmod with one rank per node
(MPIR_CVAR_NOLOCAL=1; the receives, read from the tag of every ucp_tag_recv_nbx: the sender's rank is in bits 32..47,
src/mpid/ch4/netmod/ucx/ucx_types.h). test_native.py and test_tuning.py compare them with collplan's schedules."""
from __future__ import annotations

import collections
import os
import pathlib
import re
import subprocess

import pytest
from mpi_launch import run

from collplan import api

ROOT = pathlib.Path(__file__).resolve().parents[2]

PROGRAM = r"""
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
static void bor(void *in, void *io, int *n, MPI_Datatype *t) {
    for (int i = 0; i < *n; i++) ((char *)io)[i] |= ((char *)in)[i];
}
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const char *c = argv[1]; int n = atoi(argv[2]), P, i; MPI_Op op = MPI_BOR;
    int root = atoi(argv[3]);
    if (argc > 4) MPI_Op_create(bor, 0, &op);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    char *a = calloc((size_t)n * P + 1, 1), *b = calloc((size_t)n * P + 1, 1);
    int *k = malloc(P * sizeof(int)), *d = malloc(P * sizeof(int));
    for (i = 0; i < P; i++) { k[i] = n; d[i] = i * n; }
    if (!strcmp(c, "bcast")) MPI_Bcast(a, n, MPI_BYTE, root, MPI_COMM_WORLD);
    if (!strcmp(c, "allreduce")) MPI_Allreduce(a, b, n, MPI_BYTE, op, MPI_COMM_WORLD);
    if (!strcmp(c, "reduce")) MPI_Reduce(a, b, n, MPI_BYTE, op, root, MPI_COMM_WORLD);
    if (!strcmp(c, "alltoall")) MPI_Alltoall(a, n, MPI_BYTE, b, n, MPI_BYTE, MPI_COMM_WORLD);
    if (!strcmp(c, "alltoallv")) MPI_Alltoallv(a, k, d, MPI_BYTE, b, k, d, MPI_BYTE, MPI_COMM_WORLD);
    if (!strcmp(c, "allgather")) MPI_Allgather(a, n, MPI_BYTE, b, n, MPI_BYTE, MPI_COMM_WORLD);
    if (!strcmp(c, "allgatherv")) MPI_Allgatherv(a, n, MPI_BYTE, b, k, d, MPI_BYTE, MPI_COMM_WORLD);
    if (!strcmp(c, "gather")) MPI_Gather(a, n, MPI_BYTE, b, n, MPI_BYTE, root, MPI_COMM_WORLD);
    if (!strcmp(c, "scatter")) MPI_Scatter(a, n, MPI_BYTE, b, n, MPI_BYTE, root, MPI_COMM_WORLD);
    if (!strcmp(c, "reduce_scatter")) MPI_Reduce_scatter(a, b, k, MPI_BYTE, op, MPI_COMM_WORLD);
    if (!strcmp(c, "reduce_scatter_block")) MPI_Reduce_scatter_block(a, b, n, MPI_BYTE, op, MPI_COMM_WORLD);
    if (!strcmp(c, "barrier")) MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
"""

RECV_SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
void *ucp_tag_recv_nbx(void *w, void *buf, size_t n, uint64_t tag, uint64_t mask, const void *p) {
    static void *(*real)(void *, void *, size_t, uint64_t, uint64_t, const void *);
    if (!real) real = dlsym(RTLD_NEXT, "ucp_tag_recv_nbx");
    fprintf(stderr, "RECV %s %llu\n", getenv("PMI_RANK"), (unsigned long long)((tag >> 32) & 0xffff));
    return real(w, buf, n, tag, mask, p);
}
"""

def schedule_pairs(choice, ranks, root, kind="send"):
    """(sender, receiver): messages, from the sends (or the receives) of the schedule `choice` maps to."""
    kw = {}
    if choice.algorithm.startswith(("allgatherv/", "reduce_scatter/")):
        kw["counts"] = [1] * ranks
    if choice.algorithm.startswith("alltoallv/"):
        kw["matrix"] = [[1] * ranks for _ in range(ranks)]
    s = api.schedule(choice.algorithm, ranks, params=choice.params, root=root, **kw)
    return collections.Counter((r, op["peer"]) if kind == "send" else (op["peer"], r)
                               for r in range(ranks) for op in s.ops(r) if op["kind"] == kind)



class OpenMPI:
    """coll.c built with the wheel's Open MPI; pairs(P, collective, per-rank bytes, root, *mca) -> Counter of
    (sender, receiver): messages, a rank's message to itself left out."""

    def __init__(self, tmp_path, mpicc=ROOT / ".mpi/openmpi/bin/mpicc", mpirun=ROOT / ".mpi/openmpi/bin/mpirun",
                 btl="self,sm"):
        """Defaults: the wheel's Open MPI; a site Open MPI 4 names its wrappers and the btl vader."""
        if not pathlib.Path(mpicc).exists():
            pytest.skip(f"no {mpicc} (make install)")
        self.mpirun = mpirun
        (tmp_path / "coll.c").write_text(PROGRAM)
        self.coll = tmp_path / f"coll-{pathlib.Path(mpicc).name}"
        subprocess.run([mpicc, "-o", self.coll, tmp_path / "coll.c"], check=True, capture_output=True)
        self.env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                        OMPI_MCA_btl=btl, OMPI_MCA_pml="ob1,monitoring", OMPI_MCA_pml_monitoring_enable="1",
                        OMPI_MCA_pml_monitoring_enable_output="1")

    def pairs(self, ranks, collective, nbytes, root, *args, mca=()):
        r = run([self.mpirun, "--oversubscribe", "-n", str(ranks), *mca, self.coll, collective, str(nbytes),
                 str(root), *args], env=self.env, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        sent = collections.Counter()
        for src, dst, msgs in re.findall(r"^E\t(\d+)\t(\d+)\t\d+ bytes\t(\d+) msgs sent", r.stdout + r.stderr, re.M):
            if src != dst and int(msgs):
                sent[(int(src), int(dst))] += int(msgs)
        return sent


class Mpich:
    """coll.c and the receive shim built with the wheel's MPICH; pairs(...) as OpenMPI's, from the receives, less
    those of a run without the collective (MPI_Init's and MPI_Finalize's own, with the same variables)."""

    def __init__(self, tmp_path, mpicc=ROOT / ".mpi/mpich/bin/mpicc", mpiexec=ROOT / ".mpi/mpich/bin/mpiexec"):
        if not pathlib.Path(mpicc).exists():
            pytest.skip(f"no {mpicc} (make install)")
        self.mpiexec, name = mpiexec, pathlib.Path(mpicc).name
        (tmp_path / "coll.c").write_text(PROGRAM)
        (tmp_path / "shim.c").write_text(RECV_SHIM)
        self.coll, self.shim = tmp_path / f"coll-{name}", tmp_path / f"shim-{name}.so"
        subprocess.run([mpicc, "-o", self.coll, tmp_path / "coll.c"], check=True, capture_output=True)
        subprocess.run([mpicc, "-shared", "-fPIC", "-o", self.shim, tmp_path / "shim.c", "-ldl"],
                       check=True, capture_output=True)
        self.base = {}
        self.env = dict(os.environ, MPIR_CVAR_CH4_PROGRESS_THROTTLE="1", MPIR_CVAR_NOLOCAL="1",
                        MPIR_CVAR_CH4_NETMOD="ucx")
        if not self._received(2, "barrier", "0", "0"):  # a barrier's messages seen: the ucx netmod runs
            pytest.skip("MPICH's ucx netmod did not start here")

    def _received(self, ranks, *args, env=()):
        r = run([self.mpiexec, "-n", str(ranks), "-env", "LD_PRELOAD", self.shim,
                 *[x for k, v in env for x in ("-env", k, str(v))], self.coll, *args],
                env=self.env, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        return collections.Counter((int(src), int(me)) for me, src in
                                   re.findall(r"^RECV (\d+) (\d+)$", r.stdout + r.stderr, re.M) if me != src)

    def pairs(self, ranks, collective, nbytes, root, *args, env=()):
        """env: MPICH variables for both runs (MPI_Init's own collectives follow a tuning file too)."""
        key = (ranks, tuple(env))
        if key not in self.base:
            self.base[key] = self._received(ranks, "none", "0", "0", env=env)
        got = self._received(ranks, collective, str(nbytes), str(root), *args, env=env)
        got.subtract(self.base[key])
        return +got
