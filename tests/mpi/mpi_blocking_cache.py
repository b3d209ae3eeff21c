"""The blocking calls' request cache of collplan.mpi under mpirun (test_mpi.py runs it under each MPI): repeated
calls hit, results stay right when buffers, shapes, dtypes, operations, in place, algorithms, alltoallv counts or
the wisdom file change, errors stay, no rank disagrees (alltoallv counts that change on one rank only), re-entrant
and threaded calls, the bound, freeing the communicator and MPI_Finalize. Prints "blocking_cache P=N: K passed,
M failed" on rank 0 and exits 1 on any failure."""
import json
import os
import sys
import tempfile
import threading

import numpy as np

import collplan
from collplan import mpi as cmpi

from mpi_cases import MPI, P, case, comm, me, results


def stats(c=comm):
    s = cmpi.cache_stats(c)
    return s["blocking_hits"], s["blocking_misses"]


def delta(before, c=comm):
    h, m = stats(c)
    return h - before[0], m - before[1]


def total(v):
    return sum(v * (r + 1) for r in range(P))


@case("repeated allreduce hits; new arrays of the same shape give the right result")
def _():
    before = stats()
    for i in range(5):
        x, y = np.full(4, (me + 1) * (i + 1.0)), np.zeros(4)
        if cmpi.allreduce(comm, x, y, MPI.SUM, algorithm="recursive_doubling") != "allreduce/recursive_doubling":
            return "wrong algorithm"
        if not np.all(y == total(i + 1.0)):
            return f"call {i}: {y}"
    return "" if delta(before) == (4, 1) else f"hits, misses {delta(before)}, expected (4, 1)"


@case("size, dtype, operation, in place and algorithm each miss once and run right")
def _():
    calls = [
        (lambda: np.full(4, me + 1.0), np.zeros(4), MPI.SUM, "recursive_doubling", total(1.0)),
        (lambda: np.full(7, me + 1.0), np.zeros(7), MPI.SUM, "recursive_doubling", total(1.0)),
        (lambda: np.full(4, me + 1, np.int32), np.zeros(4, np.int32), MPI.SUM, "recursive_doubling", total(1)),
        (lambda: np.full(4, me + 1.0), np.zeros(4), MPI.MAX, "recursive_doubling", float(P)),
        (lambda: None, np.full(4, me + 1.0), MPI.SUM, "recursive_doubling", total(1.0)),
        (lambda: np.full(4, me + 1.0), np.zeros(4), MPI.SUM, "ring", total(1.0)),
    ]
    # the first round builds all but the first (the previous case's shape), the second hits every entry
    for rnd, expect in ((0, (1, len(calls) - 1)), (1, (len(calls), 0))):
        before = stats()
        for i, (x, y, op, alg, want) in enumerate(calls):
            y = y.copy()
            cmpi.allreduce(comm, x(), y, op, algorithm=alg)
            if not np.all(y == want):
                return f"round {rnd} call {i}: {y} ({y.dtype}), expected {want}"
        if delta(before) != expect:
            return f"round {rnd}: hits, misses {delta(before)}, expected {expect}"
    return ""


@case("allgather, alltoall and barrier hit; in place and sizes are separate entries")
def _():
    before = stats()
    for i in range(3):
        for n in (1, 6):
            out = np.zeros(P * n, np.int64)
            cmpi.allgather(comm, np.full(n, me * 10 + i), out, algorithm="bruck")
            want = np.repeat(np.arange(P) * 10 + i, n)
            if not np.array_equal(out, want):
                return f"allgather n={n}: {out}"
            out[:] = -1
            out[me * n:(me + 1) * n] = me * 10 + i
            cmpi.allgather(comm, None, out, algorithm="bruck")
            if not np.array_equal(out, want):
                return f"allgather in place n={n}: {out}"
        send = np.array([me * 100 + j + i for j in range(P)], np.float32)
        out = np.zeros(P, np.float32)
        cmpi.alltoall(comm, send, out, algorithm="pairwise")
        if not np.array_equal(out, np.array([r * 100 + me + i for r in range(P)], np.float32)):
            return f"alltoall: {out}"
        cmpi.barrier(comm, algorithm="dissemination", n=2)
    return "" if delta(before) == (12, 6) else f"hits, misses {delta(before)}, expected (12, 6)"


def v_counts(group):
    """This rank's alltoallv counts: odd groups change what rank `group % P` alone sends to itself (invisible to
    every other rank's own counts)."""
    sc = [1 + (me + j) % 2 for j in range(P)]
    rc = [1 + (r + me) % 2 for r in range(P)]
    if group % 2 and me == group % P:
        sc[me] += 2
        rc[me] += 2
    return sc, rc


@case("alltoallv: counts that change on one rank only make every rank build again")
def _():
    before = stats()
    groups = P + 1
    for step in range(2 * groups):  # every count matrix twice: a miss, then a hit
        sc, rc = v_counts(step // 2)
        send = np.concatenate([np.full(c, me * 100 + j, np.int16) for j, c in enumerate(sc)])
        out = np.zeros(sum(rc), np.int16)
        cmpi.alltoallv(comm, send, sc, out, np.array(rc), algorithm="alltoallv/edge_coloring")
        want = np.concatenate([np.full(c, r * 100 + me, np.int16) for r, c in enumerate(rc)])
        if not np.array_equal(out, want):
            return f"step {step}: {out} expected {want}"
    got = comm.allgather(delta(before))
    if len(set(got)) != 1:
        return f"ranks disagree on (hits, misses): {got}"
    return "" if got[0] == (groups, groups) else f"hits, misses {got[0]}, expected {(groups, groups)}"


@case("alltoallv in place and with displacements")
def _():
    before = stats()
    for i in range(3):
        counts = [2] * P
        buf = np.array([me * 100 + j * 10 + i for j in range(P) for _ in range(2)], np.float64)
        cmpi.alltoallv(comm, None, None, buf, counts, algorithm="linear_permutation")
        if not np.array_equal(buf, np.array([r * 100 + me * 10 + i for r in range(P) for _ in range(2)], np.float64)):
            return f"in place: {buf}"
        displs = [3 * j for j in range(P)]
        send = np.zeros(3 * P)
        for j in range(P):
            send[3 * j] = me * 100 + j + i
        out = np.full(3 * P, -1.0)
        cmpi.alltoallv(comm, send, [1] * P, out, [1] * P, "linear_permutation", sdispls=displs, rdispls=displs)
        want = np.full(3 * P, -1.0)
        want[0::3] = [r * 100 + me + i for r in range(P)]
        if not np.array_equal(out, want):
            return f"displacements: {out}"
    return "" if delta(before) == (4, 2) else f"hits, misses {delta(before)}, expected (4, 2)"


@case("rooted and vector calls: root and counts in the key, None off the root and scatter's in-place root")
def _():
    before = stats()
    for i in range(2):
        for root in range(P):
            buf = np.full(3, root + i, np.int32) if me == root else np.zeros(3, np.int32)
            cmpi.bcast(comm, buf, root)
            send = np.arange(2 * P, dtype=np.float64) + i if me == root else None
            out = None if me == root else np.zeros(2)  # the root's block stays in send
            cmpi.scatter(comm, send, out, root)
            y = np.zeros(2) if me == root else None
            cmpi.reduce(comm, np.full(2, me + i + 0.5), y, MPI.MAX, root)
            if not np.all(buf == root + i) or (me != root and not np.array_equal(out, [2 * me + i, 2 * me + 1 + i])) \
                    or (me == root and not np.all(y == P - 0.5 + i)):
                return f"round {i} root {root}: {buf} {out} {y}"
        for counts in ([1] * P, [j % 2 * 3 for j in range(P)]):
            out = np.zeros(sum(counts), np.int8)
            cmpi.allgatherv(comm, np.full(counts[me], me + i, np.int8), out, counts)
            if not np.array_equal(out, np.repeat(np.arange(P, dtype=np.int8) + i, counts)):
                return f"allgatherv round {i} {counts}: {out}"
    calls = 3 * P + 2
    return "" if delta(before) == (calls, calls) else f"hits, misses {delta(before)}, expected {(calls, calls)}"


@case("a list buffer and unhashable counts run uncached, right; datetime64 arrays are bytes to allgather")
def _():
    before = stats()
    for i in range(2):
        y = np.zeros(3)
        cmpi.allreduce(comm, [me + 1.0, 2.0, i], y)  # a list: np.asarray'd by the call
        if not np.array_equal(y, [total(1.0), 2.0 * P, i * P]):
            return f"list: {y}"
        out = np.zeros(2 * P, "M8[s]")  # no buffer format for datetime64, but allgather needs none: cached
        cmpi.allgather(comm, np.array([me, i], "M8[s]"), out, algorithm="ring")
        if not np.array_equal(out.astype(np.int64), [v for r in range(P) for v in (r, i)]):
            return f"datetime64: {out}"
        zero_d = [np.array(1)] * P  # 0-d arrays: valid counts, not hashable
        out = np.zeros(P)
        cmpi.alltoallv(comm, np.full(P, me + i + 0.5), zero_d, out, zero_d, algorithm="linear_permutation")
        if not np.array_equal(out, np.arange(P) + i + 0.5):
            return f"0-d counts: {out}"
    return "" if delta(before) == (1, 1) else f"hits, misses {delta(before)}, expected (1, 1): the allgather's"


@case("a bad buffer after a hit gets the fresh call's error")
def _():
    x, y = np.full(8, 1.0), np.zeros(8)
    cmpi.allreduce(comm, x, y)
    for bad, what in ((lambda: cmpi.allreduce(comm, x, np.zeros(16)[::2]), "recvbuf must be a C-contiguous array"),
                      (lambda: cmpi.allreduce(comm, np.zeros(16)[::2], y), "sendbuf must be a C-contiguous array"),
                      (lambda: cmpi.allreduce(comm, x, np.frombuffer(bytes(64))), "recvbuf must be writable"),
                      (lambda: cmpi.allreduce(comm, x, np.zeros(8, np.float32)), "differ")):
        try:
            bad()
        except collplan.CollplanError as e:
            if what not in str(e):
                return f"unexpected message: {e}"
            continue
        return f"no error ({what})"
    cmpi.allreduce(comm, x, y)
    return "" if np.all(y == P) else "the cached request broke"


@case("algorithm='auto' follows a rewritten wisdom file")
def _():
    path = os.path.join(tempfile.mkdtemp(prefix=f"collplan-bc-{me}-"), "w.json")

    def write(alg, pad):
        with open(path, "w") as f:
            json.dump({"format": "collplan-wisdom/1", "pad": pad, "entries": [
                {"collective": "allreduce", "ranks": P, "op": "sum", "algorithm": alg}]}, f)
    got = []
    for alg, pad in (("allreduce/ring", ""), ("allreduce/ring", ""), ("native", "x"), ("allreduce/recursive_doubling", "xy")):
        if pad or not got:
            write(alg, pad)
        x, y = np.full(5, me + 1.0), np.zeros(5)
        got.append(cmpi.allreduce(comm, x, y, algorithm="auto", wisdom=path))
        if not np.all(y == total(1.0)):
            return f"wrong result with {got[-1]}"
    want = ["allreduce/ring", "allreduce/ring", "native", "allreduce/recursive_doubling"]
    return "" if got == want else f"chose {got}, expected {want}"


@case("bounded: the least recently used request goes")
def _():
    for n in range(cmpi._CACHE_LIMIT + 8):
        cmpi.allreduce(comm, np.ones(n + 1), np.zeros(n + 1))
    s = cmpi.cache_stats(comm)
    return "" if s["blocking_requests"] == cmpi._CACHE_LIMIT else f"{s['blocking_requests']} cached"


@case("threads: concurrent blocking calls on one communicator (MPI_COMM_SELF)")
def _():
    errors = []

    def work(t):
        for i in range(200):
            x, y = np.full(3, t * 1000.0 + i), np.zeros(3)
            cmpi.allreduce(MPI.COMM_SELF, x, y)
            if not np.array_equal(x, y):
                errors.append(f"thread {t} call {i}: {y}")
                return
    threads = [threading.Thread(target=work, args=(t,)) for t in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return "; ".join(errors[:2])


if P == 2:
    @case("re-entrant: the operation calls the same blocking allreduce")
    def _():
        depth = []

        def add(inbuf, inoutbuf, datatype):
            a, b = np.frombuffer(inbuf), np.frombuffer(inoutbuf)
            if not depth:
                depth.append(1)
                x, y = np.full(2, me + 1.0), np.zeros(2)
                cmpi.allreduce(comm, x, y, op, algorithm="recursive_doubling")
                depth.pop()
                if not np.all(y == 3.0):
                    raise RuntimeError(f"nested result {y}")
            b += a

        op = MPI.Op.Create(add, commute=True)
        try:
            for _ in range(2):
                x, y = np.full(2, me + 1.0), np.zeros(2)
                cmpi.allreduce(comm, x, y, op, algorithm="recursive_doubling")
                if not np.all(y == 3.0):
                    return f"outer result {y}"
        finally:
            op.Free()
        return ""


@case("a freed communicator's cache goes with it; a new one starts empty")
def _():
    for round_ in range(2):
        dup = comm.Dup()
        h = MPI._handleof(dup)
        x, y = np.full(4, me + 1.0), np.zeros(4)
        cmpi.allreduce(dup, x, y)
        cmpi.allreduce(dup, x, y)
        if stats(dup) != (1, 1) or not np.all(y == total(1.0)):
            return f"round {round_}: {stats(dup)}, {y}"
        dup.Free()
        if h in cmpi._caches:
            return f"round {round_}: cache kept after Free"
    return ""


passed = sum(results)
if not cmpi._caches:
    results.append(False)
    print(f"FAIL [rank {me}] no cache kept before MPI_Finalize", file=sys.stderr, flush=True)
MPI.Finalize()  # deletes MPI_COMM_SELF's attributes: the caches go (while MPI still runs)
if cmpi._caches:
    results.append(False)
    print(f"FAIL [rank {me}] caches kept after MPI_Finalize", file=sys.stderr, flush=True)
if me == 0:
    print(f"blocking_cache P={P}: {passed} passed, {len(results) - passed} failed", flush=True)
sys.exit(0 if all(results) else 1)
