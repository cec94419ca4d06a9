#!/usr/bin/env bash
# run.sh: the scenarios few92 moved, seeds 31-90, littles, main before (460fa41) and after (d3c61a1)
for b in 460fa41 d3c61a1; do for sc in few_slow_workers_3x demo_2x demo_busy_2x capacity_fifth report_generator_1.5x; do
  for s in $(seq 31 90); do
    o=$b/$sc/s$s; [[ -s $o/scorecard.csv ]] && continue
    nice -n 10 /work/screen38/sim-$b scorecard --scenario $sc --algo littles --seed $s --out $o -q >/dev/null 2>&1
  done; done; done
