#!/bin/bash
# run.sh NAME FROM TO [ENV=V...]: capacity_fifth per seed -> /tmp/f70/NAME.txt (seed goodput fall return false_cb true_cb)
n=$1; a=$2; b=$3; shift 3
mkdir -p /tmp/f70/o-$n
for s in $(seq $a $b); do
  env F70_DEBUG=1 "$@" /tmp/f70/sim-x scorecard --scenario capacity_fifth --algo littles --seed $s --out /tmp/f70/o-$n/t$s -q 2>/tmp/f70/o-$n/e$s >/dev/null
  fc=$(awk '/^F70 came_back/ {split($3,t,"="); if (t[2]<50) n++} END{print n+0}' /tmp/f70/o-$n/e$s)
  tc=$(awk '/^F70 came_back/ {split($3,t,"="); if (t[2]>=50) n++} END{print n+0}' /tmp/f70/o-$n/e$s)
  grep '^| capacity_fifth | over' /tmp/f70/o-$n/t$s/scorecard.md | awk -F'|' -v s=$s -v fc=$fc -v tc=$tc '{n=split($9,c," "); if (n<4) {c[4]="never"}; printf "%d %.4f %s %s %d %d\n", s, $4, c[1], c[4], fc, tc}'
done > /tmp/f70/$n.txt
