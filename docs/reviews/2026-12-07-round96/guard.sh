#!/usr/bin/env bash
# guard.sh FIRST COUNT VARIANT... : the pools whose start must grow fast
f=$1; n=$2; shift 2
for sc in huge_pool_1.5x many_workers_2x overload_10x cache_3x threaded_overload; do
  for v in "$@"; do /work/r96/run.sh $v $sc $f $n; done
done
