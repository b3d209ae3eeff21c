"""The rooted and vector collectives through collplan.mpi under mpirun: bcast, gather, scatter, allgatherv, reduce,
reduce_scatter_block and reduce_scatter -- every registered algorithm that runs at this P with real data against a
serial computation (roots 0, P/2 and P-1; count 0; uneven counts with zeros and displacements reversed with gaps;
in place; buffers that are significant only at the root passed as None elsewhere; int64 and float64 sums and the
non-commutative affine composition), the blocking calls' cache, split-phase and persistent requests,
algorithm="auto" (wisdom and mpi4py's native fallback) and errors. mpi4py_api.py imports it; test_mpi.py also
runs it alone for more P. Run alone it prints "mpi4py_collectives P=N: K passed, M failed" on rank 0 and exits 1 on
any failure."""
import json
import os
import shutil
import sys
import tempfile

import numpy as np

import collplan
from collplan import mpi as cmpi

from mpi_cases import MPI, P, case, comm, me, results

PRIME = 1000003
ROOTS = sorted({0, P // 2, P - 1})
AFF = np.dtype([("a", np.int64), ("b", np.int64)])


def wrong_refusal(checks) -> str:
    """"" when each (call, fragment) raises a one-line CollplanError containing its fragment, else what went wrong."""
    for call, what in checks:
        try:
            call()
        except collplan.CollplanError as e:
            if what not in str(e) or "\n" in str(e):
                return f"unexpected message {e!r} (wanted {what!r})"
            continue
        return f"no error ({what})"
    return ""


def pattern(key, n):
    return ((np.arange(n) * 7 + key * 131 + 1) % 251).astype(np.uint8)


def runnable(collective, root=0):
    return [a["name"] for a in collplan.algorithms(collective) if not cmpi.applies(collective, a["name"], P, root=root)]


def uneven(shift=0):
    """Per-rank counts with zeros (every third rank contributes nothing), the same on every rank."""
    return [((j + shift) % 3) * (j + 2) for j in range(P)]


def gapped(counts):
    """Displacements in reverse rank order with a gap of one element before each block; the buffer's size."""
    displs, off = [0] * P, 0
    for j in reversed(range(P)):
        displs[j] = off + 1
        off += counts[j] + 1
    return displs, off


def ints(r, n):
    return (np.arange(n, dtype=np.int64) * 3 + r * 7 + 1) % 1000


def floats(r, n):
    return np.arange(n) * 0.1 + r * 1.3 + 0.7


def affine(r, n):
    v = np.zeros(n, AFF)
    v["a"], v["b"] = (r * 7 + np.arange(n) * 3 + 2) % PRIME, (r * 11 + np.arange(n) + 5) % PRIME
    return v


def compose(inbuf, inoutbuf, datatype):
    x, y = np.frombuffer(inbuf, dtype=AFF), np.frombuffer(inoutbuf, dtype=AFF)
    y["a"], y["b"] = x["a"] * y["a"] % PRIME, (x["a"] * y["b"] + x["b"]) % PRIME


def affine_total(parts):
    """The rank-ordered composition x_0 o x_1 o ... of the parts (each an AFF array)."""
    want = parts[0].copy()
    for v in parts[1:]:
        want["a"], want["b"] = want["a"] * v["a"] % PRIME, (want["a"] * v["b"] + want["b"]) % PRIME
    return want


AFFINE = MPI.Op.Create(compose, commute=False)


def needs_commutative(name, root=0):
    counts = [1] * P if name.startswith("reduce_scatter/") else None
    try:
        return collplan.schedule(name, ranks=P, root=root, counts=counts).needs_commutative
    except collplan.CollplanError:
        return True  # runs on another topology only: the runtime's own answer decides


def refused_or(name, collective, run, want_fn, root=0):
    """Runs a non-commutative reduction: the result must be the rank-ordered one, or the call refused because the
    schedule needs a commutative operation (an order-preserving schedule must run it)."""
    try:
        got = run()
    except collplan.CollplanError as e:
        return "" if "commutative" in str(e) and needs_commutative(name, root) else f"refused: {e}"
    want = want_fn()
    return "" if got is None or np.array_equal(got, want) else f"wrong {collective} with {name}"


# --------------------------------------------------------------------------------------------------- bcast
for root in ROOTS:
    for name in runnable("bcast", root):
        @case(f"{name} root={root}")
        def _(name=name, root=root):
            for n in (0, 13, 1000):
                buf = pattern(root, n) if me == root else np.zeros(n, np.uint8)
                if cmpi.bcast(comm, buf, root, algorithm=name) != name or not np.array_equal(buf, pattern(root, n)):
                    return f"n={n}: {buf[:6]}"
            x = floats(root, 7) if me == root else np.zeros(7)
            cmpi.bcast(comm, x, root=root, algorithm=name)
            return "" if np.array_equal(x, floats(root, 7)) else "float64 message"

# --------------------------------------------------------------------------------------------- gather, scatter
for root in ROOTS:
    for name in runnable("gather", root):
        @case(f"{name} root={root}")
        def _(name=name, root=root):
            for n in (0, 5, 300):
                out = np.zeros(P * n, np.uint8) if me == root else None
                cmpi.gather(comm, pattern(me, n), out, root, algorithm=name)
                if me == root and not np.array_equal(out, np.concatenate([pattern(r, n) for r in range(P)])):
                    return f"n={n}: {out[:8]}"
            out = np.full(3 * P, -1.0) if me == root else None  # in place: the root's block is in recvbuf already
            if me == root:
                out[3 * root:3 * root + 3] = root + 0.5
            cmpi.gather(comm, MPI.IN_PLACE if me == root else np.full(3, me + 0.5), out, root=root, algorithm=name)
            return "" if me != root or np.array_equal(out, np.repeat(np.arange(P) + 0.5, 3)) else f"in place {out}"

    for name in runnable("scatter", root):
        @case(f"{name} root={root}")
        def _(name=name, root=root):
            for n in (0, 5, 300):
                send = np.concatenate([pattern(100 + j, n) for j in range(P)]) if me == root else None
                out = np.zeros(n, np.uint8)
                cmpi.scatter(comm, send, out, root, algorithm=name)
                if not np.array_equal(out, pattern(100 + me, n)):
                    return f"n={n}: {out[:8]}"
            send = np.repeat(np.arange(P, dtype=np.int32) * 10, 2)
            out = None if me == root else np.zeros(2, np.int32)  # the root's block stays in sendbuf
            cmpi.scatter(comm, send if me == root else None, out, root=root, algorithm=name)
            ok = np.array_equal(send, np.repeat(np.arange(P, dtype=np.int32) * 10, 2)) if me == root else \
                np.array_equal(out, [me * 10] * 2)
            return "" if ok else f"in place: {out}"

# ------------------------------------------------------------------------------------------------- allgatherv
for name in runnable("allgatherv"):
    @case(f"{name} uneven counts with zeros, gapped reversed displacements, in place")
    def _(name=name):
        for shift in (0, 1):
            counts = uneven(shift)
            displs, size = gapped(counts)
            out = np.full(size, 255, np.uint8)
            cmpi.allgatherv(comm, pattern(me, counts[me]), out, counts, displs, algorithm=name)
            want = np.full(size, 255, np.uint8)
            for j in range(P):
                want[displs[j]:displs[j] + counts[j]] = pattern(j, counts[j])
            if not np.array_equal(out, want):
                return f"shift {shift}: {out} expected {want}"
        counts = [j + 1 for j in range(P)]
        out = np.zeros(sum(counts))
        off = sum(counts[:me])
        out[off:off + counts[me]] = me + 0.25
        cmpi.allgatherv(comm, None, out, counts, algorithm=name)  # packed displacements, in place
        want = np.concatenate([np.full(c, j + 0.25) for j, c in enumerate(counts)])
        return "" if np.array_equal(out, want) else f"in place: {out}"

# ------------------------------------------------------------------------------------------ alltoallv: DRS_N
def v_matrix(i, j, scale):
    """Elements rank i sends rank j: zeros on a diagonal band, uneven elsewhere."""
    return 0 if (i + 2 * j) % 4 == 3 else scale * (1 + (3 * i + j) % 5)


def v_block(i, j, n):
    return np.arange(n) * 0.5 + i * 1000 + j * 10


@case("alltoallv/drs_n: DRS_N's protocol with real data (zeros, gaps, large messages, in place, seeds, cached)")
def _():
    before = cmpi.cache_stats(comm)["blocking_hits"]
    for scale in (0, 1, 7, 5000):  # 5000: up to 200 KB per message (rendezvous)
        sc = [v_matrix(me, j, scale) for j in range(P)]
        rc = [v_matrix(r, me, scale) for r in range(P)]
        send = np.concatenate([v_block(me, j, sc[j]) for j in range(P)])
        rd, size = gapped(rc)
        for seed in (1, 2, 1):
            out = np.full(size, -1.0)
            ran = cmpi.alltoallv(comm, send, sc, out, rc, "drs_n", rdispls=rd, seed=seed)
            want = np.full(size, -1.0)
            for r in range(P):
                want[rd[r]:rd[r] + rc[r]] = v_block(r, me, rc[r])
            if ran != "alltoallv/drs_n" or not np.array_equal(out, want):
                return f"scale {scale} seed {seed}: {ran} {out[:6]} expected {want[:6]}"
    counts = [3] * P  # in place: recvbuf holds the blocks to send (float32, packed)
    buf = np.array([me * 100 + j for j in range(P) for _ in range(3)], np.float32)
    cmpi.alltoallv(comm, None, None, buf, counts, algorithm="alltoallv/drs_n")
    if not np.array_equal(buf, np.array([r * 100 + me for r in range(P) for _ in range(3)], np.float32)):
        return f"in place: {buf}"
    hits = cmpi.cache_stats(comm)["blocking_hits"] - before
    return "" if hits == 4 else f"blocking hits {hits}, expected 4 (the second seed=1 call of each size)"


@case("alltoallv/drs_n on a communicator that is freed after (its window goes with it), and its errors")
def _():
    sub = comm.Dup()
    out = np.zeros(P, np.int64)
    cmpi.alltoallv(sub, np.arange(P, dtype=np.int64) + 10 * me, [1] * P, out, [1] * P, algorithm="drs_n")
    sub.Free()
    if not np.array_equal(out, np.arange(P) * 10 + me):
        return f"on a duplicate: {out}"
    x, y = np.ones(P), np.zeros(P)
    return wrong_refusal(((lambda: cmpi.ialltoallv(comm, x, [1] * P, y, [1] * P, "drs_n"), "not a schedule a request"),
                       (lambda: cmpi.alltoallv_init(comm, x, [1] * P, y, [1] * P, "drs_n"), "blocking"),
                       (lambda: cmpi.alltoallv(comm, x, [1] * P, y, [1] * P, "drs_n", depth=2), "no parameter 'depth'"),
                       (lambda: cmpi.alltoallv(comm, x, [1] * P, y, [1] * P, "drs_n", seed="x"), "seed 'x'"),
                       (lambda: cmpi.alltoallv(comm, np.ones(2 * P), [2] * P, y, [1] * P, "drs_n"),
                        "sends 16 bytes" if P > 1 else "to itself")))

# ----------------------------------------------------------------------------------------------------- reduce
for root in ROOTS:
    for name in runnable("reduce", root):
        @case(f"{name} root={root}: int64 and float64 sums, in place, non-commutative")
        def _(name=name, root=root):
            for n in (0, 1, P + 3, 1001):
                y = np.zeros(n, np.int64) if me == root else None
                cmpi.reduce(comm, ints(me, n), y, MPI.SUM, root, algorithm=name)
                if me == root and not np.array_equal(y, sum(ints(r, n) for r in range(P))):
                    return f"int64 n={n}: {y[:4]}"
            y = floats(me, 50) if me == root else None
            cmpi.reduce(comm, None if me == root else floats(me, 50), y, root=root, algorithm=name)  # in place
            if me == root and not np.allclose(y, sum(floats(r, 50) for r in range(P)), rtol=1e-12):
                return f"float64 in place: {y[:4]}"
            out = np.zeros(9, AFF) if me == root else None
            return refused_or(name, "reduce",
                              lambda: (cmpi.reduce(comm, affine(me, 9), out, AFFINE, root, algorithm=name), out)[1],
                              lambda: affine_total([affine(r, 9) for r in range(P)]) if me == root else None, root)

# ------------------------------------------------------------------------------------- reduce_scatter(_block)
for name in runnable("reduce_scatter_block"):
    @case(f"{name} int64 sums, in place, non-commutative")
    def _(name=name):
        for n in (0, 1, 7):
            y = np.zeros(n, np.int64)
            cmpi.reduce_scatter_block(comm, ints(me, P * n), y, MPI.SUM, algorithm=name)
            if not np.array_equal(y, sum(ints(r, P * n) for r in range(P))[me * n:(me + 1) * n]):
                return f"n={n}: {y}"
        buf = ints(me, 3 * P)
        cmpi.reduce_scatter_block(comm, MPI.IN_PLACE, buf, algorithm=name)  # the result in the first block
        if not np.array_equal(buf[:3], sum(ints(r, 3 * P) for r in range(P))[3 * me:3 * me + 3]):
            return f"in place: {buf[:3]}"
        y = np.zeros(4, AFF)
        return refused_or(name, "reduce_scatter_block",
                          lambda: (cmpi.reduce_scatter_block(comm, affine(me, 4 * P), y, AFFINE, algorithm=name), y)[1],
                          lambda: affine_total([affine(r, 4 * P) for r in range(P)])[4 * me:4 * me + 4])

for name in runnable("reduce_scatter"):
    @case(f"{name} uneven counts with zeros, in place, non-commutative")
    def _(name=name):
        for shift in (0, 2):
            counts = uneven(shift)
            total, off = sum(counts), sum(counts[:me])
            y = np.zeros(counts[me], np.int64)
            cmpi.reduce_scatter(comm, ints(me, total), y, counts, algorithm=name)
            if not np.array_equal(y, sum(ints(r, total) for r in range(P))[off:off + counts[me]]):
                return f"shift {shift}: {y}"
        counts = [j % 2 + 1 for j in range(P)]
        total, off = sum(counts), sum(counts[:me])
        buf = floats(me, total)
        cmpi.reduce_scatter(comm, None, buf, counts, MPI.SUM, algorithm=name)
        if not np.allclose(buf[:counts[me]], sum(floats(r, total) for r in range(P))[off:off + counts[me]], rtol=1e-12):
            return f"float64 in place: {buf[:counts[me]]}"
        y = np.zeros(counts[me], AFF)
        return refused_or(name, "reduce_scatter",
                          lambda: (cmpi.reduce_scatter(comm, affine(me, total), y, counts, AFFINE, algorithm=name), y)[1],
                          lambda: affine_total([affine(r, total) for r in range(P)])[off:off + counts[me]])


# ----------------------------------------------------------------------------------- requests, auto, errors
@case("split-phase: ibcast test() loop, persistent restart; ireduce_scatter_block; gather_init not started")
def _():
    root = P - 1
    buf = np.full(5000, 7.0) if me == root else np.zeros(5000)
    req = cmpi.ibcast(comm, buf, root, algorithm="scatter_ring_allgather")
    while not req.test():
        pass
    if not np.all(buf == 7.0):
        return "first run"
    if me == root:
        buf[:] = 9.0
    req.start()
    req.wait()
    if not np.all(buf == 9.0):
        return "restart"
    y = np.zeros(3)
    r2 = cmpi.ireduce_scatter_block(comm, np.full(3 * P, me + 1.0), y, algorithm="recursive_halving")
    g = cmpi.gather_init(comm, np.full(2, me, np.int16), np.zeros(2 * P, np.int16) if me == 0 else None)
    r2.wait()
    if g.active or not np.all(y == P * (P + 1) / 2):
        return f"reduce_scatter_block {y}, gather active {g.active}"
    g.start().wait()
    return ""


@case("blocking calls hit the cache (root and counts in the key), with null buffers off the root")
def _():
    before = cmpi.cache_stats(comm)["blocking_hits"]
    counts = uneven(1)
    for i in range(3):
        for root in ROOTS:
            y = np.zeros(4, np.int64) if me == root else None
            cmpi.reduce(comm, np.full(4, me + i, np.int64), y, root=root)
            if me == root and not np.all(y == P * (P - 1) // 2 + P * i):
                return f"reduce root {root} call {i}: {y}"
            out = np.zeros(2 * P, np.int32) if me == root else None
            cmpi.gather(comm, np.full(2, me + i, np.int32), out, root)
            if me == root and not np.array_equal(out, np.repeat(np.arange(P, dtype=np.int32) + i, 2)):
                return f"gather root {root} call {i}: {out}"
            recv = np.zeros(1, np.int32) if me != root else None
            cmpi.scatter(comm, np.arange(P, dtype=np.int32) + i if me == root else None, recv, root)
            if me != root and recv[0] != me + i:
                return f"scatter root {root} call {i}: {recv}"
        out = np.zeros(sum(counts), np.uint8)
        cmpi.allgatherv(comm, pattern(me + i, counts[me]), out, counts)
        if not np.array_equal(out, np.concatenate([pattern(j + i, c) for j, c in enumerate(counts)])):
            return f"allgatherv call {i}"
    hits = cmpi.cache_stats(comm)["blocking_hits"] - before
    return "" if hits == 2 * (3 * len(ROOTS) + 1) else f"{hits} hits, expected {2 * (3 * len(ROOTS) + 1)}"


@case("algorithm='auto' without wisdom: mpi4py's native collectives, in place and off-root None, cached")
def _():
    for i in range(2):  # the second round runs the cached native requests
        for root in ROOTS:
            buf = np.arange(6.0) + i if me == root else np.zeros(6)
            got = [cmpi.bcast(comm, buf, root, "auto")]
            out = np.zeros(2 * P) if me == root else None
            if me == root:
                out[2 * root:2 * root + 2] = root
            got.append(cmpi.gather(comm, MPI.IN_PLACE if me == root else np.full(2, float(me)), out, root, "auto"))
            send = np.repeat(np.arange(P, dtype=np.int64), 3) if me == root else None
            recv = None if me == root else np.zeros(3, np.int64)
            got.append(cmpi.scatter(comm, send, recv, root, "auto"))
            y = np.full(5, float(me)) if me == root else None
            got.append(cmpi.reduce(comm, None if me == root else np.full(5, float(me)), y, MPI.MAX, root, "auto"))
            ok = np.array_equal(buf, np.arange(6.0) + i) and (me != root or (
                np.array_equal(out, np.repeat(np.arange(P, dtype=float), 2)) and np.all(y == P - 1))) and \
                (me == root or np.all(recv == me))
            if not ok or got != ["native"] * 4:
                return f"root {root} round {i}: {got}"
        counts = uneven(2)
        out = np.zeros(sum(counts), np.int16)
        out[sum(counts[:me]):sum(counts[:me + 1])] = me
        cmpi.allgatherv(comm, None, out, counts, algorithm="auto")
        buf = np.full(2 * P, me + 1, np.int64)
        cmpi.reduce_scatter_block(comm, None, buf, algorithm="auto")
        y = np.zeros(counts[me], np.int64)
        cmpi.reduce_scatter(comm, np.ones(sum(counts), np.int64), y, counts, algorithm="auto")
        if not (np.array_equal(out, np.repeat(np.arange(P, dtype=np.int16), counts)) and
                np.all(buf[:2] == P * (P + 1) // 2) and np.all(y == P)):
            return f"vector collectives round {i}: {out} {buf[:2]} {y}"
    return ""


_wisdom_dir = tempfile.mkdtemp(prefix=f"collplan-wisdom-c{me}-")
WISDOM = os.path.join(_wisdom_dir, "w.json")
with open(WISDOM, "w") as f:
    json.dump({"format": "collplan-wisdom/1", "entries": [
        {"collective": "bcast", "ranks": P, "max_bytes": 64, "algorithm": "bcast/linear"},
        {"collective": "bcast", "ranks": P, "algorithm": "bcast/scatter_ring_allgather"},
        {"collective": "reduce", "ranks": P, "op": "sum", "algorithm": "reduce/linear"},
        {"collective": "allgatherv", "ranks": P, "min_bytes": 4, "algorithm": "allgatherv/bruck"},
        {"collective": "reduce_scatter", "ranks": P, "op": "sum", "algorithm": "reduce_scatter/linear"}]}, f)


@case("algorithm='auto' with wisdom: by collective, size (allgatherv, reduce_scatter: mean bytes per rank), op")
def _():
    got = []
    for n in (8, 100):
        buf = np.arange(n, dtype=np.uint8) if me == 0 else np.zeros(n, np.uint8)
        got.append(cmpi.bcast(comm, buf, algorithm="auto", wisdom=WISDOM))
        if not np.array_equal(buf, np.arange(n, dtype=np.uint8)):
            return f"bcast {n}"
    for op in (MPI.SUM, MPI.MAX):
        y = np.zeros(3) if me == 0 else None
        got.append(cmpi.reduce(comm, np.full(3, me + 1.0), y, op, algorithm="auto", wisdom=WISDOM))
        if me == 0 and not np.all(y == (P * (P + 1) / 2 if op == MPI.SUM else P)):
            return f"reduce {y}"
    for per_rank in (1, 8):  # mean bytes per rank 1 (no entry: native) and 8
        counts = [per_rank * 2 if j % 2 else 0 for j in range(P)]
        counts[0] += per_rank * P - sum(counts)  # the mean stays per_rank
        out = np.zeros(sum(counts), np.uint8)
        got.append(cmpi.allgatherv(comm, pattern(me, counts[me]), out, counts, algorithm="auto", wisdom=WISDOM))
        if not np.array_equal(out, np.concatenate([pattern(j, c) for j, c in enumerate(counts)])):
            return f"allgatherv {per_rank}"
    y = np.zeros(1, np.int64)
    got.append(cmpi.reduce_scatter(comm, np.ones(P, np.int64), y, [1] * P, algorithm="auto", wisdom=WISDOM))
    want = ["bcast/linear", "bcast/scatter_ring_allgather", "reduce/linear", "native", "native", "allgatherv/bruck",
            "reduce_scatter/linear"]
    return "" if got == want and y[0] == P else f"chose {got}, expected {want}"


@case("errors: CollplanError naming the value and what is allowed")
def _():
    checks = [
        (lambda: cmpi.bcast(comm, np.zeros(4), root=P), f"root {P} is not a rank of this communicator (allowed: 0..{P - 1})"),
        (lambda: cmpi.reduce(comm, np.zeros(4), np.zeros(4), root=-1), "root -1"),
        (lambda: cmpi.allgatherv(comm, np.zeros(1), np.zeros(P), [1] * (P + 1)), f"recvcounts has {P + 1} entries"),
        (lambda: cmpi.reduce_scatter(comm, np.zeros(P), np.zeros(1), [1] * P + [0]), "allowed: one per rank"),
        (lambda: cmpi.allgatherv(comm, np.zeros(1), np.zeros(P - 1 if P > 1 else 0), [1] * P), "beyond the buffer"),
        (lambda: cmpi.gather(comm, np.zeros(2), np.zeros(2 * P + 1), root=me), "recvbuf has"),
        (lambda: cmpi.scatter(comm, np.zeros(3 * P), None, root=(me + 1) % P) if P > 1 else
         cmpi.scatter(comm, np.zeros(3), np.zeros(2)), "recvbuf"),
        (lambda: cmpi.reduce_scatter_block(comm, np.zeros(3 * P - 1), np.zeros(3)), "must be"),
        (lambda: cmpi.bcast(comm, np.zeros(4), algorithm="bcast/nonexistent"), "nonexistent"),
    ]
    return wrong_refusal(checks)


shutil.rmtree(_wisdom_dir, ignore_errors=True)
AFFINE.Free()

if __name__ == "__main__":
    passed = sum(results)
    if me == 0:
        print(f"mpi4py_collectives P={P}: {passed} passed, {len(results) - passed} failed", flush=True)
    sys.exit(0 if passed == len(results) else 1)
