#!/usr/bin/env bash
# Runs the MPI benchmarks under both MPIs and writes bench/mpi/results-<abi>.md (the tables docs/runtime.md quotes).
#   make bench-mpi          (builds build/bench with the MPI runtime, then runs this)
# Environment: MAX_BYTES (default 1048576), RANKS (default "2 4 8"), ABIS (default "openmpi mpich").
set -euo pipefail
cd "$(dirname "$0")/../.."
MAX_BYTES=${MAX_BYTES:-1048576}
RANKS=${RANKS:-"2 4 8"}
ABIS=${ABIS:-"openmpi mpich"}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
for abi in $ABIS; do
  OUT=bench/mpi/results-$abi.md
  mpirun=".mpi/$abi/bin/mpirun"
  extra=""; [ "$abi" = openmpi ] && extra="--oversubscribe"
  version=$("$mpirun" --version 2>&1 | grep -m1 -E "Open MPI|Version:" | sed 's/^ *//')
  {
    echo "# MPI benchmark results: $abi"
    echo
    echo "Recorded $(date -u +%Y-%m-%d) on $(nproc) cores ($(uname -m)) by bench/mpi/run.sh; times in microseconds"
    echo "(per call, slowest rank, best of 3 repetitions); best/native < 1 means collplan's best algorithm beat the library."
    for P in $RANKS; do
      for c in allgather alltoall allreduce barrier; do
        echo; echo "## $abi ($version), P=$P, $c"; echo
        timeout 1800 "$mpirun" -n "$P" $extra "build/bench/bench_mpi_$abi" compare "$c" "$MAX_BYTES"
      done
      echo; echo "## $abi, P=$P: executor overhead against hand-written MPI code of the same algorithm"; echo
      timeout 1800 "$mpirun" -n "$P" $extra "build/bench/bench_mpi_$abi" overhead "$MAX_BYTES"
    done
    echo; echo "## $abi, P=4: non-contiguous messages, packing vs derived datatypes"; echo
    timeout 1800 "$mpirun" -n 4 $extra "build/bench/bench_mpi_$abi" noncontig "$MAX_BYTES"
  } | tee "$OUT.tmp"
  mv "$OUT.tmp" "$OUT"
done
