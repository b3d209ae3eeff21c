"""`collplan replay`: replay a recorded application's collectives at another scale, the MPI library's choice
against collplan's (docs/profile.md, "Replaying at another scale").

    collplan replay prof/ --ranks 64 --machine ib-qdr
    collplan replay prof/ --topology torus:16x16x16 --machine a2at-torus --scaling strong --wisdom w.json
"""
from __future__ import annotations

from ..machines import machine_names
from ..native import LIBRARIES
from ..replay import SCALINGS, format_replay, replay
from ._common import RANKS, add_json_csv, add_max_memory, print_json_csv


def register(sub) -> None:
    p = sub.add_parser("replay", help="replay a recorded profile at another scale: the MPI library's choice vs "
                       "collplan's",
                       epilog="example:\n  collplan replay prof/ --ranks 64 --machine ib-qdr --scaling weak")
    p.add_argument("profile", metavar="DIR", help="a profile directory (COLLPLAN_PROFILE=DIR, docs/profile.md)")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--ranks", type=RANKS, help="replay at N ranks on full:N (a multiple of the recorded P)")
    g.add_argument("--topology", help="replay on a topology, rank i on node i, e.g. torus:16x16x16 (its node count "
                   "a multiple of the recorded P)")
    p.add_argument("--machine", required=True, help=f"bundled machine ({', '.join(machine_names())}) or a TOML file")
    p.add_argument("--fidelity", choices=("loggp", "flow"), default="loggp", help="the simulator")
    p.add_argument("--scaling", choices=SCALINGS, default="weak",
                   help="weak: sizes per rank and compute gaps kept; strong: the totals kept (shares and gaps / k)")
    p.add_argument("--library", choices=LIBRARIES,
                   help="the MPI library whose choice is the native variant (default: the profile's mpi line)")
    p.add_argument("--wisdom", metavar="FILE", help="collplan's choices from this wisdom file (default: a plan made "
                   "now with the estimate evaluator)")
    add_max_memory(p)
    add_json_csv(p, "the replay (CSV: one row per variant and collective)")
    p.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=cmd_replay)


def cmd_replay(args) -> int:
    from ..profile import load
    result = replay(load(args.profile, max_memory=args.max_memory), args.machine, args.ranks, args.topology,
                    args.fidelity, args.scaling, args.library, args.wisdom, progress=not args.no_progress,
                    max_memory=args.max_memory)
    rows = [{"variant": v.name, "collective": c, "time_s": t} for v in ([result.recorded] if result.recorded else [])
            + result.variants for c, t in v.per_collective_s.items()]
    if not print_json_csv(args, result.as_dict(), rows):
        print(format_replay(result))
    return 0
