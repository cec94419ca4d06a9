#!/usr/bin/env bash
# screen.sh VARIANT... : each start-heavy scenario on seeds 31-90
for sc in demo_2x demo_busy_2x no_queue_0.5x no_queue_0.8x steady_0.5x heavy_tail_0.8x two_speeds_0.8x overload_3x overload_10x many_workers_2x steady_0.8x_200w cache_3x floor_service_3x uniform_1.5x threaded_overload bursty closed_loop load_steps no_queue_fixed_2x no_queue_3x few_slow_workers_3x report_generator_1.5x huge_pool_1.5x; do
  for v in "$@"; do /work/r93/run.sh $v $sc 31 60; done
done
