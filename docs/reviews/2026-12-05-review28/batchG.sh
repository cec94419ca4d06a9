#!/bin/bash
# G: a reload that changes an adaptive pool's bounds, or its queue, restarts the algorithm from `initial`:
#    what it costs on a larger pool (200 workers x 50 ms = 4000/s, 2400/s offered: ~120 in flight)
cd "$(dirname "$0")"
one() { n=$1; shift; python3 run2.py $n "$@" > results/$n.out 2>&1; head -1 results/$n.out | cut -c1-200; sed -n 2,3p results/$n.out; grep ^event results/$n.out | cut -c1-160; }
U='{bin} upstream --listen 127.0.0.1:{port} --latency 50ms --workers 200'
L="--rate 2400 --duration 25s --patience 2s"
one G0-b200-r2400-adaptive-unchanged --upstream "$U" --pool adaptive --load "$L" --at "10|pool:adaptive"
one G1-b200-r2400-adaptive-raise-max --upstream "$U" --pool adaptive --load "$L" --at "10|pool:adaptive:max=5000"
one G2-b200-r2400-adaptive-put-queue --upstream "$U" --pool adaptive --load "$L" --at '10|admin:PUT /pools/p/limits {"queue_timeout": "2s"}'
one G3-b200-r2400-static200-put-queue --upstream "$U" --pool static:200 --load "$L" --at '10|admin:PUT /pools/p/limits {"queue_timeout": "2s"}'
echo batchG done
