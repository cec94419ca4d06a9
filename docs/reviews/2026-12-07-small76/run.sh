#!/bin/bash
# run.sh OUTDIR [ENV...]: both scenarios, seeds 1-30, littles only, goodput per seed
out=$1; shift
S=/work/tgt-small76/release/sluicegate-sim
mkdir -p $out
for sc in few_slow_workers_3x report_generator_1.5x; do
 for s in $(seq ${FROM:-1} ${TO:-30}); do
  env "$@" $S scorecard --scenario $sc --algo littles --seed $s --out $out/$sc-$s -q >/dev/null
  g=$(awk -F, '$2=="littles"{print $3}' $out/$sc-$s/scorecard.csv)
  echo "$sc $s $g"
 done
done > $out/goodput.txt
