#!/bin/bash
# all.sh BIN NAME [ENV=V]
bin=$1; n=$2; shift 2
for sc in latency_spike network_delay_spike capacity_halves overload_10x; do
  /tmp/fall78/screen.sh $bin $n $sc 31 90 "$@"
done
/tmp/fall78/screen.sh $bin $n capacity_fifth 1 250 "$@"
