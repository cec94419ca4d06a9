#!/bin/bash
# run.sh SCEN FROM TO OUTFILE [VAR=VAL...]: per-seed goodput, rejected, p99/unl
sc=$1; from=$2; to=$3; out=$4; shift 4
S=/work/tgt-start82/release/sluicegate-sim
: > $out
for s in $(seq $from $to); do
  d=$(mktemp -d /tmp/s82/run.XXXX)
  env "$@" nice -n 10 $S scorecard --scenario $sc --algo littles --seed $s --out $d -q >/dev/null 2>&1
  echo "$s $(awk -F, '$2=="littles"{print $3, $9, $8}' $d/scorecard.csv)" >> $out
  rm -rf $d
done
