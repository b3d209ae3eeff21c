"""Unstructured all-to-many personalized communication (alltoallv): communication matrices and their sources.

A communication matrix COM is P x P non-negative integers, row = source: COM(i, j) = m > 0 means rank i sends a
message of m units to rank j (Wang, Lin, Ranka, CM-5 1993, sec. 2.1). Here a matrix is a list of P rows.

- read_matrix(path): dense text/CSV, Matrix Market coordinate (.mtx), JSON (.json); one-line errors.
- matrix_from_spec(spec): a file, or a generator: ``testset1:P=32,d=4,seed=1``, ``testset2:P=32,d=4,seed=1``
  (sizes 1..max_units, default 32), ``mesh:P=32,refine=2,seed=1[,layers=1,part=metis]`` (test set 3: pyamg's
  airfoil mesh, refined, as a 2-D triangulation or extruded into a 3-D wing section of `layers` layers,
  partitioned by METIS or recursive coordinate bisection; COM(p, q) = boundary values part q needs from part p).
- stats(matrix): the paper's statistics; generate_recv_cost(): both ways of building recvl, priced.
- drs_n(): the DRS_N protocol simulation with the machine's active-message constants.
"""
from __future__ import annotations

import json
import math
import os
import re
import tomllib
from pathlib import Path

from . import _core, limits
from ._core import CollplanError
from .machines import load_machine, read_machine_text, resolve_machine

Matrix = list  # list of P rows of ints
MAX_UNITS = 1 << 40  # an entry of a matrix, and units/max_units of a test set, at most (sums stay within 64 bits)


# ------------------------------------------------------------------------------------------------- reading
def _check_square(rows: list[list[int]], where: str, diagonal_ok: bool = False) -> list[list[int]]:
    P = len(rows)
    if P == 0:
        raise CollplanError(f"{where}: empty matrix (allowed: P x P with P >= 1)")
    for i, r in enumerate(rows):
        if len(r) != P:
            raise CollplanError(f"{where}: row {i} has {len(r)} entries but there are {P} rows "
                                f"(allowed: a square P x P matrix)")
    for i, r in enumerate(rows):
        for j, v in enumerate(r):
            if v < 0:
                raise CollplanError(f"{where}: COM({i},{j}) = {v} is negative (allowed: sizes >= 0)")
            if v > MAX_UNITS:
                raise CollplanError(f"{where}: COM({i},{j}) = {v} is too large (allowed: sizes 0..{MAX_UNITS})")
            if i == j and v and not diagonal_ok:
                raise CollplanError(f"{where}: diagonal traffic COM({i},{i}) = {v} (allowed: 0, a rank sends "
                                    f"nothing to itself)")
    return rows


def _int(text: str, where: str) -> int:
    """An integer written as such or as a number with an integral value ('4', '4.0', '1e3'); not nan or inf."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        f = float(text)
    except ValueError:
        f = math.nan
    if math.isfinite(f) and f == int(f):
        return int(f)
    raise CollplanError(f"{where}: '{text}' is not an integer size")


def parse_dense(text: str, where: str = "matrix") -> Matrix:
    """Rows of integers separated by commas and/or blanks; '#' comments and blank lines ignored."""
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        rows.append([_int(x, f"{where}: line {n}") for x in re.split(r"[,;\s]+", line) if x])
    return _check_square(rows, where)


def require_matrix(P: int, where: str, max_memory=None) -> None:
    """Refuse a P x P matrix that would take more than the memory limit (before it is allocated)."""
    limits.require(float(P) * P * limits.MATRIX_ENTRY_BYTES, f"{where}: a {P} x {P} matrix", max_memory)


def parse_matrix_market(text: str, where: str = "matrix", max_memory=None) -> Matrix:
    """Matrix Market coordinate format (1-based 'i j value' lines; 'pattern' means value 1)."""
    lines = text.splitlines()
    if not lines or not lines[0].lower().startswith("%%matrixmarket"):
        raise CollplanError(f"{where}: line 1: expected '%%MatrixMarket matrix coordinate ...'")
    head = lines[0].lower().split()
    if len(head) < 4 or head[1] != "matrix" or head[2] != "coordinate":
        raise CollplanError(f"{where}: line 1: '{lines[0].strip()}' (allowed: %%MatrixMarket matrix coordinate "
                            f"integer|real|pattern general)")
    pattern = "pattern" in head
    body = [(n, ln.strip()) for n, ln in enumerate(lines[1:], 2) if ln.strip() and not ln.lstrip().startswith("%")]
    if not body:
        raise CollplanError(f"{where}: missing the size line 'rows cols entries'")
    n, size = body[0]
    parts = size.split()
    if len(parts) != 3:
        raise CollplanError(f"{where}: line {n}: expected 'rows cols entries', got '{size}'")
    R, C, nnz = (_int(x, f"{where}: line {n}") for x in parts)
    if R != C:
        raise CollplanError(f"{where}: line {n}: the matrix is {R} x {C} (allowed: square)")
    if R < 1:
        raise CollplanError(f"{where}: line {n}: the matrix is {R} x {C} (allowed: P x P with P >= 1)")
    require_matrix(R, where, max_memory)
    rows = [[0] * C for _ in range(R)]
    entries = body[1:]
    if len(entries) != nnz:
        raise CollplanError(f"{where}: {len(entries)} entries but the size line says {nnz}")
    for n, ln in entries:
        f = ln.split()
        if len(f) != (2 if pattern else 3):
            raise CollplanError(f"{where}: line {n}: expected 'i j{'' if pattern else ' value'}', got '{ln}'")
        i, j = _int(f[0], f"{where}: line {n}"), _int(f[1], f"{where}: line {n}")
        if not (1 <= i <= R and 1 <= j <= C):
            raise CollplanError(f"{where}: line {n}: entry ({i},{j}) outside 1..{R} (indices are 1-based)")
        rows[i - 1][j - 1] += 1 if pattern else _int(f[2], f"{where}: line {n}")
    return _check_square(rows, where)


def parse_json(text: str, where: str = "matrix") -> Matrix:
    """A list of rows, or {"matrix": rows}."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise CollplanError(f"{where}: invalid JSON at line {e.lineno}: {e.msg}") from None
    except RecursionError:
        raise CollplanError(f"{where}: arrays or objects nested too deeply (allowed: a list of rows)") from None
    rows = doc.get("matrix") if isinstance(doc, dict) else doc
    if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
        raise CollplanError(f"{where}: expected a list of rows or {{\"matrix\": [[...], ...]}}")
    out = []
    for i, r in enumerate(rows):
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in r):
            raise CollplanError(f"{where}: row {i} has a non-integer entry (allowed: integer sizes)")
        out.append(list(r))
    return _check_square(out, where)


def read_matrix(path: str, max_memory=None) -> Matrix:
    """A communication matrix from a file: .json, .mtx (Matrix Market), anything else dense text/CSV. A file larger
    than the memory limit allows, or a Matrix Market size line declaring too large a matrix, is refused before
    the matrix is allocated."""
    p = Path(path)
    try:
        text = limits.read_text(path, limits.max_memory(max_memory) // limits.MATRIX_TEXT_FACTOR, "matrix file")
    except OSError as e:
        raise CollplanError(f"cannot read matrix file {path}: {e.strerror}") from None
    if p.suffix.lower() == ".json":
        return parse_json(text, path)
    if p.suffix.lower() == ".mtx" or text.lstrip().lower().startswith("%%matrixmarket"):
        return parse_matrix_market(text, path, max_memory)
    return parse_dense(text, path)


def write_matrix(path: str, matrix: Matrix, fmt: str | None = None) -> str:
    """Text of the matrix in csv (default), mtx or json; written atomically to path unless path is '-'."""
    fmt = fmt or {".json": "json", ".mtx": "mtx"}.get(Path(path).suffix.lower(), "csv")
    if fmt == "json":
        text = json.dumps({"matrix": matrix}) + "\n"
    elif fmt == "mtx":
        nz = [(i + 1, j + 1, v) for i, r in enumerate(matrix) for j, v in enumerate(r) if v]
        text = "%%MatrixMarket matrix coordinate integer general\n" + f"{len(matrix)} {len(matrix)} {len(nz)}\n"
        text += "".join(f"{i} {j} {v}\n" for i, j, v in nz)
    elif fmt == "csv":
        text = "".join(",".join(str(v) for v in r) + "\n" for r in matrix)
    else:
        raise CollplanError(f"unknown matrix format '{fmt}' (allowed: csv, mtx, json)")
    if path != "-":
        from .output import atomic_write
        atomic_write(path, text)
    return text


# ------------------------------------------------------------------------------------------------- generators
def _rows(flat: list[int], P: int) -> Matrix:
    return [list(flat[i * P:(i + 1) * P]) for i in range(P)]


def flat(matrix: Matrix) -> list[int]:
    return [int(v) for r in matrix for v in r]


def _in_ranges(where: str, **values) -> None:
    """Each value an integer in its _RANGES range, else CollplanError (the core would see a C integer overflow)."""
    for k, v in values.items():
        lo, hi = _RANGES[k]
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise CollplanError(f"{where}: {k}={v} is invalid (allowed: an integer {lo}..{hi})")


def testset1(P: int, d: int, seed: int = 1, units: int = 1, max_memory=None) -> Matrix:
    """Test set 1: about d messages per row and column (exactly d here), all of `units` units."""
    _in_ranges("testset1", P=P, d=d, seed=seed, units=units)
    require_matrix(P, f"testset1:P={P}", max_memory)
    return _rows(_core.testset_uniform(P, d, seed, units), P)


def testset2(P: int, d: int, seed: int = 1, max_units: int = 32, max_memory=None) -> Matrix:
    """Test set 2: the pattern of test set 1, sizes uniform in 1..max_units (the paper: up to 32 x msg_unit)."""
    _in_ranges("testset2", P=P, d=d, seed=seed, max_units=max_units)
    require_matrix(P, f"testset2:P={P}", max_memory)
    return _rows(_core.testset_nonuniform(P, d, max_units, seed), P)


def airfoil_mesh(refine: int = 0):
    """pyamg's airfoil triangulation (322 vertices), refined `refine` times by splitting every triangle into four.
    Returns (vertices, triangles) as lists."""
    try:
        import pyamg
    except ImportError:
        raise CollplanError("test set 3 needs pyamg (pip install pyamg; `make install` does it)") from None
    if not 0 <= refine < len(MESH_POINTS):
        raise CollplanError(f"mesh refine={refine} is invalid (allowed: 0..{len(MESH_POINTS) - 1}; each step has "
                            "about 4x the points)")
    data = pyamg.gallery.load_example("airfoil")
    verts = [tuple(map(float, v)) for v in data["vertices"]]
    tris = [tuple(map(int, t)) for t in data["elements"]]
    for _ in range(refine):
        mid: dict[tuple[int, int], int] = {}

        def midpoint(a: int, b: int) -> int:
            key = (a, b) if a < b else (b, a)
            if key not in mid:
                mid[key] = len(verts)
                verts.append(((verts[a][0] + verts[b][0]) / 2, (verts[a][1] + verts[b][1]) / 2))
            return mid[key]
        new = []
        for a, b, c in tris:
            ab, bc, ca = midpoint(a, b), midpoint(b, c), midpoint(c, a)
            new += [(a, ab, ca), (ab, b, bc), (ca, bc, c), (ab, bc, ca)]
        tris = new
    return verts, tris


MESH_POINTS = (322, 1226, 4780, 18872, 74992, 298976)  # points of airfoil_mesh(refine) for refine = 0..5
MESH_POINTS_PER_PART = 4  # fewer leaves parts empty or without neighbours: a matrix of noise (METIS: 161+ of 322)


class _quiet:
    """Standard output and error of the process (C libraries included) go to /dev/null inside the block."""

    def __enter__(self):
        import sys
        for f in (sys.stdout, sys.stderr):
            f.flush()
        self.saved = [os.dup(1), os.dup(2)]
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.close(null)

    def __exit__(self, *exc):
        for fd, saved in zip((1, 2), self.saved):
            os.dup2(saved, fd)
            os.close(saved)


MESH_PARTS = ("metis", "rcb")
MESH_MAX_LAYERS = 1000


def _wing_adjacency(verts: list, tris: list, layers: int) -> tuple[list[set], list[tuple]]:
    """The vertex graph of the airfoil triangulation extruded into `layers` layers of prisms, each prism split into
    three tetrahedra (the diagonal of every side face joins the higher-numbered vertex below to the lower-numbered
    one above, so that neighbouring prisms agree: a conforming tetrahedral mesh). The span is the width of the 2-D
    domain, so the wing section fills a cube. Returns (adjacency sets, point coordinates)."""
    n = len(verts)
    xs = [v[0] for v in verts]
    span = max(xs) - min(xs)
    dz = span / (layers - 1) if layers > 1 else 0.0
    pts = [(verts[i][0], verts[i][1], l * dz) for l in range(layers) for i in range(n)]
    adj = [set() for _ in pts]

    def clique(vs):
        for a in vs:
            adj[a].update(b for b in vs if b != a)
    for l in range(layers):
        base = l * n
        for t in tris:
            a, b, c = sorted(t)
            clique((base + a, base + b, base + c))
            if l + 1 < layers:
                up = base + n
                for tet in ((base + a, base + b, base + c, up + a), (base + b, base + c, up + a, up + b),
                            (base + c, up + a, up + b, up + c)):
                    clique(tet)
    return adj, pts


def _rcb(pts: list, P: int) -> list[int]:
    """Recursive coordinate bisection: cut the points perpendicular to the axis of their largest extent, at the
    point that splits the parts in proportion (floor(k/2) : ceil(k/2)), and recurse; ties broken by index."""
    part = [0] * len(pts)
    stack = [(list(range(len(pts))), P, 0)]
    while stack:
        ids, k, first = stack.pop()
        if k == 1:
            for i in ids:
                part[i] = first
            continue
        ext = [max(pts[i][a] for i in ids) - min(pts[i][a] for i in ids) for a in range(3)]
        ax = max(range(3), key=lambda a: (ext[a], -a))
        ids.sort(key=lambda i: (pts[i][ax], i))
        k1 = k // 2
        h = len(ids) * k1 // k
        stack.append((ids[:h], k1, first))
        stack.append((ids[h:], k - k1, first + k1))
    return part


def mesh_matrix(P: int, refine: int = 2, seed: int = 1, max_memory=None, layers: int = 1,
                part: str = "metis") -> tuple[Matrix, dict]:
    """Test set 3: the airfoil mesh's vertex graph partitioned into P parts; COM(p, q) = the number of vertices of
    part p adjacent to part q (the boundary values q needs from p each iteration).

    layers = 1: the 2-D triangulation (refined `refine` times). layers > 1: a 3-D wing section, the triangulation
    extruded into `layers` layers of tetrahedra spanning a cube (the paper's samples come from a 3-D Euler solver,
    its ref. [9]; see docs/unstructured.md for why 3-D). part: 'metis' (pymetis, seeded) or 'rcb' (recursive
    coordinate bisection, the geometric partitioner of the time; seed unused)."""
    _in_ranges("mesh", P=P, refine=refine, seed=seed, layers=layers)
    if part not in MESH_PARTS:
        raise CollplanError(f"mesh part={part} is invalid (allowed: {', '.join(MESH_PARTS)})")
    if part == "metis":
        try:
            import pymetis
        except ImportError:
            raise CollplanError("test set 3 needs pymetis (pip install pymetis; `make install` does it)") from None
    points = MESH_POINTS[refine] * layers if 0 <= refine < len(MESH_POINTS) else 0
    if points < MESH_POINTS_PER_PART * P:
        enough = [r for r, n in enumerate(MESH_POINTS) if n * layers >= MESH_POINTS_PER_PART * P]
        raise CollplanError(
            f"mesh:P={P},refine={refine}" + (f",layers={layers}" if layers > 1 else "") + f": the mesh has {points} "
            f"points, fewer than {MESH_POINTS_PER_PART} per part (allowed: P <= {points // MESH_POINTS_PER_PART} "
            f"here; " + (f"refine={enough[0]} has enough points for P={P})" if enough else
                         f"more layers, or P <= {MESH_POINTS[-1] * layers // MESH_POINTS_PER_PART} at "
                         f"refine={len(MESH_POINTS) - 1})"))
    require_matrix(P, f"mesh:P={P}", max_memory)
    limits.require(float(points) * 200.0, f"mesh:P={P},refine={refine},layers={layers}: {points} points",
                   max_memory)
    verts, tris = airfoil_mesh(refine)
    if layers == 1:
        adj = [set() for _ in verts]
        for t in tris:
            for a in t:
                adj[a].update(b for b in t if b != a)
        pts = [(x, y, 0.0) for x, y in verts]
    else:
        adj, pts = _wing_adjacency(verts, tris, layers)
    if P == 1:
        parts = [0] * len(adj)
    elif part == "rcb":
        parts = _rcb(pts, P)
    else:
        with _quiet():  # METIS prints its complaints to the C library's stdout
            parts = list(pymetis.part_graph(P, adjacency=[sorted(s) for s in adj],
                                            options=pymetis.Options(seed=seed))[1])
    if len(set(parts)) != P:
        raise CollplanError(f"mesh:P={P},refine={refine}: {part.upper()} left {P - len(set(parts))} of the {P} "
                            "parts empty (allowed: fewer parts, or a larger refine)")
    rows = [[0] * P for _ in range(P)]
    for v, nb in enumerate(adj):
        for q in {parts[u] for u in nb} - {parts[v]}:
            rows[parts[v]][q] += 1
    return rows, {"points": len(adj), "triangles": len(tris), "refine": refine, "layers": layers, "part": part}


_SPEC = re.compile(r"^(testset1|testset2|mesh):(.*)$")
_KEYS = {"testset1": {"P": 32, "d": 4, "seed": 1, "units": 1}, "testset2": {"P": 32, "d": 4, "seed": 1, "max_units": 32},
         "mesh": {"P": 32, "refine": 2, "seed": 1, "layers": 1, "part": "metis"}}
_RANGES = {"P": (1, 1 << 22), "d": (0, (1 << 22) - 1), "seed": (0, (1 << 64) - 1), "units": (1, MAX_UNITS),
           "max_units": (1, MAX_UNITS), "refine": (0, len(MESH_POINTS) - 1),
           "layers": (1, MESH_MAX_LAYERS)}  # P: the core's kMaxNodes


def matrix_from_spec(spec: str, ranks: int | None = None, max_memory=None) -> Matrix:
    """A matrix file, or a generator spec (``testset1:P=32,d=4,seed=1``, ``testset2:...,max_units=32``,
    ``mesh:P=32,refine=2,seed=1``); `ranks` is the default P of a generator."""
    m = _SPEC.match(spec)
    if not m:
        return read_matrix(spec, max_memory)
    kind, args = m.group(1), _KEYS[m.group(1)].copy()
    if ranks is not None:
        args["P"] = ranks
    given = set()
    for kv in filter(None, m.group(2).split(",")):
        k, _, v = kv.partition("=")
        if k not in args or not v or k in given:
            raise CollplanError(f"matrix spec '{spec}': bad item '{kv}' (allowed: {', '.join(f'{x}=N' for x in args)}, "
                                "each once)")
        given.add(k)
        try:
            args[k] = int(v, 10)
        except ValueError:
            args[k] = v
    part = args.pop("part", None)
    if part is not None and part not in MESH_PARTS:
        raise CollplanError(f"matrix spec '{spec}': part={part} is invalid (allowed: {', '.join(MESH_PARTS)})")
    _in_ranges(f"matrix spec '{spec}'", **args)
    if kind == "testset1":
        return testset1(args["P"], args["d"], args["seed"], args["units"], max_memory)
    if kind == "testset2":
        return testset2(args["P"], args["d"], args["seed"], args["max_units"], max_memory)
    return mesh_matrix(args["P"], args["refine"], args["seed"], max_memory, args["layers"], part)[0]


# ------------------------------------------------------------------------------------------------- statistics
def stats(matrix: Matrix) -> dict:
    """The paper's statistics (sec. 5): messages sent per processor (max/min/average), message lengths in units
    (max/min/average), and Delta, the phases an optimal contention-free schedule needs."""
    return _core.matrix_stats(flat(matrix))


def plan(name: str, matrix: Matrix, seed: int = 1, cutoff_pct: int = 200) -> dict:
    """Phases of a phased algorithm (linear_permutation, random_schedule, random_schedule_heap, edge_coloring):
    {'phases': [[(src, dst, units), ...], ...], 'work': scheduling steps, 'check': '' if valid}."""
    return _core.alltoallv_plan(name, flat(matrix), seed, cutoff_pct)


# ------------------------------------------------------------------------------------------------- machine extras
def machine_table(machine: str, table: str) -> dict:
    """A table of a machine file beyond [model] (e.g. [drs_n], [scheduling]): values as written."""
    m = load_machine(machine)
    data = tomllib.loads(read_machine_text(m.path))
    t = data.get(table)
    if not isinstance(t, dict):
        raise CollplanError(f"machine {m.name} has no [{table}] table (needed for this computation)")
    return t


def _time(v) -> float:
    return _core.parse_time(str(v))


def u_time(v) -> str:
    """A time from a machine file as a plain number of seconds (for model specs)."""
    return repr(_time(v))


def drs_n(matrix: Matrix, unit_bytes: float, machine: str, seed: int = 1, retry_delay_s: float = 0.0) -> dict:
    """Simulate the DRS_N protocol on a machine whose file has a [drs_n] table (am, handler)."""
    m = load_machine(machine)
    t = machine_table(machine, "drs_n")
    P = len(matrix)
    topo = m.topology if m.topology and _core.Topology.parse(m.topology).nodes == P else f"full:{P}"
    return _core.simulate_drs_n(flat(matrix), topo, m.model, float(unit_bytes), seed,
                                _time(t["am"]), _time(t.get("handler", "0s")), retry_delay_s)


def generate_recv_cost(matrix: Matrix, machine: str | None = None, model: str | None = None,
                       entry_bytes: int = 4) -> dict:
    """Generate_Recv both ways (paper sec. 3, Fig. 1, Table 3), priced with the estimate:
    'concat': a global concatenate of every rank's sending vector (an allgather of P entries per rank; every rank
    then holds all of COM, O(P^2) memory); 'am': a vector sum of the send masks (an allreduce of P counters) then
    one short message per active entry to its receiver (the AC alltoallv of the mask matrix; O(P) memory). Where
    the machine file has a [drs_n] table those short messages are active messages of its `am` time each (one at a
    time per node), as on the CM-5; otherwise ordinary messages of the model."""
    from .api import estimate, schedule
    P = len(matrix)
    m = resolve_machine(machine, model)
    spec, topo = m.model, m.topology
    topo = topo if topo and _core.Topology.parse(topo).nodes == P else f"full:{P}"
    if P == 1:
        return {"concat_s": 0.0, "am_s": 0.0, "concat_bytes": entry_bytes, "am_bytes": entry_bytes}
    gather = "allgather/recursive_doubling" if P & (P - 1) == 0 else "allgather/bruck"
    concat = estimate(schedule(gather, topology=topo), [P * entry_bytes], model=spec)[0].time_s
    vsum = estimate(schedule("allreduce/recursive_doubling", topology=topo), [P * entry_bytes], model=spec)[0].time_s
    mask = [[1 if v and i != j else 0 for j, v in enumerate(r)] for i, r in enumerate(matrix)]
    am_spec = spec
    if machine is not None:
        try:
            am_spec = f"hockney:alpha={u_time(machine_table(machine, 'drs_n')['am'])}s,beta=0s/B"
        except CollplanError:
            pass
    sends = estimate(schedule("alltoallv/async", topology=topo, matrix=mask), [entry_bytes], model=am_spec)[0].time_s
    return {"concat_s": concat, "am_s": vsum + sends, "concat_bytes": P * P * entry_bytes, "am_bytes": 2 * P * entry_bytes}
