#!/bin/bash
sc=$1; from=$2; to=$3
S=/work/tgt-many74/release/sluicegate-sim
out=/work/tmp-many74/screen/v3-$sc.txt; : > $out
for s in $(seq $from $to); do
  d=/tmp/many74-v3-$sc-$s
  $S scorecard --scenario $sc --algo littles --seed $s --out $d -q >/dev/null 2>&1
  echo "$s $(awk -F, '$2=="littles"{print $3, $9}' $d/scorecard.csv)" >> $out
  rm -rf $d
done
