"""A plan without collplan at run time: a wisdom file as the MPI library's own tuning file.

Open MPI's coll/tuned reads a rules file (`--mca coll_tuned_use_dynamic_rules 1 --mca
coll_tuned_dynamic_rules_filename FILE`); MPICH reads JSON decision trees (`MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE`
for its algorithms, `MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE` for the ch4 layer above them). A wisdom entry
becomes a rule where one of the library's algorithms sends the messages of the entry's collplan algorithm: that is
collplan.native's mapping (the one the replay uses, checked against the libraries at run time in
tests/python/test_native.py), asked here for every algorithm the installed library has, at every size of the
entry's range and for every element size up to 16 bytes (the fallbacks inside the libraries' algorithms depend on
the element count). What the library has is read from the installation itself: Open MPI's algorithm ids from
ompi_info's enumerators, MPICH's algorithm names and default trees from the strings of its libmpi.

Conventions converted (docs/planner.md, "Using a plan without collplan at run time"):
- message sizes: each library compares its own quantity (Open MPI ompi/mca/coll/tuned/coll_tuned_decision_dynamic.c,
  MPICH src/mpi/coll/src/csel.c get_avg_msgsize / get_total_msgsize); SIZE_UNIT says which multiple of collplan's
  bytes it is;
- communicator sizes: a rule for P is fenced by a rule for P + 1 (Open MPI takes the largest listed size <= the
  communicator's; MPICH's branch is comm_size<=P-1 / comm_size<=P), and Open MPI's list starts with size 0;
- Open MPI's mandatory first rule of message size 0, and rule 0 ("ignore": the fixed decision) wherever the wisdom
  says native or has no entry; MPICH's default subtree in the same places, so every other case keeps MPICH's choice;
- operations: MPICH's branches split on is_commutative; Open MPI's rules apply to every operation, so an algorithm
  that Open MPI supports for commutative operations only is not exported unless assume_commutative.
"""
from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from . import api, native
from ._core import CollplanError
from .planner import read_wisdom

FORMATS = ("ompi-rules", "mpich-json")
FAMILY = {"ompi-rules": "openmpi", "mpich-json": "mpich"}

# The element sizes a mapped algorithm must run as at every size of a range (MPI_BYTE .. MPI_C_LONG_DOUBLE_COMPLEX).
TYPE_SIZES = (1, 2, 4, 8, 16)
UNBOUNDED = 1 << 40  # an open range is checked up to here

# The library's message size as a multiple of collplan's bytes (docs/runtime.md "Wisdom files"): "P" = times the
# communicator size; None: the library ignores the size (one rule per communicator size).
SIZE_UNIT = {
    "openmpi": {"allreduce": 1, "bcast": 1, "reduce": 1, "allgatherv": 1, "alltoall": "P", "allgather": "P",
                "reduce_scatter": "P", "reduce_scatter_block": "P", "gather": "P", "scatter": "P",
                "alltoallv": None, "barrier": None},
    "mpich": {"allreduce": 1, "bcast": 1, "reduce": 1, "alltoall": 1, "allgather": "P", "allgatherv": "P",
              "reduce_scatter": "P", "reduce_scatter_block": "P", "gather": None, "scatter": None,
              "alltoallv": None, "barrier": None},
}
# MPICH's quantity per collective: avg_msg_size where csel.c defines it, else total_msg_size.
MPICH_SIZE_KEY = {c: "avg_msg_size" for c in ("allreduce", "bcast", "reduce", "alltoall")}
# Sizes the libraries do not compute the same way on every rank, or not in bytes: their rules may not depend on the
# size (the reason per library).
SIZE_UNSAFE = ("gather", "scatter")
SIZE_UNSAFE_WHY = {"openmpi": "the send count, insignificant at scatter's non-roots and at gather's root with "
                              "MPI_IN_PLACE, so not the same on every rank",
                   "mpich": "elements, not bytes (csel.c)"}
REDUCTIONS = ("allreduce", "reduce", "reduce_scatter", "reduce_scatter_block")
# Open MPI's collective ids (ompi/mca/coll/base/coll_base_functions.h, COLLTYPE_T; the same in 4.1 and 5.0).
OMPI_COLLTYPE = {"allgather": 0, "allgatherv": 1, "allreduce": 2, "alltoall": 3, "alltoallv": 4, "barrier": 6,
                 "bcast": 7, "gather": 9, "reduce": 11, "reduce_scatter": 12, "reduce_scatter_block": 13,
                 "scatter": 15}
# The ch4 composition that runs MPIR_<Coll>_impl (the algorithm trees) on the whole communicator, for the
# collectives whose default ch4 choice on one node is another (src/mpid/ch4/src/ch4_coll_impl.h; collplan.native).
MPICH_NETMOD_COMPOSITION = {"bcast": "gamma", "allreduce": "beta", "reduce": "gamma", "barrier": "beta"}


@dataclass
class Target:
    """The installed library the file is for."""
    family: str
    version: str
    where: str                                    # ompi_info or libmpi path
    ids: dict = field(default_factory=dict)       # Open MPI: {collective: {name: id}}
    trees: dict = field(default_factory=dict)     # MPICH: {"mpir": tree, "ch4": tree}
    leaves: set = field(default_factory=set)      # MPICH: "MPIR_<Coll>_intra_<name>" it accepts

    def names(self, collective: str) -> list[str]:
        if self.family == "openmpi":
            return [n for n, i in sorted(self.ids.get(collective, {}).items(), key=lambda x: x[1]) if i]
        prefix = f"MPIR_{collective.capitalize()}_intra_"
        return sorted(leaf[len(prefix):] for leaf in self.leaves if leaf.startswith(prefix))


@dataclass
class Rule:
    collective: str
    ranks: int
    min_bytes: int
    max_bytes: int | None
    algorithm: str
    params: dict
    native: str                 # the library's name of it
    ident: str                  # Open MPI: the id; MPICH: the leaf's name
    commutative: str = "any"    # which operations the rule is for: "yes", "no", "any"


@dataclass
class Left:
    """A wisdom entry (or part of its range) that stays with the preload library, and why."""
    entry: dict
    min_bytes: int
    max_bytes: int | None
    reason: str


@dataclass
class Export:
    format: str
    target: Target
    rules: list[Rule]
    left: list[Left]
    native: list[dict]          # entries that keep the library's own choice
    files: dict                 # {"main": text, "ch4": text (MPICH)}

    def usage(self, path: str, ch4_path: str | None = None) -> str:
        if self.format == "ompi-rules":
            return (f"mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename {path} "
                    f"... (or the variables OMPI_MCA_coll_tuned_use_dynamic_rules=1 "
                    f"OMPI_MCA_coll_tuned_dynamic_rules_filename={path})")
        text = f"MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE={path}"
        if ch4_path:
            text += f" MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE={ch4_path}"
        return f"{text} mpiexec ..."

    def report(self) -> str:
        fmt = lambda lo, hi: f"{lo}..{'' if hi is None else hi - 1} B"  # noqa: E731
        lines = [f"# {self.format} for {self.target.version} ({self.target.where})"]
        for r in self.rules:
            ops = {"yes": ", commutative ops", "no": ", non-commutative ops"}.get(r.commutative, "")
            lines.append(f"rule  {r.collective} P={r.ranks} {fmt(r.min_bytes, r.max_bytes)}{ops}: {r.algorithm} "
                         f"-> {r.native}")
        for e in self.native:
            lines.append(f"kept  {e['collective']} P={e.get('ranks', 'any')} "
                         f"{fmt(e.get('min_bytes', 0), e.get('max_bytes'))}: native (the library's own choice)")
        for lf in self.left:
            lines.append(f"left  {lf.entry['collective']} P={lf.entry.get('ranks', 'any')} "
                         f"{fmt(lf.min_bytes, lf.max_bytes)}: {lf.entry['algorithm']} stays with the preload "
                         f"library: {lf.reason}")
        return "\n".join(lines)

    def as_dict(self) -> dict:
        return {"format": self.format, "library": self.target.version, "where": self.target.where,
                "rules": [vars(r) for r in self.rules], "native": self.native,
                "left": [{"entry": lf.entry, "min_bytes": lf.min_bytes, "max_bytes": lf.max_bytes,
                          "reason": lf.reason} for lf in self.left]}


# ------------------------------------------------------------------------------------------- the installation
def _installation(family: str, mpi: str | None) -> tuple[str, dict | None]:
    """(name, installation) of `mpi` (a name collplan was built for; default the first of the family), or
    (path, None) where `mpi` is a file."""
    from .mpi import installations
    built = installations()
    if mpi and Path(mpi).is_file():
        return mpi, None
    if mpi is None:
        mpi = next((n for n, i in built.items() if i["family"] == family), None)
        if mpi is None:
            raise CollplanError(f"no {family} installation is known to collplan (give --mpi PATH: "
                                f"{'ompi_info' if family == 'openmpi' else 'the libmpi.so'} of the MPI)")
    if mpi not in built:
        raise CollplanError(f"--mpi {mpi!r} is neither an installation collplan was built for "
                            f"({', '.join(built) or 'none'}) nor a file")
    if built[mpi]["family"] != family:
        raise CollplanError(f"--mpi {mpi} is {built[mpi]['family']} (allowed: a {family} installation)")
    return mpi, built[mpi]


def openmpi_target(mpi: str | None = None) -> Target:
    """Open MPI's coll/tuned algorithm ids as ompi_info of the installation lists them."""
    name, info = _installation("openmpi", mpi)
    if info is None:
        ompi_info = Path(name)
    else:
        bindir = Path(info["mpiexec"]).parent
        suffix = Path(info["mpiexec"]).suffix  # Debian's mpiexec.openmpi
        ompi_info = next((p for p in (bindir / f"ompi_info{suffix}", bindir / "ompi_info") if p.is_file()),
                         bindir / "ompi_info")
    try:
        out = subprocess.run([str(ompi_info), "--param", "coll", "tuned", "--level", "9", "--parsable"],
                             capture_output=True, text=True, timeout=60).stdout
        version = subprocess.run([str(ompi_info), "--version"], capture_output=True, text=True,
                                 timeout=60).stdout.splitlines()
    except (OSError, subprocess.TimeoutExpired) as e:
        raise CollplanError(f"cannot run {ompi_info}: {getattr(e, 'strerror', None) or e}") from None
    ids: dict = {}
    for coll, value, alg in re.findall(
            r"^mca:coll:tuned:param:coll_tuned_(\w+?)_algorithm:enumerator:value:(\d+):(\S+)$", out, re.M):
        ids.setdefault(coll, {})[alg] = int(value)
    if not ids:
        raise CollplanError(f"{ompi_info} lists no coll/tuned algorithms (allowed: Open MPI's ompi_info, with the "
                            f"tuned component)")
    return Target("openmpi", version[0].strip() if version else "Open MPI", str(ompi_info), ids=ids)


def mpich_target(mpi: str | None = None) -> Target:
    """MPICH's algorithm names and default decision trees, read from the strings of the installed libmpi."""
    name, info = _installation("mpich", mpi)
    lib = Path(name if info is None else info["libmpi"])
    try:
        data = lib.read_bytes()
    except OSError as e:
        raise CollplanError(f"cannot read {lib}: {e.strerror}") from None
    trees = {}
    for m in re.finditer(rb'\{"collective=[^\x00]*', data):
        try:
            tree = json.loads(m.group().decode())
        except (ValueError, UnicodeDecodeError):
            continue
        text = m.group()
        kind = "mpir" if b"algorithm=MPIR_" in text else "ch4" if b"composition=MPIDI_" in text else None
        if kind:
            trees[kind] = tree
    leaves = {m.decode()[len("algorithm="):] for m in re.findall(rb"algorithm=MPIR_\w+_intra_\w+", data)}
    if "mpir" not in trees or not leaves:
        raise CollplanError(f"{lib} holds no MPICH collective selection tree (allowed: MPICH 4 or 5's libmpi)")
    if info:
        version = info["version"]
    else:  # the source directory its build named: /mpich-5.0.2/src/..., Debian's -ffile-prefix-map=.../mpich-4.0.2=.
        m = re.search(rb"/mpich-(\d+\.\d+[\w.]*?)[/=]", data)
        version = f"MPICH {m.group(1).decode()}" if m else "MPICH (version unknown)"
    return Target("mpich", version, str(lib), trees=trees, leaves=leaves)


# ------------------------------------------------------------------------------------------- the mapping
def _params(algorithm: str, params: dict) -> dict:
    """Every parameter of `algorithm` as a string, its default where not given."""
    spec = next((a for a in api.algorithms() if a["name"] == algorithm), None)
    full = {p["name"]: str(p["default"]) for p in spec["params"]} if spec else {}
    return full | {k: str(v) for k, v in (params or {}).items()}


def _maps(target: Target, collective: str, ranks: int, nbytes: int, name: str, algorithm: str, params: dict,
          commutative: bool) -> str:
    """"" where the library's `name` sends the messages of (algorithm, params) at this size for every element
    size, else what it runs instead."""
    total = nbytes * ranks if collective in ("allgatherv", "reduce_scatter") else nbytes  # native's convention
    for ts in TYPE_SIZES:  # count = bytes // ts, so that the failing sizes are a threshold (a count below P ...)
        got = native.runs(target.family, collective, ranks, total, name, commutative=commutative, type_size=ts)
        if got.algorithm != algorithm or _params(got.algorithm, got.params) != params:
            what = got.algorithm or got.reason
            return f"{got.native} runs {what} at {nbytes} B" + (f" ({ts}-byte elements)" if ts > 1 else "")
    return ""


def _covered(target, e, name, params, commutative) -> tuple[int, int, str]:
    """The part [a, b) of the entry's range where `name` maps to it, and why the rest does not. The fallbacks
    inside the libraries' algorithms are thresholds in the size, so the part is an interval holding an end."""
    c, P, lo = e["collective"], e["ranks"], e.get("min_bytes", 0)
    hi = e.get("max_bytes") or UNBOUNDED
    fails = lambda b: _maps(target, c, P, b, name, e["algorithm"], params, commutative)  # noqa: E731
    at_lo, at_hi = fails(lo), fails(hi - 1)
    if not at_lo and not at_hi:
        return lo, hi, ""
    if at_lo and at_hi:
        return lo, lo, at_lo
    a, b = lo, hi - 1  # the state at a is lo's, at b hi - 1's: bisect for the first size of hi - 1's state
    while b - a > 1:
        m = (a + b) // 2
        if bool(fails(m)) == bool(at_lo):
            a = m
        else:
            b = m
    return (b, hi, at_lo) if at_lo else (lo, b, at_hi)


def _noncommutative_names(target: Target, collective: str) -> set[str]:
    """The algorithms the library's own default selection runs for non-commutative operations (Open MPI:
    coll_tuned_decision_fixed.c's non-commutative rows, and rabenseifner, which falls back by itself; MPICH: the
    leaves under is_commutative=no or is_op_built_in=no of its installed tree)."""
    if target.family == "openmpi":
        rows = native.OMPI_FIXED[collective][1]
        names = {"rabenseifner"}
        for _, sizes in rows.get("noncommutative", []):
            for alg in ([a for _, a in sizes] if isinstance(sizes, list) else [sizes]):
                names.add(native.OMPI_NAMES[collective][alg - 1])
        return names
    out: set[str] = set()

    def walk(node, under):
        for key, sub in node.items():
            if key.startswith("algorithm=") and under:
                out.add(key.split("_intra_", 1)[-1])
            walk(sub, under or key in ("is_commutative=no", "is_op_built_in=no"))
    walk(target.trees["mpir"].get(f"collective={collective}", {}), False)
    return out


def _op_side(op: str | None) -> str:
    return "any" if op is None else "no" if op == "noncommutative" else "yes"


def _pick_entries(entries: list[dict], sides: tuple[str, ...]) -> tuple[dict[str, list[dict]], list[Left]]:
    """Per side of the operation the library distinguishes, the entries its rules follow: those for any operation,
    else 'sum', else the first operation named; the others are left with the reason."""
    chosen, left = {}, []
    for side in sides:
        mine = [e for e in entries if side == "any" or _op_side(e.get("op")) in (side, "any")]
        ops = sorted({e.get("op") for e in mine}, key=lambda o: (o is not None, o != "sum", o or ""))
        if ops:
            chosen[side] = [e for e in mine if e.get("op") == ops[0]]
    used = {id(e) for es in chosen.values() for e in es}
    for e in entries:
        if id(e) not in used:
            follow = ", ".join(sorted({x.get("op") or "any" for es in chosen.values() for x in es}))
            left.append(Left(e, e.get("min_bytes", 0), e.get("max_bytes"), f"the library's rules cannot tell op "
                             f"{e.get('op') or 'any'} from op {follow}, which they follow"))
    return chosen, left


def _first_match(entries: list[dict]) -> tuple[list[dict], list[Left]]:
    """The entries cut to the sizes where each is the first match in file order (as the PMPI library looks them
    up), sorted by size; the ones no size reaches are left."""
    taken: list[tuple[int, int]] = []
    pieces, left = [], []
    for e in entries:
        lo, hi = e.get("min_bytes", 0), e.get("max_bytes") or UNBOUNDED
        free = [(lo, hi)] if hi > lo else []
        for a, b in taken:
            free = [part for x, y in free for part in ((x, min(y, a)), (max(x, b), y)) if part[1] > part[0]]
        if not free:
            left.append(Left(e, lo, e.get("max_bytes"), "an empty range" if hi <= lo else
                             "earlier entries match all its sizes first (the first match wins)"))
        for x, y in free:
            piece = {k: v for k, v in e.items() if k != "max_bytes"} | {"min_bytes": x}
            pieces.append(piece | ({} if y >= UNBOUNDED else {"max_bytes": y}))
        if hi > lo:
            taken.append((lo, hi))
    return sorted(pieces, key=lambda e: e["min_bytes"]), left


def _map_group(target, collective, ranks, entries, side, assume_commutative):
    """Rules and leftovers for one (collective, P, side) group of entries, sorted by size."""
    rules, left, kept = [], [], []
    family = target.family
    unit = SIZE_UNIT[family][collective]
    unsafe = collective in SIZE_UNSAFE or unit is None
    safe = _noncommutative_names(target, collective) if collective in REDUCTIONS else None
    if collective == "alltoallv":  # the PMPI library follows the first alltoallv entry at every size
        left += [Left(e, e.get("min_bytes", 0), e.get("max_bytes"), "alltoallv entries ignore the size "
                      "(docs/runtime.md): the first one holds") for e in entries[1:]]
        entries = [{k: v for k, v in entries[0].items() if k != "max_bytes"} | {"min_bytes": 0}]
    pieces, lf = _first_match(entries)
    left += lf
    for e in pieces:
        lo, hi = e.get("min_bytes", 0), e.get("max_bytes")
        if e["algorithm"] == "native":
            kept.append(e)
            continue
        params = _params(e["algorithm"], e.get("params"))
        best, commutative_only = None, []
        for name in target.names(collective):
            a, b, reason = _covered(target, dict(e, ranks=ranks), name, params, side != "no")
            if b > a and safe is not None and side != "yes" and name not in safe and not (
                    assume_commutative and family == "openmpi"):
                commutative_only.append(name)
            elif b > a and (best is None or b - a > best[2] - best[1]):
                best = (name, a, b, reason)
        if best is None:
            names = "/".join(commutative_only)
            left.append(Left(e, lo, hi, ("non-commutative operations: " if side == "no" else "") + (
                f"{target.version}'s rules apply to every operation, and it runs {collective} {names} for "
                f"commutative ones only (--assume-commutative: every {collective} of the program commutes)"
                if family == "openmpi" else f"MPICH runs {names} for commutative operations only")
                if commutative_only else
                f"no {target.version} algorithm sends its messages (docs/planner.md's table)"))
            continue
        name, a, b, reason = best
        b_out = None if b >= UNBOUNDED else b
        if a > lo:
            left.append(Left(e, lo, a, reason))
        if b_out is not None and (hi is None or b_out < hi):
            left.append(Left(e, b_out, hi, reason))
        if family == "openmpi":
            ident = str(target.ids[collective][name])
            label = f"tuned {collective} {ident} ({name})"
        else:
            ident = label = f"MPIR_{collective.capitalize()}_intra_{name}"
        rules.append(Rule(collective, ranks, a, b_out, e["algorithm"], params, label, ident, side))
    if unsafe and rules and not (len(rules) == 1 and rules[0].min_bytes == 0 and rules[0].max_bytes is None):
        why = (f"{target.version} selects {collective} by the communicator size only" if unit is None else
               f"{target.version}'s {collective} size counts {SIZE_UNSAFE_WHY[family]}")
        left += [Left(next(e for e in entries if e["algorithm"] == r.algorithm), r.min_bytes, r.max_bytes,
                      f"{why}: one algorithm for every size is exported, this plan has several") for r in rules]
        rules = []
    return rules, left, kept


def map_wisdom(entries: list[dict], target: Target, assume_commutative: bool = False):
    """(rules, left, kept) of the wisdom's entries for the target library."""
    rules, left, kept = [], [], []
    groups: dict[tuple, list[dict]] = {}
    for e in entries:
        c = e["collective"]
        if c not in SIZE_UNIT[target.family]:
            left.append(Left(e, e.get("min_bytes", 0), e.get("max_bytes"), f"{c} has no rules here"))
        elif "ranks" not in e:
            left.append(Left(e, e.get("min_bytes", 0), e.get("max_bytes"), "no ranks: a library's rule is for a "
                             "communicator size (plan with --ranks)"))
        elif "topology" in e:
            left.append(Left(e, e.get("min_bytes", 0), e.get("max_bytes"), f"topology-specific ({e['topology']}): "
                             "only collplan.mpi declares a topology"))
        else:
            groups.setdefault((c, e["ranks"]), []).append(e)
    for (c, P), es in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        sides = ("yes", "no") if target.family == "mpich" and c in REDUCTIONS else ("any",)
        chosen, lf = _pick_entries(es, sides)
        left += lf
        for side, group in chosen.items():
            r, lf, k = _map_group(target, c, P, group, side, assume_commutative)
            rules += r
            left += lf
            kept += [e for e in k if e not in kept]
    unique = []
    for lf in left:  # an entry for any operation is in both of MPICH's sides
        if not any(u.entry is lf.entry and (u.min_bytes, u.max_bytes) == (lf.min_bytes, lf.max_bytes)
                   for u in unique):
            unique.append(lf)
    return rules, unique, kept


# ------------------------------------------------------------------------------------------- the writers
def _size(family: str, collective: str, ranks: int, nbytes: int) -> int:
    return nbytes * ranks if SIZE_UNIT[family][collective] == "P" else nbytes


def ompi_rules_text(rules: list[Rule], target: Target, source: str) -> str:
    """The rules file (ompi/mca/coll/tuned/coll_tuned_dynamic_file.c): per collective its id, its communicator
    sizes, and per size its message-size rules "size algorithm fan-in/out segment-size", sizes ascending from 0."""
    by_coll: dict[str, dict[int, list[Rule]]] = {}
    for r in rules:
        by_coll.setdefault(r.collective, {}).setdefault(r.ranks, []).append(r)
    out = [f"# Open MPI coll/tuned rules written by collplan export-tuning from {source} for {target.version}",
           "# (ids from " + target.where + "); use: --mca coll_tuned_use_dynamic_rules 1 "
           "--mca coll_tuned_dynamic_rules_filename FILE", str(len(by_coll))]
    for c in sorted(by_coll, key=OMPI_COLLTYPE.get):
        blocks: dict[int, list[tuple[int, int]]] = {0: [(0, 0)]}   # sizes below the first listed: the fixed rules
        for P, rs in by_coll[c].items():
            steps = {0: 0}
            for r in sorted(rs, key=lambda r: r.min_bytes):
                steps[_size(target.family, c, P, r.min_bytes)] = int(r.ident)
                if r.max_bytes is not None:
                    steps.setdefault(_size(target.family, c, P, r.max_bytes), 0)
            blocks[P] = sorted(steps.items())
            blocks.setdefault(P + 1, [(0, 0)])  # the fence: P + 1 and up keep the fixed rules
        out += [f"{OMPI_COLLTYPE[c]}  # {c}", f"{len(blocks)}  # communicator sizes"]
        for P, steps in sorted(blocks.items()):
            out += [f"{P}  # communicator size", f"{len(steps)}  # message sizes"]
            out += [f"{s} {alg} 0 0" for s, alg in steps]
    return "\n".join(out) + "\n"


def _prune(node, P: int):
    """A copy of an MPICH subtree with the communicator-size conditions decided for P as MPIR_Csel_prune would
    (they are then safe below a message-size condition, where csel's search tests comm_size<N as <=)."""
    if not isinstance(node, dict):
        return node
    out = {}
    for key, sub in node.items():
        m = re.fullmatch(r"comm_size(<=|<|=)(\w+)", key)
        if m and m.group(2) != "node_comm_size":
            op, v = m.groups()
            holds = v == "any" or (v == "pow2" and P & (P - 1) == 0) or (
                v.isdigit() and (P <= int(v) if op == "<=" else P < int(v)))
            if holds:
                return _prune(sub, P) if not out else out | {"comm_size=any": _prune(sub, P)}
            continue
        out[key] = _prune(sub, P)
    return out


def _size_chain(key: str, ranges: list[tuple[int, int | None, dict]], default: dict) -> dict:
    """{key<=lo-1: default, key<=hi-1: leaf, ..., key=any: default} for ranges sorted and disjoint (bytes in the
    library's unit)."""
    out, at = {}, 0
    for lo, hi, leaf in ranges:
        if lo > at:
            out[f"{key}<={lo - 1}"] = default
        if hi is None:
            out[f"{key}=any"] = leaf
            return out
        out[f"{key}<={hi - 1}"] = leaf
        at = hi
    out[f"{key}=any"] = default
    return out


def _splice(tree: dict, collective: str, branches: dict[int, callable]) -> dict:
    """The tree with, for each P, comm_size<=P-1 -> the default, comm_size<=P -> branches[P](the default pruned
    for P), before the collective's default intra subtree."""
    tree = json.loads(json.dumps(tree))
    top = tree.get(f"collective={collective}")
    if top is None:
        return tree
    intra_key = "comm_type=intra" if "comm_type=intra" in top else None
    default = top[intra_key] if intra_key else top
    chain = {}
    for P in sorted(branches):
        if P > 1 and P - 1 not in branches:
            chain[f"comm_size<={P - 1}"] = default
        chain[f"comm_size<={P}"] = branches[P](_prune(default, P))
    chain["comm_size=any"] = default
    if intra_key:
        top[intra_key] = chain
    else:
        tree[f"collective={collective}"] = chain
    return tree


def _leaf(target: Target, rule: Rule) -> dict:
    """{"algorithm=MPIR_...": {params}}, the parameters as the default tree gives that algorithm."""
    key = f"algorithm={rule.ident}"

    def find(node):
        for k, sub in node.items():
            if k == key:
                return sub
            if isinstance(sub, dict) and (got := find(sub)) is not None:
                return got
        return None
    return {key: json.loads(json.dumps(find(target.trees["mpir"]) or {}))}


def _mpir_branch(target: Target, collective: str, rules: list[Rule], default: dict) -> dict:
    """The MPIR tree's branch for one P: the rules' leaves by size (split by operation for the reductions), the
    default subtree elsewhere."""
    def by_size(side_rules):
        if not side_rules:
            return default
        ranges = [(_size("mpich", collective, r.ranks, r.min_bytes),
                   None if r.max_bytes is None else _size("mpich", collective, r.ranks, r.max_bytes), _leaf(target, r))
                  for r in sorted(side_rules, key=lambda r: r.min_bytes)]
        if SIZE_UNIT["mpich"][collective] is None:
            return ranges[0][2]
        return _size_chain(MPICH_SIZE_KEY.get(collective, "total_msg_size"), ranges, default)
    if collective not in REDUCTIONS:
        return by_size(rules)
    return {f"is_commutative={side}": by_size([r for r in rules if r.commutative == side]) for side in ("yes", "no")}


def _ch4_branch(collective: str, rules: list[Rule], default: dict) -> dict:
    """The ch4 tree's branch for one P: the composition that runs the algorithm tree over the sizes of the rules
    (of either operation: one range where they overlap), the default subtree elsewhere."""
    comp = {f"composition=MPIDI_{collective.capitalize()}_intra_composition_"
            f"{MPICH_NETMOD_COMPOSITION[collective]}": {}}
    if collective not in MPICH_SIZE_KEY:  # barrier: the communicator size only
        return comp
    merged: list[tuple[int, int | None, dict]] = []
    for r in sorted(rules, key=lambda r: r.min_bytes):
        lo, hi = r.min_bytes, r.max_bytes
        if merged and merged[-1][1] is not None and lo <= merged[-1][1]:
            last_lo, last_hi, _ = merged.pop()
            lo, hi = last_lo, None if hi is None else max(hi, last_hi)
        elif merged and merged[-1][1] is None:
            continue  # inside an open range already
        merged.append((lo, hi, comp))
    return _size_chain("avg_msg_size", merged, default)


def mpich_json_texts(rules: list[Rule], target: Target) -> dict[str, str]:
    """The MPIR tree and the ch4 tree, each the installed default with collplan's branches spliced in."""
    mpir, ch4 = target.trees["mpir"], target.trees.get("ch4")
    by_coll: dict[str, dict[int, list[Rule]]] = {}
    for r in rules:
        by_coll.setdefault(r.collective, {}).setdefault(r.ranks, []).append(r)
    for c, per_p in by_coll.items():
        mpir = _splice(mpir, c, {P: (lambda d, c=c, rs=rs: _mpir_branch(target, c, rs, d)) for P, rs in per_p.items()})
        if ch4 is not None and c in MPICH_NETMOD_COMPOSITION:
            ch4 = _splice(ch4, c, {P: (lambda d, c=c, rs=rs: _ch4_branch(c, rs, d)) for P, rs in per_p.items()})
    files = {"main": json.dumps(mpir, indent=1) + "\n"}
    if ch4 is not None:
        files["ch4"] = json.dumps(ch4, indent=1) + "\n"
    return files


def export(wisdom: str, fmt: str, mpi: str | None = None, assume_commutative: bool = False,
           entries: list[dict] | None = None) -> Export:
    """The tuning file of format `fmt` for the wisdom file `wisdom` (or its `entries`), for the installed MPI `mpi`
    (an installation's name or the path of its ompi_info / libmpi; default the first of the format's family)."""
    if fmt not in FORMATS:
        raise CollplanError(f"format '{fmt}' is unknown (allowed: {', '.join(FORMATS)})")
    if entries is None:
        entries = read_wisdom(wisdom)
    target = openmpi_target(mpi) if fmt == "ompi-rules" else mpich_target(mpi)
    rules, left, kept = map_wisdom(entries, target, assume_commutative)
    if fmt == "ompi-rules":
        files = {"main": ompi_rules_text(rules, target, wisdom)}
    else:
        files = mpich_json_texts(rules, target)
    return Export(fmt, target, rules, left, kept, files)


def equivalents(target: Target, ranks=(2, 6, 8), sizes=(64, 65536)) -> list[dict]:
    """For every algorithm of the installed library, the collplan algorithms it sends the messages of (at these P
    and sizes, commutative operations, 1-byte elements): the table of docs/planner.md."""
    rows = []
    for c in SIZE_UNIT[target.family]:
        for name in target.names(c):
            got, why = {}, set()
            for P in ranks:
                for b in sizes:
                    total = b * P if c in ("allgatherv", "reduce_scatter") else b
                    r = native.runs(target.family, c, P, total, name)
                    if r.algorithm:
                        label = r.algorithm + "".join(f" {k}={v}" for k, v in sorted(r.params.items()))
                        got.setdefault(label, []).append(P)
                    else:
                        why.add(r.reason)
            ident = (f"{target.ids[c][name]} {name}" if target.family == "openmpi"
                     else f"MPIR_{c.capitalize()}_intra_{name}")
            rows.append({"collective": c, "native": ident,
                         "collplan": "; ".join(f"{a} (P = {', '.join(map(str, sorted(set(ps))))})"
                                               if len(set(ps)) < len(ranks) else a for a, ps in got.items()),
                         "reason": "" if got else "; ".join(sorted(why))})
    return rows
