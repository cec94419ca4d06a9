#!/bin/bash
# dbg.sh NAME SEEDS -- ENV: debug lines per seed into /tmp/f60/dbg-NAME/S.txt
n=$1; shift; seeds=(); while [[ $# -gt 0 && $1 != -- ]]; do seeds+=($1); shift; done; [[ ${1:-} == -- ]] && shift
mkdir -p /tmp/f60/dbg-$n
for s in "${seeds[@]}"; do env F60_DEBUG=1 "$@" /tmp/f60/sim-x scorecard --scenario capacity_fifth --algo littles --seed $s --out /tmp/f60/x 2>&1 | grep '^F60' > /tmp/f60/dbg-$n/$s.txt; done
