#!/bin/bash
# The planner's ground truth on a lent 16-core node (bench/README.md, "On a 16-core node: calibrate and every
# algorithm under both MPIs"). Builds collplan there (its Python), then for Open MPI and MPICH from the wheels:
#   mpirun -n P collplan calibrate            P = 16, 8, 2 (from 4 ranks on it measures the host channel too)
#   mpirun -n P collplan run --collective C --sizes 8B..1MiB --iters 30 --json    P = 16, 8; the five collectives
#     of ../shared/data/node16 (allreduce, allgather, alltoall, bcast, reduce_scatter_block)
# and the sweeps over MPI (mpirun -n N collplan plan / verify --all) at N = 1, 4, 8, 16; then the P = 16 runs once
# more (the run-to-run spread) and the allreduce plan at 65,536 ranks over all cores.
# Run from the repository root with .dev carried: .dev/mpi/{openmpi,mpich} (copies of .mpi; MPICH's ABI library left
# out for size) and .dev/whl (mpi4py, nanobind, scikit-build-core, pathspec wheels for the node's Python). Everything
# lands in $OUT/results.tgz (re-packed after each step, so a run cut short keeps what it measured) and $OUT/log.txt.
# RANKS="4 2" WHL=dir PY=python runs the same at a smaller scale (how it was tried on the 2-core VM first);
# ONLY=calibrate runs the calibrations alone.
set -u
R=$PWD
OUT=${OUT:-$R/device-out}
PY=${PY:-python3}
WHL=${WHL:-$R/.dev/whl}
RANKS=${RANKS:-16 8}
NS=${NS:-1 4 8 16}
MPI=$R/.dev/mpi
RES=/tmp/collplan-device/res
mkdir -p "$OUT" "$RES"
exec > >(tee -a "$OUT/log.txt") 2>&1
step() { echo "== $(date +%T) $*"; }
save() { tar -C "$(dirname "$RES")" -czf "$OUT/results.tgz" res; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
# Open MPI over shared memory only, as bench/latency/compare.py and the earlier node runs (bench/tuning/device.sh)
export OPAL_PREFIX=$MPI/openmpi OMPI_MCA_btl=self,sm OMPI_MCA_pml=ob1
export LD_LIBRARY_PATH=$MPI/openmpi/lib:$MPI/mpich/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

step machine
{ nproc; lscpu; free -g; df -h /dev/shm; g++ --version | head -1; $PY -V; uname -r; } > "$RES/machine.txt" 2>&1
$PY -c "import sysconfig, os; p = sysconfig.get_paths()['include']; print('Python.h', os.path.exists(p + '/Python.h'), p)"
head -3 "$RES/machine.txt"; save

step "install the carried wheels and build collplan"
$PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$WHL"/*.whl || exit 1
export PYTHONPATH=/tmp/site
start=$(date +%s)
CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) $PY -m pip install -q --no-index --no-build-isolation --no-deps --target /tmp/site \
  -C build-dir=/tmp/collplan-device/build -C cmake.define.COLLPLAN_MPI_HOMES="openmpi=$MPI/openmpi;mpich=$MPI/mpich" \
  . > "$RES/build.txt" 2>&1 || { tail -30 "$RES/build.txt"; save; exit 1; }
echo "built in $(( $(date +%s) - start )) s"
CP="$PY -m collplan"

launch() {  # launch ABI N command...: mpirun of that MPI, one rank per core (a launcher that cannot bind: unbound)
  local abi=$1 n=$2; shift 2
  if [ "$abi" = openmpi ]; then timeout 150 "$MPI/openmpi/bin/mpirun" -n "$n" $OBIND "$@"
  else timeout 150 "$MPI/mpich/bin/mpirun" -n "$n" $MBIND "$@"; fi
}
OBIND="--bind-to core"; MBIND="-bind-to core"
"$MPI/openmpi/bin/mpirun" -n 2 $OBIND true >/dev/null 2>&1 || { OBIND="--bind-to none"; echo "openmpi: unbound"; }
"$MPI/mpich/bin/mpirun" -n 2 $MBIND true >/dev/null 2>&1 || { MBIND=""; echo "mpich: unbound"; }
echo "binding: openmpi '$OBIND', mpich '$MBIND'" | tee -a "$RES/machine.txt"

sweep() {  # sweep ABI P SUFFIX: every algorithm of the five collectives, and the library's own, at P ranks
  local abi=$1 P=$2 x=$3 c s
  for c in allreduce allgather alltoall bcast reduce_scatter_block; do
    s=$(date +%s)
    launch $abi $P $CP run --collective $c --sizes 8B..1MiB --iters 30 --json "$RES/run_${c}_${abi}_P$P$x.json" \
      > "$RES/run_${c}_${abi}_P$P$x.txt" 2>&1 || tail -5 "$RES/run_${c}_${abi}_P$P$x.txt"
    echo "  $c: $(( $(date +%s) - s )) s"
  done
  save
}
if [ "${ONLY:-}" = calibrate ]; then  # ONLY=calibrate: the calibrations alone (P = RANKS and 2), e.g. after calibrate changed
  for P in $RANKS 2; do for abi in openmpi mpich; do
    step "$abi P=$P calibrate"
    launch $abi $P $CP calibrate --out "$RES/calibrate_${abi}_P$P.toml" > "$RES/calibrate_${abi}_P$P.txt" 2>&1 ||
      tail -5 "$RES/calibrate_${abi}_P$P.txt"
  done; done
  save; step done; exit 0
fi
for P in $RANKS; do
  for abi in openmpi mpich; do
    step "$abi P=$P calibrate"
    launch $abi $P $CP calibrate --out "$RES/calibrate_${abi}_P$P.toml" > "$RES/calibrate_${abi}_P$P.txt" 2>&1 ||
      tail -5 "$RES/calibrate_${abi}_P$P.txt"
    sweep $abi $P ""
  done
done

for abi in openmpi mpich; do
  step "$abi P=2 calibrate (one pair, as the node's earlier file)"
  launch $abi 2 $CP calibrate --out "$RES/calibrate_${abi}_P2.toml" > "$RES/calibrate_${abi}_P2.txt" 2>&1
done
save

step "sweeps over MPI (Open MPI, wall seconds)"
for n in $NS; do
  for job in "plan --collective reduce_scatter_block --ranks 1024 --machine ib-qdr --sizes 8B..1MiB --json" \
             "verify --all --max-ranks 64 --json"; do
    name=$(echo "$job" | cut -d' ' -f1)
    s=$(date +%s%N)
    if [ "$n" = 1 ]; then timeout 150 $CP $job; else launch openmpi "$n" $CP $job; fi \
      > "$RES/sweep_${name}_N$n.json" 2> "$RES/sweep_${name}_N$n.err"
    echo "N=$n $name: $(( ($(date +%s%N) - s) / 1000000 )) ms" | tee -a "$RES/sweeps.txt"
  done
done
for n in $NS; do cmp -s "$RES/sweep_plan_N1.json" "$RES/sweep_plan_N$n.json" && echo "plan N=$n: identical" ||
  echo "plan N=$n: DIFFERS"; cmp -s "$RES/sweep_verify_N1.json" "$RES/sweep_verify_N$n.json" &&
  echo "verify N=$n: identical" || echo "verify N=$n: DIFFERS"; done | tee -a "$RES/sweeps.txt"
save
P=${RANKS%% *}
for abi in openmpi mpich; do
  step "$abi P=$P again (the run-to-run spread)"
  sweep $abi $P _rep2
done
step "plan allreduce at 65,536 ranks over $(nproc) processes (Open MPI)"
s=$(date +%s%N)
launch openmpi "$(nproc)" $CP plan --collective allreduce --ranks 65536 --machine ib-qdr --sizes 8B..1MiB --json \
  > "$RES/plan65536_N$(nproc).json" 2> "$RES/plan65536_N$(nproc).err"
echo "rc=$? $(( ($(date +%s%N) - s) / 1000000 )) ms" | tee -a "$RES/sweeps.txt"
save
step done
