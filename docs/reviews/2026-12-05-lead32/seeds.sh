#!/bin/bash
# seeds.sh SCENARIO.toml FROM TO [ENV=VALUE ...] — littles' goodput on each seed, then their
# mean and the least (SIM: the simulator binary, target/release/sluicegate-sim by default)
F=$1 A=$2 B=$3; shift 3
OUT=$(mktemp -d); trap 'rm -rf "$OUT"' EXIT
for s in $(seq "$A" "$B"); do
  env "$@" "${SIM:-target/release/sluicegate-sim}" scorecard --scenarios "$F" --algo littles \
    --seed "$s" --seeds 1 --out "$OUT" -q | awk -F'|' '/\| littles \|/{printf "%s ", $4+0}'
done | awk '{s=0; m=1; for(i=1;i<=NF;i++){s+=$i; if($i<m)m=$i}; printf "mean %.3f min %.3f | %s\n", s/NF, m, $0}'
