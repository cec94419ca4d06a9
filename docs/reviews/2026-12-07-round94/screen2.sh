#!/usr/bin/env bash
cd /work/r94
for sc in steady_0.5x cache_0.8x two_speeds_0.8x heavy_tail_0.8x shared_service_0.7x no_queue_0.5x no_queue_0.8x self_shedding_0.8x random_drops_0.8x overload_10x cache_3x bursty closed_loop load_steps failures fast_failures_unseen no_queue_3x no_queue_fixed_2x self_shedding_2x random_drops_1.5x flapping_failures_1.5x self_shedding_grows self_shedding_shrinks maintenance_0.8x; do
  for v in M N; do ./run.sh $v $sc 31 60; done
  echo "== $sc"; python3 pair.py per/M-$sc-31.txt per/N-$sc-31.txt 2>/dev/null | head -1
done
for sc in demo_busy_2x demo_2x few_slow_workers_3x report_generator_0.5x; do
  for v in M N; do ./run.sh $v $sc 91 160; done
  echo "== $sc 91-250"; python3 pair.py per/M-$sc-91.txt per/N-$sc-91.txt 2>/dev/null | head -1
done
