#!/usr/bin/env bash
cd /work/r94
for sc in demo_busy_2x demo_2x few_slow_workers_3x report_generator_0.5x uniform_1.5x floor_service_3x heavy_tail_3x two_speeds_2x capacity_fifth capacity_halves latency_spike network_delay_spike overload_3x threaded_overload steady_0.8x_200w many_workers_2x huge_pool_1.5x; do
  for v in M N; do ./run.sh $v $sc 31 60; done
  echo "== $sc"; python3 pair.py per/M-$sc-31.txt per/N-$sc-31.txt | head -1
done
