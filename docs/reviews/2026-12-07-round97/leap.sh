#!/usr/bin/env bash
# leap.sh SIM TAG SCEN FIRST LAST [ENV=VAL...] -> /work/r97/leap-SCEN-TAG.txt: seed max_limit_first5s s_above_14 s_above_20 goodput
sim=$1; tag=$2; sc=$3; f=$4; l=$5; shift 5
out=/work/r97/leap-$sc-$tag.txt; : > $out
d=/tmp/r97-leap-$sc-$tag
for s in $(seq $f $l); do
  rm -rf $d
  g=$(env "$@" $sim scorecard --scenario $sc --algo littles --seed $s --out $d -q 2>/dev/null | awk -F'|' -v sc=$sc '$2 ~ " "sc" " && $3 ~ /littles/ {gsub(/ /,"",$4); print $4}')
  awk -F, -v s=$s -v g=$g 'NR>1 && $1=="littles" && $2<5.0 {if($3>m)m=$3; if($3>14)a+=0.1; if($3>20)b+=0.1} END{printf "%d %d %.1f %.1f %s\n", s, m, a, b, g}' $d/timeline_$sc.csv >> $out
done
