#!/usr/bin/env bash
# tlrun.sh TAG FIRST LAST [ENV=VAL...]: timelines+traces of demo_busy_2x per seed -> tl/TAG-S.csv, tl/TAGtr-S.csv
tag=$1; f=$2; l=$3; shift 3
for s in $(seq $f $l); do env "$@" ./sim-tog scorecard --scenario ${SC:-demo_busy_2x} --algo littles --seed $s --out /tmp/r98t-$tag -q --trace >/dev/null 2>&1; cp /tmp/r98t-$tag/timeline_${SC:-demo_busy_2x}.csv tl/$tag-$s.csv; cp /tmp/r98t-$tag/trace_${SC:-demo_busy_2x}.csv tl/${tag}tr-$s.csv; done
