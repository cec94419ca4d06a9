#!/bin/bash
# run.sh BIN NAME FROM TO [ENV=V...]: capacity_fifth per seed -> /tmp/fall75/NAME.txt (seed goodput fall return)
bin=$1; n=$2; a=$3; b=$4; shift 4
mkdir -p /tmp/fall75/o-$n
for s in $(seq $a $b); do
  env "$@" $bin scorecard --scenario capacity_fifth --algo littles --seed $s --out /tmp/fall75/o-$n/t$s -q >/dev/null 2>&1
  grep '^| capacity_fifth | over' /tmp/fall75/o-$n/t$s/scorecard.md | awk -F'|' -v s=$s '{n=split($9,c," "); if (n<4) {c[4]="never"}; printf "%d %.4f %s %s\n", s, $4, c[1], c[4]}'
  rm -rf /tmp/fall75/o-$n/t$s
done > /tmp/fall75/$n.txt
