#!/usr/bin/env bash
# run.sh VARIANT SCENARIO FIRST COUNT -> /work/r95/per/VARIANT-SCENARIO-FIRST.txt (seed goodput p99)
v=$1; sc=$2; f=$3; n=$4
S=${SIM:-/work/r95/sim-tog}
mkdir -p /work/r95/per
R95=$v $S scorecard --scenario $sc --algo littles --seed $f --seeds $n --out /tmp/r95-$v-$sc-$f 2>&1 >/dev/null \
 | awk '/seed/ {for(i=1;i<=NF;i++){if($i=="seed")s=$(i+1); if($i=="goodput")g=$(i+1); if($i=="p99")p=$(i+1)}; print s, g, p}' > /work/r95/per/$v-$sc-$f.txt
