#!/bin/bash
# usage: ht.sh NAME FROM TO -> per-seed heavy_tail_3x goodput
cd /work/wt/adapt19h
for s in $(seq $2 $3); do
  ./target/release/sluicegate-sim scorecard --algo littles --scenario heavy_tail_3x --seed $s --seeds 1 --out target/ht-$1-$s -q >/dev/null 2>target/ht-$1-$s.err
  printf "%s " "$(grep '^heavy_tail_3x,littles' target/ht-$1-$s/scorecard.csv | cut -d, -f3)"
done; echo
