#!/bin/bash
# run.sh SIM FILE A B [ALGO] -> mean goodput, min, mean rejected, mean p99/unloaded, per-seed goodput
SIM=$1 F=$2 A=$3 B=$4 ALGO=${5:-littles}; shift 5 2>/dev/null
OUT=$(mktemp -d); trap 'rm -rf "$OUT"' EXIT
for s in $(seq $A $B); do
  env "$@" $SIM scorecard --scenarios "$F" --algo $ALGO --seed $s --seeds 1 --out $OUT -q | awk -F'|' -v a=$ALGO '$3 ~ " "a" " {gsub(/%/,"",$10); printf "%s %s %s\n", $4+0, $10+0, $9+0}'
done | awk '{g+=$1; r+=$2; p+=$3; if(NR==1||$1<m)m=$1; l=l" "$1} END{printf "gp %.3f min %.3f rej %.1f%% p99u %.2f |%s\n", g/NR, m, r/NR, p/NR, l}'
