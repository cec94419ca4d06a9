#!/usr/bin/env bash
# run.sh VARIANT SCENARIO FIRST COUNT -> /work/r97/per/VARIANT-SCENARIO-FIRST.txt (seed goodput p99)
# M: main's binary; otherwise the toggles binary with R97=VARIANT
v=$1; sc=$2; f=$3; n=$4
S=${SIM:-/work/r97/sim-tog5}; [ "$v" = M ] && S=/work/r97/sim-main; [ "$v" = K ] && S=/work/r97/sim-kept
mkdir -p /work/r97/per
tv=$v; [ "$v" = M ] && tv=
R97=$tv $S scorecard --scenario $sc --algo littles --seed $f --seeds $n --out /tmp/r97-$v-$sc-$f 2>&1 >/dev/null \
 | awk '/seed/ {for(i=1;i<=NF;i++){if($i=="seed")s=$(i+1); if($i=="goodput")g=$(i+1); if($i=="p99")p=$(i+1)}; print s, g, p}' > /work/r97/per/$v-$sc-$f.txt
rm -rf /tmp/r97-$v-$sc-$f
