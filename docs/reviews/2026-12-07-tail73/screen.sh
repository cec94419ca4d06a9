#!/usr/bin/env bash
# screen.sh SCENARIO FIRST N OUTNAME [VAR=VAL...]: one run per seed, prints seed,goodput,p99ratio
sc=$1; first=$2; n=$3; name=$4; shift 4
bin=${BIN:-/work/tgt-tail73/release/sluicegate-sim}
out=/tmp/t73/screen/$name; mkdir -p $out
for ((s=first; s<first+n; s++)); do
  env "$@" nice -n 10 $bin scorecard --scenario $sc --algo littles --seed $s --out $out/s$s -q >/dev/null 2>&1
  awk -F, -v s=$s 'NR==2{print s","$3","$8}' $out/s$s/scorecard.csv
done > $out/$sc.csv
