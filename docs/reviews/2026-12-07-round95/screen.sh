#!/usr/bin/env bash
# screen.sh VARIANT FIRST COUNT: every scenario but report_generator_1.5x, main (M) against VARIANT, paired
pair="$(cd "$(dirname "$0")/../../.." && pwd)/scripts/sim-pair"
v=$1; f=$2; n=$3
cd /work/r95
for sc in steady_0.5x steady_0.8x_200w cache_0.8x two_speeds_0.8x heavy_tail_0.8x report_generator_0.5x shared_service_0.7x no_queue_0.5x no_queue_0.8x self_shedding_0.8x random_drops_0.8x overload_3x overload_10x cache_3x many_workers_2x huge_pool_1.5x few_slow_workers_3x demo_2x demo_busy_2x floor_service_3x uniform_1.5x two_speeds_2x heavy_tail_3x bursty closed_loop load_steps failures fast_failures_unseen no_queue_3x no_queue_fixed_2x self_shedding_2x random_drops_1.5x flapping_failures_1.5x capacity_halves capacity_fifth latency_spike network_delay_spike self_shedding_grows self_shedding_shrinks maintenance_0.8x threaded_overload; do
  [ -s per/M-$sc-$f.txt ] || ./run.sh M $sc $f $n
  ./run.sh $v $sc $f $n
  echo "== $sc $("$pair" per/M-$sc-$f.txt per/$v-$sc-$f.txt | head -1)"
done
