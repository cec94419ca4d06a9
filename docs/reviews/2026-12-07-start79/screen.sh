#!/usr/bin/env bash
# Per-seed screen: START79=MODE, scenarios given, seeds 31-90; one CSV row a run.
# Usage: screen.sh OUT MODE SCENARIO...
out=$1; mode=$2; shift 2
S=${SIM:-/work/tgt-start79/release/sluicegate-sim}
for sc in "$@"; do
  for seed in $(seq 31 90); do
    d=$(mktemp -d)
    START79=$mode nice -n 10 "$S" scorecard --scenario "$sc" --algo littles --seed "$seed" --out "$d" -q >/dev/null 2>&1
    echo "$seed,$(tail -1 "$d/scorecard.csv")" >>"$out"
    rm -rf "$d"
  done
done
