#!/bin/bash
# K2: the reload that raises `max` at 2400/s on the lead's newer build, twice more, /status every 0.1 s
cd "$(dirname "$0")"
export SGBIN=$PWD/sluicegate-new
one() { n=$1; shift; python3 run2.py $n "$@" > results/$n.out 2>&1; head -1 results/$n.out | cut -c1-200; sed -n 2,3p results/$n.out; }
for i in 2 3; do
one K-new-b200-r2400-adaptive-raise-max-fine-$i --sample-every 0.1 --upstream '{bin} upstream --listen 127.0.0.1:{port} --latency 50ms --workers 200' --pool adaptive --load "--rate 2400 --duration 20s --patience 2s" --at "10|pool:adaptive:max=5000"
done
echo batchK2 done
