#!/bin/bash
# usage: screen.sh NAME SCENARIO FROM TO  (env passed through: STRAY97 picks the variant)
name=$1; sc=$2; from=$3; to=$4
B=${BIN:-/tmp/s97/bin/sim-a}
out=/tmp/s97/screen/$name/$sc; mkdir -p $out
for s in $(seq $from $to); do
  g=$($B scorecard --scenario $sc --algo littles --seed $s --out $out/tmp -q 2>/dev/null | grep "^| $sc | littles" | awk -F'|' '{print $4}')
  echo "$s $g"
done > $out/res.txt
