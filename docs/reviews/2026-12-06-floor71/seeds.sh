#!/bin/bash
# usage: seeds.sh SCENARIO ARMNAME [ENV...]  -> /tmp/f71/SCEN.ARM.csv (seed,goodput,p99u,converge)
scen=$1; arm=$2; shift 2
B=${SIM:-/work/tgt-floor71/release/sluicegate-sim}
out=/tmp/f71/$scen.$arm.csv; : > $out
for s in $(seq 31 90); do
  d=/tmp/f71/run.$arm.$scen; rm -rf $d
  env "$@" $B scorecard --scenario $scen --algo littles --seed $s --seeds 1 --out $d -q >/dev/null 2>&1
  awk -F, -v s=$s 'NR==2{print s","$3","$8","$11}' $d/scorecard.csv >> $out
done
