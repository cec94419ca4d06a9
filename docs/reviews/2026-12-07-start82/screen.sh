#!/bin/bash
# screen.sh SCEN FROM TO: per-seed goodput, rejected, p99/unloaded, converge for sim-ref and sim-new
sc=$1; from=$2; to=$3
mkdir -p /work/wt/start82/tmp82/screen
for v in ref new; do
  out=/work/wt/start82/tmp82/screen/$sc-$v.txt; : > $out
  for s in $(seq $from $to); do
    d=$(mktemp -d /tmp/s82/scr.XXXX)
    nice -n 10 /tmp/s82/sim-$v scorecard --scenario $sc --algo littles --seed $s --out $d -q >/dev/null 2>&1
    echo "$s $(awk -F, '$2=="littles"{print $3, $9, $8, $11}' $d/scorecard.csv)" >> $out
    rm -rf $d
  done
done
