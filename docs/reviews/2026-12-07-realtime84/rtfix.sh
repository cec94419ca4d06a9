#!/bin/bash
B=/work/tgt-realtime84/release/sluicegate-sim
cd /tmp/rt84
while pgrep -f "rtpair.sh" >/dev/null; do sleep 2; done
for s in "$@"; do
  line="$s"
  for n in 10 11 12; do
    RT84_FIX=$n $B scorecard --scenario demo_2x --algo littles --seed $s --threads 2 --out rf$n-$s -q >/dev/null 2>&1
    line="$line fix$n $(grep littles rf$n-$s/scorecard.csv | cut -d, -f3)"
  done
  echo "$line"
done
