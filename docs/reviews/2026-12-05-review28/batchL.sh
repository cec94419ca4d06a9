#!/bin/bash
# L: operators' workarounds, one run each (build of 69977ff)
cd "$(dirname "$0")"
one() { n=$1; shift; python3 run2.py $n "$@" > results/$n.out 2>&1; head -1 results/$n.out | cut -c1-200; sed -n 2,3p results/$n.out; }
one L-shed20-r320-adaptive-max20 --upstream "python3 pyup2.py --port {port} --latency 50ms --shed 20" --pool adaptive:max=20 --load "--rate 320 --duration 20s --patience 2s"
one L-cont-r350-adaptive-initial60 --upstream "python3 pyup2.py --port {port} --latency 20ms --contention 0.1" --pool adaptive:initial=60 --load "--rate 350 --duration 20s --patience 2s"
one L-b50-r800-adaptive-max50 --upstream '{bin} upstream --listen 127.0.0.1:{port} --latency 50ms --workers 50' --pool adaptive:max=50 --load "--rate 800 --duration 20s --patience 2s"
echo batchL done
