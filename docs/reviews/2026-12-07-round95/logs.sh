#!/usr/bin/env bash
# logs.sh VARIANT FIRST LAST: DBG95 logs of report_gen per seed into logs/VARIANT/SEED.txt
v=$1; a=$2; b=$3; d=logs/${v:-M}; mkdir -p $d
for s in $(seq $a $b); do R95=$v DBG95=1 ./sim-tog scorecard --scenario report_generator_1.5x --algo littles --seed $s --out /tmp/r95-lg -q 2>$d/$s.txt >/dev/null; done
