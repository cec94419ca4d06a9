#!/bin/bash
# usage: perseed.sh SCENARIO a-b ENV1 ENV2 : per-seed goodput & converge
sc=$1; r=$2; e1=$3; e2=$4
S=/work/tgt-probe68/release/sluicegate-sim
a=${r%-*}; b=${r#*-}
for s in $(seq $a $b); do
  o1=$(env $e1 $S scorecard --scenario $sc --algo littles --seed $s --out /tmp/p68/ps1 -q 2>/dev/null | grep "| $sc | littles" | awk -F'|' '{print $4, $12}')
  o2=$(env $e2 $S scorecard --scenario $sc --algo littles --seed $s --out /tmp/p68/ps2 -q 2>/dev/null | grep "| $sc | littles" | awk -F'|' '{print $4, $12}')
  echo "seed $s: $o1  ||  $o2"
done
