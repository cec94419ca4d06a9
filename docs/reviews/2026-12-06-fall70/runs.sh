#!/bin/bash
# runs.sh SCN NAME FROM TO [ENV=V...]: scenario file sc/SCN.toml per seed -> NAME.txt
sc=$1; n=$2; a=$3; b=$4; shift 4
mkdir -p /tmp/f70/o-$n
for s in $(seq $a $b); do
  env F70_DEBUG=1 "$@" /tmp/f70/sim-x scorecard --scenarios /tmp/f70/sc/$sc.toml --algo littles --seed $s --out /tmp/f70/o-$n/t$s -q 2>/tmp/f70/o-$n/e$s >/dev/null
  fc=$(awk '/^F70 came_back/ {split($3,t,"="); if (t[2]<50) n++} END{print n+0}' /tmp/f70/o-$n/e$s)
  tc=$(awk '/^F70 came_back/ {split($3,t,"="); if (t[2]>=50) n++} END{print n+0}' /tmp/f70/o-$n/e$s)
  grep "^| $sc | over" /tmp/f70/o-$n/t$s/scorecard.md | awk -F'|' -v s=$s -v fc=$fc -v tc=$tc '{n=split($9,c," "); if (n<4) {c[4]="never"}; printf "%d %.4f %s %s %d %d\n", s, $4, c[1], c[4], fc, tc}'
done > /tmp/f70/$n.txt
