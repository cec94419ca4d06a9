#!/usr/bin/env bash
# leap.sh SIM TAG FIRST LAST [ENV=VAL...] -> /work/r93/leap-TAG.txt: seed max_limit_first5s s_above_14 s_above_20 goodput
sim=$1; tag=$2; f=$3; l=$4; shift 4
out=/work/r93/leap-$tag.txt; : > $out
for s in $(seq $f $l); do
  d=/tmp/r93-leap-$tag; rm -rf $d
  g=$(env "$@" $sim scorecard --scenario demo_busy_2x --algo littles --seed $s --out $d -q 2>/dev/null | awk -F'|' '/\| demo_busy_2x \| littles/ {gsub(/ /,"",$4); print $4}')
  awk -F, -v s=$s -v g=$g 'NR>1 && $1=="littles" && $2<5.0 {if($3>m)m=$3; if($3>14)a+=0.1; if($3>20)b+=0.1} END{printf "%d %d %.1f %.1f %s\n", s, m, a, b, g}' $d/timeline_demo_busy_2x.csv >> $out
done
