#!/bin/bash
# K: the high findings again on the lead's newer build (target/release/sluicegate of 07:40, after 3cb35b9), copied to ./sluicegate-new
cd "$(dirname "$0")"
export SGBIN=$PWD/sluicegate-new
one() { n=$1; shift; python3 run2.py $n "$@" > results/$n.out 2>&1; head -1 results/$n.out | cut -c1-200; sed -n 2,3p results/$n.out; }
one K-new-cont-r350-adaptive --upstream "python3 pyup2.py --port {port} --latency 20ms --contention 0.1" --pool adaptive --load "--rate 350 --duration 20s --patience 2s"
one K-new-noqueue-b50-r500-adaptive --max-queue 0 --upstream '{bin} upstream --listen 127.0.0.1:{port} --latency 50ms --workers 50' --pool adaptive --load "--rate 500 --duration 20s --patience 2s"
one K-new-shed20-r320-adaptive --upstream "python3 pyup2.py --port {port} --latency 50ms --shed 20" --pool adaptive --load "--rate 320 --duration 20s --patience 2s"
one K-new-b200-r2400-adaptive-raise-max --upstream '{bin} upstream --listen 127.0.0.1:{port} --latency 50ms --workers 200' --pool adaptive --load "--rate 2400 --duration 20s --patience 2s" --at "10|pool:adaptive:max=5000"
# second runs on the old build of findings 2 and 3
export SGBIN=$PWD/sluicegate
one I2-noqueue-b50-r500-adaptive-2 --max-queue 0 --upstream '{bin} upstream --listen 127.0.0.1:{port} --latency 50ms --workers 50' --pool adaptive --load "--rate 500 --duration 20s --patience 2s"
one I1-shed20-r320-adaptive-2 --upstream "python3 pyup2.py --port {port} --latency 50ms --shed 20" --pool adaptive --load "--rate 320 --duration 20s --patience 2s"
echo batchK done
