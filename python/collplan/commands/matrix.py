"""`collplan matrix stats|generate`: communication matrices of alltoallv (docs/unstructured.md)."""
from __future__ import annotations

import sys

from .. import unstructured as u
from ._common import add_json_csv, add_max_memory, file_arg, print_json_csv


def register(sub) -> None:
    p = sub.add_parser("matrix", help="alltoallv communication matrices: statistics, test-set generation")
    msub = p.add_subparsers(dest="matrix_command", required=True, parser_class=type(p))
    s = msub.add_parser("stats", help="the paper's statistics of a matrix (messages per processor, lengths)",
                        epilog="example:\n  collplan matrix stats testset1:P=32,d=4,seed=1")
    s.add_argument("matrix", metavar="FILE|SPEC", help="a .csv/.txt, .mtx or .json file, or testset1:P=32,d=4,seed=1, "
                   "testset2:..., mesh:P=32,refine=2,seed=1")
    add_json_csv(s, "the statistics (one row)")
    add_max_memory(s)
    s.set_defaults(func=cmd_stats)
    g = msub.add_parser("generate", help="write a generated matrix (test sets 1-3) to a file",
                        epilog="example:\n  collplan matrix generate mesh:P=32,refine=2,seed=1 -o mesh32.mtx")
    g.add_argument("spec", metavar="SPEC", help="testset1:P=32,d=4,seed=1, testset2:P=32,d=4,seed=1,max_units=32, "
                   "or mesh:P=32,refine=2,seed=1")
    g.add_argument("-o", "--output", required=True, type=file_arg("-o", stdout=True), help="output file (.csv, .mtx, .json) or - for stdout")
    g.add_argument("--format", choices=["csv", "mtx", "json"], help="default: from the file name, else csv")
    add_max_memory(g)
    g.set_defaults(func=cmd_generate)


def cmd_stats(args) -> int:
    st = u.stats(u.matrix_from_spec(args.matrix, max_memory=args.max_memory))
    if print_json_csv(args, st, [st]):
        return 0
    print(f"# {args.matrix}: P = {st['ranks']}, {st['messages']} messages, {st['total_units']} units")
    print(f"messages sent per processor:  max {st['max_sent']}  min {st['min_sent']}  average {st['avg_sent']:.4g}")
    print(f"messages received per proc.:  max {st['max_recv']}  min {st['min_recv']}")
    print(f"message length (units):       max {st['max_len']}  min {st['min_len']}  average {st['avg_len']:.4g}")
    print(f"Delta (optimal contention-free phases): {st['degree']}")
    return 0


def cmd_generate(args) -> int:
    m = u.matrix_from_spec(args.spec, max_memory=args.max_memory)
    text = u.write_matrix(args.output, m, args.format)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        print(f"wrote {args.output} ({len(m)} x {len(m)})", file=sys.stderr)
    return 0
