#!/bin/bash
# J: an adaptive pool with no queue (max_queue = 0): does it ever grow?
cd "$(dirname "$0")"
one() { n=$1; shift; python3 run2.py $n "$@" > results/$n.out 2>&1; head -1 results/$n.out | cut -c1-200; sed -n 2,3p results/$n.out; }
U='{bin} upstream --listen 127.0.0.1:{port} --latency 50ms --workers 50'
one J-noqueue-b50-r1500-adaptive --max-queue 0 --upstream "$U" --pool adaptive --load "--rate 1500 --duration 20s --patience 2s"
one J-q1-b50-r500-adaptive --max-queue 1 --upstream "$U" --pool adaptive --load "--rate 500 --duration 20s --patience 2s"
one J-q10-b50-r500-adaptive --max-queue 10 --upstream "$U" --pool adaptive --load "--rate 500 --duration 20s --patience 2s"
one J-noqueue-py50exp-r500-adaptive --max-queue 0 --upstream 'python3 pyup2.py --port {port} --workers 50 --latency 50ms --dist exp' --pool adaptive --load "--rate 500 --duration 20s --patience 2s"
one J-noqueue-b50-r500-gradient2 --max-queue 0 --upstream "$U" --pool adaptive:algorithm=gradient2 --load "--rate 500 --duration 20s --patience 2s"
one J-noqueue-b50-r500-adaptive-init60 --max-queue 0 --upstream "$U" --pool adaptive:initial=60 --load "--rate 500 --duration 20s --patience 2s"
echo batchJ done
