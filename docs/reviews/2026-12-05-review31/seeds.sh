#!/bin/bash
# seeds.sh BIN SCENARIO_FILE FROM TO — littles' goodput per seed, then the mean
BIN=$1 F=$2
for s in $(seq $3 $4); do
  "$BIN" scorecard --scenarios "$F" --algo littles --seed $s --seeds 1 --out /tmp/r31-seeds -q \
   | awk -F'|' '/\| littles \|/{printf "%s ", $4+0}'
done | awk '{s=0; m=1; for(i=1;i<=NF;i++){s+=$i; if($i<m)m=$i}; printf "mean %.3f min %.3f | %s\n", s/NF, m, $0}'
