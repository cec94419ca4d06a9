#!/bin/bash
B=/work/tgt-realtime84/release/sluicegate-sim
cd /tmp/rt84
while pgrep -f "demo2.sh" >/dev/null; do sleep 2; done
for s in "$@"; do
  $B scorecard --scenario demo_2x --algo littles --algo fixed_c --seed $s --threads 2 --out rm$s -q >/dev/null 2>&1
  RT84_S2=1 $B scorecard --scenario demo_2x --algo littles --algo fixed_c --seed $s --threads 2 --trace --out rs$s -q >/dev/null 2>&1
  echo "$s off $(grep littles rm$s/scorecard.csv | cut -d, -f3) fixed $(grep fixed_c rm$s/scorecard.csv | cut -d, -f3) | s2 $(grep littles rs$s/scorecard.csv | cut -d, -f3) fixed $(grep fixed_c rs$s/scorecard.csv | cut -d, -f3)"
done
