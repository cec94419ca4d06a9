#!/bin/bash
# case.sh NAME POOL: lead32's slow spell behind a 300 ms upstream timeout, 40 s at 600/s
UP="python3 pyup2.py --port {port} --latency 50ms --dist exp --workers 20 --fail 0.003:0.05 --change 10s:latency=150ms --change 25s:latency=50ms"
SGBIN=/work/rg33/sluicegate python3 run2.py "$1" --upstream "$UP" --pool "$2" --extra 'upstream_timeout = "300ms"' --load "--rate 600 --duration 40s --patience 2s"
