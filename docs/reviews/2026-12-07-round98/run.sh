#!/usr/bin/env bash
# run.sh TAG SIM SCENARIO FIRST COUNT [ALGO] [ENV=VAL...] -> /work/r98/per/TAG-SCENARIO-FIRST.txt (seed goodput p99)
tag=$1; S=$2; sc=$3; f=$4; n=$5; algo=${6:-littles}; shift 6
mkdir -p /work/r98/per
env "$@" $S scorecard --scenario $sc --algo $algo --seed $f --seeds $n --out /tmp/r98-$tag-$sc-$f 2>&1 >/dev/null \
 | awk '/seed/ {for(i=1;i<=NF;i++){if($i=="seed")s=$(i+1); if($i=="goodput")g=$(i+1); if($i=="p99")p=$(i+1)}; print s, g, p}' > /work/r98/per/$tag-$sc-$f.txt
rm -rf /tmp/r98-$tag-$sc-$f
