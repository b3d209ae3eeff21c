"""The Python MPI API under mpirun (test_mpi.py runs it for several P under each MPI): every registered algorithm
through collplan.mpi with NumPy arrays, compared with a serial computation; split-phase (test loop), persistent
restart, overlapping requests, in place, a non-commutative mpi4py user operation, error paths, plan caching; then
the rooted and vector collectives (mpi4py_collectives.py).
Prints "mpi4py_api: N passed, M failed" on rank 0 and exits 1 on any failure."""
import sys

import numpy as np

import collplan
from collplan import mpi as cmpi

from mpi_cases import MPI, P, case, comm, me, results

PRIME = 1000003


def pattern(key, n):
    return ((np.arange(n) * 7 + key * 131 + 1) % 251).astype(np.uint8)


def runnable(collective):
    return [a["name"] for a in collplan.algorithms(collective) if not cmpi.applies(collective, a["name"], P)]


for name in runnable("allgather"):
    for n in (0, 5, 1000):
        @case(f"{name} n={n}")
        def _(name=name, n=n):
            out = np.zeros(P * n, np.uint8)
            assert cmpi.allgather(comm, pattern(me, n), out, algorithm=name) == name
            want = np.concatenate([pattern(r, n) for r in range(P)]) if n else out
            return "" if np.array_equal(out, want) else "wrong result"

for name in runnable("alltoall"):
    @case(f"{name} float64")
    def _(name=name):
        send = np.array([me * 1000 + j + 0.5 for j in range(P) for _ in range(3)])
        out = np.zeros_like(send)
        cmpi.alltoall(comm, send, out, algorithm=name)
        want = np.array([r * 1000 + me + 0.5 for r in range(P) for _ in range(3)])
        return "" if np.array_equal(out, want) else "wrong result"

def sums(name):  # schedules that can compute a sum (not the idempotent-only ones: they are for max, min, ...)
    return not collplan.schedule(name, ranks=P).idempotent_only


for name in filter(sums, runnable("allreduce")):
    for count in (0, 1, P + 3, 1001):
        @case(f"{name} sum count={count}")
        def _(name=name, count=count):
            x = (np.arange(count) % 97 + 1000 * (me + 1)).astype(np.float64)
            y = np.zeros(count)
            cmpi.allreduce(comm, x, y, op=MPI.SUM, algorithm=name)
            want = sum((np.arange(count) % 97 + 1000 * (r + 1)).astype(np.float64) for r in range(P))
            return "" if np.array_equal(y, want) else f"wrong result {y[:4]} vs {np.asarray(want)[:4]}"

# A non-commutative user operation from Python: composition of affine maps (structured dtype, one MPI struct).
AFF = np.dtype([("a", np.int64), ("b", np.int64)])


def compose(inbuf, inoutbuf, datatype):
    x, y = np.frombuffer(inbuf, dtype=AFF), np.frombuffer(inoutbuf, dtype=AFF)
    y["a"], y["b"] = x["a"] * y["a"] % PRIME, (x["a"] * y["b"] + x["b"]) % PRIME


affine = MPI.Op.Create(compose, commute=False)


def affine_values(r, n):
    v = np.zeros(n, AFF)
    v["a"], v["b"] = (r * 7 + np.arange(n) * 3 + 2) % PRIME, (r * 11 + np.arange(n) + 5) % PRIME
    return v


for a in collplan.algorithms("allreduce"):
    name = a["name"]
    if cmpi.applies("allreduce", name, P):
        continue
    try:
        sched = collplan.schedule(name, ranks=P)
    except collplan.CollplanError:
        continue  # runs on another topology; its sum case above covers it

    @case(f"{name} non-commutative user op")
    def _(name=name, sched=sched):
        x, y = affine_values(me, 7), np.zeros(7, AFF)
        try:
            cmpi.allreduce(comm, x, y, op=affine, algorithm=name)
        except collplan.CollplanError as e:
            return "" if sched.needs_commutative and "commutative" in str(e) else f"refused: {e}"
        # a schedule that needs commutativity may still run: the runtime then uses the algorithm's rank-consistent
        # variant (exact for any operation, e.g. nway_dissemination forward=contributions); the result decides
        want = affine_values(0, 7)
        for r in range(1, P):
            v = affine_values(r, 7)
            want["a"], want["b"] = want["a"] * v["a"] % PRIME, (want["a"] * v["b"] + want["b"]) % PRIME
        return "" if np.array_equal(y, want) else "wrong result"


@case("split-phase allreduce, test() loop, then persistent restart")
def _():
    x, y = np.full(5000, me + 1.0), np.zeros(5000)
    req = cmpi.iallreduce(comm, x, y, algorithm="ring")
    polls = 0
    while not req.test():
        polls += 1
    if not np.all(y == P * (P + 1) / 2):
        return "first run wrong"
    x[:] = 2.0
    req.start()
    req.wait()
    return "" if np.all(y == 2.0 * P) else "restart wrong"


@case("two overlapping requests on one communicator")
def _():
    a, b = np.full(100, float(me)), np.full(100, 1.0)
    ya, yb = np.zeros(100), np.zeros(100)
    ra = cmpi.iallreduce(comm, a, ya, algorithm="recursive_doubling")
    rb = cmpi.iallreduce(comm, b, yb, algorithm="rabenseifner")
    rb.wait()
    ra.wait()
    return "" if np.all(ya == P * (P - 1) / 2) and np.all(yb == P) else "wrong result"


@case("in place (None and MPI.IN_PLACE)")
def _():
    y = np.full(10, me + 1.0)
    cmpi.allreduce(comm, None, y, algorithm="ring")
    out = np.zeros(3 * P, np.int32)
    out[3 * me:3 * me + 3] = me
    cmpi.allgather(comm, MPI.IN_PLACE, out, algorithm="bruck")
    ok = np.all(y == P * (P + 1) / 2) and np.array_equal(out, np.repeat(np.arange(P, dtype=np.int32), 3))
    return "" if ok else "wrong result"


@case("barrier, split-phase barrier, plan cache hits")
def _():
    cmpi.barrier(comm, algorithm="dissemination", n=2)
    before = cmpi.cache_stats(comm)
    r = cmpi.ibarrier(comm, algorithm="dissemination", n=2)
    r.wait()
    after = cmpi.cache_stats(comm)
    return "" if r.plan_was_cached and after["hits"] == before["hits"] + 1 else f"cache {before} -> {after}"


@case("pack and datatype modes agree")
def _():
    out1, out2 = np.zeros(4 * P, np.uint8), np.zeros(4 * P, np.uint8)
    cmpi.allgather(comm, pattern(me, 4), out1, algorithm="bruck", mode="pack")
    cmpi.allgather(comm, pattern(me, 4), out2, algorithm="bruck", mode="datatype")
    want = np.concatenate([pattern(r, 4) for r in range(P)])
    return "" if np.array_equal(out1, want) and np.array_equal(out2, want) else "wrong result"


@case("errors are CollplanError with one line")
def _():
    for bad in (lambda: cmpi.allgather(comm, np.zeros(3, np.uint8), np.zeros(3 * P + 1, np.uint8)),
                lambda: cmpi.allreduce(comm, np.zeros(3), np.zeros(3), algorithm="allreduce/nonexistent"),
                lambda: cmpi.barrier(comm, algorithm="dissemination", n=0)):
        try:
            bad()
        except collplan.CollplanError as e:
            if "\n" in str(e):
                return f"multi-line error {e!r}"
            continue
        return "no error raised"
    return ""


affine.Free()
# algorithm="auto": the wisdom file decides (per size range and operation); no entry means the library's own.
import json, os, tempfile  # noqa: E401,E402

_wisdom_dir = tempfile.mkdtemp(prefix=f"collplan-wisdom-{me}-")
WISDOM = os.path.join(_wisdom_dir, "w.json")
with open(WISDOM, "w") as f:
    json.dump({"format": "collplan-wisdom/1", "entries": [
        {"collective": "allreduce", "ranks": P, "op": "sum", "max_bytes": 1024, "algorithm": "allreduce/ring"},
        {"collective": "allreduce", "ranks": P, "op": "max", "algorithm": "allreduce/recursive_doubling"},
        {"collective": "allgather", "ranks": P, "min_bytes": 16, "algorithm": "bruck"},
        {"collective": "barrier", "ranks": P, "algorithm": "barrier/dissemination", "params": {"n": 2}}]}, f)


@case("auto: wisdom by size and operation, native outside it")
def _():
    x = np.arange(8.0) + me
    got = []
    for n, op in ((8, MPI.SUM), (512, MPI.SUM), (8, MPI.MAX)):
        y = np.zeros(n)
        xs = np.resize(x, n)
        got.append(cmpi.allreduce(comm, xs, y, op, algorithm="auto", wisdom=WISDOM))
        want = sum(np.resize(np.arange(8.0) + r, n) for r in range(P)) if op == MPI.SUM else \
            np.resize(np.arange(8.0) + P - 1, n)
        if not np.array_equal(y, want):
            return f"wrong allreduce result with {got[-1]}"
    want_algs = ["allreduce/ring", "native", "allreduce/recursive_doubling"]
    return "" if got == want_algs else f"chose {got}, expected {want_algs}"


@case("auto: allgather, barrier, and COLLPLAN_WISDOM")
def _():
    out = np.zeros(P * 32, np.uint8)
    small = np.zeros(P * 4, np.uint8)
    os.environ["COLLPLAN_WISDOM"] = WISDOM
    try:
        a = cmpi.allgather(comm, pattern(me, 32), out, algorithm="auto")
        b = cmpi.allgather(comm, pattern(me, 4), small, algorithm="auto")
        c = cmpi.barrier(comm, algorithm="auto")
    finally:
        del os.environ["COLLPLAN_WISDOM"]
    if not np.array_equal(out, np.concatenate([pattern(r, 32) for r in range(P)])):
        return "wrong allgather result"
    if not np.array_equal(small, np.concatenate([pattern(r, 4) for r in range(P)])):
        return "wrong native allgather result"
    want = ["allgather/bruck", "native", "barrier/dissemination"]
    return "" if [a, b, c] == want else f"chose {[a, b, c]}, expected {want}"


@case("auto: unreadable wisdom is a clear error")
def _():
    try:
        cmpi.barrier(comm, algorithm="auto", wisdom=os.path.join(_wisdom_dir, "missing.json"))
    except collplan.CollplanError as e:
        return "" if "cannot read wisdom file" in str(e) else f"unexpected message: {e}"
    return "no error"


import shutil  # noqa: E402

shutil.rmtree(_wisdom_dir, ignore_errors=True)
import mpi4py_collectives  # noqa: E402,F401 -- bcast, gather, scatter, allgatherv, reduce, reduce_scatter(_block)
passed = sum(results)
if me == 0:
    print(f"mpi4py_api P={P}: {passed} passed, {len(results) - passed} failed", flush=True)
sys.exit(0 if passed == len(results) else 1)
