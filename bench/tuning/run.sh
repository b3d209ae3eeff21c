#!/bin/sh
# The MPI library following a tuning file exported from a wisdom (no preload) against the library's default and
# against the PMPI library running collplan's schedule of the same algorithm from the same wisdom, with
# bench/latency/latency.c, alternated rounds (bench/latency/compare.py). Writes results-<mpi>-P<P>.md here.
#   sh bench/tuning/run.sh [ITERS] [ROUNDS] [RANKS...]       (from the repository root, after make install)
set -e
ITERS=${1:-1000}; ROUNDS=${2:-3}; shift 2 2>/dev/null || true
RANKS=${*:-2 4 8}
HERE=bench/tuning
for P in $RANKS; do
  # recursive doubling at every size: under Open MPI (P >= 4) and MPICH (P >= 2, above 8 bytes) not the default
  printf '{"format": "collplan-wisdom/1", "entries": [\n {"collective": "allreduce", "ranks": %s, "min_bytes": 0, "algorithm": "allreduce/recursive_doubling", "params": {}}]}\n' "$P" > $HERE/wisdom-P$P.json
  .venv/bin/collplan export-tuning --wisdom $HERE/wisdom-P$P.json --format ompi-rules -o $HERE/rules-P$P.txt > /dev/null
  .venv/bin/collplan export-tuning --wisdom $HERE/wisdom-P$P.json --format mpich-json -o $HERE/mpich-P$P.json > /dev/null
  for MPI in openmpi mpich; do
    FILE=$HERE/rules-P$P.txt; [ $MPI = mpich ] && FILE=$HERE/mpich-P$P.json
    .venv/bin/python bench/latency/compare.py --abi $MPI --ranks $P --collective allreduce --sizes 4:65536 \
      --iters $ITERS --rounds $ROUNDS native=native file=tuning:$FILE collplan=env:COLLPLAN_WISDOM=$HERE/wisdom-P$P.json \
      > $HERE/results-$MPI-P$P.md
    cat $HERE/results-$MPI-P$P.md
  done
done
