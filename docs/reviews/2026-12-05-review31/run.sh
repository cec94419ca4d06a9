#!/bin/bash
# run.sh BIN TAG [SCEN] — littles (and fixed_c for context on the first) on seeds 1..5 for each scenario
BIN=$1 TAG=$2 SCEN=${3:-/work/wt/review31/docs/reviews/2026-12-05-review31/scen}
"$BIN" scorecard --scenarios "$SCEN" --algo littles --seed 1 --seeds 5 --out /tmp/r31-$TAG -q \
 | awk -F'|' '/\| littles \|/{printf "%-34s %s goodput %s rej %s p99/unl %s to %s conv %s\n",$2,"'$TAG'",$4,$10,$9,$11,$12}'
