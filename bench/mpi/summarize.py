"""Condense bench/mpi/results-<abi>.md into the comparison table of docs/runtime.md (best collplan algorithm vs the
library's collective, per MPI, P and size). Usage: python bench/mpi/summarize.py [P ...] (default: 2)."""
import re
import sys
from pathlib import Path

HERE = Path(__file__).parent


def sections(text):
    for m in re.finditer(r"^## (\S+) \(.*?\), P=(\d+), (\w+)\n\n(.*?)(?=\n## |\Z)", text, re.M | re.S):
        rows = [ln.split("|")[1:-1] for ln in m.group(4).splitlines() if re.match(r"^\| \d", ln)]
        yield m.group(1), int(m.group(2)), m.group(3), [[c.strip() for c in r] for r in rows]


def main(ranks):
    out = ["| MPI | P | collective | size (B) | native (us) | best collplan (us) | algorithm | best/native |",
           "|---|---:|---|---:|---:|---:|---|---:|"]
    for path in sorted(HERE.glob("results-*.md")):
        for abi, P, coll, rows in sections(path.read_text()):
            if P not in ranks:
                continue
            for size, native, alg, ratio, *times in rows:
                best = min(float(t) for t in times)
                out.append(f"| {abi} | {P} | {coll} | {size} | {native} | {best:.2f} | {alg.split('/')[1]} | {ratio} |")
    print("\n".join(out))


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [2])
