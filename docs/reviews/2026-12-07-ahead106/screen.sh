#!/bin/bash
# screen.sh NAME FROM TO [SCENARIOS...]  (env passed through: AH106_* pick the variant)
name=$1; from=$2; to=$3; shift 3
B=${BIN:-/tmp/ah106/sim}
scs=${*:-report_generator_1.5x uniform_1.5x floor_service_3x demo_busy_2x demo_2x few_slow_workers_3x}
for sc in $scs; do
  out=/tmp/ah106/scr/$name/$sc; mkdir -p $out
  for s in $(seq $from $to); do
    g=$($B scorecard --scenario $sc --algo littles --seed $s --out $out/tmp -q 2>/dev/null | grep "^| $sc | littles" | awk -F'|' '{print $4}')
    echo "$s $g"
  done > $out/res.txt
done
