#!/usr/bin/env bash
# screen.sh FIRST COUNT VARIANT... : the scenarios a start can touch first, then the rest
f=$1; n=$2; shift 2
first="demo_busy_2x cache_3x uniform_1.5x demo_2x floor_service_3x no_queue_fixed_2x threaded_overload overload_3x overload_10x many_workers_2x few_slow_workers_3x no_queue_3x heavy_tail_3x two_speeds_2x report_generator_1.5x bursty self_shedding_2x huge_pool_1.5x two_speeds_0.8x self_shedding_grows"
all=$(/work/r97/sim-main list 2>&1 | awk '/^scenarios:/{on=1;next} /^algorithms:/{on=0} on{print $1}')
for sc in $first $all; do
  for v in "$@"; do [ -s /work/r97/per/$v-$sc-$f.txt ] || SIM=/work/r97/sim-tog5 /work/r97/run.sh $v $sc $f $n; done
done
