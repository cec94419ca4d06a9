#!/bin/bash
# E: control calls during an adaptive run: 50 workers x 50 ms (Rust upstream), 800/s (0.8x), 30 s
cd "$(dirname "$0")"
one() { n=$1; shift; python3 run2.py $n "$@" > results/$n.out 2>&1; head -1 results/$n.out | cut -c1-200; sed -n 2,3p results/$n.out; grep ^event results/$n.out | cut -c1-160; }
U='{bin} upstream --listen 127.0.0.1:{port} --latency 50ms --workers 50'
L="--rate 800 --duration 30s --patience 2s"
one E0-base-adaptive --upstream "$U" --pool adaptive --load "$L"
one E1-reload-bounds --upstream "$U" --pool adaptive --load "$L" --at "10|pool:adaptive:initial=10,max=40" --at "20|pool:adaptive"
one E2-reload-static-and-back --upstream "$U" --pool adaptive --load "$L" --at "10|pool:static:50" --at "20|pool:adaptive"
one E3-remove-readd --upstream "$U" --pool adaptive --load "$L" --at "10|nopool" --at "15|pool:adaptive"
one E4-close-open --upstream "$U" --pool adaptive --load "$L" --at "10|admin:POST /pools/p/close" --at "13|admin:POST /pools/p/open"
one E5-put-limit-then-reload --upstream "$U" --pool adaptive --load "$L" --at '10|admin:PUT /pools/p/limits {"max_concurrency": 30}' --at "20|pool:adaptive"
one E6-upstream-restart-adaptive --upstream "$U" --pool adaptive --load "$L" --at "10|upstream-kill" --at "13|upstream-start"
one E6-upstream-restart-static50 --upstream "$U" --pool static:50 --load "$L" --at "10|upstream-kill" --at "13|upstream-start"
one E7-put-queue --upstream "$U" --pool adaptive --load "$L" --at '10|admin:PUT /pools/p/limits {"max_queue": 500}'
one E8-reload-unchanged --upstream "$U" --pool adaptive --load "$L" --at "10|pool:adaptive" --at "12|pool:adaptive" --at "14|pool:adaptive"
echo batchE done
