#!/bin/bash
# screen.sh scenario from to -> per-seed goodput/converge for base and new
sc=$1; a=$2; b=$3
S=/tmp/f81/sim-toggled
V="F81_G=1 F81_P=1 F81_D=1 F81_Q=1 F81_N=1 F81_B=1"
for s in $(seq $a $b); do
  for tag in base new; do
    d=$(mktemp -d /tmp/f81/s.XXXX)
    if [ $tag = new ]; then env $V $S scorecard --scenario $sc --algo littles --seed $s --out $d -q >/dev/null 2>&1; else $S scorecard --scenario $sc --algo littles --seed $s --out $d -q >/dev/null 2>&1; fi
    r=$(sed -n 3p $d/scorecard.md | awk -F'|' '{print $4, $9}')
    echo "$sc $s $tag $r"
    rm -rf $d
  done
done
