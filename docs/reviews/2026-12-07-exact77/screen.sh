#!/bin/bash
# screen.sh SCENARIO OUT [ENV..]: seeds 31-90, goodput, p99/unloaded and converge per seed
sc=$1; out=$2; shift 2
S=/work/tgt-exact77/release/sluicegate-sim
for s in $(seq 31 90); do
  env "$@" $S scorecard --scenario $sc --algo littles --seed $s --out /tmp/scr77/$out-$sc-$s -q >/dev/null
  awk -F, -v s=$s '$2=="littles"{print s, $3, $8, $11}' /tmp/scr77/$out-$sc-$s/scorecard.csv
  rm -rf /tmp/scr77/$out-$sc-$s
done > /tmp/scr77/$out-$sc.txt
