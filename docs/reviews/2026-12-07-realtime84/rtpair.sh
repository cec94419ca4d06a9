#!/bin/bash
B=/work/tgt-realtime84/release/sluicegate-sim
cd /tmp/rt84
for s in "$@"; do
  $B scorecard --scenario demo_2x --algo littles --algo fixed_c --seed $s --threads 2 --out ro$s -q >/dev/null 2>&1
  RT84_PACE=1 $B scorecard --scenario demo_2x --algo littles --algo fixed_c --seed $s --threads 2 --trace --out rp$s -q >/dev/null 2>&1
  echo "$s off $(grep littles ro$s/scorecard.csv | cut -d, -f3) fixed $(grep fixed_c ro$s/scorecard.csv | cut -d, -f3) | pace $(grep littles rp$s/scorecard.csv | cut -d, -f3) fixed $(grep fixed_c rp$s/scorecard.csv | cut -d, -f3)"
done
