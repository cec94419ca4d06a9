#!/usr/bin/env bash
# run.sh VARIANT SCENARIO FIRST COUNT -> /work/r96/per/VARIANT-SCENARIO-FIRST.txt (seed goodput p99)
v=$1; sc=$2; f=$3; n=$4
S=${SIM:-/work/r96/sim-tog8}; [ "$v" = K ] && S=/work/r96/sim-kept
mkdir -p /work/r96/per
tv=$v; [ "$v" = M ] && tv=
R96=$tv $S scorecard --scenario $sc --algo littles --seed $f --seeds $n --out /tmp/r96-$v-$sc-$f 2>&1 >/dev/null \
 | awk '/seed/ {for(i=1;i<=NF;i++){if($i=="seed")s=$(i+1); if($i=="goodput")g=$(i+1); if($i=="p99")p=$(i+1)}; print s, g, p}' > /work/r96/per/$v-$sc-$f.txt
rm -rf /tmp/r96-$v-$sc-$f
