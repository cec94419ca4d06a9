#!/bin/bash
# scr.sh V FROM TO -> /tmp/a99/scr/V.txt (appends)
v=$1; mkdir -p /tmp/a99/scr
for s in $(seq $2 $3); do
  g=$(AHEAD99=$v /tmp/a99/sim-a scorecard --scenario report_generator_1.5x --algo littles --seed $s --out /tmp/a99/o$v -q 2>/dev/null | grep "^| report_generator_1.5x | littles" | awk -F'|' '{print $4}')
  echo "$s $g"
done >> /tmp/a99/scr/$v${A99T:+t$A99T}.txt
