#!/bin/bash
# run.sh NAME [ENV=V...]: capacity_fifth, ours, seeds 1-90 with --trace into /tmp/f54/NAME/tS;
# writes /tmp/f54/NAME.txt (seed, goodput, convergence after 20 s, after 50 s), as kept-1-90.txt.
n=$1; shift
S=${SIM:-/work/tgt-fifth54/release/sluicegate-sim}
mkdir -p /tmp/f54/$n
for s in $(seq ${FROM:-1} ${TO:-90}); do
  env "$@" $S scorecard --scenario capacity_fifth --algo littles --seed $s --trace --out /tmp/f54/$n/t$s -q >/dev/null 2>&1

done; /tmp/f54/sum.sh $n
