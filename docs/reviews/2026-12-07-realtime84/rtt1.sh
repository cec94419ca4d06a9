#!/bin/bash
B=/work/tgt-realtime84/release/sluicegate-sim
cd /tmp/rt84
while pgrep -f "demo.sh" >/dev/null; do sleep 2; done
for s in "$@"; do
  $B scorecard --scenario demo_2x --algo littles --algo fixed_c --seed $s --threads 2 --out rn$s -q >/dev/null 2>&1
  RT84_T1=1 $B scorecard --scenario demo_2x --algo littles --algo fixed_c --seed $s --threads 2 --trace --out rq$s -q >/dev/null 2>&1
  echo "$s off $(grep littles rn$s/scorecard.csv | cut -d, -f3) fixed $(grep fixed_c rn$s/scorecard.csv | cut -d, -f3) | t1 $(grep littles rq$s/scorecard.csv | cut -d, -f3) fixed $(grep fixed_c rq$s/scorecard.csv | cut -d, -f3)"
done
