#!/bin/bash
# screen.sh NAME SCENARIO FROM TO [SP80=...]: per seed "seed goodput converge" -> /tmp/sp80/scr/NAME-SCENARIO.txt
bin=${BIN:-/work/tgt-spike80/release/sluicegate-sim}
n=$1; sc=$2; a=$3; b=$4; shift 4
d=/tmp/sp80/o-$n-$sc; mkdir -p $d
for s in $(seq $a $b); do
  env "$@" $bin scorecard --scenario $sc --algo littles --seed $s --out $d/t$s -q >/dev/null 2>&1
  grep "^| $sc | " $d/t$s/scorecard.md | head -1 | awk -F'|' -v s=$s '{gsub(/ /,"",$4); printf "%d %s %s|%s\n", s, $4, $9, $6}'
  rm -rf $d/t$s
done > /tmp/sp80/scr/$n-$sc.txt
