#!/usr/bin/env bash
sc=$1; first=$2; n=$3; name=$4; shift 4
bin=/work/tgt-tail73diag/release/sluicegate-sim
out=/tmp/t73/screen/$name; mkdir -p $out
for ((s=first; s<first+n; s++)); do
  env "$@" nice -n 10 $bin scorecard --scenario $sc --algo fixed_c --seed $s --out $out/s$s -q >/dev/null 2>&1
  awk -F, -v s=$s 'NR==2{print s","$3","$8}' $out/s$s/scorecard.csv
done > $out/$sc.csv
