#!/usr/bin/env bash
# screen2.sh FIRST COUNT VARIANT... : the scenarios the rule can reach first, then the rest
f=$1; n=$2; shift 2
first="demo_busy_2x demo_2x two_speeds_0.8x two_speeds_2x floor_service_3x no_queue_fixed_2x self_shedding_grows cache_3x threaded_overload overload_10x many_workers_2x overload_3x few_slow_workers_3x no_queue_3x heavy_tail_3x uniform_1.5x report_generator_1.5x bursty self_shedding_2x cache_0.8x huge_pool_1.5x"
all=$(/work/r96/sim-tog8 list 2>&1 | awk '/^scenarios:/{on=1;next} /^algorithms:/{on=0} on{print $1}')
for sc in $first $all; do
  for v in "$@"; do [ -s /work/r96/per/$v-$sc-$f.txt ] || /work/r96/run.sh $v $sc $f $n; done
done
