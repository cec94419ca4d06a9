#!/usr/bin/env bash
# run.sh NAME BIN FIRST LAST: littles on every scenario, one seed per run; keeps scorecard.csv
name=$1; bin=$2; first=$3; last=$4
out=${OUT:-.}/$name; mkdir -p $out
for ((s=first; s<=last; s++)); do
  [[ -s $out/s$s.csv ]] && continue
  nice -n 15 $bin scorecard --algo littles --seed $s --out $out/tmp$s -q >/dev/null 2>&1
  mv $out/tmp$s/scorecard.csv $out/s$s.csv && rm -rf $out/tmp$s
done
