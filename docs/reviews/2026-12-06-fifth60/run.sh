#!/bin/bash
# run.sh BIN NAME SEEDS... [-- ENV=V...]: capacity_fifth traces into /tmp/f60/NAME/tS
b=$1; n=$2; shift 2
seeds=(); while [[ $# -gt 0 && $1 != -- ]]; do seeds+=($1); shift; done; [[ ${1:-} == -- ]] && shift
mkdir -p /tmp/f60/$n
for s in "${seeds[@]}"; do
  env "$@" /tmp/f60/sim-$b scorecard --scenario capacity_fifth --algo littles --seed $s --trace --out /tmp/f60/$n/t$s -q >/dev/null 2>&1
  grep '^| capacity_fifth | over' /tmp/f60/$n/t$s/scorecard.md | awk -F'|' -v s=$s '{split($9,c," "); printf "%d %.3f %s %s\n", s, $4, c[1], c[4]}'
done | sort -n > /tmp/f60/$n.txt
