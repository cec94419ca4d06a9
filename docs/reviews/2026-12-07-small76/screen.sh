#!/bin/bash
# screen.sh SCENARIO OUT [ENV..]: seeds 31-90, goodput and converge per seed
sc=$1; out=$2; shift 2
S=/work/tgt-small76/release/sluicegate-sim
for s in $(seq 31 90); do
  env "$@" $S scorecard --scenario $sc --algo littles --seed $s --out /tmp/scr76/$out-$sc-$s -q >/dev/null
  awk -F, -v s=$s '$2=="littles"{print s, $3, $8, $11}' /tmp/scr76/$out-$sc-$s/scorecard.csv
  rm -rf /tmp/scr76/$out-$sc-$s
done > $out-$sc.txt
