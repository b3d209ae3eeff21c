"""Run collectives for real through collplan's executor, with mpi4py communicators and NumPy arrays.

Blocking::

    from mpi4py import MPI
    import numpy as np
    from collplan import mpi as cmpi
    x = np.arange(1000.0); y = np.empty_like(x)
    cmpi.allreduce(MPI.COMM_WORLD, x, y, op=MPI.SUM, algorithm="rabenseifner")
    cmpi.allgather(MPI.COMM_WORLD, block, out, algorithm="bruck")

A blocking call reuses the request that the same call on the same communicator built before (bound to the new
buffers; see docs/runtime.md): a small one costs about what mpi4py's own blocking collective costs.

Split-phase (the request can be started again: a persistent plan)::

    req = cmpi.iallreduce(MPI.COMM_WORLD, x, y, algorithm="ring")   # started
    while not req.test():                                            # advances without blocking
        do_other_work()
    req.start(); req.wait()                                          # run it again on the same buffers

``algorithm="auto"`` takes the algorithm from a wisdom file (``wisdom=PATH``, else the one named by the
COLLPLAN_WISDOM environment variable; written by ``collplan plan --wisdom``, docs/planner.md): the first entry for
this collective, communicator size, operation, topology (a ``topology=`` parameter) and message size, as the
PMPI library reads it. No file, no matching entry or an entry "native": the MPI library's own collective (through
mpi4py's non-blocking call; the request's ``algorithm`` is then "native").

Every collective of schedule/collective.hpp: allgather, alltoall, alltoallv, allreduce, barrier, bcast, reduce,
reduce_scatter_block, reduce_scatter, allgatherv, gather, scatter -- each as a blocking function, `i<name>` (a
started request) and `<name>_init` (a request that is not started yet). Counts and displacements are in elements
of the arrays' dtype (integers); `root=` names the root of bcast, reduce, gather and scatter, and the buffers MPI
calls significant only at the root may be None elsewhere. Outputs are writable objects of the buffer protocol (NumPy
arrays; not lists), blocks are whole elements, and the ranks agree when a request is built: an argument error on one
rank (a root buffer too short) is every rank's error, as are algorithms or sizes that differ (docs/runtime.md). `sendbuf=None` (or MPI.IN_PLACE) means in place where MPI
allows it (scatter: the root's `recvbuf`).
Algorithm names are registry names, with or without the collective ("ring" or "allgather/ring"); keyword
arguments are the algorithm's parameters (e.g. n=2 for barrier/dissemination, topology="hypercube:3"); `mode`
chooses how non-contiguous messages travel: "auto", "pack" or "datatype".

Two MPI implementations are supported side by side (Open MPI and MPICH, ABI-incompatible): collplan has one
extension module per implementation and loads the one matching the MPI library mpi4py uses. Before mpi4py is
imported, collplan points mpi4py at the MPI that launched the process (the mpirun environment tells: Open MPI
sets OMPI_COMM_WORLD_SIZE, MPICH's hydra PMI_SIZE), unless MPI4PY_LIBMPI / MPI4PY_MPIABI already choose one;
COLLPLAN_MPI=openmpi|mpich overrides the guess.
"""
from __future__ import annotations

import atexit
import importlib
import json
import operator
import os
import sys
import time
import zlib
from pathlib import Path

from . import _core
from ._core import CollplanError

DEFAULT_ALGORITHMS = {
    "allgather": "allgather/ring",
    "alltoall": "alltoall/pairwise",
    "allreduce": "allreduce/recursive_doubling",
    "barrier": "barrier/dissemination",
    "bcast": "bcast/binomial",
    "reduce": "reduce/binomial",
    "reduce_scatter_block": "reduce_scatter_block/pairwise",
    "reduce_scatter": "reduce_scatter/pairwise",
    "allgatherv": "allgatherv/ring",
    "gather": "gather/binomial",
    "scatter": "scatter/binomial",
}
_SONAME = {"openmpi": "libmpi.so.40", "mpich": "libmpi.so.12"}
_state: dict = {}


def homes() -> dict[str, str]:
    """MPI installations this collplan was built for: {abi: prefix}."""
    path = Path(__file__).with_name("_mpi_homes.json")
    if not path.exists():
        return {}
    return json.loads(path.read_text())


def _launcher_abi() -> str | None:
    env = os.environ
    if env.get("COLLPLAN_MPI"):
        return env["COLLPLAN_MPI"]
    if "OMPI_COMM_WORLD_SIZE" in env or "OMPI_COMMAND" in env:
        return "openmpi"
    if "PMI_SIZE" in env or "HYDI_CONTROL_FD" in env or "PMI_FD" in env:
        return "mpich"
    return None


def _library_abi(MPI) -> str:
    version = MPI.Get_library_version()
    if version.startswith("Open MPI"):
        return "openmpi"
    return "mpich"  # MPICH and its ABI family (Intel MPI, MVAPICH)


def library_version(MPI) -> str:
    """The first line of MPI_Get_library_version, printable characters only (Open MPI's ends in a NUL byte)."""
    lines = MPI.Get_library_version().splitlines() or [""]
    return " ".join("".join(c for c in lines[0] if c.isprintable()).split())


def pmpi_library(abi: str | None = None) -> str:
    """Path of libcollplan_pmpi.so for an MPI ('openmpi', 'mpich'; default: the one in use or launching us)."""
    abi = abi or (_state["abi"] if "abi" in _state else _launcher_abi()) or next(iter(homes()), None)
    if abi not in homes():
        raise CollplanError(f"no collplan MPI runtime for '{abi}' (built for: {', '.join(homes()) or 'none'})")
    path = Path(__file__).with_name("lib") / abi / "libcollplan_pmpi.so"
    if not path.exists():
        raise CollplanError(f"{path} is missing (reinstall collplan with its MPI runtime: make install)")
    return str(path)


def _launcher_int(ompi: str, pmi: str, default: int) -> int:
    try:
        return int(os.environ.get(ompi) or os.environ.get(pmi) or default)
    except ValueError:
        return default


def launched_size() -> int:
    """The number of ranks the launcher started (Open MPI's or MPICH's mpirun), 1 without one."""
    return _launcher_int("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", 1)


def launched_rank() -> int:
    """This process's rank in what the launcher started, 0 without one (known before MPI is initialised)."""
    return _launcher_int("OMPI_COMM_WORLD_RANK", "PMI_RANK", 0)


def wait_for_failing_ranks(timeout_s: float = 10.0) -> None:
    """Under mpirun, after a rank failed (rank 0 has printed the error line): wait until every rank has failed
    too, at most timeout_s, before this rank exits. Open MPI's launcher ends the job at the first non-zero exit
    and drops what rank 0 had not written by then: a rank whose error came first (rank 0 still starting) hid rank
    0's message behind the launcher's banner. MPI is started here if the failure came before it was (an argument
    error: every rank fails alike). When some rank does not arrive in time this one exits at once (os._exit: MPI
    cannot be finalized with the barrier pending), and the launcher ends the job."""
    if launched_size() < 2:
        return
    try:
        MPI, _ = backend()
        if not MPI.Is_initialized() or MPI.Is_finalized():
            return
        req = MPI.COMM_WORLD.Ibarrier()
    except Exception:  # noqa: BLE001 -- already failing: never mask the error being reported
        return
    deadline = time.monotonic() + timeout_s
    while not req.Test():
        if time.monotonic() > deadline:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(2)
        time.sleep(0.001)


def _point_mpi4py(built: dict, strict: bool) -> None:
    """Before mpi4py is first imported: point it at the libmpi of the MPI that launched us (mpi4py finds only a
    libmpi on the library path by itself, and MPICH's mpirun puts none there). strict: an MPI collplan was not
    built for is an error (else left to mpi4py)."""
    if "mpi4py.MPI" in sys.modules or os.environ.get("MPI4PY_LIBMPI") or os.environ.get("MPI4PY_MPIABI") or not built:
        return
    abi = _launcher_abi() or ("mpich" if "mpich" in built else next(iter(built)))
    if abi not in built:
        if strict:
            raise CollplanError(f"MPI '{abi}' is not one collplan was built for (allowed: {', '.join(built)})")
        return
    os.environ["MPI4PY_LIBMPI"] = str(Path(built[abi]) / "lib" / _SONAME[abi])


def backend():
    """(mpi4py.MPI, the collplan._mpi_<abi> module) for the MPI library in use; imports mpi4py if needed."""
    if "module" in _state:
        return _state["MPI"], _state["module"]
    built = homes()
    if not built:
        raise CollplanError("collplan was built without the MPI runtime (make install builds it for Open MPI and MPICH)")
    _point_mpi4py(built, strict=True)
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise CollplanError(f"mpi4py is needed for collplan.mpi ({e})") from None
    abi = _library_abi(MPI)
    if abi not in built:
        raise CollplanError(f"mpi4py uses {abi}, which collplan was not built for (built for: {', '.join(built)})")
    module = importlib.import_module(f"collplan._mpi_{abi}")
    _state.update(MPI=MPI, module=module, abi=abi)
    return MPI, module


# Importing collplan.mpi before mpi4py is enough for `from mpi4py import MPI` to load the right libmpi.
_point_mpi4py(homes(), strict=False)


# --------------------------------------------------------------------------------------------- helpers
def _handle(obj) -> int:
    MPI, _ = backend()
    return MPI._handleof(obj)


def _array(buf, name: str, writable: bool = False):
    """A buffer as a C-contiguous array. An output (writable) must be an object of the buffer protocol that the call
    writes into (a NumPy array, bytearray, array.array): a list would be copied and the result lost. An input may be
    anything np.asarray takes, but not Python objects (their bytes are addresses)."""
    import numpy as np

    if buf is None or buf is backend()[0].IN_PLACE:
        raise CollplanError(f"{name} is {'None' if buf is None else 'MPI.IN_PLACE'} (allowed here: an array)")
    if writable and not isinstance(buf, np.ndarray):  # (an array's own flags say below; datetime64 has no view)
        try:
            view = memoryview(buf)
        except TypeError:
            raise CollplanError(f"{name} is a {type(buf).__name__}, which the result cannot be written into (allowed: "
                                "a writable object of the buffer protocol, e.g. a NumPy array)") from None
        if view.readonly:
            raise CollplanError(f"{name} must be writable (a {type(buf).__name__} that is read-only)")
    a = np.asarray(buf)
    if a.dtype.hasobject:
        raise CollplanError(f"{name} holds Python objects (dtype {a.dtype}; allowed: numbers or fixed-size records)")
    if not a.flags.c_contiguous:
        raise CollplanError(f"{name} must be a C-contiguous array")
    if writable and not a.flags.writeable:
        raise CollplanError(f"{name} must be writable")
    return a


def _agreed(comm, collective: str, check):
    """Runs check() -> (values, shared) on every rank and agrees over the communicator (one small allreduce, made
    where a request is built, never on a blocking call's cache hit): if check raised on some rank, every rank raises
    the lowest such rank's error; if `shared` -- (what, value) pairs that must be alike on every rank (the algorithm
    chosen, its parameters, mode, root, message size) -- differs, every rank raises naming the first difference.
    Without it the ranks that passed their checks wait forever for one that raised."""
    import numpy as np

    try:
        values, shared = check()
        error = None
    except CollplanError as e:
        values, shared, error = None, (), str(e)
    except (TypeError, ValueError, OverflowError) as e:
        values, shared, error = None, (), f"{collective}: {e}"
    P = comm.Get_size()
    if P == 1 or comm.Is_inter():
        if error is not None:
            raise CollplanError(error)
        return values
    MPI, _ = backend()
    me = comm.Get_rank()
    digest = zlib.crc32(repr(shared).encode()) if error is None else 0
    mine = np.array([me if error is not None else P, digest, -digest], np.int64)
    got = np.empty(3, np.int64)
    comm.Allreduce(mine, got, MPI.MIN)
    if got[0] < P:  # the lowest failing rank's message, to every rank (only on this failure path)
        raise CollplanError(comm.bcast(error, root=int(got[0])) + (f" (on rank {got[0]})"))
    if got[1] != -got[2]:
        every = comm.allgather(shared)
        j = next(r for r in range(P) if every[r] != every[0])
        what, v0, vj = next((a[0], a[1], b[1]) for a, b in zip(every[0], every[j]) if a != b)
        raise CollplanError(f"{collective}: rank 0 passed {what} {_short(v0)} but rank {j} {_short(vj)} (allowed: the "
                            f"same {what} on every rank)")
    return values


def _short(v) -> str:
    text = repr(v)
    return text if len(text) <= 80 else text[:77] + "..."


def _shared(chosen, mode, *more) -> tuple:
    """What every rank's request must agree on: the algorithm chosen (None: native) and its parameters, the mode,
    and `more` (what, value) pairs."""
    algorithm, params = chosen if chosen is not None else ("native", {})
    return (("algorithm", algorithm), ("parameters", tuple(sorted(params.items()))), ("mode", mode), *more)


def _in_place(sendbuf) -> bool:
    MPI, _ = backend()
    return sendbuf is None or sendbuf is MPI.IN_PLACE


def _algorithm(collective: str, algorithm: str | None) -> str:
    name = algorithm or DEFAULT_ALGORITHMS.get(collective)
    if not name:
        raise CollplanError(f"{collective} needs an algorithm (see `collplan algorithms --collective {collective}`)")
    return name if "/" in name else f"{collective}/{name}"


def _params(params: dict) -> dict[str, str]:
    return {str(k): str(v) for k, v in params.items()}


def _root(comm, root) -> int:
    """The root rank, checked: an integer in 0 .. P-1 (every rank must pass the same)."""
    P = comm.Get_size()
    try:
        r = operator.index(root)
    except TypeError:
        raise CollplanError(f"root {root!r} is not an integer (allowed: 0..{P - 1})") from None
    if not 0 <= r < P:
        raise CollplanError(f"root {r} is not a rank of this communicator (allowed: 0..{P - 1})")
    return r


def _addr(a, none=None):
    """A buffer's address for the extension: `none` for no array (None: MPI_IN_PLACE, 0: a null buffer)."""
    return none if a is None else a.ctypes.data


def _as_bytes(buf):
    """An array's bytes as uint8 (the collectives of bytes hand mpi4py MPI_BYTE messages); None and MPI.IN_PLACE
    as they are."""
    import numpy as np

    if buf is None or buf is backend()[0].IN_PLACE:
        return buf
    return np.asarray(buf).reshape(-1).view(np.uint8)


def _choose(comm, collective: str, algorithm, nbytes: int, params: dict, wisdom, op=None):
    """(algorithm, params) to run, or None for the MPI library's own collective (algorithm="auto" without a
    matching wisdom entry, or "native" there). nbytes: the message size as wisdom sizes it (collective.hpp)."""
    if algorithm == "auto":
        chosen = _auto(comm, collective, nbytes, params, wisdom, op)
        if chosen is None:
            return None
        algorithm, params = chosen
    return _algorithm(collective, algorithm), _params(params)


def _reduction(dtype, op):
    """(MPI datatype, operation) of a reduction over elements of `dtype`: the predefined type of a plain dtype
    (MPI_SUM etc. are defined on those only), a committed struct otherwise; op None is MPI.SUM."""
    MPI, _ = backend()
    datatype = MPI._typedict.get(dtype.char) if dtype.fields is None else None
    if datatype is None:
        from mpi4py.util import dtlib
        datatype = dtlib.from_numpy_dtype(dtype).Commit()
    return datatype, MPI.SUM if op is None else op


def _same(send, out, what: str = "") -> None:
    """A reduction's sendbuf and recvbuf: the same dtype and number of elements."""
    if send.dtype != out.dtype or send.size != out.size:
        raise CollplanError(f"sendbuf ({send.dtype}, {send.size}) and recvbuf ({out.dtype}, {out.size}) differ{what}")


class Request:
    """A collplan collective in flight: start() / test() / wait(); restartable (persistent plan)."""

    def __init__(self, native, buffers, extra=()):
        self._native = native
        self._keep = buffers  # the arrays the executor reads and writes stay alive with the request
        self._extra = extra   # and what else it refers to (a committed datatype, the operation)

    def start(self) -> "Request":
        self._native.start()
        return self

    def test(self) -> bool:
        return self._native.test()

    def wait(self) -> None:
        self._native.wait()

    @property
    def active(self) -> bool:
        return self._native.active

    @property
    def algorithm(self) -> str:
        return self._native.algorithm

    @property
    def params(self) -> dict[str, str]:
        """The parameters the schedule was built with (a `measure` value replaced by the one chosen)."""
        text = self._native.params
        return dict(kv.split("=", 1) for kv in text.split(";") if "=" in kv)

    @property
    def plan_was_cached(self) -> bool:
        return self._native.plan_was_cached

    def _entry(self, ident: int) -> tuple:
        """This request as an entry of a blocking calls' cache (BlockingCache), without its buffers."""
        return self._native, self.algorithm, self._extra, ident

    def __repr__(self) -> str:
        return f"<collplan.mpi.Request {self.algorithm} {'active' if self.active else 'idle'}>"


class NativeRequest:
    """The MPI library's own collective behind the Request interface (algorithm="auto" chose "native"):
    `start(send, recv)` starts mpi4py's non-blocking call on those buffers (send None: in place)."""

    def __init__(self, start, buffers, extra=()):
        self._start, self._keep, self._extra, self._req = start, buffers, extra, None

    def start(self) -> "NativeRequest":
        self._req = self._start(*self._keep)
        return self

    def test(self) -> bool:
        if self._req is None:
            return True
        if self._req.Test():
            self._req = None
        return self._req is None

    def wait(self) -> None:
        if self._req is not None:
            self._req.Wait()
            self._req = None

    def _run(self, send, recv) -> None:
        """The blocking call on other buffers of the same shape (BlockingCache.run checked them)."""
        self._start(send, recv).Wait()

    def _entry(self, ident: int) -> tuple:
        return self._run, "native", self._extra, ident

    @property
    def active(self) -> bool:
        return self._req is not None

    algorithm = "native"
    params: dict[str, str] = {}
    plan_was_cached = False

    def __repr__(self) -> str:
        return f"<collplan.mpi.NativeRequest {'active' if self.active else 'idle'}>"


def _wisdom_text(path: str) -> str:
    """The wisdom file's text, parsed (and cached until the file changes)."""
    try:
        st = os.stat(path)
        key = (path, st.st_mtime_ns, st.st_size)
        if _state.get("wisdom_key") != key:
            from .limits import WISDOM_MAX_BYTES, read_text
            text = read_text(path, WISDOM_MAX_BYTES, "wisdom file", from_limit=False)
            try:
                _core.parse_wisdom(text)
            except CollplanError as e:
                raise CollplanError(f"wisdom file {path}: {e}") from None
            _state.update(wisdom_key=key, wisdom_text=text)
    except OSError as e:
        raise CollplanError(f"cannot read wisdom file {path}: {e.strerror}") from None
    return _state["wisdom_text"]


def _auto(comm, collective: str, nbytes: int, params: dict, wisdom: str | None, op=None):
    """(algorithm, params) from the wisdom for this call, or None for the MPI library's own collective."""
    path = wisdom or os.environ.get("COLLPLAN_WISDOM")
    if not path:
        return None
    _, mod = backend()
    op_name = mod.op_name(_handle(op)) if op is not None else ""
    e = _core.wisdom_lookup(_wisdom_text(path), collective, comm.Get_size(), nbytes, op_name,
                            str(params.get("topology", "")))
    if e is None or e["algorithm"] == "native":
        return None
    return e["algorithm"], {**e["params"], **_params(params)}  # the caller's parameters win


# ------------------------------------------------------------------------------------------ collectives
def _block_init(collective: str, comm, sendbuf, recvbuf, algorithm, mode, wisdom, params) -> Request:
    """allgather and alltoall: recvbuf holds P equal blocks; sendbuf one block (allgather) or P (alltoall)."""
    MPI, mod = backend()

    def check():
        P = comm.Get_size()
        out = _array(recvbuf, "recvbuf", writable=True)
        if out.size % P:
            raise CollplanError(f"recvbuf of {out.size} elements ({out.dtype}) is not {P} blocks of whole elements "
                                f"(allowed: a multiple of {P} elements)")
        block = out.nbytes // P
        want = block if collective == "allgather" else out.nbytes
        send = None
        if not _in_place(sendbuf):
            send = _array(sendbuf, "sendbuf")
            if send.nbytes != want:
                raise CollplanError(f"sendbuf has {send.nbytes} bytes but recvbuf expects {want}"
                                    + (" per rank" if collective == "allgather" else ""))
            if collective == "alltoall" and (send.nbytes // P) % send.itemsize:
                raise CollplanError(f"sendbuf of {send.size} elements ({send.dtype}) is not {P} blocks of whole "
                                    f"elements (allowed: a multiple of {P} elements)")
        chosen = _choose(comm, collective, algorithm, block, params, wisdom)
        return (out, send, block, chosen), _shared(chosen, mode, ("block bytes", block))

    out, send, block, chosen = _agreed(comm, collective, check)
    if chosen is None:
        start = comm.Iallgather if collective == "allgather" else comm.Ialltoall
        return NativeRequest(lambda s, r: start(MPI.IN_PLACE if s is None else s, r), (send, out))
    init = mod.allgather_init if collective == "allgather" else mod.alltoall_init
    return Request(init(_handle(comm), _addr(send), out.ctypes.data, block, *chosen, mode), (send, out))


def allgather_init(comm, sendbuf, recvbuf, algorithm: str | None = None, *, mode: str = "auto",
                   wisdom: str | None = None, **params) -> Request:
    return _block_init("allgather", comm, sendbuf, recvbuf, algorithm, mode, wisdom, params)


def alltoall_init(comm, sendbuf, recvbuf, algorithm: str | None = None, *, mode: str = "auto",
                  wisdom: str | None = None, **params) -> Request:
    return _block_init("alltoall", comm, sendbuf, recvbuf, algorithm, mode, wisdom, params)


def _displs(counts, displs):
    if displs is not None:
        return [int(d) for d in displs]
    out, off = [], 0
    for c in counts:
        out.append(off)
        off += int(c)
    return out


def _ints(values, name: str, P: int) -> list[int]:
    """A list of P integers >= 0 (alltoallv's counts or displacements), else a CollplanError naming it."""
    try:
        values = list(values)
    except TypeError:
        raise CollplanError(f"{name} must be a sequence of {P} integers (not a {type(values).__name__})") from None
    out = []
    for j, v in enumerate(values):
        try:
            out.append(operator.index(v))
        except TypeError:
            raise CollplanError(f"{name}[{j}] = {_short(v)} is not an integer (allowed: integers >= 0)") from None
    if len(out) != P:
        raise CollplanError(f"{name} has {len(out)} entries (allowed: one per rank, {P})")
    for j, v in enumerate(out):
        if v < 0:
            raise CollplanError(f"{name}[{j}] = {v} is negative (allowed: >= 0)")
    return out


def _vector(counts, displs, buf, cname: str, dname: str, P: int) -> tuple[list[int], list[int]]:
    """alltoallv's counts and displacements (default: packed) of one side, checked: P of each, none negative, and
    every block inside the buffer (elements)."""
    c = _ints(counts, cname, P)
    d = _displs(c, None) if displs is None else _ints(displs, dname, P)
    for j in range(P):
        if d[j] + c[j] > buf.size:
            raise CollplanError(f"{dname}[{j}] + {cname}[{j}] = {d[j]} + {c[j]} is beyond the buffer of {buf.size} "
                                "elements")
    return c, d


def alltoallv_init(comm, sendbuf, sendcounts, recvbuf, recvcounts, algorithm: str | None = None, *,
                   sdispls=None, rdispls=None, mode: str = "auto", wisdom: str | None = None, **params) -> Request:
    """Counts and displacements in elements of the arrays' dtype (displacements default to packed)."""
    import numpy as np

    MPI, mod = backend()
    P = comm.Get_size()

    def check():
        out = _array(recvbuf, "recvbuf", writable=True)
        item = out.itemsize
        send = None if _in_place(sendbuf) else _array(sendbuf, "sendbuf")
        if send is not None and send.itemsize != item:
            raise CollplanError(f"sendbuf ({send.dtype}) and recvbuf ({out.dtype}) must have the same element size")
        counts = _vector(recvcounts, rdispls, out, "recvcounts", "rdispls", P)
        sends = counts if send is None else _vector(sendcounts, sdispls, send, "sendcounts", "sdispls", P)
        chosen = _choose(comm, "alltoallv", algorithm, 0, params, wisdom)
        return (out, send, counts, sends, item, chosen), _shared(chosen, mode)

    try:
        local = check()
    except CollplanError as e:
        error = e
        local = None
    else:
        error = None
    # What rank j sends here (bytes) must be what this rank receives from j: the counts' matrix, transposed.
    sent_here = np.zeros(P, np.int64)
    if P > 1 and not comm.Is_inter():
        mine = np.array([c * local[0][4] for c in local[0][3][0]] if local else [-1] * P, np.int64)
        comm.Alltoall(mine, sent_here)

    def agree():
        if error is not None:
            raise error
        values, shared = local
        received = [c * values[4] for c in values[2][0]]
        if P > 1 and not comm.Is_inter() and -1 not in sent_here:
            for j in range(P):
                if sent_here[j] != received[j]:
                    raise CollplanError(f"rank {j} sends {sent_here[j]} bytes to rank {comm.Get_rank()}, which "
                                        f"receives {received[j]} (recvcounts[{j}] = {values[2][0][j]} elements of "
                                        f"{values[4]} bytes; allowed: the bytes rank {j} sends)")
        return values, shared

    out, send, counts, sends, item, chosen = _agreed(comm, "alltoallv", agree)
    sc, sd = ([v * item for v in x] for x in sends)
    rc, rd = ([v * item for v in x] for x in counts)
    if chosen is None:
        return NativeRequest(lambda s, r: comm.Ialltoallv(MPI.IN_PLACE if s is None else [s, sends], [r, counts]),
                             (send, out))
    native = mod.alltoallv_init(_handle(comm), _addr(send), sc, sd, out.ctypes.data, rc, rd, *chosen, mode)
    return Request(native, (send, out))


def allreduce_init(comm, sendbuf, recvbuf, op=None, algorithm: str | None = None, *, mode: str = "auto",
                   wisdom: str | None = None, **params) -> Request:
    MPI, mod = backend()

    def check():
        out = _array(recvbuf, "recvbuf", writable=True)
        send = None if _in_place(sendbuf) else _array(sendbuf, "sendbuf")
        if send is not None:
            _same(send, out)
        datatype, the_op = _reduction(out.dtype, op)
        chosen = _choose(comm, "allreduce", algorithm, out.nbytes, params, wisdom, the_op)
        return (out, send, datatype, the_op, chosen), _shared(chosen, mode, ("elements", out.size),
                                                              ("dtype", out.dtype.str))

    out, send, datatype, op, chosen = _agreed(comm, "allreduce", check)
    if chosen is None:
        return NativeRequest(lambda s, r: comm.Iallreduce(MPI.IN_PLACE if s is None else [s, datatype],
                                                          [r, datatype], op), (send, out), (datatype, op))
    native = mod.allreduce_init(_handle(comm), _addr(send), out.ctypes.data, out.size, MPI._handleof(datatype),
                                MPI._handleof(op), *chosen, mode)
    return Request(native, (send, out), (datatype, op))


def barrier_init(comm, algorithm: str | None = None, *, mode: str = "auto", wisdom: str | None = None,
                 **params) -> Request:
    _, mod = backend()

    def check():
        chosen = _choose(comm, "barrier", algorithm, 0, params, wisdom)
        return chosen, _shared(chosen, mode)

    chosen = _agreed(comm, "barrier", check)
    if chosen is None:
        return NativeRequest(lambda s, r: comm.Ibarrier(), (None, None))
    return Request(mod.barrier_init(_handle(comm), *chosen, mode), ())


# The rooted and vector collectives. Buffers that MPI calls significant only at the root (gather's and reduce's
# recvbuf, scatter's sendbuf) are ignored elsewhere and may be None there.
def bcast_init(comm, buf, root: int = 0, algorithm: str | None = None, *, mode: str = "auto",
               wisdom: str | None = None, **params) -> Request:
    """buf: the message at the root, where every rank receives it."""
    _, mod = backend()

    def check():
        r = _root(comm, root)
        a = _array(buf, "buf", writable=comm.Get_rank() != r)
        chosen = _choose(comm, "bcast", algorithm, a.nbytes, params, wisdom)
        return (r, a, chosen), _shared(chosen, mode, ("root", r), ("message bytes", a.nbytes))

    root, a, chosen = _agreed(comm, "bcast", check)
    if chosen is None:
        return NativeRequest(lambda s, r: comm.Ibcast(_as_bytes(r), root), (None, a))
    return Request(mod.bcast_init(_handle(comm), a.ctypes.data, a.nbytes, root, *chosen, mode), (None, a))


def _blocks(P: int, whole, part, whole_name: str, part_name: str) -> int:
    """Bytes per rank of gather or scatter: `part` (one rank's block; None: in place at the root) and `whole` (the
    root's P blocks; None elsewhere) agree."""
    if part is None:
        if whole.size % P:
            raise CollplanError(f"{whole_name} of {whole.size} elements ({whole.dtype}) is not {P} blocks of whole "
                                f"elements (allowed: a multiple of {P} elements)")
        return whole.nbytes // P
    if whole is not None and whole.nbytes != P * part.nbytes:
        raise CollplanError(f"{whole_name} has {whole.nbytes} bytes (allowed: {P} blocks of the {part.nbytes} bytes "
                            f"of {part_name}, {P * part.nbytes})")
    if whole is not None and part.nbytes % whole.itemsize:
        raise CollplanError(f"{whole_name}'s blocks of {part.nbytes} bytes ({part_name}) cut its {whole.dtype} "
                            f"elements of {whole.itemsize} bytes (allowed: blocks of whole elements)")
    return part.nbytes


def gather_init(comm, sendbuf, recvbuf, root: int = 0, algorithm: str | None = None, *, mode: str = "auto",
                wisdom: str | None = None, **params) -> Request:
    """recvbuf (root only) receives P blocks of sendbuf's bytes in rank order; MPI.IN_PLACE/None as the root's
    sendbuf: its block is already in place in recvbuf."""
    MPI, mod = backend()

    def check():
        r = _root(comm, root)
        at_root = comm.Get_rank() == r
        out = _array(recvbuf, "recvbuf at the root", writable=True) if at_root else None
        send = None if at_root and _in_place(sendbuf) else _array(sendbuf, "sendbuf (in place: at the root only)")
        block = _blocks(comm.Get_size(), out, send, "recvbuf", "sendbuf")
        chosen = _choose(comm, "gather", algorithm, block, params, wisdom)
        return (r, out, send, block, chosen), _shared(chosen, mode, ("root", r), ("block bytes", block))

    root, out, send, block, chosen = _agreed(comm, "gather", check)
    if chosen is None:
        return NativeRequest(lambda s, r: comm.Igather(MPI.IN_PLACE if s is None else _as_bytes(s), _as_bytes(r),
                                                       root), (send, out))
    native = mod.gather_init(_handle(comm), _addr(send), _addr(out, 0), block, root, *chosen, mode)
    return Request(native, (send, out))


def scatter_init(comm, sendbuf, recvbuf, root: int = 0, algorithm: str | None = None, *, mode: str = "auto",
                 wisdom: str | None = None, **params) -> Request:
    """sendbuf (root only) holds P blocks; rank j receives block j in recvbuf. MPI.IN_PLACE/None as the root's
    recvbuf: the root's own block stays in sendbuf."""
    MPI, mod = backend()

    def check():
        r = _root(comm, root)
        at_root = comm.Get_rank() == r
        send = _array(sendbuf, "sendbuf at the root") if at_root else None
        out = None if at_root and _in_place(recvbuf) else _array(recvbuf, "recvbuf (in place: at the root only)", True)
        block = _blocks(comm.Get_size(), send, out, "sendbuf", "recvbuf")
        chosen = _choose(comm, "scatter", algorithm, block, params, wisdom)
        return (r, send, out, block, chosen), _shared(chosen, mode, ("root", r), ("block bytes", block))

    root, send, out, block, chosen = _agreed(comm, "scatter", check)
    if chosen is None:
        return NativeRequest(lambda s, r: comm.Iscatter(_as_bytes(s), MPI.IN_PLACE if r is None else _as_bytes(r),
                                                        root), (send, out))
    native = mod.scatter_init(_handle(comm), _addr(send, 0), _addr(out), block, root, *chosen, mode)
    return Request(native, (send, out))


def allgatherv_init(comm, sendbuf, recvbuf, recvcounts, displs=None, algorithm: str | None = None, *,
                    mode: str = "auto", wisdom: str | None = None, **params) -> Request:
    """Rank j contributes recvcounts[j] elements, which every rank receives at displs[j] of recvbuf (elements of
    recvbuf's dtype; displacements default to packed); counts and displacements the same on every rank.
    MPI.IN_PLACE/None as sendbuf: this rank's contribution is already at its place in recvbuf."""
    MPI, mod = backend()
    P = comm.Get_size()

    def check():
        out = _array(recvbuf, "recvbuf", writable=True)
        counts, offs = _vector(recvcounts, displs, out, "recvcounts", "displs", P)
        send = None if _in_place(sendbuf) else _array(sendbuf, "sendbuf")
        mine = counts[comm.Get_rank()]
        if send is not None and send.nbytes != mine * out.itemsize:
            raise CollplanError(f"sendbuf has {send.nbytes} bytes but recvcounts[{comm.Get_rank()}] = {mine} elements "
                                f"of {out.itemsize} bytes are {mine * out.itemsize}")
        cb, db = [c * out.itemsize for c in counts], [d * out.itemsize for d in offs]
        chosen = _choose(comm, "allgatherv", algorithm, sum(cb) // P, params, wisdom)
        return (out, send, cb, db, chosen), _shared(chosen, mode, ("recvcounts in bytes", tuple(cb)))

    out, send, cb, db, chosen = _agreed(comm, "allgatherv", check)
    if chosen is None:
        return NativeRequest(lambda s, r: comm.Iallgatherv(MPI.IN_PLACE if s is None else _as_bytes(s),
                                                           [_as_bytes(r), cb, db, MPI.BYTE]), (send, out))
    native = mod.allgatherv_init(_handle(comm), _addr(send), out.ctypes.data, cb, db, *chosen, mode)
    return Request(native, (send, out))


def reduce_init(comm, sendbuf, recvbuf, op=None, root: int = 0, algorithm: str | None = None, *,
                mode: str = "auto", wisdom: str | None = None, **params) -> Request:
    """The root's recvbuf receives the reduction of every rank's sendbuf (MPI.IN_PLACE/None as the root's sendbuf:
    its input is in recvbuf)."""
    MPI, mod = backend()

    def check():
        r = _root(comm, root)
        at_root = comm.Get_rank() == r
        out = _array(recvbuf, "recvbuf at the root", writable=True) if at_root else None
        send = None if at_root and _in_place(sendbuf) else _array(sendbuf, "sendbuf (in place: at the root only)")
        if send is not None and out is not None:
            _same(send, out)
        ref = out if send is None else send
        datatype, the_op = _reduction(ref.dtype, op)
        chosen = _choose(comm, "reduce", algorithm, ref.nbytes, params, wisdom, the_op)
        return (r, out, send, ref, datatype, the_op, chosen), _shared(chosen, mode, ("root", r), ("elements", ref.size),
                                                                      ("dtype", ref.dtype.str))

    root, out, send, ref, datatype, op, chosen = _agreed(comm, "reduce", check)
    if chosen is None:
        return NativeRequest(lambda s, r: comm.Ireduce(MPI.IN_PLACE if s is None else [s, datatype],
                                                       None if r is None else [r, datatype], op, root),
                             (send, out), (datatype, op))
    native = mod.reduce_init(_handle(comm), _addr(send), _addr(out, 0), ref.size, MPI._handleof(datatype),
                             MPI._handleof(op), root, *chosen, mode)
    return Request(native, (send, out), (datatype, op))


def reduce_scatter_block_init(comm, sendbuf, recvbuf, op=None, algorithm: str | None = None, *, mode: str = "auto",
                              wisdom: str | None = None, **params) -> Request:
    """sendbuf holds P blocks of recvbuf's size; rank j receives the reduction of every rank's block j. In place
    (MPI.IN_PLACE/None as sendbuf): recvbuf holds the P blocks, and the result lands in its first block."""
    MPI, mod = backend()
    P = comm.Get_size()

    def check():
        out = _array(recvbuf, "recvbuf", writable=True)
        send = None if _in_place(sendbuf) else _array(sendbuf, "sendbuf")
        if send is None and out.size % P:
            raise CollplanError(f"recvbuf of {out.size} elements in place is not {P} equal blocks")
        if send is not None and (send.dtype != out.dtype or send.size != P * out.size):
            raise CollplanError(f"sendbuf ({send.dtype}, {send.size} elements) must be {P} blocks of recvbuf's "
                                f"({out.dtype}, {out.size}): {P * out.size} elements of {out.dtype}")
        count = out.size // P if send is None else out.size
        datatype, the_op = _reduction(out.dtype, op)
        chosen = _choose(comm, "reduce_scatter_block", algorithm, count * out.itemsize, params, wisdom, the_op)
        return (out, send, count, datatype, the_op, chosen), _shared(chosen, mode, ("elements per block", count),
                                                                     ("dtype", out.dtype.str))

    out, send, count, datatype, op, chosen = _agreed(comm, "reduce_scatter_block", check)
    if chosen is None:
        return NativeRequest(lambda s, r: comm.Ireduce_scatter_block(MPI.IN_PLACE if s is None else [s, datatype],
                                                                     [r, datatype], op), (send, out), (datatype, op))
    native = mod.reduce_scatter_block_init(_handle(comm), _addr(send), out.ctypes.data, count, MPI._handleof(datatype),
                                           MPI._handleof(op), *chosen, mode)
    return Request(native, (send, out), (datatype, op))


def reduce_scatter_init(comm, sendbuf, recvbuf, recvcounts, op=None, algorithm: str | None = None, *,
                        mode: str = "auto", wisdom: str | None = None, **params) -> Request:
    """sendbuf holds sum(recvcounts) elements; rank j receives in recvbuf (recvcounts[j] elements) the reduction
    of every rank's part j (counts the same on every rank). In place (MPI.IN_PLACE/None as sendbuf): recvbuf holds
    the input, and the result lands at its start."""
    MPI, mod = backend()
    P, me = comm.Get_size(), comm.Get_rank()

    def check():
        counts = _ints(recvcounts, "recvcounts", P)
        total = sum(counts)
        out = _array(recvbuf, "recvbuf", writable=True)
        send = None if _in_place(sendbuf) else _array(sendbuf, "sendbuf")
        if send is None and out.size < total:
            raise CollplanError(f"recvbuf of {out.size} elements in place is too small for the input (allowed: at "
                                f"least sum(recvcounts) = {total})")
        if send is not None and (send.dtype != out.dtype or send.size != total or out.size != counts[me]):
            raise CollplanError(f"sendbuf ({send.dtype}, {send.size}) and recvbuf ({out.dtype}, {out.size}) do not "
                                f"fit recvcounts (allowed: one dtype, {total} = sum(recvcounts) and {counts[me]} = "
                                f"recvcounts[{me}] elements)")
        datatype, the_op = _reduction(out.dtype, op)
        chosen = _choose(comm, "reduce_scatter", algorithm, total * out.itemsize // P, params, wisdom, the_op)
        return (counts, total, out, send, datatype, the_op, chosen), _shared(chosen, mode, ("recvcounts", tuple(counts)),
                                                                             ("dtype", out.dtype.str))

    counts, total, out, send, datatype, op, chosen = _agreed(comm, "reduce_scatter", check)
    if chosen is None:
        return NativeRequest(lambda s, r: comm.Ireduce_scatter(MPI.IN_PLACE if s is None else [s, datatype],
                                                               [r, datatype], counts, op), (send, out), (datatype, op))
    native = mod.reduce_scatter_init(_handle(comm), _addr(send), out.ctypes.data, counts, MPI._handleof(datatype),
                                     MPI._handleof(op), *chosen, mode)
    return Request(native, (send, out), (datatype, op))


def iallgather(*args, **kw) -> Request:
    return allgather_init(*args, **kw).start()


def ialltoall(*args, **kw) -> Request:
    return alltoall_init(*args, **kw).start()


def ialltoallv(*args, **kw) -> Request:
    return alltoallv_init(*args, **kw).start()


def iallreduce(*args, **kw) -> Request:
    return allreduce_init(*args, **kw).start()


def ibarrier(*args, **kw) -> Request:
    return barrier_init(*args, **kw).start()


def ibcast(*args, **kw) -> Request:
    return bcast_init(*args, **kw).start()


def igather(*args, **kw) -> Request:
    return gather_init(*args, **kw).start()


def iscatter(*args, **kw) -> Request:
    return scatter_init(*args, **kw).start()


def iallgatherv(*args, **kw) -> Request:
    return allgatherv_init(*args, **kw).start()


def ireduce(*args, **kw) -> Request:
    return reduce_init(*args, **kw).start()


def ireduce_scatter_block(*args, **kw) -> Request:
    return reduce_scatter_block_init(*args, **kw).start()


def ireduce_scatter(*args, **kw) -> Request:
    return reduce_scatter_init(*args, **kw).start()


# ---------------------------------------------------------------------------------------- blocking calls
# A blocking call runs the request that an earlier call with the same arguments built, bound to this call's buffers
# (Request::bind). Per communicator, requests by key: the function and every argument but the buffers' addresses
# (algorithm, parameters, mode, for "auto" the wisdom file's path, mtime and size; operation by identity; alltoallv's
# counts and displacements) plus each buffer's element format, element size and bytes (None: in place); at most
# _CACHE_LIMIT, least recently used dropped first. A nested or concurrent call with the key of a request that runs
# builds its own. Only alltoallv's request depends on other ranks' arguments (the count matrix): every call asks the
# ranks whether all hit the same entry (one small allreduce), else all build. Buffers without a C-contiguous buffer
# (lists) or unhashable arguments run uncached. A build agrees over the communicator (_agreed): a call that is new on
# every rank fails alike everywhere; one that hits a cached request on some ranks runs it there unchecked (asking on
# every call would cost an allreduce per call), so the buffers off the root are left out of the rooted calls' keys. The hot path is one call into the extension (BlockingCache.run); the
# cache is dropped when the communicator is freed, at MPI_Finalize and at exit.
_CACHE_LIMIT = 32
_caches: dict = {}  # communicator handle -> BlockingCache (python/bindings_mpi/mpi_module.cpp)
_NO_LAST = (object(), None)
_last = _NO_LAST  # the communicator (object) of the last call and its kept cache: spares the handle lookup
_keyval: list = []  # the attribute key whose delete callback drops a communicator's cache


def _cache_of(comm):
    """The communicator's kept cache, else a new one (kept once a request is kept in it: _keep)."""
    global _last
    handle = _handle(comm)
    cache = _caches.get(handle)
    if cache is None:
        MPI, mod = backend()
        return mod.BlockingCache(handle, MPI.IN_PLACE, _CACHE_LIMIT)
    _last = (comm, cache)
    return cache


def _drop(handle=None) -> None:
    """Drops a communicator's cache (freed: its attribute's delete callback), or all of them (handle None)."""
    global _last
    _last = _NO_LAST
    if handle is None:
        _caches.clear()
    else:
        _caches.pop(handle, None)


def _keep(comm, cache) -> None:
    """Keeps the communicator's cache (until the communicator is freed: an attribute's delete callback)."""
    global _last
    handle = comm.handle
    if _caches.get(handle) is not cache:
        MPI, _ = backend()
        if not _keyval:
            _keyval.append(MPI.Comm.Create_keyval(delete_fn=lambda c, k, h: _drop(h)))
            # MPI_Finalize called by the program deletes MPI_COMM_SELF's attributes; at exit mpi4py finalizes MPI
            # without calling Python, so an exit handler (run before mpi4py's, registered earlier) drops them first
            MPI.COMM_SELF.Set_attr(MPI.Comm.Create_keyval(delete_fn=lambda c, k, v: _drop()), 0)
            atexit.register(_drop)
        comm.Set_attr(_keyval[0], handle)
        _caches[handle] = cache
    _last = (comm, cache)


def _build(comm, cache, key, init, *args, **kw) -> str:
    """The blocking call by a new request, init(*args, **kw); kept under `key` after it ran (None: a buffer that the
    cache cannot take: the request gives the checks and errors of a call without the cache, and is not kept)."""
    req = init(*args, **kw)
    ident = cache.builds  # alltoallv: the id every rank gives this request (BlockingCache.run)
    req.start()
    req.wait()
    if key is not None:
        _keep(comm, cache)
        cache.misses += 1
        cache.keep(key, *req._entry(ident))
    return req.algorithm


def _wisdom_key(wisdom):
    """What algorithm="auto" depends on besides the call's arguments: the wisdom file, its mtime and size."""
    path = wisdom or os.environ.get("COLLPLAN_WISDOM")
    try:
        st = os.stat(path) if path else None
    except OSError:
        return path, None  # the call raises (_wisdom_text)
    return path, st and (st.st_mtime_ns, st.st_size)


def _params_key(params: dict) -> tuple:
    return tuple(sorted(_params(params).items()))


def _blocking(init, comm, extra: tuple, sendbuf, recvbuf, op, algorithm, mode, wisdom, params, args: tuple) -> str:
    """The blocking call init(comm, *args, algorithm, mode=, wisdom=, **params) through the communicator's cache.
    Its key: init, `extra` (the arguments that are neither buffers nor the operation: root, counts), the algorithm,
    mode, the wisdom file (auto) and the parameters; `op` is a reduction's operation (False for the others)."""
    last = _last
    cache = last[1] if comm is last[0] else _cache_of(comm)
    key = cache.run((init, extra, algorithm, mode, _wisdom_key(wisdom) if algorithm == "auto" else None,
                     _params_key(params) if params else ()), sendbuf, recvbuf, False, op)
    return key if type(key) is str else _build(comm, cache, key, init, comm, *args, algorithm, mode=mode,
                                               wisdom=wisdom, **params)


def allgather(comm, sendbuf, recvbuf, algorithm: str | None = None, *, mode: str = "auto", wisdom: str | None = None,
              **params) -> str:
    """Blocking allgather; returns the algorithm that ran (arguments as allgather_init)."""
    return _blocking(allgather_init, comm, (), sendbuf, recvbuf, False, algorithm, mode, wisdom, params,
                     (sendbuf, recvbuf))


def alltoall(comm, sendbuf, recvbuf, algorithm: str | None = None, *, mode: str = "auto", wisdom: str | None = None,
             **params) -> str:
    """Blocking alltoall; returns the algorithm that ran (arguments as alltoall_init)."""
    return _blocking(alltoall_init, comm, (), sendbuf, recvbuf, False, algorithm, mode, wisdom, params,
                     (sendbuf, recvbuf))


def alltoallv(comm, sendbuf, sendcounts, recvbuf, recvcounts, algorithm: str | None = None, *, sdispls=None,
              rdispls=None, mode: str = "auto", wisdom: str | None = None, **params) -> str:
    """Blocking alltoallv; returns the algorithm that ran (arguments as alltoallv_init)."""
    last = _last
    cache = last[1] if comm is last[0] else _cache_of(comm)
    key = cache.run((alltoallv_init, None if sendcounts is None else tuple(sendcounts),
                     None if sdispls is None else tuple(sdispls), tuple(recvcounts),
                     None if rdispls is None else tuple(rdispls), algorithm, mode,
                     _wisdom_key(wisdom) if algorithm == "auto" else None, _params_key(params) if params else ()),
                    sendbuf, recvbuf, True, False)
    return key if type(key) is str else _build(comm, cache, key, alltoallv_init, comm, sendbuf, sendcounts, recvbuf,
                                               recvcounts, algorithm, sdispls=sdispls, rdispls=rdispls, mode=mode,
                                               wisdom=wisdom, **params)


def allreduce(comm, sendbuf, recvbuf, op=None, algorithm: str | None = None, *, mode: str = "auto",
              wisdom: str | None = None, **params) -> str:
    """Blocking allreduce; returns the algorithm that ran (arguments as allreduce_init)."""
    return _blocking(allreduce_init, comm, (), sendbuf, recvbuf, op, algorithm, mode, wisdom, params,
                     (sendbuf, recvbuf, op))


def barrier(comm, algorithm: str | None = None, *, mode: str = "auto", wisdom: str | None = None, **params) -> str:
    """Blocking barrier; returns the algorithm that ran (arguments as barrier_init)."""
    return _blocking(barrier_init, comm, (), None, None, False, algorithm, mode, wisdom, params, ())


def bcast(comm, buf, root: int = 0, algorithm: str | None = None, *, mode: str = "auto", wisdom: str | None = None,
          **params) -> str:
    """Blocking bcast; returns the algorithm that ran (arguments as bcast_init)."""
    return _blocking(bcast_init, comm, (root,), None, buf, False, algorithm, mode, wisdom, params, (buf, root))


def gather(comm, sendbuf, recvbuf, root: int = 0, algorithm: str | None = None, *, mode: str = "auto",
           wisdom: str | None = None, **params) -> str:
    """Blocking gather; returns the algorithm that ran (arguments as gather_init)."""
    if comm.Get_rank() != root:
        recvbuf = None  # not significant here: left out of the key, so every rank hits or builds alike (_agreed)
    return _blocking(gather_init, comm, (root,), sendbuf, recvbuf, False, algorithm, mode, wisdom, params,
                     (sendbuf, recvbuf, root))


def scatter(comm, sendbuf, recvbuf, root: int = 0, algorithm: str | None = None, *, mode: str = "auto",
            wisdom: str | None = None, **params) -> str:
    """Blocking scatter; returns the algorithm that ran (arguments as scatter_init)."""
    if comm.Get_rank() != root:
        sendbuf = None  # not significant here: left out of the key, so every rank hits or builds alike (_agreed)
    recv = backend()[0].IN_PLACE if recvbuf is None else recvbuf  # the root's in place (an error elsewhere)
    return _blocking(scatter_init, comm, (root,), sendbuf, recv, False, algorithm, mode, wisdom, params,
                     (sendbuf, recvbuf, root))


def _tuple(v):
    """Counts or displacements as part of a key (None stays None; what is not a sequence, or has unhashable
    entries, makes the call uncached: the request's own checks say what is wrong)."""
    try:
        return None if v is None else tuple(v)
    except TypeError:
        return []


def allgatherv(comm, sendbuf, recvbuf, recvcounts, displs=None, algorithm: str | None = None, *, mode: str = "auto",
               wisdom: str | None = None, **params) -> str:
    """Blocking allgatherv; returns the algorithm that ran (arguments as allgatherv_init)."""
    return _blocking(allgatherv_init, comm, (_tuple(recvcounts), _tuple(displs)), sendbuf, recvbuf, False, algorithm,
                     mode, wisdom, params, (sendbuf, recvbuf, recvcounts, displs))


def reduce(comm, sendbuf, recvbuf, op=None, root: int = 0, algorithm: str | None = None, *, mode: str = "auto",
           wisdom: str | None = None, **params) -> str:
    """Blocking reduce; returns the algorithm that ran (arguments as reduce_init)."""
    if comm.Get_rank() != root:
        recvbuf = None  # not significant here: left out of the key, so every rank hits or builds alike (_agreed)
    return _blocking(reduce_init, comm, (root,), sendbuf, recvbuf, op, algorithm, mode, wisdom, params,
                     (sendbuf, recvbuf, op, root))


def reduce_scatter_block(comm, sendbuf, recvbuf, op=None, algorithm: str | None = None, *, mode: str = "auto",
                         wisdom: str | None = None, **params) -> str:
    """Blocking reduce_scatter_block; returns the algorithm that ran (arguments as reduce_scatter_block_init)."""
    return _blocking(reduce_scatter_block_init, comm, (), sendbuf, recvbuf, op, algorithm, mode, wisdom, params,
                     (sendbuf, recvbuf, op))


def reduce_scatter(comm, sendbuf, recvbuf, recvcounts, op=None, algorithm: str | None = None, *, mode: str = "auto",
                   wisdom: str | None = None, **params) -> str:
    """Blocking reduce_scatter; returns the algorithm that ran (arguments as reduce_scatter_init)."""
    return _blocking(reduce_scatter_init, comm, (_tuple(recvcounts),), sendbuf, recvbuf, op, algorithm, mode, wisdom,
                     params, (sendbuf, recvbuf, recvcounts, op))


def applies(collective: str, algorithm: str, ranks: int, params: dict | None = None, root: int = 0) -> str:
    """'' when the runtime can run the algorithm on `ranks` ranks (on full:P or one of its topology families; rooted
    collectives at `root`), else why not. The schedules of alltoallv, allgatherv and reduce_scatter depend on the
    counts, so this checks them with one unit per count."""
    _, mod = backend()
    return mod.applies(collective, _algorithm(collective, algorithm), ranks, _params(params or {}), root)


def cache_stats(comm) -> dict:
    """Schedules and plans cached for this communicator, with hit and miss counts; and the requests the blocking
    calls keep (blocking_requests), with their hits and misses."""
    MPI, mod = backend()
    handle = MPI._handleof(comm)
    cache = _caches.get(handle)
    blocking = (cache.size, cache.hits, cache.misses) if cache is not None else (0, 0, 0)
    return {**mod.cache_stats(handle), **dict(zip(("blocking_requests", "blocking_hits", "blocking_misses"), blocking))}
