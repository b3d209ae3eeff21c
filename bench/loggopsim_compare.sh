#!/usr/bin/env bash
# Compares collplan's loggp simulator with LogGOPSim (Hoefler et al.) on schedules exported to GOAL.
# LogGOPSim is NOT part of collplan: build it yourself outside the repository, e.g.
#   (fetch the spcl/LogGOPSim sources to /tmp/lgs) ; apt-get install gengetopt re2c libgraphviz-dev
#   cd /tmp/lgs/src/LogGOPSim && sed -i 's/-O0 -g/-O3 -g/' Makefile && make
# then run:  bench/loggopsim_compare.sh /tmp/lgs/src/LogGOPSim
# Prints, per schedule, LogGOPSim's maximum finishing time and collplan's (both in ns). The a2at lines use four
# NICs (ports 0..3 on every send and recv, exported as `nic p`; LogGOPSim sizes its NICs from them).
set -euo pipefail
LGS=${1:?usage: $0 DIR-WITH-LogGOPSim-AND-txt2bin}
C=${COLLPLAN:-.venv/bin/collplan}
L=2500; o=1500; g=1000; G=6; S=65535
MODEL="loggp:L=${L}ns,o=${o}ns,g=${g}ns,G=${G}ns/B"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf "%-36s %8s %14s %14s\n" schedule size LogGOPSim_ns collplan_ns
while read -r coll alg ranks size ports; do
    where=(--ranks "$ranks"); [[ $ranks == *:* ]] && where=(--topology "$ranks")
    $C export --collective "$coll" --algorithm "$alg" "${where[@]}" --format goal --size "$size" -o "$tmp/s.goal" 2>/dev/null
    "$LGS/txt2bin" -i "$tmp/s.goal" -o "$tmp/s.bin" > /dev/null
    lg=$("$LGS/LogGOPSim" -f "$tmp/s.bin" -L $L -o $o -g $g -G $G -O 0 -S $S -b | sed -n 's/^Maximum finishing time at host [0-9]*: \([0-9]*\).*/\1/p')
    cp=$($C simulate --collective "$coll" --algorithm "$alg" "${where[@]}" --model "$MODEL" --fidelity loggp \
            --size "$size" --network "eager=${S}B,ports=${ports:-1}" --json | python3 -c "import json,sys; print(round(json.load(sys.stdin)['results'][0]['time_s']*1e9))")
    printf "%-36s %8s %14s %14s\n" "$coll/$alg P=$ranks" "$size" "$lg" "$cp"
done <<'LIST'
allreduce recursive_doubling 8 1KiB
allreduce recursive_doubling 64 1MiB
allreduce rabenseifner 16 256KiB
allreduce ring 12 96KiB
allgather ring 6 4KiB
allgather bruck 5 64KiB
allgather recursive_doubling 32 128KiB
alltoall pairwise 8 100KiB
alltoall bruck 7 2KiB
alltoall ring 10 70KiB
barrier dissemination 9 0
alltoall a2at torus:4x4 4KiB 4
alltoall a2at torus:5x5 100KiB 4
alltoall a2at torus:4x4 1MiB 4
LIST
