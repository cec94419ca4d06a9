#!/bin/bash
# screen.sh BIN NAME SCENARIO FROM TO [ENV=V...]: per seed "seed goodput converge" -> /tmp/fall78/NAME-SCENARIO.txt
bin=$1; n=$2; sc=$3; a=$4; b=$5; shift 5
d=/tmp/fall78/o-$n-$sc; mkdir -p $d
for s in $(seq $a $b); do
  env "$@" $bin scorecard --scenario $sc --algo littles --seed $s --out $d/t$s -q >/dev/null 2>&1
  grep "^| $sc | over" $d/t$s/scorecard.md | awk -F'|' -v s=$s '{gsub(/ /,"",$4); printf "%d %s %s\n", s, $4, $9}'
  rm -rf $d/t$s
done > /tmp/fall78/$n-$sc.txt
